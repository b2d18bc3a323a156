package conformance

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
)

// explainedMoves is the part of explain -o json the move test reads.
type explainedMoves struct {
	Suggestions []struct {
		Kind  string `json:"kind"`
		Moves []struct {
			Pod  string `json:"pod"`
			From string `json:"from"`
			To   string `json:"to"`
		} `json:"moves"`
	} `json:"suggestions"`
}

// TestFragmentationMove checks explain's move (issue #27's fragmentation
// row) against the real kube-scheduler v1.37.1: four 8-GPU nodes each half
// taken by a lower-priority pod a ReplicaSet owns, and a native gang of two
// 8-GPU members held back. explain's first suggestion moves two pods; the
// test then makes the move (deletes them), releases the gang and
// kube-scheduler binds both members on the nodes the move freed; the moved
// pods, created again, are bound by kube-scheduler on the nodes explain
// named (as a set: it breaks ties between equal nodes at random).
func TestFragmentationMove(t *testing.T) {
	var nodes []*corev1.Node
	for _, name := range []string{"frag-0", "frag-1", "frag-2", "frag-3"} {
		nodes = append(nodes, testutil.MakeNode().Name(name).Capacity(testutil.Res{"cpu": "32", "memory": "128Gi", "pods": "110", "nvidia.com/gpu": "8"}).Obj())
	}
	ns := "frag-move"
	b := newNativeBed(t, ns, nodes...)
	b.priorityClass("frag-low", 10, corev1.PreemptLowerPriority)
	b.priorityClass("frag-high", 1000, corev1.PreemptLowerPriority)
	b.podGroup("train", 2, "frag-high", false)
	controller := true
	inference := func(name, node string) *corev1.Pod {
		p := testutil.MakePod().Namespace(ns).Name(name).Label("app", "inference").Priority("frag-low", 0).
			Req(testutil.Res{"cpu": "4", "nvidia.com/gpu": "4"}).Node(node).Obj()
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "inference-rs", UID: "7f0c2a8e-0001", Controller: &controller}}
		return p
	}
	var running []*corev1.Pod
	for i, n := range nodes {
		running = append(running, inference("inference-"+string(rune('a'+i)), n.Name))
	}
	gpus := testutil.Res{"cpu": "8", "nvidia.com/gpu": "8"}
	b.create(append(slices.Clone(running),
		b.member("train-0", "train", "8").Priority("frag-high", 0).Req(gpus).Obj(),
		b.member("train-1", "train", "8").Priority("frag-high", 0).Req(gpus).Obj())...)

	var e explainedMoves
	b.gangCLI(&e, "explain", "podgroup/train")
	if len(e.Suggestions) == 0 || e.Suggestions[0].Kind != "Move" || len(e.Suggestions[0].Moves) != 2 {
		t.Fatalf("suggestions %+v, want a move of two pods first", e.Suggestions)
	}
	moves := e.Suggestions[0].Moves
	var from, to []string
	for _, m := range moves {
		from, to = append(from, m.From), append(to, m.To)
	}
	slices.Sort(from)
	slices.Sort(to)

	// The move: the pods go (their ReplicaSet would create them again),
	// then the gang is released.
	for _, m := range moves {
		name := m.Pod[len(ns)+1:]
		if err := b.h.cs.CoreV1().Pods(ns).Delete(b.ctx, name, *metav1.NewDeleteOptions(0)); err != nil {
			t.Fatal(err)
		}
	}
	b.release()
	if bound, failures := b.kubeOutcome("train", 2); bound != 2 {
		t.Fatalf("kube-scheduler bound %d of the gang after the move: %q", bound, failures)
	}
	members := b.nodesOf("train-0", "train-1")
	if !slices.Equal(members, from) {
		t.Errorf("kube-scheduler put the gang on %v, explain freed %v", members, from)
	}
	// The moved pods again, as their ReplicaSet would make them.
	var names []string
	for _, m := range moves {
		name := m.Pod[len(ns)+1:]
		i := slices.IndexFunc(running, func(p *corev1.Pod) bool { return p.Name == name })
		again := running[i].DeepCopy()
		again.Spec.NodeName = ""
		b.create(again)
		names = append(names, name)
	}
	got := b.nodesOf(names...)
	t.Logf("explain moved %v from %v to %v; kube-scheduler put the gang on %v and the moved pods on %v", names, from, to, members, got)
	if !slices.Equal(got, to) {
		t.Errorf("kube-scheduler put the moved pods on %v, explain said %v", got, to)
	}
}

// nodesOf waits until kube-scheduler has bound every named pod, and
// returns their nodes, sorted.
func (b *nativeBed) nodesOf(names ...string) []string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	var out []string
	err := waitFor(ctx, func() (bool, error) {
		out = nil
		for _, name := range names {
			p, err := b.h.cs.CoreV1().Pods(b.ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if p.Spec.NodeName == "" {
				return false, nil
			}
			out = append(out, p.Spec.NodeName)
		}
		return true, nil
	})
	if err != nil {
		b.t.Fatalf("pods %v not bound: %v", names, err)
	}
	slices.Sort(out)
	return out
}
