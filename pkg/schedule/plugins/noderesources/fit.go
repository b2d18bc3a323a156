// Package noderesources holds kube-scheduler's two node resource plugins, as
// kube-scheduler keeps them together: NodeResourcesFit (does the pod's
// request fit what the node has left, and how full would the node be) and
// NodeResourcesBalancedAllocation (would cpu and memory stay in balance).
package noderesources

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const (
	// Name is NodeResourcesFit's name in profiles.
	Name = "NodeResourcesFit"

	preFilterStateKey framework.StateKey = "PreFilter" + Name
	preScoreStateKey  framework.StateKey = "PreScore" + Name
)

// The reasons NodeResourcesFit gives, as kube-scheduler words them. A scalar
// resource is reported as InsufficientReasonPrefix followed by its name, such
// as "Insufficient nvidia.com/gpu" or "Insufficient hugepages-2Mi".
const (
	ReasonTooManyPods                  = "Too many pods"
	ReasonInsufficientCPU              = "Insufficient cpu"
	ReasonInsufficientMemory           = "Insufficient memory"
	ReasonInsufficientEphemeralStorage = "Insufficient ephemeral-storage"
	InsufficientReasonPrefix           = "Insufficient "
)

var (
	_ framework.PreFilterPlugin = &Fit{}
	_ framework.FilterPlugin    = &Fit{}
	_ framework.PreScorePlugin  = &Fit{}
	_ framework.ScorePlugin     = &Fit{}
)

// Fit is NodeResourcesFit: Filter rejects a node whose free allocatable
// cannot hold the pod's requests (or which has no room for one more pod),
// and Score ranks nodes by the configured scoring strategy.
type Fit struct {
	ignoredResources      sets.Set[string]
	ignoredResourceGroups sets.Set[string]
	strategy              *scoringStrategy
	handle                framework.Handle
	resourceAllocation
}

// New returns NodeResourcesFit configured by args, a
// *configv1.NodeResourcesFitArgs, or nil for kube-scheduler's defaults
// (LeastAllocated over cpu and memory, weight 1 each).
func New(args runtime.Object, h framework.Handle) (framework.Plugin, error) {
	fitArgs, err := fitArgs(args)
	if err != nil {
		return nil, err
	}
	return &Fit{
		ignoredResources:      sets.New(fitArgs.IgnoredResources...),
		ignoredResourceGroups: sets.New(fitArgs.IgnoredResourceGroups...),
		strategy:              newScoringStrategy(fitArgs.ScoringStrategy),
		handle:                h,
		resourceAllocation:    resourceAllocation{resources: newScoredResources(fitArgs.ScoringStrategy.Resources), handle: h},
	}, nil
}

// Name returns Name.
func (f *Fit) Name() string { return Name }

// InsufficientResource is one resource a node is short of for a pod: how
// much the pod requests, how much the node's pods already use, and how much
// the node has in all. A pod that is short on "pods" requests 1.
type InsufficientResource struct {
	ResourceName corev1.ResourceName
	// Reason is the Filter reason for it, such as "Insufficient cpu".
	Reason    string
	Requested int64
	Used      int64
	Capacity  int64
	// Unresolvable is set when the request exceeds the node's whole
	// allocatable, so that evicting pods (preemption) cannot make room.
	Unresolvable bool
}

// Short is how much more of the resource the node would need free for the
// pod to fit: Requested - (Capacity - Used).
func (r InsufficientResource) Short() int64 {
	return r.Requested - (r.Capacity - r.Used)
}

// scalarRequest is one scalar resource the pod requests.
type scalarRequest struct {
	name     corev1.ResourceName
	quantity int64
	// reason is the reason for it, built once per pod so that a node short
	// of it costs no allocation to word.
	reason string
	// statuses are the shared rejections for a node short of this
	// resource and of the native resources of a mask (nativeReasons), by
	// whether a shortage is unresolvable: each made by the first node that
	// needs it, then returned for every node alike (on a 65,000-node
	// cluster most nodes are short of the same things).
	statuses *[2][nativeCombinations]atomic.Pointer[framework.Status]
	// draBacked says a DeviceClass backs the resource (DRAExtendedResource),
	// or may where the snapshot cannot show it (DRA.MayBack): on a node with
	// no allocatable of it, DynamicResources allocates it, or says it is not
	// evaluated there.
	draBacked bool
}

// podRequest is what Filter compares against each node, computed once per
// pod at PreFilter. It is never changed after, so Clone shares it.
type podRequest struct {
	milliCPU         int64
	memory           int64
	ephemeralStorage int64
	// scalars holds the non-zero scalar requests the plugin checks (the
	// ignored extended resources left out), sorted by name so reasons come
	// out in the same order every run; kube-scheduler's order is a map's.
	scalars []scalarRequest
}

