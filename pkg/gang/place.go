package gang

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Verdict is a placement's outcome.
type Verdict string

// Placement verdicts.
const (
	// VerdictPlaced: at least MinMember members run or fit at once.
	VerdictPlaced Verdict = "Placed"
	// VerdictUnschedulable: fewer than MinMember fit; nothing would be placed.
	VerdictUnschedulable Verdict = "Unschedulable"
)

// PlaceOptions tune Place.
type PlaceOptions struct {
	// Profile is the scheduling profile; nil means the default profile.
	Profile *schedule.Profile
	// TopologyKey overrides the gang's required topology key.
	TopologyKey string
	// PreferredTopologyKey overrides the gang's preferred topology key.
	PreferredTopologyKey string
	// Parallelism bounds the workers of each cycle; 0 means 16.
	Parallelism int
	// Attempts, if set, keeps the attempts made on its scheduler for
	// another placement of the same members there.
	Attempts *Attempts
	// Classes, if set, lends the placement the classes of equal pods that
	// placements before it found on the same working copy or on copies
	// they committed (schedule.ClassStore), and keeps the ones it finds:
	// gangs placed one after another (the queue, the capacity count) then
	// pay one full cycle per shape, not per gang.
	Classes *schedule.ClassStore
}

// Attempts keeps the attempts PlaceOn makes on one scheduler, so that a
// placement of the same members on it again (explain's lower minimum) takes
// them instead of making them again. An attempt places every pending member
// it can, in queue order, on a fork of the scheduler (confined to one
// topology domain, or not), whatever the gang's minimum: it depends on the
// scheduler, the domain and the members only, never on the minimum, which
// only decides which attempt wins and whether the gang fits. Members are
// the same when they are the same objects (a what-if that changes a member
// makes a new one). Not safe for concurrent use.
type Attempts struct {
	base *schedule.Scheduler
	made map[string][]madeAttempt
}

type madeAttempt struct {
	members []*corev1.Pod
	a       *attempt
}

// NewAttempts returns an empty Attempts for placements on base, which must
// not change while it is in use.
func NewAttempts(base *schedule.Scheduler) *Attempts {
	return &Attempts{base: base, made: map[string][]madeAttempt{}}
}

// get returns the attempt on base in domain (key=value, or "" for the whole
// cluster) for members (the gang's pending members as they are, before their
// gates are taken away): the one made before, else the one place makes.
func (c *Attempts) get(base *schedule.Scheduler, domain string, members []*corev1.Pod, place func() (*attempt, error)) (*attempt, error) {
	if c == nil || c.base != base {
		return place()
	}
	for _, m := range c.made[domain] {
		if slices.Equal(m.members, members) {
			return m.a, nil
		}
	}
	a, err := place()
	if err != nil {
		return nil, err
	}
	c.made[domain] = append(c.made[domain], madeAttempt{members: members, a: a})
	return a, nil
}

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

// The plan statuses.
const (
	// PlanRunning: the member is bound already and counts toward the minimum.
	PlanRunning PlanStatus = "Running"
	// PlanPlaced: the gang is placed and the member goes to Node.
	PlanPlaced PlanStatus = "Placed"
	// PlanFits: the member would go to Node, but the gang does not fit,
	// so nothing is placed.
	PlanFits PlanStatus = "Fits (gang not placed)"
	// PlanDoesNotFit: placement tried the member and no node was left for it.
	PlanDoesNotFit PlanStatus = "Does not fit"
	// PlanTerminating: the member is being deleted; placement does not try it.
	PlanTerminating PlanStatus = "Terminating"
)

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

// attempt is one try at placing the pending members on a scheduler.
type attempt struct {
	domain      string
	assignments []Assignment
	unplaced    []*corev1.Pod
	blocker     *schedule.Result
	// before are the assignments in effect, besides the state the attempt
	// started from, when the blocker's cycle ran.
	before   []Assignment
	free     float64
	scoreSum int64
	// notEvaluated is what the members' cycles could not evaluate.
	notEvaluated []string
	// classes are the assignments' classes in the sequence that placed
	// them ("" for none): equal members share one (schedule.Sequence.Class).
	classes []string
	// later are the members placed only when tried again, after members
	// queued behind them (placeWith).
	later []*corev1.Pod
	// risk, for a one-pass source, is the attempt's dependence on the
	// queue's order (placeOnePass).
	risk *orderRisk
	// why says, when the attempt cannot place the gang for a reason no
	// single cycle shows (a sub-group's leader put where the rest cannot
	// follow), what happens.
	why string
	// budget is the source's own check of each member before it is tried
	// (a queue's share at allocation, Session.Budget); nil for none.
	budget MemberBudget
}

