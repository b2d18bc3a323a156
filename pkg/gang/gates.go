package gang

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// The gates GateResult.Gate names.
const (
	GateCoscheduling   = "CoschedulingPreFilter"
	GateVolcanoEnqueue = "VolcanoEnqueue"
)

// The reasons a gate holds a gang back. The gang schedulers word these only
// in their messages; the reasons are kubectl-gang's.
const (
	// ReasonNotEnoughSiblings: coscheduling found fewer member pods than minMember.
	ReasonNotEnoughSiblings = "NotEnoughSiblingPods"
	// ReasonResourceGap: coscheduling's minResources exceed the cluster's free capacity.
	ReasonResourceGap = "ResourceGap"
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

// GateResult is a gang scheduler's own admission decision about a gang,
// taken before any pod is placed.
type GateResult struct {
	// Gate names the check: GateCoscheduling or GateVolcanoEnqueue.
	Gate   string
	Passed bool
	// Reason is a CamelCase word for a refusal; empty when passed.
	Reason string
	// Message is what the scheduler says, worded as it words it.
	Message string
	// Detail says the same for people where the scheduler's words do not
	// (coscheduling prints Go's rendering of a ResourceList): the figures
	// compared, as kubectl prints quantities. Empty when Message is enough.
	Detail string
	// Shortfall is how much of each resource is missing when a resource
	// check refused; nil otherwise.
	Shortfall corev1.ResourceList
	// Figures are the numbers the decision compared, by name, for display.
	Figures map[string]string
}

// CoschedulingGate is scheduler-plugins coscheduling's PreFilter check
// (v0.33, core.PodGroupManager.PreFilter) for a gang of that source; nil for
// gangs of other sources. It refuses a group with fewer member pods than
// minMember, and a group whose minResources, plus minMember pods, exceed the
// free capacity summed over nodes, where a node's free capacity is its
// allocatable minus what its pods request, the group's own pods left out.
// The message is byte for byte coscheduling's (its "resource gap" prints Go's
// rendering of a ResourceList); Shortfall gives the gap readably.
//
// Coscheduling counts member pods of every phase; a live snapshot holds no
// finished pods, so finished members are not counted here. Its backoff of
// groups that failed recently is not modelled.
func CoschedulingGate(g *Gang, nodes []*framework.NodeInfo) *GateResult {
	if g.Source != SourceCoscheduling {
		return nil
	}
	res := &GateResult{Gate: GateCoscheduling, Passed: true, Figures: map[string]string{
		"members":   strconv.Itoa(len(g.Members)),
		"minMember": strconv.Itoa(int(g.MinMember)),
	}}
	if len(g.Members) < int(g.MinMember) {
		res.Passed = false
		res.Reason = ReasonNotEnoughSiblings
		res.Message = fmt.Sprintf("pre-filter pod %v cannot find enough sibling pods, "+
			"current pods number: %v, minMember of group: %v", schedulingMember(g), len(g.Members), g.MinMember)
		return res
	}
	if g.MinResources == nil {
		return res
	}
	request := g.MinResources.DeepCopy()
	request[corev1.ResourcePods] = *resource.NewQuantity(int64(g.MinMember), resource.DecimalSI)
	res.Figures["requested"] = formatResources(request)

	var frees []corev1.ResourceList // per node, in node order
	free := corev1.ResourceList{}
	for _, ni := range nodes {
		if ni == nil || ni.Node() == nil {
			continue
		}
		nodeFree := coschedulingNodeFree(ni, g.Namespace, g.Name)
		frees = append(frees, nodeFree)
		for name, q := range nodeFree {
			if _, ok := request[name]; ok {
				sum := free[name]
				sum.Add(q)
				free[name] = sum
			}
		}
	}
	res.Figures["free"] = formatResources(free)

	need := request.DeepCopy() // the gap is worked out in request itself
	gap := coschedulingResourceGap(frees, request)
	if gap == nil {
		return res
	}
	res.Passed = false
	res.Reason = ReasonResourceGap
	res.Message = fmt.Sprintf("resource gap: %v", gap)
	res.Shortfall = corev1.ResourceList{}
	for name, q := range gap {
		res.Shortfall[name] = canonical(q)
	}
	res.Detail = fmt.Sprintf("minResources plus %d member pod(s) exceed the free capacity of the nodes: %s",
		g.MinMember, needFreeShort(need, free, res.Shortfall))
	return res
}

// schedulingMember is the pod coscheduling's PreFilter message names: the
// first member in queue order that waits for a node.
func schedulingMember(g *Gang) string {
	for _, pod := range g.Members {
		if pod.Spec.NodeName == "" {
			return pod.Name
		}
	}
	if len(g.Members) > 0 {
		return g.Members[0].Name
	}
	return ""
}

// coschedulingResourceGap is CheckClusterResource: it subtracts each node's
// free capacity (coschedulingNodeFree, in node order) from request and
// returns what is left, or nil when every resource was covered. It works on
// Quantities exactly as coscheduling does, so the gap prints identically.
func coschedulingResourceGap(frees []corev1.ResourceList, request corev1.ResourceList) corev1.ResourceList {
	for _, free := range frees {
		for res, q := range request {
			q.Sub(free[res])
			if q.Sign() <= 0 {
				delete(request, res)
				continue
			}
			request[res] = q
		}
		if len(request) == 0 {
			return nil
		}
	}
	return request
}

// coschedulingNodeFree is coscheduling's getNodeResource: allocatable minus
// the requests of the node's pods, the group's own pods excluded, in the
// units and formats of its util.ResourceList. It can be negative.
func coschedulingNodeFree(ni *framework.NodeInfo, namespace, name string) corev1.ResourceList {
	requested := ni.Requested.Clone()
	pods := len(ni.Pods)
	for _, pi := range ni.Pods {
		if pi.Pod.Namespace != namespace || pi.Pod.Labels[CoschedulingLabel] != name {
			continue
		}
		pods--
		r := pi.Res.Resource
		requested.MilliCPU -= r.MilliCPU
		requested.Memory -= r.Memory
		requested.EphemeralStorage -= r.EphemeralStorage
		for s, q := range r.ScalarResources {
			requested.AddScalar(s, -q)
		}
	}
	alloc := ni.Allocatable
	out := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(alloc.MilliCPU-requested.MilliCPU, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(alloc.Memory-requested.Memory, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(int64(alloc.AllowedPodNumber-pods), resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(alloc.EphemeralStorage-requested.EphemeralStorage, resource.BinarySI),
	}
	for s, q := range alloc.ScalarResources {
		format := resource.DecimalSI
		if framework.IsHugePageResourceName(s) {
			format = resource.BinarySI
		}
		out[s] = *resource.NewQuantity(q-requested.ScalarResources[s], format)
	}
	return out
}

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
	res := &GateResult{Gate: GateVolcanoEnqueue, Passed: true, Figures: map[string]string{"queue": g.Queue}}
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
	p := newObjectParser(queue)
	capability, err := p.resourcesAt("spec", "capability")
	if err != nil {
		return volcanoResource{}, err
	}
	guarantee, err := p.resourcesAt("spec", "guarantee", "resource")
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

// VolcanoQueuePods returns the pods of the Volcano PodGroups in podGroups
// whose queue is queue (spec.queue, "default" when unset), for VolcanoEnqueueGate.
func VolcanoQueuePods(podGroups []*unstructured.Unstructured, pods []*corev1.Pod, queue string) []*corev1.Pod {
	inQueue := map[string]bool{}
	for _, u := range podGroups {
		if src, ok := SourceOfGroup(u.GroupVersionKind().Group); !ok || src != SourceVolcano {
			continue
		}
		q, _, _ := unstructured.NestedString(u.Object, "spec", "queue")
		if q == "" {
			q = VolcanoDefaultQueue
		}
		if q == queue {
			inQueue[u.GetNamespace()+"/"+u.GetName()] = true
		}
	}
	var out []*corev1.Pod
	for _, pod := range pods {
		if name := GroupNameOf(pod, SourceVolcano); name != "" && inQueue[pod.Namespace+"/"+name] {
			out = append(out, pod)
		}
	}
	return out
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

// formatResources renders a ResourceList as "cpu=4, memory=8Gi", by name.
// needFreeShort words, per requested resource in name order, what is
// needed, what is free and what is short, as kubectl prints quantities:
// "cpu need 12, free 3, short 9; pods need 4, free 400".
func needFreeShort(need, free, short corev1.ResourceList) string {
	var parts []string
	for _, name := range sortedKeys(need) {
		q, f := canonical(need[name]), canonical(free[name])
		part := fmt.Sprintf("%s need %s, free %s", name, q.String(), f.String())
		if sq, ok := short[name]; ok && sq.Sign() > 0 {
			part += ", short " + sq.String()
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}

func formatResources(rl corev1.ResourceList) string {
	names := make([]string, 0, len(rl))
	for name := range rl {
		names = append(names, string(name))
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, name := range names {
		q := rl[corev1.ResourceName(name)]
		parts[i] = name + "=" + q.String()
	}
	return strings.Join(parts, ", ")
}

// canonical returns q re-created from its value so it prints in canonical
// form whatever arithmetic produced it.
func canonical(q resource.Quantity) resource.Quantity {
	if q.MilliValue()%1000 == 0 {
		return *resource.NewQuantity(q.Value(), q.Format)
	}
	return *resource.NewMilliQuantity(q.MilliValue(), q.Format)
}

func formatOf(name corev1.ResourceName) resource.Format {
	if name == corev1.ResourceEphemeralStorage || framework.IsHugePageResourceName(name) {
		return resource.BinarySI
	}
	return resource.DecimalSI
}

// SourceGate is the gate the gang's own scheduler applies before it places
// a member: coscheduling's PreFilter, or Volcano's enqueue step (queue
// state and capability, the cluster's room). nil when the source has none,
// or when the snapshot holds no Volcano Queues to check against (a saved
// file, or a kind the user may not list).
func SourceGate(snap *schedule.Snapshot, g *Gang, nodes []*framework.NodeInfo) *GateResult {
	switch g.Source {
	case SourceCoscheduling:
		return CoschedulingGate(g, nodes)
	case SourceVolcano:
		if snap.IsUnreadable("queues."+string(SourceVolcano)) || len(snap.Queues) == 0 {
			return nil
		}
		var queue *unstructured.Unstructured
		for _, u := range snap.Queues {
			if u.GetName() == g.Queue {
				queue = u
			}
		}
		return VolcanoEnqueueGate(g, queue, nodes, VolcanoQueuePods(snap.PodGroups, snap.Pods, g.Queue))
	}
	return nil
}

// ApplyGate makes the placement honour its source's gate: a gang the gate
// holds back is not placed, whatever would fit (its scheduler never tries
// a member), and the message says why with the gate's figures. The plan
// that would fit stays, for the diagnosis.
func (p *Placement) ApplyGate(r *GateResult) {
	if r == nil || r.Passed {
		return
	}
	p.Gate = r
	if p.Verdict == VerdictPlaced {
		p.Verdict = VerdictUnschedulable
		p.BestAttempt, p.Assignments, p.Unplaced = p.Assignments, nil, nil
	}
	why := r.Message
	if r.Detail != "" {
		why = r.Detail
	}
	p.Message = fmt.Sprintf("gang %s is held back by %s (%s): %s", p.Gang.Key(), r.Gate, r.Reason, why)
}
