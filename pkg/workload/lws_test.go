package workload_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

const rack = "network.topology.kubernetes.io/rack"

// lws is a LeaderWorkerSet of replicas groups: a CPU leader and size-1
// 8-GPU workers; annotations and spec lines are added as given.
func lws(replicas, size int, annotations, spec string) string {
	return fmt.Sprintf(`apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: infer, annotations: {%s}}
spec:
  replicas: %d
  leaderWorkerTemplate:
    size: %d
%s
    leaderTemplate:
      spec:
        containers: [{name: c, image: c, resources: {requests: {cpu: "4"}}}]
    workerTemplate:
      spec:
        containers: [{name: c, image: c, resources: {limits: {nvidia.com/gpu: "8"}}}]
`, annotations, replicas, size, spec)
}

func placeLWS(t *testing.T, nodes []*corev1.Node, manifest string, subGroups bool) *gang.Placement {
	t.Helper()
	g := whatIf(t, []byte(manifest), "lws.yaml", nil)
	if !subGroups {
		g.SubGroups = nil
	}
	p, err := gang.Place(context.Background(), &schedule.Snapshot{Nodes: nodes}, g, gang.PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func placed(p *gang.Placement) []string {
	var got []string
	for _, a := range p.Planned() {
		got = append(got, a.Pod.Name+"->"+a.Node)
	}
	return got
}

// Each LeaderWorkerSet group is placed whole or not at all: on three
// 8-GPU nodes, two groups of a leader and two workers place the first
// group, and none of the second (its first worker would fit).
func TestLWSGroupsWholeOrNothing(t *testing.T) {
	nodes := blockNodes(3)
	p := placeLWS(t, nodes, lws(2, 3, "", ""), true)
	want := []string{"infer-0->a-0", "infer-0-1->a-1", "infer-0-2->a-2"}
	if diff := cmp.Diff(want, placed(p)); diff != "" || p.Verdict != gang.VerdictUnschedulable || p.MaxPlaceable != 3 {
		t.Errorf("%s, %d fit (-want +got):\n%s", p.Verdict, p.MaxPlaceable, diff)
	}
	if !strings.Contains(p.Message, "(each LeaderWorkerSet group whole or none: 1 of 2 fit)") {
		t.Errorf("message: %s", p.Message)
	}
	if p.Blocker == nil || p.Blocker.Pod.Name != "infer-1-2" || !strings.Contains(p.Blocker.Message, "Insufficient nvidia.com/gpu") {
		t.Errorf("blocker: %+v", p.Blocker)
	}
	// Member by member, the second group's leader and first worker would
	// be placed.
	if p := placeLWS(t, nodes, lws(2, 3, "", ""), false); p.MaxPlaceable != 5 {
		t.Errorf("member by member: %d fit", p.MaxPlaceable)
	}
	if p := placeLWS(t, blockNodes(4), lws(2, 3, "", ""), true); p.Verdict != gang.VerdictPlaced {
		t.Errorf("four nodes: %s: %s", p.Verdict, p.Message)
	}
}

// rackNodes makes 8-GPU nodes in blocks of racks: racks[b] lists the
// sizes of block b's racks; nodes are named <block><rack>-<i>.
func rackNodes(racks ...[]int) []*corev1.Node {
	var nodes []*corev1.Node
	for b, sizes := range racks {
		bn := string(rune('a' + b))
		for r, size := range sizes {
			rn := fmt.Sprintf("%s%d", bn, r)
			for i := range size {
				nodes = append(nodes, testutil.MakeNode().Name(fmt.Sprintf("%s-%d", rn, i)).Label(block, bn).Label(rack, rn).
					Capacity(testutil.Res{"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": "8"}).Obj())
			}
		}
	}
	return nodes
}

// A group alone in a block, its sub-groups each alone in a rack: a group
// of a leader and three workers in sub-groups of two ({leader, worker 1},
// {2, 3}) needs a block with a rack of two nodes and another rack. Blocks
// a (racks of 1 and 2) and b (2 and 2) hold one; c (one rack) cannot, and
// neither can a when the leader lands in its rack of two (the leader's
// sub-group takes it, and the other needs two nodes in a rack), yet the
// leader ties on all those nodes: a coin toss, whose plan takes a0-0, then
// b. The third group places nothing though c has two free nodes.
func TestLWSExclusiveGroupsAndSubGroups(t *testing.T) {
	nodes := rackNodes([]int{1, 2}, []int{2, 2}, []int{2})
	annotations := fmt.Sprintf("leaderworkerset.sigs.k8s.io/exclusive-topology: %s, leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology: %s", block, rack)
	policy := "    subGroupPolicy: {subGroupSize: 2}"
	p := placeLWS(t, nodes, lws(2, 4, annotations, policy), true)
	want := []string{
		"infer-0->a0-0", "infer-0-1->a0-0", "infer-0-2->a1-0", "infer-0-3->a1-1",
		"infer-1->b0-0", "infer-1-1->b0-1", "infer-1-2->b1-0", "infer-1-3->b1-1",
	}
	if diff := cmp.Diff(want, placed(p)); diff != "" || p.Verdict != gang.VerdictPlaced || p.Verified() ||
		!strings.Contains(strings.Join(p.AllNotEvaluated(), "\n"), "ml/infer-0, the leader of its LeaderWorkerSet group, may land on a1-0, a1-1 ("+block+"=a), c0-0, c0-1 ("+block+"=c)") {
		t.Errorf("two groups: %s: %s %v (-want +got):\n%s", p.Verdict, p.Message, p.AllNotEvaluated(), diff)
	}
	p = placeLWS(t, nodes, lws(3, 4, annotations, policy), true)
	if p.Verdict != gang.VerdictUnschedulable || p.MaxPlaceable != 8 || p.Blocker == nil || !strings.HasPrefix(p.Blocker.Pod.Name, "infer-2") {
		t.Errorf("three groups: %s, %d fit, blocker %+v: %s", p.Verdict, p.MaxPlaceable, p.Blocker, p.Message)
	}
	for _, a := range p.Planned() {
		if strings.HasPrefix(a.Pod.Name, "infer-2") {
			t.Errorf("a member of the third group is placed: %s on %s", a.Pod.Name, a.Node)
		}
	}
}

// A LeaderWorkerSet this build cannot expand is refused with one line.
func TestLWSRefused(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"other version", "apiVersion: leaderworkerset.x-k8s.io/v2\nkind: LeaderWorkerSet\nmetadata: {name: l}\nspec: {}\n",
			`LeaderWorkerSet "l": leaderworkerset.x-k8s.io/v2 is not supported; this build reads LeaderWorkerSet leaderworkerset.x-k8s.io/v1`},
		{"size 0", "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: l}\nspec: {leaderWorkerTemplate: {size: 0}}\n",
			`LeaderWorkerSet "l": spec.leaderWorkerTemplate.size must be at least 1, got 0`},
		{"negative replicas", "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: l}\nspec: {replicas: -1}\n",
			`LeaderWorkerSet "l": spec.replicas must not be negative, got -1`},
		{"sub-group size", "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: l}\nspec: {leaderWorkerTemplate: {size: 6, subGroupPolicy: {subGroupSize: 4}}}\n",
			`LeaderWorkerSet "l": spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize must divide size (6) or size-1, got 4`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := workload.Decode([]byte(tc.yaml), "l.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := workload.FromManifests(objs, "ml", 0); err == nil || err.Error() != tc.want {
				t.Errorf("got %v, want %s", err, tc.want)
			}
		})
	}
}
