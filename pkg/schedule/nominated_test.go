package schedule

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
)

// A pod nominated to a node holds its room against pods of its priority or
// lower, in full cycles and in sequences, until it is reserved somewhere:
// an assumed pod is no longer nominated.
func TestNominatedPodHoldsRoomUntilReserved(t *testing.T) {
	nodes := []*corev1.Node{
		testutil.MakeNode().Name("n1").Capacity(testutil.Res{"cpu": "4"}).Obj(),
		testutil.MakeNode().Name("n2").Capacity(testutil.Res{"cpu": "8"}).Obj(),
	}
	nominated := testutil.MakePod().Namespace("ml").Name("first").UID("u-first").Req(testutil.Res{"cpu": "3"}).Obj()
	nominated.Status.NominatedNodeName = "n1"
	other := testutil.MakePod().Namespace("ml").Name("other-scheduler").UID("u-other").Req(testutil.Res{"cpu": "3"}).Obj()
	other.Status.NominatedNodeName = "n1"
	other.Spec.SchedulerName = "someone-else"
	filler := testutil.MakePod().Namespace("x").Name("filler").Node("n2").Req(testutil.Res{"cpu": "6"}).Obj()
	snap := &Snapshot{Nodes: nodes, Pods: []*corev1.Pod{nominated, other, filler}}
	pod := testutil.MakePod().Namespace("ml").Name("second").UID("u-second").Req(testutil.Res{"cpu": "2"}).Obj()
	urgent := testutil.MakePod().Namespace("ml").Name("urgent").UID("u-urgent").Req(testutil.Res{"cpu": "2"}).Priority("high", 100).Obj()
	ctx := context.Background()

	s, err := NewScheduler(snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := func(p *corev1.Pod, verdict Verdict, node string) {
		t.Helper()
		for _, seq := range []bool{false, true} {
			var res *Result
			if seq {
				res, err = s.NewSequence().Schedule(ctx, p)
			} else {
				res, err = s.Schedule(ctx, p)
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != verdict || res.SelectedNode != node {
				t.Errorf("%s (sequence %v): %s on %q (%s), want %s on %q", p.Name, seq, res.Verdict, res.SelectedNode, res.Message, verdict, node)
			}
		}
	}
	// n1 has 4 cpus, 3 held for "first"; n2 has 2 left.
	want(pod, VerdictScheduled, "n2")
	// A pod of higher priority may take the room.
	want(urgent, VerdictScheduled, "n1")
	if err := s.Reserve(pod, "n2"); err != nil {
		t.Fatal(err)
	}
	want(testutil.MakePod().Namespace("ml").Name("third").UID("u-third").Req(testutil.Res{"cpu": "2"}).Obj(), VerdictUnschedulable, "")
	// Once "first" is assumed (Reserve does not check fit), its nomination
	// is gone and n1 is free again; the pod nominated for another scheduler
	// never held room in this profile.
	if err := s.Reserve(nominated, "n2"); err != nil {
		t.Fatal(err)
	}
	want(testutil.MakePod().Namespace("ml").Name("fourth").UID("u-fourth").Req(testutil.Res{"cpu": "2"}).Obj(), VerdictScheduled, "n1")
}
