package explain

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/coscheduling"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
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
	// SuggestSelector: the node selector or required node affinity asks
	// for a label no node carries; the nearest one nodes carry.
	SuggestSelector SuggestionKind = "Selector"
	// SuggestNodesTooSmall is a diagnosis: no node of the cluster could
	// hold the blocked member even empty, so no node shape the cluster has
	// is suggested.
	SuggestNodesTooSmall SuggestionKind = "NodesTooSmall"
	// SuggestUngate: the subject fits once its scheduling gates are removed.
	SuggestUngate SuggestionKind = "Ungate"
	// SuggestTolerate: tolerating taints that alone keep the subject off
	// otherwise fitting nodes makes it fit.
	SuggestTolerate SuggestionKind = "Tolerate"
	// SuggestQuota: the members would fit, but the namespace's quota would
	// refuse to create them.
	SuggestQuota SuggestionKind = "Quota"
	// SuggestSourceGate: the members fit, but the gang's own scheduler
	// holds it back (its source's gate: minResources, a queue).
	SuggestSourceGate SuggestionKind = "SourceGate"
	// SuggestVolcanoQueue (suggest_volcano.go): a change to the Volcano
	// queue that holds the gang back makes it fit.
	// SuggestAdmission: a change to the queueing layer's objects (a
	// ClusterQueue's quota) or to the workload (its priority) lets the
	// layer that holds it admit it (suggest_admission.go).
	SuggestAdmission SuggestionKind = "Admission"
	// SuggestCreatePodGroup: the pod names a PodGroup that does not exist,
	// and its scheduler holds it until the group is created.
	SuggestCreatePodGroup SuggestionKind = "CreatePodGroup"
)

// Suggestion is one thing that would make the subject fit, or (Shortfall)
// by how much it misses.
type Suggestion struct {
	Kind    SuggestionKind
	Message string
	// Why says, for the suggestion listed first, why it leads (why.go).
	Why string
	// Verified says the change was made on a copy of the snapshot and the
	// subject was then placed (all or nothing for a gang).
	Verified bool
	// Shortfall is set for SuggestShortfall.
	Shortfall []ResourceShortfall
	// Victims are the pods a preemption would evict, and PDBViolations how
	// many of those evictions go beyond a PodDisruptionBudget.
	Victims       []Victim
	PDBViolations int
	// Tolerations are the taints to tolerate (key=value:Effect); NearMiss
	// says a toleration of the member's own misses one by its value only,
	// and the change corrects it.
	Tolerations []string
	NearMiss    bool
	// EquallyGood lists, when the first preemption's node is not the only
	// best one, every node that ranks as high (it first): kube-scheduler
	// picks among them at random.
	EquallyGood []string
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
	// Selector are the labels to correct (SuggestSelector).
	Selector []SelectorFix
	// Lost are the devices a node's device plugin no longer reports
	// (SuggestRepairDevicePlugin).
	Lost []LostDevices
	// Claims are the PersistentVolumeClaims to create (SuggestCreateClaim).
	Claims []string
	// Moves are the pods to move off nodes to make them whole for the
	// members (SuggestMove).
	Moves []Move
	// Largest is, per resource the blocked member requests more of than
	// any node has allocatable, the most one node has (SuggestNodesTooSmall).
	Largest []LargestNode
}

// LargestNode is the most of one resource any node has allocatable.
type LargestNode struct {
	Name corev1.ResourceName
	// Request is the blocked member's request, Allocatable the most any
	// node has, on Node.
	Request, Allocatable int64
	Node                 string
}

