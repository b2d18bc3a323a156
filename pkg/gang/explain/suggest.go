package explain

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeaffinity"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeunschedulable"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/tainttoleration"
)

// SuggestionKind names what a suggestion is about.
type SuggestionKind string

// The kinds of suggestion, in the order Explain lists them.
const (
	// SuggestShortfall is a diagnosis, not a change: which resources the
	// subject lacks and by how much.
	SuggestShortfall SuggestionKind = "Shortfall"
	// SuggestPreempt: evicting lower-priority pods, as kube-scheduler's
	// preemption would choose them, makes room.
	SuggestPreempt SuggestionKind = "Preempt"
	// SuggestAddNodes: adding nodes of a shape makes room.
	SuggestAddNodes SuggestionKind = "AddNodes"
	// SuggestRepairNodes: uncordoning nodes or getting them Ready makes room.
	SuggestRepairNodes SuggestionKind = "RepairNodes"
	// SuggestLowerMinMember: a smaller minimum would let the gang start.
	SuggestLowerMinMember SuggestionKind = "LowerMinMember"
	// SuggestUngate: the subject fits once its scheduling gates are removed.
	SuggestUngate SuggestionKind = "Ungate"
)

// Suggestion is one thing that would make the subject fit, or (Shortfall)
// by how much it misses.
type Suggestion struct {
	Kind    SuggestionKind
	Message string
	// Verified says the change was made on a copy of the snapshot and the
	// subject was then placed (all or nothing for a gang).
	Verified bool
	// Shortfall is set for SuggestShortfall.
	Shortfall []ResourceShortfall
	// Victims are the pods a preemption would evict, and PDBViolations how
	// many of those evictions go beyond a PodDisruptionBudget.
	Victims       []Victim
	PDBViolations int
	// NewNodes is the shape and count of nodes to add.
	NewNodes *NodeShape
	// Repairs are the nodes to uncordon or get Ready; each alone is enough
	// unless Together is set.
	Repairs  []NodeRepair
	Together bool
	// MinMember is the minimum that would let the gang start.
	MinMember int32
	// Gates are the scheduling gates to remove.
	Gates []string
}

// ResourceShortfall is how much of one resource the members left over need
// beyond what the nodes that could take them have free.
type ResourceShortfall struct {
	Name corev1.ResourceName
	// Short is Need - Usable.
	Short int64
	// Need sums the requests of the members that do not fit.
	Need int64
	// Usable is the free amount on the nodes that could take such a member,
	// each node's counted in whole requests of the blocked member (a member
	// cannot be split across nodes); Free is the same without rounding.
	Usable int64
	Free   int64
	// MostFree is the most free on one such node, MostFreeNode that node.
	MostFree     int64
	MostFreeNode string
}

// Victim is a pod a preemption would evict.
type Victim struct {
	Pod      *corev1.Pod
	Node     string
	Priority int32
}

// NodeShape is a node to add: like an existing node (Like), or derived
// from the members' requests when no node fits them.
type NodeShape struct {
	Like        string
	Count       int
	Allocatable corev1.ResourceList
	Labels      map[string]string
	Taints      []corev1.Taint
	TopologyKey string
	Domain      string
}

// NodeRepair is what to do to one node.
type NodeRepair struct {
	Node     string
	Uncordon bool
	// Taints are the node-condition taints that go once the node is Ready.
	Taints []corev1.Taint
}

// maxRepairCandidates bounds the nodes tried one by one for a repair.
const maxRepairCandidates = 8

// maxShapes bounds the node shapes tried for SuggestAddNodes.
const maxShapes = 3

// suggest computes what would make g fit. p is g's placement on the
// snapshot; e is the explanation so far (its node table is the blocked
// member's cycle).
func (x *explainer) suggest(ctx context.Context, g *gang.Gang, p *gang.Placement, e *Explanation) ([]Suggestion, error) {
	if p.Verdict == gang.VerdictPlaced {
		if e.GatedMembers == 0 {
			return nil, nil
		}
		msg := fmt.Sprintf("removing the scheduling gate(s) %s would let kube-scheduler try it: %s", strings.Join(e.Gates, ", "), fitsThen(g, p))
		if g.Source != "" {
			msg = fmt.Sprintf("removing the scheduling gate(s) %s from %d member(s) (kubectl gang admit --ungate GATE, once admitted) would let kube-scheduler try them: %s",
				strings.Join(e.Gates, ", "), e.GatedMembers, fitsThen(g, p))
		}
		return []Suggestion{{Kind: SuggestUngate, Verified: true, Gates: e.Gates, Message: msg}}, nil
	}
	var out []Suggestion
	if s := x.shortfall(g, p, e); s != nil {
		out = append(out, *s)
	}
	for _, f := range []func(context.Context, *gang.Gang, *gang.Placement, *Explanation) (*Suggestion, error){x.preempt, x.addNodes, x.repairNodes, x.lowerMinMember} {
		s, err := f(ctx, g, p, e)
		if err != nil {
			return nil, err
		}
		if s != nil {
			out = append(out, *s)
		}
	}
	return out, nil
}

