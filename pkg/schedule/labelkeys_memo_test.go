package schedule

import (
	"context"
	"testing"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
)

// The class key memo is bounded and shares equal keys: what-ifs schedule
// fresh copies of pods (gang.Ungated, withMembers), each a new entry, on
// forks that share the label key set for the scheduler's life.
func TestClassKeyMemoIsBounded(t *testing.T) {
	snap := &Snapshot{}
	snap.Nodes = append(snap.Nodes, testutil.MakeNode().Name("n").Capacity(testutil.Res{"cpu": "16", "memory": "64Gi", "pods": "110"}).Obj())
	base, err := NewScheduler(snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pod := testutil.MakePod().Namespace("ml").Name("m").Req(testutil.Res{"cpu": "1"}).Obj()
	ctx := context.Background()
	for f := range 2 {
		fork, err := base.Fork()
		if err != nil {
			t.Fatal(err)
		}
		seq := fork.NewSequence()
		for range maxClassKeys/2 + 100 {
			res, err := seq.Schedule(ctx, pod.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != VerdictScheduled {
				t.Fatalf("fork %d: %s", f, res.Verdict)
			}
		}
	}
	sk := base.selectedLabelKeys()
	if n := len(sk.classKeys); n == 0 || n > maxClassKeys {
		t.Errorf("memo holds %d pods, want 1..%d", n, maxClassKeys)
	}
	if n := len(sk.interned); n != 2 {
		t.Errorf("memo holds %d distinct key strings, want 2 (the score and the full key of equal pods)", n)
	}
}
