package podtopologyspread

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const hostname = corev1.LabelHostname

// Cases from kube-scheduler's TestPreScoreSkip.
func TestPreScoreSkip(t *testing.T) {
	tests := []struct {
		name     string
		pod      *corev1.Pod
		nodes    []*corev1.Node
		args     *configv1.PodTopologySpreadArgs
		services []map[string]string
	}{
		{
			name:  "the pod doesn't have soft topology spread Constraints",
			pod:   pod("p").Obj(),
			args:  listArgs,
			nodes: []*corev1.Node{node("node-a", hostname, "node-a").Obj(), node("node-b", hostname, "node-b").Obj()},
		},
		{
			name: "default constraints and a workload that doesn't match",
			pod:  pod("p", "foo", "bar", "baz", "sup").Obj(),
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 2, TopologyKey: "planet", WhenUnsatisfiable: sa},
			}},
			services: []map[string]string{{"tar": ""}},
			nodes:    []*corev1.Node{node("node-a", "planet", "mars").Obj()},
		},
		{
			name:  "system defaults without workload objects",
			pod:   pod("p", "foo", "bar").Obj(),
			args:  systemArgs,
			nodes: []*corev1.Node{node("node-a", hostname, "node-a").Obj()},
		},
		{
			name: "no nodes",
			pod:  pod("p", "foo", "").SpreadConstraint(1, "zone", sa, fooSelector, nil, nil, nil, nil).Obj(),
			args: listArgs,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.args, tt.nodes, nil, tt.services...)
			if s := f.pl.PreScore(context.Background(), framework.NewCycleState(), tt.pod, f.handle.List()); !s.IsSkip() {
				t.Errorf("PreScore = %v, want Skip", s)
			}
		})
	}
}

// scoreView is the PreScore state in comparable form.
type scoreView struct {
	Constraints               []constraintView
	IgnoredNodes              []string
	TopologyValueToPodCounts  []map[string]int64
	TopologyNormalizingWeight []float64
}