// noteNotEvaluated adds what a cycle did not evaluate, once each.
func (a *attempt) noteNotEvaluated(what []string) {
	for _, w := range what {
		if !slices.Contains(a.notEvaluated, w) {
			a.notEvaluated = append(a.notEvaluated, w)
		}
	}
}

// Place plans the gang all or nothing, as its own scheduler would. Running
// members count toward the minimum (in a topology domain, those running
// there); pending ones are placed one by one in queue order, each reserved
// before the next so the gang competes with itself; at least MinMember must
// run or fit at once, and then every member that fits is placed. A
// required topology key confines the gang to one domain: each domain is a
// candidate, and the complete one with the tightest fit (then the highest
// score sum, then the name) wins. A preferred key tries the domains first
// and falls back to the whole cluster. Last, the source's own gate
// (SourceGate) may hold the gang back whatever fits (ApplyGate).
func Place(ctx context.Context, snap *schedule.Snapshot, g *Gang, opts PlaceOptions) (*Placement, error) {
	base, err := schedule.NewScheduler(snap, schedule.Options{Profile: opts.Profile, Parallelism: opts.Parallelism})
	if err != nil {
		return nil, err
	}
	return PlaceOn(ctx, snap, base, g, opts)
}

// PlaceOn is Place on a scheduler already built for snap, or for a changed
// copy of it (a what-if's fork); its profile and parallelism win over
// opts'. base is not changed: every attempt runs on a fork. It is the one
// call every verb and every what-if places through, so the gate and the
// source's validity rules always apply.
func PlaceOn(ctx context.Context, snap *schedule.Snapshot, base *schedule.Scheduler, g *Gang, opts PlaceOptions) (*Placement, error) {
	var vs Session
	if o, ok := SystemOf(g.Source).(Opener); ok {
		vs = o.Open(snap, g, base.NodeInfos())
	}
	var budget MemberBudget
	if vs != nil {
		budget = vs.Budget()
	}
	p, best, err := placeMembers(ctx, base, g, opts, budget)
	if err != nil {
		return nil, err
	}
	var hold *GateResult
	if vs != nil && p.Verdict != VerdictPlaced {
		if hold = vs.Hold(p, best.budgetOf()); hold != nil {
			// The session's budget refused members: the hold says so with
			// the figures of the placement it allowed, and the plan kept is
			// where the members would go on the nodes alone, as for any
			// gate.
			if p, _, err = placeMembers(ctx, base, g, opts, nil); err != nil {
				return nil, err
			}
		}
	}
	if vs != nil {
		p.SourceGate = vs.Gate()
		if n := vs.NotEvaluated(); len(n) > 0 && p.SourceGate.Passed {
			p.NotEvaluated = append(p.NotEvaluated, n...)
		}
	} else {
		p.SourceGate = SourceGate(snap, g, base.NodeInfos())
	}
	p.ApplyGate(p.SourceGate)
	// A gang its source's validity rules refuse is not tried either
	// (docs/design.md#one-verdict-per-question).
	p.applyValidity()
	if hold != nil && p.Gate == nil {
		p.ApplyGate(hold)
	}
	if vs != nil && p.Gate == nil {
		vs.Finish(p)
	}
	return p, nil
}

// budgetOf is the attempt's member budget (nil for none or no attempt).
func (a *attempt) budgetOf() MemberBudget {
	if a == nil {
		return nil
	}
	return a.budget
}

// placing is what every attempt of one placement shares: the scheduler
// they fork, the members they place and the ones that count already.
type placing struct {
	ctx  context.Context
	base *schedule.Scheduler
	// pending are the members to place, their gates taken away; members
	// are the same as they are, the key of kept attempts (PendingUngated
	// copies a gated member each time).
	pending, members []*corev1.Pod
	attempts         *Attempts
	// running are the members bound already; succeeded counts the
	// finished ones that count toward the minimum.
	running   []*corev1.Pod
	succeeded int
	minMember int32
	source    Source
	// budget is the source's check of each member (MemberBudget); each
	// attempt forks it.
	budget MemberBudget
	// classes is PlaceOptions.Classes.
	classes *schedule.ClassStore
}

