package v1alpha1

import (
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	resourcev1 "k8s.io/api/resource/v1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/admit"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/bind"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/explain"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// ToObject turns a result of this package into an object that any
// cli-runtime printer prints (json, yaml, name, jsonpath, go-template), with
// apiVersion GroupVersion, the kind, and metadata naming the subject.
func ToObject(kind, namespace, name string, v any) (runtime.Object, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", kind, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(GroupVersion)
	u.SetKind(kind)
	u.SetName(name)
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}

// FromExplanation converts explain's result.
func FromExplanation(e *explain.Explanation) *Explanation {
	var queue *QueuePlace
	if q := e.Queue; q != nil {
		queue = &QueuePlace{Position: int64(q.Entry.Position), Of: int64(q.Of), Verdict: string(q.Entry.Outcome), Reason: q.Entry.Reason, Raced: q.Entry.Raced}
		for _, a := range q.Ahead {
			queue.Ahead = append(queue.Ahead, a.Namespace+"/"+a.Name())
		}
	}
	out := Explanation{
		Queue:        queue,
		Verdict:      string(e.Verdict),
		Message:      e.Message,
		Blocked:      e.Blocked,
		TopologyKey:  e.TopologyKey,
		Domain:       e.Domain,
		Nodes:        []Node{},
		Gates:        e.Gates,
		Quota:        e.Quota,
		NotEvaluated: e.NotEvaluated,
		Suggestions:  []Suggestion{},
	}
	if p := e.Placement; p != nil && p.PreferredTopologyKey != "" {
		out.Preferred = &PreferredTopology{TopologyKey: p.PreferredTopologyKey, Met: p.PreferredMet}
	}
	if p := e.Placement; p != nil {
		out.Kueue = kueueOf(p.Admission)
	}
	if e.Pod != nil {
		out.Pod = e.Pod.Namespace + "/" + e.Pod.Name
		out.PodRequests = gang.FormatRequests(e.Pod)
	}
	for _, a := range e.PlacedBefore {
		out.PlacedBefore = append(out.PlacedBefore, Assignment{Pod: a.Pod.Namespace + "/" + a.Pod.Name, Node: a.Node, Score: a.Score})
	}
	for i := range e.Nodes {
		out.Nodes = append(out.Nodes, fromNode(&e.Nodes[i]))
	}
	if m := e.Member; m != nil {
		out.Member = &MemberAlone{Pod: m.Pod.Namespace + "/" + m.Pod.Name, Fits: m.Fits, Bound: m.Bound, Node: m.Node, Score: m.Score, Message: m.Message}
	}
	if g := e.Gang; g != nil {
		p, v := e.Placement, e.Validity
		out.Gang = refOf(g)
		out.MinMember, out.MaxPlaceable = ptr.To(p.MinMember), ptr.To(p.MaxPlaceable)
		out.Validity = &Validity{Valid: v.Valid, ValidCount: v.ValidCount, MinMember: v.MinMember, Reason: v.Reason, Message: v.Message}
		for _, t := range v.Tasks {
			out.Validity.Tasks = append(out.Validity.Tasks, TaskValidity{Name: t.Name, Valid: t.Valid, Min: t.Min})
		}
		for _, pod := range p.Running {
			out.Running = append(out.Running, Member{Pod: pod.Namespace + "/" + pod.Name, Node: pod.Spec.NodeName})
		}
		for _, a := range p.Planned() {
			out.PlacedOn = append(out.PlacedOn, Assignment{Pod: a.Pod.Namespace + "/" + a.Pod.Name, Node: a.Node, Score: a.Score})
		}
		for _, b := range e.Blocking {
			out.Blocking = append(out.Blocking, Blocking{Plugin: b.Plugin, Nodes: int64(b.Nodes), Reasons: b.Reasons})
		}
		for _, d := range e.Domains {
			dh := DomainHold{Value: d.Value, Nodes: int64(d.Nodes), Holds: d.Holds, Complete: d.Complete, Skipped: d.Skipped, Usable: int64(d.Usable)}
			if d.Resource != "" {
				dh.Resource, dh.Free, dh.Allocatable = string(d.Resource), gang.FormatQuantity(d.Resource, d.Free), gang.FormatQuantity(d.Resource, d.Allocatable)
			}
			out.Domains = append(out.Domains, dh)
		}
	}
	for _, s := range e.Suggestions {
		out.Suggestions = append(out.Suggestions, fromSuggestion(s))
	}
	return &out
}

func fromNode(n *explain.Node) Node {
	o := Node{Name: n.Name, Domain: n.Domain, Feasible: n.Feasible, Fits: int64(n.Fits), FitsAtMost: n.FitsAtMost,
		Placed: int64(n.Placed), Plugin: n.Plugin, Reasons: append([]string{}, n.Reasons...), MissingFeatures: n.MissingFeatures}
	for _, f := range n.Devices {
		o.Devices = append(o.Devices, DeviceFit{Claim: f.Claim, Request: f.Request, Class: f.Class, Wanted: f.Wanted, Matching: int64(f.Matching), Free: int64(f.Free)})
	}
	if n.Taint != nil {
		o.Taint = gang.FormatTaint(n.Taint)
	}
	for _, r := range n.Insufficient {
		o.Insufficient = append(o.Insufficient, Insufficient{
			Resource:  string(r.ResourceName),
			Requested: gang.FormatQuantity(r.ResourceName, r.Requested),
			Free:      gang.FormatQuantity(r.ResourceName, max(0, r.Capacity-r.Used)),
			Short:     gang.FormatQuantity(r.ResourceName, r.Short()),
		})
	}
	if n.Feasible {
		score := n.Score
		o.Score = &score
	}
	for _, f := range n.Filters {
		o.Filters = append(o.Filters, FilterVerdict{Plugin: f.Plugin, Code: f.Code.String(), Reasons: f.Reasons})
	}
	if n.OutsideDomain {
		o.WithoutDomain = &NodeVerdict{Feasible: n.Plugin == "" && len(n.Reasons) == 0, Fits: o.Fits, Plugin: n.Plugin, Reasons: n.Reasons}
		o.Fits, o.FitsAtMost, o.Plugin, o.Reasons = 0, false, "", []string{schedule.NotInDomainReason}
	}
	return o
}

func fromSuggestion(s explain.Suggestion) Suggestion {
	o := Suggestion{Kind: string(s.Kind), Message: s.Message, Why: s.Why, Verified: s.Verified, PDBViolations: int64(s.PDBViolations), EquallyGood: s.EquallyGood, Tolerations: s.Tolerations,
		Together: s.Together, MinMember: s.MinMember, Gates: s.Gates, NearMiss: s.NearMiss, Claims: s.Claims}
	for _, l := range s.Lost {
		o.DevicesLost = append(o.DevicesLost, DevicesLost{Node: l.Node, Resource: string(l.Name), Capacity: l.Capacity, Allocatable: l.Allocatable})
	}
	for _, r := range s.Shortfall {
		format := func(v int64) string { return gang.FormatQuantity(r.Name, v) }
		if r.DeviceClass != "" {
			format = func(v int64) string { return strconv.FormatInt(v, 10) }
		}
		o.Shortfall = append(o.Shortfall, Shortfall{
			Resource: string(r.Name), DeviceClass: r.DeviceClass, Domain: r.Domain, Short: format(r.Short), Need: format(r.Need),
			Usable: format(r.Usable), Free: format(r.Free), MostFree: format(r.MostFree), MostFreeNode: r.MostFreeNode,
		})
	}
	for _, f := range s.Selector {
		o.Selector = append(o.Selector, SelectorFix{Field: f.Field, Key: f.Key, Value: f.Value, NewKey: f.NewKey, NewValue: f.NewValue, Nodes: int64(f.Nodes)})
	}
	for _, l := range s.Largest {
		o.Largest = append(o.Largest, Largest{Resource: string(l.Name), Request: gang.FormatQuantity(l.Name, l.Request),
			Allocatable: gang.FormatQuantity(l.Name, l.Allocatable), Node: l.Node})
	}
	for _, m := range s.Moves {
		o.Moves = append(o.Moves, Move{Pod: m.Pod.Namespace + "/" + m.Pod.Name, From: m.From, To: m.To, Priority: m.Priority,
			PriorityClassName: m.Pod.Spec.PriorityClassName, NoController: m.NoController, Gang: m.Gang})
	}
	for _, v := range s.Victims {
		o.Victims = append(o.Victims, Victim{Pod: v.Pod.Namespace + "/" + v.Pod.Name, Node: v.Node, Priority: v.Priority, PriorityClassName: v.Pod.Spec.PriorityClassName})
	}
	if n := s.NewNodes; n != nil {
		shape := &NodeShape{Like: n.Like, Count: int64(n.Count), Allocatable: map[string]string{}, TopologyKey: n.TopologyKey, Domain: n.Domain}
		for name, q := range n.Allocatable {
			shape.Allocatable[string(name)] = q.String()
		}
		if n.Like == "" {
			shape.Labels = n.Labels
		}
		for _, t := range n.Taints {
			shape.Taints = append(shape.Taints, gang.FormatTaint(&t))
		}
		o.NewNodes = shape
	}
	for _, r := range s.Repairs {
		ro := NodeRepair{Node: r.Node, Uncordon: r.Uncordon}
		for _, t := range r.Taints {
			ro.Taints = append(ro.Taints, gang.FormatTaint(&t))
		}
		o.Repairs = append(o.Repairs, ro)
	}
	return o
}

// claimAllocations lists claims with their allocations.
func claimAllocations(claims []*resourcev1.ResourceClaim) []ClaimAllocation {
	var out []ClaimAllocation
	for _, c := range claims {
		out = append(out, ClaimAllocation{Name: c.Name, Allocation: c.Status.Allocation})
	}
	return out
}

// FromPlacement converts place's result.
func FromPlacement(p *gang.Placement) *Placement {
	out := Placement{
		Gang:         *refOf(p.Gang),
		Verdict:      string(p.Verdict),
		OnceReleased: string(p.OnceReleased),
		MinMember:    p.MinMember,
		MaxPlaceable: p.MaxPlaceable,
		Assignments:  []Assignment{},
		TopologyKey:  p.TopologyKey,
		Domain:       p.Domain,
		Message:      p.Message,
		Conflict:     p.Conflict,
	}
	if p.PreferredTopologyKey != "" {
		out.Preferred = &PreferredTopology{TopologyKey: p.PreferredTopologyKey, Met: p.PreferredMet}
	}
	for _, pod := range p.Running {
		out.Running = append(out.Running, Member{Pod: pod.Namespace + "/" + pod.Name, Node: pod.Spec.NodeName})
	}
	for _, a := range p.Assignments {
		out.Assignments = append(out.Assignments, Assignment{Pod: a.Pod.Namespace + "/" + a.Pod.Name, Node: a.Node, Score: a.Score, Claims: claimAllocations(a.Claims)})
	}
	out.NotEvaluated = p.AllNotEvaluated()
	out.PlacedLater = gang.PodKeys(p.PlacedLater)
	if q := p.QueueOrder; q != nil {
		out.QueueOrder = &QueueOrder{NeedOthers: gang.PodKeys(q.NeedOthers), Worst: q.Worst}
	}
	for _, pod := range p.Unplaced {
		out.Unplaced = append(out.Unplaced, pod.Namespace+"/"+pod.Name)
	}
	if r := p.Gate; r != nil {
		out.HeldBy = &Hold{Gate: r.Gate, Reason: r.Reason, Message: r.Message, Fix: r.Fix, Figures: r.Figures}
		if r.Detail != "" {
			out.HeldBy.Message = r.Detail
		}
		for name, q := range r.Shortfall {
			if out.HeldBy.Shortfall == nil {
				out.HeldBy.Shortfall = map[string]string{}
			}
			out.HeldBy.Shortfall[string(name)] = q.String()
		}
	}
	for _, d := range p.Domains {
		do := Domain{Value: d.Value, Nodes: int64(d.Nodes), Running: int64(d.Running), Placed: int64(d.Placed), Complete: d.Complete, Skipped: d.Skipped, ScoreSum: d.ScoreSum}
		if d.Skipped == "" || d.Placed > 0 {
			do.FreeFraction = fmt.Sprintf("%.3f", d.FreeFraction)
		}
		out.Domains = append(out.Domains, do)
	}
	out.Kueue = kueueOf(p.Admission)
	out.Members = []MemberPlan{}
	for _, m := range p.Members() {
		out.Members = append(out.Members, MemberPlan{Pod: m.Pod.Namespace + "/" + m.Pod.Name, Node: m.Node, Score: m.Score, Status: string(m.Status)})
	}
	return &out
}

// FromBindReport converts bind's result.
func FromBindReport(r *bind.Report) *BindReport {
	out := BindReport{
		Gang:          *refOf(r.Gang),
		Verdict:       string(r.Verdict),
		Reason:        string(r.Reason),
		Message:       r.Message,
		MinMember:     r.MinMember,
		BoundMembers:  r.BoundMembers,
		Members:       []MemberResult{},
		LostEvents:    r.LostEvents,
		Overcommitted: r.Overcommitted,
	}
	for _, m := range r.Members {
		out.Members = append(out.Members, MemberResult{Pod: m.Pod.Namespace + "/" + m.Pod.Name, Node: m.Node, Result: string(m.Result), Message: m.Message,
			Unverified: m.Unverified})
	}
	return &out
}

// FromAdmission converts admit's result; u is what --ungate did, if it ran.
func FromAdmission(a *admit.Admission, u *admit.UngateReport) *Admission {
	out := Admission{Gang: *refOf(a.Gang), Verdict: string(a.Verdict),
		Admitted: a.Admitted(), Placement: *FromPlacement(a.Placement), Kueue: kueueOf(a.Placement.Admission)}
	for _, c := range a.Checks {
		out.Checks = append(out.Checks, Check{Name: c.Name, Result: string(c.Result), Reason: c.Reason, Message: c.Message, SchedulerMessage: c.SchedulerMessage, Figures: c.Figures})
	}
	if u != nil {
		out.Ungate = &UngateReport{Gate: u.Gate, Ungated: u.Ungated, Untouched: u.Untouched, Changed: u.Changed,
			Bound: u.Bound, NotBoundYet: u.NotBoundYet}
	}
	return &out
}

// FromPending converts explain's list of what waits.
func FromPending(lines []explain.Pending) *PendingList {
	out := PendingList{Items: []PendingItem{}}
	for i := range lines {
		l := &lines[i]
		item := PendingItem{Namespace: l.Namespace, Name: l.Name(), MissingPodGroup: l.Group, Pending: int64(l.PendingMembers),
			Members: int64(l.Members), Position: int64(l.Position), Scheduler: l.Scheduler, Queue: l.Queue, Priority: l.Priority,
			Verdict: string(l.Outcome), Explain: string(l.Verdict), Reason: l.Reason, Nodes: l.Nodes, Behind: l.Behind, Raced: l.Raced}
		if !l.Since.IsZero() && l.Since.Year() < 9999 {
			item.Since = &metav1.Time{Time: l.Since}
		}
		if g := l.Gang; g != nil {
			item.Gang = refOf(g)
		}
		item.Kueue = kueueOf(l.Admission)
		out.Items = append(out.Items, item)
	}
	return &out
}

// refOf names a gang, and what a what-if gang was read from.
func refOf(g *gang.Gang) *GangRef {
	return &GangRef{Source: string(g.Source), Namespace: g.Namespace, Name: g.Name, Read: g.Read}
}

// kueueOf is Kueue's decision on a placement, nil when Kueue had nothing
// to decide.
func kueueOf(a *gang.Admission) *Kueue {
	if a == nil || a.Layer != "Kueue" {
		return nil
	}
	return &Kueue{Admitted: a.Admitted, ClusterQueue: a.Queue, Flavors: a.Flavors, Counts: a.Counts, Borrows: a.Borrows, Preempts: a.Preempts,
		Message: a.Message, NotEvaluated: a.NotEvaluated}
}
