package gang

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/defaultpreemption"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/dynamicresources"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/interpodaffinity"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeaffinity"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodedeclaredfeatures"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodename"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeports"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeunschedulable"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodevolumelimits"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/podtopologyspread"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/tainttoleration"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/volumebinding"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/volumerestrictions"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/volumezone"
)

// filterFactories builds the plugins a preemption what-if runs: those with
// PreFilter or Filter, and DefaultPreemption itself. The scheduler keeps
// its instantiated profile to itself, so the what-if instantiates the
// profile's filter side again over the state the blocked member saw.
var filterFactories = map[string]schedule.PluginFactory{
	nodename.Name:             nodename.New,
	nodeunschedulable.Name:    nodeunschedulable.New,
	tainttoleration.Name:      tainttoleration.New,
	nodeaffinity.Name:         nodeaffinity.New,
	nodeports.Name:            nodeports.New,
	noderesources.Name:        noderesources.New,
	volumerestrictions.Name:   volumerestrictions.New,
	nodevolumelimits.Name:     nodevolumelimits.New,
	volumebinding.Name:        volumebinding.New,
	volumezone.Name:           volumezone.New,
	podtopologyspread.Name:    podtopologyspread.New,
	interpodaffinity.Name:     interpodaffinity.New,
	dynamicresources.Name:     dynamicresources.New,
	nodedeclaredfeatures.Name: nodedeclaredfeatures.New,
	defaultpreemption.Name:    defaultpreemption.New,
}

// preemptionRunner is a Handle over one working state that is also the
// PluginsRunner DefaultPreemption needs: it removes victims from node
// copies and runs the profile's PreFilter extensions and Filter plugins.
type preemptionRunner struct {
	*framework.SnapshotHandle
	preFilter  []framework.PreFilterPlugin
	filter     []framework.FilterPlugin
	preemption *defaultpreemption.DefaultPreemption
}

var _ framework.PluginsRunner = &preemptionRunner{}

// newPreemptionRunner instantiates the profile's PreFilter, Filter and
// DefaultPreemption plugins over nodes. It returns nil when the profile has
// no DefaultPreemption: then nothing is ever preempted.
func newPreemptionRunner(nodes []*framework.NodeInfo, snap *schedule.Snapshot, profile *schedule.Profile, parallelism int) (*preemptionRunner, error) {
	if parallelism <= 0 {
		parallelism = framework.DefaultParallelism
	}
	objects := framework.SnapshotObjects{
		Namespaces:             snap.Namespaces,
		PersistentVolumeClaims: snap.PersistentVolumeClaims,
		PersistentVolumes:      snap.PersistentVolumes,
		StorageClasses:         snap.StorageClasses,
		PodDisruptionBudgets:   snap.PodDisruptionBudgets,
	}
	r := &preemptionRunner{SnapshotHandle: framework.NewSnapshotHandle(slices.Clone(nodes), objects, parallelism)}
	plugins := profile.Plugins
	instances := map[string]framework.Plugin{}
	instance := func(name string) (framework.Plugin, error) {
		if pl, ok := instances[name]; ok {
			return pl, nil
		}
		factory, ok := filterFactories[name]
		if !ok {
			return nil, nil // not a filter-side plugin
		}
		pl, err := factory(profile.Args[name], r)
		if err != nil {
			return nil, fmt.Errorf("preemption what-if: plugin %s: %w", name, err)
		}
		instances[name] = pl
		return pl, nil
	}
	for _, name := range enabledAt(plugins.PreFilter, plugins.MultiPoint) {
		pl, err := instance(name)
		if err != nil {
			return nil, err
		}
		if p, ok := pl.(framework.PreFilterPlugin); ok {
			r.preFilter = append(r.preFilter, p)
		}
	}
	for _, name := range enabledAt(plugins.Filter, plugins.MultiPoint) {
		pl, err := instance(name)
		if err != nil {
			return nil, err
		}
		if p, ok := pl.(framework.FilterPlugin); ok {
			r.filter = append(r.filter, p)
		}
	}
	for _, name := range enabledAt(plugins.PostFilter, plugins.MultiPoint) {
		pl, err := instance(name)
		if err != nil {
			return nil, err
		}
		if p, ok := pl.(*defaultpreemption.DefaultPreemption); ok {
			r.preemption = p
		}
	}
	if r.preemption == nil {
		return nil, nil
	}
	return r, nil
}

// enabledAt lists the plugins enabled at one extension point, in the order
// kube-scheduler runs them: those the point enables that also come through
// multiPoint, then the other multiPoint plugins (unless the point disables
// them, or "*"), then the point's own. Plugins that do not implement the
// point are left out by the caller.
func enabledAt(set, multi configv1.PluginSet) []string {
	disabled := map[string]bool{}
	for _, d := range set.Disabled {
		disabled[d.Name] = true
	}
	explicit := map[string]bool{}
	for _, e := range set.Enabled {
		explicit[e.Name] = true
	}
	inMulti := map[string]bool{}
	var fromMulti []string
	if !disabled["*"] {
		for _, e := range multi.Enabled {
			if disabled[e.Name] {
				continue
			}
			inMulti[e.Name] = true
			if !explicit[e.Name] {
				fromMulti = append(fromMulti, e.Name)
			}
		}
	}
	var out []string
	for _, e := range set.Enabled {
		if inMulti[e.Name] {
			out = append(out, e.Name)
		}
	}
	out = append(out, fromMulti...)
	for _, e := range set.Enabled {
		if !inMulti[e.Name] && !slices.Contains(out, e.Name) {
			out = append(out, e.Name)
		}
	}
	return out
}

