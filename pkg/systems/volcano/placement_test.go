package volcano

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	model "github.com/kubectl-gang/kubectl-gang/pkg/volcano"
)

// gangOf is a native gang of members in ml/train: the node order is the
// profile's, whatever the gang's source.
func gangOf(min int32, members []*corev1.Pod) *gang.Gang {
	return &gang.Gang{Source: gang.SourceNative, Namespace: "ml", Name: "train", MinMember: min, Members: members}
}

func assignments(p *gang.Placement) []string {
	var out []string
	for _, a := range p.Assignments {
		out = append(out, a.Pod.Name+"->"+a.Node)
	}
	return out
}

// TestPlaceWithVolcanosNodeOrder: three 2-GPU members then two 4-GPU ones
// on three nodes of 32 cpu, 128Gi and 8 GPUs with 2, 4 and 8 GPUs free
// (each member and running pod asks 1 cpu and 4Gi per GPU). 14 GPUs for
// 14: the gang fits only if the small members fill the busy nodes.
//
// Volcano with binpack.weight 10 and GPUs weighed 2 (binpack's
// BinPackingScore; the other parts, LeastAllocated 0-100 and
// BalancedAllocation 50-100, cannot make up the differences):
//   - w-0: n1 ((6+2)/32 + (24+8)/128 + 2 x 8/8) / 4 x 1000 = 625, n2 468.75,
//     n3 156.25 -> n1;
//   - w-1: n1 has no GPU left; n2 468.75, n3 156.25 -> n2;
//   - w-2: n2 (8/32 + 32/128 + 2 x 8/8) / 4 x 1000 = 625 -> n2;
//   - w-3, w-4: n3 alone holds 4 GPUs (one candidate, unscored).
//
// kube-scheduler's default profile weighs no GPU: LeastAllocated sends the
// small members to the emptiest nodes (n3, n3, then n2 on a tie of cpu by
// name), which leaves 2, 2 and 4 GPUs for two 4-GPU members.
func TestPlaceWithVolcanosNodeOrder(t *testing.T) {
	node := func(name string) *corev1.Node {
		return testutil.MakeNode().Name(name).Capacity(testutil.Res{"cpu": "32", "memory": "128Gi", "nvidia.com/gpu": "8", "pods": "110"}).Obj()
	}
	req := func(gpus int) testutil.Res {
		return testutil.Res{"cpu": fmt.Sprint(gpus), "memory": fmt.Sprintf("%dGi", 4*gpus), "nvidia.com/gpu": fmt.Sprint(gpus)}
	}
	snap := &schedule.Snapshot{
		Nodes: []*corev1.Node{node("n1"), node("n2"), node("n3")},
		Pods: []*corev1.Pod{
			testutil.MakePod().Namespace("other").Name("used-1").Req(req(6)).Node("n1").Obj(),
			testutil.MakePod().Namespace("other").Name("used-2").Req(req(4)).Node("n2").Obj(),
		},
	}
	var members []*corev1.Pod
	for i, gpus := range []int{2, 2, 2, 4, 4} {
		members = append(members, testutil.MakePod().Namespace("ml").Name(fmt.Sprintf("w-%d", i)).Req(req(gpus)).Obj())
	}
	conf := `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: gang
- plugins:
  - name: predicates
  - name: nodeorder
  - name: binpack
    arguments:
      binpack.weight: 10
      binpack.resources: nvidia.com/gpu
      binpack.resources.nvidia.com/gpu: 2
`
	cfg := configOf(t, conf)
	kube, err := schedule.DefaultProfile()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name            string
		profile         *schedule.Profile
		wantVerdict     gang.Verdict
		wantAssignments []string
	}{
		{"Volcano's node order packs", Profile(cfg), gang.VerdictPlaced,
			[]string{"w-0->n1", "w-1->n2", "w-2->n2", "w-3->n3", "w-4->n3"}},
		{"kube-scheduler's spreads", kube, gang.VerdictUnschedulable, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := gang.Place(context.Background(), snap, gangOf(5, members), gang.PlaceOptions{Profile: tt.profile})
			if err != nil {
				t.Fatal(err)
			}
			if p.Verdict != tt.wantVerdict {
				t.Errorf("verdict %s, want %s: %s", p.Verdict, tt.wantVerdict, p.Message)
			}
			if diff := cmp.Diff(tt.wantAssignments, assignments(p)); diff != "" {
				t.Errorf("assignments (-want +got):\n%s", diff)
			}
			if len(p.NotEvaluated) > 0 {
				t.Errorf("not evaluated: %q", p.NotEvaluated)
			}
		})
	}
}

// TestPlaceWithVolcanosCoinToss: w-0 (6 cpu) scores the same on node a
// (4 GPUs) and node b (8 GPUs), which differ only in GPUs that nothing in
// the chart's node order weighs for it; Volcano picks one at random
// (util.SelectBestNodeAndScore). The plan takes a, and w-1 (4 cpu, 6 GPUs)
// then fits on b; had Volcano picked b, w-1 would fit nowhere. The plan is
// placed, but not a plain yes.
func TestPlaceWithVolcanosCoinToss(t *testing.T) {
	node := func(name, gpus string) *corev1.Node {
		return testutil.MakeNode().Name(name).Capacity(testutil.Res{"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": gpus, "pods": "110"}).Obj()
	}
	snap := &schedule.Snapshot{Nodes: []*corev1.Node{node("a", "4"), node("b", "8")}}
	members := []*corev1.Pod{
		testutil.MakePod().Namespace("ml").Name("w-0").Req(testutil.Res{"cpu": "6"}).Obj(),
		testutil.MakePod().Namespace("ml").Name("w-1").Req(testutil.Res{"cpu": "4", "nvidia.com/gpu": "6"}).Obj(),
	}
	p, err := gang.Place(context.Background(), snap, gangOf(2, members), gang.PlaceOptions{Profile: Profile(model.Default())})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"w-0->a", "w-1->b"}, assignments(p)); diff != "" {
		t.Errorf("assignments (-want +got):\n%s", diff)
	}
	want := []string{"Volcano picks at random among nodes of equal score for ml/w-0 (a, b), which differ: the plan took a, and the members placed after it may fit differently on another pick"}
	if p.Verdict != gang.VerdictPlaced || p.Verified() || !cmp.Equal(want, p.NotEvaluated) {
		t.Errorf("verdict %s, verified %v, not evaluated %q; want Placed, not verified, %q", p.Verdict, p.Verified(), p.NotEvaluated, want)
	}
}
