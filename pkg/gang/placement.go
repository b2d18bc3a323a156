package gang

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// Assignment is one pending member and the node it would go to.
type Assignment struct {
	Pod   *corev1.Pod
	Node  string
	Score int64
	// Claims are the member's ResourceClaims as its reservation allocated
	// them (devices on Node or reachable from it), by name; none for a
	// member without claims (docs/design.md#dynamic-resource-allocation).
	Claims []*resourcev1.ResourceClaim
}

// DomainResult is how one topology domain did as a candidate placement.
type DomainResult struct {
	// Value is the node label's value that names the domain.
	Value string
	Nodes int
	// Skipped says why the domain was not tried member by member: it has
	// less free capacity than the gang needs at the least.
	Skipped string
	// Placed is how many pending members fit in the domain at once.
	Placed int
	// Running is how many members already run in the domain: only they
	// count toward the minimum there.
	Running int
	// Complete is whether the gang's minimum is met there.
	Complete bool
	// FreeFraction is the share of the domain's allocatable left free after
	// the placement, averaged over the resources the gang requests: the
	// smaller, the tighter the fit.
	FreeFraction float64
	// ScoreSum adds the node scores of the placed members.
	ScoreSum int64
	// Usable counts the domain's nodes some pending member may use
	// whatever is free (affinity, taints and cordons allow it); Resource is
	// the gang's binding resource (what its members need most of relative
	// to what those nodes have free), and Free and Allocatable its amounts
	// on the usable nodes before the placement.
	Usable            int
	Resource          corev1.ResourceName
	Free, Allocatable int64
}

// Placement is the all-or-nothing plan for a gang.
type Placement struct {
	Gang    *Gang
	Verdict Verdict
	// OnceReleased is, for a Gated placement (HoldGated), the verdict once
	// the members' scheduling gates are removed.
	OnceReleased Verdict
	// MinMember is the gang's minimum.
	MinMember int32
	// Running are members already bound to nodes; they count toward the minimum.
	Running []*corev1.Pod
	// Succeeded is how many members finished successfully; they count
	// toward the minimum too, for sources that keep them (Gang.Succeeded).
	Succeeded int
	// Assignments are the pending members placed, in queue order; empty
	// when the verdict is Unschedulable. A Gated placement (HoldGated)
	// keeps them when the gang fits once released.
	Assignments []Assignment
	// Unplaced are pending members that do not fit even though the gang is placed.
	Unplaced []*corev1.Pod
	// TopologyKey and Domain say which domain was chosen, if any.
	TopologyKey string
	Domain      string
	// PreferredTopologyKey is the preferred topology tried first, if any;
	// PreferredMet says one of its domains held the gang. When none did,
	// TopologyKey is empty, the members spread over the cluster, and
	// Domains still says what each domain held.
	PreferredTopologyKey string
	PreferredMet         bool
	// MaxPlaceable is the most members (running ones included) that run or
	// fit at once, in the best attempt.
	MaxPlaceable int32
	// Blocker is the cycle of the first member that did not fit in the best
	// attempt: its FailedScheduling message says what stopped it.
	Blocker *schedule.Result
	// Why says what no single cycle shows of why the gang cannot be
	// placed: a sub-group's leader goes where the rest cannot follow
	// (docs/design.md#gangs). Empty otherwise.
	Why string
	// BlockerAfter are the assignments the blocker's cycle ran after (the
	// members placed before it; for sub-groups placed whole, those of its
	// own sub-group too, which the plan leaves out).
	BlockerAfter []Assignment
	// BestAttempt are the assignments of the best attempt when the gang
	// cannot be placed: what would fit, for explain.
	BestAttempt []Assignment
	// PlacedLater are the planned members that fit only once members
	// queued behind them were placed: they were tried again after those
	// (the order used; docs/design.md#gangs).
	PlacedLater []*corev1.Pod
	// QueueOrder, when set, says the gang fits only in some orders of its
	// source's one-pass cycle: the verdict is then Unschedulable.
	QueueOrder *QueueOrderRisk
	// Domains has one entry per topology domain tried, in name order.
	Domains []DomainResult
	// Conflict says why no topology domain can hold the gang whatever fits:
	// its members already run in several.
	Conflict string
	// Admission is a queueing layer's decision on the gang's queued
	// workloads (Gang.Queued); nil when none waits for one.
	Admission *Admission
	// NotEvaluated lists what the members' cycles could not evaluate
	// (plugins' not-evaluated reasons, once each): a placement with any is
	// not a plain yes (Verified).
	NotEvaluated []string
	// Gate is the source's own gate when it holds the gang back
	// (ApplyGate): then nothing is placed, whatever would fit, and
	// UngatedVerdict and UngatedMessage are what placement alone said.
	Gate *GateResult
	// SourceGate is the gate as PlaceOn evaluated it, passed or not; nil
	// when the source has none (admit reports it as a check).
	SourceGate     *GateResult
	UngatedVerdict Verdict
	UngatedMessage string
	Message        string
}

