package tainttoleration_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/tainttoleration"
)

func nodeWithTaints(name string, taints ...corev1.Taint) *corev1.Node {
	n := testutil.MakeNode().Name(name).Obj()
	n.Spec.Taints = taints
	return n
}

func podWithTolerations(tolerations ...corev1.Toleration) *corev1.Pod {
	p := testutil.MakePod().Name("pod1").Obj()
	p.Spec.Tolerations = tolerations
	return p
}

func newPlugin(t testing.TB) *tainttoleration.TaintToleration {
	t.Helper()
	pl, err := tainttoleration.New(nil, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return pl.(*tainttoleration.TaintToleration)
}

// The cases of kube-scheduler's TestTaintTolerationFilter, with the alpha
// comparison operators at their v1.37 default (off), plus NoExecute and the
// order in which UntoleratedTaint reports taints.
func TestFilter(t *testing.T) {
	rejected := framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)").WithPlugin(tainttoleration.Name)
	tests := []struct {
		name      string
		pod       *corev1.Pod
		node      *corev1.Node
		want      *framework.Status
		wantTaint *corev1.Taint
	}{
		{
			name:      "a pod with no tolerations can't be scheduled onto a node with a NoSchedule taint",
			pod:       podWithTolerations(),
			node:      nodeWithTaints("nodeA", corev1.Taint{Key: "dedicated", Value: "user1", Effect: "NoSchedule"}),
			want:      rejected,
			wantTaint: &corev1.Taint{Key: "dedicated", Value: "user1", Effect: "NoSchedule"},
		},
		{
			name: "a pod tolerating dedicated=user1:NoSchedule fits the node",
			pod:  podWithTolerations(corev1.Toleration{Key: "dedicated", Value: "user1", Effect: "NoSchedule"}),
			node: nodeWithTaints("nodeA", corev1.Taint{Key: "dedicated", Value: "user1", Effect: "NoSchedule"}),
		},
		{
			name:      "a toleration for another value does not tolerate the taint",
			pod:       podWithTolerations(corev1.Toleration{Key: "dedicated", Operator: "Equal", Value: "user2", Effect: "NoSchedule"}),
			node:      nodeWithTaints("nodeA", corev1.Taint{Key: "dedicated", Value: "user1", Effect: "NoSchedule"}),
			want:      rejected,
			wantTaint: &corev1.Taint{Key: "dedicated", Value: "user1", Effect: "NoSchedule"},
		},
		{
			name: "operator Exists tolerates any value",
			pod:  podWithTolerations(corev1.Toleration{Key: "foo", Operator: "Exists", Effect: "NoSchedule"}),
			node: nodeWithTaints("nodeA", corev1.Taint{Key: "foo", Value: "bar", Effect: "NoSchedule"}),
		},
		{
			name: "every taint of several tolerated",
			pod: podWithTolerations(
				corev1.Toleration{Key: "dedicated", Operator: "Equal", Value: "user2", Effect: "NoSchedule"},
				corev1.Toleration{Key: "foo", Operator: "Exists", Effect: "NoSchedule"},
			),
			node: nodeWithTaints("nodeA",
				corev1.Taint{Key: "dedicated", Value: "user2", Effect: "NoSchedule"},
				corev1.Taint{Key: "foo", Value: "bar", Effect: "NoSchedule"},
			),
		},
		{
			name:      "key and value match but the (non-empty) effect does not",
			pod:       podWithTolerations(corev1.Toleration{Key: "foo", Operator: "Equal", Value: "bar", Effect: "PreferNoSchedule"}),
			node:      nodeWithTaints("nodeA", corev1.Taint{Key: "foo", Value: "bar", Effect: "NoSchedule"}),
			want:      rejected,
			wantTaint: &corev1.Taint{Key: "foo", Value: "bar", Effect: "NoSchedule"},
		},
		{
			name: "a toleration with no effect tolerates every effect",
			pod:  podWithTolerations(corev1.Toleration{Key: "foo", Operator: "Equal", Value: "bar"}),
			node: nodeWithTaints("nodeA", corev1.Taint{Key: "foo", Value: "bar", Effect: "NoSchedule"}),
		},
		{
			name: "PreferNoSchedule taints are left to Score",
			pod:  podWithTolerations(corev1.Toleration{Key: "dedicated", Operator: "Equal", Value: "user2", Effect: "NoSchedule"}),
			node: nodeWithTaints("nodeA", corev1.Taint{Key: "dedicated", Value: "user1", Effect: "PreferNoSchedule"}),
		},
		{
			name: "a pod with no tolerations fits a node whose only taint is PreferNoSchedule",
			pod:  podWithTolerations(),
			node: nodeWithTaints("nodeA", corev1.Taint{Key: "dedicated", Value: "user1", Effect: "PreferNoSchedule"}),
		},
		{
			name:      "NoExecute taints are checked too",
			pod:       podWithTolerations(corev1.Toleration{Key: "a", Operator: "Exists", Effect: "NoSchedule"}),
			node:      nodeWithTaints("nodeA", corev1.Taint{Key: "a", Effect: "NoSchedule"}, corev1.Taint{Key: "b", Value: "x", Effect: "NoExecute"}),
			want:      rejected,
			wantTaint: &corev1.Taint{Key: "b", Value: "x", Effect: "NoExecute"},
		},
		{
			name:      "the first untolerated taint in the node's order is reported",
			pod:       podWithTolerations(),
			node:      nodeWithTaints("nodeA", corev1.Taint{Key: "soft", Effect: "PreferNoSchedule"}, corev1.Taint{Key: "first", Effect: "NoExecute"}, corev1.Taint{Key: "second", Effect: "NoSchedule"}),
			want:      rejected,
			wantTaint: &corev1.Taint{Key: "first", Effect: "NoExecute"},
		},
		{
			name:      "Gt tolerations tolerate nothing while TaintTolerationComparisonOperators is off",
			pod:       podWithTolerations(corev1.Toleration{Key: "node.kubernetes.io/sla", Operator: "Gt", Value: "750", Effect: "NoSchedule"}),
			node:      nodeWithTaints("nodeA", corev1.Taint{Key: "node.kubernetes.io/sla", Value: "950", Effect: "NoSchedule"}),
			want:      rejected,
			wantTaint: &corev1.Taint{Key: "node.kubernetes.io/sla", Value: "950", Effect: "NoSchedule"},
		},
		{
			name:      "Lt tolerations tolerate nothing while TaintTolerationComparisonOperators is off",
			pod:       podWithTolerations(corev1.Toleration{Key: "node.kubernetes.io/sla", Operator: "Lt", Value: "950", Effect: "NoSchedule"}),
			node:      nodeWithTaints("nodeA", corev1.Taint{Key: "node.kubernetes.io/sla", Value: "800", Effect: "NoSchedule"}),
			want:      rejected,
			wantTaint: &corev1.Taint{Key: "node.kubernetes.io/sla", Value: "800", Effect: "NoSchedule"},
		},
		{
			name: "an empty key with operator Exists tolerates everything",
			pod:  podWithTolerations(corev1.Toleration{Operator: "Exists"}),
			node: nodeWithTaints("nodeA", corev1.Taint{Key: "a", Effect: "NoSchedule"}, corev1.Taint{Key: "b", Effect: "NoExecute"}),
		},
	}
	pl := newPlugin(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := framework.NewCycleState()
			if _, s := pl.PreFilter(context.Background(), state, tt.pod, nil); !s.IsSuccess() {
				t.Fatalf("PreFilter = %v", s)
			}
			got := pl.Filter(context.Background(), state, tt.pod, framework.NewNodeInfo(tt.node))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
			taint, untolerated := tainttoleration.UntoleratedTaint(tt.pod, tt.node)
			if untolerated != (tt.wantTaint != nil) {
				t.Fatalf("UntoleratedTaint found = %v, want %v", untolerated, tt.wantTaint != nil)
			}
			if diff := cmp.Diff(tt.wantTaint, taint); diff != "" {
				t.Errorf("UntoleratedTaint (-want +got):\n%s", diff)
			}
			// The same answer as component-helpers with kube-scheduler's filter.
			helperTaint, helperFound := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), tt.node.Spec.Taints, tt.pod.Spec.Tolerations,
				func(t *corev1.Taint) bool {
					return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
				}, false)
			if helperFound != untolerated || (helperFound && helperTaint != *taint) {
				t.Errorf("FindMatchingUntoleratedTaint = %v, %v; UntoleratedTaint = %v, %v", helperTaint, helperFound, taint, untolerated)
			}
		})
	}
}

