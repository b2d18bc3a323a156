package schedule

import (
	"context"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// PluginFactory builds a plugin from its typed arguments (nil for defaults).
type PluginFactory func(args runtime.Object, h framework.Handle) (framework.Plugin, error)

// PreEnqueuePlugin decides whether a pod may enter the scheduling queue at
// all (SchedulingGates).
type PreEnqueuePlugin interface {
	framework.Plugin
	PreEnqueue(ctx context.Context, pod *corev1.Pod) *framework.Status
}

// frameworkImpl is a profile instantiated on one snapshot: its plugins per
// extension point, in kube-scheduler's order, and the score weights.
type frameworkImpl struct {
	handle *runnerHandle

	preEnqueue []PreEnqueuePlugin
	queueSort  framework.QueueSortPlugin
	preFilter  []framework.PreFilterPlugin
	filter     []framework.FilterPlugin
	postFilter []framework.PostFilterPlugin
	preScore   []framework.PreScorePlugin
	score      []framework.ScorePlugin
	reserve    []framework.ReservePlugin
	// assume are the PreFilter plugins that keep allocations in the
	// working copy when a pod is reserved (framework.AssumePlugin).
	assume []framework.AssumePlugin
	// preBindCheck are the PreFilter plugins whose PreBind can fail on
	// the node chosen (framework.PreBindChecker).
	preBindCheck []framework.PreBindChecker
	permit       []framework.PermitPlugin
	weights      map[string]int64
	// nominator holds the snapshot's nominated pods (nil: none).
	nominator *nominator
}

// runnerHandle is the Handle plugins get: the snapshot, plus the framework
// itself as a PluginsRunner (preemption runs Filter on node copies).
type runnerHandle struct {
	*framework.SnapshotHandle
	fw *frameworkImpl
}

var _ framework.PluginsRunner = &runnerHandle{}

func (h *runnerHandle) RunPreFilterExtensionAddPod(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, add *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	return h.fw.runPreFilterExtensionAddPod(ctx, state, pod, add, ni)
}

func (h *runnerHandle) RunPreFilterExtensionRemovePod(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, remove *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	return h.fw.runPreFilterExtensionRemovePod(ctx, state, pod, remove, ni)
}

// RunFilterPlugins runs the filters as preemption's dry run does in
// kube-scheduler: with the nominated pods (RunFilterPluginsWithNominatedPods).
func (h *runnerHandle) RunFilterPlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	status, _ := h.fw.runFilterWithNominated(ctx, state, pod, ni, false)
	return status
}

