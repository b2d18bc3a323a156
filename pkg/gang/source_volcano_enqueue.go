package gang

import (
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/pkg/fields"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// GateVolcanoEnqueue names Volcano's enqueue step among the gates.
const GateVolcanoEnqueue = "VolcanoEnqueue"

// checkVolcanoQueue names the enqueue step among admit's checks.
const checkVolcanoQueue = "VolcanoQueue"

// The reasons Volcano's enqueue step holds a gang back. Volcano words these
// only in its messages; the reasons are kubectl-gang's.
const (
	// ReasonQueueNotFound: the Volcano queue the group names does not exist.
	ReasonQueueNotFound = "QueueNotFound"
	// ReasonQueueNotOpen: the Volcano queue is Closed or Closing.
	ReasonQueueNotOpen = "QueueNotOpen"
	// ReasonClusterOverused: Volcano's overcommit plugin finds too little idle capacity.
	ReasonClusterOverused = "ClusterOverused"
	// ReasonQueueInsufficient: Volcano's proportion plugin finds the queue's capability exhausted.
	ReasonQueueInsufficient = "QueueInsufficient"
)

// VolcanoOverCommitFactor is the factor Volcano's overcommit plugin applies to
// the cluster's capacity when it decides whether a group may enter the queue
// (its default; clusters may configure another).
const VolcanoOverCommitFactor = 1.2

// VolcanoEnqueueGate is Volcano's enqueue step for a gang of that source (nil
// for other sources), as Volcano's default configuration makes it: a group
// still Pending enters its queue only when its queue exists and, if it sets
// minResources, when
//   - the overcommit plugin finds room: minResources fit in the cluster's
//     allocatable times VolcanoOverCommitFactor minus what the nodes' pods
//     request, in each resource minResources names;
//   - the proportion plugin finds the queue Open and minResources plus the
//     queue's allocation within its real capability: spec.capability (an
//     unset or non-positive cpu or memory is unlimited) capped by the
//     cluster's allocatable, raised to spec.guarantee.
//
// queuePods are the pods of the queue's PodGroups; those holding a node make
// up the queue's allocation (see VolcanoQueuePods). A group past Pending has
// already been enqueued and passes.
//
// Not modelled, each of which makes the gate more lenient than Volcano: the
// minResources of other groups already Inqueue (both plugins reserve them),
// the guarantees of other queues (which lower this queue's real capability),
// and the queue's elastic resources (which raise it).
func VolcanoEnqueueGate(g *Gang, queue *unstructured.Unstructured, nodes []*framework.NodeInfo, queuePods []*corev1.Pod) *GateResult {
	if g.Source != SourceVolcano {
		return nil
	}
	res := &GateResult{Gate: GateVolcanoEnqueue, Check: checkVolcanoQueue, Passed: true, Figures: map[string]string{"queue": g.Queue}}
	if g.PodGroup != nil {
		phase, _, _ := unstructured.NestedString(g.PodGroup.Object, "status", "phase")
		if phase != "" && phase != "Pending" {
			res.Message = fmt.Sprintf("podgroup is %s: it has passed Volcano's enqueue step", phase)
			return res
		}
	}
	if queue == nil {
		res.Passed = false
		res.Reason = ReasonQueueNotFound
		res.Message = fmt.Sprintf("queue %q not found: Volcano does not enqueue the group", g.Queue)
		return res
	}
	if g.MinResources == nil {
		res.Message = "no minResources: Volcano enqueues the group without a resource check"
		return res
	}
	minReq := newVolcanoResource(g.MinResources)
	res.Figures["minResources"] = formatResources(g.MinResources)

	// overcommit
	total, used := volcanoResource{}, volcanoResource{}
	for _, ni := range nodes {
		if ni == nil || ni.Node() == nil {
			continue
		}
		total.add(newVolcanoResource(ni.Node().Status.Allocatable))
		used.add(volcanoResourceOf(ni.Requested))
	}
	idle := total.clone()
	idle.scale(VolcanoOverCommitFactor)
	idle.sub(used)
	res.Figures["clusterIdle"] = idle.String()
	if ok, names := minReq.lessEqualIn(idle, minReq); !ok {
		res.Passed = false
		res.Reason = ReasonClusterOverused
		res.Message = formatResourceNames("resource in cluster is overused", "overused", names)
		res.Shortfall = minReq.shortfall(idle, names)
		return res
	}

	// proportion
	if state, _, _ := unstructured.NestedString(queue.Object, "status", "state"); state != "" && state != "Open" {
		res.Passed = false
		res.Reason = ReasonQueueNotOpen
		res.Message = fmt.Sprintf("queue %q is %s, not Open", queue.GetName(), state)
		return res
	}
	realCapability, err := volcanoRealCapability(queue, total)
	if err != nil {
		res.Passed = false
		res.Reason = ReasonQueueInsufficient
		res.Message = err.Error()
		return res
	}
	allocated := volcanoResource{}
	for _, pod := range queuePods {
		if TaskStatusOf(pod).IsAllocated() {
			allocated.add(volcanoResourceOf(framework.ComputePodResource(pod).Resource))
		}
	}
	res.Figures["queueCapability"] = realCapability.String()
	res.Figures["queueAllocated"] = allocated.String()
	want := minReq.clone()
	want.add(allocated)
	if ok, names := want.lessEqualIn(realCapability, minReq); !ok {
		res.Passed = false
		res.Reason = ReasonQueueInsufficient
		res.Message = formatResourceNames("queue resource quota insufficient", "insufficient", names)
		res.Shortfall = want.shortfall(realCapability, names)
	}
	return res
}

// volcanoRealCapability is the proportion plugin's realCapability for a
// queue, other queues' guarantees left out: the cluster's total raised to the
// queue's guarantee, then capped by its capability.
func volcanoRealCapability(queue *unstructured.Unstructured, total volcanoResource) (volcanoResource, error) {
	p := fields.New(queue)
	capability, err := p.Resources("spec", "capability")
	if err != nil {
		return volcanoResource{}, err
	}
	guarantee, err := p.Resources("spec", "guarantee", "resource")
	if err != nil {
		return volcanoResource{}, err
	}
	capped := total.clone()
	capped.raiseTo(newVolcanoResource(guarantee))
	if len(capability) > 0 {
		c := newVolcanoResource(capability)
		if c.MilliCPU <= 0 {
			c.MilliCPU = math.MaxFloat64
		}
		if c.Memory <= 0 {
			c.Memory = math.MaxFloat64
		}
		capped.capAt(c)
	}
	return capped, nil
}

// volcanoResource is Volcano's scheduler Resource: milli-CPU, memory bytes,
// and scalar resources (ephemeral storage among them) in milli-units, as
// floats. Pods are left out: Volcano ignores them in the comparisons here.
type volcanoResource struct {
	MilliCPU float64
	Memory   float64
	Scalars  map[corev1.ResourceName]float64
}

// newVolcanoResource converts a ResourceList as Volcano's NewResource does.
func newVolcanoResource(rl corev1.ResourceList) volcanoResource {
	var r volcanoResource
	for name, q := range rl {
		switch {
		case name == corev1.ResourceCPU:
			r.MilliCPU += float64(q.MilliValue())
		case name == corev1.ResourceMemory:
			r.Memory += float64(q.Value())
		case name == corev1.ResourcePods, strings.HasPrefix(string(name), "count/"):
		case name == corev1.ResourceEphemeralStorage, framework.IsScalarResourceName(name):
			r.addScalar(name, float64(q.MilliValue()))
		}
	}
	return r
}

// volcanoResourceOf converts the scheduler's integer Resource.
func volcanoResourceOf(fr *framework.Resource) volcanoResource {
	r := volcanoResource{MilliCPU: float64(fr.MilliCPU), Memory: float64(fr.Memory)}
	if fr.EphemeralStorage != 0 {
		r.addScalar(corev1.ResourceEphemeralStorage, float64(fr.EphemeralStorage)*1000)
	}
	for name, q := range fr.ScalarResources {
		r.addScalar(name, float64(q)*1000)
	}
	return r
}

func (r *volcanoResource) addScalar(name corev1.ResourceName, v float64) {
	if r.Scalars == nil {
		r.Scalars = map[corev1.ResourceName]float64{}
	}
	r.Scalars[name] += v
}

func (r volcanoResource) clone() volcanoResource {
	out := r
	out.Scalars = nil
	for name, v := range r.Scalars {
		out.addScalar(name, v)
	}
	return out
}

func (r *volcanoResource) add(o volcanoResource) {
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
	for name, v := range o.Scalars {
		r.addScalar(name, v)
	}
}

func (r *volcanoResource) sub(o volcanoResource) {
	r.MilliCPU -= o.MilliCPU
	r.Memory -= o.Memory
	for name, v := range o.Scalars {
		r.addScalar(name, -v)
	}
}

func (r *volcanoResource) scale(f float64) {
	r.MilliCPU *= f
	r.Memory *= f
	for name := range r.Scalars {
		r.Scalars[name] *= f
	}
}

// raiseTo is ExceededPart(total, guarantee) plus guarantee: each dimension
// becomes at least the guarantee.
func (r *volcanoResource) raiseTo(o volcanoResource) {
	r.MilliCPU = max(r.MilliCPU, o.MilliCPU)
	r.Memory = max(r.Memory, o.Memory)
	for name, v := range o.Scalars {
		if v > r.Scalars[name] {
			r.addScalar(name, v-r.Scalars[name])
		}
	}
}

// capAt is MinDimensionResource with an infinite default: a scalar the cap
// does not name stays as it is.
func (r *volcanoResource) capAt(o volcanoResource) {
	r.MilliCPU = min(r.MilliCPU, o.MilliCPU)
	r.Memory = min(r.Memory, o.Memory)
	for name, v := range r.Scalars {
		if c, ok := o.Scalars[name]; ok {
			r.Scalars[name] = min(v, c)
		}
	}
}

// lessEqualIn is LessEqualWithDimensionAndResourcesName: r <= o in each
// resource req asks for a positive amount of; it returns the names that are
// not, cpu and memory first, then scalars by name.
func (r volcanoResource) lessEqualIn(o, req volcanoResource) (bool, []string) {
	var names []string
	if req.MilliCPU > 0 && r.MilliCPU > o.MilliCPU {
		names = append(names, string(corev1.ResourceCPU))
	}
	if req.Memory > 0 && r.Memory > o.Memory {
		names = append(names, string(corev1.ResourceMemory))
	}
	for _, name := range sortedKeys(req.Scalars) {
		if req.Scalars[name] > 0 && r.Scalars[name] > o.Scalars[name] {
			names = append(names, string(name))
		}
	}
	return len(names) == 0, names
}

// shortfall is r - o in the named resources, as Quantities.
func (r volcanoResource) shortfall(o volcanoResource, names []string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, n := range names {
		name := corev1.ResourceName(n)
		switch name {
		case corev1.ResourceCPU:
			out[name] = *resource.NewMilliQuantity(int64(math.Ceil(r.MilliCPU-o.MilliCPU)), resource.DecimalSI)
		case corev1.ResourceMemory:
			out[name] = *resource.NewQuantity(int64(math.Ceil(r.Memory-o.Memory)), resource.BinarySI)
		default:
			out[name] = canonical(*resource.NewMilliQuantity(int64(math.Ceil(r.Scalars[name]-o.Scalars[name])), formatOf(name)))
		}
	}
	return out
}

// String renders the resource as a ResourceList: "cpu=4, memory=8Gi".
func (r volcanoResource) String() string {
	rl := corev1.ResourceList{}
	if r.MilliCPU != 0 {
		rl[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(math.Min(r.MilliCPU, math.MaxInt64)), resource.DecimalSI)
	}
	if r.Memory != 0 {
		rl[corev1.ResourceMemory] = *resource.NewQuantity(int64(math.Min(r.Memory, math.MaxInt64)), resource.BinarySI)
	}
	for name, v := range r.Scalars {
		rl[name] = canonical(*resource.NewMilliQuantity(int64(math.Min(v, math.MaxInt64)), formatOf(name)))
	}
	return formatResources(rl)
}

// formatResourceNames is Volcano's util.FormatResourceNames.
func formatResourceNames(prefix, verb string, names []string) string {
	if len(names) == 0 {
		return prefix
	}
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = verb + " " + name
	}
	return prefix + ": " + strings.Join(parts, ", ")
}
