package kueue

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	v1alpha1 "github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
)

// groupPod is member i of Kueue plain pod group name of total pods, gpus
// GPUs each, for LocalQueue team.
func groupPod(ns, name string, i, total, gpus int) *corev1.Pod {
	q := fmt.Sprint(gpus)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i), Namespace: ns,
			Labels:      map[string]string{"kueue.x-k8s.io/queue-name": "team", "kueue.x-k8s.io/pod-group-name": name},
			Annotations: map[string]string{"kueue.x-k8s.io/pod-group-total-count": fmt.Sprint(total)}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{"cpu": resource.MustParse("1"), "nvidia.com/gpu": resource.MustParse(q)},
			Limits:   corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(q)}}}}},
	}
}

// TestPodGroupsAgreeWithKueue: plain pod groups Kueue holds (their pods
// gated by kueue.x-k8s.io/admission, a Workload owned by the pods, its pod
// set named by the pods' role hash) in a stopped LocalQueue; explain -A of
// the snapshot with the LocalQueue going says which Kueue admits; then the
// real LocalQueue goes, and Kueue admits those (their pods ungated) and no
// other. ClusterQueue quota 4 GPUs: small (2 x 1 GPU) fits, big (3 x 2
// GPUs, queued after it) does not.
func TestPodGroupsAgreeWithKueue(t *testing.T) {
	ctx := t.Context()
	prefix := "pgq"
	ns := prefix
	dyn := bed(t, ns, flavor(prefix+"-a"), clusterQueue(prefix+"-cq", "BestEffortFIFO", "", map[string]int{prefix + "-a": 4}),
		fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: team, namespace: %s}\nspec: {clusterQueue: %s-cq, stopPolicy: Hold}\n", ns, prefix))
	for i := range 2 {
		node := testutil.MakeNode().Name(fmt.Sprintf("%s-%d", prefix, i)).Label("qv", prefix+"-a").
			Capacity(testutil.Res{"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "8", "pods": "110"}).Obj()
		if err := env.CreateNode(ctx, node); err != nil {
			t.Fatal(err)
		}
	}
	sc := &scenario{ns: ns, cqs: []string{prefix + "-cq"}}
	if err := sc.waitQueuesActive(t, dyn); err != nil {
		t.Fatal(err)
	}
	groups := []struct {
		name         string
		pods, gpus   int
		wantAdmitted bool
	}{{"small", 2, 1, true}, {"big", 3, 2, false}}
	for _, g := range groups {
		for i := range g.pods {
			if _, err := env.Clientset().CoreV1().Pods(ns).Create(ctx, groupPod(ns, g.name, i, g.pods, g.gpus), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(1100 * time.Millisecond)
	}
	// Kueue makes a Workload per group, owned by its pods, and gates them.
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, err := dyn.Resource(gvrWorkload).Namespace(ns).List(ctx, metav1.ListOptions{})
		pods, perr := env.Clientset().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		gated := 0
		if perr == nil {
			for _, p := range pods.Items {
				if len(p.Spec.SchedulingGates) > 0 {
					gated++
				}
			}
		}
		if err == nil && len(list.Items) == 2 && gated == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Kueue made no Workload per pod group or did not gate the pods in 30s (%v, %d gated)", err, gated)
		}
		time.Sleep(200 * time.Millisecond)
	}
	file := snapshotGoing(t, ns)
	code, out, stderr := run(t, "explain", "-n", ns, "--snapshot", file, "-o", "json")
	var list v1alpha1.PendingList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("explain exit %d: %v\n%s%s", code, err, out, stderr)
	}
	said := map[string]v1alpha1.PendingItem{}
	for _, l := range list.Items {
		said[l.Name] = l
		t.Logf("kubectl-gang: %s %s: %s", l.Name, l.Verdict, l.Reason)
	}
	if _, err := dyn.Resource(kueueGVR("localqueues")).Namespace(ns).Patch(ctx, "team", types.MergePatchType, []byte(`{"spec":{"stopPolicy":"None"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		l, ok := said["pod/"+g.name+"-0"]
		if !ok || l.Kueue == nil {
			t.Errorf("%s: no line with Kueue's decision (%+v)", g.name, l)
			continue
		}
		if l.Kueue.Admitted != g.wantAdmitted {
			t.Errorf("%s: kubectl-gang says admitted %v (%s)", g.name, l.Kueue.Admitted, l.Kueue.Message)
		}
		if l.Kueue.Admitted && l.Verdict != "Starts" {
			// Kueue's gates are its decision, removed on admission: the
			// nodes have room.
			t.Errorf("%s: admitted, line %s: %s; want Starts", g.name, l.Verdict, l.Reason)
		}
		// Kueue: admitted means its pods are ungated (and its Workload
		// reserves quota); not admitted, they stay gated.
		ungated := false
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			pod, err := env.Clientset().CoreV1().Pods(ns).Get(ctx, g.name+"-0", metav1.GetOptions{})
			if err == nil && len(pod.Spec.SchedulingGates) == 0 {
				ungated = true
				break
			}
			if !g.wantAdmitted && time.Until(deadline) < 14*time.Second {
				// Six seconds with the queue going, and still gated.
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if ungated != l.Kueue.Admitted {
			t.Errorf("%s: Kueue ungated its pods: %v; kubectl-gang said admitted %v", g.name, ungated, l.Kueue.Admitted)
		}
		if !l.Kueue.Admitted && !strings.HasPrefix(l.Reason, "Kueue: couldn't assign flavors") {
			t.Errorf("%s: reason %q", g.name, l.Reason)
		}
	}
}

// TestSinglePodsAgreeWithKueue: plain pods Kueue holds one by one (each
// its own Workload, owned by it, the pod gated) in a stopped LocalQueue;
// explain -A of the snapshot with the LocalQueue going says which Kueue
// admits (quota 4 GPUs: the 3-GPU pod first, then not the 2-GPU one);
// then the real LocalQueue goes, and Kueue ungates that pod and no other.
func TestSinglePodsAgreeWithKueue(t *testing.T) {
	ctx := t.Context()
	prefix := "spq"
	ns := prefix
	dyn := bed(t, ns, flavor(prefix+"-a"), clusterQueue(prefix+"-cq", "BestEffortFIFO", "", map[string]int{prefix + "-a": 4}),
		fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: team, namespace: %s}\nspec: {clusterQueue: %s-cq, stopPolicy: Hold}\n", ns, prefix))
	node := testutil.MakeNode().Name(prefix+"-0").Label("qv", prefix+"-a").
		Capacity(testutil.Res{"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "8", "pods": "110"}).Obj()
	if err := env.CreateNode(ctx, node); err != nil {
		t.Fatal(err)
	}
	sc := &scenario{ns: ns, cqs: []string{prefix + "-cq"}}
	if err := sc.waitQueuesActive(t, dyn); err != nil {
		t.Fatal(err)
	}
	pods := []struct {
		name         string
		gpus         int
		wantAdmitted bool
	}{{"first", 3, true}, {"second", 2, false}}
	for _, p := range pods {
		pod := groupPod(ns, p.name, 0, 1, p.gpus)
		pod.Name = p.name
		delete(pod.Labels, "kueue.x-k8s.io/pod-group-name")
		delete(pod.Annotations, "kueue.x-k8s.io/pod-group-total-count")
		if _, err := env.Clientset().CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1100 * time.Millisecond)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, err := dyn.Resource(gvrWorkload).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err == nil && len(list.Items) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Kueue made no Workload per pod in 30s (%v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	file := snapshotGoing(t, ns)
	code, out, stderr := run(t, "explain", "-n", ns, "--snapshot", file, "-o", "json")
	var list v1alpha1.PendingList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("explain exit %d: %v\n%s%s", code, err, out, stderr)
	}
	said := map[string]v1alpha1.PendingItem{}
	for _, l := range list.Items {
		said[l.Name] = l
		t.Logf("kubectl-gang: %s %s: %s", l.Name, l.Verdict, l.Reason)
	}
	if _, err := dyn.Resource(kueueGVR("localqueues")).Namespace(ns).Patch(ctx, "team", types.MergePatchType, []byte(`{"spec":{"stopPolicy":"None"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		l, ok := said["pod/"+p.name]
		if !ok || l.Kueue == nil {
			t.Errorf("%s: no line with Kueue's decision (%+v)", p.name, l)
			continue
		}
		if l.Kueue.Admitted != p.wantAdmitted || (l.Kueue.Admitted && l.Verdict != "Starts") {
			t.Errorf("%s: kubectl-gang: admitted %v, %s: %s", p.name, l.Kueue.Admitted, l.Verdict, l.Reason)
		}
		ungated := false
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			pod, err := env.Clientset().CoreV1().Pods(ns).Get(ctx, p.name, metav1.GetOptions{})
			if err == nil && len(pod.Spec.SchedulingGates) == 0 {
				ungated = true
				break
			}
			if !p.wantAdmitted && time.Until(deadline) < 14*time.Second {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if ungated != l.Kueue.Admitted {
			t.Errorf("%s: Kueue ungated it: %v; kubectl-gang said admitted %v", p.name, ungated, l.Kueue.Admitted)
		}
	}
}
