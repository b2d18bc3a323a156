package schedule

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
)

// TestSequenceEqualsFullCycles places random runs of equal pods on random
// clusters twice, once incrementally and once with a full cycle per pod, and
// requires the same node, score and verdict for every pod.
func TestSequenceEqualsFullCycles(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			snap := &Snapshot{}
			nodes := 5 + rng.IntN(40)
			for i := range nodes {
				n := testutil.MakeNode().Name(fmt.Sprintf("n-%02d", i)).Label(corev1.LabelTopologyZone, fmt.Sprintf("z-%d", rng.IntN(3))).
					Capacity(testutil.Res{"cpu": fmt.Sprint(4 + rng.IntN(60)), "memory": fmt.Sprintf("%dGi", 8+rng.IntN(200)),
						"pods": fmt.Sprint(3 + rng.IntN(20)), "nvidia.com/gpu": fmt.Sprint(rng.IntN(9))})
				switch rng.IntN(6) {
				case 0:
					n.Taint("dedicated", "x", corev1.TaintEffectNoSchedule)
				case 1:
					n.Taint("soft", "x", corev1.TaintEffectPreferNoSchedule)
				}
				snap.Nodes = append(snap.Nodes, n.Obj())
				for k := range rng.IntN(3) {
					snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("o").Name(fmt.Sprintf("r-%d-%d", i, k)).Node(n.Obj().Name).
						Req(testutil.Res{"cpu": fmt.Sprint(1 + rng.IntN(4)), "memory": fmt.Sprintf("%dGi", 1+rng.IntN(16))}).Obj())
				}
			}
			var pods []*corev1.Pod
			for c := range 1 + rng.IntN(3) {
				req := testutil.Res{"cpu": fmt.Sprint(1 + rng.IntN(8)), "memory": fmt.Sprintf("%dGi", 1+rng.IntN(32))}
				if rng.IntN(2) == 0 {
					req["nvidia.com/gpu"] = fmt.Sprint(1 + rng.IntN(4))
				}
				for k := range 1 + rng.IntN(30) {
					p := testutil.MakePod().Namespace("ml").Name(fmt.Sprintf("m-%d-%02d", c, k)).Req(req)
					if c == 1 {
						p.Toleration("soft", "", corev1.TaintEffectPreferNoSchedule)
					}
					pods = append(pods, p.Obj())
				}
			}
			hits := 0
			run := func(incremental bool) []string {
				s, err := NewScheduler(snap, Options{})
				if err != nil {
					t.Fatal(err)
				}
				seq := s.NewSequence()
				var out []string
				for _, pod := range pods {
					var res *Result
					if incremental {
						res, err = seq.Schedule(context.Background(), pod)
					} else {
						res, err = s.Schedule(context.Background(), pod)
					}
					if err != nil {
						t.Fatal(err)
					}
					if res.Verdict != Scheduled {
						out = append(out, pod.Name+": "+res.Message)
						continue
					}
					out = append(out, fmt.Sprintf("%s: %s %d", pod.Name, res.SelectedNode, res.SelectedScore))
					if incremental {
						err = seq.Reserve(context.Background(), pod, res.SelectedNode)
					} else {
						err = s.Reserve(pod, res.SelectedNode)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				hits += seq.hits
				return out
			}
			if diff := cmp.Diff(run(false), run(true)); diff != "" {
				t.Errorf("incremental differs from full cycles (-full +incremental):\n%s", diff)
			}
			if hits == 0 && len(pods) > 3 {
				t.Errorf("no incremental cycle ran for %d pods", len(pods))
			}
		})
	}
}
