package volcano

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/defaultbinder"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/dynamicresources"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/imagelocality"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/interpodaffinity"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeaffinity"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeports"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeunschedulable"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodevolumelimits"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/podtopologyspread"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/queuesort"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/schedulinggates"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/tainttoleration"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/volumebinding"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/volumezone"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano/binpack"
	model "github.com/kubectl-gang/kubectl-gang/pkg/volcano"
)

// SchedulerName is the schedulerName Volcano's scheduler serves unless
// its --scheduler-name says otherwise, and the name of the profile Profile
// builds.
const SchedulerName = "volcano"

// nodeorder's arguments (nodeorder.go) and their defaults (calculateWeight).
const (
	volcanoLeastRequestedWeight    = "leastrequested.weight"
	volcanoMostRequestedWeight     = "mostrequested.weight"
	volcanoNodeAffinityWeight      = "nodeaffinity.weight"
	volcanoPodAffinityWeight       = "podaffinity.weight"
	volcanoBalancedResourceWeight  = "balancedresource.weight"
	volcanoTaintTolerationWeight   = "tainttoleration.weight"
	volcanoImageLocalityWeight     = "imagelocality.weight"
	volcanoPodTopologySpreadWeight = "podtopologyspread.weight"
)

// volcanoNodeOrder is how Volcano's allocate action orders the nodes that
// pass its predicates, as a volcano-scheduler.conf configures it
// (docs/design.md#volcanos-node-order): a schedule.NodeOrder.
type volcanoNodeOrder struct {
	// source says where the configuration came from.
	source string
	// batch are nodeorder's BatchNodeOrderFn plugins: kube-scheduler
	// score plugins, each normalized and weighted.
	batch []volcanoScorer
	// imageLocalityWeight weighs nodeorder's NodeOrderFn (ImageLocality's
	// raw score); 0 when it does not run.
	imageLocalityWeight int64
	// binpack is binpack's node order function; nil when it does not run.
	binpack *binpack.Binpack
	// mapOrder names the node order functions (nodeorder's, binpack's)
	// in the tiers' order, the order Volcano adds them in.
	mapOrder []string
	// draScore is predicates' BatchNodeOrderFn: DynamicResources' score,
	// weight 1.
	draScore bool
}

// volcanoScorer is one kube-scheduler score plugin nodeorder runs: its
// label (nodeorder's key for it), factory, arguments and weight.
type volcanoScorer struct {
	label   string
	factory schedule.PluginFactory
	args    runtime.Object
	weight  int64
}

// Profile is the profile that places pods as Volcano's allocate
// action does under cfg (docs/design.md#volcanos-node-order):
//
//   - Filter: allocate's own resource check (InitResreq against the
//     node's FutureIdle; NodeResourcesFit stands in for it), then the kube
//     filter plugins the predicates plugin runs with its arguments
//     (predicates.go InitPlugin; none when predicates is not configured
//     or its predicate point is off), in its order;
//   - no PostFilter: allocate does not preempt;
//   - Score: nodeorder's weighted kube score plugins, ImageLocality's raw
//     score, binpack's own formula and the predicates plugin's
//     DynamicResources score, summed in float as util.PrioritizeNodes sums
//     them; nodes are not scored when one passes (prioritizeNodes).
func Profile(cfg *model.Config) *schedule.Profile {
	filters := []string{noderesources.Name}
	if cfg.Enabled("predicates", model.PointPredicate) {
		args := cfg.PluginArguments("predicates")
		filters = append(filters, nodeunschedulable.Name)
		for _, f := range []struct{ arg, plugin string }{
			{"predicate.NodeAffinityEnable", nodeaffinity.Name},
			{"predicate.TaintTolerationEnable", tainttoleration.Name},
			{"predicate.NodePortsEnable", nodeports.Name},
			{"predicate.PodAffinityEnable", interpodaffinity.Name},
			{"predicate.NodeVolumeLimitsEnable", nodevolumelimits.Name},
			{"predicate.VolumeZoneEnable", volumezone.Name},
			{"predicate.PodTopologySpreadEnable", podtopologyspread.Name},
			{"predicate.VolumeBindingEnable", volumebinding.Name},
		} {
			if args.Bool(f.arg, true) {
				filters = append(filters, f.plugin)
			}
		}
		// DynamicResourceAllocation is on in the Kubernetes Volcano builds
		// against; no argument turns it off.
		filters = append(filters, dynamicresources.Name)
	}
	multi := []configv1.Plugin{{Name: schedulinggates.Name}, {Name: queuesort.Name}}
	for _, f := range filters {
		multi = append(multi, configv1.Plugin{Name: f})
	}
	multi = append(multi, configv1.Plugin{Name: defaultbinder.Name})
	none := configv1.PluginSet{Disabled: []configv1.Plugin{{Name: "*"}}}
	plugins := &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: multi},
		// Volcano's node order replaces kube-scheduler's scoring.
		PreScore: none,
		Score:    none,
	}
	p := &schedule.Profile{Name: SchedulerName, Plugins: plugins, Args: map[string]runtime.Object{}}
	p = p.WithNodeOrder(volcanoOrder(cfg, slices.Contains(filters, dynamicresources.Name)))
	if why := volcanoUnmodelled(cfg); why != "" {
		p = p.WithNotEvaluated(why)
	}
	return p
}