// Clone implements framework.StateData.
func (r *podRequest) Clone() framework.StateData { return r }

// newPodRequest converts computed requests, leaving out zero quantities and
// the extended resources the args ignore.
func newPodRequest(res *framework.Resource, ignored, ignoredGroups sets.Set[string], dra *framework.DRA) *podRequest {
	out := &podRequest{milliCPU: res.MilliCPU, memory: res.Memory, ephemeralStorage: res.EphemeralStorage}
	for name, quantity := range res.ScalarResources {
		if quantity <= 0 || isIgnored(name, ignored, ignoredGroups) {
			continue
		}
		out.scalars = append(out.scalars, scalarRequest{
			name:      name,
			quantity:  quantity,
			reason:    InsufficientReasonPrefix + string(name),
			statuses:  new([2][nativeCombinations]atomic.Pointer[framework.Status]),
			draBacked: dra.MayBack(name),
		})
	}
	slices.SortFunc(out.scalars, func(a, b scalarRequest) int { return strings.Compare(string(a.name), string(b.name)) })
	return out
}

// isIgnored reports an extended resource named in ignoredResources, or whose
// group (the part before the "/") is in ignoredResourceGroups. Only extended
// resources can be ignored: never hugepages or kubernetes.io/ resources.
func isIgnored(name corev1.ResourceName, ignored, ignoredGroups sets.Set[string]) bool {
	if !framework.IsExtendedResourceName(name) {
		return false
	}
	if ignored.Has(string(name)) {
		return true
	}
	if ignoredGroups.Len() == 0 {
		return false
	}
	group, _, _ := strings.Cut(string(name), "/")
	return ignoredGroups.Has(group)
}

// PreFilter computes the pod's requests (init and sidecar containers,
// pod-level requests and overhead included, through component-helpers as
// kube-scheduler does) for Filter. Like kube-scheduler it never skips and
// never narrows the node set.
func (f *Fit) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	// The options kube-scheduler's PreFilter uses: a pod being scheduled has
	// no resize status yet, and pod-level resources (beta, on) count.
	requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{SkipPodLevelResources: false})
	var dra *framework.DRA
	if f.handle != nil {
		dra = f.handle.DRA()
	}
	state.Write(preFilterStateKey, newPodRequest(requestsToResource(requests), f.ignoredResources, f.ignoredResourceGroups, dra))
	return nil, nil
}

// requestsToResource converts a pod's requests as kube-scheduler's
// SetMaxResource does: cpu, memory, ephemeral storage and the scalars; any
// other name (such as "pods") is not a request a node accounts for.
func requestsToResource(requests corev1.ResourceList) *framework.Resource {
	out := &framework.Resource{}
	for name, q := range requests {
		switch name {
		case corev1.ResourceCPU:
			out.MilliCPU = q.MilliValue()
		case corev1.ResourceMemory:
			out.Memory = q.Value()
		case corev1.ResourceEphemeralStorage:
			out.EphemeralStorage = q.Value()
		default:
			if framework.IsScalarResourceName(name) {
				out.AddScalar(name, q.Value())
			}
		}
	}
	return out
}

// PreFilterExtensions returns nil: Filter compares with the NodeInfo it is
// given, which already holds any pod added or removed, so nothing in the
// PreFilter state depends on other pods.
func (f *Fit) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Native reason bits, in the order kube-scheduler reports them.
const (
	shortPods = 1 << iota
	shortCPU
	shortMemory
	shortEphemeralStorage
	nativeCombinations
)

// nativeReasons holds, for every combination of the native reasons, the
// reason list Filter returns, so a node short only of native resources costs
// one allocation (the Status) to report. The slices are shared and must not
// be changed; their capacity equals their length, so an append copies.
var nativeReasons = func() [nativeCombinations][]string {
	var out [nativeCombinations][]string
	names := []string{ReasonTooManyPods, ReasonInsufficientCPU, ReasonInsufficientMemory, ReasonInsufficientEphemeralStorage}
	for mask := 1; mask < nativeCombinations; mask++ {
		var reasons []string
		for bit, reason := range names {
			if mask&(1<<bit) != 0 {
				reasons = append(reasons, reason)
			}
		}
		out[mask] = slices.Clip(reasons)
	}
	return out
}()

// maxInlineInsufficient is how many insufficient resources Filter collects
// without allocating: the four native ones plus a few scalars.
const maxInlineInsufficient = 8