// newFramework instantiates every plugin the profile names, once, and lays
// them out per extension point.
func newFramework(p *Profile, snapshotHandle *framework.SnapshotHandle) (*frameworkImpl, error) {
	fw := &frameworkImpl{weights: map[string]int64{}}
	fw.handle = &runnerHandle{SnapshotHandle: snapshotHandle, fw: fw}

	instances := map[string]framework.Plugin{}
	for point, set := range extensionPointSets(p.Plugins) {
		for _, pl := range set.Enabled {
			if _, ok := instances[pl.Name]; ok {
				continue
			}
			factory, ok := registry[pl.Name]
			if !ok {
				return nil, fmt.Errorf("profile %q: %s: unknown plugin %q", p.Name, point, pl.Name)
			}
			plugin, err := factory(p.Args[pl.Name], fw.handle)
			if err != nil {
				return nil, &ConfigError{Source: "profile " + p.Name, Err: fmt.Errorf("plugin %s: %w", pl.Name, err)}
			}
			instances[pl.Name] = plugin
		}
	}
	multi := p.Plugins.MultiPoint
	var err error
	if fw.preEnqueue, err = expand[PreEnqueuePlugin](p.Plugins.PreEnqueue, multi, instances); err != nil {
		return nil, &ConfigError{Source: "profile " + p.Name, Err: err}
	}
	queueSort, err := expand[framework.QueueSortPlugin](p.Plugins.QueueSort, multi, instances)
	if err != nil {
		return nil, &ConfigError{Source: "profile " + p.Name, Err: err}
	}
	if len(queueSort) != 1 {
		return nil, &ConfigError{Source: "profile " + p.Name, Err: fmt.Errorf("exactly one queueSort plugin is needed, got %d", len(queueSort))}
	}
	fw.queueSort = queueSort[0]
	if fw.preFilter, err = expand[framework.PreFilterPlugin](p.Plugins.PreFilter, multi, instances); err != nil {
		return nil, &ConfigError{Source: "profile " + p.Name, Err: err}
	}
	for _, pl := range fw.preFilter {
		if a, ok := pl.(framework.AssumePlugin); ok {
			fw.assume = append(fw.assume, a)
		}
		if c, ok := pl.(framework.PreBindChecker); ok {
			fw.preBindCheck = append(fw.preBindCheck, c)
		}
	}
	if fw.filter, err = expand[framework.FilterPlugin](p.Plugins.Filter, multi, instances); err != nil {
		return nil, &ConfigError{Source: "profile " + p.Name, Err: err}
	}
	if fw.postFilter, err = expand[framework.PostFilterPlugin](p.Plugins.PostFilter, multi, instances); err != nil {
		return nil, &ConfigError{Source: "profile " + p.Name, Err: err}
	}
	if fw.preScore, err = expand[framework.PreScorePlugin](p.Plugins.PreScore, multi, instances); err != nil {
		return nil, &ConfigError{Source: "profile " + p.Name, Err: err}
	}
	if fw.score, err = expand[framework.ScorePlugin](p.Plugins.Score, multi, instances); err != nil {
		return nil, &ConfigError{Source: "profile " + p.Name, Err: err}
	}
	if fw.reserve, err = expand[framework.ReservePlugin](p.Plugins.Reserve, multi, instances); err != nil {
		return nil, &ConfigError{Source: "profile " + p.Name, Err: err}
	}
	if fw.permit, err = expand[framework.PermitPlugin](p.Plugins.Permit, multi, instances); err != nil {
		return nil, &ConfigError{Source: "profile " + p.Name, Err: err}
	}
	// Score weights: an explicit score entry wins over multiPoint; 0 means 1.
	for _, e := range multi.Enabled {
		fw.weights[e.Name] = weightOf(e)
	}
	for _, e := range p.Plugins.Score.Enabled {
		fw.weights[e.Name] = weightOf(e)
	}
	return fw, nil
}

func weightOf(p configv1.Plugin) int64 {
	if p.Weight == nil || *p.Weight == 0 {
		return 1
	}
	return int64(*p.Weight)
}

// expand lays out one extension point as kube-scheduler does: plugins the
// point enables explicitly that also come through multiPoint first (in the
// point's order), then the other multiPoint plugins that implement the
// point, then the point's remaining plugins. A plugin disabled at the point
// (or "*") is left out of the multiPoint expansion.
func expand[T framework.Plugin](set, multi configv1.PluginSet, instances map[string]framework.Plugin) ([]T, error) {
	disabled := map[string]bool{}
	for _, d := range set.Disabled {
		disabled[d.Name] = true
	}
	explicit := map[string]bool{}
	for _, e := range set.Enabled {
		explicit[e.Name] = true
	}
	var overrides, fromMulti []string
	seen := map[string]bool{}
	if !disabled["*"] {
		for _, e := range multi.Enabled {
			if _, ok := instances[e.Name].(T); !ok || disabled[e.Name] {
				continue
			}
			if explicit[e.Name] {
				overrides = append(overrides, e.Name)
				continue
			}
			if seen[e.Name] {
				return nil, fmt.Errorf("plugin %q is enabled twice in multiPoint", e.Name)
			}
			seen[e.Name] = true
			fromMulti = append(fromMulti, e.Name)
		}
	}
	isOverride := map[string]bool{}
	for _, n := range overrides {
		isOverride[n] = true
	}
	var names []string
	for _, e := range set.Enabled {
		if isOverride[e.Name] {
			names = append(names, e.Name)
		}
	}
	names = append(names, fromMulti...)
	for _, e := range set.Enabled {
		if !isOverride[e.Name] {
			names = append(names, e.Name)
		}
	}
	out := make([]T, 0, len(names))
	registered := map[string]bool{}
	for _, n := range names {
		pl, ok := instances[n].(T)
		if !ok {
			var zero T
			return nil, fmt.Errorf("plugin %q does not implement %T", n, zero)
		}
		// A plugin listed twice at one point would run (and score) twice;
		// kube-scheduler refuses the configuration.
		if registered[n] {
			return nil, fmt.Errorf("plugin %q already registered as %q", n, reflect.TypeFor[T]().Name())
		}
		registered[n] = true
		out = append(out, pl)
	}
	return out, nil
}

