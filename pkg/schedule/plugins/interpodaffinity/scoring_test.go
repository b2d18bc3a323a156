package interpodaffinity_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/interpodaffinity"
)

// scoreAll runs PreScore, Score on every node in order and NormalizeScore,
// as the runner does; it returns PreScore's status when that is not Success.
func scoreAll(t *testing.T, p *interpodaffinity.InterPodAffinity, h *framework.SnapshotHandle, pod *corev1.Pod) (framework.NodeScoreList, *framework.Status) {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	if st := p.PreScore(ctx, state, pod, h.List()); !st.IsSuccess() {
		return nil, st
	}
	var list framework.NodeScoreList
	for _, ni := range h.List() {
		s, st := p.Score(ctx, state, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("Score %s: %v", ni.Name(), st)
		}
		list = append(list, framework.NodeScore{Name: ni.Name(), Score: s})
	}
	if st := p.ScoreExtensions().NormalizeScore(ctx, state, pod, list); !st.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", st)
	}
	return list, nil
}

func scores(names []string, values ...int64) framework.NodeScoreList {
	out := make(framework.NodeScoreList, len(values))
	for i, v := range values {
		out[i] = framework.NodeScore{Name: names[i], Score: v}
	}
	return out
}

// From kube-scheduler's TestPreferredAffinity.
func TestPreferredAffinity(t *testing.T) {
	rgChina := map[string]string{"region": "China"}
	rgIndia := map[string]string{"region": "India"}
	az1 := map[string]string{"az": "az1"}
	az2 := map[string]string{"az": "az2"}
	rgChinaAz1 := map[string]string{"region": "China", "az": "az1"}
	nodes := func(labels ...map[string]string) []*corev1.Node {
		var out []*corev1.Node
		for i, l := range labels {
			out = append(out, node(fmt.Sprintf("node%d", i+1), l))
		}
		return out
	}
	names := []string{"node1", "node2", "node3", "node4", "node5"}
	teamSel := func(op metav1.LabelSelectorOperator) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: op, Values: []string{"team1"}}}}
	}

	type opt func(*testutilPod) *testutilPod
	stayWithS1InRegion := func(w *testutilPod) *testutilPod {
		return w.PreferredPodAffinity(5, makeTerm("region").In("security", "S1"))
	}
	stayWithS2InRegion := func(w *testutilPod) *testutilPod {
		return w.PreferredPodAffinity(6, makeTerm("region").In("security", "S2"))
	}
	affinity3 := func(w *testutilPod) *testutilPod {
		return w.PreferredPodAffinity(8, makeTerm("region").NotIn("security", "S1").In("security", "S2")).
			PreferredPodAffinity(2, makeTerm("region").Exists("security").DoesNotExist("wrongkey"))
	}
	hardAffinity := func(w *testutilPod) *testutilPod {
		return w.RequiredPodAffinity(makeTerm("region").In("security", "S1", "value2")).
			RequiredPodAffinity(makeTerm("region").Exists("security").DoesNotExist("wrongkey"))
	}
	awayFromS1InAz := func(w *testutilPod) *testutilPod {
		return w.PreferredPodAntiAffinity(5, makeTerm("az").In("security", "S1"))
	}
	awayFromS2InAz := func(w *testutilPod) *testutilPod {
		return w.PreferredPodAntiAffinity(5, makeTerm("az").In("security", "S2"))
	}
	stayWithS1InRegionAwayFromS2InAz := func(w *testutilPod) *testutilPod {
		return w.PreferredPodAffinity(8, makeTerm("region").In("security", "S1")).
			PreferredPodAntiAffinity(5, makeTerm("az").In("security", "S2"))
	}
	affinityNamespaceSelector := func(w *testutilPod) *testutilPod {
		return w.PreferredPodAffinity(5, makeTerm("region").In("security", "S1").Namespaces("subteam2.team2").NamespaceSelector(teamSel(metav1.LabelSelectorOpIn)))
	}
	antiAffinityNamespaceSelector := func(w *testutilPod) *testutilPod {
		return w.PreferredPodAntiAffinity(5, makeTerm("region").In("security", "S1").Namespaces("subteam2.team2").NamespaceSelector(teamSel(metav1.LabelSelectorOpIn)))
	}
	affinityNegativeNamespaceSelector := func(w *testutilPod) *testutilPod {
		return w.PreferredPodAffinity(5, makeTerm("region").In("security", "S1").NamespaceSelector(teamSel(metav1.LabelSelectorOpNotIn)))
	}
	antiAffinityNegativeNamespaceSelector := func(w *testutilPod) *testutilPod {
		return w.PreferredPodAntiAffinity(5, makeTerm("region").In("security", "S1").NamespaceSelector(teamSel(metav1.LabelSelectorOpNotIn)))
	}
	invalidAffinity := func(w *testutilPod) *testutilPod {
		return w.PreferredPodAffinity(8, makeTerm("region").In("security", "{{.bad-value.}}"))
	}
	invalidAntiAffinity := func(w *testutilPod) *testutilPod {
		return w.PreferredPodAntiAffinity(5, makeTerm("az").In("security", "{{.bad-value.}}"))
	}
	none := func(w *testutilPod) *testutilPod { return w }

	n := 0
	// pod builds a pod: security label ("" for none), namespace ("" for
	// default), node ("" for the incoming pod) and terms.
	pod := func(security, ns, nodeName string, o opt) *corev1.Pod {
		n++
		w := makePod().Name(fmt.Sprintf("pod-%d", n))
		if security != "" {
			w.Label("security", security)
		}
		if ns != "" {
			w.Namespace(ns)
		}
		if nodeName != "" {
			w.Node(nodeName)
		}
		return o(w).Obj()
	}

	invalidMessage := "failed to parse pod: %s: " + strings.Replace(badValueMessage, "[service]", "[security]", 1)
	tests := []struct {
		name                               string
		pod                                *corev1.Pod
		pods                               []*corev1.Pod
		nodes                              []*corev1.Node
		ignorePreferredTermsOfExistingPods bool
		want                               framework.NodeScoreList
		wantStatus                         *framework.Status
	}{
		{
			name:       "no affinity anywhere: Skip",
			pod:        pod("S1", "", "", none),
			nodes:      nodes(rgChina, rgIndia, az1),
			wantStatus: framework.NewStatus(framework.Skip),
		},
		{
			name:  "affinity: the node in the domain of a matching pod scores highest",
			pod:   pod("S1", "", "", stayWithS1InRegion),
			pods:  []*corev1.Pod{pod("S1", "", "node1", none), pod("S2", "", "node2", none), pod("S1", "", "node3", none)},
			nodes: nodes(rgChina, rgIndia, az1),
			want:  scores(names, 100, 0, 0),
		},
		{
			name:  "affinity: every node of the matching domain scores the same",
			pod:   pod("", "", "", stayWithS1InRegion),
			pods:  []*corev1.Pod{pod("S1", "", "node1", none)},
			nodes: nodes(rgChina, rgChinaAz1, rgIndia),
			want:  scores(names, 100, 100, 0),
		},
		{
			name: "affinity: the region with more matching pods scores highest",
			pod:  pod("S1", "", "", stayWithS2InRegion),
			pods: []*corev1.Pod{pod("S2", "", "node1", none), pod("S2", "", "node1", none), pod("S2", "", "node2", none),
				pod("S2", "", "node3", none), pod("S2", "", "node4", none), pod("S2", "", "node5", none)},
			nodes: nodes(rgChina, rgIndia, rgChina, rgChina, rgIndia),
			want:  scores(names, 100, 0, 100, 100, 0),
		},
		{
			name:  "affinity: different operators, some not matching (2 and 10 normalize to 20 and 100)",
			pod:   pod("S1", "", "", affinity3),
			pods:  []*corev1.Pod{pod("S1", "", "node1", none), pod("S2", "", "node2", none), pod("S1", "", "node3", none)},
			nodes: nodes(rgChina, rgIndia, az1),
			want:  scores(names, 20, 100, 0),
		},
		{
			name:  "affinity symmetry: existing pods' preferred terms",
			pod:   pod("S2", "", "", none),
			pods:  []*corev1.Pod{pod("S1", "", "node1", stayWithS1InRegion), pod("S2", "", "node2", stayWithS2InRegion)},
			nodes: nodes(rgChina, rgIndia, az1),
			want:  scores(names, 0, 100, 0),
		},
		{
			name:  "affinity symmetry with a namespace selector",
			pod:   pod("S1", "subteam1.team1", "", none),
			pods:  []*corev1.Pod{pod("S1", "", "node1", affinityNamespaceSelector), pod("S2", "", "node2", stayWithS2InRegion)},
			nodes: nodes(rgChina, rgIndia, az1),
			want:  scores(names, 100, 0, 0),
		},
		{
			name:  "anti-affinity symmetry with a namespace selector",
			pod:   pod("S1", "subteam1.team1", "", none),
			pods:  []*corev1.Pod{pod("S1", "", "node1", antiAffinityNamespaceSelector), pod("S2", "", "node2", stayWithS2InRegion)},
			nodes: nodes(rgChina, rgIndia, az1),
			want:  scores(names, 0, 100, 100),
		},
		{
			name:  "affinity symmetry: existing pods' required terms at hardPodAffinityWeight",
			pod:   pod("S1", "", "", none),
			pods:  []*corev1.Pod{pod("S1", "", "node1", hardAffinity), pod("S2", "", "node2", hardAffinity)},
			nodes: nodes(rgChina, rgIndia, az1),
			want:  scores(names, 100, 100, 0),
		},
		{
			name:  "anti-affinity: the node without matching pods scores highest",
			pod:   pod("S1", "", "", awayFromS1InAz),
			pods:  []*corev1.Pod{pod("S1", "", "node1", none), pod("S2", "", "node2", none)},
			nodes: nodes(az1, rgChina),
			want:  scores(names, 0, 100),
		},
		{
			name:  "anti-affinity: a node without the topology key scores highest",
			pod:   pod("S1", "", "", awayFromS1InAz),
			pods:  []*corev1.Pod{pod("S1", "", "node1", none), pod("S1", "", "node2", none)},
			nodes: nodes(az1, rgChina),
			want:  scores(names, 0, 100),
		},
		{
			name:  "anti-affinity: the node with more matching pods scores lowest",
			pod:   pod("S1", "", "", awayFromS1InAz),
			pods:  []*corev1.Pod{pod("S1", "", "node1", none), pod("S1", "", "node1", none), pod("S2", "", "node2", none)},
			nodes: nodes(az1, rgIndia),
			want:  scores(names, 0, 100),
		},
		{
			name:  "anti-affinity symmetry: existing pods' preferred anti-affinity",
			pod:   pod("S2", "", "", none),
			pods:  []*corev1.Pod{pod("S1", "", "node1", awayFromS2InAz), pod("S2", "", "node2", awayFromS1InAz)},
			nodes: nodes(az1, az2),
			want:  scores(names, 0, 100),
		},
		{
			name:  "affinity and anti-affinity",
			pod:   pod("S1", "", "", stayWithS1InRegionAwayFromS2InAz),
			pods:  []*corev1.Pod{pod("S1", "", "node1", none), pod("S1", "", "node2", none)},
			nodes: nodes(rgChina, az1),
			want:  scores(names, 100, 0),
		},
		{
			name: "affinity and anti-affinity with pods of the same labels",
			pod:  pod("S1", "", "", stayWithS1InRegionAwayFromS2InAz),
			pods: []*corev1.Pod{pod("S1", "", "node1", none), pod("S1", "", "node1", none), pod("S1", "", "node2", none),
				pod("S1", "", "node3", none), pod("S1", "", "node3", none), pod("S1", "", "node4", none), pod("S1", "", "node5", none)},
			nodes: nodes(rgChinaAz1, rgIndia, rgChina, rgChina, rgIndia),
			want:  scores(names, 100, 0, 100, 100, 0),
		},
		{
			name: "affinity, anti-affinity and both symmetries",
			pod:  pod("S1", "", "", stayWithS1InRegionAwayFromS2InAz),
			pods: []*corev1.Pod{pod("S1", "", "node1", none), pod("S2", "", "node2", none),
				pod("", "", "node3", stayWithS1InRegionAwayFromS2InAz), pod("", "", "node4", awayFromS1InAz)},
			nodes: nodes(rgChina, az1, rgIndia, az2),
			want:  scores(names, 100, 0, 100, 0),
		},
		{
			name:  "nodes of a domain without pods with affinity (kubernetes#82796)",
			pod:   pod("S1", "", "", none),
			pods:  []*corev1.Pod{pod("S1", "", "node1", none), pod("", "", "node2", stayWithS1InRegionAwayFromS2InAz)},
			nodes: nodes(rgChina, rgChina),
			want:  scores(names, 0, 0),
		},
		{
			name:       "a preferred affinity selector that does not parse fails PreScore",
			pod:        pod("", "", "", invalidAffinity),
			nodes:      nodes(rgChina, rgChina),
			wantStatus: framework.NewStatus(framework.Error, fmt.Sprintf(invalidMessage, "preferredAffinityTerms")),
		},
		{
			name:       "a preferred anti-affinity selector that does not parse fails PreScore",
			pod:        pod("", "", "", invalidAntiAffinity),
			nodes:      nodes(rgChina, rgChina),
			wantStatus: framework.NewStatus(framework.Error, fmt.Sprintf(invalidMessage, "preferredAntiAffinityTerms")),
		},
		{
			name: "affinity with a namespace selector",
			pod:  pod("S1", "subteam1.team1", "", affinityNamespaceSelector),
			pods: []*corev1.Pod{pod("S1", "subteam1.team1", "node1", none), pod("S1", "subteam1.team1", "node1", none),
				pod("S1", "subteam1.team2", "node1", none), pod("S1", "subteam2.team1", "node2", none)},
			nodes: nodes(rgChina, rgIndia),
			want:  scores(names, 100, 0),
		},
		{
			name: "affinity with a namespace selector and namespaces",
			pod:  pod("S1", "subteam1.team1", "", affinityNamespaceSelector),
			pods: []*corev1.Pod{pod("S1", "subteam1.team1", "node1", none), pod("S1", "subteam1.team1", "node1", none),
				pod("S1", "subteam2.team2", "node1", none), pod("S1", "subteam2.team1", "node2", none)},
			nodes: nodes(rgChina, rgIndia),
			want:  scores(names, 100, 0),
		},
		{
			name: "anti-affinity with a namespace selector",
			pod:  pod("S1", "subteam1.team1", "", antiAffinityNamespaceSelector),
			pods: []*corev1.Pod{pod("S1", "subteam1.team1", "node1", none), pod("S1", "subteam1.team1", "node1", none),
				pod("S1", "subteam1.team2", "node1", none), pod("S1", "subteam2.team1", "node2", none)},
			nodes: nodes(rgChina, rgIndia),
			want:  scores(names, 0, 100),
		},
		{
			name: "anti-affinity with a namespace selector and namespaces",
			pod:  pod("S1", "subteam1.team1", "", antiAffinityNamespaceSelector),
			pods: []*corev1.Pod{pod("S1", "subteam1.team1", "node1", none), pod("S1", "subteam1.team1", "node1", none),
				pod("S1", "subteam2.team2", "node1", none), pod("S1", "subteam2.team1", "node2", none)},
			nodes: nodes(rgChina, rgIndia),
			want:  scores(names, 0, 100),
		},
		{
			name: "affinity with a negative namespace selector",
			pod:  pod("S1", "subteam1.team1", "", affinityNegativeNamespaceSelector),
			pods: []*corev1.Pod{pod("S1", "subteam1.team1", "node1", none), pod("S1", "subteam1.team1", "node1", none),
				pod("S1", "subteam1.team2", "node2", none)},
			nodes: nodes(rgChina, rgIndia),
			want:  scores(names, 0, 100),
		},
		{
			name: "anti-affinity with a negative namespace selector",
			pod:  pod("S1", "subteam1.team1", "", antiAffinityNegativeNamespaceSelector),
			pods: []*corev1.Pod{pod("S1", "subteam1.team1", "node1", none), pod("S1", "subteam1.team1", "node1", none),
				pod("S1", "subteam1.team2", "node2", none)},
			nodes: nodes(rgChina, rgIndia),
			want:  scores(names, 100, 0),
		},
		{
			name:                               "ignorePreferredTermsOfExistingPods and no terms of its own: Skip",
			pod:                                pod("S2", "", "", none),
			pods:                               []*corev1.Pod{pod("S1", "", "node1", stayWithS1InRegionAwayFromS2InAz), pod("S2", "", "node2", stayWithS2InRegion)},
			nodes:                              nodes(rgChina, rgIndia),
			ignorePreferredTermsOfExistingPods: true,
			wantStatus:                         framework.NewStatus(framework.Skip),
		},
		{
			name:  "preferred terms of existing pods count by default",
			pod:   pod("S2", "", "", none),
			pods:  []*corev1.Pod{pod("S1", "", "node1", stayWithS1InRegionAwayFromS2InAz), pod("S2", "", "node2", stayWithS2InRegion)},
			nodes: nodes(rgChina, rgIndia),
			want:  scores(names, 0, 100),
		},
		{
			name: "ignorePreferredTermsOfExistingPods still counts them for a pod with terms of its own",
			pod:  pod("S2", "", "", awayFromS1InAz),
			pods: []*corev1.Pod{pod("", "", "node1", func(w *testutilPod) *testutilPod {
				return w.PreferredPodAffinity(10, makeTerm("region").In("security", "S2"))
			})},
			nodes:                              nodes(rgChina, rgIndia),
			ignorePreferredTermsOfExistingPods: true,
			want:                               scores(names, 100, 0),
		},
		{
			name:       "no nodes: Skip",
			pod:        pod("S2", "", "", none),
			wantStatus: framework.NewStatus(framework.Skip),
		},
		{
			name: "kube-scheduler's float arithmetic: 29 of 50 normalizes to 57, not 58",
			pod: pod("", "", "", func(w *testutilPod) *testutilPod {
				return w.PreferredPodAffinity(29, makeTerm("region").In("app", "a")).PreferredPodAffinity(50, makeTerm("region").In("app", "b"))
			}),
			pods: []*corev1.Pod{
				makePod().Name("a").Label("app", "a").Node("node1").Obj(),
				makePod().Name("b").Label("app", "b").Node("node2").Obj(),
			},
			nodes: nodes(rgChina, rgIndia, az1),
			want:  scores(names, 57, 100, 0),
		},
		{
			name:  "anti-affinity only: raw scores -5 and 0 normalize to 0 and 100",
			pod:   pod("", "", "", awayFromS1InAz),
			pods:  []*corev1.Pod{pod("S1", "", "node1", none)},
			nodes: nodes(az1, az2),
			want:  scores(names, 0, 100),
		},
		{
			name: "weights that cancel out still count as scored: every node 0",
			pod: pod("", "", "", func(w *testutilPod) *testutilPod {
				return w.PreferredPodAffinity(5, makeTerm("region").In("security", "S1")).PreferredPodAntiAffinity(5, makeTerm("region").In("security", "S1"))
			}),
			pods:  []*corev1.Pod{pod("S1", "", "node1", none)},
			nodes: nodes(rgChina, rgIndia),
			want:  scores(names, 0, 0),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := &configv1.InterPodAffinityArgs{HardPodAffinityWeight: ptrTo[int32](1), IgnorePreferredTermsOfExistingPods: tc.ignorePreferredTermsOfExistingPods}
			p, h := setup(t, args, tc.nodes, tc.pods, testNamespaces)
			got, st := scoreAll(t, p, h, tc.pod)
			if diff := cmp.Diff(tc.wantStatus, st, statusCmp); diff != "" {
				t.Fatalf("PreScore status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

// From kube-scheduler's TestPreferredAffinityWithHardPodAffinitySymmetricWeight.
func TestHardPodAffinityWeight(t *testing.T) {
	names := []string{"node1", "node2", "node3"}
	nodes := []*corev1.Node{
		node("node1", map[string]string{"region": "China"}),
		node("node2", map[string]string{"region": "India"}),
		node("node3", map[string]string{"az": "az1"}),
	}
	hard := func(name, nodeName string) *corev1.Pod {
		return makePod().Name(name).Node(nodeName).RequiredPodAffinity(makeTerm("region").In("service", "S1").
			Namespaces("default", "subteam2.team2").
			NamespaceSelector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"team1"}}}})).Obj()
	}
	existing := []*corev1.Pod{hard("e1", "node1"), hard("e2", "node2")}
	incoming := func(ns string) *corev1.Pod { return makePod().Name("p").Namespace(ns).Label("service", "S1").Obj() }
	tests := []struct {
		name       string
		pod        *corev1.Pod
		pods       []*corev1.Pod
		weight     *int32
		want       framework.NodeScoreList
		wantStatus *framework.Status
	}{
		{name: "default weight", pod: incoming("default"), pods: existing, want: scores(names, 100, 100, 0)},
		{name: "zero weight: Skip", pod: incoming("default"), pods: existing, weight: ptrTo[int32](0), wantStatus: framework.NewStatus(framework.Skip)},
		{name: "no matching namespace: Skip", pod: incoming("subteam1.team2"), pods: existing, wantStatus: framework.NewStatus(framework.Skip)},
		{name: "matching namespace selector", pod: incoming("subteam1.team1"), pods: existing, want: scores(names, 100, 100, 0)},
		{name: "matching namespaces", pod: incoming("subteam2.team2"), pods: existing, want: scores(names, 100, 100, 0)},
		{
			// China 5, India 5 + 10 (hard), node3 0: 100*(5/15) truncates to 33.
			name: "weight 10 beside a preferred term",
			pod:  makePod().Name("p").Label("service", "S1").PreferredPodAffinity(5, makeTerm("region").In("app", "x")).Obj(),
			pods: []*corev1.Pod{
				makePod().Name("x1").Label("app", "x").Node("node1").Obj(),
				makePod().Name("x2").Label("app", "x").Node("node2").RequiredPodAffinity(makeTerm("region").In("service", "S1")).Obj(),
			},
			weight: ptrTo[int32](10),
			want:   scores(names, 33, 100, 0),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var args *configv1.InterPodAffinityArgs
			if tc.weight != nil {
				args = &configv1.InterPodAffinityArgs{HardPodAffinityWeight: tc.weight}
			}
			p, h := setup(t, args, nodes, tc.pods, testNamespaces)
			got, st := scoreAll(t, p, h, tc.pod)
			if diff := cmp.Diff(tc.wantStatus, st, statusCmp); diff != "" {
				t.Fatalf("PreScore status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPreScoreTopologyScore(t *testing.T) {
	nodes := []*corev1.Node{
		node("n1", map[string]string{"zone": "z1", "region": "r1"}),
		node("n2", map[string]string{"zone": "z2", "region": "r1"}),
		node("n3", map[string]string{"zone": "z3"}),
	}
	pod := makePod().Name("p").Label("app", "web").
		PreferredPodAffinity(7, makeTerm("zone").In("app", "cache")).
		PreferredPodAntiAffinity(3, makeTerm("region").In("app", "web")).Obj()
	pods := []*corev1.Pod{
		makePod().Name("c1").Label("app", "cache").Node("n1").Obj(),
		makePod().Name("c2").Label("app", "cache").Node("n1").Obj(),
		makePod().Name("w1").Label("app", "web").Node("n2").PreferredPodAffinity(4, makeTerm("zone").In("app", "web")).Obj(),
		makePod().Name("w2").Label("app", "web").Node("n3").Obj(),
	}
	p, h := setup(t, nil, nodes, pods, nil)
	state := framework.NewCycleState()
	if st := p.PreScore(context.Background(), state, pod, h.List()); !st.IsSuccess() {
		t.Fatal(st)
	}
	got, err := interpodaffinity.PreScoreTopologyScore(state)
	if err != nil {
		t.Fatal(err)
	}
	// zone=z1: 2 x 7; region=r1: -3 (w1); zone=z2: +4 (w1's term over the
	// incoming pod); w2's node has no region.
	want := map[string]int64{"zone=z1": 14, "region=r1": -3, "zone=z2": 4}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("topology scores (-want +got):\n%s", diff)
	}
	list, _ := scoreAll(t, p, h, pod)
	// Raw 11, 1, 0: 100*(1/11) = 9.09.
	if diff := cmp.Diff(scores([]string{"n1", "n2", "n3"}, 100, 9, 0), list); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
}

func TestScoreWithoutPreScore(t *testing.T) {
	p, h := setup(t, nil, []*corev1.Node{node("n", nil)}, nil, nil)
	ctx := context.Background()
	want := framework.AsStatus(fmt.Errorf(`failed to read "PreScoreInterPodAffinity" from cycleState: %w`, framework.ErrNotFound))
	_, got := p.Score(ctx, framework.NewCycleState(), makePod().Obj(), mustNodeInfo(t, h, "n"))
	if diff := cmp.Diff(want, got, statusCmp); diff != "" {
		t.Errorf("Score (-want +got):\n%s", diff)
	}
	got = p.NormalizeScore(ctx, framework.NewCycleState(), makePod().Obj(), nil)
	if diff := cmp.Diff(want, got, statusCmp); diff != "" {
		t.Errorf("NormalizeScore (-want +got):\n%s", diff)
	}
}
