package podtopologyspread

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const (
	dns = corev1.DoNotSchedule
	sa  = corev1.ScheduleAnyway
)

// fourNodes are node-a, node-b in zone1 and node-x, node-y in zone2, each
// with a "node" label: the layout most of kube-scheduler's cases use.
func fourNodes() []*corev1.Node {
	return []*corev1.Node{
		node("node-a", "zone", "zone1", "node", "node-a").Obj(),
		node("node-b", "zone", "zone1", "node", "node-b").Obj(),
		node("node-x", "zone", "zone2", "node", "node-x").Obj(),
		node("node-y", "zone", "zone2", "node", "node-y").Obj(),
	}
}

// Cases from kube-scheduler's TestPreFilterState, with the v1.37 gates
// (node inclusion policies and matchLabelKeys on).
func TestPreFilterState(t *testing.T) {
	tests := []struct {
		name         string
		pod          *corev1.Pod
		nodes        []*corev1.Node
		existingPods []*corev1.Pod
		args         *configv1.PodTopologySpreadArgs
		services     []map[string]string
		want         *filterView
		wantStatus   *framework.Status
	}{
		{
			name:  "clean cluster with one spreadConstraint",
			pod:   pod("p", "foo", "").SpreadConstraint(5, "zone", dns, matchLabels("foo", "bar"), nil, nil, nil, nil).Obj(),
			nodes: fourNodes(),
			want: &filterView{
				Constraints:       []constraintView{tsc(5, "zone", "foo=bar")},
				TpValueToMatchNum: []map[string]int{{"zone1": 0, "zone2": 0}},
				MinMatchNum:       []int{0},
			},
		},
		{
			name:  "normal case with one spreadConstraint",
			pod:   pod("p", "foo", "").SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).Obj(),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-a2", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
				pod("p-y2", "foo", "").Node("node-y").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "zone", "foo")},
				TpValueToMatchNum: []map[string]int{{"zone1": 3, "zone2": 2}},
				MinMatchNum:       []int{2},
			},
		},
		{
			name:  "normal case with null label selector",
			pod:   pod("p", "foo", "").SpreadConstraint(1, "zone", dns, nil, nil, nil, nil, nil).Obj(),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "zone", "<nothing>")},
				TpValueToMatchNum: []map[string]int{{"zone1": 0, "zone2": 0}},
				MinMatchNum:       []int{0},
			},
		},
		{
			name: "normal case with one spreadConstraint, on a 3-zone cluster",
			pod:  pod("p", "foo", "").SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).Obj(),
			nodes: append(fourNodes(),
				node("node-o", "zone", "zone3", "node", "node-o").Obj(),
				node("node-p", "zone", "zone3", "node", "node-p").Obj()),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-a2", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
				pod("p-y2", "foo", "").Node("node-y").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "zone", "foo")},
				TpValueToMatchNum: []map[string]int{{"zone1": 3, "zone2": 2, "zone3": 0}},
				MinMatchNum:       []int{0},
			},
		},
		{
			name:  "namespace mismatch doesn't count",
			pod:   pod("p", "foo", "").SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).Obj(),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-a2", "foo", "").Namespace("ns1").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-y1", "foo", "").Namespace("ns2").Node("node-y").Obj(),
				pod("p-y2", "foo", "").Node("node-y").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "zone", "foo")},
				TpValueToMatchNum: []map[string]int{{"zone1": 2, "zone2": 1}},
				MinMatchNum:       []int{1},
			},
		},
		{
			name: "soft spreadConstraints should be bypassed",
			pod: pod("p", "foo", "").
				SpreadConstraint(1, "zone", sa, fooSelector, nil, nil, nil, nil).
				SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).
				SpreadConstraint(1, "node", sa, fooSelector, nil, nil, nil, nil).
				SpreadConstraint(1, "node", dns, fooSelector, nil, nil, nil, nil).Obj(),
			nodes: []*corev1.Node{
				node("node-a", "zone", "zone1", "node", "node-a").Obj(),
				node("node-b", "zone", "zone1", "node", "node-b").Obj(),
				node("node-y", "zone", "zone2", "node", "node-y").Obj(),
			},
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-a2", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
				pod("p-y2", "foo", "").Node("node-y").Obj(),
				pod("p-y3", "foo", "").Node("node-y").Obj(),
				pod("p-y4", "foo", "").Node("node-y").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "zone", "foo"), tsc(1, "node", "foo")},
				TpValueToMatchNum: []map[string]int{{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}},
				MinMatchNum:       []int{3, 1},
			},
		},
		{
			name: "different labelSelectors - complex pods",
			pod: pod("p", "foo", "", "bar", "").
				SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).
				SpreadConstraint(1, "node", dns, barSelector, nil, nil, nil, nil).Obj(),
			nodes: []*corev1.Node{
				node("node-a", "zone", "zone1", "node", "node-a").Obj(),
				node("node-b", "zone", "zone1", "node", "node-b").Obj(),
				node("node-y", "zone", "zone2", "node", "node-y").Obj(),
			},
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-a2", "foo", "", "bar", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
				pod("p-y2", "foo", "", "bar", "").Node("node-y").Obj(),
				pod("p-y3", "foo", "").Node("node-y").Obj(),
				pod("p-y4", "foo", "", "bar", "").Node("node-y").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "zone", "foo"), tsc(1, "node", "bar")},
				TpValueToMatchNum: []map[string]int{{"zone1": 3, "zone2": 4}, {"node-a": 1, "node-b": 0, "node-y": 2}},
				MinMatchNum:       []int{3, 0},
			},
		},
		{
			name: "two spreadConstraints, and with podAffinity",
			pod: withNodeAffinity(pod("p", "foo", "").
				SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).
				SpreadConstraint(1, "node", dns, fooSelector, nil, nil, nil, nil).Obj(),
				"node", corev1.NodeSelectorOpNotIn, "node-x"),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-a2", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
				pod("p-y2", "foo", "").Node("node-y").Obj(),
				pod("p-y3", "foo", "").Node("node-y").Obj(),
				pod("p-y4", "foo", "").Node("node-y").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "zone", "foo"), tsc(1, "node", "foo")},
				TpValueToMatchNum: []map[string]int{{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}},
				MinMatchNum:       []int{3, 1},
			},
		},
		{
			name: "default constraints and a service",
			pod:  pod("p", "foo", "bar", "baz", "kar").Obj(),
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 3, TopologyKey: "node", WhenUnsatisfiable: dns},
				{MaxSkew: 2, TopologyKey: "node", WhenUnsatisfiable: sa},
				{MaxSkew: 5, TopologyKey: "rack", WhenUnsatisfiable: dns},
			}},
			services: []map[string]string{{"foo": "bar"}},
			want: &filterView{
				Constraints:       []constraintView{tsc(3, "node", "foo=bar"), tsc(5, "rack", "foo=bar")},
				TpValueToMatchNum: []map[string]int{{}, {}},
				MinMatchNum:       []int{maxInt32, maxInt32},
			},
		},
		{
			name: "default constraints and a service that doesn't match",
			pod:  pod("p", "foo", "bar").Obj(),
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 3, TopologyKey: "node", WhenUnsatisfiable: dns},
			}},
			services:   []map[string]string{{"baz": "kep"}},
			wantStatus: framework.NewStatus(framework.Skip),
		},
		{
			// Our snapshot has no Services or controllers: without a
			// DefaultSelectorLister the default constraints produce nothing.
			name: "default constraints without workload objects",
			pod:  pod("p", "foo", "bar").Obj(),
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 3, TopologyKey: "node", WhenUnsatisfiable: dns},
			}},
			wantStatus: framework.NewStatus(framework.Skip),
		},
		{
			name: "default constraints and a service, but pod has constraints",
			pod: pod("p", "foo", "bar", "baz", "tar").
				SpreadConstraint(1, "zone", dns, matchLabels("baz", "tar"), nil, nil, nil, nil).
				SpreadConstraint(2, "planet", sa, matchLabels("fot", "rok"), nil, nil, nil, nil).Obj(),
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 2, TopologyKey: "node", WhenUnsatisfiable: dns},
			}},
			services: []map[string]string{{"foo": "bar"}},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "zone", "baz=tar")},
				TpValueToMatchNum: []map[string]int{{}},
				MinMatchNum:       []int{maxInt32},
			},
		},
		{
			name: "default soft constraints and a service",
			pod:  pod("p", "foo", "bar").Obj(),
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 2, TopologyKey: "node", WhenUnsatisfiable: sa},
			}},
			services:   []map[string]string{{"foo": "bar"}},
			wantStatus: framework.NewStatus(framework.Skip),
		},
		{
			name: "NodeAffinityPolicy honored with labelSelectors",
			pod: withNodeSelector(pod("p", "foo", "").
				SpreadConstraint(1, "node", dns, barSelector, nil, nil, nil, nil).Obj(), map[string]string{"foo": ""}),
			nodes: []*corev1.Node{
				node("node-a", "node", "node-a", "foo", "").Obj(),
				node("node-b", "node", "node-b", "foo", "").Obj(),
				node("node-c", "node", "node-c", "bar", "").Obj(),
			},
			existingPods: []*corev1.Pod{
				pod("p-a", "bar", "").Node("node-a").Obj(),
				pod("p-b", "bar", "").Node("node-b").Obj(),
				pod("p-c", "bar", "").Node("node-b").Obj(),
				pod("p-d").Node("node-c").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "node", "bar")},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2}},
				MinMatchNum:       []int{1},
			},
		},
		{
			name: "NodeAffinityPolicy ignored with labelSelectors",
			pod: withNodeSelector(pod("p", "foo", "").
				SpreadConstraint(1, "node", dns, barSelector, nil, &ignorePolicy, nil, nil).Obj(), map[string]string{"foo": ""}),
			nodes: []*corev1.Node{
				node("node-a", "node", "node-a", "foo", "").Obj(),
				node("node-b", "node", "node-b", "foo", "").Obj(),
				node("node-c", "node", "node-c", "bar", "").Obj(),
			},
			existingPods: []*corev1.Pod{
				pod("p-a", "bar", "").Node("node-a").Obj(),
				pod("p-b", "bar", "").Node("node-b").Obj(),
				pod("p-c", "bar", "").Node("node-b").Obj(),
				pod("p-d").Node("node-c").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "node", "bar").affinity(ignorePolicy)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2, "node-c": 0}},
				MinMatchNum:       []int{0},
			},
		},
		{
			name: "NodeAffinityPolicy honored with nodeAffinity",
			pod: withNodeAffinity(pod("p", "foo", "").
				SpreadConstraint(1, "node", dns, barSelector, nil, nil, nil, nil).Obj(), "foo", corev1.NodeSelectorOpIn, ""),
			nodes: []*corev1.Node{
				node("node-a", "node", "node-a", "foo", "").Obj(),
				node("node-b", "node", "node-b", "foo", "").Obj(),
				node("node-c", "node", "node-c", "bar", "").Obj(),
			},
			existingPods: []*corev1.Pod{
				pod("p-a", "bar", "").Node("node-a").Obj(),
				pod("p-c", "bar", "").Node("node-b").Obj(),
				pod("p-d", "bar", "").Node("node-b").Obj(),
				pod("p-e").Node("node-c").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "node", "bar")},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2}},
				MinMatchNum:       []int{1},
			},
		},
		{
			name:  "NodeTaintsPolicy ignored",
			pod:   pod("p", "foo", "").SpreadConstraint(1, "node", dns, barSelector, nil, nil, nil, nil).Obj(),
			nodes: taintedNodeC(),
			existingPods: []*corev1.Pod{
				pod("p-a", "bar", "").Node("node-a").Obj(),
				pod("p-b", "bar", "").Node("node-b").Obj(),
				pod("p-c", "bar", "").Node("node-b").Obj(),
				pod("p-d").Node("node-c").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "node", "bar")},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2, "node-c": 0}},
				MinMatchNum:       []int{0},
			},
		},
		{
			name:  "NodeTaintsPolicy honored",
			pod:   pod("p", "foo", "").SpreadConstraint(1, "node", dns, barSelector, nil, nil, &honorPolicy, nil).Obj(),
			nodes: taintedNodeC(),
			existingPods: []*corev1.Pod{
				pod("p-a", "bar", "").Node("node-a").Obj(),
				pod("p-b", "bar", "").Node("node-b").Obj(),
				pod("p-c", "bar", "").Node("node-b").Obj(),
				pod("p-d").Node("node-c").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "node", "bar").taints(honorPolicy)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2}},
				MinMatchNum:       []int{1},
			},
		},
		{
			name: "NodeTaintsPolicy honored with tolerated taints",
			pod: pod("p", "foo", "").Toleration(corev1.TaintNodeUnschedulable, "", corev1.TaintEffectNoSchedule).
				SpreadConstraint(1, "node", dns, barSelector, nil, nil, &honorPolicy, nil).Obj(),
			nodes: taintedNodeC(),
			existingPods: []*corev1.Pod{
				pod("p-a", "bar", "").Node("node-a").Obj(),
				pod("p-b", "bar", "").Node("node-b").Obj(),
				pod("p-c", "bar", "").Node("node-b").Obj(),
				pod("p-d").Node("node-c").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "node", "bar").taints(honorPolicy)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2, "node-c": 0}},
				MinMatchNum:       []int{0},
			},
		},
		{
			name: "two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
			pod: withNodeSelector(pod("p", "foo", "").
				SpreadConstraint(1, "zone", dns, fooSelector, nil, &ignorePolicy, nil, nil).
				SpreadConstraint(1, "node", dns, fooSelector, nil, nil, &honorPolicy, nil).Obj(), map[string]string{"foo": ""}),
			nodes: []*corev1.Node{
				node("node-a", "zone", "zone1", "node", "node-a").Obj(),
				withUnschedulableTaint(node("node-b", "zone", "zone1", "node", "node-b", "foo", "")).Obj(),
				node("node-x", "zone", "zone2", "node", "node-x", "foo", "").Obj(),
				node("node-y", "zone", "zone2", "node", "node-y", "foo", "").Obj(),
			},
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-a2", "foo", "").Node("node-a").Obj(),
				pod("p-x1", "foo", "").Node("node-x").Obj(),
				pod("p-x2", "foo", "").Node("node-x").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "zone", "foo").affinity(ignorePolicy), tsc(1, "node", "foo").taints(honorPolicy)},
				TpValueToMatchNum: []map[string]int{{"zone1": 2, "zone2": 3}, {"node-x": 2, "node-y": 1}},
				MinMatchNum:       []int{2, 1},
			},
		},
		{
			name: "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
			pod: pod("p", "foo", "", "bar", "a").
				SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, []string{"bar"}).Obj(),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-a2", "foo", "", "bar", "a").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-y1", "foo", "", "bar", "a").Node("node-y").Obj(),
				pod("p-y2", "bar", "").Node("node-y").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "zone", "bar=a,foo")},
				TpValueToMatchNum: []map[string]int{{"zone1": 1, "zone2": 1}},
				MinMatchNum:       []int{1},
			},
		},
		{
			name: "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
			pod: pod("p", "foo", "a").
				SpreadConstraint(1, "zone", dns, exists(), nil, nil, nil, []string{"foo"}).Obj(),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "a").Node("node-a").Obj(),
				pod("p-a2", "foo", "a").Node("node-a").Obj(),
				pod("p-b1", "foo", "a").Node("node-b").Obj(),
				pod("p-y1", "foo", "a").Node("node-y").Obj(),
				pod("p-y2", "foo", "a").Node("node-y").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "zone", "foo=a")},
				TpValueToMatchNum: []map[string]int{{"zone1": 3, "zone2": 2}},
				MinMatchNum:       []int{2},
			},
		},
		{
			// What the API server stores when it merged matchLabelKeys itself
			// (MatchLabelKeysInPodTopologySpreadSelectorMerge): merging again
			// selects the same pods.
			name: "matchLabelKeys already merged by the API server",
			pod: pod("p", "foo", "", "bar", "a").
				SpreadConstraint(1, "zone", dns, mergedSelector(), nil, nil, nil, []string{"bar"}).Obj(),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-a2", "foo", "", "bar", "a").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-y1", "foo", "", "bar", "a").Node("node-y").Obj(),
				pod("p-y2", "bar", "").Node("node-y").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "zone", "bar=a,bar in (a),foo")},
				TpValueToMatchNum: []map[string]int{{"zone1": 1, "zone2": 1}},
				MinMatchNum:       []int{1},
			},
		},
		{
			name: "key in matchLabelKeys is ignored when LabelSelector is nil",
			pod: pod("p", "foo", "").
				SpreadConstraint(1, "zone", dns, nil, nil, nil, nil, []string{"bar"}).Obj(),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "a").Node("node-a").Obj(),
				pod("p-y1", "foo", "a").Node("node-y").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "zone", "<nothing>")},
				TpValueToMatchNum: []map[string]int{{"zone1": 0, "zone2": 0}},
				MinMatchNum:       []int{0},
			},
		},
		{
			name: "key in matchLabelKeys is ignored when it isn't exist in pod.labels",
			pod: pod("p", "foo", "").
				SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, []string{"bar"}).Obj(),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "a").Node("node-a").Obj(),
				pod("p-a2", "foo", "a").Node("node-a").Obj(),
				pod("p-b1", "foo", "a").Node("node-b").Obj(),
				pod("p-y1", "foo", "a").Node("node-y").Obj(),
				pod("p-y2", "foo", "a").Node("node-y").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "zone", "foo")},
				TpValueToMatchNum: []map[string]int{{"zone1": 3, "zone2": 2}},
				MinMatchNum:       []int{2},
			},
		},
		{
			name: "two spreadConstraints with the same topologyKey",
			pod: pod("p", "foo", "", "bar", "").
				SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).
				SpreadConstraint(1, "zone", dns, barSelector, nil, nil, nil, nil).Obj(),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "", "bar", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-x1", "bar", "").Node("node-x").Obj(),
				pod("p-y1", "foo", "", "bar", "").Node("node-y").Obj(),
				pod("p-y2", "bar", "").Node("node-y").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "zone", "foo"), tsc(1, "zone", "bar")},
				TpValueToMatchNum: []map[string]int{{"zone1": 2, "zone2": 1}, {"zone1": 1, "zone2": 3}},
				MinMatchNum:       []int{1, 1},
			},
		},
		{
			name: "terminating pods and nodes missing a key do not count",
			pod: pod("p", "foo", "").
				SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).
				SpreadConstraint(1, "node", dns, fooSelector, nil, nil, nil, nil).Obj(),
			nodes: []*corev1.Node{
				node("node-a", "zone", "zone1", "node", "node-a").Obj(),
				node("node-b", "zone", "zone1").Obj(),
				node("node-x", "zone", "zone2", "node", "node-x").Obj(),
			},
			existingPods: []*corev1.Pod{
				terminating(pod("p-a1", "foo", "").Node("node-a").Obj()),
				pod("p-a2", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-x1", "foo", "").Node("node-x").Obj(),
			},
			want: &filterView{
				Constraints:       []constraintView{tsc(1, "zone", "foo"), tsc(1, "node", "foo")},
				TpValueToMatchNum: []map[string]int{{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-x": 1}},
				MinMatchNum:       []int{1, 1},
			},
		},
		{
			name:       "skip if not specified",
			pod:        pod("p", "foo", "").Obj(),
			nodes:      []*corev1.Node{node("node-a", "zone", "zone1", "node", "node-a").Obj()},
			wantStatus: framework.NewStatus(framework.Skip),
		},
		{
			// The system defaults are soft: they never filter.
			name:       "system defaults are never hard",
			pod:        pod("p", "foo", "").Obj(),
			args:       systemArgs,
			services:   []map[string]string{{"foo": ""}},
			nodes:      []*corev1.Node{node("node-a", "zone", "zone1", "node", "node-a").Obj()},
			wantStatus: framework.NewStatus(framework.Skip),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if args == nil {
				args = listArgs
			}
			f := newFixture(t, args, tt.nodes, tt.existingPods, tt.services...)
			state := framework.NewCycleState()
			_, status := f.pl.PreFilter(context.Background(), state, tt.pod, nil)
			if !tt.wantStatus.Equal(status) {
				t.Fatalf("PreFilter status = %v, want %v", status, tt.wantStatus)
			}
			if !status.IsSuccess() {
				return
			}
			s, err := getPreFilterState(state)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(*tt.want, viewFilterState(s)); diff != "" {
				t.Errorf("PreFilter state (-want +got):\n%s", diff)
			}
		})
	}
}

