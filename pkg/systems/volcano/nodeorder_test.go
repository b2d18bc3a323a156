package volcano

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	model "github.com/kubectl-gang/kubectl-gang/pkg/volcano"
)

// TestVolcanoNodeScores checks Volcano's node scores, derived by hand from
// its code, for a pod requesting 4 cpu, 16Gi and 2 GPUs on three nodes of
// 16 cpu, 64Gi and 8 GPUs: n1 holds 8 cpu, 16Gi, 4 GPUs; n2 2 cpu, 8Gi; n3
// nothing. The total is util.PrioritizeNodes': 0 + the node order
// functions (Session.NodeOrderMapFn: nodeorder's ImageLocality, 0 here;
// binpack.BinPackingScore) + the batch scores (nodeorder's
// BatchNodeOrderFn: each kube plugin normalized by
// nodescore.CalculatePluginScore and weighted). NodeAffinity,
// InterPodAffinity and PodTopologySpread skip at PreScore (no terms, no
// owner to spread by).
func TestVolcanoNodeScores(t *testing.T) {
	const gpu = "nvidia.com/gpu"
	node := func(name string) *corev1.Node {
		return testutil.MakeNode().Name(name).Capacity(testutil.Res{"cpu": "16", "memory": "64Gi", gpu: "8", "pods": "110"}).Obj()
	}
	snap := &schedule.Snapshot{
		Nodes: []*corev1.Node{node("n1"), node("n2"), node("n3")},
		Pods: []*corev1.Pod{
			testutil.MakePod().Namespace("other").Name("used-1").Req(testutil.Res{"cpu": "8", "memory": "16Gi", gpu: "4"}).Node("n1").Obj(),
			testutil.MakePod().Namespace("other").Name("used-2").Req(testutil.Res{"cpu": "2", "memory": "8Gi"}).Node("n2").Obj(),
		},
	}
	pod := testutil.MakePod().Name("worker").Req(testutil.Res{"cpu": "4", "memory": "16Gi", gpu: "2"}).Obj()

	tests := []struct {
		name   string
		conf   string // a volcano-scheduler.conf; "" is the chart's
		want   map[string]float64
		parts  map[string][]schedule.PluginScore
		chosen string
	}{
		{
			// nodeorder's calculateWeight defaults: leastrequested 1,
			// balancedresource 1, tainttoleration 3 (mostrequested 0:
			// not built). binpack's calculateWeight: weight 1, cpu 1,
			// memory 1, GPUs not weighed.
			//
			// LeastAllocated over cpu and memory, 50 each (kube's
			// leastResourceScorer, integer): n1 (16-12)*100/16 = 25 and
			// (64-32)*100/64 = 50 -> 37; n2 62 and 62 -> 62; n3 75.
			// BalancedAllocation over cpu, memory and GPUs (v1.37's
			// 50 + (50 + with - without)/2): the pod leaves every node as
			// balanced as it was -> 75 each.
			// TaintToleration: no taints, reversed normalization -> 100 x 3.
			// predicates' DynamicResources: no claims -> 0.
			// binpack: n1 ((4+8)/16 + (16+16)/64)/2 x 100 = 62.5; n2
			// (6/16 + 24/64)/2 x 100 = 37.5; n3 25.
			// Totals: n1 62.5 + 37 + 75 + 300 = 474.5; n2 37.5 + 62 + 75 +
			// 300 = 474.5; n3 25 + 75 + 75 + 300 = 475: leastrequested and
			// binpack cancel out, and n3 wins by rounding.
			name: "chart default",
			want: map[string]float64{"n1": 474.5, "n2": 474.5, "n3": 475},
			parts: map[string][]schedule.PluginScore{
				"n1": {{Plugin: "nodeorder/ImageLocality", Score: 0}, {Plugin: "binpack", Score: 62}, {Plugin: "predicates/DynamicResources", Score: 0}, {Plugin: "nodeorder/NodeResourcesFit_LeastAllocated", Score: 37},
					{Plugin: "nodeorder/NodeResourcesBalancedAllocation", Score: 75}, {Plugin: "nodeorder/TaintToleration", Score: 300}},
			},
			chosen: "n3",
		},
		{
			// binpack.weight 10 with GPUs weighing 2: n1 (0.75 + 0.5 +
			// 2 x 6/8) / 4 x 100 x 10 = 687.5; n2 (0.375 + 0.375 + 2 x
			// 2/8) / 4 x 1000 = 312.5; n3 (0.25 + 0.25 + 0.5) / 4 x 1000
			// = 250. Totals: n1 687.5 + 412 = 1099.5, n2 312.5 + 437 =
			// 749.5, n3 250 + 450 = 700: packing wins.
			name: "binpack weight 10, GPUs weighed 2",
			conf: `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: gang
- plugins:
  - name: predicates
  - name: nodeorder
  - name: binpack
    arguments:
      binpack.weight: 10
      binpack.resources: nvidia.com/gpu
      binpack.resources.nvidia.com/gpu: 2
`,
			want:   map[string]float64{"n1": 1099.5, "n2": 749.5, "n3": 700},
			chosen: "n1",
		},
		{
			// mostrequested.weight 2 in place of leastrequested (kube's
			// mostResourceScorer over cpu and memory, 1 each): n1 75 and
			// 50 -> 62 x 2 = 124; n2 37 and 37 -> 74; n3 25 -> 50.
			// Totals: n1 62.5 + 124 + 75 + 300 = 561.5; n2 37.5 + 74 +
			// 375 = 486.5; n3 25 + 50 + 375 = 450.
			name: "mostrequested instead of leastrequested",
			conf: `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: predicates
  - name: nodeorder
    arguments:
      leastrequested.weight: 0
      mostrequested.weight: 2
  - name: binpack
`,
			want:   map[string]float64{"n1": 561.5, "n2": 486.5, "n3": 450},
			chosen: "n1",
		},
		{
			// nodeorder's node order point off: binpack alone.
			name: "nodeorder disabled",
			conf: `actions: "allocate"
tiers:
- plugins:
  - name: predicates
  - name: nodeorder
    enableNodeOrder: false
  - name: binpack
`,
			want:   map[string]float64{"n1": 62.5, "n2": 37.5, "n3": 25},
			chosen: "n1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := scheduleOnce(t, snap, configOf(t, tt.conf), pod)
			got := map[string]float64{}
			exact := res.ExactScores()
			for i, n := range res.Nodes {
				got[n.Name] = exact[i]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
			for name, want := range tt.parts {
				var parts []schedule.PluginScore
				for _, n := range res.Nodes {
					if n.Name == name {
						parts = n.Scores
					}
				}
				if diff := cmp.Diff(want, parts); diff != "" {
					t.Errorf("%s's parts (-want +got):\n%s", name, diff)
				}
			}
			if res.SelectedNode != tt.chosen {
				t.Errorf("chosen %s, want %s", res.SelectedNode, tt.chosen)
			}
			if len(res.NotEvaluated) > 0 {
				t.Errorf("not evaluated: %q", res.NotEvaluated)
			}
		})
	}
}

