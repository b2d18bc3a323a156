package podtopologyspread

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// bigCluster is 5,000 nodes in 2 zones with one running pod each; every pod
// matches app=web, every other one also tier=front.
func bigCluster(tb testing.TB) *fixture {
	tb.Helper()
	const n = 5000
	nodes := make([]*corev1.Node, n)
	pods := make([]*corev1.Pod, n)
	for i := range n {
		name := fmt.Sprintf("node-%04d", i)
		nodes[i] = node(name, corev1.LabelTopologyZone, fmt.Sprintf("zone-%d", i%2), corev1.LabelHostname, name).Obj()
		p := pod(fmt.Sprintf("web-%04d", i), "app", "web")
		if i%2 == 0 {
			p.Label("tier", "front")
		}
		pods[i] = p.Node(name).Obj()
	}
	h := framework.NewSnapshotHandle(framework.BuildNodeInfos(nodes, pods), framework.SnapshotObjects{}, framework.DefaultParallelism)
	pl, err := New(listArgs, h)
	if err != nil {
		tb.Fatal(err)
	}
	return &fixture{pl: pl.(*PodTopologySpread), handle: h}
}

// spreadPod spreads over zones and hosts with the given action.
func spreadPod(action corev1.UnsatisfiableConstraintAction) *corev1.Pod {
	return pod("new", "app", "web", "tier", "front").
		SpreadConstraint(1, corev1.LabelTopologyZone, action, matchLabels("app", "web"), nil, nil, nil, nil).
		SpreadConstraint(1, corev1.LabelHostname, action, matchLabels("app", "web"), nil, nil, nil, nil).Obj()
}

// BenchmarkPreFilterFilter is one pod's whole filter cycle for this plugin:
// PreFilter over 5,000 nodes, then Filter on each of them.
func BenchmarkPreFilterFilter(b *testing.B) {
	f := bigCluster(b)
	p := spreadPod(corev1.DoNotSchedule)
	nodes := f.handle.List()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		state := framework.NewCycleState()
		if _, s := f.pl.PreFilter(ctx, state, p, nil); !s.IsSuccess() {
			b.Fatal(s)
		}
		for _, ni := range nodes {
			if s := f.pl.Filter(ctx, state, p, ni); !s.IsSuccess() {
				b.Fatal(s)
			}
		}
	}
}

// BenchmarkFilter is Filter alone, per node.
func BenchmarkFilter(b *testing.B) {
	f := bigCluster(b)
	p := spreadPod(corev1.DoNotSchedule)
	state := framework.NewCycleState()
	ctx := context.Background()
	if _, s := f.pl.PreFilter(ctx, state, p, nil); !s.IsSuccess() {
		b.Fatal(s)
	}
	nodes := f.handle.List()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f.pl.Filter(ctx, state, p, nodes[i%len(nodes)])
		i++
	}
}

// BenchmarkScore is one pod's whole score cycle for this plugin with every
// node feasible: PreScore, Score on 5,000 nodes, NormalizeScore.
func BenchmarkScore(b *testing.B) {
	f := bigCluster(b)
	p := spreadPod(corev1.ScheduleAnyway)
	nodes := f.handle.List()
	ctx := context.Background()
	scores := make(framework.NodeScoreList, len(nodes))
	b.ReportAllocs()
	for b.Loop() {
		state := framework.NewCycleState()
		if s := f.pl.PreScore(ctx, state, p, nodes); !s.IsSuccess() {
			b.Fatal(s)
		}
		for i, ni := range nodes {
			score, s := f.pl.Score(ctx, state, p, ni)
			if !s.IsSuccess() {
				b.Fatal(s)
			}
			scores[i] = framework.NodeScore{Name: ni.Name(), Score: score}
		}
		if s := f.pl.NormalizeScore(ctx, state, p, scores); !s.IsSuccess() {
			b.Fatal(s)
		}
	}
}

// BenchmarkAddPod is reserving one gang member on a 5,000-node cluster.
func BenchmarkAddPod(b *testing.B) {
	f := bigCluster(b)
	p := spreadPod(corev1.DoNotSchedule)
	state := framework.NewCycleState()
	ctx := context.Background()
	if _, s := f.pl.PreFilter(ctx, state, p, nil); !s.IsSuccess() {
		b.Fatal(s)
	}
	nodes := f.handle.List()
	member := framework.NewPodInfo(pod("member", "app", "web").Obj())
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f.pl.AddPod(ctx, state, p, member, nodes[i%len(nodes)])
		i++
	}
}

// Filter allocates nothing when it accepts a node.
func TestFilterDoesNotAllocate(t *testing.T) {
	f := bigCluster(t)
	p := spreadPod(corev1.DoNotSchedule)
	state := framework.NewCycleState()
	ctx := context.Background()
	if _, s := f.pl.PreFilter(ctx, state, p, nil); !s.IsSuccess() {
		t.Fatal(s)
	}
	ni := f.handle.List()[7]
	if s := f.pl.Filter(ctx, state, p, ni); !s.IsSuccess() {
		t.Fatalf("Filter = %v", s)
	}
	if allocs := testing.AllocsPerRun(100, func() { f.pl.Filter(ctx, state, p, ni) }); allocs != 0 {
		t.Errorf("Filter allocates %v times per node, want 0", allocs)
	}
}