// QueueOrderRisk is a gang that fits in one order of its scheduler's
// one-pass cycle and not in another (placeOnePass).
type QueueOrderRisk struct {
	// NeedOthers are the members that fit on no node before other members
	// are placed.
	NeedOthers []*corev1.Pod
	// Worst is how many members run or fit when the cycle takes
	// NeedOthers first, and Blocker the first of them that did not fit.
	Worst   int32
	Blocker *schedule.Result
	// How is how the source's scheduler takes the members.
	How string
	// placed is the placement's message as it would be without the risk,
	// and unplaced the members that did not fit in the plan.
	placed   string
	unplaced []*corev1.Pod
}

// Bindable is the placement as bind writes it: bind writes every member's
// Binding itself, so the order the gang's scheduler would take the members
// in plays no part, and a gang held back only for it (QueueOrder) is bound
// as planned (docs/design.md#gangs). Any other placement is itself.
func (p *Placement) Bindable() *Placement {
	q := p.QueueOrder
	if q == nil || p.Gate != nil {
		return p
	}
	out := *p
	out.Verdict, out.Assignments, out.BestAttempt, out.Unplaced = VerdictPlaced, p.BestAttempt, nil, q.unplaced
	out.Message = q.placed + "; bind writes each member's Binding itself, so the queue order that may keep its scheduler from starting the gang plays no part"
	return &out
}