// TestVolcanoTies: Volcano picks at random among equal best scores
// (util.SelectBestNodeAndScore). Between nodes alike in everything a
// placement reads the pick cannot matter; between others it can, for the
// pods placed after it: once the first is reserved, the next cycle says so.
func TestVolcanoTies(t *testing.T) {
	first := testutil.MakePod().Name("worker-0").Req(testutil.Res{"cpu": "2"}).Obj()
	second := testutil.MakePod().Name("worker-1").Req(testutil.Res{"cpu": "2", "nvidia.com/gpu": "6"}).Obj()
	zoned := func(name, zone string) *corev1.Node {
		return testutil.MakeNode().Name(name).Label(corev1.LabelTopologyZone, zone).Capacity(testutil.Res{"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "8"}).Obj()
	}
	spread := testutil.MakePod().Name("worker-1").Req(testutil.Res{"cpu": "2", "nvidia.com/gpu": "6"}).Obj()
	spread.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
		WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{}}}
	tie := "Volcano picks at random among nodes of equal score for default/worker-0 (a, b), which differ: the plan took a, and the members placed after it may fit differently on another pick"
	tests := []struct {
		name   string
		nodes  []*corev1.Node
		second *corev1.Pod
		want   string
	}{
		{
			// Nodes that differ only in a label no pod reads (their zone):
			// the toss shapes nothing.
			name:  "nodes that differ in a label nothing reads",
			nodes: []*corev1.Node{zoned("a", "z1"), zoned("b", "z2")},
		},
		{
			// The second pod spreads over zones: which zone the first took
			// matters to it.
			name:   "nodes that differ in a label the next pod reads",
			nodes:  []*corev1.Node{zoned("a", "z1"), zoned("b", "z2")},
			second: spread,
			want:   tie,
		},
		{
			name: "alike nodes",
			nodes: []*corev1.Node{
				testutil.MakeNode().Name("a").Capacity(testutil.Res{"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "8"}).Obj(),
				testutil.MakeNode().Name("b").Capacity(testutil.Res{"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "8"}).Obj(),
			},
		},
		{
			// The first pod requests no GPU: no plugin weighs them, and
			// the nodes tie.
			name: "nodes that differ in GPUs",
			nodes: []*corev1.Node{
				testutil.MakeNode().Name("a").Capacity(testutil.Res{"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "8"}).Obj(),
				testutil.MakeNode().Name("b").Capacity(testutil.Res{"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "4"}).Obj(),
			},
			want: tie,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := schedule.NewScheduler(&schedule.Snapshot{Nodes: tt.nodes}, schedule.Options{Profile: Profile(model.Default())})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			res, err := s.Schedule(ctx, first)
			if err != nil {
				t.Fatal(err)
			}
			if res.SelectedNode != "a" || len(res.NotEvaluated) > 0 {
				t.Errorf("first pod on %s, not evaluated %q; want a (the first by name), none (nothing placed after it yet)", res.SelectedNode, res.NotEvaluated)
			}
			if err := s.Reserve(first, res.SelectedNode); err != nil {
				t.Fatal(err)
			}
			second := second
			if tt.second != nil {
				second = tt.second
			}
			if res, err = s.Schedule(ctx, second); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(res.NotEvaluated, "\n"); got != tt.want {
				t.Errorf("second pod: not evaluated %q, want %q", got, tt.want)
			}
			// A fork keeps the working copy's coin tosses.
			f, err := s.Fork()
			if err != nil {
				t.Fatal(err)
			}
			if res, err = f.Schedule(ctx, second); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(res.NotEvaluated, "\n"); got != tt.want {
				t.Errorf("fork: not evaluated %q, want %q", got, tt.want)
			}
		})
	}
}

// TestVolcanoPredicates: the filters are allocate's resource check, then
// the kube filter plugins the predicates plugin runs (InitPlugin, with its
// predicate.*Enable arguments); without predicates (or its predicate point
// off), the resource check alone.
func TestVolcanoPredicates(t *testing.T) {
	nodes := []*corev1.Node{
		testutil.MakeNode().Name("cordoned").Capacity(testutil.Res{"cpu": "8"}).Unschedulable().Obj(),
		testutil.MakeNode().Name("small").Capacity(testutil.Res{"cpu": "1"}).Obj(),
		testutil.MakeNode().Name("tainted").Capacity(testutil.Res{"cpu": "8"}).Taint("gpu", "true", corev1.TaintEffectNoSchedule).Obj(),
	}
	pod := testutil.MakePod().Name("worker").Req(testutil.Res{"cpu": "2"}).Obj()
	tests := []struct {
		name     string
		conf     string
		feasible []string
	}{
		{"chart default", "", nil},
		{"taints not checked", "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n    arguments:\n      predicate.TaintTolerationEnable: false\n", []string{"tainted"}},
		{"no predicates plugin", "actions: allocate\ntiers:\n- plugins:\n  - name: nodeorder\n", []string{"cordoned", "tainted"}},
		{"predicate point off", "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n    enablePredicate: false\n", []string{"cordoned", "tainted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := scheduleOnce(t, &schedule.Snapshot{Nodes: nodes}, configOf(t, tt.conf), pod)
			var feasible []string
			for _, n := range res.Nodes {
				if n.Feasible {
					feasible = append(feasible, n.Name)
				}
			}
			if diff := cmp.Diff(tt.feasible, feasible); diff != "" {
				t.Errorf("feasible nodes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestVolcanoUnmodelledPlugins: a plugin that filters or orders nodes
// (numa-aware registers a BatchNodeOrderFn and a predicate) makes every
// cycle not evaluated; with its points off it takes no part.
func TestVolcanoUnmodelledPlugins(t *testing.T) {
	node := testutil.MakeNode().Name("a").Capacity(testutil.Res{"cpu": "8"}).Obj()
	pod := testutil.MakePod().Name("worker").Req(testutil.Res{"cpu": "2"}).Obj()
	for _, tt := range []struct {
		name, conf, want string
	}{
		{"numa-aware", "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n  - name: numa-aware\n",
			"Volcano's numa-aware plugin(s) of test filter or order nodes, which this build does not model"},
		{"numa-aware, points off", "actions: allocate\ntiers:\n- plugins:\n  - name: numa-aware\n    enablePredicate: false\n    enableNodeOrder: false\n    enableBestNode: false\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := scheduleOnce(t, &schedule.Snapshot{Nodes: []*corev1.Node{node}}, configOf(t, tt.conf), pod)
			if got := strings.Join(res.NotEvaluated, "\n"); got != tt.want {
				t.Errorf("not evaluated %q, want %q", got, tt.want)
			}
		})
	}
}

// configOf parses a volcano-scheduler.conf; "" is Volcano's default.
func configOf(t *testing.T, conf string) *model.Config {
	t.Helper()
	if conf == "" {
		return model.Default()
	}
	cfg, err := model.Parse([]byte(conf), "test")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// scheduleOnce runs one cycle of pod on snap with Volcano's profile under
// cfg.
func scheduleOnce(t *testing.T, snap *schedule.Snapshot, cfg *model.Config, pod *corev1.Pod) *schedule.Result {
	t.Helper()
	s, err := schedule.NewScheduler(snap, schedule.Options{Profile: Profile(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Schedule(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