// ResourceShortfall is how much of one resource the members left over need
// beyond what the nodes that could take them have free.
type ResourceShortfall struct {
	// Name is the resource; for devices (DeviceClass set), the device
	// request of the blocked member's claim (or the extended resource a
	// DeviceClass backs), and the amounts count devices of DeviceClass.
	Name        corev1.ResourceName
	DeviceClass string
	// Domain, key=value, is the one value of a topology key the figures
	// are for (a sub-group that needs a value of its own); empty: every
	// node in scope.
	Domain string
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
	// Holes counts those nodes by what they have free (in the resource's
	// units: free amount -> nodes), for a fragmented resource: Free would
	// hold the members left but no node has a whole request free.
	Holes map[int64]int
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
		if !g.IsLonePod() {
			msg = fmt.Sprintf("removing the scheduling gate(s) %s from %d member(s) (kubectl gang admit --ungate GATE, once admitted) would let kube-scheduler try them: %s",
				strings.Join(e.Gates, ", "), e.GatedMembers, fitsThen(g, p))
		}
		if owners := gang.GateOwnersOf(g.Members, e.Gates); owners != "" {
			msg += "; " + owners
		}
		return []Suggestion{{Kind: SuggestUngate, Verified: true, Gates: e.Gates, Message: msg}}, nil
	}
	if r := p.Gate; r != nil && r.Gate == gang.GateNative {
		// kube-scheduler refuses the group before it tries any member:
		// nothing else helps until the group itself is fixed.
		return []Suggestion{{Kind: SuggestSourceGate, Message: fmt.Sprintf("kube-scheduler refuses the pod group before placing any member (%s, SchedulerError): %s", r.Reason, r.Fix)}}, nil
	}
	if adm := p.Admission; adm != nil && !adm.Admitted && p.Gate != nil && p.Gate.Gate == adm.Layer {
		// A queueing layer decides before any scheduler: its own fixes,
		// proven by placing again, lead.
		return x.admissionFixes(ctx, g, p)
	}
	if r := p.Gate; r != nil && p.Blocker == nil {
		// Every member fits: only the gate stands in the way.
		msg := fmt.Sprintf("every member fits, but %s holds the gang back (%s)", r.Gate, r.Reason)
		switch {
		case r.Fix != "":
			// The gate's own fix, in its scheduler's terms (which queue
			// limit, by how much, who holds it).
			msg += ": " + r.Fix
		default:
			msg += gateAdvice(g, r.Reason)
		}
		out := []Suggestion{{Kind: SuggestSourceGate, Message: msg}}
		// A change to the queue, proven by placing again, leads.
		if s, err := x.volcanoQueue(ctx, g, p); err != nil {
			return nil, err
		} else if s != nil {
			out = append([]Suggestion{*s}, out...)
		}
		return out, nil
	}
	var out []Suggestion
	if r := p.Gate; r != nil {
		// The gate and the nodes both stand in the way: the gate first,
		// since nothing starts while it holds; the changes below are
		// proven with the gate applied to the changed cluster.
		fix := r.Fix
		if fix == "" {
			fix = strings.TrimPrefix(gateAdvice(g, r.Reason), ": ")
		}
		msg := fmt.Sprintf("%s holds the gang back (%s) besides the members that do not fit", r.Gate, r.Reason)
		if fix != "" {
			msg += ": " + fix
		}
		out = append(out, Suggestion{Kind: SuggestSourceGate, Message: msg})
	}
	// Members that do not exist yet come first: no change to the cluster
	// starts a gang whose members are not there.
	if s, err := x.membersMissing(ctx, g, p, e); err != nil {
		return nil, err
	} else if s != nil {
		out = append(out, *s)
	}
	// What the data names as the blocker leads, before any shortfall: a
	// claim that does not exist, a node whose device plugin stopped
	// reporting, a toleration that misses the taint by its value.
	lead, err := x.leading(ctx, g, p, e)
	if err != nil {
		return nil, err
	}
	out = append(out, lead...)
	short := x.shortfall(ctx, g, p, e)
	if short != nil {
		out = append(out, *short)
	}
	led := func(k SuggestionKind) bool {
		return slices.ContainsFunc(lead, func(l Suggestion) bool { return l.Kind == k })
	}
	for _, f := range []struct {
		kind SuggestionKind
		f    func(context.Context, *gang.Gang, *gang.Placement, *Explanation) (*Suggestion, error)
	}{{SuggestSelector, x.selector}, {SuggestTolerate, x.tolerate}, {SuggestSpread, x.spread}, {SuggestPreempt, x.preempt}, {SuggestAddNodes, x.addNodes},
		{SuggestRepairNodes, x.repairNodes}, {SuggestLowerMinMember, x.lowerMinMember}} {
		if led(f.kind) {
			continue // offered first already
		}
		s, err := f.f(ctx, g, p, e)
		if err != nil {
			return nil, err
		}
		if s != nil {
			out = append(out, *s)
		}
	}
	out = rankOpeners(out)
	// Where the room exists in holes too small for a member, the pods to
	// move to make whole nodes lead the shortfall that names the holes
	// (after a change to the members' own spec, which disturbs no one).
	move, err := x.move(ctx, g, p, e, short)
	if err != nil {
		return nil, err
	}
	if move != nil {
		i := slices.IndexFunc(out, func(s Suggestion) bool { return s.Kind == SuggestShortfall })
		out = slices.Insert(out, i, *move)
	}
	return out, nil
}