// FormatDevices words the devices a member's claims are allocated, by
// driver and pool: "gpu.example.com/node-a: gpu0,gpu1"; "-" for none.
func FormatDevices(claims []*resourcev1.ResourceClaim) string {
	var parts []string
	index := map[string]int{}
	for _, c := range claims {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			key := r.Driver + "/" + r.Pool
			i, ok := index[key]
			if !ok {
				i = len(parts)
				index[key] = i
				parts = append(parts, key+": ")
			} else {
				parts[i] += ","
			}
			parts[i] += r.Device
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// AllNotEvaluated lists everything a placement could not evaluate: what the
// members' cycles reported, then the parts of the gang's definition.
func (p *Placement) AllNotEvaluated() []string {
	out := slices.Clone(p.NotEvaluated)
	for _, u := range p.Gang.NotEvaluatedFields {
		out = append(out, u.String())
	}
	return out
}

// Verified reports whether the placement is a plain yes: placed, with
// nothing the pipeline or the gang's definition left notEvaluated
// (docs/design.md#pipeline).
func (p *Placement) Verified() bool {
	return p.Verdict == VerdictPlaced && len(p.NotEvaluated) == 0 && len(p.Gang.NotEvaluatedFields) == 0
}

// Planned are the pending members the placement puts on nodes: its
// assignments, or when the gang does not fit, those of its best attempt.
func (p *Placement) Planned() []Assignment {
	if p.Verdict == VerdictPlaced || p.Verdict == VerdictGated && p.Assignments != nil {
		return p.Assignments
	}
	return p.BestAttempt
}

// PlanStatus is what a placement says of one member.
type PlanStatus string

// MemberPlan is one member of a placement and what it says of it.
type MemberPlan struct {
	Pod    *corev1.Pod
	Node   string
	Score  int64
	Status PlanStatus
	// Claims are a planned member's claims as allocated (Assignment.Claims).
	Claims []*resourcev1.ResourceClaim
}

// Members lists every member with its status: running ones first, then the
// planned ones in queue order, then those that do not fit and those being
// deleted, in queue order.
func (p *Placement) Members() []MemberPlan {
	var out []MemberPlan
	for _, pod := range p.Running {
		out = append(out, MemberPlan{Pod: pod, Node: pod.Spec.NodeName, Status: PlanRunning})
	}
	status := PlanPlaced
	if p.Verdict != VerdictPlaced {
		status = PlanFits
	}
	// Assignments hold the members without their scheduling gates (copies
	// of gated ones), so members are matched by namespace/name.
	planned := map[string]bool{}
	for _, a := range p.Planned() {
		out = append(out, MemberPlan{Pod: a.Pod, Node: a.Node, Score: a.Score, Status: status, Claims: a.Claims})
		planned[a.Pod.Namespace+"/"+a.Pod.Name] = true
	}
	for _, pod := range p.Gang.Members {
		switch StateOf(pod) {
		case MemberPending:
			if !planned[pod.Namespace+"/"+pod.Name] {
				out = append(out, MemberPlan{Pod: pod, Status: PlanDoesNotFit})
			}
		case MemberTerminating:
			out = append(out, MemberPlan{Pod: pod, Node: pod.Spec.NodeName, Status: PlanTerminating})
		}
	}
	return out
}

// finish decides the verdict from the best attempt, all or nothing: need
// members had to be placed beside the running ones that count with it (all
// of them, or in a domain those running there).
func (p *Placement) finish(best *attempt, need, running int) {
	placed := 0
	if best != nil {
		placed = len(best.assignments)
		p.Blocker, p.BlockerAfter = best.blocker, best.before
		p.NotEvaluated = best.notEvaluated
		p.PlacedLater = best.later
	}
	p.MaxPlaceable = int32(running + p.Succeeded + placed)
	if best != nil && placed >= need {
		p.placed(best)
		if r := best.risk; r != nil && len(r.worst.assignments) < need {
			// Placed in the good order only (placeOnePass).
			risk := &QueueOrderRisk{NeedOthers: r.needOthers, Worst: int32(running + p.Succeeded + len(r.worst.assignments)),
				Blocker: r.worst.blocker, How: rulesOf(p.Gang.Source).OnePass, placed: p.Message, unplaced: p.Unplaced}
			p.QueueOrder = risk
			p.Verdict = VerdictUnschedulable
			p.BestAttempt, p.Assignments, p.Unplaced = p.Assignments, nil, nil
			p.Message = risk.message(p)
		}
		return
	}
	p.Verdict = VerdictUnschedulable
	if best != nil {
		p.BestAttempt = best.assignments
		p.Domain = best.domain
	}
	var b strings.Builder
	fmt.Fprintf(&b, "gang %s cannot be placed: at most %d of minimum %d member(s) run or fit at once", p.Gang.Key(), p.MaxPlaceable, p.MinMember)
	if p.Conflict != "" {
		fmt.Fprintf(&b, " in one %s: %s", p.TopologyKey, p.Conflict)
	} else if p.TopologyKey != "" {
		if len(p.Domains) == 0 {
			fmt.Fprintf(&b, " (no node has the label %s)", p.TopologyKey)
		} else if p.Domain != "" {
			fmt.Fprintf(&b, " in one %s (best: %s)", p.TopologyKey, p.Domain)
		} else {
			fmt.Fprintf(&b, " in one %s (no domain has room)", p.TopologyKey)
		}
	}
	b.WriteString(p.preferredUnmet("the whole cluster was tried"))
	if n := p.Gang.Missing(); n > 0 {
		fmt.Fprintf(&b, "; %d member(s) do not exist", n)
	}
	if sg := p.Gang.SubGroups; sg != nil && sg.Whole && best != nil {
		whole, total := wholeUnits(sg, p.Gang.Members, best.unplaced)
		fmt.Fprintf(&b, " (each %s whole or none: %d of %d fit)", sg.Unit, whole, total)
	}
	if best != nil && best.why != "" {
		p.Why = best.why
		fmt.Fprintf(&b, "; %s", best.why)
	}
	if p.Blocker != nil {
		fmt.Fprintf(&b, "; %s/%s: %s", p.Blocker.Pod.Namespace, p.Blocker.Pod.Name, p.Blocker.Message)
	}
	p.Message = b.String()
}

// placed sets the verdict and message of a gang whose best attempt holds
// its minimum.
func (p *Placement) placed(best *attempt) {
	p.Verdict = VerdictPlaced
	p.Assignments = best.assignments
	p.Unplaced = best.unplaced
	p.Domain = best.domain
	var b strings.Builder
	fmt.Fprintf(&b, "gang %s placed: %d running", p.Gang.Key(), len(p.Running))
	if p.Succeeded > 0 {
		fmt.Fprintf(&b, ", %d succeeded", p.Succeeded)
	}
	fmt.Fprintf(&b, " and %d to place, minimum %d", len(best.assignments), p.MinMember)
	if n := p.Gang.Finished; n > 0 && p.Succeeded == 0 {
		fmt.Fprintf(&b, "; %d member(s) finished already", n)
	}
	if p.Domain != "" {
		fmt.Fprintf(&b, ", all in %s=%s", p.TopologyKey, p.Domain)
	}
	if len(p.Unplaced) > 0 {
		fmt.Fprintf(&b, "; %d more member(s) do not fit", len(p.Unplaced))
	}
	b.WriteString(p.preferredUnmet("the members spread over the cluster"))
	p.Message = b.String()
}

// message words a gang that fits in some queue orders only.
func (r *QueueOrderRisk) message(p *Placement) string {
	var b strings.Builder
	fmt.Fprintf(&b, "gang %s is not placed reliably: %s; %s fit only once other members are placed, and when the cycle takes them first, at most %d of minimum %d member(s) run or fit",
		p.Gang.Key(), r.How, podNames(r.NeedOthers), r.Worst, p.MinMember)
	if r.Blocker != nil {
		fmt.Fprintf(&b, " (%s/%s: %s)", r.Blocker.Pod.Namespace, r.Blocker.Pod.Name, r.Blocker.Message)
	}
	b.WriteString("; the gang starts only in a cycle that takes the members they need first")
	return b.String()
}

// podNames words pods as namespace/name, the first three and a count.
func podNames(pods []*corev1.Pod) string {
	names := PodKeys(pods)
	if len(names) > 3 {
		names = append(names[:3], fmt.Sprintf("and %d more", len(names)-3))
	}
	return strings.Join(names, ", ")
}

// preferredUnmet says, when the preferred topology could not hold the
// gang, that the members spread over the cluster and what the best
// domain held.
func (p *Placement) preferredUnmet(then string) string {
	if p.PreferredTopologyKey == "" || p.PreferredMet {
		return ""
	}
	if len(p.Domains) == 0 {
		return fmt.Sprintf("; no node has the preferred label %s, so %s", p.PreferredTopologyKey, then)
	}
	best := p.Domains[0]
	for _, d := range p.Domains[1:] {
		if d.Running+d.Placed > best.Running+best.Placed {
			best = d
		}
	}
	return fmt.Sprintf("; no one %s holds the minimum %d (the most is %d, in %s), so %s",
		p.PreferredTopologyKey, p.MinMember, best.Running+best.Placed, best.Value, then)
}
