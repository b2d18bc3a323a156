package gang

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-gang/kubectl-gang/pkg/fields"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// CoschedulingLabel names a member's scheduling.x-k8s.io PodGroup.
const CoschedulingLabel = "scheduling.x-k8s.io/pod-group"

// GateCoscheduling names coscheduling's PreFilter among the gates.
const GateCoscheduling = "CoschedulingPreFilter"

// The reasons coscheduling's PreFilter holds a gang back. Coscheduling words
// these only in its messages; the reasons are kubectl-gang's.
const (
	// ReasonNotEnoughSiblings: coscheduling found fewer member pods than minMember.
	ReasonNotEnoughSiblings = "NotEnoughSiblingPods"
	// ReasonResourceGap: coscheduling's minResources exceed the cluster's free capacity.
	ReasonResourceGap = "ResourceGap"
)

// coschedulingRules: a scheduling.x-k8s.io PodGroup of scheduler-plugins;
// members carry CoschedulingLabel; its PreFilter is the gate.
var coschedulingRules = sourceRules{
	source: SourceCoscheduling,
	group:  schedule.CoschedulingGroup,
	nameOf: func(pod *corev1.Pod) string { return pod.Labels[CoschedulingLabel] },
	setName: func(pod *corev1.Pod, name string) {
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		pod.Labels[CoschedulingLabel] = name
	},
	read:         readCoscheduling,
	minimumField: "spec.minMember",
	gate: func(_ *schedule.Snapshot, g *Gang, nodes []*framework.NodeInfo) *GateResult {
		return CoschedulingGate(g, nodes)
	},
	missing: "is the scheduler-plugins coscheduling controller installed?",
	// Coscheduling's Permit denies a pod whose PodGroup it cannot find.
	held: func(string) string { return "PodGroup not found" },
	// Coscheduling's PreFilter refuses every member while fewer than
	// minMember pods carry the group's label.
	short: func(g *Gang, v Validity) string {
		pod := "of the group"
		if len(g.Members) > 0 {
			pod = g.Members[0].Name
		}
		return fmt.Sprintf("pre-filter pod %s cannot find enough sibling pods, current pods number: %d, minMember of group: %d",
			pod, len(g.Members), g.MinMember)
	},
}

// readCoscheduling reads a scheduling.x-k8s.io PodGroup. An absent minMember
// is 0, which coscheduling treats as no minimum.
func readCoscheduling(p *fields.Reader, g *Gang) error {
	var err error
	if g.MinMember, _, err = p.Int32(0, 0, "spec", "minMember"); err != nil {
		return err
	}
	g.MinResources, err = p.Resources("spec", "minResources")
	return err
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
	res := &GateResult{Gate: GateCoscheduling, Check: "MinResources", Passed: true, Figures: map[string]string{
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
	res.Figures["requested"] = FormatResources(request)

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
	res.Figures["free"] = FormatResources(free)

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