func taintedNodeC() []*corev1.Node {
	return []*corev1.Node{
		node("node-a", "node", "node-a").Obj(),
		node("node-b", "node", "node-b").Obj(),
		withUnschedulableTaint(node("node-c", "node", "node-c", "bar", "")).Obj(),
	}
}

// mergedSelector is foo exists AND bar in (a), as the API server stores a
// selector {foo exists} with matchLabelKeys [bar] for a pod labelled bar=a.
func mergedSelector() *metav1.LabelSelector {
	s := exists("foo")
	s.MatchExpressions = append(s.MatchExpressions, metav1.LabelSelectorRequirement{Key: "bar", Operator: "In", Values: []string{"a"}})
	return s
}

func TestPreFilterErrors(t *testing.T) {
	f := newFixture(t, listArgs, fourNodes(), nil)
	bad := pod("p", "foo", "").SpreadConstraint(1, "zone", dns,
		&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "foo", Operator: "Bogus"}}}, nil, nil, nil, nil).Obj()
	_, status := f.pl.PreFilter(context.Background(), framework.NewCycleState(), bad, nil)
	if status.Code() != framework.Error {
		t.Fatalf("PreFilter with a bad selector = %v, want Error", status)
	}
	const prefix = "get constraints from pod: obtaining pod's hard topology spread constraints: "
	if got := status.Message(); len(got) < len(prefix) || got[:len(prefix)] != prefix {
		t.Errorf("PreFilter error = %q, want prefix %q", got, prefix)
	}

	// Filter without PreFilter is an error, as in kube-scheduler.
	got := f.pl.Filter(context.Background(), framework.NewCycleState(), bad, f.nodeInfo(t, "node-a"))
	if got.Code() != framework.Error {
		t.Errorf("Filter without PreFilter = %v, want Error", got)
	}
}

