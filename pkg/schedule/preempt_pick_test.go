package schedule

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/defaultpreemption"
)

// TestSequencePicksPreemptionLikeFullCycles follows a gang's preemption
// what-if, where the dry run weighs every node
// (WithEveryPreemptionCandidate): members that fit no node each preempt the
// victims the pick names and take its node, one after another. A
// Sequence's members after the first are answered from the pick the memo
// keeps (defaultpreemption's pick: only the nodes that changed are tried
// again); every member must get the answer a full cycle gives: verdict,
// message, node, victims, budget violations and the equally good nodes.
// Victims have priorities, budgets, start times in the past and none; in
// some clusters one started in the future, whose rank could change order
// later: those are answered by full dry runs.
func TestSequencePicksPreemptionLikeFullCycles(t *testing.T) {
	picked := 0
	now := time.Now()
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 29))
		snap := &Snapshot{}
		for i := range 4 + rng.IntN(20) {
			node := fmt.Sprintf("n-%02d", i)
			snap.Nodes = append(snap.Nodes, testutil.MakeNode().Name(node).Label(corev1.LabelTopologyZone, fmt.Sprintf("z-%d", i%3)).
				Capacity(testutil.Res{"cpu": "16", "memory": "64Gi", "pods": "20", "nvidia.com/gpu": "8"}).Obj())
			// In a third of the clusters, every node holds one victim
			// alike: the ranks differ by the victims' start alone.
			alike := seed%3 == 0
			for k := range 1 + rng.IntN(4) {
				prio, gpus := int32(10*(1+rng.IntN(3))), 1+rng.IntN(3)
				if alike {
					if k > 0 {
						break
					}
					prio, gpus = 10, 6
				}
				w := testutil.MakePod().Namespace("low").Name(fmt.Sprintf("v-%d-%d", i, k)).Node(node).
					Priority(fmt.Sprintf("p%d", prio), prio).Req(testutil.Res{"cpu": "2", "nvidia.com/gpu": fmt.Sprint(gpus)})
				if rng.IntN(3) == 0 {
					w = w.Label("tier", "guarded")
				}
				pod := w.Obj()
				switch rng.IntN(4) {
				case 0: // not started
				case 1:
					pod.Status.StartTime = &metav1.Time{Time: now.Add(-time.Hour)}
				case 2:
					pod.Status.StartTime = &metav1.Time{Time: now.Add(-time.Duration(1+rng.IntN(5)) * time.Minute)}
				default:
					if seed%5 == 0 {
						pod.Status.StartTime = &metav1.Time{Time: now.Add(time.Hour)}
					}
				}
				snap.Pods = append(snap.Pods, pod)
			}
		}
		if seed%2 == 0 {
			snap.PodDisruptionBudgets = []*policyv1.PodDisruptionBudget{{
				ObjectMeta: metav1.ObjectMeta{Namespace: "low", Name: "guarded"},
				Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "guarded"}}},
				Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: int32(rng.IntN(2))},
			}}
		}
		gpus := fmt.Sprint(1 + rng.IntN(5))
		if seed%3 == 0 {
			gpus = "5" // one member a node, each after a preemption
		}
		var pods []*corev1.Pod
		for k := range 5 + rng.IntN(30) {
			pods = append(pods, indexed(rng, testutil.MakePod().Namespace("ml").Name(fmt.Sprintf("m-%02d", k)).Label("app", "train").
				Priority("high", 1000).Req(testutil.Res{"cpu": "4", "nvidia.com/gpu": gpus}).Obj(), k))
		}
		run := func(incremental bool) ([]string, int) {
			base, err := NewScheduler(snap, Options{})
			if err != nil {
				t.Fatal(err)
			}
			s, err := base.WithEveryPreemptionCandidate()
			if err != nil {
				t.Fatal(err)
			}
			c := newCycles(t, s, incremental)
			memos := map[*defaultpreemption.Memo]bool{}
			// The results are read at the end: a later member's answer
			// must not change an earlier one's.
			var results []*Result
			for _, pod := range pods {
				res := c.schedule(pod)
				results = append(results, res)
				if incremental && c.seq.failed != nil && c.seq.failed.memo != nil {
					memos[c.seq.failed.memo] = true
				}
				node := res.SelectedNode
				if res.Verdict != VerdictScheduled {
					node = res.NominatedNode
				}
				if node == "" {
					continue
				}
				if len(res.PreemptionVictims) > 0 {
					c.evict(res.PreemptionVictims, node)
				}
				c.reserve(pod, node)
			}
			var out []string
			for _, res := range results {
				node := res.SelectedNode
				var victims []string
				if res.Verdict != VerdictScheduled {
					node = res.NominatedNode
					for _, v := range res.PreemptionVictims {
						victims = append(victims, v.Name)
					}
				}
				out = append(out, fmt.Sprintf("%s: %s %s %v pdb %d equally good %v: %s", res.Pod.Name, res.Verdict, node, victims,
					res.PreemptionPDBViolations, res.PreemptionEquallyGood, res.Message))
			}
			picks := 0
			for m := range memos {
				picks += m.Picks()
			}
			return out, picks
		}
		full, _ := run(false)
		incr, picks := run(true)
		picked += picks
		if diff := cmp.Diff(full, incr); diff != "" {
			t.Errorf("seed %d: picked differs from full cycles (-full +picked):\n%s", seed, diff)
		}
	}
	if picked == 0 {
		t.Error("no member was answered from a kept pick")
	}
	t.Logf("%d members answered from a kept pick", picked)
}