// unplacedOf returns the pending members the best attempt did not place.
func unplacedOf(g *gang.Gang, p *gang.Placement) []*corev1.Pod {
	placed := map[string]bool{}
	for _, a := range p.Planned() {
		placed[a.Pod.Namespace+"/"+a.Pod.Name] = true
	}
	var out []*corev1.Pod
	for _, pod := range g.PendingUngated() {
		if !placed[pod.Namespace+"/"+pod.Name] {
			out = append(out, pod)
		}
	}
	return out
}

// inScope reports whether a node is where the gang was placed: the best
// domain when the gang is confined to one, else anywhere.
func inScope(p *gang.Placement, node *corev1.Node) bool {
	if p.TopologyKey == "" || p.Domain == "" {
		return true
	}
	return node.Labels[p.TopologyKey] == p.Domain
}

// where names the scope for messages.
func where(p *gang.Placement) string {
	if p.TopologyKey == "" || p.Domain == "" {
		return "the cluster"
	}
	return p.TopologyKey + "=" + p.Domain
}

// shortfall works out, per resource the blocked member requests, how much
// the members left over need beyond the free capacity of the nodes in scope
// that could take such a member (those only NodeResourcesFit rejects),
// after the best attempt's members are placed. Each node's free amount
// counts in whole requests of the blocked member, since a member cannot be
// split across nodes: 2 free GPUs do not help a member that needs 8.
func (x *explainer) shortfall(g *gang.Gang, p *gang.Placement, e *Explanation) *Suggestion {
	if p.Blocker == nil {
		return nil
	}
	unplaced := unplacedOf(g, p)
	state, err := x.stateAfter(x.base, p.Planned())
	if err != nil || len(unplaced) == 0 {
		return nil
	}
	eligible := map[string]bool{}
	for _, n := range e.Nodes {
		if !n.OutsideDomain && (n.Feasible || n.Plugin == noderesources.Name) {
			eligible[n.Name] = true
		}
	}
	blocked := framework.ComputePodResource(p.Blocker.Pod).Resource
	var out []ResourceShortfall
	add := func(name corev1.ResourceName, per int64, of func(*framework.Resource) int64) {
		if per <= 0 {
			return
		}
		rs := ResourceShortfall{Name: name}
		for _, pod := range unplaced {
			rs.Need += of(framework.ComputePodResource(pod).Resource)
		}
		for _, ni := range state.NodeInfos() {
			if !eligible[ni.Name()] || !inScope(p, ni.Node()) {
				continue
			}
			free := max(0, of(ni.Allocatable)-of(ni.Requested))
			rs.Free += free
			rs.Usable += free / per * per
			if free > rs.MostFree || rs.MostFreeNode == "" {
				rs.MostFree, rs.MostFreeNode = free, ni.Name()
			}
		}
		if rs.Short = rs.Need - rs.Usable; rs.Short > 0 {
			out = append(out, rs)
		}
	}
	for _, name := range sortedKeys(blocked.ScalarResources) {
		add(name, blocked.ScalarResources[name], func(r *framework.Resource) int64 { return r.Get(name) })
	}
	add(corev1.ResourceCPU, blocked.MilliCPU, func(r *framework.Resource) int64 { return r.MilliCPU })
	add(corev1.ResourceMemory, blocked.Memory, func(r *framework.Resource) int64 { return r.Memory })
	add(corev1.ResourceEphemeralStorage, blocked.EphemeralStorage, func(r *framework.Resource) int64 { return r.EphemeralStorage })
	if len(out) == 0 {
		return nil
	}
	var amounts []string
	for _, rs := range out {
		amounts = append(amounts, gang.FormatQuantity(rs.Name, rs.Short)+" "+string(rs.Name))
	}
	first := out[0]
	var b strings.Builder
	fmt.Fprintf(&b, "short %s in %s", joinAnd(amounts), where(p))
	if g.Source != "" {
		fmt.Fprintf(&b, ": it holds %d of minimum %d member(s) at once; the %d left need", p.MaxPlaceable, p.MinMember, len(unplaced))
	} else {
		fmt.Fprintf(&b, ": %s/%s needs", p.Blocker.Pod.Namespace, p.Blocker.Pod.Name)
	}
	fmt.Fprintf(&b, " %s %s", gang.FormatQuantity(first.Name, blockedAmount(blocked, first.Name)), first.Name)
	if g.Source != "" {
		b.WriteString(" each")
	}
	if first.MostFreeNode == "" {
		b.WriteString(" on one node, and no node there could take it")
	} else {
		fmt.Fprintf(&b, " on one node, and the most free on any node it may run on is %s (%s)",
			gang.FormatQuantity(first.Name, first.MostFree), first.MostFreeNode)
	}
	return &Suggestion{Kind: SuggestShortfall, Shortfall: out, Message: b.String()}
}