// volcanoNodePlugins are Volcano's plugins, other than predicates,
// nodeorder and binpack, that register predicate, node order or best node
// functions (AddPredicateFn, AddNodeOrderFn, AddBatchNodeOrderFn,
// AddBestNodeFn): where one runs, its part of the node choice is not
// modelled.
var volcanoNodePlugins = []string{"deviceshare", "extender", "network-topology-aware", "nodegroup", "numa-aware",
	"resource-strategy-fit", "task-topology", "tdm", "usage"}

// volcanoUnmodelled words the plugins of cfg that take part in the node
// choice and are not modelled, for every cycle's NotEvaluated; "" when
// there are none.
func volcanoUnmodelled(cfg *model.Config) string {
	var names []string
	for _, name := range volcanoNodePlugins {
		if cfg.Enabled(name, model.PointPredicate) || cfg.Enabled(name, model.PointNodeOrder) || cfg.Enabled(name, model.PointBestNode) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("Volcano's %s plugin(s) of %s filter or order nodes, which this build does not model", strings.Join(names, ", "), cfg.Source)
}

// volcanoOrder reads the node order out of the configuration: nodeorder's
// weights (calculateWeight, InitPlugin), binpack's (binpack.New) and which
// of them the session calls (Session.NodeOrderMapFn, BatchNodeOrderFn:
// the plugin configured with its node order point on).
func volcanoOrder(cfg *model.Config, dra bool) *volcanoNodeOrder {
	o := &volcanoNodeOrder{source: cfg.Source, draScore: dra && cfg.Enabled("predicates", model.PointNodeOrder)}
	for _, t := range cfg.Tiers {
		for _, p := range t.Plugins {
			if p.EnabledNodeOrder == nil || !*p.EnabledNodeOrder || slices.Contains(o.mapOrder, p.Name) {
				continue
			}
			switch p.Name {
			case "nodeorder":
				o.mapOrder = append(o.mapOrder, p.Name)
				o.batch, o.imageLocalityWeight = nodeorderScorers(p.Arguments)
			case binpack.Name:
				if b := binpack.New(p.Arguments); b.Weight != 0 {
					o.mapOrder = append(o.mapOrder, p.Name)
					o.binpack = b
				}
			}
		}
	}
	return o
}

// nodeorderScorers are the score plugins nodeorder's InitPlugin builds,
// with the arguments it gives them, for the weights that are not 0; and
// ImageLocality's weight.
func nodeorderScorers(args model.Arguments) ([]volcanoScorer, int64) {
	w := func(key string, def int) int64 { return int64(args.Int(key, def)) }
	resources := func(weight int64, names ...string) []configv1.ResourceSpec {
		var out []configv1.ResourceSpec
		for _, n := range names {
			out = append(out, configv1.ResourceSpec{Name: n, Weight: weight})
		}
		return out
	}
	all := []volcanoScorer{
		{label: noderesources.Name + "_LeastAllocated", factory: noderesources.New, weight: w(volcanoLeastRequestedWeight, 1),
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.LeastAllocated, Resources: resources(50, "cpu", "memory")}}},
		{label: noderesources.Name + "_MostAllocated", factory: noderesources.New, weight: w(volcanoMostRequestedWeight, 0),
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.MostAllocated, Resources: resources(1, "cpu", "memory")}}},
		{label: noderesources.BalancedAllocationName, factory: noderesources.NewBalancedAllocation, weight: w(volcanoBalancedResourceWeight, 1),
			args: &configv1.NodeResourcesBalancedAllocationArgs{Resources: resources(1, "cpu", "memory", "nvidia.com/gpu")}},
		{label: nodeaffinity.Name, factory: nodeaffinity.New, weight: w(volcanoNodeAffinityWeight, 2), args: &configv1.NodeAffinityArgs{}},
		// Volcano passes unset internal arguments, which nothing defaults:
		// HardPodAffinityWeight 0.
		{label: interpodaffinity.Name, factory: interpodaffinity.New, weight: w(volcanoPodAffinityWeight, 2),
			args: &configv1.InterPodAffinityArgs{HardPodAffinityWeight: ptr.To[int32](0)}},
		{label: tainttoleration.Name, factory: tainttoleration.New, weight: w(volcanoTaintTolerationWeight, 3)},
		{label: podtopologyspread.Name, factory: podtopologyspread.New, weight: w(volcanoPodTopologySpreadWeight, 2),
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.SystemDefaulting}},
	}
	var out []volcanoScorer
	for _, s := range all {
		if s.weight != 0 {
			out = append(out, s)
		}
	}
	return out, w(volcanoImageLocalityWeight, 1)
}

