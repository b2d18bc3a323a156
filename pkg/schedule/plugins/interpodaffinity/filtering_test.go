package interpodaffinity_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/interpodaffinity"
)

var statusCmp = cmp.Comparer(func(a, b *framework.Status) bool { return a.Equal(b) })

func unresolvable(reason string) *framework.Status {
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, reason)
}

func unschedulable(reason string) *framework.Status {
	return framework.NewStatus(framework.Unschedulable, reason)
}

const badValueMessage = `values[0][service]: Invalid value: "{{.bad-value.}}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`

// From kube-scheduler's TestRequiredAffinitySingleNode.
func TestRequiredAffinitySingleNode(t *testing.T) {
	node1 := node("node1", map[string]string{"region": "r1", "zone": "z11"})
	// existing is a pod labelled service=securityscan on node1.
	existing := makePod().Name("existing").Label("service", "securityscan").Node("node1").Obj()
	teamIn := func(team string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{team}}}}
	}

	tests := []struct {
		name                string
		pod                 *corev1.Pod
		pods                []*corev1.Pod
		wantPreFilterStatus *framework.Status
		wantFilterStatus    *framework.Status
	}{
		{
			name:                "no required terms and no existing pods: Skip",
			pod:                 makePod().Name("p").Obj(),
			wantPreFilterStatus: framework.NewStatus(framework.Skip),
		},
		{
			name: "affinity In matches the existing pod",
			pod:  makePod().Name("p").Label("security", "S1").RequiredPodAffinity(makeTerm("region").In("service", "securityscan", "value2")).Obj(),
			pods: []*corev1.Pod{existing},
		},
		{
			name: "affinity NotIn matches the existing pod",
			pod:  makePod().Name("p").Label("security", "S1").RequiredPodAffinity(makeTerm("region").NotIn("service", "securityscan3", "value3")).Obj(),
			pods: []*corev1.Pod{existing},
		},
		{
			name: "affinity does not match a pod of another namespace",
			pod: makePod().Name("p").Label("security", "S1").
				RequiredPodAffinity(makeTerm("").In("service", "securityscan", "value2").Namespaces("DiffNameSpace")).Obj(),
			pods:             []*corev1.Pod{makePod().Name("e").Namespace("ns").Label("service", "securityscan").Node("node1").Obj()},
			wantFilterStatus: unresolvable(interpodaffinity.ErrReasonAffinityRulesNotMatch),
		},
		{
			name:             "affinity selector matches no existing pod",
			pod:              makePod().Name("p").Label("service", "securityscan").RequiredPodAffinity(makeTerm("").In("service", "antivirusscan", "value2")).Obj(),
			pods:             []*corev1.Pod{existing},
			wantFilterStatus: unresolvable(interpodaffinity.ErrReasonAffinityRulesNotMatch),
		},
		{
			name: "several affinity terms with different operators all match",
			pod: makePod().Name("p").Label("security", "S1").
				RequiredPodAffinity(makeTerm("region").Exists("service").DoesNotExist("wrongkey")).
				RequiredPodAffinity(makeTerm("region").In("service", "securityscan").NotIn("service", "WrongValue")).Obj(),
			pods: []*corev1.Pod{existing},
		},
		{
			name: "the requirements of a selector are ANDed: one does not match",
			pod: makePod().Name("p").Label("security", "S1").
				RequiredPodAffinity(makeTerm("region").Exists("service").DoesNotExist("wrongkey")).
				RequiredPodAffinity(makeTerm("region").In("service", "securityscan2").NotIn("service", "WrongValue")).Obj(),
			pods:             []*corev1.Pod{existing},
			wantFilterStatus: unresolvable(interpodaffinity.ErrReasonAffinityRulesNotMatch),
		},
		{
			name: "affinity and anti-affinity both satisfied",
			pod: makePod().Name("p").Label("security", "S1").
				RequiredPodAffinity(makeTerm("region").In("service", "securityscan", "value2")).
				RequiredPodAntiAffinity(makeTerm("node").In("service", "antivirusscan", "value2")).Obj(),
			pods: []*corev1.Pod{existing},
		},
		{
			name: "affinity, anti-affinity and the existing pod's anti-affinity satisfied",
			pod: makePod().Name("p").Label("security", "S1").
				RequiredPodAffinity(makeTerm("region").In("service", "securityscan", "value2")).
				RequiredPodAntiAffinity(makeTerm("node").In("service", "antivirusscan", "value2")).Obj(),
			pods: []*corev1.Pod{makePod().Name("e").Label("service", "securityscan").Node("node1").
				RequiredPodAntiAffinity(makeTerm("node").In("service", "antivirusscan", "value2")).Obj()},
		},
		{
			name: "affinity satisfied, anti-affinity not",
			pod: makePod().Name("p").Label("security", "S1").
				RequiredPodAffinity(makeTerm("region").In("service", "securityscan", "value2")).
				RequiredPodAntiAffinity(makeTerm("zone").In("service", "securityscan", "value2")).Obj(),
			pods:             []*corev1.Pod{existing},
			wantFilterStatus: unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch),
		},
		{
			name: "the pod's terms satisfied, the existing pod's anti-affinity not",
			pod: makePod().Name("p").Label("service", "securityscan").
				RequiredPodAffinity(makeTerm("region").In("service", "securityscan", "value2")).
				RequiredPodAntiAffinity(makeTerm("node").In("service", "antivirusscan", "value2")).Obj(),
			pods: []*corev1.Pod{makePod().Name("e").Label("service", "securityscan").Node("node1").
				RequiredPodAntiAffinity(makeTerm("zone").In("service", "securityscan", "value2")).Obj()},
			wantFilterStatus: unschedulable(interpodaffinity.ErrReasonExistingAntiAffinityRulesNotMatch),
		},
		{
			name: "the pod does not match its own affinity and the only matching pod is on a node not in the snapshot",
			pod: makePod().Name("p").Label("service", "securityscan").
				RequiredPodAffinity(makeTerm("region").NotIn("service", "securityscan", "value2")).Obj(),
			pods:             []*corev1.Pod{makePod().Name("e").Label("service", "securityscan").Node("node2").Obj()},
			wantFilterStatus: unresolvable(interpodaffinity.ErrReasonAffinityRulesNotMatch),
		},
		{
			name: "an existing pod's anti-affinity applies to a pod without terms",
			pod:  makePod().Name("p").Label("service", "securityscan").Obj(),
			pods: []*corev1.Pod{makePod().Name("e").Label("service", "securityscan").Node("node1").
				RequiredPodAntiAffinity(makeTerm("zone").In("service", "securityscan", "value2")).Obj()},
			wantFilterStatus: unschedulable(interpodaffinity.ErrReasonExistingAntiAffinityRulesNotMatch),
		},
		{
			name: "an existing pod's anti-affinity that does not select the pod: Skip",
			pod:  makePod().Name("p").Label("service", "securityscan").Obj(),
			pods: []*corev1.Pod{makePod().Name("e").Label("service", "securityscan").Node("node1").
				RequiredPodAntiAffinity(makeTerm("zone").NotIn("service", "securityscan", "value2")).Obj()},
			wantPreFilterStatus: framework.NewStatus(framework.Skip),
		},
		{
			name: "the pod's anti-affinity is checked before the existing pod's",
			pod: makePod().Name("p").Label("service", "securityscan").
				RequiredPodAntiAffinity(makeTerm("region").Exists("service")).
				RequiredPodAntiAffinity(makeTerm("region").Exists("security")).Obj(),
			pods: []*corev1.Pod{makePod().Name("e").Label("security", "S1").Node("node1").
				RequiredPodAntiAffinity(makeTerm("zone").Exists("security")).Obj()},
			wantFilterStatus: unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch),
		},
		{
			name: "anti-affinity symmetry a1: partial match on both sides",
			pod: makePod().Name("p").Label("service", "securityscan").
				RequiredPodAntiAffinity(makeTerm("zone").Exists("service")).
				RequiredPodAntiAffinity(makeTerm("zone").Exists("security")).Obj(),
			pods: []*corev1.Pod{makePod().Name("e").Label("security", "S1").Node("node1").
				RequiredPodAntiAffinity(makeTerm("zone").Exists("security")).Obj()},
			wantFilterStatus: unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch),
		},
		{
			name: "anti-affinity symmetry a2: only the existing pod's terms select",
			pod: makePod().Name("p").Label("security", "S1").
				RequiredPodAntiAffinity(makeTerm("zone").Exists("security")).Obj(),
			pods: []*corev1.Pod{makePod().Name("e").Label("service", "securityscan").Node("node1").
				RequiredPodAntiAffinity(makeTerm("zone").Exists("service")).
				RequiredPodAntiAffinity(makeTerm("zone").Exists("security")).Obj()},
			wantFilterStatus: unschedulable(interpodaffinity.ErrReasonExistingAntiAffinityRulesNotMatch),
		},
		{
			name: "anti-affinity symmetry b1",
			pod: makePod().Name("p").Label("abc", "").Label("xyz", "").
				RequiredPodAntiAffinity(makeTerm("zone").Exists("abc")).
				RequiredPodAntiAffinity(makeTerm("zone").Exists("def")).Obj(),
			pods: []*corev1.Pod{makePod().Name("e").Label("def", "").Label("xyz", "").Node("node1").
				RequiredPodAntiAffinity(makeTerm("zone").Exists("abc")).
				RequiredPodAntiAffinity(makeTerm("zone").Exists("def")).Obj()},
			wantFilterStatus: unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch),
		},
		{
			name: "anti-affinity symmetry b2",
			pod: makePod().Name("p").Label("def", "").Label("xyz", "").
				RequiredPodAntiAffinity(makeTerm("zone").Exists("abc")).
				RequiredPodAntiAffinity(makeTerm("zone").Exists("def")).Obj(),
			pods: []*corev1.Pod{makePod().Name("e").Label("abc", "").Label("xyz", "").Node("node1").
				RequiredPodAntiAffinity(makeTerm("zone").Exists("abc")).
				RequiredPodAntiAffinity(makeTerm("zone").Exists("def")).Obj()},
			wantFilterStatus: unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch),
		},
		{
			name: "a selector that does not parse fails PreFilter",
			pod: makePod().Name("p").Label("service", "securityscan").
				RequiredPodAffinity(makeTerm("region").In("service", "{{.bad-value.}}")).
				RequiredPodAffinity(makeTerm("node").In("service", "antivirusscan", "value2")).Obj(),
			wantPreFilterStatus: unresolvable("parsing pod: requiredAffinityTerms: " + badValueMessage),
		},
		{
			name: "selectors that do not parse in two groups are aggregated",
			pod: makePod().Name("p").
				RequiredPodAffinity(makeTerm("region").In("service", "foo")).
				RequiredPodAntiAffinity(makeTerm("region").In("service", "{{.bad-value.}}")).
				PreferredPodAffinity(3, makeTerm("region").In("service", "{{.bad-value.}}")).Obj(),
			wantPreFilterStatus: unresolvable("parsing pod: [requiredAntiAffinityTerms: " + badValueMessage +
				", preferredAffinityTerms: " + badValueMessage + "]"),
		},
		{
			name: "a namespace selector that does not parse fails PreFilter",
			pod: makePod().Name("p").
				RequiredPodAntiAffinity(makeTerm("region").In("service", "foo").NamespaceSelector(
					&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: "Bogus"}}})).Obj(),
			wantPreFilterStatus: unresolvable(`parsing pod: requiredAntiAffinityTerms: "Bogus" is not a valid label selector operator`),
		},
		{
			name: "affinity with a namespace selector matching the existing pod's namespace",
			pod: makePod().Name("p").Label("security", "S1").
				RequiredPodAffinity(makeTerm("region").In("service", "securityscan", "value2").NamespaceSelector(teamIn("team1"))).Obj(),
			pods: []*corev1.Pod{makePod().Name("e").Namespace("subteam1.team1").Label("service", "securityscan").Node("node1").Obj()},
		},
		{
			name: "affinity with a namespace selector not matching the existing pod's namespace",
			pod: makePod().Name("p").Label("security", "S1").
				RequiredPodAffinity(makeTerm("region").In("service", "securityscan", "value2").NamespaceSelector(teamIn("team1"))).Obj(),
			pods:             []*corev1.Pod{makePod().Name("e").Namespace("subteam1.team2").Label("service", "securityscan").Node("node1").Obj()},
			wantFilterStatus: unresolvable(interpodaffinity.ErrReasonAffinityRulesNotMatch),
		},
		{
			name: "anti-affinity with a matching namespace selector",
			pod: makePod().Name("p").Namespace("subteam1.team1").Label("security", "S1").
				RequiredPodAntiAffinity(makeTerm("zone").In("service", "securityscan", "value2").NamespaceSelector(teamIn("team1"))).Obj(),
			pods:             []*corev1.Pod{makePod().Name("e").Namespace("subteam2.team1").Label("service", "securityscan").Node("node1").Obj()},
			wantFilterStatus: unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch),
		},
		{
			name: "anti-affinity with an empty namespace selector matches every namespace",
			pod: makePod().Name("p").Namespace("subteam1.team1").Label("security", "S1").
				RequiredPodAntiAffinity(makeTerm("zone").In("service", "securityscan", "value2").NamespaceSelector(&metav1.LabelSelector{})).Obj(),
			pods:             []*corev1.Pod{makePod().Name("e").Namespace("not-in-snapshot").Label("service", "securityscan").Node("node1").Obj()},
			wantFilterStatus: unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch),
		},
		{
			name: "anti-affinity with a non-matching namespace selector",
			pod: makePod().Name("p").Namespace("subteam1.team1").Label("security", "S1").
				RequiredPodAntiAffinity(makeTerm("zone").In("service", "securityscan", "value2").NamespaceSelector(teamIn("team1"))).Obj(),
			pods: []*corev1.Pod{makePod().Name("e").Namespace("subteam1.team2").Label("service", "securityscan").Node("node1").Obj()},
		},
		{
			name: "a negative namespace selector selects only namespaces that exist",
			pod: makePod().Name("p").Namespace("subteam1.team1").Label("security", "S1").
				RequiredPodAntiAffinity(makeTerm("zone").In("service", "securityscan").NamespaceSelector(
					&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpDoesNotExist}}})).Obj(),
			pods: []*corev1.Pod{makePod().Name("e").Namespace("not-in-snapshot").Label("service", "securityscan").Node("node1").Obj()},
		},
		{
			name: "a negative namespace selector selects a namespace without the label",
			pod: makePod().Name("p").Namespace("subteam1.team1").Label("security", "S1").
				RequiredPodAntiAffinity(makeTerm("zone").In("service", "securityscan").NamespaceSelector(
					&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpDoesNotExist}}})).Obj(),
			pods: []*corev1.Pod{
				makePod().Name("e1").Namespace("subteam2.team2").Label("service", "securityscan").Node("node1").Obj(),
				makePod().Name("e2").Namespace("plain").Label("service", "securityscan").Node("node1").Obj(),
			},
			wantFilterStatus: unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch),
		},
		{
			name: "an existing pod's namespace selector is matched against the incoming pod's namespace labels",
			pod:  makePod().Name("p").Namespace("subteam2.team2").Label("service", "securityscan").Obj(),
			pods: []*corev1.Pod{makePod().Name("e").Namespace("other").Node("node1").
				RequiredPodAntiAffinity(makeTerm("zone").Exists("service").NamespaceSelector(teamIn("team2"))).Obj()},
			wantFilterStatus: unschedulable(interpodaffinity.ErrReasonExistingAntiAffinityRulesNotMatch),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			p, h := setup(t, nil, []*corev1.Node{node1}, tc.pods, testNamespaces)
			state := framework.NewCycleState()
			_, st := p.PreFilter(ctx, state, tc.pod, h.List())
			if diff := cmp.Diff(tc.wantPreFilterStatus, st, statusCmp); diff != "" {
				t.Fatalf("PreFilter status (-want +got):\n%s", diff)
			}
			if !st.IsSuccess() {
				return
			}
			got := p.Filter(ctx, state, tc.pod, mustNodeInfo(t, h, "node1"))
			if diff := cmp.Diff(tc.wantFilterStatus, got, statusCmp); diff != "" {
				t.Errorf("Filter status (-want +got):\n%s", diff)
			}
		})
	}
}

