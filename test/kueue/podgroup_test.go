package kueue

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	dyn, _ := heldBed(t, prefix, 2, flavor("%[1]s-a"), clusterQueue("%[1]s-cq", "BestEffortFIFO", "", map[string]int{"%[1]s-a": 4}))
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
	said := linesGoing(t, ns)
	releaseQueue(t, dyn, ns)
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
		if ungated := kueueUngates(t, ns, g.name+"-0", g.wantAdmitted); ungated != l.Kueue.Admitted {
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
	dyn, _ := heldBed(t, prefix, 1, flavor("%[1]s-a"), clusterQueue("%[1]s-cq", "BestEffortFIFO", "", map[string]int{"%[1]s-a": 4}))
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
	said := linesGoing(t, ns)
	releaseQueue(t, dyn, ns)
	for _, p := range pods {
		l, ok := said["pod/"+p.name]
		if !ok || l.Kueue == nil {
			t.Errorf("%s: no line with Kueue's decision (%+v)", p.name, l)
			continue
		}
		if l.Kueue.Admitted != p.wantAdmitted || (l.Kueue.Admitted && l.Verdict != "Starts") {
			t.Errorf("%s: kubectl-gang: admitted %v, %s: %s", p.name, l.Kueue.Admitted, l.Verdict, l.Reason)
		}
		if ungated := kueueUngates(t, ns, p.name, p.wantAdmitted); ungated != l.Kueue.Admitted {
			t.Errorf("%s: Kueue ungated it: %v; kubectl-gang said admitted %v", p.name, ungated, l.Kueue.Admitted)
		}
	}
}

// kueueUngates reports whether Kueue removes its gates from pod in ns,
// waiting up to 20 s for one it should admit and 6 s for one it should
// not (it stays gated).
func kueueUngates(t *testing.T, ns, pod string, admits bool) bool {
	t.Helper()
	wait := 6 * time.Second
	if admits {
		wait = 20 * time.Second
	}
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		p, err := env.Clientset().CoreV1().Pods(ns).Get(t.Context(), pod, metav1.GetOptions{})
		if err == nil && len(p.Spec.SchedulingGates) == 0 {
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}