// Cases from kube-scheduler's TestPreScoreStateEmptyNodes.
func TestPreScoreState(t *testing.T) {
	tests := []struct {
		name     string
		pod      *corev1.Pod
		nodes    []*corev1.Node
		args     *configv1.PodTopologySpreadArgs
		services []map[string]string
		want     scoreView
	}{
		{
			name: "normal case",
			pod: pod("p", "foo", "").
				SpreadConstraint(1, "zone", sa, fooSelector, nil, nil, nil, nil).
				SpreadConstraint(1, hostname, sa, fooSelector, nil, nil, nil, nil).Obj(),
			nodes: []*corev1.Node{
				node("node-a", "zone", "zone1", hostname, "node-a").Obj(),
				node("node-b", "zone", "zone1", hostname, "node-b").Obj(),
				node("node-x", "zone", "zone2", hostname, "node-x").Obj(),
			},
			want: scoreView{
				Constraints:               []constraintView{tsc(1, "zone", "foo"), tsc(1, hostname, "foo")},
				TopologyValueToPodCounts:  []map[string]int64{{"zone1": 0, "zone2": 0}, {}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(2), topologyNormalizingWeight(3)},
			},
		},
		{
			name: "null selector",
			pod:  pod("p", "foo", "").SpreadConstraint(1, "zone", sa, nil, nil, nil, nil, nil).Obj(),
			nodes: []*corev1.Node{
				node("node-a", "zone", "zone1", hostname, "node-a").Obj(),
				node("node-b", "zone", "zone1", hostname, "node-b").Obj(),
				node("node-x", "zone", "zone2", hostname, "node-x").Obj(),
			},
			want: scoreView{
				Constraints:               []constraintView{tsc(1, "zone", "<nothing>")},
				TopologyValueToPodCounts:  []map[string]int64{{"zone1": 0, "zone2": 0}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(2)},
			},
		},
		{
			name: "node-x doesn't have label zone",
			pod: pod("p", "foo", "").
				SpreadConstraint(1, "zone", sa, fooSelector, nil, nil, nil, nil).
				SpreadConstraint(1, hostname, sa, barSelector, nil, nil, nil, nil).Obj(),
			nodes: []*corev1.Node{
				node("node-a", "zone", "zone1", hostname, "node-a").Obj(),
				node("node-b", "zone", "zone1", hostname, "node-b").Obj(),
				node("node-x", hostname, "node-x").Obj(),
			},
			want: scoreView{
				Constraints:               []constraintView{tsc(1, "zone", "foo"), tsc(1, hostname, "bar")},
				IgnoredNodes:              []string{"node-x"},
				TopologyValueToPodCounts:  []map[string]int64{{"zone1": 0}, {}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(1), topologyNormalizingWeight(2)},
			},
		},
		{
			name: "system default constraints and a replicaset",
			pod:  pod("p", "foo", "tar", "baz", "sup").Obj(),
			args: systemArgs,
			nodes: []*corev1.Node{
				node("node-a", hostname, "node-a", corev1.LabelTopologyZone, "mars").Obj(),
				node("node-b", hostname, "node-b", corev1.LabelTopologyZone, "mars").Obj(),
				// Nodes with no zone are not excluded: they form the "" zone.
				node("node-c", hostname, "node-c").Obj(),
				node("node-d", hostname, "node-d").Obj(),
			},
			services: []map[string]string{{"foo": "tar"}},
			want: scoreView{
				Constraints:               []constraintView{tsc(3, hostname, "foo=tar"), tsc(5, corev1.LabelTopologyZone, "foo=tar")},
				TopologyValueToPodCounts:  []map[string]int64{{}, {"mars": 0, "": 0}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(4), topologyNormalizingWeight(2)},
			},
		},
		{
			name: "default constraints and a replicaset",
			pod:  pod("p", "foo", "tar", "baz", "sup").Obj(),
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 1, TopologyKey: hostname, WhenUnsatisfiable: sa},
				{MaxSkew: 2, TopologyKey: "rack", WhenUnsatisfiable: dns},
				{MaxSkew: 2, TopologyKey: "planet", WhenUnsatisfiable: sa},
			}},
			nodes:    []*corev1.Node{node("node-a", "rack", "rack1", hostname, "node-a", "planet", "mars").Obj()},
			services: []map[string]string{{"foo": "tar"}},
			want: scoreView{
				Constraints:               []constraintView{tsc(1, hostname, "foo=tar"), tsc(2, "planet", "foo=tar")},
				TopologyValueToPodCounts:  []map[string]int64{{}, {"mars": 0}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(1), topologyNormalizingWeight(1)},
			},
		},
		{
			name: "default constraints and a replicaset, but pod has constraints",
			pod: pod("p", "foo", "bar", "baz", "sup").
				SpreadConstraint(1, "zone", dns, barSelector, nil, nil, nil, nil).
				SpreadConstraint(2, "planet", sa, matchLabels("baz", "sup"), nil, nil, nil, nil).Obj(),
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 2, TopologyKey: "galaxy", WhenUnsatisfiable: sa},
			}},
			nodes:    []*corev1.Node{node("node-a", "planet", "mars", "galaxy", "andromeda").Obj()},
			services: []map[string]string{{"foo": "bar"}},
			want: scoreView{
				Constraints:               []constraintView{tsc(2, "planet", "baz=sup")},
				TopologyValueToPodCounts:  []map[string]int64{{"mars": 0}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(1)},
			},
		},
		{
			// Domains come from the feasible nodes whatever the policies.
			name: "NodeAffinityPolicy honored with labelSelectors",
			pod: withNodeSelector(pod("p", "foo", "").SpreadConstraint(1, "zone", sa, barSelector, nil, nil, nil, nil).Obj(),
				map[string]string{"foo": ""}),
			nodes: []*corev1.Node{
				node("node-a", "zone", "zone1", "foo", "", hostname, "node-a").Obj(),
				node("node-b", "zone", "zone1", "foo", "", hostname, "node-b").Obj(),
				node("node-x", "zone", "zone2", hostname, "node-x").Obj(),
			},
			want: scoreView{
				Constraints:               []constraintView{tsc(1, "zone", "bar")},
				TopologyValueToPodCounts:  []map[string]int64{{"zone1": 0, "zone2": 0}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(2)},
			},
		},
		{
			name: "NodeTaintsPolicy honored",
			pod:  pod("p", "foo", "").SpreadConstraint(1, "zone", sa, barSelector, nil, nil, &honorPolicy, nil).Obj(),
			nodes: []*corev1.Node{
				node("node-a", "zone", "zone1", "foo", "", hostname, "node-a").Obj(),
				node("node-b", "zone", "zone1", "foo", "", hostname, "node-b").Obj(),
				withUnschedulableTaint(node("node-x", "zone", "zone2", hostname, "node-x")).Obj(),
			},
			want: scoreView{
				Constraints:               []constraintView{tsc(1, "zone", "bar").taints(honorPolicy)},
				TopologyValueToPodCounts:  []map[string]int64{{"zone1": 0, "zone2": 0}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(2)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if args == nil {
				args = listArgs
			}
			f := newFixture(t, args, tt.nodes, nil, tt.services...)
			state := framework.NewCycleState()
			if s := f.pl.PreScore(context.Background(), state, tt.pod, f.handle.List()); !s.IsSuccess() {
				t.Fatalf("PreScore = %v", s)
			}
			s, err := getPreScoreState(state)
			if err != nil {
				t.Fatal(err)
			}
			got := scoreView{
				Constraints:               viewConstraints(s.constraints),
				IgnoredNodes:              sortedList(s.ignoredNodes.UnsortedList()),
				TopologyValueToPodCounts:  feasibleCounts(s),
				TopologyNormalizingWeight: s.topologyNormalizingWeight,
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PreScore state (-want +got):\n%s", diff)
			}
		})
	}
}