// From kube-scheduler's TestRequiredAffinityMultipleNodes.
func TestRequiredAffinityMultipleNodes(t *testing.T) {
	rgChina := map[string]string{"region": "China"}
	rgChinaAz1 := map[string]string{"region": "China", "az": "az1"}
	rgIndia := map[string]string{"region": "India"}
	threeNodes := func(a, b, c string) []*corev1.Node {
		return []*corev1.Node{node(a, rgChina), node(b, rgChinaAz1), node(c, rgIndia)}
	}
	twoNodes := func(zoneB string) []*corev1.Node {
		return []*corev1.Node{
			node("nodeA", map[string]string{"region": "r1", "zone": "z1", "hostname": "nodeA"}),
			node("nodeB", map[string]string{"region": "r1", "zone": zoneB, "hostname": "nodeB"}),
		}
	}

	tests := []struct {
		name                string
		pod                 *corev1.Pod
		pods                []*corev1.Pod
		nodes               []*corev1.Node
		wantPreFilterStatus *framework.Status
		want                []*framework.Status
	}{
		{
			name:  "every node in the domain of a matching pod fits",
			pod:   makePod().Name("p").RequiredPodAffinity(makeTerm("region").In("foo", "bar")).Obj(),
			pods:  []*corev1.Pod{makePod().Name("p1").Label("foo", "bar").Node("node1").Obj()},
			nodes: threeNodes("node1", "node2", "node3"),
			want:  []*framework.Status{nil, nil, unresolvable(interpodaffinity.ErrReasonAffinityRulesNotMatch)},
		},
		{
			name: "the first pod of a group wanting one zone is not blocked when no pod matches anywhere",
			pod: makePod().Name("p").Label("foo", "bar").Label("service", "securityscan").
				RequiredPodAffinity(makeTerm("zone").In("foo", "bar")).
				RequiredPodAffinity(makeTerm("zone").In("service", "securityscan")).Obj(),
			pods: []*corev1.Pod{makePod().Name("p1").Label("foo", "bar").Node("nodeA").Obj()},
			nodes: []*corev1.Node{
				node("nodeA", map[string]string{"zone": "az1", "hostname": "h1"}),
				node("nodeB", map[string]string{"zone": "az2", "hostname": "h2"}),
			},
			want: []*framework.Status{nil, nil},
		},
		{
			name: "the first pod of a group still needs the topology keys on the node",
			pod: makePod().Name("p").Label("foo", "bar").Label("service", "securityscan").
				RequiredPodAffinity(makeTerm("zone").In("foo", "bar")).
				RequiredPodAffinity(makeTerm("zone").In("service", "securityscan")).Obj(),
			pods: []*corev1.Pod{makePod().Name("p1").Label("foo", "bar").Node("nodeA").Obj()},
			nodes: []*corev1.Node{
				node("nodeA", map[string]string{"zoneLabel": "az1", "hostname": "h1"}),
				node("nodeB", map[string]string{"zoneLabel": "az2", "hostname": "h2"}),
			},
			want: []*framework.Status{unresolvable(interpodaffinity.ErrReasonAffinityRulesNotMatch), unresolvable(interpodaffinity.ErrReasonAffinityRulesNotMatch)},
		},
		{
			name: "the first pod of a group is blocked once a pod matching all terms runs elsewhere",
			pod: makePod().Name("p").Label("foo", "bar").
				RequiredPodAffinity(makeTerm("zone").In("foo", "bar")).Obj(),
			pods: []*corev1.Pod{makePod().Name("p1").Label("foo", "bar").Node("nodeA").Obj()},
			nodes: []*corev1.Node{
				node("nodeA", map[string]string{"zone": "az1"}),
				node("nodeB", map[string]string{"zone": "az2"}),
			},
			want: []*framework.Status{nil, unresolvable(interpodaffinity.ErrReasonAffinityRulesNotMatch)},
		},
		{
			name:  "anti-affinity rejects the whole region of a matching pod",
			pod:   makePod().Name("p").RequiredPodAntiAffinity(makeTerm("region").In("foo", "abc")).Obj(),
			pods:  []*corev1.Pod{makePod().Name("e").Label("foo", "abc").Node("nodeA").Obj()},
			nodes: twoNodes("z2"),
			want:  []*framework.Status{unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch), unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch)},
		},
		{
			name: "anti-affinity rejects when any term matches",
			pod: makePod().Name("p").
				RequiredPodAntiAffinity(makeTerm("region").In("foo", "abc")).
				RequiredPodAntiAffinity(makeTerm("zone").In("service", "securityscan")).Obj(),
			pods:  []*corev1.Pod{makePod().Name("e").Label("foo", "abc").Label("service", "securityscan").Node("nodeA").Obj()},
			nodes: twoNodes("z2"),
			want:  []*framework.Status{unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch), unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch)},
		},
		{
			name:  "anti-affinity leaves other regions",
			pod:   makePod().Name("p").RequiredPodAntiAffinity(makeTerm("region").In("foo", "abc")).Obj(),
			pods:  []*corev1.Pod{makePod().Name("e").Label("foo", "abc").Node("nodeA").Obj()},
			nodes: threeNodes("nodeA", "nodeB", "nodeC"),
			want:  []*framework.Status{unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch), unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch), nil},
		},
		{
			name: "anti-affinity of a pod in another namespace does not select the pod",
			pod:  makePod().Name("p").Namespace("NS1").Label("foo", "123").RequiredPodAntiAffinity(makeTerm("region").In("foo", "bar")).Obj(),
			pods: []*corev1.Pod{
				makePod().Name("e1").Namespace("NS1").Label("foo", "bar").Node("nodeA").Obj(),
				makePod().Name("e2").Namespace("NS2").Node("nodeC").RequiredPodAntiAffinity(makeTerm("region").In("foo", "123")).Obj(),
			},
			nodes: threeNodes("nodeA", "nodeB", "nodeC"),
			want:  []*framework.Status{unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch), unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch), nil},
		},
		{
			name:                "an existing pod's term over a key no node has rejects nothing: Skip",
			pod:                 makePod().Name("p").Label("foo", "").Obj(),
			pods:                []*corev1.Pod{makePod().Name("e").Node("nodeA").RequiredPodAntiAffinity(makeTerm("invalid-node-label").Exists("foo")).Obj()},
			nodes:               twoNodes("z1"),
			wantPreFilterStatus: framework.NewStatus(framework.Skip),
		},
		{
			name:  "the pod's anti-affinity over a key no node has rejects nothing",
			pod:   makePod().Name("p").RequiredPodAntiAffinity(makeTerm("invalid-node-label").Exists("foo")).Obj(),
			pods:  []*corev1.Pod{makePod().Name("e").Label("foo", "").Node("nodeA").Obj()},
			nodes: twoNodes("z1"),
			want:  []*framework.Status{nil, nil},
		},
		{
			name: "existing pods' anti-affinity rejects every node",
			pod:  makePod().Name("p").Label("foo", "").Label("bar", "").Obj(),
			pods: []*corev1.Pod{
				makePod().Name("e1").Node("nodeA").RequiredPodAntiAffinity(makeTerm("zone").Exists("foo")).Obj(),
				makePod().Name("e2").Node("nodeA").RequiredPodAntiAffinity(makeTerm("region").Exists("bar")).Obj(),
			},
			nodes: twoNodes("z2"),
			want:  []*framework.Status{unschedulable(interpodaffinity.ErrReasonExistingAntiAffinityRulesNotMatch), unschedulable(interpodaffinity.ErrReasonExistingAntiAffinityRulesNotMatch)},
		},
		{
			name: "the pod's anti-affinity rejects every node",
			pod: makePod().Name("p").
				RequiredPodAntiAffinity(makeTerm("zone").Exists("foo")).
				RequiredPodAntiAffinity(makeTerm("region").Exists("bar")).Obj(),
			pods: []*corev1.Pod{
				makePod().Name("e1").Label("foo", "").Node("nodeA").Obj(),
				makePod().Name("e2").Label("bar", "").Node("nodeB").Obj(),
			},
			nodes: twoNodes("z2"),
			want:  []*framework.Status{unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch), unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch)},
		},
		{
			name: "an existing pod's terms count only where selector and topology key both match",
			pod:  makePod().Name("p").Label("foo", "").Label("bar", "").Obj(),
			pods: []*corev1.Pod{makePod().Name("e").Node("nodeA").
				RequiredPodAntiAffinity(makeTerm("invalid-node-label").Exists("foo")).
				RequiredPodAntiAffinity(makeTerm("zone").Exists("bar")).Obj()},
			nodes: twoNodes("z2"),
			want:  []*framework.Status{unschedulable(interpodaffinity.ErrReasonExistingAntiAffinityRulesNotMatch), nil},
		},
		{
			name: "the pod's terms count only where selector and topology key both match",
			pod: makePod().Name("p").
				RequiredPodAntiAffinity(makeTerm("invalid-node-label").Exists("foo")).
				RequiredPodAntiAffinity(makeTerm("zone").Exists("bar")).Obj(),
			pods:  []*corev1.Pod{makePod().Name("e").Label("foo", "").Label("bar", "").Node("nodeA").Obj()},
			nodes: twoNodes("z2"),
			want:  []*framework.Status{unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch), nil},
		},
		{
			name: "existing pods on two zones each reject the pod; the third zone fits",
			pod:  makePod().Name("p").Label("foo", "").Label("bar", "").Obj(),
			pods: []*corev1.Pod{
				makePod().Name("e1").Node("nodeA").RequiredPodAntiAffinity(makeTerm("zone").Exists("foo")).RequiredPodAntiAffinity(makeTerm("zone").Exists("labelA")).Obj(),
				makePod().Name("e2").Node("nodeB").RequiredPodAntiAffinity(makeTerm("zone").Exists("bar")).RequiredPodAntiAffinity(makeTerm("zone").Exists("labelB")).Obj(),
			},
			nodes: append(twoNodes("z2"), node("nodeC", map[string]string{"region": "r1", "zone": "z3", "hostname": "nodeC"})),
			want: []*framework.Status{
				unschedulable(interpodaffinity.ErrReasonExistingAntiAffinityRulesNotMatch),
				unschedulable(interpodaffinity.ErrReasonExistingAntiAffinityRulesNotMatch),
				nil,
			},
		},
		{
			name: "affinity: one pod matching all terms is enough for its whole domain",
			pod: makePod().Name("p").
				RequiredPodAffinity(makeTerm("region").Exists("foo")).
				RequiredPodAffinity(makeTerm("zone").Exists("bar")).Obj(),
			pods:  []*corev1.Pod{makePod().Name("e").Label("foo", "").Label("bar", "").Node("nodeA").Obj()},
			nodes: twoNodes("z1"),
			want:  []*framework.Status{nil, nil},
		},
		{
			name: "affinity: all terms must be matched by the same pod",
			pod: makePod().Name("p").
				RequiredPodAffinity(makeTerm("region").Exists("foo")).
				RequiredPodAffinity(makeTerm("zone").Exists("bar")).Obj(),
			pods: []*corev1.Pod{
				makePod().Name("e1").Label("foo", "").Node("nodeA").Obj(),
				makePod().Name("e2").Label("bar", "").Node("nodeB").Obj(),
			},
			nodes: twoNodes("z2"),
			want:  []*framework.Status{unresolvable(interpodaffinity.ErrReasonAffinityRulesNotMatch), unresolvable(interpodaffinity.ErrReasonAffinityRulesNotMatch)},
		},
		{
			name: "hostname affinity and anti-affinity follow the default path",
			pod: makePod().Name("p").
				RequiredPodAffinity(makeTerm(corev1.LabelHostname).Exists("foo")).
				RequiredPodAntiAffinity(makeTerm(corev1.LabelHostname).Exists("bar")).Obj(),
			pods: []*corev1.Pod{
				makePod().Name("e1").Label("foo", "").Node("nodeA").Obj(),
				makePod().Name("e2").Label("foo", "").Label("bar", "").Node("nodeB").Obj(),
			},
			nodes: []*corev1.Node{
				node("nodeA", map[string]string{corev1.LabelHostname: "nodeA"}),
				node("nodeB", map[string]string{corev1.LabelHostname: "nodeB"}),
				node("nodeC", map[string]string{corev1.LabelHostname: "nodeC"}),
			},
			want: []*framework.Status{nil, unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch), unresolvable(interpodaffinity.ErrReasonAffinityRulesNotMatch)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			p, h := setup(t, nil, tc.nodes, tc.pods, []*corev1.Namespace{namespace("NS1", nil)})
			state := framework.NewCycleState()
			_, st := p.PreFilter(ctx, state, tc.pod, h.List())
			if diff := cmp.Diff(tc.wantPreFilterStatus, st, statusCmp); diff != "" {
				t.Fatalf("PreFilter status (-want +got):\n%s", diff)
			}
			if !st.IsSuccess() {
				return
			}
			var got []*framework.Status
			for _, n := range tc.nodes {
				got = append(got, p.Filter(ctx, state, tc.pod, mustNodeInfo(t, h, n.Name)))
			}
			if diff := cmp.Diff(tc.want, got, statusCmp); diff != "" {
				t.Errorf("Filter statuses (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterWithoutPreFilter(t *testing.T) {
	p, h := setup(t, nil, []*corev1.Node{node("n", nil)}, nil, nil)
	got := p.Filter(context.Background(), framework.NewCycleState(), makePod().Obj(), mustNodeInfo(t, h, "n"))
	want := framework.AsStatus(fmt.Errorf(`error reading "PreFilterInterPodAffinity" from cycleState: %w`, framework.ErrNotFound))
	if diff := cmp.Diff(want, got, statusCmp); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if st := p.AddPod(context.Background(), framework.NewCycleState(), makePod().Obj(), framework.NewPodInfo(makePod().Obj()), mustNodeInfo(t, h, "n")); st.Code() != framework.Error {
		t.Errorf("AddPod without PreFilter: got %v, want an Error", st)
	}
}

// prefilter runs PreFilter, which must not skip, and returns the state and its counts.
func prefilter(t *testing.T, p *interpodaffinity.InterPodAffinity, h *framework.SnapshotHandle, pod *corev1.Pod) (*framework.CycleState, interpodaffinity.Counts) {
	t.Helper()
	state := framework.NewCycleState()
	if _, st := p.PreFilter(context.Background(), state, pod, h.List()); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	return state, mustCounts(t, state)
}

func mustCounts(t *testing.T, state *framework.CycleState) interpodaffinity.Counts {
	t.Helper()
	c, err := interpodaffinity.PreFilterCounts(state)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// From kube-scheduler's TestPreFilterStateAddRemovePod: AddPod gives the
// counts PreFilter computes with the pod in the snapshot, and RemovePod
// takes them back.
func TestPreFilterStateAddRemovePod(t *testing.T) {
	label1 := map[string]string{"region": "r1", "zone": "z11"}
	label2 := map[string]string{"region": "r1", "zone": "z12"}
	label3 := map[string]string{"region": "r2", "zone": "z21"}
	nodes := []*corev1.Node{node("nodeA", label1), node("nodeB", label2), node("nodeC", label3)}
	antiFooBar := makeTerm("region").In("foo", "bar")
	antiComplex := []*testutilTerm{makeTerm("region").In("foo", "bar", "buzz"), makeTerm("zone").NotIn("service", "bar", "security", "test")}
	withAnti := func(w *testutilPod, terms ...*testutilTerm) *testutilPod {
		for _, t := range terms {
			w.RequiredPodAntiAffinity(t)
		}
		return w
	}
	withAff := func(w *testutilPod, terms ...*testutilTerm) *testutilPod {
		for _, t := range terms {
			w.RequiredPodAffinity(t)
		}
		return w
	}

	tests := []struct {
		name     string
		pending  *corev1.Pod
		existing []*corev1.Pod
		added    *corev1.Pod
		nodes    []*corev1.Node
		want     interpodaffinity.Counts
	}{
		{
			name:    "anti-affinity terms",
			pending: withAnti(makePod().Name("pending").Label("foo", "bar"), antiFooBar).Obj(),
			existing: []*corev1.Pod{
				makePod().Name("p1").Label("foo", "bar").Node("nodeA").Obj(),
				withAnti(makePod().Name("p2").Node("nodeC"), antiFooBar).Obj(),
			},
			added: withAnti(makePod().Name("addedPod").Label("foo", "bar").Node("nodeB"), antiFooBar).Obj(),
			nodes: nodes,
			want: interpodaffinity.Counts{
				Existing:     map[string]int64{"region=r1": 1, "region=r2": 1},
				Affinity:     map[string]int64{},
				AntiAffinity: map[string]int64{"region=r1": 2},
			},
		},
		{
			name:    "complex anti-affinity terms",
			pending: withAnti(makePod().Name("pending").Label("foo", "bar"), antiComplex...).Obj(),
			existing: []*corev1.Pod{
				makePod().Name("p1").Label("foo", "bar").Node("nodeA").Obj(),
				withAnti(makePod().Name("p2").Node("nodeC"), antiFooBar).Obj(),
			},
			added: withAnti(makePod().Name("addedPod").Label("foo", "bar").Node("nodeA"), antiComplex...).Obj(),
			nodes: nodes,
			want: interpodaffinity.Counts{
				Existing:     map[string]int64{"region=r1": 1, "zone=z11": 1, "region=r2": 1},
				Affinity:     map[string]int64{},
				AntiAffinity: map[string]int64{"region=r1": 2, "zone=z11": 2, "zone=z21": 1},
			},
		},
		{
			name:    "affinity and anti-affinity terms",
			pending: withAff(makePod().Name("pending").Label("foo", "bar"), antiComplex...).Obj(),
			existing: []*corev1.Pod{
				makePod().Name("p1").Label("foo", "bar").Node("nodeA").Obj(),
				withAff(withAnti(makePod().Name("p2").Node("nodeC"), antiFooBar), antiComplex...).Obj(),
			},
			added: withAnti(makePod().Name("addedPod").Label("foo", "bar").Node("nodeA"), antiComplex...).Obj(),
			nodes: nodes,
			want: interpodaffinity.Counts{
				Existing:     map[string]int64{"region=r1": 1, "zone=z11": 1, "region=r2": 1},
				Affinity:     map[string]int64{"region=r1": 2, "zone=z11": 2},
				AntiAffinity: map[string]int64{},
			},
		},
		{
			name:     "hostname and region anti-affinity terms of the added pod",
			pending:  withAnti(makePod().Name("pending").Label("foo", "bar"), antiFooBar).Obj(),
			existing: []*corev1.Pod{makePod().Name("p1").Label("foo", "bar").Node("nodeA").Obj()},
			added: withAnti(makePod().Name("addedPod").Label("foo", "bar").Node("nodeA"),
				makeTerm("region").In("foo", "bar"), makeTerm(corev1.LabelHostname).In("foo", "bar")).Obj(),
			nodes: []*corev1.Node{
				node("nodeA", map[string]string{"region": "r1", "zone": "z11", corev1.LabelHostname: "nodeA"}),
				node("nodeB", map[string]string{"region": "r1", "zone": "z12", corev1.LabelHostname: "nodeB"}),
			},
			want: interpodaffinity.Counts{
				Existing:     map[string]int64{"region=r1": 1, corev1.LabelHostname + "=nodeA": 1},
				Affinity:     map[string]int64{},
				AntiAffinity: map[string]int64{"region=r1": 2},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			pAll, hAll := setup(t, nil, tc.nodes, append(append([]*corev1.Pod{}, tc.existing...), tc.added), nil)
			_, allCounts := prefilter(t, pAll, hAll, tc.pending)
			if diff := cmp.Diff(tc.want, allCounts); diff != "" {
				t.Errorf("PreFilter with the added pod (-want +got):\n%s", diff)
			}

			p, h := setup(t, nil, tc.nodes, tc.existing, nil)
			cycleState, original := prefilter(t, p, h, tc.pending)
			added := framework.NewPodInfo(tc.added)
			ni := mustNodeInfo(t, h, tc.added.Spec.NodeName)
			if st := p.AddPod(ctx, cycleState, tc.pending, added, ni); !st.IsSuccess() {
				t.Fatalf("AddPod: %v", st)
			}
			if diff := cmp.Diff(allCounts, mustCounts(t, cycleState)); diff != "" {
				t.Errorf("AddPod differs from PreFilter (-want +got):\n%s", diff)
			}
			if st := p.RemovePod(ctx, cycleState, tc.pending, added, ni); !st.IsSuccess() {
				t.Fatalf("RemovePod: %v", st)
			}
			if diff := cmp.Diff(original, mustCounts(t, cycleState)); diff != "" {
				t.Errorf("RemovePod does not restore the counts (-want +got):\n%s", diff)
			}

			// RemovePod alone, from the state with the pod.
			allCycle, _ := prefilter(t, pAll, hAll, tc.pending)
			if st := pAll.RemovePod(ctx, allCycle, tc.pending, added, mustNodeInfo(t, hAll, tc.added.Spec.NodeName)); !st.IsSuccess() {
				t.Fatalf("RemovePod: %v", st)
			}
			if diff := cmp.Diff(original, mustCounts(t, allCycle)); diff != "" {
				t.Errorf("RemovePod differs from PreFilter without the pod (-want +got):\n%s", diff)
			}
		})
	}
}

// From kube-scheduler's TestGetTPMapMatchingIncomingAffinityAntiAffinity.
func TestIncomingAffinityCounts(t *testing.T) {
	newPod := func(labels ...string) *corev1.Pod {
		w := makePod().Name("normal").Node("nodeA")
		for _, l := range labels {
			w.Label(l, "")
		}
		return w.Obj()
	}
	nodeA := node("nodeA", map[string]string{corev1.LabelHostname: "nodeA"})
	host := corev1.LabelHostname
	tests := []struct {
		name         string
		existing     []*corev1.Pod
		pod          *corev1.Pod
		wantAffinity map[string]int64
		wantAnti     map[string]int64
	}{
		{
			name:         "no pods, no terms",
			pod:          makePod().Name("aaa-normal").Obj(),
			wantAffinity: map[string]int64{}, wantAnti: map[string]int64{},
		},
		{
			name:         "the pod has no terms",
			existing:     []*corev1.Pod{newPod("aaa")},
			pod:          makePod().Name("aaa-normal").Obj(),
			wantAffinity: map[string]int64{}, wantAnti: map[string]int64{},
		},
		{
			name:     "no pod matches",
			existing: []*corev1.Pod{newPod("bbb")},
			pod: makePod().Name("p").RequiredPodAffinity(makeTerm(host).Exists("aaa")).
				RequiredPodAntiAffinity(makeTerm(host).Exists("aaa")).Obj(),
			wantAffinity: map[string]int64{}, wantAnti: map[string]int64{},
		},
		{
			name:     "one term each",
			existing: []*corev1.Pod{newPod("aaa")},
			pod: makePod().Name("p").RequiredPodAffinity(makeTerm(host).Exists("aaa")).
				RequiredPodAntiAffinity(makeTerm(host).Exists("aaa")).Obj(),
			wantAffinity: map[string]int64{host + "=nodeA": 1}, wantAnti: map[string]int64{host + "=nodeA": 1},
		},
		{
			name:     "two affinity terms matched by one pod count twice",
			existing: []*corev1.Pod{newPod("aaa", "bbb")},
			pod: makePod().Name("p").RequiredPodAffinity(makeTerm(host).Exists("aaa")).RequiredPodAffinity(makeTerm(host).Exists("bbb")).
				RequiredPodAntiAffinity(makeTerm(host).Exists("aaa")).Obj(),
			wantAffinity: map[string]int64{host + "=nodeA": 2}, wantAnti: map[string]int64{host + "=nodeA": 1},
		},
		{
			name:     "affinity needs all terms, anti-affinity any",
			existing: []*corev1.Pod{newPod("aaa")},
			pod: makePod().Name("p").RequiredPodAffinity(makeTerm(host).Exists("aaa")).RequiredPodAffinity(makeTerm(host).Exists("bbb")).
				RequiredPodAntiAffinity(makeTerm(host).Exists("aaa")).RequiredPodAntiAffinity(makeTerm(host).Exists("bbb")).Obj(),
			wantAffinity: map[string]int64{}, wantAnti: map[string]int64{host + "=nodeA": 1},
		},
		{
			name:     "anti-affinity: a pod matching two terms counts for each",
			existing: []*corev1.Pod{newPod("aaa", "bbb")},
			pod: makePod().Name("p").RequiredPodAffinity(makeTerm(host).Exists("aaa")).RequiredPodAffinity(makeTerm(host).Exists("ccc")).
				RequiredPodAntiAffinity(makeTerm(host).Exists("aaa")).RequiredPodAntiAffinity(makeTerm(host).Exists("bbb")).Obj(),
			wantAffinity: map[string]int64{}, wantAnti: map[string]int64{host + "=nodeA": 2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, h := setup(t, nil, []*corev1.Node{nodeA}, tc.existing, nil)
			state := framework.NewCycleState()
			_, st := p.PreFilter(context.Background(), state, tc.pod, h.List())
			if st.IsSkip() {
				if len(tc.wantAffinity)+len(tc.wantAnti) != 0 {
					t.Fatalf("PreFilter skipped, want counts")
				}
				return
			}
			got := mustCounts(t, state)
			if diff := cmp.Diff(tc.wantAffinity, got.Affinity); diff != "" {
				t.Errorf("affinity counts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAnti, got.AntiAffinity); diff != "" {
				t.Errorf("anti-affinity counts (-want +got):\n%s", diff)
			}
		})
	}
}

// From kube-scheduler's TestRemovePodHostScopedAffinityCount: once the only
// pod the affinity selects is removed (a preemption what-if), the pod may
// schedule itself anywhere.
func TestRemovePodRestoresSelfAffinity(t *testing.T) {
	ctx := context.Background()
	pending := makePod().Name("pending").Label("foo", "bar").RequiredPodAffinity(makeTerm(corev1.LabelHostname).In("foo", "bar")).Obj()
	existing := makePod().Name("existing").Label("foo", "bar").Node("nodeA").Obj()
	nodes := []*corev1.Node{
		node("nodeA", map[string]string{corev1.LabelHostname: "nodeA"}),
		node("nodeB", map[string]string{corev1.LabelHostname: "nodeB"}),
	}
	p, h := setup(t, nil, nodes, []*corev1.Pod{existing}, nil)
	state, _ := prefilter(t, p, h, pending)
	a, b := mustNodeInfo(t, h, "nodeA"), mustNodeInfo(t, h, "nodeB")
	if st := p.Filter(ctx, state, pending, a); !st.IsSuccess() {
		t.Errorf("nodeA before removal: %v", st)
	}
	if diff := cmp.Diff(unresolvable(interpodaffinity.ErrReasonAffinityRulesNotMatch), p.Filter(ctx, state, pending, b), statusCmp); diff != "" {
		t.Errorf("nodeB before removal (-want +got):\n%s", diff)
	}
	if st := p.RemovePod(ctx, state, pending, framework.NewPodInfo(existing), a); !st.IsSuccess() {
		t.Fatalf("RemovePod: %v", st)
	}
	for _, ni := range []*framework.NodeInfo{a, b} {
		if st := p.Filter(ctx, state, pending, ni); !st.IsSuccess() {
			t.Errorf("%s after removal: %v", ni.Name(), st)
		}
	}
}

// From kube-scheduler's TestMultipleAffinityTermsRequireSingleMatchingPod.
func TestMultipleAffinityTermsRequireSingleMatchingPod(t *testing.T) {
	ctx := context.Background()
	pod := makePod().Name("pod-1").
		RequiredPodAffinity(makeTerm(corev1.LabelHostname).In("foo", "bar")).
		RequiredPodAffinity(makeTerm(corev1.LabelHostname).In("baz", "qux")).Obj()
	podA := makePod().Name("podA").Label("foo", "bar").Node("node-1").Obj()
	podB := makePod().Name("podB").Label("baz", "qux").Node("node-1").Obj()
	podC := makePod().Name("podC").Label("foo", "bar").Label("baz", "qux").Node("node-3").Obj()
	nodes := []*corev1.Node{
		node("node-1", map[string]string{corev1.LabelHostname: "node-1"}),
		node("node-2", map[string]string{corev1.LabelHostname: "node-2"}),
		node("node-3", map[string]string{corev1.LabelHostname: "node-3"}),
	}
	p, h := setup(t, nil, nodes, []*corev1.Pod{podA, podB, podC}, nil)
	state, _ := prefilter(t, p, h, pod)
	want := map[string]*framework.Status{
		"node-1": unresolvable(interpodaffinity.ErrReasonAffinityRulesNotMatch),
		"node-2": unresolvable(interpodaffinity.ErrReasonAffinityRulesNotMatch),
		"node-3": nil,
	}
	for name, w := range want {
		if diff := cmp.Diff(w, p.Filter(ctx, state, pod, mustNodeInfo(t, h, name)), statusCmp); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}

	// Without podC nothing matches both terms; a pod carrying both labels may go first.
	self := pod.DeepCopy()
	self.Labels = map[string]string{"foo": "bar", "baz": "qux"}
	p, h = setup(t, nil, nodes, []*corev1.Pod{podA, podB}, nil)
	state, _ = prefilter(t, p, h, self)
	if st := p.Filter(ctx, state, self, mustNodeInfo(t, h, "node-1")); !st.IsSuccess() {
		t.Errorf("self-affinity on node-1: %v", st)
	}
}

// TestGangMembersReservedOneByOne places the workers of one gang one after
// another: each reserved worker is added to the PreFilter state of the next
// (AddPod), and the anti-affinity between workers must hold as it does when
// PreFilter is recomputed on a snapshot holding the reserved workers.
func TestGangMembersReservedOneByOne(t *testing.T) {
	ctx := context.Background()
	var nodes []*corev1.Node
	for i := range 4 {
		nodes = append(nodes, node(fmt.Sprintf("n%d", i), map[string]string{
			corev1.LabelHostname: fmt.Sprintf("n%d", i), corev1.LabelTopologyZone: fmt.Sprintf("z%d", i/2)}))
	}
	worker := func(i int) *corev1.Pod {
		return makePod().Name(fmt.Sprintf("w-%d", i)).Namespace("ml").Label("gang", "g1").Label("role", "worker").
			RequiredPodAntiAffinity(makeTerm(corev1.LabelHostname).In("gang", "g1")).Obj()
	}
	// ps has no terms: only the workers' anti-affinity against it keeps it away.
	ps := makePod().Name("ps-0").Namespace("ml").Label("gang", "g1").Label("role", "ps").Obj()

	p, h := setup(t, nil, nodes, nil, []*corev1.Namespace{namespace("ml", map[string]string{corev1.LabelMetadataName: "ml"})})
	template := worker(99)
	state, _ := prefilter(t, p, h, template)
	// Nothing can keep ps away on an empty cluster: kube-scheduler skips the
	// plugin for it, and its state is built once the first worker is reserved.
	if _, st := p.PreFilter(ctx, framework.NewCycleState(), ps, h.List()); !st.IsSkip() {
		t.Fatalf("ps on an empty cluster: got %v, want Skip", st)
	}
	var psState *framework.CycleState

	for i, target := range []string{"n0", "n2", "n1"} {
		w := worker(i)
		w.Spec.NodeName = target
		ni := mustNodeInfo(t, h, target)
		pi := framework.NewPodInfo(w)
		ext := p.PreFilterExtensions()
		if st := ext.AddPod(ctx, state, template, pi, ni); !st.IsSuccess() {
			t.Fatalf("AddPod %s: %v", w.Name, st)
		}
		if psState != nil {
			if st := ext.AddPod(ctx, psState, ps, pi, ni); !st.IsSuccess() {
				t.Fatalf("AddPod %s: %v", w.Name, st)
			}
		}
		// Reserve it in the working snapshot, as the runner does.
		ni.AddPodInfo(pi)
		h.SetNodes(h.List())
		if psState == nil {
			psState, _ = prefilter(t, p, h, ps)
		}

		recomputed, _ := prefilter(t, p, h, template)
		recomputedPS, _ := prefilter(t, p, h, ps)
		for _, n := range nodes {
			ni := mustNodeInfo(t, h, n.Name)
			incremental, fresh := p.Filter(ctx, state, template, ni), p.Filter(ctx, recomputed, template, ni)
			if diff := cmp.Diff(fresh, incremental, statusCmp); diff != "" {
				t.Errorf("after %s, worker on %s: AddPod and PreFilter disagree (-prefilter +addpod):\n%s", w.Name, n.Name, diff)
			}
			psIncremental, psFresh := p.Filter(ctx, psState, ps, ni), p.Filter(ctx, recomputedPS, ps, ni)
			if diff := cmp.Diff(psFresh, psIncremental, statusCmp); diff != "" {
				t.Errorf("after %s, ps on %s: AddPod and PreFilter disagree (-prefilter +addpod):\n%s", w.Name, n.Name, diff)
			}
		}
		for _, used := range []string{"n0", "n2", "n1"}[:i+1] {
			ni := mustNodeInfo(t, h, used)
			if diff := cmp.Diff(unschedulable(interpodaffinity.ErrReasonAntiAffinityRulesNotMatch), p.Filter(ctx, state, template, ni), statusCmp); diff != "" {
				t.Errorf("next worker on %s (-want +got):\n%s", used, diff)
			}
			if diff := cmp.Diff(unschedulable(interpodaffinity.ErrReasonExistingAntiAffinityRulesNotMatch), p.Filter(ctx, psState, ps, ni), statusCmp); diff != "" {
				t.Errorf("ps on %s (-want +got):\n%s", used, diff)
			}
		}
	}
	if st := p.Filter(ctx, state, template, mustNodeInfo(t, h, "n3")); !st.IsSuccess() {
		t.Errorf("the last free node: %v", st)
	}
}

// TestAddRemovePodMatchesPreFilter adds and removes random pods with random
// terms one by one and checks, after each step, that the incremental counts
// and every node's verdict equal a PreFilter recomputed from scratch.
func TestAddRemovePodMatchesPreFilter(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 37))
	keys := []string{corev1.LabelHostname, corev1.LabelTopologyZone, "region", "missing"}
	values := []string{"a", "b", "c"}
	var nodes []*corev1.Node
	for i := range 8 {
		l := map[string]string{corev1.LabelHostname: fmt.Sprintf("n%d", i), corev1.LabelTopologyZone: fmt.Sprintf("z%d", i%3)}
		if i%4 != 3 {
			l["region"] = fmt.Sprintf("r%d", i%2)
		}
		nodes = append(nodes, node(fmt.Sprintf("n%d", i), l))
	}
	randomTerm := func() *testutilTerm {
		term := makeTerm(keys[rng.IntN(len(keys))])
		switch rng.IntN(3) {
		case 0:
			term.In("app", values[rng.IntN(len(values))])
		case 1:
			term.Exists("tier")
		default:
			term.NotIn("app", values[rng.IntN(len(values))])
		}
		if rng.IntN(4) == 0 {
			term.NamespaceSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"team": "t1"}})
		}
		return term
	}
	randomPod := func(name string) *corev1.Pod {
		w := makePod().Name(name).Namespace([]string{"t1-a", "t1-b", "t2"}[rng.IntN(3)]).Label("app", values[rng.IntN(len(values))])
		if rng.IntN(2) == 0 {
			w.Label("tier", "x")
		}
		for range rng.IntN(3) {
			w.RequiredPodAntiAffinity(randomTerm())
		}
		for range rng.IntN(2) {
			w.RequiredPodAffinity(randomTerm())
		}
		return w.Obj()
	}
	namespaces := []*corev1.Namespace{
		namespace("t1-a", map[string]string{"team": "t1"}),
		namespace("t1-b", map[string]string{"team": "t1"}),
		namespace("t2", map[string]string{"team": "t2"}),
	}

	for round := range 20 {
		incoming := randomPod("incoming")
		if incoming.Spec.Affinity == nil {
			incoming = makePod().Name("incoming").Namespace("t1-a").Label("app", "a").RequiredPodAntiAffinity(makeTerm(corev1.LabelTopologyZone).In("app", "a")).Obj()
		}
		p, h := setup(t, nil, nodes, nil, namespaces)
		state, _ := prefilter(t, p, h, incoming)
		var placed []*corev1.Pod
		for step := range 12 {
			var st *framework.Status
			if len(placed) > 0 && rng.IntN(3) == 0 {
				i := rng.IntN(len(placed))
				victim := placed[i]
				placed = append(placed[:i], placed[i+1:]...)
				ni := mustNodeInfo(t, h, victim.Spec.NodeName)
				st = p.RemovePod(ctx, state, incoming, framework.NewPodInfo(victim), ni)
				if err := ni.RemovePod(victim); err != nil {
					t.Fatal(err)
				}
			} else {
				added := randomPod(fmt.Sprintf("p-%d-%d", round, step))
				added.Spec.NodeName = nodes[rng.IntN(len(nodes))].Name
				placed = append(placed, added)
				ni := mustNodeInfo(t, h, added.Spec.NodeName)
				pi := framework.NewPodInfo(added)
				st = p.AddPod(ctx, state, incoming, pi, ni)
				ni.AddPodInfo(pi)
			}
			if !st.IsSuccess() {
				t.Fatalf("round %d step %d: %v", round, step, st)
			}
			h.SetNodes(h.List())

			fresh := framework.NewCycleState()
			_, fst := p.PreFilter(ctx, fresh, incoming, h.List())
			if fst.IsSkip() {
				continue
			}
			if diff := cmp.Diff(mustCounts(t, fresh), mustCounts(t, state)); diff != "" {
				t.Fatalf("round %d step %d: counts (-prefilter +incremental):\n%s", round, step, diff)
			}
			for _, n := range nodes {
				ni := mustNodeInfo(t, h, n.Name)
				if diff := cmp.Diff(p.Filter(ctx, fresh, incoming, ni), p.Filter(ctx, state, incoming, ni), statusCmp); diff != "" {
					t.Fatalf("round %d step %d node %s: verdicts (-prefilter +incremental):\n%s", round, step, n.Name, diff)
				}
			}
		}
	}
}
