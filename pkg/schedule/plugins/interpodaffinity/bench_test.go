package interpodaffinity_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/interpodaffinity"
)

const benchNodes = 5000

// benchCluster is 5,000 nodes in 10 zones, one running pod each; every
// tenth pod is a "web" replica with required hostname anti-affinity against
// the other replicas, every tenth a "cache" pod. The incoming pod is another
// web replica that also prefers (weight 10) a zone with a cache pod.
func benchCluster(b testing.TB) (*interpodaffinity.InterPodAffinity, *framework.SnapshotHandle, *corev1.Pod) {
	b.Helper()
	nodes := make([]*corev1.Node, benchNodes)
	pods := make([]*corev1.Pod, benchNodes)
	for i := range benchNodes {
		name := fmt.Sprintf("node-%04d", i)
		nodes[i] = node(name, map[string]string{
			corev1.LabelHostname:           name,
			corev1.LabelTopologyZone:       fmt.Sprintf("zone-%d", i%10),
			corev1.LabelTopologyRegion:     "region-1",
			corev1.LabelInstanceTypeStable: "m5.xlarge",
			corev1.LabelOSStable:           "linux",
		})
		w := makePod().Name(fmt.Sprintf("pod-%04d", i)).Node(name)
		switch i % 10 {
		case 0:
			w.Label("app", "web").RequiredPodAntiAffinity(makeTerm(corev1.LabelHostname).In("app", "web"))
		case 1:
			// Cache pods sit in zone-1 only, so zones score differently.
			if i%20 == 11 {
				w.Label("app", "cache")
			} else {
				w.Label("app", "batch")
			}
		default:
			w.Label("app", fmt.Sprintf("batch-%d", i%50))
		}
		pods[i] = w.Obj()
	}
	p, h := setup(b, nil, nodes, pods, []*corev1.Namespace{namespace("default", map[string]string{corev1.LabelMetadataName: "default"})})
	incoming := makePod().Name("web-new").Label("app", "web").
		RequiredPodAntiAffinity(makeTerm(corev1.LabelHostname).In("app", "web")).
		PreferredPodAffinity(10, makeTerm(corev1.LabelTopologyZone).In("app", "cache")).Obj()
	return p, h, incoming
}

// filterAll runs PreFilter and then Filter on every node in parallel, as the
// runner does, and returns the feasible nodes.
func filterAll(ctx context.Context, b testing.TB, p *interpodaffinity.InterPodAffinity, h *framework.SnapshotHandle, pod *corev1.Pod, state *framework.CycleState) []*framework.NodeInfo {
	all := h.List()
	if _, st := p.PreFilter(ctx, state, pod, all); !st.IsSuccess() {
		b.Fatalf("PreFilter: %v", st)
	}
	fits := make([]bool, len(all))
	var n atomic.Int32
	h.Parallelizer().Until(ctx, len(all), func(i int) {
		if p.Filter(ctx, state, pod, all[i]).IsSuccess() {
			fits[i] = true
			n.Add(1)
		}
	})
	feasible := make([]*framework.NodeInfo, 0, n.Load())
	for i, ok := range fits {
		if ok {
			feasible = append(feasible, all[i])
		}
	}
	return feasible
}

// scoreAllParallel runs PreScore, Score on every feasible node in parallel
// and NormalizeScore.
func scoreAllParallel(ctx context.Context, b testing.TB, p *interpodaffinity.InterPodAffinity, h *framework.SnapshotHandle, pod *corev1.Pod, state *framework.CycleState, feasible []*framework.NodeInfo) framework.NodeScoreList {
	if st := p.PreScore(ctx, state, pod, feasible); !st.IsSuccess() {
		b.Fatalf("PreScore: %v", st)
	}
	list := make(framework.NodeScoreList, len(feasible))
	h.Parallelizer().Until(ctx, len(feasible), func(i int) {
		s, st := p.Score(ctx, state, pod, feasible[i])
		if !st.IsSuccess() {
			panic(st.String())
		}
		list[i] = framework.NodeScore{Name: feasible[i].Name(), Score: s}
	})
	if st := p.NormalizeScore(ctx, state, pod, list); !st.IsSuccess() {
		b.Fatalf("NormalizeScore: %v", st)
	}
	return list
}

// BenchmarkPreFilterFilter is PreFilter plus Filter on all 5,000 nodes.
func BenchmarkPreFilterFilter(b *testing.B) {
	p, h, pod := benchCluster(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if got := filterAll(ctx, b, p, h, pod, framework.NewCycleState()); len(got) != benchNodes-benchNodes/10 {
			b.Fatalf("%d feasible nodes, want %d", len(got), benchNodes-benchNodes/10)
		}
	}
}

// BenchmarkFilterFeasibleNode is Filter alone on one node that passes: the
// per-node hot path, which must not allocate.
func BenchmarkFilterFeasibleNode(b *testing.B) {
	p, h, pod := benchCluster(b)
	ctx := context.Background()
	state := framework.NewCycleState()
	if _, st := p.PreFilter(ctx, state, pod, h.List()); !st.IsSuccess() {
		b.Fatal(st)
	}
	ni := h.List()[1]
	b.ReportAllocs()
	for b.Loop() {
		if st := p.Filter(ctx, state, pod, ni); !st.IsSuccess() {
			b.Fatal(st)
		}
	}
}

// BenchmarkPreScoreScore is PreScore, Score on the 4,500 feasible nodes and NormalizeScore.
func BenchmarkPreScoreScore(b *testing.B) {
	p, h, pod := benchCluster(b)
	ctx := context.Background()
	feasible := filterAll(ctx, b, p, h, pod, framework.NewCycleState())
	b.ReportAllocs()
	for b.Loop() {
		scoreAllParallel(ctx, b, p, h, pod, framework.NewCycleState(), feasible)
	}
}

// BenchmarkCycle is the plugin's whole cycle for one pod: PreFilter, Filter
// on every node, PreScore, Score and NormalizeScore.
func BenchmarkCycle(b *testing.B) {
	p, h, pod := benchCluster(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		state := framework.NewCycleState()
		feasible := filterAll(ctx, b, p, h, pod, state)
		list := scoreAllParallel(ctx, b, p, h, pod, state, feasible)
		if len(list) != len(feasible) {
			b.Fatal("lost scores")
		}
	}
}

// TestBenchClusterVerdicts pins what the benchmark measures: the web nodes
// are rejected, and zones with cache pods score 100, the others 0.
func TestBenchClusterVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 5,000 nodes")
	}
	b := t
	p, h, pod := benchCluster(b)
	ctx := context.Background()
	state := framework.NewCycleState()
	feasible := filterAll(ctx, b, p, h, pod, state)
	if len(feasible) != benchNodes-benchNodes/10 {
		t.Fatalf("%d feasible nodes", len(feasible))
	}
	web := mustNodeInfo(t, h, "node-0010")
	if st := p.Filter(ctx, state, pod, web); st.Message() != interpodaffinity.ErrReasonAntiAffinityRulesNotMatch {
		t.Errorf("a web node: %v", st)
	}
	list := scoreAllParallel(ctx, b, p, h, pod, state, feasible)
	for i, s := range list {
		zoneOdd := feasible[i].Node().Labels[corev1.LabelTopologyZone] == "zone-1"
		if want := map[bool]int64{true: 100, false: 0}[zoneOdd]; s.Score != want {
			t.Fatalf("%s in %s: score %d, want %d", s.Name, feasible[i].Node().Labels[corev1.LabelTopologyZone], s.Score, want)
		}
	}
}
