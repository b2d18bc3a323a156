package gang

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
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
	// RefusalOnly stops at a queueing layer's refusal: the members are not
	// placed (the queue takes such a workload no further).
	RefusalOnly bool
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
	// A queueing layer decides first: the members it admits are placed as
	// it changes them; a gang it does not admit is held back by it alone,
	// as nothing after it is asked (docs/design.md#queueing-layers).
	adm := admit(snap, g)
	if adm != nil && !adm.Admitted && adm.Gate != nil {
		if opts.RefusalOnly {
			p := &Placement{Gang: g, Verdict: VerdictUnschedulable, MinMember: g.MinMember}
			p.applyAdmission(adm)
			return p, nil
		}
		p, _, err := placeMembers(ctx, base, g, opts, nil)
		if err != nil {
			return nil, err
		}
		p.applyAdmission(adm)
		return p, nil
	}
	// The placement's gang is the admitted one: its members as they would
	// be created, on the nodes once the workloads the layer evicts are gone.
	on, err := withoutEvicted(base, adm)
	if err != nil {
		return nil, err
	}
	p, err := placeOn(ctx, snap, on, admitted(g, adm), opts)
	if err != nil {
		return nil, err
	}
	p.applyAdmission(adm)
	return p, nil
}

// placeOn is PlaceOn once a queueing layer admitted the gang (or none
// concerns it): the gang's own system's session, gate and validity.
func placeOn(ctx context.Context, snap *schedule.Snapshot, base *schedule.Scheduler, g *Gang, opts PlaceOptions) (*Placement, error) {
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
// once, in queue order, in one cycle (Rules.OnePass): the plan is
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
