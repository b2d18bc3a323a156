package interpodaffinity

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

func TestPreFilterStateClone(t *testing.T) {
	s := &preFilterState{
		existingAntiAffinityCounts: topologyToMatchedTermCount{{key: "name", value: "node1"}: 1},
		existingAntiAffinityKeys:   []string{"name"},
		affinityCounts:             topologyToMatchedTermCount{{key: "name", value: "nodeA"}: 1, {key: "name", value: "nodeC"}: 2},
		antiAffinityCounts:         topologyToMatchedTermCount{{key: "name", value: "nodeN"}: 3},
	}
	c := s.Clone().(*preFilterState)
	for _, m := range []struct{ want, got topologyToMatchedTermCount }{
		{s.existingAntiAffinityCounts, c.existingAntiAffinityCounts},
		{s.affinityCounts, c.affinityCounts},
		{s.antiAffinityCounts, c.antiAffinityCounts},
	} {
		if diff := cmp.Diff(flatten(m.want), flatten(m.got)); diff != "" {
			t.Fatalf("clone differs (-want +got):\n%s", diff)
		}
	}
	on := func(v string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{"name": v}}}
	}
	c.existingAntiAffinityCounts.update(on("node1"), "name", 1)
	c.affinityCounts.update(on("nodeA"), "name", -1)
	c.existingAntiAffinityKeys[0] = "other"
	if s.existingAntiAffinityCounts[topologyPair{"name", "node1"}] != 1 || s.affinityCounts[topologyPair{"name", "nodeA"}] != 1 || s.existingAntiAffinityKeys[0] != "name" {
		t.Errorf("changing the clone changed the original: %+v", s)
	}
	if _, ok := c.affinityCounts[topologyPair{"name", "nodeA"}]; ok {
		t.Errorf("a count that reaches zero must be dropped")
	}
	c.affinityCounts.update(&corev1.Node{}, "name", 5)
	if len(c.affinityCounts) != 1 {
		t.Errorf("a node without the topology key must not be counted: %v", c.affinityCounts)
	}
}

func TestNormalizeScoreWithNothingScored(t *testing.T) {
	cs := framework.NewCycleState()
	cs.Write(preScoreStateKey, &preScoreState{topologyScore: map[topologyPair]int64{}})
	list := framework.NodeScoreList{{Name: "a", Score: 7}, {Name: "b", Score: 3}}
	if st := (&InterPodAffinity{}).NormalizeScore(context.Background(), cs, &corev1.Pod{}, list); !st.IsSuccess() {
		t.Fatal(st)
	}
	if diff := cmp.Diff(framework.NodeScoreList{{Name: "a", Score: 7}, {Name: "b", Score: 3}}, list); diff != "" {
		t.Errorf("scores changed (-want +got):\n%s", diff)
	}
}

func TestNormalizeScoreArithmetic(t *testing.T) {
	cs := framework.NewCycleState()
	cs.Write(preScoreStateKey, &preScoreState{topologyScore: map[topologyPair]int64{{"k", "v"}: 1}})
	tests := []struct{ in, want []int64 }{
		{in: []int64{-7, 3, 0, 10}, want: []int64{0, 58, 41, 100}},
		{in: []int64{0, 29, 100}, want: []int64{0, 28, 100}}, // 100 * 0.29 = 28.999999999999996
		{in: []int64{5, 5, 5}, want: []int64{0, 0, 0}},
		{in: []int64{-3}, want: []int64{0}},
		{in: nil, want: nil},
	}
	for _, tc := range tests {
		var list framework.NodeScoreList
		for i, s := range tc.in {
			list = append(list, framework.NodeScore{Name: string(rune('a' + i)), Score: s})
		}
		if st := (&InterPodAffinity{}).NormalizeScore(context.Background(), cs, &corev1.Pod{}, list); !st.IsSuccess() {
			t.Fatal(st)
		}
		var got []int64
		for _, s := range list {
			got = append(got, s.Score)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("NormalizeScore(%v) (-want +got):\n%s", tc.in, diff)
		}
	}
}