// whole is the attempt on the whole cluster.
func (pl *placing) whole() (domainsOutcome, error) {
	a, err := pl.attempts.get(pl.base, "", pl.members, func() (*attempt, error) {
		s, err := pl.base.Fork()
		if err != nil {
			return nil, err
		}
		return pl.placeOn(s, pl.base.Fork, "")
	})
	return domainsOutcome{best: a, running: len(pl.running), need: int(pl.minMember) - len(pl.running) - pl.succeeded}, err
}

// placeMembers is the placement without the source's gate; it also
// returns the attempt the verdict came from (nil for none).
func placeMembers(ctx context.Context, base *schedule.Scheduler, g *Gang, opts PlaceOptions, budget MemberBudget) (*Placement, *attempt, error) {
	// A member being deleted still holds its node, which the snapshot
	// accounts for, but no longer counts toward the minimum, as in
	// validity; succeeded members count as running ones do (only sources
	// that count them keep them).
	pl := &placing{ctx: ctx, base: base, pending: g.PendingUngated(), members: g.Pending(), attempts: opts.Attempts,
		running: g.Running(), succeeded: len(g.Succeeded), minMember: g.MinMember, source: g.Source, budget: budget, classes: opts.Classes}
	if budget != nil {
		// An attempt under a source's member budget depends on the
		// session it came from (the queues), which the kept attempts do
		// not key: make it afresh.
		pl.attempts = nil
	}
	p := &Placement{Gang: g, MinMember: g.MinMember, Running: pl.running, Succeeded: pl.succeeded}
	key, preferred := cmp.Or(opts.TopologyKey, g.TopologyKey), cmp.Or(opts.PreferredTopologyKey, g.PreferredTopologyKey)
	var out domainsOutcome
	var err error
	switch {
	case key != "":
		p.TopologyKey = key
		out, err = pl.inDomains(key)
	case preferred != "":
		p.TopologyKey, p.PreferredTopologyKey, p.PreferredMet = preferred, preferred, true
		out, err = pl.inDomains(preferred)
		if err == nil && (out.best == nil || len(out.best.assignments) < out.need) {
			// No domain holds it: the whole cluster, the domains kept
			// for what each held.
			p.TopologyKey, p.PreferredMet = "", false
			domains := out.domains
			out, err = pl.whole()
			out.domains = domains
		}
	case g.SubGroups != nil:
		out, err = pl.whole()
		if err == nil {
			out.best, err = placeSubGroups(ctx, base, g.SubGroups, pl.pending)
		}
	default:
		out, err = pl.whole()
	}
	if err != nil {
		return nil, nil, err
	}
	p.Domains, p.Conflict = out.domains, out.conflict
	p.finish(out.best, out.need, out.running)
	return p, out.best, nil
}

// placeOn places the pending members on s, a fork of base, as the gang's
// source's scheduler takes them (placeWith, placeOnePass); fresh makes
// another scheduler like s as it is before the placement.
func (pl *placing) placeOn(s *schedule.Scheduler, fresh func() (*schedule.Scheduler, error), domain string) (*attempt, error) {
	var budget MemberBudget
	if pl.budget != nil {
		budget = pl.budget.Fork()
	}
	if rulesOf(pl.source).OnePass != "" {
		return placeOnePass(pl.ctx, s, s.NewSequenceIn(pl.classes), fresh, domain, pl.pending, budget)
	}
	return placeSeq(pl.ctx, s, s.NewSequenceIn(pl.classes), domain, pl.pending, budget)
}

// placeWith places the pending members on s, each reserved before the
// next, in queue order, and then again those that did not fit, as long as
// a pass places a member after one that did not fit: a member rejected for
// want of members placed after it (a worker whose required pod affinity
// names the launcher, a spread constraint among members) fits once they
// are (docs/design.md#gangs, "members that need each other"). kube-scheduler
// tries such a pod again once the member it needs is assumed (queueing
// hints on assigned pods; a gang plugin's Permit activates a member's
// siblings), so the plan never depends on the names that order the queue.
// Members placed on a later pass are the attempt's later.
func placeWith(ctx context.Context, s *schedule.Scheduler, domain string, pending []*corev1.Pod) (*attempt, error) {
	return placeSeq(ctx, s, s.NewSequence(), domain, pending, nil)
}