// Describe words the node order, with the weights that decide it, for
// the output.
func (o *volcanoNodeOrder) Describe() string {
	var parts []string
	for _, s := range o.batch {
		parts = append(parts, fmt.Sprintf("%s x%d", s.label, s.weight))
	}
	if o.imageLocalityWeight != 0 && slices.Contains(o.mapOrder, "nodeorder") {
		parts = append(parts, fmt.Sprintf("%s x%d", imagelocality.Name, o.imageLocalityWeight))
	}
	if o.binpack != nil {
		var rs []string
		for _, r := range slices.Sorted(maps.Keys(o.binpack.Resources)) {
			rs = append(rs, fmt.Sprintf("%s:%d", r, o.binpack.Resources[r]))
		}
		parts = append(parts, fmt.Sprintf("binpack x%d (%s)", o.binpack.Weight, strings.Join(rs, " ")))
	}
	if len(parts) == 0 {
		return "no node order (every feasible node scores 0)"
	}
	return strings.Join(parts, ", ")
}

// Ties: util.SelectBestNodeAndScore picks at random among the nodes of
// the highest score.
func (o *volcanoNodeOrder) Ties() string {
	return "Volcano picks at random among nodes of equal score"
}

// Build instantiates the node order's plugins on one scheduler.
func (o *volcanoNodeOrder) Build(h schedule.NodeOrderHandle) (schedule.NodeScorer, error) {
	return newVolcanoScorers(o, h)
}

// volcanoScorers are a Volcano node order's plugins, instantiated on one
// snapshot.
type volcanoScorers struct {
	order   *volcanoNodeOrder
	batch   []framework.ScorePlugin
	weights []int64
	// batchLabels name the batch scores in a node's Scores.
	batchLabels []string
	image       framework.ScorePlugin
	dra         framework.ScorePlugin
}

func newVolcanoScorers(o *volcanoNodeOrder, h schedule.NodeOrderHandle) (*volcanoScorers, error) {
	v := &volcanoScorers{order: o}
	for _, s := range o.batch {
		pl, err := s.factory(s.args, h.Handle())
		if err != nil {
			return nil, fmt.Errorf("volcano nodeorder %s: %w", s.label, err)
		}
		v.batch = append(v.batch, pl.(framework.ScorePlugin))
		v.weights = append(v.weights, s.weight)
		v.batchLabels = append(v.batchLabels, "nodeorder/"+s.label)
	}
	if o.imageLocalityWeight != 0 && slices.Contains(o.mapOrder, "nodeorder") {
		pl, err := imagelocality.New(nil, h.Handle())
		if err != nil {
			return nil, err
		}
		v.image = pl.(framework.ScorePlugin)
	}
	if o.draScore {
		// The instance that filtered: its score reads the allocations its
		// Filter found, from the cycle's state.
		if sp, ok := h.Filter(dynamicresources.Name).(framework.ScorePlugin); ok {
			v.dra = sp
		}
	}
	return v, nil
}