// The cases of kube-scheduler's TestTaintTolerationScore, with the alpha
// comparison operators at their v1.37 default (off).
func TestScore(t *testing.T) {
	tests := []struct {
		name  string
		pod   *corev1.Pod
		nodes []*corev1.Node
		want  framework.NodeScoreList
	}{
		{
			name: "a node whose taints are tolerated scores above one with untolerated taints",
			pod:  podWithTolerations(corev1.Toleration{Key: "foo", Operator: "Equal", Value: "bar", Effect: "PreferNoSchedule"}),
			nodes: []*corev1.Node{
				nodeWithTaints("nodeA", corev1.Taint{Key: "foo", Value: "bar", Effect: "PreferNoSchedule"}),
				nodeWithTaints("nodeB", corev1.Taint{Key: "foo", Value: "blah", Effect: "PreferNoSchedule"}),
			},
			want: framework.NodeScoreList{{Name: "nodeA", Score: 100}, {Name: "nodeB", Score: 0}},
		},
		{
			name: "how many tolerated taints a node has does not matter",
			pod: podWithTolerations(
				corev1.Toleration{Key: "cpu-type", Operator: "Equal", Value: "arm64", Effect: "PreferNoSchedule"},
				corev1.Toleration{Key: "disk-type", Operator: "Equal", Value: "ssd", Effect: "PreferNoSchedule"},
			),
			nodes: []*corev1.Node{
				nodeWithTaints("nodeA"),
				nodeWithTaints("nodeB", corev1.Taint{Key: "cpu-type", Value: "arm64", Effect: "PreferNoSchedule"}),
				nodeWithTaints("nodeC",
					corev1.Taint{Key: "cpu-type", Value: "arm64", Effect: "PreferNoSchedule"},
					corev1.Taint{Key: "disk-type", Value: "ssd", Effect: "PreferNoSchedule"}),
			},
			want: framework.NodeScoreList{{Name: "nodeA", Score: 100}, {Name: "nodeB", Score: 100}, {Name: "nodeC", Score: 100}},
		},
		{
			name: "the more untolerated taints a node has, the lower it scores",
			pod:  podWithTolerations(corev1.Toleration{Key: "foo", Operator: "Equal", Value: "bar", Effect: "PreferNoSchedule"}),
			nodes: []*corev1.Node{
				nodeWithTaints("nodeA"),
				nodeWithTaints("nodeB", corev1.Taint{Key: "cpu-type", Value: "arm64", Effect: "PreferNoSchedule"}),
				nodeWithTaints("nodeC",
					corev1.Taint{Key: "cpu-type", Value: "arm64", Effect: "PreferNoSchedule"},
					corev1.Taint{Key: "disk-type", Value: "ssd", Effect: "PreferNoSchedule"}),
			},
			want: framework.NodeScoreList{{Name: "nodeA", Score: 100}, {Name: "nodeB", Score: 50}, {Name: "nodeC", Score: 0}},
		},
		{
			name: "only PreferNoSchedule taints and tolerations count",
			pod: podWithTolerations(
				corev1.Toleration{Key: "cpu-type", Operator: "Equal", Value: "arm64", Effect: "NoSchedule"},
				corev1.Toleration{Key: "disk-type", Operator: "Equal", Value: "ssd", Effect: "NoSchedule"},
			),
			nodes: []*corev1.Node{
				nodeWithTaints("nodeA"),
				nodeWithTaints("nodeB", corev1.Taint{Key: "cpu-type", Value: "arm64", Effect: "NoSchedule"}),
				nodeWithTaints("nodeC",
					corev1.Taint{Key: "cpu-type", Value: "arm64", Effect: "PreferNoSchedule"},
					corev1.Taint{Key: "disk-type", Value: "ssd", Effect: "PreferNoSchedule"}),
			},
			want: framework.NodeScoreList{{Name: "nodeA", Score: 100}, {Name: "nodeB", Score: 100}, {Name: "nodeC", Score: 0}},
		},
		{
			name: "no tolerations: the untainted node wins",
			pod:  podWithTolerations(),
			nodes: []*corev1.Node{
				nodeWithTaints("nodeA"),
				nodeWithTaints("nodeB", corev1.Taint{Key: "cpu-type", Value: "arm64", Effect: "PreferNoSchedule"}),
			},
			want: framework.NodeScoreList{{Name: "nodeA", Score: 100}, {Name: "nodeB", Score: 0}},
		},
		{
			name: "a toleration without effect tolerates PreferNoSchedule",
			pod:  podWithTolerations(corev1.Toleration{Key: "a", Operator: "Exists"}),
			nodes: []*corev1.Node{
				nodeWithTaints("nodeA", corev1.Taint{Key: "a", Effect: "PreferNoSchedule"}),
				nodeWithTaints("nodeB", corev1.Taint{Key: "b", Effect: "PreferNoSchedule"}),
			},
			want: framework.NodeScoreList{{Name: "nodeA", Score: 100}, {Name: "nodeB", Score: 0}},
		},
		{
			name: "integer division: counts 1 and 3 normalize to 100-33 and 0",
			pod:  podWithTolerations(),
			nodes: []*corev1.Node{
				nodeWithTaints("nodeA", corev1.Taint{Key: "a", Effect: "PreferNoSchedule"}),
				nodeWithTaints("nodeB", corev1.Taint{Key: "a", Effect: "PreferNoSchedule"}, corev1.Taint{Key: "b", Effect: "PreferNoSchedule"}, corev1.Taint{Key: "c", Effect: "PreferNoSchedule"}),
				nodeWithTaints("nodeC"),
			},
			want: framework.NodeScoreList{{Name: "nodeA", Score: 67}, {Name: "nodeB", Score: 0}, {Name: "nodeC", Score: 100}},
		},
		{
			name: "Gt tolerations tolerate nothing while TaintTolerationComparisonOperators is off",
			pod:  podWithTolerations(corev1.Toleration{Key: "node.kubernetes.io/sla", Operator: "Gt", Value: "950", Effect: "PreferNoSchedule"}),
			nodes: []*corev1.Node{
				nodeWithTaints("nodeA", corev1.Taint{Key: "node.kubernetes.io/sla", Value: "800", Effect: "PreferNoSchedule"}),
				nodeWithTaints("nodeB", corev1.Taint{Key: "node.kubernetes.io/sla", Value: "999", Effect: "PreferNoSchedule"}),
				nodeWithTaints("nodeC"),
			},
			want: framework.NodeScoreList{{Name: "nodeA", Score: 0}, {Name: "nodeB", Score: 0}, {Name: "nodeC", Score: 100}},
		},
	}
	pl := newPlugin(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			state := framework.NewCycleState()
			var infos []*framework.NodeInfo
			for _, n := range tt.nodes {
				infos = append(infos, framework.NewNodeInfo(n))
			}
			if s := pl.PreScore(ctx, state, tt.pod, infos); !s.IsSuccess() {
				t.Fatalf("PreScore = %v", s)
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

func TestScoreWithoutPreScore(t *testing.T) {
	pl := newPlugin(t)
	_, s := pl.Score(context.Background(), framework.NewCycleState(), podWithTolerations(), framework.NewNodeInfo(nodeWithTaints("n")))
	if s.Code() != framework.Error {
		t.Errorf("Score without PreScore = %v, want an Error", s)
	}
}

// benchmarkNodes builds n nodes with one pod each: a tenth tainted
// dedicated=ml:NoSchedule, a tenth with a PreferNoSchedule taint, and every
// fifth of the rest, when reject is set, with a taint the pod does not tolerate.
func benchmarkNodes(n int, reject bool) []*framework.NodeInfo {
	infos := make([]*framework.NodeInfo, n)
	for i := range n {
		node := testutil.MakeNode().Name(fmt.Sprintf("node-%05d", i)).Capacity(testutil.Res{"cpu": "32", "memory": "128Gi"}).Obj()
		switch {
		case i%10 == 0:
			node.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "ml", Effect: corev1.TaintEffectNoSchedule}}
		case i%10 == 1:
			node.Spec.Taints = []corev1.Taint{{Key: "spot", Value: "true", Effect: corev1.TaintEffectPreferNoSchedule}}
		case reject && i%5 == 2:
			node.Spec.Taints = []corev1.Taint{{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoExecute}}
		}
		pod := testutil.MakePod().Name(fmt.Sprintf("running-%05d", i)).Node(node.Name).Req(testutil.Res{"cpu": "1"}).Obj()
		infos[i] = framework.NewNodeInfo(node, framework.NewPodInfo(pod))
	}
	return infos
}

func benchmarkFilter(b *testing.B, reject bool) {
	infos := benchmarkNodes(5000, reject)
	pod := testutil.MakePod().Name("p").
		Toleration("dedicated", "ml", corev1.TaintEffectNoSchedule).
		Toleration(corev1.TaintNodeUnreachable, "", corev1.TaintEffectNoExecute).Obj()
	pl := newPlugin(b)
	ctx := context.Background()
	state := framework.NewCycleState()
	b.ReportAllocs()
	for b.Loop() {
		for _, ni := range infos {
			pl.Filter(ctx, state, pod, ni)
		}
	}
}

// BenchmarkFilter filters 5,000 nodes that all fit: 0 allocs/op.
func BenchmarkFilter(b *testing.B) { benchmarkFilter(b, false) }

// BenchmarkFilterRejecting rejects 1,000 of 5,000 nodes: one allocation (the
// Status) per rejected node, none for the others.
func BenchmarkFilterRejecting(b *testing.B) { benchmarkFilter(b, true) }

func BenchmarkScore(b *testing.B) {
	infos := benchmarkNodes(5000, false)
	pod := testutil.MakePod().Name("p").Obj()
	pl := newPlugin(b)
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
