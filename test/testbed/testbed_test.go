package testbed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// start starts an Env for one test, stops it at the end, and keeps the logs
// (saying where) only if the test failed.
func start(t *testing.T, opts Options) *Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	env, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Start (scheduler=%v) took %v; apiserver %s; phases: %s", opts.Scheduler,
		env.StartDuration.Round(time.Millisecond), env.Host, strings.Join(env.StartPhases, ", "))
	t.Cleanup(func() {
		began := time.Now()
		if err := env.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		t.Logf("Stop took %v", time.Since(began).Round(time.Millisecond))
		if t.Failed() {
			t.Logf("component logs in %s", env.LogDir)
		} else if err := env.RemoveLogs(); err != nil {
			t.Error(err)
		}
	})
	return env
}

func testNode(name, cpu, memory string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse(cpu),
				corev1.ResourceMemory: resource.MustParse(memory),
			},
		},
	}
}

func testPod(ns, name, cpu, podGroup string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:      "main",
				Image:     "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
			}},
		},
	}
	if podGroup != "" {
		pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &podGroup}
	}
	return pod
}

func createNamespace(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func gangPodGroup(ns, name string, minCount int32) *schedulingv1beta1.PodGroup {
	return &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: schedulingv1beta1.PodGroupSpec{
			SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
				Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount},
			},
		},
	}
}

func TestEnv(t *testing.T) {
	env := start(t, Options{})
	ctx := context.Background()
	cs := env.Clientset()

	// Discovery: the native gang API and both CRD groups.
	for gv, want := range map[string][]string{
		"scheduling.k8s.io/v1beta1":     {"podgroups", "workloads"},
		"scheduling.k8s.io/v1alpha3":    {"podgroups", "workloads"},
		"scheduling.volcano.sh/v1beta1": {"podgroups", "queues", "podgroups/status", "queues/status"},
		"scheduling.x-k8s.io/v1alpha1":  {"podgroups", "podgroups/status"},
	} {
		list, err := cs.Discovery().ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatalf("discovery %s: %v", gv, err)
		}
		have := map[string]bool{}
		for _, r := range list.APIResources {
			have[r.Name] = true
		}
		for _, r := range want {
			if !have[r] {
				t.Errorf("discovery %s lacks %s (has %v)", gv, r, have)
			}
		}
	}

	// A node with its status written.
	node := testNode("node-a", "8", "16Gi")
	node.Status.Capacity["nvidia.com/gpu"] = resource.MustParse("2")
	if err := env.CreateNode(ctx, node); err != nil {
		t.Fatal(err)
	}
	got, err := cs.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[corev1.ResourceName]string{"cpu": "8", "memory": "16Gi", "nvidia.com/gpu": "2", "pods": "110"} {
		q := got.Status.Allocatable[name]
		if q.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("allocatable %s = %s, want %s", name, q.String(), want)
		}
	}
	if len(got.Spec.Taints) != 0 {
		t.Errorf("node has taints %v; TaintNodesByCondition should be off", got.Spec.Taints)
	}
	if len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != corev1.NodeReady {
		t.Errorf("conditions = %v, want one Ready", got.Status.Conditions)
	}

	// Native gang API: a v1beta1 PodGroup and a member pod.
	createNamespace(t, cs, "gang")
	pg, err := cs.SchedulingV1beta1().PodGroups("gang").Create(ctx, gangPodGroup("gang", "trainer", 3), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pg.Spec.SchedulingPolicy.Gang == nil || pg.Spec.SchedulingPolicy.Gang.MinCount != 3 {
		t.Errorf("stored PodGroup policy = %+v", pg.Spec.SchedulingPolicy)
	}
	pod, err := cs.CoreV1().Pods("gang").Create(ctx, testPod("gang", "trainer-0", "1", "trainer"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := pod.Spec.SchedulingGroup; g == nil || g.PodGroupName == nil || *g.PodGroupName != "trainer" {
		t.Errorf("stored pod schedulingGroup = %+v", g)
	}

	// The CRDs take objects, keep unknown fields, and have a status subresource.
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	vpg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
		"metadata": map[string]any{"name": "vc-job", "namespace": "gang"},
		"spec": map[string]any{
			"minMember": int64(2), "minTaskMember": map[string]any{"worker": int64(2)},
			"minResources": map[string]any{"cpu": "2", "nvidia.com/gpu": int64(1)},
			"queue":        "research", "priorityClassName": "high",
			"networkTopology": map[string]any{"mode": "hard", "highestTierAllowed": int64(1)},
			"somethingNew":    "kept",
		},
	}}
	vpgRes := dyn.Resource(schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}).Namespace("gang")
	created, err := vpgRes.Create(ctx, vpg, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(created.Object, "spec", "somethingNew"); v != "kept" {
		t.Errorf("unknown spec field dropped: %v", created.Object["spec"])
	}
	if err := unstructured.SetNestedField(created.Object, "Inqueue", "status", "phase"); err != nil {
		t.Fatal(err)
	}
	updated, err := vpgRes.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(updated.Object, "status", "phase"); v != "Inqueue" {
		t.Errorf("status.phase = %q after UpdateStatus", v)
	}
	queue := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
		"metadata": map[string]any{"name": "research"},
		"spec": map[string]any{
			"weight": int64(1), "capability": map[string]any{"cpu": "16"},
			"guarantee": map[string]any{"resource": map[string]any{"cpu": "4"}}, "deserved": map[string]any{"cpu": "8"},
		},
	}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "queues"}).Create(ctx, queue, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cpg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
		"metadata": map[string]any{"name": "cosched", "namespace": "gang"},
		"spec":     map[string]any{"minMember": int64(3), "minResources": map[string]any{"cpu": "3"}, "scheduleTimeoutSeconds": int64(10)},
	}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}).Namespace("gang").Create(ctx, cpg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bad := cpg.DeepCopy()
	bad.SetName("bad")
	_ = unstructured.SetNestedField(bad.Object, "three", "spec", "minMember")
	if _, err := dyn.Resource(schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}).Namespace("gang").Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("string minMember: err = %v, want Invalid", err)
	}

	// RBAC: alice has no grants.
	aliceCfg, aliceKubeconfig, err := env.UserConfig("alice")
	if err != nil {
		t.Fatal(err)
	}
	alice := kubernetes.NewForConfigOrDie(aliceCfg)
	if _, err := alice.CoreV1().Pods("gang").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("alice listing pods: err = %v, want Forbidden", err)
	}
	if _, _, err := env.UserConfig("nobody"); err == nil {
		t.Error("UserConfig(nobody) succeeded")
	}

	// The kubeconfig files work as CLIs would load them.
	for path, wantForbidden := range map[string]bool{env.Kubeconfig: false, aliceKubeconfig: true} {
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = kubernetes.NewForConfigOrDie(cfg).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if wantForbidden != apierrors.IsForbidden(err) || (!wantForbidden && err != nil) {
			t.Errorf("%s: list nodes: %v", filepath.Base(path), err)
		}
	}
	if env.SchedulerLog != "" {
		t.Errorf("SchedulerLog = %q without a scheduler", env.SchedulerLog)
	}
}

