// Package bench holds the end-to-end benchmarks that need the test bed (a
// real etcd, kube-apiserver and kube-scheduler): they take minutes to set
// up, so they run only with `make bench-e2e`, never in `make test`.
package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
	"github.com/kubectl-gang/kubectl-gang/test/testbed"
)

// Sizes of the cluster and the gangs.
const (
	benchNodes   = 5000
	benchMembers = 1000
	inFlight     = 32
)

// BenchmarkBindVersusKubeScheduler binds a 1,000-member native PodGroup on
// 5,000 nodes running 5,000 pods, three ways on the same apiserver:
//
//   - kubectl gang bind with its default flags, end to end (snapshot,
//     placement, the whole protocol), three times on three PodGroups (the
//     median counts);
//   - the real kube-scheduler (client QPS 5000, as scheduler_perf runs it)
//     binding another 1,000-member PodGroup, from its start (which reads
//     the cluster) to its last Binding;
//   - the raw floor: one LIST of the pods and 1,000 Bindings POSTed 32 at a
//     time with no client-side rate limit (three times, each before a bind,
//     the median counts).
//
// Run it once: go test ./test/bench -run '^$' -bench . -benchtime 1x.
func BenchmarkBindVersusKubeScheduler(b *testing.B) {
	ctx := context.Background()
	env, cs, stop := clusterOfNodes(b, benchNodes)
	defer stop()
	start := time.Now()
	for _, ns := range []string{"running", "gang-1", "gang-2", "gang-3", "scheduler", "floor-1", "floor-2", "floor-3"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	parallel(b, benchNodes, func(i int) error {
		_, err := cs.CoreV1().Pods("running").Create(ctx, pod("running", fmt.Sprintf("run-%05d", i), fmt.Sprintf("node-%05d", i), ""), metav1.CreateOptions{})
		return err
	})
	for _, ns := range []string{"gang-1", "gang-2", "gang-3", "scheduler"} {
		_, err := cs.SchedulingV1beta1().PodGroups(ns).Create(ctx, &schedulingv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: "train"},
			Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
				Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: benchMembers}}},
		}, metav1.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, ns := range []string{"gang-1", "gang-2", "gang-3", "scheduler", "floor-1", "floor-2", "floor-3"} {
		group := "train"
		if strings.HasPrefix(ns, "floor") {
			group = ""
		}
		parallel(b, benchMembers, func(i int) error {
			_, err := cs.CoreV1().Pods(ns).Create(ctx, pod(ns, fmt.Sprintf("w-%04d", i), "", group), metav1.CreateOptions{})
			return err
		})
	}
	b.Logf("set-up: %d nodes, %d running pods, 7 x %d pending pods in %s", benchNodes, benchNodes, benchMembers, time.Since(start).Round(time.Second))
	// Let the apiserver and etcd settle after the burst of creates.
	time.Sleep(5 * time.Second)
	b.ResetTimer()

	// The raw floor and the bind, three times each, one after the other
	// (the machine is noisy): the medians count.
	var floors, binds []time.Duration
	rawFloor := func(ns string) {
		start := time.Now()
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		parallel(b, len(list.Items), func(i int) error {
			p := &list.Items[i]
			return cs.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, UID: p.UID},
				Target: corev1.ObjectReference{Kind: "Node", Name: fmt.Sprintf("node-%05d", i)}}, metav1.CreateOptions{})
		})
		floors = append(floors, time.Since(start))
	}
	// kubectl gang bind, default flags.
	gangBind := func(ns string) {
		start := time.Now()
		var out, errOut bytes.Buffer
		code := cmd.Main([]string{"bind", "podgroup/train", "-n", ns, "--kubeconfig", env.Kubeconfig, "-o", "name"},
			genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut})
		binds = append(binds, time.Since(start))
		if code != cmd.ExitOK {
			b.Fatalf("bind: exit %d: %s%s", code, out.String(), errOut.String())
		}
		if n := unbound(b, cs, ns); n != 0 {
			b.Fatalf("bind exited 0 but %d members are unbound", n)
		}
	}
	for i := 1; i <= 3; i++ {
		rawFloor(fmt.Sprintf("floor-%d", i))
		gangBind(fmt.Sprintf("gang-%d", i))
	}
	b.Logf("raw floors %v, binds %v", floors, binds)
	slices.Sort(floors)
	slices.Sort(binds)
	floor, bind := floors[1], binds[1]

	// kube-scheduler, client QPS 5000.
	config := filepath.Join(b.TempDir(), "scheduler.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"+
		"clientConnection:\n  qps: 5000\n  burst: 5000\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	start = time.Now()
	if err := env.StartScheduler(ctx, testbed.Options{SchedulerConfig: config}); err != nil {
		b.Fatal(err)
	}
	for unbound(b, cs, "scheduler") > 0 {
		if time.Since(start) > 5*time.Minute {
			b.Fatalf("kube-scheduler has not bound the gang after %s", time.Since(start))
		}
		time.Sleep(50 * time.Millisecond)
	}
	scheduler := time.Since(start)

	b.ReportMetric(bind.Seconds(), "gang-bind-s")
	b.ReportMetric(scheduler.Seconds(), "kube-scheduler-s")
	b.ReportMetric(floor.Seconds(), "raw-floor-s")
	b.ReportMetric(scheduler.Seconds()/bind.Seconds(), "kube-scheduler/gang-bind")
	b.ReportMetric(bind.Seconds()/floor.Seconds(), "gang-bind/raw-floor")
	b.Logf("kubectl gang bind %s, kube-scheduler %s (%.2fx slower), raw floor %s (bind is %.2fx of it)",
		bind.Round(time.Millisecond), scheduler.Round(time.Millisecond), scheduler.Seconds()/bind.Seconds(),
		floor.Round(time.Millisecond), bind.Seconds()/floor.Seconds())
}