// rankOpeners puts a proven change to the members' own spec that opens
// room the cluster has (a toleration, a selector, a looser spread) before
// a shortfall, which then counts only the nodes the members may use as
// they are: capacity is not short when the room exists behind a taint, a
// selector or a spread rule (issue #27).
func rankOpeners(out []Suggestion) []Suggestion {
	short := slices.IndexFunc(out, func(s Suggestion) bool { return s.Kind == SuggestShortfall })
	if short < 0 {
		return out
	}
	why := map[SuggestionKind]string{SuggestTolerate: "taints", SuggestSelector: "the node selector", SuggestSpread: "the spread rule"}
	var openers, rest []Suggestion
	for i, s := range out {
		if i > short && s.Verified && why[s.Kind] != "" && !s.NearMiss {
			if len(openers) == 0 {
				s.Message = fmt.Sprintf("the room exists behind %s: %s", why[s.Kind], s.Message)
			}
			openers = append(openers, s)
			continue
		}
		rest = append(rest, s)
	}
	if len(openers) == 0 {
		return out
	}
	rest[short].Message = "without that change, " + rest[short].Message
	return slices.Concat(rest[:short], openers, rest[short:])
}

// withMembers is g with every member replaced by change's copy of it: a
// what-if on the members' own spec (a toleration, a selector, a spread).
func withMembers(g *gang.Gang, change func(*corev1.Pod) *corev1.Pod) *gang.Gang {
	changed := *g
	changed.Members = make([]*corev1.Pod, len(g.Members))
	for i, m := range g.Members {
		changed.Members[i] = change(m)
	}
	return &changed
}

// podKey names a pod by namespace and name, compared without joining them:
// a what-if that takes pods off looks up every pod of the snapshot
// (260,000 on the largest clusters).
type podKey [2]string

func keyOf(pod *corev1.Pod) podKey { return podKey{pod.Namespace, pod.Name} }

// withoutPods is a copy of pods without the ones gone names: the changed
// copy of a snapshot a preemption or a move proves its change on.
func withoutPods(pods []*corev1.Pod, gone map[podKey]bool) []*corev1.Pod {
	return slices.DeleteFunc(slices.Clone(pods), func(pod *corev1.Pod) bool { return gone[keyOf(pod)] })
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
		return x.placeOn(ctx, x.plain, snap, g)
	}
	return gang.Place(ctx, snap, g, x.opts.PlaceOptions)
}

// placeOn places g on s, a fork of the explainer's scheduler for a changed
// snap (nodes added or repaired, victims evicted), through the one
// placement call, gate included (gang.PlaceOn).
func (x *explainer) placeOn(ctx context.Context, s *schedule.Scheduler, snap *schedule.Snapshot, g *gang.Gang) (*gang.Placement, error) {
	return gang.PlaceOn(ctx, snap, s, g, x.opts.PlaceOptions)
}

// fitsThen says how the subject fits on the changed copy.
func fitsThen(g *gang.Gang, p *gang.Placement) string {
	if g.IsLonePod() && len(p.Assignments) > 0 {
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
	if g.IsLonePod() {
		return "then it fits on a new node"
	}
	return fitsThen(g, p)
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

// gateAdvice is what makes a gate without a fix of its own pass, by reason.
func gateAdvice(g *gang.Gang, reason string) string {
	switch reason {
	case coscheduling.ReasonResourceGap:
		return ": lower spec.minResources to what the nodes have free, or free the shortfall"
	case coscheduling.ReasonNotEnoughSiblings:
		return ": create the missing member pods, or lower spec.minMember"
	case volcano.ReasonQueueInsufficient, volcano.ReasonClusterOverused:
		return fmt.Sprintf(": room in queue %q (its capability, or what its other groups use) or in the cluster", g.Queue)
	case volcano.ReasonQueueNotFound, volcano.ReasonQueueNotOpen:
		return fmt.Sprintf(": create or open queue %q", g.Queue)
	case gang.ReasonNotEnoughPodsOfTask:
		return ": create the missing pods of the task, or lower its spec.minTaskMember"
	}
	return ""
}