// wantFilter maps nodes to the code Filter returns; the reason follows
// from the code.
type wantFilter map[string]framework.Code

func filterStatus(code framework.Code) *framework.Status {
	switch code {
	case framework.Unschedulable:
		return framework.NewStatus(code, ErrReasonConstraintsNotMatch)
	case framework.UnschedulableAndUnresolvable:
		return framework.NewStatus(code, ErrReasonNodeLabelNotMatch)
	}
	return nil
}

type filterCase struct {
	name         string
	pod          *corev1.Pod
	nodes        []*corev1.Node
	existingPods []*corev1.Pod
	want         wantFilter
}

func runFilterCases(t *testing.T, tests []filterCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, listArgs, tt.nodes, tt.existingPods)
			state := framework.NewCycleState()
			if _, s := f.pl.PreFilter(context.Background(), state, tt.pod, nil); !s.IsSuccess() {
				t.Fatalf("PreFilter: %v", s)
			}
			for _, n := range tt.nodes {
				got := f.pl.Filter(context.Background(), state, tt.pod, f.nodeInfo(t, n.Name))
				if want := filterStatus(tt.want[n.Name]); !want.Equal(got) {
					t.Errorf("Filter(%s) = %v, want %v", n.Name, got, want)
				}
			}
		})
	}
}

