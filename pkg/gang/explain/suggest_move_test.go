package explain

import (
	"context"
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// ownedBy gives pod a controller reference of kind/name.
func ownedBy(pod *corev1.Pod, apiVersion, kind, name string) *corev1.Pod {
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID("uid-" + name), Controller: ptrTo(true)}}
	return pod
}

// moveCluster: 12 8-GPU nodes in two zones, with GPUs in use unevenly; a
// ReplicaSet infer (selector app=infer) with pods on the first nodes, so
// that default spreading scores its pods by where the others run; a
// Service selecting app=web; and the pods to place again: the sweeps of
// three Jobs alike, the ReplicaSet's pods, web pods of a ReplicaSet the
// snapshot does not hold, and two pods of shapes of their own.
func moveCluster() (*schedule.Snapshot, []*corev1.Pod) {
	nodes := append(testutil.GPUNodes("zone-a", 6), testutil.GPUNodes("zone-b", 6)...)
	var running []*corev1.Pod
	for i, n := range nodes {
		gpus := fmt.Sprint(i % 4)
		if gpus != "0" {
			running = append(running, testutil.MakePod().Namespace("batch").Name(fmt.Sprintf("busy-%02d", i)).Node(n.Name).
				Req(testutil.Res{"cpu": fmt.Sprint(4 * (i%3 + 1)), "memory": "64Gi", "nvidia.com/gpu": gpus}).Obj())
		}
		if i < 3 {
			running = append(running, ownedBy(testutil.MakePod().Namespace("serving").Name(fmt.Sprintf("infer-run-%d", i)).Label("app", "infer").
				Node(n.Name).Req(testutil.Res{"cpu": "2", "memory": "8Gi"}).Obj(), "apps/v1", "ReplicaSet", "infer"))
		}
	}
	var moved []*corev1.Pod
	for i := range 12 {
		moved = append(moved, ownedBy(testutil.MakePod().Namespace("batch").Name(fmt.Sprintf("sweep-%02d", i)).Label("app", "sweep").
			Node("gone").Req(testutil.Res{"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "2"}).Obj(), "batch/v1", "Job", fmt.Sprintf("sweep-%d", i%3)))
	}
	for i := range 6 {
		moved = append(moved, ownedBy(testutil.MakePod().Namespace("serving").Name(fmt.Sprintf("infer-%d", i)).Label("app", "infer").
			Node("gone").Req(testutil.Res{"cpu": "2", "memory": "8Gi"}).Obj(), "apps/v1", "ReplicaSet", "infer"))
	}
	for i := range 3 {
		moved = append(moved, ownedBy(testutil.MakePod().Namespace("serving").Name(fmt.Sprintf("web-%d", i)).Label("app", "web").
			Node("gone").Req(testutil.Res{"cpu": "1", "memory": "2Gi"}).Obj(), "apps/v1", "ReplicaSet", "web-5f4"))
	}
	for i, gpus := range []string{"3", "5"} {
		moved = append(moved, ownedBy(testutil.MakePod().Namespace("batch").Name(fmt.Sprintf("odd-%d", i)).
			Node("gone").Req(testutil.Res{"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": gpus}).Obj(), "batch/v1", "Job", "odd"))
	}
	snap := &schedule.Snapshot{Nodes: nodes, Pods: running,
		ReplicaSets: []*appsv1.ReplicaSet{{ObjectMeta: metav1.ObjectMeta{Namespace: "serving", Name: "infer"},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "infer"}}}}},
		Services: []*corev1.Service{{ObjectMeta: metav1.ObjectMeta{Namespace: "serving", Name: "web"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}}}},
	}
	return snap, moved
}

// fullCycles is where pods go scheduled one after the other with a full
// cycle each, as they are (controller and all), each reserved before the
// next: what kube-scheduler does with them, the reference for placeAgain.
func fullCycles(t *testing.T, s *schedule.Scheduler, pods []*corev1.Pod) []string {
	t.Helper()
	var to []string
	for _, pod := range pods {
		again := pendingCopy(pod)
		res, err := s.Schedule(context.Background(), again)
		if err != nil {
			t.Fatal(err)
		}
		node := ""
		if res.Verdict == schedule.VerdictScheduled {
			node = res.SelectedNode
			if err := s.Reserve(again, node); err != nil {
				t.Fatal(err)
			}
		}
		to = append(to, node)
	}
	return to
}