// The kept pick trusts a retry's list of changed nodes only when the
// statuses were made from the ones it was last brought up to date with
// (TrackedNodeToStatus): statuses of another version make it compare every
// node, so a node changed since, and missing from the list, is still seen.
func TestKeptPickComparesEveryNodeForStatusesOfAnotherVersion(t *testing.T) {
	snap := &Snapshot{}
	for i := range 4 {
		node := fmt.Sprintf("n-%d", i)
		snap.Nodes = append(snap.Nodes, testutil.MakeNode().Name(node).Capacity(testutil.Res{"cpu": "16", "memory": "64Gi", "pods": "20", "nvidia.com/gpu": "8"}).Obj())
		// The victims' priorities rank n-0 first, then n-1.
		snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("low").Name(fmt.Sprintf("v-%d", i)).Node(node).
			Priority(fmt.Sprintf("p%d", i+1), int32(i+1)).Req(testutil.Res{"cpu": "1", "nvidia.com/gpu": "8"}).Obj())
	}
	pod := testutil.MakePod().Namespace("ml").Name("m").Priority("high", 1000).Req(testutil.Res{"cpu": "1", "nvidia.com/gpu": "8"}).Obj()
	ctx := context.Background()
	postFilterAfterChange := func(from func(pickVersion uint64) uint64) string {
		base, err := NewScheduler(snap, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := base.WithEveryPreemptionCandidate()
		if err != nil {
			t.Fatal(err)
		}
		memo := defaultpreemption.NewMemo()
		res, filter, err := s.scheduleOne(ctx, pod, memo)
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != VerdictUnschedulable || res.NominatedNode != "n-0" || filter == nil {
			t.Fatalf("first cycle: %s nominated %q; want Unschedulable nominated n-0", res.Verdict, res.NominatedNode)
		}
		// A pod the preemptor cannot evict now holds a GPU on n-0.
		keeper := testutil.MakePod().Namespace("sys").Name("keeper").Priority("top", 2000).Req(testutil.Res{"nvidia.com/gpu": "1"}).Obj()
		if err := s.reserve(keeper, "n-0", nil); err != nil {
			t.Fatal(err)
		}
		// Statuses that list no node as changed.
		_, post, err := s.runPostFilter(ctx, filter.state, pod, nodeStatuses{byName: s.byName, nodes: res.Nodes,
			version: statusVersions.Add(1), from: from(filter.statusVersion)})
		if err != nil {
			t.Fatal(err)
		}
		if post == nil {
			return ""
		}
		return post.NominatedNodeName
	}
	// Made from other statuses than the pick's: every node is compared.
	if got := postFilterAfterChange(func(uint64) uint64 { return statusVersions.Add(1) }); got != "n-1" {
		t.Errorf("statuses of another version: nominated %q, want n-1 (n-0 holds a pod it cannot evict)", got)
	}
	// Made from the pick's own statuses, the list is trusted: this is
	// what the check above guards.
	if got := postFilterAfterChange(func(v uint64) uint64 { return v }); got != "n-0" {
		t.Errorf("statuses that follow on from the pick's: nominated %q, want n-0 (the list said nothing changed)", got)
	}
}