const (
	ok            = framework.Success
	unschedulable = framework.Unschedulable
	unresolvable  = framework.UnschedulableAndUnresolvable
)

// Cases from kube-scheduler's TestSingleConstraint. As there, only this
// plugin runs: nodes other filters would reject may pass here.
func TestFilterSingleConstraint(t *testing.T) {
	spread2103 := []*corev1.Pod{
		pod("p-a1", "foo", "").Node("node-a").Obj(),
		pod("p-a2", "foo", "").Node("node-a").Obj(),
		pod("p-b1", "foo", "").Node("node-b").Obj(),
		pod("p-y1", "foo", "").Node("node-y").Obj(),
		pod("p-y2", "foo", "").Node("node-y").Obj(),
		pod("p-y3", "foo", "").Node("node-y").Obj(),
	}
	threeNodes := func() []*corev1.Node {
		return []*corev1.Node{node("node-a", "node", "node-a").Obj(), node("node-b", "node", "node-b").Obj(), node("node-c", "node", "node-c").Obj()}
	}
	spread221 := []*corev1.Pod{
		pod("p-a1", "foo", "").Node("node-a").Obj(),
		pod("p-a2", "foo", "").Node("node-a").Obj(),
		pod("p-b1", "foo", "").Node("node-b").Obj(),
		pod("p-b2", "foo", "").Node("node-b").Obj(),
		pod("p-c1", "foo", "").Node("node-c").Obj(),
	}
	zone21 := []*corev1.Pod{
		pod("p-b1", "foo", "").Node("node-a").Obj(),
		pod("p-b2", "foo", "").Node("node-b").Obj(),
		pod("p-y1", "foo", "").Node("node-y").Obj(),
	}
	inclusionNodes := func(taintY bool) []*corev1.Node {
		y := node("node-y", "node", "node-y")
		if taintY {
			y = withUnschedulableTaint(y)
		}
		return []*corev1.Node{
			node("node-a", "node", "node-a", "foo", "").Obj(),
			node("node-b", "node", "node-b", "foo", "").Obj(),
			node("node-x", "node", "node-x", "foo", "").Obj(),
			y.Obj(),
		}
	}
	runFilterCases(t, []filterCase{
		{
			name:  "no existing pods",
			pod:   pod("p", "foo", "").SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).Obj(),
			nodes: fourNodes(),
			want:  wantFilter{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": ok},
		},
		{
			name:  "no existing pods, incoming pod doesn't match itself",
			pod:   pod("p", "foo", "").SpreadConstraint(1, "zone", dns, barSelector, nil, nil, nil, nil).Obj(),
			nodes: fourNodes(),
			want:  wantFilter{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": ok},
		},
		{
			name:  "existing pods in a different namespace do not count",
			pod:   pod("p", "foo", "").SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).Obj(),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Namespace("ns1").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Namespace("ns2").Node("node-a").Obj(),
				pod("p-x1", "foo", "").Node("node-x").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
			},
			want: wantFilter{"node-a": ok, "node-b": ok, "node-x": unschedulable, "node-y": unschedulable},
		},
		{
			name:  "existing pods do not match null selector",
			pod:   pod("p", "foo", "").SpreadConstraint(1, "zone", dns, nil, nil, nil, nil, nil).Obj(),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-x1", "foo", "").Node("node-x").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
			},
			want: wantFilter{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": ok},
		},
		{
			name:  "pods spread across zones as 3/3, all nodes fit",
			pod:   pod("p", "foo", "").SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).Obj(),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-a2", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
				pod("p-y2", "foo", "").Node("node-y").Obj(),
				pod("p-y3", "foo", "").Node("node-y").Obj(),
			},
			want: wantFilter{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": ok},
		},
		{
			name: "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
			pod:  pod("p", "foo", "").SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).Obj(),
			nodes: []*corev1.Node{
				node("node-a", "zone", "zone1", "node", "node-a").Obj(),
				node("node-b", "zon", "zone1", "node", "node-b").Obj(),
				node("node-x", "zone", "zone2", "node", "node-x").Obj(),
				node("node-y", "zone", "zone2", "node", "node-y").Obj(),
			},
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-x1", "foo", "").Node("node-x").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
			},
			want: wantFilter{"node-a": ok, "node-b": unresolvable, "node-x": unschedulable, "node-y": unschedulable},
		},
		{
			name: "pod cannot be scheduled as all nodes don't have label 'rack'",
			pod:  pod("p", "foo", "").SpreadConstraint(1, "rack", dns, fooSelector, nil, nil, nil, nil).Obj(),
			nodes: []*corev1.Node{
				node("node-a", "zone", "zone1", "node", "node-a").Obj(),
				node("node-x", "zone", "zone2", "node", "node-x").Obj(),
			},
			want: wantFilter{"node-a": unresolvable, "node-x": unresolvable},
		},
		{
			name:         "pods spread across nodes as 2/1/0/3, only node-x fits",
			pod:          pod("p", "foo", "").SpreadConstraint(1, "node", dns, fooSelector, nil, nil, nil, nil).Obj(),
			nodes:        fourNodes(),
			existingPods: spread2103,
			want:         wantFilter{"node-a": unschedulable, "node-b": unschedulable, "node-x": ok, "node-y": unschedulable},
		},
		{
			name:         "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
			pod:          pod("p", "foo", "").SpreadConstraint(2, "node", dns, fooSelector, nil, nil, nil, nil).Obj(),
			nodes:        fourNodes(),
			existingPods: spread2103,
			want:         wantFilter{"node-a": unschedulable, "node-b": ok, "node-x": ok, "node-y": unschedulable},
		},
		{
			name:         "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
			pod:          pod("p", "bar", "").SpreadConstraint(1, "node", dns, fooSelector, nil, nil, nil, nil).Obj(),
			nodes:        fourNodes(),
			existingPods: spread2103,
			want:         wantFilter{"node-a": unschedulable, "node-b": ok, "node-x": ok, "node-y": unschedulable},
		},
		{
			name: "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
			pod: withNodeAffinity(pod("p", "foo", "").SpreadConstraint(1, "node", dns, fooSelector, nil, nil, nil, nil).Obj(),
				"node", corev1.NodeSelectorOpIn, "node-a", "node-y"),
			nodes:        fourNodes(),
			existingPods: spread2103,
			want:         wantFilter{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": unschedulable},
		},
		{
			name:  "terminating Pods should be excluded",
			pod:   pod("p", "foo", "").SpreadConstraint(1, "node", dns, fooSelector, nil, nil, nil, nil).Obj(),
			nodes: []*corev1.Node{node("node-a", "node", "node-a").Obj(), node("node-b", "node", "node-b").Obj()},
			existingPods: []*corev1.Pod{
				terminating(pod("p-a", "foo", "").Node("node-a").Obj()),
				pod("p-b", "foo", "").Node("node-b").Obj(),
			},
			want: wantFilter{"node-a": ok, "node-b": unschedulable},
		},
		{
			name: "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
			pod: withNodeAffinity(pod("p", "foo", "").SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).Obj(),
				"node", corev1.NodeSelectorOpNotIn, "node-b"),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-b2", "foo", "").Node("node-b").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
			},
			want: wantFilter{"node-a": ok, "node-b": ok, "node-x": unschedulable, "node-y": unschedulable},
		},
		{
			name:         "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits",
			pod:          pod("p", "foo", "").SpreadConstraint(2, "node", dns, fooSelector, ptrTo[int32](4), nil, nil, nil).Obj(),
			nodes:        threeNodes(),
			existingPods: spread221,
			want:         wantFilter{"node-a": unschedulable, "node-b": unschedulable, "node-c": ok},
		},
		{
			name:         "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit",
			pod:          pod("p", "foo", "").SpreadConstraint(2, "node", dns, fooSelector, ptrTo[int32](2), nil, nil, nil).Obj(),
			nodes:        threeNodes(),
			existingPods: spread221,
			want:         wantFilter{"node-a": ok, "node-b": ok, "node-c": ok},
		},
		{
			name:         "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit",
			pod:          pod("p", "foo", "").SpreadConstraint(2, "zone", dns, fooSelector, ptrTo[int32](3), nil, nil, nil).Obj(),
			nodes:        fourNodes(),
			existingPods: zone21,
			want:         wantFilter{"node-a": unschedulable, "node-b": unschedulable, "node-x": ok, "node-y": ok},
		},
		{
			name:         "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
			pod:          pod("p", "foo", "").SpreadConstraint(2, "zone", dns, fooSelector, ptrTo[int32](1), nil, nil, nil).Obj(),
			nodes:        fourNodes(),
			existingPods: zone21,
			want:         wantFilter{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": ok},
		},
		{
			name: "NodeAffinityPolicy honored with labelSelectors",
			pod: withNodeSelector(pod("p", "foo", "").SpreadConstraint(1, "node", dns, fooSelector, nil, nil, nil, nil).Obj(),
				map[string]string{"foo": ""}),
			nodes:        inclusionNodes(false),
			existingPods: zone21,
			want:         wantFilter{"node-a": unschedulable, "node-b": unschedulable, "node-x": ok, "node-y": ok},
		},
		{
			name: "NodeAffinityPolicy ignored with labelSelectors",
			pod: withNodeSelector(pod("p", "foo", "").SpreadConstraint(1, "node", dns, fooSelector, nil, &ignorePolicy, nil, nil).Obj(),
				map[string]string{"foo": ""}),
			nodes:        inclusionNodes(false),
			existingPods: zone21,
			want:         wantFilter{"node-a": unschedulable, "node-b": unschedulable, "node-x": ok, "node-y": unschedulable},
		},
		{
			name: "NodeAffinityPolicy honored with nodeAffinity",
			pod: withNodeAffinity(pod("p", "foo", "").SpreadConstraint(1, "node", dns, fooSelector, nil, nil, nil, nil).Obj(),
				"foo", corev1.NodeSelectorOpIn, ""),
			nodes:        inclusionNodes(false),
			existingPods: zone21,
			want:         wantFilter{"node-a": unschedulable, "node-b": unschedulable, "node-x": ok, "node-y": ok},
		},
		{
			name: "NodeAffinityPolicy ignored with nodeAffinity",
			pod: withNodeAffinity(pod("p", "foo", "").SpreadConstraint(1, "node", dns, fooSelector, nil, &ignorePolicy, nil, nil).Obj(),
				"foo", corev1.NodeSelectorOpIn, ""),
			nodes:        inclusionNodes(false),
			existingPods: zone21,
			want:         wantFilter{"node-a": unschedulable, "node-b": unschedulable, "node-x": ok, "node-y": unschedulable},
		},
		{
			name:         "NodeTaintsPolicy honored",
			pod:          pod("p", "foo", "").SpreadConstraint(1, "node", dns, fooSelector, nil, nil, &honorPolicy, nil).Obj(),
			nodes:        inclusionNodes(true),
			existingPods: zone21,
			want:         wantFilter{"node-a": unschedulable, "node-b": unschedulable, "node-x": ok, "node-y": ok},
		},
		{
			name:         "NodeTaintsPolicy ignored",
			pod:          pod("p", "foo", "").SpreadConstraint(1, "node", dns, fooSelector, nil, nil, nil, nil).Obj(),
			nodes:        inclusionNodes(true),
			existingPods: zone21,
			want:         wantFilter{"node-a": unschedulable, "node-b": unschedulable, "node-x": ok, "node-y": unschedulable},
		},
	})
}

