package nodeaffinity_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	plugin "github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeaffinity"
)

func expr(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func nameIn(names ...string) corev1.NodeSelectorRequirement {
	return expr(metav1.ObjectNameField, corev1.NodeSelectorOpIn, names...)
}

func labelTerm(reqs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: reqs}
}

func fieldTerm(reqs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchFields: reqs}
}

// podRequiring returns a pod whose required node affinity has these terms.
func podRequiring(terms ...corev1.NodeSelectorTerm) *corev1.Pod {
	p := testutil.MakePod().Name("p").Obj()
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
	}}
	return p
}

func podSelecting(selector map[string]string) *corev1.Pod {
	p := testutil.MakePod().Name("p").Obj()
	p.Spec.NodeSelector = selector
	return p
}

func podPreferring(terms ...corev1.PreferredSchedulingTerm) *corev1.Pod {
	p := testutil.MakePod().Name("p").Obj()
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: terms}}
	return p
}

func node(name string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func newPlugin(t testing.TB, args runtime.Object) *plugin.NodeAffinity {
	t.Helper()
	pl, err := plugin.New(args, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return pl.(*plugin.NodeAffinity)
}

func addedRequired(terms ...corev1.NodeSelectorTerm) *configv1.NodeAffinityArgs {
	return &configv1.NodeAffinityArgs{AddedAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
	}}
}

type filterCase struct {
	name             string
	pod              *corev1.Pod
	nodeName         string
	labels           map[string]string
	args             *configv1.NodeAffinityArgs
	skipPreFilter    bool
	wantPreFilter    *framework.Status
	wantPreFilterRes *framework.PreFilterResult
	want             *framework.Status
}

// filterCases are kube-scheduler's TestNodeAffinity cases.
func filterCases() []filterCase {
	rejected := framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't match Pod's node affinity/selector").WithPlugin(plugin.Name)
	return []filterCase{
		{name: "missing labels", pod: podSelecting(map[string]string{"foo": "bar"}), want: rejected},
		{name: "same labels", pod: podSelecting(map[string]string{"foo": "bar"}), labels: map[string]string{"foo": "bar"}},
		{name: "node labels are superset", pod: podSelecting(map[string]string{"foo": "bar"}), labels: map[string]string{"foo": "bar", "baz": "blah"}},
		{name: "node labels are subset", pod: podSelecting(map[string]string{"foo": "bar", "baz": "blah"}), labels: map[string]string{"foo": "bar"}, want: rejected},
		{
			name:   "matchExpressions with In matches",
			pod:    podRequiring(labelTerm(expr("foo", corev1.NodeSelectorOpIn, "bar", "value2"))),
			labels: map[string]string{"foo": "bar"},
		},
		{
			name:   "matchExpressions with Gt matches",
			pod:    podRequiring(labelTerm(expr("kernel-version", corev1.NodeSelectorOpGt, "0204"))),
			labels: map[string]string{"kernel-version": "0206"},
		},
		{
			name:   "matchExpressions with NotIn matches",
			pod:    podRequiring(labelTerm(expr("mem-type", corev1.NodeSelectorOpNotIn, "DDR", "DDR2"))),
			labels: map[string]string{"mem-type": "DDR3"},
		},
		{
			name:   "matchExpressions with Exists matches",
			pod:    podRequiring(labelTerm(expr("GPU", corev1.NodeSelectorOpExists))),
			labels: map[string]string{"GPU": "NVIDIA-GRID-K1"},
		},
		{
			name:   "affinity that does not match the node's labels",
			pod:    podRequiring(labelTerm(expr("foo", corev1.NodeSelectorOpIn, "value1", "value2"))),
			labels: map[string]string{"foo": "bar"},
			want:   rejected,
		},
		{
			name:   "an empty matchExpressions term matches no node",
			pod:    podRequiring(labelTerm()),
			labels: map[string]string{"foo": "bar"},
			want:   rejected,
		},
		{
			name:          "no affinity: PreFilter skips",
			pod:           testutil.MakePod().Obj(),
			labels:        map[string]string{"foo": "bar"},
			wantPreFilter: framework.NewStatus(framework.Skip),
		},
		{
			name: "affinity with a nil required node selector: PreFilter skips",
			pod: func() *corev1.Pod {
				p := testutil.MakePod().Obj()
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
				return p
			}(),
			labels:        map[string]string{"foo": "bar"},
			wantPreFilter: framework.NewStatus(framework.Skip),
		},
		{
			name: "several matchExpressions ANDed that match",
			pod: podRequiring(labelTerm(
				expr("GPU", corev1.NodeSelectorOpExists),
				expr("GPU", corev1.NodeSelectorOpNotIn, "AMD", "INTER"),
			)),
			labels: map[string]string{"GPU": "NVIDIA-GRID-K1"},
		},
		{
			name: "several matchExpressions ANDed that do not match",
			pod: podRequiring(labelTerm(
				expr("GPU", corev1.NodeSelectorOpExists),
				expr("GPU", corev1.NodeSelectorOpIn, "AMD", "INTER"),
			)),
			labels: map[string]string{"GPU": "NVIDIA-GRID-K1"},
			want:   rejected,
		},
		{
			name: "several terms ORed",
			pod: podRequiring(
				labelTerm(expr("foo", corev1.NodeSelectorOpIn, "bar", "value2")),
				labelTerm(expr("diffkey", corev1.NodeSelectorOpIn, "wrong", "value2")),
			),
			labels: map[string]string{"foo": "bar"},
		},
		{
			name: "affinity and nodeSelector both match",
			pod: func() *corev1.Pod {
				p := podRequiring(labelTerm(expr("foo", corev1.NodeSelectorOpExists)))
				p.Spec.NodeSelector = map[string]string{"foo": "bar"}
				return p
			}(),
			labels: map[string]string{"foo": "bar"},
		},
		{
			name: "affinity matches but nodeSelector does not",
			pod: func() *corev1.Pod {
				p := podRequiring(labelTerm(expr("foo", corev1.NodeSelectorOpExists)))
				p.Spec.NodeSelector = map[string]string{"foo": "bar"}
				return p
			}(),
			labels: map[string]string{"foo": "barrrrrr"},
			want:   rejected,
		},
		{
			name:   "an invalid value in a term matches nothing",
			pod:    podRequiring(labelTerm(expr("foo", corev1.NodeSelectorOpNotIn, "invalid value: ___@#$%^"))),
			labels: map[string]string{"foo": "bar"},
			want:   rejected,
		},
		{
			name:             "matchFields In that matches the node",
			pod:              podRequiring(fieldTerm(nameIn("node1"))),
			nodeName:         "node1",
			wantPreFilterRes: &framework.PreFilterResult{NodeNames: sets.New("node1")},
		},
		{
			name:             "matchFields In that does not match the node",
			pod:              podRequiring(fieldTerm(nameIn("node1"))),
			nodeName:         "node2",
			wantPreFilterRes: &framework.PreFilterResult{NodeNames: sets.New("node1")},
			want:             rejected,
		},
		{
			name: "two terms: matchFields does not match, but matchExpressions does",
			pod: podRequiring(
				fieldTerm(nameIn("node1"), nameIn("node2")),
				labelTerm(expr("foo", corev1.NodeSelectorOpIn, "bar")),
			),
			nodeName: "node2",
			labels:   map[string]string{"foo": "bar"},
		},
		{
			name: "one term: matchFields does not match, but matchExpressions does",
			pod: podRequiring(corev1.NodeSelectorTerm{
				MatchFields:      []corev1.NodeSelectorRequirement{nameIn("node1")},
				MatchExpressions: []corev1.NodeSelectorRequirement{expr("foo", corev1.NodeSelectorOpIn, "bar")},
			}),
			nodeName:         "node2",
			labels:           map[string]string{"foo": "bar"},
			wantPreFilterRes: &framework.PreFilterResult{NodeNames: sets.New("node1")},
			want:             rejected,
		},
		{
			name: "one term: matchFields and matchExpressions both match",
			pod: podRequiring(corev1.NodeSelectorTerm{
				MatchFields:      []corev1.NodeSelectorRequirement{nameIn("node1")},
				MatchExpressions: []corev1.NodeSelectorRequirement{expr("foo", corev1.NodeSelectorOpIn, "bar")},
			}),
			nodeName:         "node1",
			labels:           map[string]string{"foo": "bar"},
			wantPreFilterRes: &framework.PreFilterResult{NodeNames: sets.New("node1")},
		},
		{
			name: "two terms: neither matches",
			pod: podRequiring(
				fieldTerm(nameIn("node1")),
				labelTerm(expr("foo", corev1.NodeSelectorOpIn, "not-match-to-bar")),
			),
			nodeName: "node2",
			labels:   map[string]string{"foo": "bar"},
			want:     rejected,
		},
		{
			name:             "two terms of node names: their union",
			pod:              podRequiring(fieldTerm(nameIn("node1")), fieldTerm(nameIn("node2"))),
			nodeName:         "node2",
			wantPreFilterRes: &framework.PreFilterResult{NodeNames: sets.New("node1", "node2")},
		},
		{
			name:          "two conflicting matchFields requirements",
			pod:           podRequiring(fieldTerm(nameIn("node1"), nameIn("node2"))),
			nodeName:      "node2",
			labels:        map[string]string{"foo": "bar"},
			wantPreFilter: framework.NewStatus(framework.UnschedulableAndUnresolvable, "pod affinity terms conflict"),
			want:          rejected,
		},
		{
			name:     "matches addedAffinity and the pod's affinity",
			pod:      podRequiring(labelTerm(expr("zone", corev1.NodeSelectorOpIn, "foo"))),
			nodeName: "node2",
			labels:   map[string]string{"zone": "foo"},
			args:     addedRequired(fieldTerm(nameIn("node2"))),
		},
		{
			name:     "matches addedAffinity but not the pod's affinity",
			pod:      podRequiring(labelTerm(expr("zone", corev1.NodeSelectorOpIn, "bar"))),
			nodeName: "node2",
			labels:   map[string]string{"zone": "foo"},
			args:     addedRequired(fieldTerm(nameIn("node2"))),
			want:     rejected,
		},
		{
			name:     "does not match addedAffinity",
			pod:      testutil.MakePod().Obj(),
			nodeName: "node2",
			labels:   map[string]string{"zone": "foo"},
			args:     addedRequired(labelTerm(expr("zone", corev1.NodeSelectorOpIn, "bar"))),
			want:     framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't match scheduler-enforced node affinity").WithPlugin(plugin.Name),
		},
		{
			name:          "nodeSelector matches even if PreFilter is not called",
			pod:           podSelecting(map[string]string{"foo": "bar"}),
			labels:        map[string]string{"foo": "bar", "baz": "blah"},
			skipPreFilter: true,
		},
		{
			name: "node affinity matches even if PreFilter is not called",
			pod: podRequiring(labelTerm(
				expr("GPU", corev1.NodeSelectorOpExists),
				expr("GPU", corev1.NodeSelectorOpNotIn, "AMD", "INTER"),
			)),
			labels:        map[string]string{"GPU": "NVIDIA-GRID-K1"},
			skipPreFilter: true,
		},
		{
			name:          "node affinity rejects even if PreFilter is not called",
			pod:           podRequiring(labelTerm(expr("GPU", corev1.NodeSelectorOpIn, "AMD"))),
			labels:        map[string]string{"GPU": "NVIDIA-GRID-K1"},
			skipPreFilter: true,
			want:          rejected,
		},
		// Beyond kube-scheduler's table: the corners of term parsing.
		{
			name:   "an empty nodeSelector map does not skip and matches every node",
			pod:    podSelecting(map[string]string{}),
			labels: map[string]string{"foo": "bar"},
		},
		{
			name:   "no terms at all match no node",
			pod:    podRequiring(),
			labels: map[string]string{"foo": "bar"},
			want:   rejected,
		},
		{
			name: "an invalid term does not spoil a valid one",
			pod: podRequiring(
				labelTerm(expr("foo", "BadOp", "bar")),
				labelTerm(expr("foo", corev1.NodeSelectorOpIn, "bar")),
			),
			labels: map[string]string{"foo": "bar"},
		},
		{
			name:     "matchFields with two values is invalid",
			pod:      podRequiring(fieldTerm(nameIn("node1", "node2"))),
			nodeName: "node1",
			// kube-scheduler's PreFilter does not check the value count.
			wantPreFilterRes: &framework.PreFilterResult{NodeNames: sets.New("node1", "node2")},
			want:             rejected,
		},
		{
			name:     "matchFields NotIn excludes the node and does not narrow",
			pod:      podRequiring(fieldTerm(expr(metav1.ObjectNameField, corev1.NodeSelectorOpNotIn, "node1"))),
			nodeName: "node1",
			want:     rejected,
		},
		{
			name:     "matchFields on an unknown field compares with the empty string",
			pod:      podRequiring(fieldTerm(expr("spec.unschedulable", corev1.NodeSelectorOpNotIn, "true"))),
			nodeName: "node1",
		},
		{
			name:   "matchFields are ignored for a node without a name",
			pod:    podRequiring(fieldTerm(expr(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "node1"))),
			labels: map[string]string{"foo": "bar"},
			// The term pins node1, so PreFilter narrows.
			wantPreFilterRes: &framework.PreFilterResult{NodeNames: sets.New("node1")},
		},
		{
			name:   "Lt against a non-numeric label does not match",
			pod:    podRequiring(labelTerm(expr("gen", corev1.NodeSelectorOpLt, "5"))),
			labels: map[string]string{"gen": "five"},
			want:   rejected,
		},
		{
			name:   "DoesNotExist",
			pod:    podRequiring(labelTerm(expr("spot", corev1.NodeSelectorOpDoesNotExist))),
			labels: map[string]string{"foo": "bar"},
		},
		{
			name:     "addedAffinity alone does not skip PreFilter",
			pod:      testutil.MakePod().Obj(),
			nodeName: "node2",
			labels:   map[string]string{"zone": "bar"},
			args:     addedRequired(labelTerm(expr("zone", corev1.NodeSelectorOpIn, "bar"))),
		},
	}
}

func TestFilter(t *testing.T) {
	for _, tt := range filterCases() {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			var args runtime.Object
			if tt.args != nil {
				args = tt.args
			}
			pl := newPlugin(t, args)
			state := framework.NewCycleState()
			if !tt.skipPreFilter {
				res, status := pl.PreFilter(ctx, state, tt.pod, nil)
				if diff := cmp.Diff(tt.wantPreFilter, status); diff != "" {
					t.Errorf("PreFilter status (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.wantPreFilterRes, res); diff != "" {
					t.Errorf("PreFilter result (-want +got):\n%s", diff)
				}
			}
			got := pl.Filter(ctx, state, tt.pod, framework.NewNodeInfo(node(tt.nodeName, tt.labels)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRequiredMatchesComponentHelpers checks Filter's allocation-free matcher
// against component-helpers' RequiredNodeAffinity on every pod of the Filter
// cases crossed with every node, and on a few more selectors.
func TestRequiredMatchesComponentHelpers(t *testing.T) {
	var pods []*corev1.Pod
	var nodes []*corev1.Node
	for _, c := range filterCases() {
		pods = append(pods, c.pod)
		nodes = append(nodes, node(c.nodeName, c.labels))
	}
	pods = append(pods,
		podRequiring(labelTerm(expr("kernel-version", corev1.NodeSelectorOpGt, "0206"))),
		podRequiring(labelTerm(expr("kernel-version", corev1.NodeSelectorOpLt, "0205"))),
		podRequiring(labelTerm(expr("kernel-version", corev1.NodeSelectorOpGt, "x"))),
		podRequiring(labelTerm(expr("bad key!", corev1.NodeSelectorOpExists))),
		podRequiring(labelTerm(expr("foo", corev1.NodeSelectorOpExists, "v"))),
		podRequiring(fieldTerm(expr(metav1.ObjectNameField, corev1.NodeSelectorOpExists))),
		podRequiring(fieldTerm(expr(metav1.ObjectNameField, corev1.NodeSelectorOpNotIn, "node2")), labelTerm(expr("foo", corev1.NodeSelectorOpDoesNotExist))),
		podRequiring(corev1.NodeSelectorTerm{
			MatchFields:      []corev1.NodeSelectorRequirement{expr(metav1.ObjectNameField, corev1.NodeSelectorOpNotIn, "node1")},
			MatchExpressions: []corev1.NodeSelectorRequirement{expr("zone", corev1.NodeSelectorOpNotIn, "bar")},
		}),
	)
	nodes = append(nodes, node("", nil), node("node1", map[string]string{"kernel-version": "0206", "zone": "foo"}))
	pl := newPlugin(t, nil)
	for i, pod := range pods {
		state := framework.NewCycleState()
		if _, s := pl.PreFilter(context.Background(), state, pod, nil); s.IsSkip() {
			continue
		}
		want := nodeaffinity.GetRequiredNodeAffinity(pod)
		for _, n := range nodes {
			wantMatch, _ := want.Match(n)
			gotMatch := pl.Filter(context.Background(), state, pod, framework.NewNodeInfo(n)).IsSuccess()
			if gotMatch != wantMatch {
				t.Errorf("pod %d (%v) on node %q %v: Filter fits = %v, component-helpers = %v",
					i, pod.Spec.Affinity, n.Name, n.Labels, gotMatch, wantMatch)
			}
		}
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		args    runtime.Object
		wantErr string
	}{
		{name: "nil args"},
		{name: "typed nil args", args: (*configv1.NodeAffinityArgs)(nil)},
		{name: "empty args", args: &configv1.NodeAffinityArgs{}},
		{name: "valid addedAffinity", args: addedRequired(labelTerm(expr("zone", corev1.NodeSelectorOpIn, "a")))},
		{name: "wrong type", args: &configv1.NodeResourcesFitArgs{}, wantErr: "want args to be of type NodeAffinityArgs, got *v1.NodeResourcesFitArgs"},
		{
			name:    "invalid required addedAffinity",
			args:    addedRequired(labelTerm(expr("zone", "Unknown", "a"))),
			wantErr: `addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Unknown": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"`,
		},
		{
			name: "invalid preferred addedAffinity",
			args: &configv1.NodeAffinityArgs{AddedAffinity: &corev1.NodeAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
					{Weight: 1, Preference: fieldTerm(expr(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "a", "b"))},
				},
			}},
			wantErr: `addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values: Invalid value: ["a","b"]: must have one element`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := plugin.New(tt.args, nil)
			var got string
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("New error = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

// The cases of kube-scheduler's TestNodeAffinityPriority.
func TestScore(t *testing.T) {
	label1 := map[string]string{"foo": "bar"}
	label2 := map[string]string{"key": "value"}
	label3 := map[string]string{"az": "az1"}
	label4 := map[string]string{"abc": "az11", "def": "az22"}
	label5 := map[string]string{"foo": "bar", "key": "value", "az": "az1"}

	affinity1 := []corev1.PreferredSchedulingTerm{{Weight: 2, Preference: labelTerm(expr("foo", corev1.NodeSelectorOpIn, "bar"))}}
	affinity2 := []corev1.PreferredSchedulingTerm{
		{Weight: 2, Preference: labelTerm(expr("foo", corev1.NodeSelectorOpIn, "bar"))},
		{Weight: 4, Preference: labelTerm(expr("key", corev1.NodeSelectorOpIn, "value"))},
		{Weight: 5, Preference: labelTerm(
			expr("foo", corev1.NodeSelectorOpIn, "bar"),
			expr("key", corev1.NodeSelectorOpIn, "value"),
			expr("az", corev1.NodeSelectorOpIn, "az1"),
		)},
	}
	tests := []struct {
		name          string
		pod           *corev1.Pod
		nodes         []*corev1.Node
		args          *configv1.NodeAffinityArgs
		skipPreScore  bool
		wantPreScore  *framework.Status
		want          framework.NodeScoreList
		wantPreScoreE string
	}{
		{
			name:         "all nodes score 0 when the pod has no node affinity",
			pod:          testutil.MakePod().Obj(),
			nodes:        []*corev1.Node{node("node1", label1), node("node2", label2), node("node3", label3)},
			skipPreScore: true,
			want:         framework.NodeScoreList{{Name: "node1"}, {Name: "node2"}, {Name: "node3"}},
		},
		{
			name:         "PreScore skips when the pod has no node affinity",
			pod:          testutil.MakePod().Obj(),
			nodes:        []*corev1.Node{node("node1", label1)},
			wantPreScore: framework.NewStatus(framework.Skip),
		},
		{
			name:          "PreScore fails on a broken preferred term",
			pod:           podPreferring(corev1.PreferredSchedulingTerm{Weight: 2, Preference: labelTerm(expr("invalid key", corev1.NodeSelectorOpIn, "bar"))}),
			nodes:         []*corev1.Node{node("node1", label1)},
			wantPreScoreE: `[0].matchExpressions[0].key: Invalid value: "invalid key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
		},
		{
			name:  "no node matches the preferred terms: all 0",
			pod:   podPreferring(affinity1...),
			nodes: []*corev1.Node{node("node1", label4), node("node2", label2), node("node3", label3)},
			want:  framework.NodeScoreList{{Name: "node1"}, {Name: "node2"}, {Name: "node3"}},
		},
		{
			name:  "only node1 matches",
			pod:   podPreferring(affinity1...),
			nodes: []*corev1.Node{node("node1", label1), node("node2", label2), node("node3", label3)},
			want:  framework.NodeScoreList{{Name: "node1", Score: 100}, {Name: "node2"}, {Name: "node3"}},
		},
		{
			name:  "all nodes match with different weights: 2, 11 and 4 of 11",
			pod:   podPreferring(affinity2...),
			nodes: []*corev1.Node{node("node1", label1), node("node5", label5), node("node2", label2)},
			want:  framework.NodeScoreList{{Name: "node1", Score: 18}, {Name: "node5", Score: 100}, {Name: "node2", Score: 36}},
		},
		{
			name:  "addedAffinity alone",
			pod:   testutil.MakePod().Obj(),
			nodes: []*corev1.Node{node("node1", label1), node("node2", label2)},
			args:  &configv1.NodeAffinityArgs{AddedAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: affinity1}},
			want:  framework.NodeScoreList{{Name: "node1", Score: 100}, {Name: "node2"}},
		},
		{
			name:  "addedAffinity and the pod's preferred terms add up",
			pod:   podPreferring(affinity1...),
			nodes: []*corev1.Node{node("node1", label1), node("node2", label2), node("node3", label5)},
			args: &configv1.NodeAffinityArgs{AddedAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
				{Weight: 3, Preference: labelTerm(expr("key", corev1.NodeSelectorOpIn, "value"))},
			}}},
			want: framework.NodeScoreList{{Name: "node1", Score: 40}, {Name: "node2", Score: 60}, {Name: "node3", Score: 100}},
		},
		{
			name:         "scores are right even if PreScore is not called",
			pod:          podPreferring(affinity2...),
			nodes:        []*corev1.Node{node("node1", label1), node("node5", label5), node("node2", label2)},
			skipPreScore: true,
			want:         framework.NodeScoreList{{Name: "node1", Score: 18}, {Name: "node5", Score: 100}, {Name: "node2", Score: 36}},
		},
		{
			name: "a term with weight 0 or no requirement counts for nothing",
			pod: podPreferring(
				corev1.PreferredSchedulingTerm{Weight: 0, Preference: labelTerm(expr("foo", corev1.NodeSelectorOpIn, "bar"))},
				corev1.PreferredSchedulingTerm{Weight: 7, Preference: corev1.NodeSelectorTerm{}},
				corev1.PreferredSchedulingTerm{Weight: 1, Preference: labelTerm(expr("key", corev1.NodeSelectorOpExists))},
			),
			nodes: []*corev1.Node{node("node1", label1), node("node2", label2)},
			want:  framework.NodeScoreList{{Name: "node1"}, {Name: "node2", Score: 100}},
		},
		{
			name:  "preferred matchFields on the node name",
			pod:   podPreferring(corev1.PreferredSchedulingTerm{Weight: 3, Preference: fieldTerm(nameIn("node2"))}),
			nodes: []*corev1.Node{node("node1", nil), node("node2", nil), node("node3", nil)},
			want:  framework.NodeScoreList{{Name: "node1"}, {Name: "node2", Score: 100}, {Name: "node3"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			var args runtime.Object
			if tt.args != nil {
				args = tt.args
			}
			pl := newPlugin(t, args)
			state := framework.NewCycleState()
			var infos []*framework.NodeInfo
			for _, n := range tt.nodes {
				infos = append(infos, framework.NewNodeInfo(n))
			}
			if !tt.skipPreScore {
				status := pl.PreScore(ctx, state, tt.pod, infos)
				if tt.wantPreScoreE != "" {
					if status.Code() != framework.Error || status.Message() != tt.wantPreScoreE {
						t.Fatalf("PreScore = %v, want an Error %q", status, tt.wantPreScoreE)
					}
					return
				}
				if diff := cmp.Diff(tt.wantPreScore, status); diff != "" {
					t.Fatalf("PreScore (-want +got):\n%s", diff)
				}
				if !status.IsSuccess() {
					return
				}
			}
			var got framework.NodeScoreList
			for _, ni := range infos {
				score, s := pl.Score(ctx, state, tt.pod, ni)
				if !s.IsSuccess() {
					t.Fatalf("Score = %v", s)
				}
				got = append(got, framework.NodeScore{Name: ni.Name(), Score: score})
			}
			if s := pl.ScoreExtensions().NormalizeScore(ctx, state, tt.pod, got); !s.IsSuccess() {
				t.Fatalf("NormalizeScore = %v", s)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func benchmarkInfos(n int) []*framework.NodeInfo {
	infos := make([]*framework.NodeInfo, n)
	zones := []string{"zone-a", "zone-b", "zone-c"}
	for i := range n {
		nd := testutil.MakeNode().Name(fmt.Sprintf("node-%05d", i)).
			Label(corev1.LabelTopologyZone, zones[i%len(zones)]).
			Label("node.kubernetes.io/instance-type", "gpu-8x").
			Label("gen", fmt.Sprint(3+i%4)).
			Capacity(testutil.Res{"cpu": "32", "memory": "128Gi"}).Obj()
		pod := testutil.MakePod().Name(fmt.Sprintf("running-%05d", i)).Node(nd.Name).Req(testutil.Res{"cpu": "1"}).Obj()
		infos[i] = framework.NewNodeInfo(nd, framework.NewPodInfo(pod))
	}
	return infos
}

// BenchmarkFilter filters 5,000 nodes for a pod with a nodeSelector and a
// two-term required node affinity (labels and a metadata.name NotIn field),
// which most nodes satisfy: 0 allocs/op.
func BenchmarkFilter(b *testing.B) {
	infos := benchmarkInfos(5000)
	pod := podRequiring(
		labelTerm(expr(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "zone-a", "zone-b", "zone-c"), expr("gen", corev1.NodeSelectorOpGt, "3")),
		corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{expr("gen", corev1.NodeSelectorOpIn, "3")},
			MatchFields:      []corev1.NodeSelectorRequirement{expr(metav1.ObjectNameField, corev1.NodeSelectorOpNotIn, "node-00000")},
		},
	)
	pod.Spec.NodeSelector = map[string]string{"node.kubernetes.io/instance-type": "gpu-8x"}
	pl := newPlugin(b, nil)
	ctx := context.Background()
	state := framework.NewCycleState()
	if _, s := pl.PreFilter(ctx, state, pod, infos); !s.IsSuccess() {
		b.Fatalf("PreFilter = %v", s)
	}
	rejected := 0
	for _, ni := range infos {
		if !pl.Filter(ctx, state, pod, ni).IsSuccess() {
			rejected++
		}
	}
	if rejected != 1 {
		b.Fatalf("%d nodes rejected, want 1", rejected)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, ni := range infos[1:] {
			pl.Filter(ctx, state, pod, ni)
		}
	}
}

func BenchmarkScore(b *testing.B) {
	infos := benchmarkInfos(5000)
	pod := podPreferring(
		corev1.PreferredSchedulingTerm{Weight: 10, Preference: labelTerm(expr(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "zone-a"))},
		corev1.PreferredSchedulingTerm{Weight: 3, Preference: labelTerm(expr("gen", corev1.NodeSelectorOpGt, "4"))},
	)
	pl := newPlugin(b, nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		state := framework.NewCycleState()
		pl.PreScore(ctx, state, pod, infos)
		scores := make(framework.NodeScoreList, len(infos))
		for i, ni := range infos {
			scores[i].Name = ni.Name()
			scores[i].Score, _ = pl.Score(ctx, state, pod, ni)
		}
		pl.NormalizeScore(ctx, state, pod, scores)
	}
}

// TestRequiredMatchesComponentHelpersRandom compares Filter with
// component-helpers on random selectors and nodes (fixed seed), including
// invalid operators, keys and value counts now and then.
func TestRequiredMatchesComponentHelpersRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 37))
	labelKeys := []string{"zone", "gen", "gpu"}
	values := []string{"a", "b", "3", "10", "node-1", "node-2"}
	ops := []corev1.NodeSelectorOperator{
		corev1.NodeSelectorOpIn, corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpNotIn,
		corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt,
	}
	pick := func(list []string) string { return list[rng.IntN(len(list))] }
	rare := func() bool { return rng.IntN(25) == 0 }
	requirement := func(key string) corev1.NodeSelectorRequirement {
		r := corev1.NodeSelectorRequirement{Key: key, Operator: ops[rng.IntN(len(ops))]}
		switch r.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			for range 1 + rng.IntN(2) {
				r.Values = append(r.Values, pick(values))
			}
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
			r.Values = []string{pick([]string{"2", "5", "x"})}
		}
		switch {
		case rare():
			r.Operator = "Bogus"
		case rare():
			r.Key = "bad key!"
		case rare():
			r.Values = append(r.Values, "extra")
		}
		return r
	}
	term := func() corev1.NodeSelectorTerm {
		var t corev1.NodeSelectorTerm
		for range rng.IntN(3) {
			t.MatchExpressions = append(t.MatchExpressions, requirement(pick(labelKeys)))
		}
		for range rng.IntN(2) {
			r := requirement(metav1.ObjectNameField)
			if !rare() {
				r.Operator = []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn}[rng.IntN(2)]
				r.Values = []string{pick([]string{"node-1", "node-2"})}
			}
			t.MatchFields = append(t.MatchFields, r)
		}
		return t
	}
	pl := newPlugin(t, nil)
	matched, evaluated := 0, 0
	for i := range 2000 {
		var terms []corev1.NodeSelectorTerm
		for range rng.IntN(3) {
			terms = append(terms, term())
		}
		pod := podRequiring(terms...)
		if rng.IntN(4) == 0 {
			pod.Spec.NodeSelector = map[string]string{pick(labelKeys): pick(values)}
		}
		state := framework.NewCycleState()
		if _, s := pl.PreFilter(context.Background(), state, pod, nil); !s.IsSuccess() && !s.IsRejected() {
			t.Fatalf("case %d: PreFilter = %v", i, s)
		}
		want := nodeaffinity.GetRequiredNodeAffinity(pod)
		for range 5 {
			labels := map[string]string{}
			for _, k := range labelKeys {
				if rng.IntN(3) > 0 {
					labels[k] = pick(values)
				}
			}
			n := node(pick([]string{"", "node-1", "node-2"}), labels)
			wantMatch, _ := want.Match(n)
			gotMatch := pl.Filter(context.Background(), state, pod, framework.NewNodeInfo(n)).IsSuccess()
			if gotMatch != wantMatch {
				t.Fatalf("case %d: terms %+v, nodeSelector %v, node %q %v: Filter fits = %v, component-helpers = %v",
					i, terms, pod.Spec.NodeSelector, n.Name, labels, gotMatch, wantMatch)
			}
			evaluated++
			if wantMatch {
				matched++
			}
		}
	}
	// Guard against a generator that only ever produces one verdict.
	if matched < evaluated/10 || matched > evaluated*9/10 {
		t.Errorf("%d of %d random cases match: the generator is lopsided", matched, evaluated)
	}
}
