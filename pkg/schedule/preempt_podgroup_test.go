package schedule_test

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// With GenericWorkload on, kube-scheduler v1.37's preemption weighs a pod
// of a native PodGroup at its group's priority (preemption.GetPodPriority)
// and ranks pods that name a PodGroup above plain pods of the same priority
// (MoreImportantVictim); a pod preempting one by one meets both.
func TestPreemptionVictimsOfNativePodGroups(t *testing.T) {
	node := func(name string) *corev1.Node {
		return testutil.MakeNode().Name(name).Capacity(testutil.Res{"cpu": "4", "memory": "16Gi"}).Obj()
	}
	group := func(name string, priority int64) *unstructured.Unstructured {
		return testutil.MakeNativePodGroup("ml", name, 1).Field(priority, "priority").Obj()
	}
	pending := testutil.MakePod().Namespace("ml").Name("web").Priority("mid", 500).Req(testutil.Res{"cpu": "2"}).Obj()
	victims := func(t *testing.T, snap *schedule.Snapshot) []string {
		t.Helper()
		s, err := schedule.NewScheduler(snap, schedule.Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Schedule(context.Background(), pending.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, v := range res.PreemptionVictims {
			out = append(out, v.Name+"@"+res.NominatedNode)
		}
		return out
	}

	t.Run("a member's own priority is above the preemptor's, its group's below", func(t *testing.T) {
		snap := &schedule.Snapshot{Nodes: []*corev1.Node{node("a"), node("b")}, PodGroups: []*unstructured.Unstructured{group("batch", 100)}}
		snap.Pods = []*corev1.Pod{
			testutil.MakePod().Namespace("ml").Name("member").PodGroup("batch").Priority("top", 100000).Req(testutil.Res{"cpu": "3"}).Node("a").Obj(),
			testutil.MakePod().Namespace("ml").Name("db").Priority("high", 1000).Req(testutil.Res{"cpu": "3"}).Node("b").Obj(),
		}
		if got, want := victims(t, snap), []string{"member@a"}; !slices.Equal(got, want) {
			t.Errorf("victims %v, want %v", got, want)
		}
	})

	t.Run("of two equal victims the plain pod goes first", func(t *testing.T) {
		snap := &schedule.Snapshot{Nodes: []*corev1.Node{node("a")}, PodGroups: []*unstructured.Unstructured{group("batch", 100)}}
		snap.Pods = []*corev1.Pod{
			// The plain pod is first on the node: by start alone it would
			// be the more important one, and the member the victim.
			testutil.MakePod().Namespace("ml").Name("plain").Priority("low", 100).Req(testutil.Res{"cpu": "2"}).Node("a").Obj(),
			testutil.MakePod().Namespace("ml").Name("member").PodGroup("batch").Priority("low", 100).Req(testutil.Res{"cpu": "2"}).Node("a").Obj(),
		}
		if got, want := victims(t, snap), []string{"plain@a"}; !slices.Equal(got, want) {
			t.Errorf("victims %v, want %v", got, want)
		}
	})
}