// Cases from kube-scheduler's TestMultipleConstraints.
func TestFilterMultipleConstraints(t *testing.T) {
	spread := func(sel1, sel2 string, lbls ...string) *corev1.Pod {
		return pod("p", lbls...).
			SpreadConstraint(1, "zone", dns, exists(sel1), nil, nil, nil, nil).
			SpreadConstraint(1, "node", dns, exists(sel2), nil, nil, nil, nil).Obj()
	}
	runFilterCases(t, []filterCase{
		{
			name:  "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
			pod:   spread("foo", "foo", "foo", ""),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-a2", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
				pod("p-y2", "foo", "").Node("node-y").Obj(),
				pod("p-y3", "foo", "").Node("node-y").Obj(),
			},
			want: wantFilter{"node-a": unschedulable, "node-b": unschedulable, "node-x": ok, "node-y": unschedulable},
		},
		{
			name:  "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
			pod:   spread("foo", "foo", "foo", ""),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-a2", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
				pod("p-y2", "foo", "").Node("node-y").Obj(),
				pod("p-y3", "foo", "").Node("node-y").Obj(),
				pod("p-y4", "foo", "").Node("node-y").Obj(),
			},
			want: wantFilter{"node-a": unschedulable, "node-b": unschedulable, "node-x": unschedulable, "node-y": unschedulable},
		},
		{
			name:  "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
			pod:   spread("foo", "bar", "foo", "", "bar", ""),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-y1", "bar", "").Node("node-y").Obj(),
			},
			want: wantFilter{"node-a": unschedulable, "node-b": unschedulable, "node-x": ok, "node-y": unschedulable},
		},
		{
			name:  "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
			pod:   spread("foo", "bar", "foo", "", "bar", ""),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-a2", "foo", "", "bar", "").Node("node-a").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
				pod("p-y2", "foo", "", "bar", "").Node("node-y").Obj(),
				pod("p-y3", "foo", "").Node("node-y").Obj(),
			},
			want: wantFilter{"node-a": unschedulable, "node-b": ok, "node-x": unschedulable, "node-y": unschedulable},
		},
		{
			name:  "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
			pod:   spread("foo", "bar", "bar", ""),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-x1", "bar", "").Node("node-x").Obj(),
				pod("p-y1", "bar", "").Node("node-y").Obj(),
			},
			want: wantFilter{"node-a": ok, "node-b": ok, "node-x": unschedulable, "node-y": unschedulable},
		},
		{
			name: "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
			pod:  spread("foo", "foo", "foo", ""),
			nodes: []*corev1.Node{
				node("node-a", "zone", "zone1", "node", "node-a").Obj(),
				node("node-b", "zone", "zone1", "node", "node-b").Obj(),
				node("node-x", "zone", "zone2").Obj(),
				node("node-y", "zone", "zone2", "node", "node-y").Obj(),
			},
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-y3", "foo", "").Node("node-y").Obj(),
			},
			want: wantFilter{"node-a": unschedulable, "node-b": ok, "node-x": unresolvable, "node-y": unschedulable},
		},
		{
			name: "two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
			pod: withNodeSelector(pod("p", "foo", "").
				SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, &honorPolicy, nil).
				SpreadConstraint(1, "node", dns, fooSelector, nil, &ignorePolicy, nil, nil).Obj(), map[string]string{"foo": ""}),
			nodes: []*corev1.Node{
				node("node-a", "zone", "zone1", "node", "node-a", "foo", "").Obj(),
				node("node-b", "zone", "zone1", "node", "node-b").Obj(),
				node("node-x", "zone", "zone2", "node", "node-x", "foo", "").Obj(),
				withUnschedulableTaint(node("node-y", "zone", "zone2", "node", "node-y", "foo", "")).Obj(),
			},
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "").Node("node-b").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
			},
			want: wantFilter{"node-a": unschedulable, "node-b": unschedulable, "node-x": ok, "node-y": unschedulable},
		},
		{
			name: "two Constraints on zone, spreads = [3/3, 2/1]",
			pod: pod("p", "foo", "", "bar", "").
				SpreadConstraint(1, "zone", dns, barSelector, nil, nil, nil, nil).
				SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).Obj(),
			nodes: fourNodes(),
			existingPods: []*corev1.Pod{
				pod("p-a1", "foo", "", "bar", "").Node("node-a").Obj(),
				pod("p-a2", "foo", "").Node("node-a").Obj(),
				pod("p-b1", "foo", "", "bar", "").Node("node-b").Obj(),
				pod("p-y1", "foo", "").Node("node-y").Obj(),
				pod("p-y2", "foo", "", "bar", "").Node("node-y").Obj(),
				pod("p-y3", "foo", "").Node("node-y").Obj(),
			},
			want: wantFilter{"node-a": unschedulable, "node-b": unschedulable, "node-x": ok, "node-y": ok},
		},
	})
}

