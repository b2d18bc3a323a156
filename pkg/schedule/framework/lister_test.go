package framework

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ChangedSince lists the nodes ReplaceNode wrote since a mark, each once,
// in order, and refuses a mark of another handle (a fork's) or from before
// SetNodes.
func TestChangedSince(t *testing.T) {
	var nodes []*NodeInfo
	for _, name := range []string{"a", "b", "c", "d"} {
		nodes = append(nodes, NewNodeInfo(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	}
	h := NewSnapshotHandle(slices.Clone(nodes), SnapshotObjects{}, 1)
	start := h.Mark()
	if got, ok := h.ChangedSince(start); !ok || len(got) != 0 {
		t.Errorf("nothing changed: %v, %v", got, ok)
	}
	h.ReplaceNode(3, nodes[3].Clone())
	h.ReplaceNode(1, nodes[1].Clone())
	mid := h.Mark()
	h.ReplaceNode(3, nodes[3].Clone())
	if got, ok := h.ChangedSince(start); !ok || !slices.Equal(got, []int{1, 3}) {
		t.Errorf("since start: %v, %v; want [1 3]", got, ok)
	}
	if got, ok := h.ChangedSince(mid); !ok || !slices.Equal(got, []int{3}) {
		t.Errorf("since mid: %v, %v; want [3]", got, ok)
	}
	fork := h.Fork(slices.Clone(h.List()), 1)
	if _, ok := fork.ChangedSince(mid); ok {
		t.Error("a fork took its parent's mark")
	}
	h.SetNodes(nodes)
	if _, ok := h.ChangedSince(mid); ok {
		t.Error("a mark from before SetNodes was taken")
	}
}