// clusterOfNodes starts a test bed with n nodes of 64 cpu and 256Gi in
// three zones, and returns it with a client without rate limits.
func clusterOfNodes(b *testing.B, n int) (*testbed.Env, kubernetes.Interface, func()) {
	ctx := context.Background()
	env, err := testbed.Start(ctx, testbed.Options{})
	if err != nil {
		b.Fatal(err)
	}
	cs := fastClient(b, env.Config)
	start := time.Now()
	parallel(b, n, func(i int) error {
		name := fmt.Sprintf("node-%05d", i)
		return env.CreateNode(ctx, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				corev1.LabelHostname: name, corev1.LabelTopologyZone: fmt.Sprintf("zone-%d", i%3)}},
			Status: corev1.NodeStatus{Capacity: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"),
				corev1.ResourcePods: resource.MustParse("110")}},
		})
	})
	b.Logf("%d nodes in %s", n, time.Since(start).Round(time.Second))
	return env, cs, func() { _ = env.Stop() }
}

// pod is a small pending pod (or a running one on node), a member of the
// native PodGroup group when group is set.
func pod(namespace, name, node, group string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"app": namespace}},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}}}},
		},
	}
	if group != "" {
		p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &group}
	}
	return p
}

// unbound counts the pods of namespace without a node.
func unbound(b *testing.B, cs kubernetes.Interface, namespace string) int {
	list, err := cs.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{FieldSelector: "spec.nodeName="})
	if err != nil {
		b.Fatal(err)
	}
	return len(list.Items)
}

// fastClient is a client without client-side rate limits, for the set-up.
func fastClient(b *testing.B, cfg *rest.Config) kubernetes.Interface {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = -1
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

// parallel runs f(0..n-1), inFlight at a time, and fails on the first error.
func parallel(b *testing.B, n int, f func(int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range inFlight {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || failed.Load() != nil {
					return
				}
				if err := f(i); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
}