func sortedList(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	for i := 1; i < len(in); i++ {
		for j := i; j > 0 && in[j] < in[j-1]; j-- {
			in[j], in[j-1] = in[j-1], in[j]
		}
	}
	return in
}

type scoreCase struct {
	name         string
	pod          *corev1.Pod
	existingPods []*corev1.Pod
	nodes        []*corev1.Node
	failedNodes  []*corev1.Node // nodes + failedNodes = all nodes
	args         runtime.Object
	services     []map[string]string
	want         framework.NodeScoreList
}

// Cases from kube-scheduler's TestPodTopologySpreadScore (which runs with
// defaultingType System), with the expected normalized scores it states.
// The arithmetic of one case, "one constraint on node, all 4 nodes are
// candidates" (2/1/0/3 pods, maxSkew 1): weight log(4+2) = 1.792, raw
// scores round(2w) = 4, round(w) = 2, 0, round(3w) = 5; normalized
// 100*(5+0-s)/5 = 20, 60, 100, 0.
func TestScore(t *testing.T) {
	hostnameNodes := func(names ...string) []*corev1.Node {
		var out []*corev1.Node
		for _, n := range names {
			out = append(out, node(n, hostname, n).Obj())
		}
		return out
	}
	spread4321 := []*corev1.Pod{
		pod("p-a1", "foo", "").Node("node-a").Obj(), pod("p-a2", "foo", "").Node("node-a").Obj(),
		pod("p-a3", "foo", "").Node("node-a").Obj(), pod("p-a4", "foo", "").Node("node-a").Obj(),
		pod("p-b1", "foo", "").Node("node-b").Obj(), pod("p-b2", "foo", "").Node("node-b").Obj(),
		pod("p-b3", "foo", "").Node("node-b").Obj(),
		pod("p-c1", "foo", "").Node("node-c").Obj(), pod("p-c2", "foo", "").Node("node-c").Obj(),
		pod("p-d1", "foo", "").Node("node-d").Obj(),
	}
	spread2103 := []*corev1.Pod{
		pod("p-a1", "foo", "").Node("node-a").Obj(), pod("p-a2", "foo", "").Node("node-a").Obj(),
		pod("p-b1", "foo", "").Node("node-b").Obj(),
		pod("p-d1", "foo", "").Node("node-d").Obj(), pod("p-d2", "foo", "").Node("node-d").Obj(),
		pod("p-d3", "foo", "").Node("node-d").Obj(),
	}
	spread4213 := []*corev1.Pod{
		pod("p-a1", "foo", "").Node("node-a").Obj(), pod("p-a2", "foo", "").Node("node-a").Obj(),
		pod("p-a3", "foo", "").Node("node-a").Obj(), pod("p-a4", "foo", "").Node("node-a").Obj(),
		pod("p-b1", "foo", "").Node("node-b").Obj(), pod("p-b2", "foo", "").Node("node-b").Obj(),
		pod("p-x1", "foo", "").Node("node-x").Obj(),
		pod("p-y1", "foo", "").Node("node-y").Obj(), pod("p-y2", "foo", "").Node("node-y").Obj(),
		pod("p-y3", "foo", "").Node("node-y").Obj(),
	}
	policyPods := []*corev1.Pod{
		pod("p-a1", "foo", "").Node("node-a").Obj(), pod("p-a2", "foo", "").Node("node-a").Obj(),
		pod("p-b1", "foo", "").Node("node-b").Obj(),
		pod("p-c1", "foo", "").Node("node-c").Obj(),
	}
	policyNodes := func() []*corev1.Node {
		return []*corev1.Node{
			node("node-a", "node", "node-a", "foo", "").Obj(),
			node("node-b", "node", "node-b", "foo", "").Obj(),
			node("node-c", "node", "node-c").Obj(),
		}
	}
	differentSelectorPods := []*corev1.Pod{
		pod("p-a1", "foo", "").Node("node-a").Obj(),
		pod("p-b1", "foo", "", "bar", "").Node("node-b").Obj(),
		pod("p-y1", "foo", "").Node("node-y").Obj(),
		pod("p-y2", "bar", "").Node("node-y").Obj(),
	}
	zoneHostNodes := func(names ...string) []*corev1.Node {
		zones := map[string]string{"node-a": "zone1", "node-b": "zone1", "node-c": "zone2", "node-d": "zone2", "node-x": "zone2", "node-y": "zone2"}
		var out []*corev1.Node
		for _, n := range names {
			out = append(out, node(n, "zone", zones[n], hostname, n).Obj())
		}
		return out
	}
	tests := []scoreCase{
		{
			name:  "one constraint on node, no existing pods",
			pod:   pod("p", "foo", "").SpreadConstraint(1, hostname, sa, fooSelector, nil, nil, nil, nil).Obj(),
			nodes: hostnameNodes("node-a", "node-b"),
			want:  framework.NodeScoreList{{Name: "node-a", Score: 100}, {Name: "node-b", Score: 100}},
		},
		{
			name: "one constraint on node, only one node is candidate",
			pod:  pod("p", "foo", "").SpreadConstraint(1, hostname, sa, fooSelector, nil, nil, nil, nil).Obj(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(), pod("p-a2", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
			},
			nodes:       hostnameNodes("node-a"),
			failedNodes: hostnameNodes("node-b"),
			want:        framework.NodeScoreList{{Name: "node-a", Score: 100}},
		},
		{
			name:         "one constraint on node, all nodes have the same number of matching pods",
			pod:          pod("p", "foo", "").SpreadConstraint(1, hostname, sa, fooSelector, nil, nil, nil, nil).Obj(),
			existingPods: []*corev1.Pod{pod("p-a1", "foo", "").Node("node-a").Obj(), pod("p-b1", "foo", "").Node("node-b").Obj()},
			nodes:        hostnameNodes("node-a", "node-b"),
			want:         framework.NodeScoreList{{Name: "node-a", Score: 100}, {Name: "node-b", Score: 100}},
		},
		{
			name:         "one constraint on node, all 4 nodes are candidates",
			pod:          pod("p", "foo", "").SpreadConstraint(1, hostname, sa, fooSelector, nil, nil, nil, nil).Obj(),
			existingPods: spread2103,
			nodes:        hostnameNodes("node-a", "node-b", "node-c", "node-d"),
			want: framework.NodeScoreList{
				{Name: "node-a", Score: 20}, {Name: "node-b", Score: 60}, {Name: "node-c", Score: 100}, {Name: "node-d", Score: 0},
			},
		},
		{
			name:         "one constraint on node, null selector",
			pod:          pod("p", "foo", "").SpreadConstraint(1, hostname, sa, nil, nil, nil, nil, nil).Obj(),
			existingPods: spread2103,
			nodes:        hostnameNodes("node-a", "node-b", "node-c", "node-d"),
			want: framework.NodeScoreList{
				{Name: "node-a", Score: 100}, {Name: "node-b", Score: 100}, {Name: "node-c", Score: 100}, {Name: "node-d", Score: 100},
			},
		},
		{
			name:         "one constraint on node, all 4 nodes are candidates, maxSkew=2",
			pod:          pod("p", "foo", "").SpreadConstraint(2, hostname, sa, fooSelector, nil, nil, nil, nil).Obj(),
			existingPods: spread2103,
			nodes:        hostnameNodes("node-a", "node-b", "node-c", "node-d"),
			want: framework.NodeScoreList{
				{Name: "node-a", Score: 33}, {Name: "node-b", Score: 66}, {Name: "node-c", Score: 100}, {Name: "node-d", Score: 16},
			},
		},
		{
			name:         "one constraint on node, all 4 nodes are candidates, maxSkew=3",
			pod:          pod("p", "foo", "").SpreadConstraint(3, hostname, sa, fooSelector, nil, nil, nil, nil).Obj(),
			existingPods: spread4321,
			nodes:        hostnameNodes("node-a", "node-b", "node-c", "node-d"),
			want: framework.NodeScoreList{
				{Name: "node-a", Score: 44}, {Name: "node-b", Score: 66}, {Name: "node-c", Score: 77}, {Name: "node-d", Score: 100},
			},
		},
		{
			name:         "system defaulting, nodes don't have zone, pods match service",
			pod:          pod("p", "foo", "").Obj(),
			existingPods: spread4321,
			nodes:        hostnameNodes("node-a", "node-b", "node-c", "node-d"),
			services:     []map[string]string{{"foo": ""}},
			want: framework.NodeScoreList{
				{Name: "node-a", Score: 44}, {Name: "node-b", Score: 66}, {Name: "node-c", Score: 77}, {Name: "node-d", Score: 100},
			},
		},
		{
			name:         "one constraint on node, 3 out of 4 nodes are candidates",
			pod:          pod("p", "foo", "").SpreadConstraint(1, hostname, sa, fooSelector, nil, nil, nil, nil).Obj(),
			existingPods: spread4213,
			nodes:        hostnameNodes("node-a", "node-b", "node-x"),
			failedNodes:  hostnameNodes("node-y"),
			want:         framework.NodeScoreList{{Name: "node-a", Score: 33}, {Name: "node-b", Score: 83}, {Name: "node-x", Score: 100}},
		},
		{
			name:         "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
			pod:          pod("p", "foo", "").SpreadConstraint(1, hostname, sa, fooSelector, nil, nil, nil, nil).Obj(),
			existingPods: spread4213,
			nodes:        []*corev1.Node{node("node-a", hostname, "node-a").Obj(), node("node-b", "n", "node-b").Obj(), node("node-x", hostname, "node-x").Obj()},
			failedNodes:  hostnameNodes("node-y"),
			want:         framework.NodeScoreList{{Name: "node-a", Score: 16}, {Name: "node-b", Score: 0}, {Name: "node-x", Score: 100}},
		},
		{
			name:         "one constraint on zone, 3 out of 4 nodes are candidates",
			pod:          pod("p", "foo", "").SpreadConstraint(1, "zone", sa, fooSelector, nil, nil, nil, nil).Obj(),
			existingPods: spread4213,
			nodes:        zoneHostNodes("node-a", "node-b", "node-x"),
			failedNodes:  zoneHostNodes("node-y"),
			want:         framework.NodeScoreList{{Name: "node-a", Score: 75}, {Name: "node-b", Score: 75}, {Name: "node-x", Score: 100}},
		},
		{
			name: "two Constraints on zone and node, 2 out of 4 nodes are candidates",
			pod: pod("p", "foo", "").
				SpreadConstraint(1, "zone", sa, fooSelector, nil, nil, nil, nil).
				SpreadConstraint(1, hostname, sa, fooSelector, nil, nil, nil, nil).Obj(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(), pod("p-a2", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-x1", "foo", "").Node("node-x").Obj(), pod("p-x2", "foo", "").Node("node-x").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(), pod("p-y2", "foo", "").Node("node-y").Obj(),
				pod("p-y3", "foo", "").Node("node-y").Obj(), pod("p-y4", "foo", "").Node("node-y").Obj(),
			},
			nodes:       zoneHostNodes("node-a", "node-x"),
			failedNodes: zoneHostNodes("node-b", "node-y"),
			want:        framework.NodeScoreList{{Name: "node-a", Score: 100}, {Name: "node-x", Score: 63}},
		},
		{
			name: "two Constraints on zone, 2 out of 4 nodes are candidates",
			pod: pod("p", "foo", "", "bar", "").
				SpreadConstraint(1, "zone", sa, fooSelector, nil, nil, nil, nil).
				SpreadConstraint(1, "zone", sa, barSelector, nil, nil, nil, nil).Obj(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "", "bar", "").Node("node-a").Obj(), pod("p-a2", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "", "bar", "").Node("node-b").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(), pod("p-y2", "foo", "", "bar", "").Node("node-y").Obj(),
				pod("p-y3", "foo", "").Node("node-y").Obj(),
			},
			nodes:       []*corev1.Node{node("node-a", "zone", "zone1").Obj(), node("node-x", "zone", "zone2").Obj()},
			failedNodes: []*corev1.Node{node("node-b", "zone", "zone1").Obj(), node("node-y", "zone", "zone2").Obj()},
			want:        framework.NodeScoreList{{Name: "node-a", Score: 85}, {Name: "node-x", Score: 100}},
		},
		{
			name: "two Constraints on zone and node, with different labelSelectors",
			pod: pod("p", "foo", "", "bar", "").
				SpreadConstraint(1, "zone", sa, fooSelector, nil, nil, nil, nil).
				SpreadConstraint(1, hostname, sa, barSelector, nil, nil, nil, nil).Obj(),
			existingPods: differentSelectorPods,
			nodes:        zoneHostNodes("node-a", "node-b", "node-x", "node-y"),
			want: framework.NodeScoreList{
				{Name: "node-a", Score: 60}, {Name: "node-b", Score: 20}, {Name: "node-x", Score: 100}, {Name: "node-y", Score: 60},
			},
		},
		{
			name: "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
			pod: pod("p", "foo", "", "bar", "").
				SpreadConstraint(1, "zone", sa, fooSelector, nil, nil, nil, nil).
				SpreadConstraint(1, hostname, sa, barSelector, nil, nil, nil, nil).Obj(),
			existingPods: []*corev1.Pod{
				pod("p-b1", "bar", "").Node("node-b").Obj(),
				pod("p-x1", "foo", "").Node("node-x").Obj(),
				pod("p-y1", "foo", "", "bar", "").Node("node-y").Obj(),
			},
			nodes: zoneHostNodes("node-a", "node-b", "node-x", "node-y"),
			want: framework.NodeScoreList{
				{Name: "node-a", Score: 100}, {Name: "node-b", Score: 60}, {Name: "node-x", Score: 40}, {Name: "node-y", Score: 0},
			},
		},
		{
			name: "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
			pod: pod("p", "foo", "", "bar", "").
				SpreadConstraint(1, "zone", sa, fooSelector, nil, nil, nil, nil).
				SpreadConstraint(1, hostname, sa, barSelector, nil, nil, nil, nil).Obj(),
			existingPods: differentSelectorPods,
			nodes:        zoneHostNodes("node-a", "node-b", "node-x"),
			failedNodes:  zoneHostNodes("node-y"),
			want:         framework.NodeScoreList{{Name: "node-a", Score: 50}, {Name: "node-b", Score: 25}, {Name: "node-x", Score: 100}},
		},
		{
			name: "existing pods in a different namespace do not count",
			pod:  pod("p", "foo", "").SpreadConstraint(1, hostname, sa, fooSelector, nil, nil, nil, nil).Obj(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Namespace("ns1").Node("node-a").Obj(),
				pod("p-a2", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-b2", "foo", "").Node("node-b").Obj(),
			},
			nodes: hostnameNodes("node-a", "node-b"),
			want:  framework.NodeScoreList{{Name: "node-a", Score: 100}, {Name: "node-b", Score: 33}},
		},
		{
			name: "terminating Pods should be excluded",
			pod:  pod("p", "foo", "").SpreadConstraint(1, hostname, sa, fooSelector, nil, nil, nil, nil).Obj(),
			existingPods: []*corev1.Pod{
				terminating(pod("p-a", "foo", "").Node("node-a").Obj()),
				pod("p-b", "foo", "").Node("node-b").Obj(),
			},
			nodes: hostnameNodes("node-a", "node-b"),
			want:  framework.NodeScoreList{{Name: "node-a", Score: 100}, {Name: "node-b", Score: 0}},
		},
		{
			name: "minDomains has no effect when ScheduleAnyway",
			pod:  pod("p", "foo", "").SpreadConstraint(2, "node", sa, fooSelector, ptrTo[int32](10), nil, nil, nil).Obj(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(), pod("p-a2", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(), pod("p-b2", "foo", "").Node("node-b").Obj(),
				pod("p-c1", "foo", "").Node("node-c").Obj(),
			},
			nodes: []*corev1.Node{node("node-a", "node", "node-a").Obj(), node("node-b", "node", "node-b").Obj(), node("node-c", "node", "node-c").Obj()},
			want:  framework.NodeScoreList{{Name: "node-a", Score: 75}, {Name: "node-b", Score: 75}, {Name: "node-c", Score: 100}},
		},
		{
			name: "NodeAffinityPolicy honored with labelSelectors",
			pod: withNodeSelector(pod("p", "foo", "").SpreadConstraint(1, "node", sa, fooSelector, nil, nil, nil, nil).Obj(),
				map[string]string{"foo": ""}),
			existingPods: policyPods,
			nodes:        policyNodes(),
			want:         framework.NodeScoreList{{Name: "node-a", Score: 0}, {Name: "node-b", Score: 33}, {Name: "node-c", Score: 100}},
		},
		{
			name: "NodeAffinityPolicy ignored with labelSelectors",
			pod: withNodeSelector(pod("p", "foo", "").SpreadConstraint(1, "node", sa, fooSelector, nil, &ignorePolicy, nil, nil).Obj(),
				map[string]string{"foo": ""}),
			existingPods: policyPods,
			nodes:        policyNodes(),
			want:         framework.NodeScoreList{{Name: "node-a", Score: 66}, {Name: "node-b", Score: 100}, {Name: "node-c", Score: 100}},
		},
		{
			name: "NodeAffinityPolicy honored with nodeAffinity",
			pod: withNodeAffinity(pod("p", "foo", "").SpreadConstraint(1, "node", sa, fooSelector, nil, nil, nil, nil).Obj(),
				"foo", corev1.NodeSelectorOpIn, ""),
			existingPods: policyPods,
			nodes:        policyNodes(),
			want:         framework.NodeScoreList{{Name: "node-a", Score: 0}, {Name: "node-b", Score: 33}, {Name: "node-c", Score: 100}},
		},
		{
			name: "NodeAffinityPolicy ignored with nodeAffinity",
			pod: withNodeAffinity(pod("p", "foo", "").SpreadConstraint(1, "node", sa, fooSelector, nil, &ignorePolicy, nil, nil).Obj(),
				"foo", corev1.NodeSelectorOpIn, ""),
			existingPods: policyPods,
			nodes:        policyNodes(),
			want:         framework.NodeScoreList{{Name: "node-a", Score: 66}, {Name: "node-b", Score: 100}, {Name: "node-c", Score: 100}},
		},
		{
			name:         "NodeTaintsPolicy honored",
			pod:          pod("p", "foo", "").SpreadConstraint(1, "node", sa, fooSelector, nil, nil, &honorPolicy, nil).Obj(),
			existingPods: policyPods,
			nodes: []*corev1.Node{
				node("node-a", "node", "node-a").Obj(), node("node-b", "node", "node-b").Obj(),
				withUnschedulableTaint(node("node-c", "node", "node-c")).Obj(),
			},
			want: framework.NodeScoreList{{Name: "node-a", Score: 0}, {Name: "node-b", Score: 33}, {Name: "node-c", Score: 100}},
		},
		{
			name:         "NodeTaintsPolicy ignored",
			pod:          pod("p", "foo", "").SpreadConstraint(1, "node", sa, fooSelector, nil, nil, nil, nil).Obj(),
			existingPods: policyPods,
			nodes: []*corev1.Node{
				node("node-a", "node", "node-a").Obj(), node("node-b", "node", "node-b").Obj(),
				withUnschedulableTaint(node("node-c", "node", "node-c")).Obj(),
			},
			want: framework.NodeScoreList{{Name: "node-a", Score: 66}, {Name: "node-b", Score: 100}, {Name: "node-c", Score: 100}},
		},
		{
			name: "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
			pod: pod("p", "foo", "", "bar", "").
				SpreadConstraint(1, "zone", sa, exists(), nil, nil, nil, []string{"foo"}).
				SpreadConstraint(1, hostname, sa, exists(), nil, nil, nil, []string{"bar"}).Obj(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "", "bar", "").Node("node-b").Obj(),
				pod("p-y1", "foo", "").Node("node-c").Obj(),
				pod("p-y2", "bar", "").Node("node-c").Obj(),
			},
			nodes: zoneHostNodes("node-a", "node-b", "node-c", "node-d"),
			want: framework.NodeScoreList{
				{Name: "node-a", Score: 60}, {Name: "node-b", Score: 20}, {Name: "node-c", Score: 60}, {Name: "node-d", Score: 100},
			},
		},
		{
			name: "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
			pod: pod("p", "foo", "", "bar", "", "baz", "").
				SpreadConstraint(1, "zone", sa, fooSelector, nil, nil, nil, nil).
				SpreadConstraint(1, hostname, sa, barSelector, nil, nil, nil, []string{"baz"}).Obj(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "", "bar", "", "baz", "").Node("node-b").Obj(),
				pod("p-c1", "foo", "").Node("node-c").Obj(),
				pod("p-c2", "bar", "").Node("node-c").Obj(),
				pod("p-d3", "bar", "", "baz", "").Node("node-c").Obj(),
			},
			nodes: zoneHostNodes("node-a", "node-b", "node-c", "node-d"),
			want: framework.NodeScoreList{
				{Name: "node-a", Score: 60}, {Name: "node-b", Score: 20}, {Name: "node-c", Score: 60}, {Name: "node-d", Score: 100},
			},
		},
		{
			// No Services or controllers in the snapshot: the system
			// defaults have no selector and the plugin skips scoring.
			name:         "system defaulting without workload objects",
			pod:          pod("p", "foo", "").Obj(),
			existingPods: spread4321,
			nodes:        hostnameNodes("node-a", "node-b"),
			want:         nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if args == nil {
				args = systemArgs
			}
			all := append(append([]*corev1.Node{}, tt.nodes...), tt.failedNodes...)
			f := newFixture(t, args, all, tt.existingPods, tt.services...)
			state := framework.NewCycleState()
			feasible := f.nodeInfos(t, tt.nodes)
			status := f.pl.PreScore(context.Background(), state, tt.pod, feasible)
			if status.IsSkip() {
				if tt.want != nil {
					t.Fatalf("PreScore = Skip, want scores")
				}
				return
			}
			if !status.IsSuccess() {
				t.Fatalf("PreScore = %v", status)
			}
			var got framework.NodeScoreList
			for _, ni := range feasible {
				score, s := f.pl.Score(context.Background(), state, tt.pod, ni)
				if !s.IsSuccess() {
					t.Fatalf("Score(%s) = %v", ni.Name(), s)
				}
				got = append(got, framework.NodeScore{Name: ni.Name(), Score: score})
			}
			if s := f.pl.NormalizeScore(context.Background(), state, tt.pod, got); !s.IsSuccess() {
				t.Fatalf("NormalizeScore = %v", s)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

// Raw scores before normalization, for the formula's branches: hostname
// counts come from the node's own pods, other keys from the domain counts,
// maxSkew-1 is added per constraint, and the sum is rounded half away from
// zero.
func TestRawScore(t *testing.T) {
	nodes := []*corev1.Node{
		node("node-a", "zone", "zone1", hostname, "node-a").Obj(),
		node("node-b", "zone", "zone1", hostname, "node-b").Obj(),
		node("node-x", "zone", "zone2", hostname, "node-x").Obj(),
	}
	pods := []*corev1.Pod{
		pod("p-a1", "foo", "").Node("node-a").Obj(),
		pod("p-a2", "foo", "").Node("node-a").Obj(),
		pod("p-b1", "foo", "").Node("node-b").Obj(),
	}
	p := pod("p", "foo", "").
		SpreadConstraint(2, "zone", sa, fooSelector, nil, nil, nil, nil).
		SpreadConstraint(1, hostname, sa, fooSelector, nil, nil, nil, nil).Obj()
	f := newFixture(t, listArgs, nodes, pods)
	state := framework.NewCycleState()
	if s := f.pl.PreScore(context.Background(), state, p, f.handle.List()); !s.IsSuccess() {
		t.Fatal(s)
	}
	// Weights: zone log(2+2) = 1.386, hostname log(3+2) = 1.609. zone1
	// holds 3 matching pods, zone2 none; maxSkew 2 adds 1 for the zone.
	want := map[string]int64{
		"node-a": 8, // 3*1.386 + 1 + 2*1.609 = 8.38
		"node-b": 7, // 3*1.386 + 1 + 1*1.609 = 6.77
		"node-x": 1, // 0 + 1 + 0
	}
	for name, w := range want {
		got, s := f.pl.Score(context.Background(), state, p, f.nodeInfo(t, name))
		if !s.IsSuccess() || got != w {
			t.Errorf("Score(%s) = %d, %v; want %d", name, got, s, w)
		}
	}
}

func TestNormalizeScore(t *testing.T) {
	state := framework.NewCycleState()
	state.Write(preScoreStateKey, &preScoreState{ignoredNodes: sets.New("ignored")})
	pl := &PodTopologySpread{}
	tests := []struct {
		name string
		in   framework.NodeScoreList
		want framework.NodeScoreList
	}{
		{
			name: "fewest pods score highest, integer division",
			in:   framework.NodeScoreList{{Name: "a", Score: 4}, {Name: "b", Score: 2}, {Name: "c", Score: 0}, {Name: "d", Score: 5}},
			want: framework.NodeScoreList{{Name: "a", Score: 20}, {Name: "b", Score: 60}, {Name: "c", Score: 100}, {Name: "d", Score: 0}},
		},
		{
			name: "min is added back: 100*(7+3-s)/7",
			in:   framework.NodeScoreList{{Name: "a", Score: 3}, {Name: "b", Score: 5}, {Name: "c", Score: 7}},
			want: framework.NodeScoreList{{Name: "a", Score: 100}, {Name: "b", Score: 71}, {Name: "c", Score: 42}},
		},
		{
			name: "all zero scores 100",
			in:   framework.NodeScoreList{{Name: "a", Score: 0}, {Name: "b", Score: 0}},
			want: framework.NodeScoreList{{Name: "a", Score: 100}, {Name: "b", Score: 100}},
		},
		{
			name: "ignored nodes score 0 and stay out of min and max",
			in:   framework.NodeScoreList{{Name: "ignored", Score: 0}, {Name: "a", Score: 2}, {Name: "b", Score: 4}},
			want: framework.NodeScoreList{{Name: "ignored", Score: 0}, {Name: "a", Score: 100}, {Name: "b", Score: 50}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := append(framework.NodeScoreList{}, tt.in...)
			if s := pl.NormalizeScore(context.Background(), state, nil, got); !s.IsSuccess() {
				t.Fatal(s)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("NormalizeScore (-want +got):\n%s", diff)
			}
		})
	}
	if s := pl.NormalizeScore(context.Background(), framework.NewCycleState(), nil, nil); s.Code() != framework.Error {
		t.Errorf("NormalizeScore without PreScore = %v, want Error", s)
	}
}

// feasibleCounts is the counts of the feasible domains, the map
// kube-scheduler's PreScore builds (ours counts every domain).
func feasibleCounts(s *preScoreState) []map[string]int64 {
	out := make([]map[string]int64, len(s.constraints))
	for i := range s.constraints {
		out[i] = map[string]int64{}
		for v := range s.feasibleDomains[i] {
			out[i][v] = s.topologyValueToPodCounts[i][v]
		}
	}
	return out
}