func (fw *frameworkImpl) runPreFilterExtensionAddPod(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, add *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	for _, pl := range fw.preFilter {
		if state.SkipFilterPlugins[pl.Name()] {
			continue
		}
		ext := pl.PreFilterExtensions()
		if ext == nil {
			continue
		}
		if s := ext.AddPod(ctx, state, pod, add, ni); !s.IsSuccess() {
			return framework.AsStatus(fmt.Errorf("running AddPod on PreFilter plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	return nil
}

func (fw *frameworkImpl) runPreFilterExtensionRemovePod(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, remove *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	for _, pl := range fw.preFilter {
		if state.SkipFilterPlugins[pl.Name()] {
			continue
		}
		ext := pl.PreFilterExtensions()
		if ext == nil {
			continue
		}
		if s := ext.RemovePod(ctx, state, pod, remove, ni); !s.IsSuccess() {
			return framework.AsStatus(fmt.Errorf("running RemovePod on PreFilter plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	return nil
}

// runFilterPlugins runs the Filter plugins on one node and returns the first
// rejection, as kube-scheduler does. With all set it goes on after a
// rejection and records every plugin's verdict (explain -o wide).
func (fw *frameworkImpl) runFilterPlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo, all bool) (*framework.Status, []PluginVerdict) {
	var first *framework.Status
	var verdicts []PluginVerdict
	for _, pl := range fw.filter {
		if state.SkipFilterPlugins[pl.Name()] {
			continue
		}
		s := pl.Filter(ctx, state, pod, ni)
		if all {
			if verdicts == nil {
				verdicts = make([]PluginVerdict, 0, len(fw.filter)) // one per plugin, not grown
			}
			verdicts = append(verdicts, PluginVerdict{Plugin: pl.Name(), Code: s.Code(), Reasons: s.Reasons()})
		}
		if s.IsSuccess() {
			continue
		}
		if !s.IsRejected() {
			s = framework.AsStatus(fmt.Errorf("running %q filter plugin: %w", pl.Name(), s.AsError()))
		}
		s.WithPlugin(pl.Name())
		if first == nil {
			first = s
		}
		if !all || !s.IsRejected() {
			return first, verdicts
		}
	}
	return first, verdicts
}

// runPreScore runs the PreScore plugins on the feasible nodes and returns
// the plugins that answered Skip, whose Score is then not run.
func (fw *frameworkImpl) runPreScore(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, feasible []*framework.NodeInfo) (map[string]bool, error) {
	skip := map[string]bool{}
	for _, pl := range fw.preScore {
		st := pl.PreScore(ctx, state, pod, feasible)
		if st.IsSkip() {
			skip[pl.Name()] = true
			continue
		}
		if !st.IsSuccess() {
			return nil, fmt.Errorf("running PreScore plugin %q: %w", pl.Name(), st.AsError())
		}
	}
	return skip, nil
}