// A pod with only soft constraints skips PreFilter, and Filter accepts
// every node even when the caller does not honour Skip.
func TestFilterAfterSkip(t *testing.T) {
	f := newFixture(t, listArgs, fourNodes(), nil)
	p := pod("p", "foo", "").SpreadConstraint(1, "zone", sa, fooSelector, nil, nil, nil, nil).Obj()
	state := framework.NewCycleState()
	if _, s := f.pl.PreFilter(context.Background(), state, p, nil); !s.IsSkip() {
		t.Fatalf("PreFilter = %v, want Skip", s)
	}
	if s := f.pl.Filter(context.Background(), state, p, f.nodeInfo(t, "node-a")); !s.IsSuccess() {
		t.Errorf("Filter = %v, want Success", s)
	}
	if s := f.pl.AddPod(context.Background(), state, p, framework.NewPodInfo(pod("q", "foo", "").Obj()), f.nodeInfo(t, "node-a")); !s.IsSuccess() {
		t.Errorf("AddPod = %v, want Success", s)
	}
}

func TestPreFilterNodesComeFromTheHandle(t *testing.T) {
	// PreFilter counts the whole snapshot even if handed fewer nodes.
	f := newFixture(t, listArgs, fourNodes(), []*corev1.Pod{pod("p-y1", "foo", "").Node("node-y").Obj()})
	p := pod("p", "foo", "").SpreadConstraint(1, "zone", dns, fooSelector, nil, nil, nil, nil).Obj()
	state := framework.NewCycleState()
	if _, s := f.pl.PreFilter(context.Background(), state, p, []*framework.NodeInfo{f.nodeInfo(t, "node-a")}); !s.IsSuccess() {
		t.Fatal(s)
	}
	s, _ := getPreFilterState(state)
	if diff := cmp.Diff([]map[string]int{{"zone1": 0, "zone2": 1}}, s.tpValueToMatchNum); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

func ExamplePodTopologySpread_Filter() {
	nodes := []*corev1.Node{node("n1", "zone", "a").Obj(), node("n2", "zone", "b").Obj()}
	pods := []*corev1.Pod{pod("w-0", "app", "w").Node("n1").Obj()}
	h := framework.NewSnapshotHandle(framework.BuildNodeInfos(nodes, pods), framework.SnapshotObjects{}, 1)
	pl, _ := New(nil, h)
	p := pod("w-1", "app", "w").SpreadConstraint(1, "zone", dns, matchLabels("app", "w"), nil, nil, nil, nil).Obj()
	state := framework.NewCycleState()
	pl.(framework.PreFilterPlugin).PreFilter(context.Background(), state, p, nil)
	for _, ni := range h.List() {
		fmt.Printf("%s: %v\n", ni.Name(), pl.(framework.FilterPlugin).Filter(context.Background(), state, p, ni))
	}
	// Output:
	// n1: Unschedulable: node(s) didn't match pod topology spread constraints
	// n2: Success
}