func TestScheduler(t *testing.T) {
	// A config file (to exercise the rewrite that points it at the testbed)
	// and an extra flag.
	cfgPath := filepath.Join(t.TempDir(), "sched.yaml")
	if err := os.WriteFile(cfgPath, []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := start(t, Options{Scheduler: true, SchedulerConfig: cfgPath, SchedulerArgs: []string{"--vmodule=schedule_one=10"}})
	ctx := context.Background()
	cs := env.Clientset()

	if err := env.CreateNode(ctx, testNode("node-1", "4", "8Gi")); err != nil {
		t.Fatal(err)
	}
	createNamespace(t, cs, "work")
	if _, err := cs.CoreV1().Pods("work").Create(ctx, testPod("work", "single", "1", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A gang of two that fits.
	if _, err := cs.SchedulingV1beta1().PodGroups("work").Create(ctx, gangPodGroup("work", "pair", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pair-0", "pair-1"} {
		if _, err := cs.CoreV1().Pods("work").Create(ctx, testPod("work", name, "1", "pair"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	began := time.Now()
	deadline := began.Add(60 * time.Second)
	for _, name := range []string{"single", "pair-0", "pair-1"} {
		for {
			pod, err := cs.CoreV1().Pods("work").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if pod.Spec.NodeName == "node-1" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("pod %s not bound: nodeName %q, conditions %+v", name, pod.Spec.NodeName, pod.Status.Conditions)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("three pods bound %v after creation", time.Since(began).Round(time.Millisecond))

	if env.SchedulerLog == "" {
		t.Fatal("no SchedulerLog")
	}
	log, err := os.ReadFile(env.SchedulerLog)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "work/single") {
		t.Errorf("scheduler log at --vmodule=schedule_one=10 does not mention work/single")
	}
}