// cycle runs PreFilter and Filter for pod on the runner's state, as a
// scheduling cycle does, Filter only on the nodes in scope (the others are
// rejected as outside the gang's domain). It returns the cycle state, each
// node's verdict and the first feasible node by name, if any.
func (r *preemptionRunner) cycle(ctx context.Context, pod *corev1.Pod, inScope func(*framework.NodeInfo) bool) (*framework.CycleState, nodeVerdicts, string, error) {
	state := framework.NewCycleState()
	all := r.NodeInfos().List()
	statuses := make(nodeVerdicts, len(all))
	var narrowed *framework.PreFilterResult
	for _, pl := range r.preFilter {
		res, st := pl.PreFilter(ctx, state, pod, all)
		switch {
		case st.IsSkip():
			state.SkipFilterPlugins[pl.Name()] = true
			continue
		case st.Code() == framework.Error:
			return nil, nil, "", st.AsError()
		case !st.IsSuccess():
			// Every node gets the PreFilter rejection, as kube-scheduler records it.
			st.WithPlugin(pl.Name())
			for _, ni := range all {
				statuses[ni.Name()] = st
			}
			return state, statuses, "", nil
		}
		narrowed = narrowed.Merge(res)
	}
	outside := framework.NewStatus(framework.UnschedulableAndUnresolvable, schedule.NotInDomainReason)
	left := framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't satisfy plugin(s)")
	feasible := ""
	for _, ni := range all {
		switch {
		case !inScope(ni):
			statuses[ni.Name()] = outside
		case !narrowed.AllNodes() && !narrowed.NodeNames.Has(ni.Name()):
			statuses[ni.Name()] = left
		default:
			st := r.RunFilterPlugins(ctx, state, pod, ni)
			if st.Code() == framework.Error {
				return nil, nil, "", st.AsError()
			}
			statuses[ni.Name()] = st
			if st.IsSuccess() && feasible == "" {
				feasible = ni.Name()
			}
		}
	}
	return state, statuses, feasible, nil
}

// evaluate is DefaultPreemption's evaluation for pod after a failed cycle:
// the candidate kube-scheduler would pick, or nil.
func (r *preemptionRunner) evaluate(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, statuses nodeVerdicts) (*defaultpreemption.Candidate, error) {
	best, _, st := r.preemption.Evaluate(ctx, state, pod, statuses)
	if st.Code() == framework.Error {
		return nil, st.AsError()
	}
	return best, nil
}

// change replaces one node of the runner's state by a changed copy.
func (r *preemptionRunner) change(node string, f func(*framework.NodeInfo) error) error {
	for i, ni := range r.NodeInfos().List() {
		if ni.Name() == node {
			c := ni.Clone()
			if err := f(c); err != nil {
				return err
			}
			r.ReplaceNode(i, c)
			return nil
		}
	}
	return fmt.Errorf("node %q is not in the snapshot", node)
}

// assume puts pod on node in the runner's state.
func (r *preemptionRunner) assume(pod *corev1.Pod, node string) error {
	return r.change(node, func(ni *framework.NodeInfo) error {
		c := pod.DeepCopy()
		c.Spec.NodeName = node
		ni.AddPod(c)
		return nil
	})
}

// evict takes victims off node in the runner's state.
func (r *preemptionRunner) evict(node string, victims []*corev1.Pod) error {
	return r.change(node, func(ni *framework.NodeInfo) error {
		for _, v := range victims {
			if err := ni.RemovePod(v); err != nil {
				return err
			}
		}
		return nil
	})
}

// nodeVerdicts is a failed cycle's node statuses, as PostFilter reads them.
type nodeVerdicts map[string]*framework.Status

func (m nodeVerdicts) Get(name string) *framework.Status {
	if st, ok := m[name]; ok {
		return st
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable)
}

// RunPreFilterExtensionAddPod implements framework.PluginsRunner.
func (r *preemptionRunner) RunPreFilterExtensionAddPod(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, add *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	for _, pl := range r.preFilter {
		if ext := pl.PreFilterExtensions(); ext != nil && !state.SkipFilterPlugins[pl.Name()] {
			if st := ext.AddPod(ctx, state, pod, add, ni); !st.IsSuccess() {
				return st
			}
		}
	}
	return nil
}

// RunPreFilterExtensionRemovePod implements framework.PluginsRunner.
func (r *preemptionRunner) RunPreFilterExtensionRemovePod(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, remove *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	for _, pl := range r.preFilter {
		if ext := pl.PreFilterExtensions(); ext != nil && !state.SkipFilterPlugins[pl.Name()] {
			if st := ext.RemovePod(ctx, state, pod, remove, ni); !st.IsSuccess() {
				return st
			}
		}
	}
	return nil
}

// RunFilterPlugins implements framework.PluginsRunner: the first rejection.
func (r *preemptionRunner) RunFilterPlugins(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	for _, pl := range r.filter {
		if state.SkipFilterPlugins[pl.Name()] {
			continue
		}
		if st := pl.Filter(ctx, state, pod, ni); !st.IsSuccess() {
			return st.WithPlugin(pl.Name())
		}
	}
	return nil
}