// Score scores the feasible nodes as Volcano's allocate does
// (prioritizeNodes, util.PrioritizeNodes; the scheduler takes one node
// unscored): each node's score is, in float, 0 + its node order functions
// in the tiers' order (nodeorder's ImageLocality x weight, binpack) + the
// batch scores (predicates' DynamicResources, nodeorder's kube plugins,
// each normalized and weighted); the parts are each plugin's.
func (v *volcanoScorers) Score(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, feasible []*framework.NodeInfo) ([][]schedule.PluginScore, []float64, error) {
	n := len(feasible)
	// Every node's scores share one backing array (one slot per scorer).
	slots := len(v.order.mapOrder) + len(v.batch) + 1
	backing := make([]schedule.PluginScore, 0, n*slots)
	parts := make([][]schedule.PluginScore, n)
	for i := range parts {
		parts[i] = backing[i*slots : i*slots : (i+1)*slots]
	}
	orderScore := make([]float64, n)
	// NodeOrderFn gives ImageLocality a fresh cycle state, which its Score
	// does not read: one serves every node.
	imageState := framework.NewCycleState()
	const imageLabel = "nodeorder/" + imagelocality.Name
	for _, fn := range v.order.mapOrder {
		for i, ni := range feasible {
			switch {
			case fn == "nodeorder" && v.image != nil:
				// NodeOrderFn: the raw score x weight.
				raw, st := v.image.Score(ctx, imageState, pod, ni)
				if !st.IsSuccess() {
					return nil, nil, fmt.Errorf("running Volcano nodeorder %s: %w", imagelocality.Name, st.AsError())
				}
				w := float64(raw) * float64(v.order.imageLocalityWeight)
				orderScore[i] += w
				parts[i] = append(parts[i], schedule.PluginScore{Plugin: imageLabel, Score: int64(w)})
			case fn == binpack.Name:
				b := v.order.binpack.Score(pod, ni)
				orderScore[i] += b
				parts[i] = append(parts[i], schedule.PluginScore{Plugin: binpack.Name, Score: int64(b)})
			}
		}
	}
	batch := make([]int64, n)
	run := func(label string, pl framework.ScorePlugin, weight int64, st *framework.CycleState) error {
		if pre, ok := pl.(framework.PreScorePlugin); ok {
			status := pre.PreScore(ctx, st, pod, feasible)
			if status.IsSkip() {
				return nil
			}
			if !status.IsSuccess() {
				return fmt.Errorf("running Volcano %s PreScore: %w", label, status.AsError())
			}
		}
		list := make(framework.NodeScoreList, n)
		for i, ni := range feasible {
			sc, status := pl.Score(ctx, st, pod, ni)
			if !status.IsSuccess() {
				return fmt.Errorf("running Volcano %s: %w", label, status.AsError())
			}
			list[i] = framework.NodeScore{Name: ni.Name(), Score: sc}
		}
		if ext := pl.ScoreExtensions(); ext != nil {
			if status := ext.NormalizeScore(ctx, st, pod, list); !status.IsSuccess() {
				return fmt.Errorf("normalizing Volcano %s: %w", label, status.AsError())
			}
		}
		for i := range list {
			if list[i].Score < framework.MinNodeScore || list[i].Score > framework.MaxNodeScore {
				return fmt.Errorf("volcano %s returns an invalid score %d for node %s", label, list[i].Score, list[i].Name)
			}
			batch[i] += list[i].Score * weight
			parts[i] = append(parts[i], schedule.PluginScore{Plugin: label, Score: list[i].Score * weight})
		}
		return nil
	}
	if v.dra != nil {
		// predicates' BatchNodeOrderFn, on the task's cycle state.
		if err := run("predicates/"+dynamicresources.Name, v.dra, 1, state); err != nil {
			return nil, nil, err
		}
	}
	// nodeorder's BatchNodeOrderFn: one fresh cycle state for its plugins.
	nodeorderState := framework.NewCycleState()
	for j, pl := range v.batch {
		if err := run(v.batchLabels[j], pl, v.weights[j], nodeorderState); err != nil {
			return nil, nil, err
		}
	}
	totals := make([]float64, n)
	for i := range feasible {
		totals[i] = 0.0 + orderScore[i] + float64(batch[i])
	}
	return parts, totals, nil
}