// The moved pods go where full cycles of the pods as they are put them:
// the sweeps of several Jobs share one Sequence (their copies lose the
// controller mark default spreading does not read), the ReplicaSet's pods
// keep theirs (default spreading selects by it), and pods of shapes of
// their own get a full cycle each.
func TestPlaceAgainIsFullCycles(t *testing.T) {
	snap, moved := moveCluster()
	// In more than one order: runs of equal pods, and pods interleaved.
	interleaved := slices.Clone(moved)
	slices.SortStableFunc(interleaved, func(a, b *corev1.Pod) int { return cmpIndex(a.Name) - cmpIndex(b.Name) })
	for name, pods := range map[string][]*corev1.Pod{"runs": moved, "interleaved": interleaved} {
		t.Run(name, func(t *testing.T) {
			s, err := schedule.NewScheduler(snap, schedule.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ref, err := s.Fork()
			if err != nil {
				t.Fatal(err)
			}
			want := fullCycles(t, ref, pods)
			got, err := placeAgain(context.Background(), s, snap, pods)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("placed again on\n%v\nwant (full cycles)\n%v", got, want)
			}
			if slices.Contains(want, "") || len(slices.Compact(slices.Sorted(slices.Values(want)))) < 6 {
				t.Errorf("destinations %v: want every pod placed, spread over several nodes", want)
			}
		})
	}
}

// cmpIndex is the number a test pod's name ends in.
func cmpIndex(name string) int {
	n := 0
	for _, c := range name {
		if c >= '0' && c <= '9' {
			n = n*10 + int(c-'0')
		}
	}
	return n
}

// A copy to schedule loses its controller mark when default spreading
// (helper.DefaultSelector) does not select by that controller: a Job's, a
// ReplicaSet's the snapshot does not hold; it keeps it for a ReplicaSet the
// snapshot holds, and when the selector's kinds could not be read.
func TestSchedulingCopy(t *testing.T) {
	snap, _ := moveCluster()
	w := framework.Workloads{Services: snap.Services, ReplicaSets: snap.ReplicaSets}
	pod := func(kind, name string) *corev1.Pod {
		apiVersion := "apps/v1"
		if kind == "Job" {
			apiVersion = "batch/v1"
		}
		return ownedBy(testutil.MakePod().Namespace("serving").Name("p").Label("app", "infer").Node("n").Obj(), apiVersion, kind, name)
	}
	for _, c := range []struct {
		name       string
		pod        *corev1.Pod
		unreadable []string
		keeps      bool
	}{
		{"a Job's", pod("Job", "sweep"), nil, false},
		{"a ReplicaSet's the snapshot holds", pod("ReplicaSet", "infer"), nil, true},
		{"a ReplicaSet's the snapshot does not hold", pod("ReplicaSet", "other"), nil, false},
		{"a StatefulSet's the snapshot does not hold", pod("StatefulSet", "db"), nil, false},
		{"unreadable ReplicaSets", pod("ReplicaSet", "other"), []string{schedule.KindReplicaSets}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := schedulingCopy(c.pod, w, c.unreadable)
			if got.Spec.NodeName != "" || got.Status.Phase != corev1.PodPending {
				t.Errorf("copy on %q, phase %s: want pending on no node", got.Spec.NodeName, got.Status.Phase)
			}
			if keeps := metav1.GetControllerOf(got) != nil; keeps != c.keeps {
				t.Errorf("controller kept %v, want %v", keeps, c.keeps)
			}
			if len(got.OwnerReferences) != 1 || got.OwnerReferences[0].Name != c.pod.OwnerReferences[0].Name {
				t.Errorf("owner references %v: want the owner still named", got.OwnerReferences)
			}
			if metav1.GetControllerOf(c.pod) == nil {
				t.Error("the pod itself lost its controller")
			}
		})
	}
	if got := schedulingCopy(testutil.MakePod().Name("bare").Node("n").Obj(), w, nil); len(got.OwnerReferences) != 0 {
		t.Errorf("a pod without owners got %v", got.OwnerReferences)
	}
}