// placeSeq is placeWith on a sequence of s, each member checked by budget
// (nil: none) before it is tried.
func placeSeq(ctx context.Context, s *schedule.Scheduler, seq *schedule.Sequence, domain string, pending []*corev1.Pod, budget MemberBudget) (*attempt, error) {
	a := &attempt{domain: domain, budget: budget}
	todo := pending
	for pass := 0; ; pass++ {
		failed, progress, err := a.pass(ctx, s, seq, todo, pass > 0)
		if err != nil {
			return nil, err
		}
		if !progress {
			a.unplaced = failed
			return a, nil
		}
		todo = failed
	}
}

// pass tries each of todo once. The blocker is the first member of the
// pass that did not fit; progress says a member was placed after one that
// did not fit, which may fit now. later says it is not the first pass.
func (a *attempt) pass(ctx context.Context, s *schedule.Scheduler, seq *schedule.Sequence, todo []*corev1.Pod, later bool) (failed []*corev1.Pod, progress bool, err error) {
	a.blocker, a.before = nil, nil
	for _, pod := range todo {
		if a.budget != nil && a.budget.Admit(pod) != "" {
			// The source's scheduler does not try it: no node is asked.
			failed = append(failed, pod)
			continue
		}
		res, err := seq.Schedule(ctx, pod)
		if err != nil {
			return nil, false, fmt.Errorf("scheduling %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		a.noteNotEvaluated(res.NotEvaluated)
		if res.Verdict != schedule.VerdictScheduled {
			failed = append(failed, pod)
			if a.blocker == nil {
				a.blocker, a.before = res, slices.Clone(a.assignments)
			}
			continue
		}
		progress = progress || len(failed) > 0
		score := res.SelectedScore
		if err := seq.Reserve(ctx, pod, res.SelectedNode); err != nil {
			return nil, false, err
		}
		if a.budget != nil {
			a.budget.Take(pod)
		}
		var claims []*resourcev1.ResourceClaim
		if s.DRA().UsesDevices(pod) {
			claims = s.Claims(pod)
		}
		// The sequence keyed the pod's class in its cycle: asking again is free.
		class, _ := seq.Class(pod)
		a.assignments = append(a.assignments, Assignment{Pod: pod, Node: res.SelectedNode, Score: score, Claims: claims})
		a.classes = append(a.classes, class)
		a.scoreSum += score
		if later {
			a.later = append(a.later, pod)
		}
	}
	return failed, progress, nil
}

// placeOnePass is placeWith, on seq, a sequence of s, for a source whose scheduler tries each member
// once, in queue order, in one cycle (sourceRules.onePass): the plan is
// placeWith's, and when members that fit on no node before others are
// placed (needOthers) are part of it, the attempt also says how many fit
// when the queue takes those members first, the order in which they need
// the most (the attempt's risk). fresh makes a scheduler like s before the
// placement, for the members whose fit alone the placement did not show.
func placeOnePass(ctx context.Context, s *schedule.Scheduler, seq *schedule.Sequence, fresh func() (*schedule.Scheduler, error), domain string, pending []*corev1.Pod, budget MemberBudget) (*attempt, error) {
	var worstBudget MemberBudget
	if budget != nil {
		worstBudget = budget.Fork()
	}
	a, err := placeSeq(ctx, s, seq, domain, pending, budget)
	if err != nil || !slices.ContainsFunc(pending, mayNeedOthers) {
		return a, err
	}
	// A member placed before any other fits alone, and so does every
	// member of its class; the others are asked on a fresh scheduler, one
	// cycle per class.
	alone := map[string]bool{}
	if len(a.classes) > 0 && a.classes[0] != "" {
		alone[a.classes[0]] = true
	}
	var w *schedule.Scheduler
	var wseq *schedule.Sequence
	var needOthers []*corev1.Pod
	for i, as := range a.assignments {
		if !mayNeedOthers(as.Pod) {
			continue
		}
		key, ok := a.classes[i], a.classes[i] != ""
		fits, known := alone[key]
		if !ok || !known {
			if w == nil {
				if w, err = fresh(); err != nil {
					return nil, err
				}
				wseq = w.NewSequence()
			}
			res, err := wseq.Schedule(ctx, as.Pod)
			if err != nil {
				return nil, fmt.Errorf("scheduling %s/%s: %w", as.Pod.Namespace, as.Pod.Name, err)
			}
			fits = res.Verdict == schedule.VerdictScheduled
			if ok {
				alone[key] = fits
			}
		}
		if !fits {
			needOthers = append(needOthers, as.Pod)
		}
	}
	if len(needOthers) == 0 {
		return a, nil
	}
	// The worst order: the members that need others first (and those that
	// did not fit and may need others), then the rest in queue order.
	var first, rest []*corev1.Pod
	for _, pod := range pending {
		if slices.Contains(needOthers, pod) || (slices.Contains(a.unplaced, pod) && mayNeedOthers(pod)) {
			first = append(first, pod)
		} else {
			rest = append(rest, pod)
		}
	}
	worst := &attempt{domain: domain, budget: worstBudget}
	if _, _, err := worst.pass(ctx, w, w.NewSequence(), append(first, rest...), false); err != nil {
		return nil, err
	}
	a.risk = &orderRisk{needOthers: needOthers, worst: worst}
	return a, nil
}

// mayNeedOthers says whether other pods on nodes can make pod fit where it
// did not: a required pod affinity, or a spread constraint that refuses
// (DoNotSchedule). Every other filter only refuses more as pods are added.
func mayNeedOthers(pod *corev1.Pod) bool {
	if af := pod.Spec.Affinity; af != nil && af.PodAffinity != nil && len(af.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
		return true
	}
	return slices.ContainsFunc(pod.Spec.TopologySpreadConstraints, func(c corev1.TopologySpreadConstraint) bool {
		return c.WhenUnsatisfiable == corev1.DoNotSchedule
	})
}

// orderRisk is what a one-pass source's scheduler may do with members that
// need others placed before them: needOthers fit only then, and worst is
// the pass that tries them first.
type orderRisk struct {
	needOthers []*corev1.Pod
	worst      *attempt
}

// domainsOutcome is what placing a gang in the domains of a topology key
// found: the best attempt, the running members that count with it, how
// many pending members it had to place (more than there are when the
// domain cannot be the gang's), what each domain held, and why none can
// hold the gang whatever fits, if so.
type domainsOutcome struct {
	best          *attempt
	running, need int
	domains       []DomainResult
	conflict      string
}

// inDomains tries every value of key as a candidate placement. A
// member running in a domain counts there only: when members already run
// in one domain, the gang is pinned to it; when they run in several (or on
// nodes without the label), no domain can hold the gang (the conflict says
// why) and the domains are tried only for the diagnosis.
func (pl *placing) inDomains(key string) (domainsOutcome, error) {
	base, pending := pl.base, pl.pending
	var out domainsOutcome
	domains := map[string][]*framework.NodeInfo{}
	valueOf := map[string]string{}
	for _, ni := range base.NodeInfos() {
		if v, ok := ni.Node().Labels[key]; ok {
			domains[v] = append(domains[v], ni)
			valueOf[ni.Name()] = v
		}
	}
	runningIn := map[string]int{}
	outside := 0
	for _, pod := range pl.running {
		if v, ok := valueOf[pod.Spec.NodeName]; ok {
			runningIn[v]++
		} else {
			outside++
		}
	}
	pinned := ""
	switch {
	case len(runningIn) > 1 || (outside > 0 && len(runningIn) > 0):
		out.conflict = fmt.Sprintf("members already run in %d values of %s (%s)", len(runningIn), key, strings.Join(slices.Sorted(maps.Keys(runningIn)), ", "))
	case outside > 0:
		out.conflict = fmt.Sprintf("members already run on nodes without the label %s", key)
	case len(runningIn) == 1:
		for v := range runningIn {
			pinned = v
		}
	}
	// A domain other than the one members run in can never hold the gang.
	impossible := len(pending) + 1
	needIn := func(v string) int {
		if out.conflict != "" || (pinned != "" && v != pinned) {
			return impossible
		}
		return int(pl.minMember) - runningIn[v] - pl.succeeded
	}

	values := make([]string, 0, len(domains))
	for v := range domains {
		values = append(values, v)
	}
	slices.Sort(values)
	requests := make([]*framework.Resource, len(pending))
	for i, pod := range pending {
		requests[i] = framework.ComputePodResource(pod).Resource
	}
	resources := requestedResources(requests)
	usable := usableNodes(pending, base.NodeInfos())
	binding := bindingResource(requests, base.NodeInfos(), usable)
	lowers := map[int]map[corev1.ResourceName]int64{}
	lowerFor := func(need int) map[corev1.ResourceName]int64 {
		if l, ok := lowers[need]; ok {
			return l
		}
		lowers[need] = lowerBound(requests, need)
		return lowers[need]
	}

	var best *attempt
	bestNeed := 0
	try := func(i int) error {
		dr := &out.domains[i]
		a, err := pl.attempts.get(base, key+"="+dr.Value, pl.members, func() (*attempt, error) {
			nodes := domains[dr.Value]
			s, err := base.Fork()
			if err != nil {
				return nil, err
			}
			names := make([]string, len(nodes))
			for i, n := range nodes {
				names[i] = n.Name()
			}
			s.Confine(names)
			fresh := func() (*schedule.Scheduler, error) {
				f, err := base.Fork()
				if err == nil {
					f.Confine(names)
				}
				return f, err
			}
			a, err := pl.placeOn(s, fresh, dr.Value)
			if err != nil {
				return nil, err
			}
			a.free = freeFraction(s, names, resources)
			return a, nil
		})
		if err != nil {
			return err
		}
		need := needIn(dr.Value)
		dr.Placed, dr.FreeFraction, dr.ScoreSum = len(a.assignments), a.free, a.scoreSum
		dr.Complete = len(a.assignments) >= need
		// A domain that could be the gang's beats one that cannot (kept
		// only to say how many members it would hold).
		eligible, bestEligible := need < impossible, bestNeed < impossible
		if best == nil || (eligible && !bestEligible) || (eligible == bestEligible && better(a, best, need, bestNeed)) {
			best, bestNeed = a, need
		}
		return nil
	}
	var skipped []int
	for _, v := range values {
		dr := DomainResult{Value: v, Nodes: len(domains[v]), Running: runningIn[v], Resource: binding}
		if binding != "" {
			dr.Free, dr.Allocatable, dr.Usable = freeOf(binding, domains[v], usable)
		}
		switch {
		case out.conflict != "":
			dr.Skipped = out.conflict
		case pinned != "" && v != pinned:
			dr.Skipped = fmt.Sprintf("members already run in %s=%s", key, pinned)
		default:
			dr.Skipped = shortfall(lowerFor(needIn(v)), domains[v], usable)
		}
		out.domains = append(out.domains, dr)
		if dr.Skipped != "" {
			skipped = append(skipped, len(out.domains)-1)
			continue
		}
		if err := try(len(out.domains) - 1); err != nil {
			return out, err
		}
	}
	// Skipped domains cannot hold the gang, so the verdict never needs them.
	// When no domain can, they are tried after all, for the diagnosis: how
	// many members each holds at most. A domain skipped for where members
	// run is never the verdict's.
	if best == nil || len(best.assignments) < bestNeed {
		for _, i := range skipped {
			if err := try(i); err != nil {
				return out, err
			}
		}
	}
	if best == nil {
		out.running, out.need = len(pl.running), int(pl.minMember)-len(pl.running)-pl.succeeded
		return out, nil
	}
	out.best, out.running, out.need = best, runningIn[best.domain], bestNeed
	return out, nil
}

func better(a, b *attempt, needA, needB int) bool {
	if b == nil {
		return true
	}
	ca, cb := len(a.assignments) >= needA, len(b.assignments) >= needB
	if ca != cb {
		return ca
	}
	if !ca && len(a.assignments) != len(b.assignments) {
		return len(a.assignments) > len(b.assignments)
	}
	if a.free != b.free {
		return a.free < b.free
	}
	return a.scoreSum > b.scoreSum
}

// lowerBound is, per resource, the least the gang's pending members can
// need together: the sum of the need smallest requests.
func lowerBound(requests []*framework.Resource, need int) map[corev1.ResourceName]int64 {
	if need <= 0 {
		return nil
	}
	per := map[corev1.ResourceName][]int64{}
	for _, r := range requests {
		per[corev1.ResourceCPU] = append(per[corev1.ResourceCPU], r.MilliCPU)
		per[corev1.ResourceMemory] = append(per[corev1.ResourceMemory], r.Memory)
		for name, q := range r.ScalarResources {
			per[name] = append(per[name], q)
		}
	}
	out := map[corev1.ResourceName]int64{}
	for name, qs := range per {
		for len(qs) < len(requests) {
			qs = append(qs, 0) // members that do not request it
		}
		slices.Sort(qs)
		var sum int64
		for _, q := range qs[:min(need, len(qs))] {
			sum += q
		}
		if sum > 0 {
			out[name] = sum
		}
	}
	out[corev1.ResourcePods] = int64(min(need, len(requests)))
	return out
}

// shortfall says which resource a domain lacks for the lower bound, or "":
// counting only the nodes some member may use, the resource it lacks most
// (relative to the need), with the figures.
func shortfall(lower map[corev1.ResourceName]int64, nodes []*framework.NodeInfo, usable map[string]bool) string {
	if len(lower) == 0 {
		return ""
	}
	worst, worstRatio := corev1.ResourceName(""), 0.0
	var worstFree int64
	count := 0
	for _, name := range slices.Sorted(maps.Keys(lower)) {
		var free int64
		count = 0
		for _, ni := range nodes {
			if !usable[ni.Name()] {
				continue
			}
			count++
			if name == corev1.ResourcePods {
				free += max(0, int64(ni.Allocatable.AllowedPodNumber-len(ni.Pods)))
				continue
			}
			free += max(0, ni.Allocatable.Get(name)-ni.Requested.Get(name))
		}
		if free >= lower[name] {
			continue
		}
		// The largest share missing binds; scalars (GPUs) before cpu and
		// memory on a tie.
		ratio := float64(lower[name]-free) / float64(lower[name])
		if worst == "" || ratio > worstRatio || (ratio == worstRatio && framework.IsScalarResourceName(name) && !framework.IsScalarResourceName(worst)) {
			worst, worstRatio, worstFree = name, ratio, free
		}
	}
	if worst == "" {
		return ""
	}
	if count == 0 {
		return "no node here that the members may use"
	}
	return fmt.Sprintf("needs at least %s %s, has %s free on the %d node(s) the members may use",
		formatQuantity(worst, lower[worst]), worst, formatQuantity(worst, worstFree), count)
}

// freeFraction is the share of the domain's allocatable left free after the
// placement, averaged over cpu, memory and the scalars the gang requests.
func freeFraction(s *schedule.Scheduler, names []string, resources []corev1.ResourceName) float64 {
	in := make(map[string]bool, len(names))
	for _, n := range names {
		in[n] = true
	}
	alloc, free := make([]int64, len(resources)), make([]int64, len(resources))
	for _, ni := range s.NodeInfos() {
		if !in[ni.Name()] {
			continue
		}
		for k, name := range resources {
			a := ni.Allocatable.Get(name)
			alloc[k] += a
			free[k] += max(0, a-ni.Requested.Get(name))
		}
	}
	var total float64
	var counted int
	for k := range resources {
		if alloc[k] > 0 {
			total += float64(free[k]) / float64(alloc[k])
			counted++
		}
	}
	if counted == 0 {
		return 0
	}
	return total / float64(counted)
}

// requestedResources lists cpu, memory and every scalar resource the
// members request, in first-seen order: what freeFraction averages over.
func requestedResources(requests []*framework.Resource) []corev1.ResourceName {
	resources := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}
	for _, r := range requests {
		for name := range r.ScalarResources {
			if !slices.Contains(resources, name) {
				resources = append(resources, name)
			}
		}
	}
	return resources
}

// formatQuantity prints a resource amount the way a user writes it.
func formatQuantity(name corev1.ResourceName, v int64) string {
	switch name {
	case corev1.ResourceCPU:
		return strconv.FormatFloat(float64(v)/1000, 'f', -1, 64)
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		const gi = 1 << 30
		if v%gi == 0 {
			return fmt.Sprintf("%dGi", v/gi)
		}
		return fmt.Sprintf("%.1fGi", float64(v)/gi)
	}
	return fmt.Sprint(v)
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
