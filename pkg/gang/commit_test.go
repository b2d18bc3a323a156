package gang

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// TestCommit: a gang placed after another that Commit recorded sees its
// members running: on 4 nodes two 2 x 8-GPU gangs both fit, a third does
// not, and the committed snapshot holds the members bound.
func TestCommit(t *testing.T) {
	ctx := context.Background()
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 4)}
	s, err := schedule.NewScheduler(snap, schedule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gangNamed := func(name string) *Gang {
		members := testutil.GPUWorkers(2, "8")
		for _, m := range members {
			m.Name = name + "-" + m.Name
		}
		g := gangOf(2, members)
		g.Name = name
		return g
	}
	var verdicts []Verdict
	for _, name := range []string{"a", "b", "c"} {
		p, err := PlaceOn(ctx, snap, s, gangNamed(name), PlaceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		verdicts = append(verdicts, p.Verdict)
		if p.Verdict != VerdictPlaced {
			continue
		}
		before := len(snap.Pods)
		if snap, s, err = Commit(snap, s, p.Planned()); err != nil {
			t.Fatal(err)
		}
		if len(snap.Pods) != before+2 {
			t.Fatalf("committed snapshot has %d pods, want %d", len(snap.Pods), before+2)
		}
		for _, pod := range snap.Pods {
			if pod.Spec.NodeName == "" {
				t.Errorf("pod %s not bound in the committed snapshot", pod.Name)
			}
		}
	}
	want := []Verdict{VerdictPlaced, VerdictPlaced, VerdictUnschedulable}
	for i := range want {
		if verdicts[i] != want[i] {
			t.Errorf("gang %d: verdict %s, want %s", i, verdicts[i], want[i])
		}
	}
}

// TestMergeSorted: merging a short sorted list into a long one gives the
// sorted union, the long list's pods first among equal names.
func TestMergeSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	mk := func(n int, tag string) []*corev1.Pod {
		var out []*corev1.Pod
		for range n {
			out = append(out, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprint("ns-", rng.IntN(3)), Name: fmt.Sprint("p-", rng.IntN(40)), Annotations: map[string]string{"from": tag}}})
		}
		slices.SortStableFunc(out, byNamespaceName)
		return out
	}
	for range 200 {
		a, b := mk(rng.IntN(60), "a"), mk(rng.IntN(8), "b")
		want := slices.Concat(a, b)
		slices.SortStableFunc(want, byNamespaceName)
		if got := mergeSorted(a, b); !slices.Equal(got, want) {
			t.Fatalf("mergeSorted(%v, %v) = %v, want %v", PodKeys(a), PodKeys(b), PodKeys(got), PodKeys(want))
		}
	}
}