// Filter rejects a node that cannot hold the pod: one reason per short
// resource, Unschedulable when evicting pods could make room and
// UnschedulableAndUnresolvable when some request exceeds the node's whole
// allocatable. A node that fits costs no allocation.
func (f *Fit) Filter(_ context.Context, state *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	req, err := framework.ReadState[*podRequest](state, preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	if req.fitsAll(nodeInfo) {
		return nil
	}
	var buf [maxInlineInsufficient]InsufficientResource
	insufficient := req.fits(nodeInfo, buf[:0])

	code := framework.Unschedulable
	var native, scalars int
	for i := range insufficient {
		if insufficient[i].Unresolvable {
			code = framework.UnschedulableAndUnresolvable
		}
		switch insufficient[i].ResourceName {
		case corev1.ResourcePods:
			native |= shortPods
		case corev1.ResourceCPU:
			native |= shortCPU
		case corev1.ResourceMemory:
			native |= shortMemory
		case corev1.ResourceEphemeralStorage:
			native |= shortEphemeralStorage
		default:
			scalars++
		}
	}
	unresolvable := 0
	if code == framework.UnschedulableAndUnresolvable {
		unresolvable = 1
	}
	switch {
	case scalars == 0:
		return nativeStatuses[unresolvable][native]
	case scalars == 1:
		// The one scalar comes last and is always among the request's, so
		// this returns its shared status; the list below would say the same.
		if st := req.scalarStatus(insufficient[len(insufficient)-1].ResourceName, unresolvable, native); st != nil {
			return st
		}
	}
	reasons := make([]string, 0, len(insufficient))
	for i := range insufficient {
		reasons = append(reasons, insufficient[i].Reason)
	}
	return framework.NewStatus(code, reasons...).WithPlugin(Name)
}

// nativeStatuses are the shared rejections for every combination of native
// shortages, Unschedulable and UnschedulableAndUnresolvable: returning one
// costs no allocation per node. They carry the plugin name already, so the
// runner's WithPlugin never writes to them.
var nativeStatuses = func() (out [2][nativeCombinations]*framework.Status) {
	for mask := range nativeCombinations {
		out[0][mask] = framework.NewStatus(framework.Unschedulable, nativeReasons[mask]...).WithPlugin(Name)
		out[1][mask] = framework.NewStatus(framework.UnschedulableAndUnresolvable, nativeReasons[mask]...).WithPlugin(Name)
	}
	return out
}()

// scalarStatus returns the shared rejection for a node short of one
// requested scalar and of the native resources in mask: Filter runs on
// every node at once, so the first to need it makes it and the others
// take the one stored.
func (r *podRequest) scalarStatus(name corev1.ResourceName, unresolvable, mask int) *framework.Status {
	for i := range r.scalars {
		s := &r.scalars[i]
		if s.name != name {
			continue
		}
		slot := &s.statuses[unresolvable][mask]
		if st := slot.Load(); st != nil {
			return st
		}
		code := framework.Unschedulable
		if unresolvable == 1 {
			code = framework.UnschedulableAndUnresolvable
		}
		st := framework.NewStatus(code, append(slices.Clip(nativeReasons[mask]), s.reason)...).WithPlugin(Name)
		if slot.CompareAndSwap(nil, st) {
			return st
		}
		return slot.Load()
	}
	return nil
}

// fitsAll reports whether the node is short of nothing: fits without the
// details, so that the common case touches no buffer.
func (r *podRequest) fitsAll(nodeInfo *framework.NodeInfo) bool {
	allocatable, requested := nodeInfo.Allocatable, nodeInfo.Requested
	if len(nodeInfo.Pods)+1 > allocatable.AllowedPodNumber ||
		r.milliCPU > 0 && r.milliCPU > allocatable.MilliCPU-requested.MilliCPU ||
		r.memory > 0 && r.memory > allocatable.Memory-requested.Memory ||
		r.ephemeralStorage > 0 && r.ephemeralStorage > allocatable.EphemeralStorage-requested.EphemeralStorage {
		return false
	}
	for i := range r.scalars {
		s := &r.scalars[i]
		capacity := allocatable.ScalarResources[s.name]
		if s.quantity > capacity-requested.ScalarResources[s.name] && !(s.draBacked && capacity == 0) {
			return false
		}
	}
	return true
}

// fits appends to out every resource the node is short of for the request,
// in kube-scheduler's order (pods, cpu, memory, ephemeral-storage, then the
// scalars by name), and returns it.
//
// Like kube-scheduler v1.37 (DRAExtendedResource, GA; shouldDelegateResourceToDRA)
// it leaves to DynamicResources an extended resource the node has no
// allocatable of when a DeviceClass backs it (its extendedResourceName, or
// deviceclass.resource.kubernetes.io/<class>).
func (r *podRequest) fits(nodeInfo *framework.NodeInfo, out []InsufficientResource) []InsufficientResource {
	allocatable, requested := nodeInfo.Allocatable, nodeInfo.Requested
	if pods := len(nodeInfo.Pods); pods+1 > allocatable.AllowedPodNumber {
		out = append(out, InsufficientResource{
			ResourceName: corev1.ResourcePods,
			Reason:       ReasonTooManyPods,
			Requested:    1,
			Used:         int64(pods),
			Capacity:     int64(allocatable.AllowedPodNumber),
		})
	}
	if r.milliCPU > 0 && r.milliCPU > allocatable.MilliCPU-requested.MilliCPU {
		out = append(out, InsufficientResource{
			ResourceName: corev1.ResourceCPU,
			Reason:       ReasonInsufficientCPU,
			Requested:    r.milliCPU,
			Used:         requested.MilliCPU,
			Capacity:     allocatable.MilliCPU,
			Unresolvable: r.milliCPU > allocatable.MilliCPU,
		})
	}
	if r.memory > 0 && r.memory > allocatable.Memory-requested.Memory {
		out = append(out, InsufficientResource{
			ResourceName: corev1.ResourceMemory,
			Reason:       ReasonInsufficientMemory,
			Requested:    r.memory,
			Used:         requested.Memory,
			Capacity:     allocatable.Memory,
			Unresolvable: r.memory > allocatable.Memory,
		})
	}
	if r.ephemeralStorage > 0 && r.ephemeralStorage > allocatable.EphemeralStorage-requested.EphemeralStorage {
		out = append(out, InsufficientResource{
			ResourceName: corev1.ResourceEphemeralStorage,
			Reason:       ReasonInsufficientEphemeralStorage,
			Requested:    r.ephemeralStorage,
			Used:         requested.EphemeralStorage,
			Capacity:     allocatable.EphemeralStorage,
			Unresolvable: r.ephemeralStorage > allocatable.EphemeralStorage,
		})
	}
	for i := range r.scalars {
		s := &r.scalars[i]
		capacity, used := allocatable.ScalarResources[s.name], requested.ScalarResources[s.name]
		if s.draBacked && capacity == 0 {
			continue
		}
		if s.quantity > capacity-used {
			out = append(out, InsufficientResource{
				ResourceName: s.name,
				Reason:       s.reason,
				Requested:    s.quantity,
				Used:         used,
				Capacity:     capacity,
				Unresolvable: s.quantity > capacity,
			})
		}
	}
	return out
}

// FitCheck says which resources a node is short of for one pod, the
// pod's request made once for many nodes (explain's table asks about every
// node of the cluster).
type FitCheck struct{ r *podRequest }

// NewFitCheck makes the pod's request for Fits.
func NewFitCheck(pod *framework.PodInfo, dra *framework.DRA) FitCheck {
	res := pod.Res.Resource
	if res == nil {
		res = &framework.Resource{}
	}
	return FitCheck{r: newPodRequest(res, nil, nil, dra)}
}

// Fits returns every resource nodeInfo is short of for the check's pod,
// nil when the pod fits: the same comparison as Filter without ignored
// resources, for diagnostics such as "short 6 nvidia.com/gpu" (see
// InsufficientResource.Short). It uses the requests computed once in
// PodInfo.Res; extended resources dra backs with devices are left out
// where the node has no allocatable of them.
func (c FitCheck) Fits(nodeInfo *framework.NodeInfo) []InsufficientResource {
	// Collected on the stack, then kept in one slice of the exact length:
	// explain's node table keeps one per node of the cluster.
	var buf [maxInlineInsufficient]InsufficientResource
	if out := c.r.fits(nodeInfo, buf[:0]); len(out) > 0 {
		return slices.Clone(out)
	}
	return nil
}

// fitPreScoreState holds the pod's request for each scored resource.
type fitPreScoreState struct {
	podRequests []int64
}

// Clone implements framework.StateData; the state is never changed.
func (s *fitPreScoreState) Clone() framework.StateData { return s }

// PreScore computes the pod's request of each scored resource for Score.
func (f *Fit) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	state.Write(preScoreStateKey, &fitPreScoreState{podRequests: f.podRequests(pod)})
	return nil
}

// Score ranks the node by the scoring strategy, 0-100. Without a PreScore
// state (PreScore did not run) it computes the requests itself, as
// kube-scheduler does.
func (f *Fit) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	var podRequests []int64
	if s, err := framework.ReadState[*fitPreScoreState](state, preScoreStateKey); err == nil {
		podRequests = s.podRequests
	}
	if podRequests == nil {
		podRequests = f.podRequests(pod)
	}
	if len(f.resources) == 0 {
		return 0, framework.NewStatus(framework.Error, "resources not found")
	}
	return f.strategy.score(&f.resourceAllocation, podRequests, nodeInfo), nil
}

// ScoreExtensions returns nil: scores are already 0-100.
func (f *Fit) ScoreExtensions() framework.ScoreExtensions { return nil }