// blockedAmount is how much of a resource the blocked member requests.
func blockedAmount(r *framework.Resource, name corev1.ResourceName) int64 {
	switch name {
	case corev1.ResourceCPU:
		return r.MilliCPU
	case corev1.ResourceMemory:
		return r.Memory
	case corev1.ResourceEphemeralStorage:
		return r.EphemeralStorage
	}
	return r.Get(name)
}

// joinAnd joins "a", "b and c".
func joinAnd(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// stateAfter returns a fork of base with the assignments reserved.
func (x *explainer) stateAfter(base *schedule.Scheduler, assignments []gang.Assignment) (*schedule.Scheduler, error) {
	s, err := base.Fork()
	if err != nil {
		return nil, err
	}
	for _, a := range assignments {
		if err := s.Reserve(a.Pod, a.Node); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// place places g on snap: the explainer's own (on its scheduler, built
// once), or a changed copy.
func (x *explainer) place(ctx context.Context, snap *schedule.Snapshot, g *gang.Gang) (*gang.Placement, error) {
	if snap == x.snap {
		return gang.PlaceOn(ctx, x.plain, g, x.opts.PlaceOptions)
	}
	return gang.Place(ctx, snap, g, x.opts.PlaceOptions)
}

// preempt asks kube-scheduler's preemption, as a what-if, which
// lower-priority pods it would evict (PodDisruptionBudgets respected as
// kube-scheduler respects them: candidates that violate none first) for
// each member left over in turn, in the state the best attempt left: a
// member that fits once earlier victims are gone takes the first feasible
// node, one that does not gets its own victims and is assumed on the node
// preemption nominates. The victims are then removed from a copy of the
// snapshot and the gang placed again: the suggestion is made only when it
// then fits. Nothing is evicted.
func (x *explainer) preempt(ctx context.Context, g *gang.Gang, p *gang.Placement, _ *Explanation) (*Suggestion, error) {
	if p.Blocker == nil || p.Blocker.NominatedNode == "" {
		return nil, nil // kube-scheduler's own preemption found no room for the first
	}
	state, err := x.stateAfter(x.base, p.Planned())
	if err != nil {
		return nil, err
	}
	if p.TopologyKey != "" && p.Domain != "" {
		var names []string
		for _, ni := range state.NodeInfos() {
			if inScope(p, ni.Node()) {
				names = append(names, ni.Name())
			}
		}
		state.Confine(names)
	} else {
		state.Confine(nil)
	}
	s := &Suggestion{Kind: SuggestPreempt}
	gone := map[string]bool{}
	for _, pod := range unplacedOf(g, p) {
		res, err := state.Schedule(ctx, gang.Ungated(pod))
		if err != nil {
			return nil, fmt.Errorf("preemption what-if for %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		if res.Verdict == schedule.VerdictScheduled {
			// Earlier victims made room: it takes the first feasible node.
			for _, n := range res.Nodes {
				if n.Feasible {
					if err := state.Reserve(pod, n.Name); err != nil {
						return nil, err
					}
					break
				}
			}
			continue
		}
		if res.NominatedNode == "" || len(res.PreemptionVictims) == 0 {
			return nil, nil
		}
		s.PDBViolations += res.PreemptionPDBViolations
		for _, v := range res.PreemptionVictims {
			s.Victims = append(s.Victims, Victim{Pod: v, Node: res.NominatedNode, Priority: corev1helpers.PodPriority(v)})
			gone[v.Namespace+"/"+v.Name] = true
		}
		if err := state.Evict(res.PreemptionVictims, res.NominatedNode); err != nil {
			return nil, err
		}
		if err := state.Reserve(pod, res.NominatedNode); err != nil {
			return nil, err
		}
	}
	if len(s.Victims) == 0 {
		return nil, nil
	}
	c := *x.snap
	c.Pods = slices.DeleteFunc(slices.Clone(x.snap.Pods), func(pod *corev1.Pod) bool { return gone[pod.Namespace+"/"+pod.Name] })
	then, err := x.place(ctx, &c, g)
	if err != nil || then.Verdict != gang.VerdictPlaced {
		return nil, err
	}
	s.Verified = true
	byNode := map[string][]string{}
	var nodes []string
	for _, v := range s.Victims {
		if _, ok := byNode[v.Node]; !ok {
			nodes = append(nodes, v.Node)
		}
		desc := v.Pod.Namespace + "/" + v.Pod.Name + " (priority " + fmt.Sprint(v.Priority)
		if v.Pod.Spec.PriorityClassName != "" {
			desc += ", " + v.Pod.Spec.PriorityClassName
		}
		byNode[v.Node] = append(byNode[v.Node], desc+")")
	}
	var parts []string
	for _, n := range nodes {
		parts = append(parts, strings.Join(byNode[n], ", ")+" on "+n)
	}
	s.Message = fmt.Sprintf("preempting %d lower-priority pod(s) would make room: %s", len(s.Victims), strings.Join(parts, "; "))
	if s.PDBViolations > 0 {
		s.Message += fmt.Sprintf("; %d of them beyond what a PodDisruptionBudget allows", s.PDBViolations)
	}
	s.Message += "; " + fitsThen(g, then)
	return s, nil
}

// fitsThen says how the subject fits on the changed copy.
func fitsThen(g *gang.Gang, p *gang.Placement) string {
	if g.Source == "" && len(p.Assignments) > 0 {
		return "then it fits on " + p.Assignments[0].Node
	}
	msg := fmt.Sprintf("then %d member(s) fit at once", int(p.MaxPlaceable))
	if p.Domain != "" {
		msg += " in " + p.TopologyKey + "=" + p.Domain
	}
	return msg
}

// fitsOnNew is fitsThen for added nodes, which have made-up names.
func fitsOnNew(g *gang.Gang, p *gang.Placement) string {
	if g.Source == "" {
		return "then it fits on a new node"
	}
	return fitsThen(g, p)
}

// nodeConditionTaints are the taints the node lifecycle controller puts on
// nodes that are not Ready or under pressure; they go when the node is
// healthy again.
var nodeConditionTaints = []string{
	corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable, corev1.TaintNodeUnschedulable,
	corev1.TaintNodeMemoryPressure, corev1.TaintNodeDiskPressure, corev1.TaintNodePIDPressure,
	corev1.TaintNodeNetworkUnavailable, corev1.TaintNodeOutOfService,
}

// conditionTaints returns the node's node-condition taints.
func conditionTaints(node *corev1.Node) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range node.Spec.Taints {
		if slices.Contains(nodeConditionTaints, t.Key) {
			out = append(out, t)
		}
	}
	return out
}

// healthy returns a copy of node uncordoned, Ready, without its
// node-condition taints.
func healthy(node *corev1.Node) *corev1.Node {
	c := node.DeepCopy()
	c.Spec.Unschedulable = false
	c.Spec.Taints = slices.DeleteFunc(c.Spec.Taints, func(t corev1.Taint) bool { return slices.Contains(nodeConditionTaints, t.Key) })
	c.Status.Conditions = slices.DeleteFunc(c.Status.Conditions, func(nc corev1.NodeCondition) bool { return nc.Type == corev1.NodeReady })
	c.Status.Conditions = append(c.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"})
	return c
}

// passesOnceHealthy reports whether a node's filter verdicts for the
// blocked member all pass, but for the ones a healthy copy of the node
// would pass (NodeUnschedulable, node-condition taints) and, when
// resources is set, NodeResourcesFit (a new node is empty).
func passesOnceHealthy(n *Node, pod *corev1.Pod, node *corev1.Node, resources bool) bool {
	if len(n.Filters) == 0 {
		return n.Feasible
	}
	for _, f := range n.Filters {
		if f.Code == framework.Success || f.Code == framework.Skip {
			continue
		}
		switch f.Plugin {
		case nodeunschedulable.Name:
			continue
		case tainttoleration.Name:
			if _, untolerated := tainttoleration.UntoleratedTaint(pod, healthy(node)); !untolerated {
				continue
			}
		case noderesources.Name:
			if resources {
				continue
			}
		}
		return false
	}
	return true
}

// addNodes finds the smallest node shape that, added N times where the
// gang was placed, lets it fit, and the smallest N: shapes of existing
// nodes the blocked member could use (those it is rejected from only for
// want of free resources, a cordon or a node condition) from the smallest,
// then a shape derived from the members' largest requests. Every count is
// proven by placing the gang on a copy of the snapshot with the nodes added
// (with copies of their DaemonSet pods).
func (x *explainer) addNodes(ctx context.Context, g *gang.Gang, p *gang.Placement, e *Explanation) (*Suggestion, error) {
	if p.Blocker == nil {
		return nil, nil
	}
	unplaced := unplacedOf(g, p)
	if len(unplaced) == 0 {
		return nil, nil
	}
	pod := p.Blocker.Pod
	byName := map[string]*corev1.Node{}
	for _, n := range x.snap.Nodes {
		byName[n.Name] = n
	}
	type shape struct {
		node *corev1.Node
		key  string
		size [3]int64
		room int // blocked members an empty node of the shape holds
	}
	var shapes []shape
	seen := map[string]bool{}
	podInfo := framework.NewPodInfo(pod)
	for i := range e.Nodes {
		n := &e.Nodes[i]
		node := byName[n.Name]
		if node == nil || !inScope(p, node) || !passesOnceHealthy(n, pod, node, true) {
			continue
		}
		empty := framework.NewNodeInfo(healthy(node))
		for _, ds := range x.daemonSetPods(node.Name) {
			empty.AddPod(ds)
		}
		room := roomFor(pod, &podInfo.Res, empty)
		if room == 0 {
			continue
		}
		key := shapeKey(node)
		if seen[key] {
			continue
		}
		seen[key] = true
		shapes = append(shapes, shape{node: node, key: key, size: shapeSize(node, podInfo.Res.Resource), room: room})
	}
	slices.SortStableFunc(shapes, func(a, b shape) int {
		return cmp.Or(slices.Compare(a.size[:], b.size[:]), cmp.Compare(a.node.Name, b.node.Name))
	})
	if len(shapes) > maxShapes {
		shapes = shapes[:maxShapes]
	}
	for _, sh := range shapes {
		n, placed, err := x.smallestCount(ctx, g, ceilDiv(len(unplaced), sh.room), len(unplaced), func(i int) (*corev1.Node, []*corev1.Pod) {
			name := fmt.Sprintf("%s-new-%d", sh.node.Name, i)
			return newNodeLike(sh.node, name), copyPods(x.daemonSetPods(sh.node.Name), name)
		})
		if err != nil {
			return nil, err
		}
		if n > 0 {
			t := newNodeLike(sh.node, sh.node.Name)
			newNodes := &NodeShape{Like: sh.node.Name, Count: n, Allocatable: t.Status.Allocatable, Labels: t.Labels, Taints: t.Spec.Taints,
				TopologyKey: p.TopologyKey, Domain: p.Domain}
			return &Suggestion{Kind: SuggestAddNodes, Verified: true, NewNodes: newNodes,
				Message: fmt.Sprintf("adding %d node(s) like %s (allocatable %s) to %s would make room; %s", n, sh.node.Name,
					formatResourceList(t.Status.Allocatable, podInfo.Res.Resource), where(p), fitsOnNew(g, placed))}, nil
		}
	}
	derived := x.derivedNode(pod, unplaced, p, e)
	room := max(1, roomFor(pod, &podInfo.Res, framework.NewNodeInfo(derived)))
	n, placed, err := x.smallestCount(ctx, g, ceilDiv(len(unplaced), room), len(unplaced), func(i int) (*corev1.Node, []*corev1.Pod) {
		c := derived.DeepCopy()
		c.Name = fmt.Sprintf("new-node-%d", i)
		c.Labels[corev1.LabelHostname] = c.Name
		return c, nil
	})
	if err != nil || n == 0 {
		return nil, err
	}
	newNodes := &NodeShape{Count: n, Allocatable: derived.Status.Allocatable, Labels: derived.Labels, Taints: derived.Spec.Taints,
		TopologyKey: p.TopologyKey, Domain: p.Domain}
	delete(newNodes.Labels, corev1.LabelHostname)
	var extra []string
	for _, k := range sortedKeys(newNodes.Labels) {
		extra = append(extra, k+"="+newNodes.Labels[k])
	}
	for _, t := range newNodes.Taints {
		extra = append(extra, "taint "+gang.FormatTaint(&t))
	}
	msg := fmt.Sprintf("adding %d node(s) with allocatable %s", n, formatResourceList(derived.Status.Allocatable, podInfo.Res.Resource))
	if len(extra) > 0 {
		msg += " (" + strings.Join(extra, ", ") + ")"
	}
	return &Suggestion{Kind: SuggestAddNodes, Verified: true, NewNodes: newNodes,
		Message: msg + " to " + where(p) + " would make room; " + fitsOnNew(g, placed)}, nil
}

// smallestCount finds the least n in 1..limit for which adding the nodes
// made by node(1..n) lets g fit. It starts from guess (how many nodes the
// members left over need by their requests alone), proves it, and checks
// that one node fewer is not enough; a guess that does not fit is doubled
// until one does, and the count then bisected. It returns 0 when even
// limit nodes do not fit.
func (x *explainer) smallestCount(ctx context.Context, g *gang.Gang, guess, limit int, node func(i int) (*corev1.Node, []*corev1.Pod)) (int, *gang.Placement, error) {
	limit = max(limit, guess, 1)
	results := map[int]*gang.Placement{}
	try := func(n int) (bool, error) {
		if n <= 0 {
			return false, nil // the snapshot as is: it does not fit
		}
		if p, ok := results[n]; ok {
			return p.Verdict == gang.VerdictPlaced, nil
		}
		c := *x.snap
		c.Nodes = slices.Clone(x.snap.Nodes)
		c.Pods = slices.Clone(x.snap.Pods)
		for i := 1; i <= n; i++ {
			node, pods := node(i)
			c.Nodes = append(c.Nodes, node)
			c.Pods = append(c.Pods, pods...)
		}
		p, err := x.place(ctx, &c, g)
		if err != nil {
			return false, err
		}
		results[n] = p
		return p.Verdict == gang.VerdictPlaced, nil
	}
	// lo does not fit, hi fits.
	lo, hi := 0, max(1, min(guess, limit))
	for {
		ok, err := try(hi)
		if err != nil {
			return 0, nil, err
		}
		if ok {
			break
		}
		if hi == limit {
			return 0, nil, nil
		}
		lo, hi = hi, min(2*hi, limit)
	}
	// The guess usually is the answer: one try below it proves that.
	if hi-lo > 1 {
		ok, err := try(hi - 1)
		if err != nil {
			return 0, nil, err
		}
		if !ok {
			lo = hi - 1
		}
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		ok, err := try(mid)
		if err != nil {
			return 0, nil, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, results[hi], nil
}

func ceilDiv(a, b int) int {
	if b <= 0 {
		return a
	}
	return (a + b - 1) / b
}

// daemonSetPods returns the pods a DaemonSet runs on node: a new node of its
// shape would run them too.
func (x *explainer) daemonSetPods(node string) []*corev1.Pod {
	if x.dsPods == nil {
		x.dsPods = map[string][]*corev1.Pod{}
		for _, pod := range x.snap.Pods {
			if pod.Spec.NodeName == "" {
				continue
			}
			for _, ref := range pod.OwnerReferences {
				if ref.Kind == "DaemonSet" && ref.Controller != nil && *ref.Controller {
					x.dsPods[pod.Spec.NodeName] = append(x.dsPods[pod.Spec.NodeName], pod)
					break
				}
			}
		}
	}
	return x.dsPods[node]
}

// copyPods puts copies of pods on node.
func copyPods(pods []*corev1.Pod, node string) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(pods))
	for _, pod := range pods {
		c := pod.DeepCopy()
		c.Name = pod.Name + "-" + node
		c.UID = ""
		c.Spec.NodeName = node
		out = append(out, c)
	}
	return out
}

// newNodeLike is a new, healthy node shaped like template.
func newNodeLike(template *corev1.Node, name string) *corev1.Node {
	c := healthy(template)
	c.Name, c.UID, c.ResourceVersion = name, "", ""
	c.Labels = cloneLabels(c.Labels)
	c.Labels[corev1.LabelHostname] = name
	c.Spec.ProviderID, c.Spec.PodCIDR, c.Spec.PodCIDRs = "", "", nil
	c.Status.Addresses = nil
	return c
}

// cloneLabels copies a label map; nil becomes empty.
func cloneLabels(m map[string]string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	return out
}

// shapeKey identifies nodes of one shape: allocatable and taints.
func shapeKey(node *corev1.Node) string {
	c := healthy(node)
	var b strings.Builder
	for _, name := range sortedKeys(c.Status.Allocatable) {
		q := c.Status.Allocatable[name]
		fmt.Fprintf(&b, "%s=%s,", name, q.String())
	}
	for _, t := range c.Spec.Taints {
		b.WriteString(gang.FormatTaint(&t) + ",")
	}
	return b.String()
}

// shapeSize orders shapes: the resources the pod requests, scalars first,
// then cpu, then memory.
func shapeSize(node *corev1.Node, req *framework.Resource) [3]int64 {
	a := framework.NewResource(node.Status.Allocatable)
	var scalars int64
	for name := range req.ScalarResources {
		scalars += a.Get(name)
	}
	return [3]int64{scalars, a.MilliCPU, a.Memory}
}

// formatResourceList prints the resources of a node shape that matter to
// the pod: its scalar requests, cpu and memory.
func formatResourceList(rl corev1.ResourceList, req *framework.Resource) string {
	r := framework.NewResource(rl)
	var parts []string
	parts = append(parts, gang.FormatQuantity(corev1.ResourceCPU, r.MilliCPU)+" cpu", gang.FormatQuantity(corev1.ResourceMemory, r.Memory)+" memory")
	for _, name := range sortedKeys(req.ScalarResources) {
		parts = append(parts, gang.FormatQuantity(name, r.Get(name))+" "+string(name))
	}
	return strings.Join(parts, ", ")
}

// derivedNode is a node shaped after the members that do not fit: per
// resource the largest request among them (cpu rounded up to whole cores,
// memory to whole Gi), labelled with what the nodes in scope that pass
// the blocked member's node affinity share (or what its node selector asks
// for), and tainted as most of the nodes in scope it tolerates are.
func (x *explainer) derivedNode(pod *corev1.Pod, unplaced []*corev1.Pod, p *gang.Placement, e *Explanation) *corev1.Node {
	var most framework.Resource
	for _, m := range unplaced {
		r := framework.ComputePodResource(m).Resource
		most.MilliCPU = max(most.MilliCPU, r.MilliCPU)
		most.Memory = max(most.Memory, r.Memory)
		most.EphemeralStorage = max(most.EphemeralStorage, r.EphemeralStorage)
		for name, q := range r.ScalarResources {
			most.AddScalar(name, max(0, q-most.Get(name)))
		}
	}
	const gi = 1 << 30
	alloc := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity((most.MilliCPU+999)/1000, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity((most.Memory+gi-1)/gi*gi, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
	if most.EphemeralStorage > 0 {
		alloc[corev1.ResourceEphemeralStorage] = *resource.NewQuantity((most.EphemeralStorage+gi-1)/gi*gi, resource.BinarySI)
	}
	for name, q := range most.ScalarResources {
		alloc[name] = *resource.NewQuantity(q, resource.DecimalSI)
	}
	byName := map[string]*corev1.Node{}
	for _, n := range x.snap.Nodes {
		byName[n.Name] = n
	}
	var labels map[string]string
	taintSets := map[string][]corev1.Taint{}
	taintCount := map[string]int{}
	for i := range e.Nodes {
		n := &e.Nodes[i]
		node := byName[n.Name]
		if node == nil || !inScope(p, node) {
			continue
		}
		if verdictOf(n, nodeaffinity.Name) == framework.Success {
			if labels == nil {
				labels = cloneLabels(node.Labels)
			} else {
				for k, v := range labels {
					if node.Labels[k] != v {
						delete(labels, k)
					}
				}
			}
		}
		if verdictOf(n, tainttoleration.Name) == framework.Success {
			taints := healthy(node).Spec.Taints
			key := shapeKey(&corev1.Node{Spec: corev1.NodeSpec{Taints: taints}})
			taintSets[key] = taints
			taintCount[key]++
		}
	}
	if labels == nil {
		labels = cloneLabels(pod.Spec.NodeSelector)
	}
	delete(labels, corev1.LabelHostname)
	if p.TopologyKey != "" && p.Domain != "" {
		labels[p.TopologyKey] = p.Domain
	}
	var taints []corev1.Taint
	best := -1
	for _, key := range sortedKeys(taintCount) {
		if taintCount[key] > best {
			best, taints = taintCount[key], taintSets[key]
		}
	}
	node := &corev1.Node{}
	node.Labels = labels
	node.Spec.Taints = taints
	node.Status.Capacity, node.Status.Allocatable = alloc, alloc.DeepCopy()
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
	return node
}

// verdictOf is one Filter plugin's verdict on a node, Skip when it did not run.
func verdictOf(n *Node, plugin string) framework.Code {
	for _, f := range n.Filters {
		if f.Plugin == plugin {
			return f.Code
		}
	}
	if n.Feasible {
		return framework.Success
	}
	return framework.Skip
}

// repairNodes tries nodes that are cordoned or not Ready (or under
// pressure) and would otherwise take the blocked member: each repaired
// alone on a copy of the snapshot, then, if none is enough alone, all
// together. Nodes where the gang was placed come first.
func (x *explainer) repairNodes(ctx context.Context, g *gang.Gang, p *gang.Placement, e *Explanation) (*Suggestion, error) {
	if p.Blocker == nil {
		return nil, nil
	}
	pod := p.Blocker.Pod
	byName := map[string]*corev1.Node{}
	for _, n := range x.snap.Nodes {
		byName[n.Name] = n
	}
	podInfo := framework.NewPodInfo(pod)
	infos := map[string]*framework.NodeInfo{}
	for _, ni := range x.base.NodeInfos() {
		infos[ni.Name()] = ni
	}
	var candidates []*corev1.Node
	room := map[string]int{}
	for i := range e.Nodes {
		n := &e.Nodes[i]
		node := byName[n.Name]
		if node == nil || (!node.Spec.Unschedulable && len(conditionTaints(node)) == 0) {
			continue
		}
		if passesOnceHealthy(n, pod, node, false) {
			candidates = append(candidates, node)
			room[node.Name] = roomFor(pod, &podInfo.Res, infos[node.Name])
		}
	}
	left := len(unplacedOf(g, p))
	slices.SortStableFunc(candidates, func(a, b *corev1.Node) int {
		ia, ib := inScope(p, a), inScope(p, b)
		if ia != ib {
			if ia {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Name, b.Name)
	})
	if len(candidates) > maxRepairCandidates {
		candidates = candidates[:maxRepairCandidates]
	}
	try := func(nodes []*corev1.Node) (*gang.Placement, error) {
		repaired := map[string]bool{}
		for _, n := range nodes {
			repaired[n.Name] = true
		}
		c := *x.snap
		c.Nodes = make([]*corev1.Node, len(x.snap.Nodes))
		for i, n := range x.snap.Nodes {
			c.Nodes[i] = n
			if repaired[n.Name] {
				c.Nodes[i] = healthy(n)
			}
		}
		return x.place(ctx, &c, g)
	}
	s := &Suggestion{Kind: SuggestRepairNodes, Verified: true}
	var then *gang.Placement
	total := 0
	for _, n := range candidates {
		total += room[n.Name]
		if room[n.Name] < left {
			continue // it cannot take every member left over by itself
		}
		placed, err := try([]*corev1.Node{n})
		if err != nil {
			return nil, err
		}
		if placed.Verdict == gang.VerdictPlaced {
			s.Repairs = append(s.Repairs, NodeRepair{Node: n.Name, Uncordon: n.Spec.Unschedulable, Taints: conditionTaints(n)})
			if then == nil {
				then = placed
			}
		}
	}
	if len(s.Repairs) == 0 && len(candidates) > 1 && total >= left {
		placed, err := try(candidates)
		if err != nil {
			return nil, err
		}
		if placed.Verdict == gang.VerdictPlaced {
			s.Together, then = true, placed
			for _, n := range candidates {
				s.Repairs = append(s.Repairs, NodeRepair{Node: n.Name, Uncordon: n.Spec.Unschedulable, Taints: conditionTaints(n)})
			}
		}
	}
	if len(s.Repairs) == 0 {
		return nil, nil
	}
	var actions []string
	for _, r := range s.Repairs {
		actions = append(actions, r.String())
	}
	if s.Together {
		s.Message = strings.Join(actions, " and ") + ", all of them, would make room; " + fitsThen(g, then)
	} else if len(actions) == 1 {
		s.Message = actions[0] + " would make room; " + fitsThen(g, then)
	} else {
		s.Message = strings.Join(actions, ", or ") + ": any one of them would make room; " + fitsThen(g, then)
	}
	return s, nil
}

// String says what to do to the node.
func (r NodeRepair) String() string {
	var taints []string
	for _, t := range r.Taints {
		if r.Uncordon && t.Key == corev1.TaintNodeUnschedulable {
			continue // it goes with the cordon
		}
		taints = append(taints, gang.FormatTaint(&t))
	}
	switch {
	case r.Uncordon && len(taints) > 0:
		return fmt.Sprintf("uncordoning %s and getting it Ready (its taints %s go)", r.Node, strings.Join(taints, ", "))
	case r.Uncordon:
		return "uncordoning " + r.Node
	}
	return fmt.Sprintf("getting %s Ready again (its taints %s go)", r.Node, strings.Join(taints, ", "))
}

// minMemberField names where a gang's minimum is set, for the message.
func minMemberField(src gang.Source) string {
	switch src {
	case gang.SourceNative:
		return "spec.schedulingPolicy.gang.minCount"
	case gang.SourceVolcano, gang.SourceCoscheduling:
		return "spec.minMember"
	}
	return "--min-member"
}

// lowerMinMember proves that the gang would start with its minimum lowered
// to how many fit at most.
func (x *explainer) lowerMinMember(ctx context.Context, g *gang.Gang, p *gang.Placement, _ *Explanation) (*Suggestion, error) {
	if g.Source == "" || p.MaxPlaceable <= 0 || p.MaxPlaceable >= g.MinMember {
		return nil, nil
	}
	lower := *g
	lower.MinMember = p.MaxPlaceable
	placed, err := x.place(ctx, x.snap, &lower)
	if err != nil || placed.Verdict != gang.VerdictPlaced {
		return nil, err
	}
	waiting := len(g.PendingUngated()) - len(placed.Assignments)
	msg := fmt.Sprintf("lowering the minimum (%s) from %d to %d would let the gang start: %s",
		minMemberField(g.Source), g.MinMember, p.MaxPlaceable, fitsThen(g, placed))
	if waiting > 0 {
		msg += fmt.Sprintf(" and %d wait(s)", waiting)
	}
	return &Suggestion{Kind: SuggestLowerMinMember, Verified: true, MinMember: p.MaxPlaceable, Message: msg}, nil
}
