// Package coscheduling is the gang system of scheduler-plugins'
// Coscheduling (v0.33): a scheduling.x-k8s.io PodGroup whose members carry
// Label, its PreFilter the gate (docs/design.md#gangs). It registers itself
// with the gang core.
package coscheduling

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-gang/kubectl-gang/pkg/fields"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Source is the system's name among the gang sources.
const Source gang.Source = Group

// Label names a member's scheduling.x-k8s.io PodGroup.
const Label = "scheduling.x-k8s.io/pod-group"

// Gate names coscheduling's PreFilter among the gates.
const Gate = "CoschedulingPreFilter"

// The reasons coscheduling's PreFilter holds a gang back. Coscheduling words
// these only in its messages; the reasons are kubectl-gang's.
const (
	// ReasonNotEnoughSiblings: coscheduling found fewer member pods than minMember.
	ReasonNotEnoughSiblings = "NotEnoughSiblingPods"
	// ReasonResourceGap: coscheduling's minResources exceed the cluster's free capacity.
	ReasonResourceGap = "ResourceGap"
)

type system struct{}

// Group is scheduler-plugins' coscheduling API group; its PodGroup is
// served at v1alpha1.
const Group = "scheduling.x-k8s.io"

func init() {
	gang.Register(system{})
	schedule.RegisterObjectKind(schedule.ObjectKind{Group: Group, Resource: "podgroups", Kind: schedule.PodGroupKind, Namespaced: true})
}

func (system) Rules() gang.Rules {
	return gang.Rules{Source: Source, Name: "coscheduling", Rank: 2, Group: Group, MinimumField: "spec.minMember",
		CopyLabels: []string{Label},
		Missing:    "is the scheduler-plugins coscheduling controller installed?"}
}

func (system) NameOf(pod *corev1.Pod) string { return pod.Labels[Label] }

func (system) SetName(pod *corev1.Pod, name string) {
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[Label] = name
}

func (system) Read(p *fields.Reader, g *gang.Gang) error { return readCoscheduling(p, g) }

func (system) Gate(_ *schedule.Snapshot, g *gang.Gang, nodes []*framework.NodeInfo) *gang.GateResult {
	return PreFilter(g, nodes)
}

// Held: coscheduling's Permit denies a pod whose PodGroup it cannot find.
func (system) Held(string) string { return "PodGroup not found" }

// Short: coscheduling's PreFilter refuses every member while fewer than
// minMember pods carry the group's label.
func (system) Short(g *gang.Gang, _ gang.Validity) string {
	pod := "of the group"
	if len(g.Members) > 0 {
		pod = g.Members[0].Name
	}
	return fmt.Sprintf("pre-filter pod %s cannot find enough sibling pods, current pods number: %d, minMember of group: %d",
		pod, len(g.Members), g.MinMember)
}

// QueueKey is Coscheduling.Less: the members' pod priority, then the
// PodGroup's creation (GetCreationTimestamp).
func (system) QueueKey(_ *schedule.Snapshot, g *gang.Gang, priority int32, since time.Time) (int32, time.Time) {
	if g.PodGroup != nil {
		if ts := g.PodGroup.GetCreationTimestamp(); !ts.IsZero() {
			since = ts.Time
		}
	}
	return priority, since
}

// readCoscheduling reads a scheduling.x-k8s.io PodGroup. An absent minMember
// is 0, which coscheduling treats as no minimum.
func readCoscheduling(p *fields.Reader, g *gang.Gang) error {
	var err error
	if g.MinMember, _, err = p.Int32(0, 0, "spec", "minMember"); err != nil {
		return err
	}
	g.MinResources, err = p.Resources("spec", "minResources")
	return err
}

// PreFilter is scheduler-plugins coscheduling's PreFilter check
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
func PreFilter(g *gang.Gang, nodes []*framework.NodeInfo) *gang.GateResult {
	if g.Source != Source {
		return nil
	}
	res := &gang.GateResult{Gate: Gate, Check: "MinResources", Passed: true, Figures: map[string]string{
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
	res.Figures["requested"] = gang.FormatResources(request)

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
	res.Figures["free"] = gang.FormatResources(free)

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
		res.Shortfall[name] = gang.Canonical(q)
	}
	res.Detail = fmt.Sprintf("minResources plus %d member pod(s) exceed the free capacity of the nodes: %s",
		g.MinMember, gang.NeedFreeShort(need, free, res.Shortfall))
	return res
}

// schedulingMember is the pod coscheduling's PreFilter message names: the
// first member in queue order that waits for a node.
func schedulingMember(g *gang.Gang) string {
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
		if pi.Pod.Namespace != namespace || pi.Pod.Labels[Label] != name {
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
