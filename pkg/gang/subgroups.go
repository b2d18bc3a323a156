package gang

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// SubGroups are sub-groups of a gang's members that placement treats as
// units (docs/design.md#gangs): a JobSet's child Jobs with exclusive
// placement, each alone in one value of a node label; a LeaderWorkerSet's
// groups, each placed whole or not at all, alone in a value when the LWS
// asks for it, and their sub-groups, each alone in a value of another key.
// The workloads' webhooks give the pods the affinities that enforce
// exclusivity node by node; SubGroups tells placement which units lead and
// follow (a unit with a key is placed as kube-scheduler places it: its
// leader first, the rest where the leader lands) and which are all or
// nothing.
type SubGroups struct {
	// Unit names a sub-group in messages: "LeaderWorkerSet group".
	Unit string
	// Label's value names a member's sub-group.
	Label string
	// TopologyKey, when set, asks for each sub-group alone in one value of
	// this node label. A member takes part when its Annotation holds
	// TopologyKey (when Annotation is set); others are placed after, freely.
	TopologyKey, Annotation string
	// LeaderLabel and LeaderValue mark a unit's leader, which its
	// controller creates (and kube-scheduler places) before the others,
	// pinned to the leader's value of TopologyKey once it is bound. Without
	// a label, the unit's first member in queue order leads.
	LeaderLabel, LeaderValue string
	// Whole: a sub-group is placed whole or not at all (its members that
	// fit are not placed when one does not).
	Whole bool
	// Inner, when set, divides each sub-group into units of its own,
	// searched within the value the sub-group was given.
	Inner *SubGroups
}

// Split divides members into their sub-groups (order: the sub-groups in
// the order of their first members) and those of none (free).
func (sg *SubGroups) Split(members []*corev1.Pod) (order []string, groups map[string][]*corev1.Pod, free []*corev1.Pod) {
	groups = map[string][]*corev1.Pod{}
	for _, pod := range members {
		id := sg.of(pod)
		if id == "" {
			free = append(free, pod)
			continue
		}
		if _, ok := groups[id]; !ok {
			order = append(order, id)
		}
		groups[id] = append(groups[id], pod)
	}
	return order, groups, free
}

// Of is the sub-group pod belongs to, or "" when it takes no part.
func (sg *SubGroups) Of(pod *corev1.Pod) string { return sg.of(pod) }

// of is the sub-group pod belongs to, or "" when it takes no part.
func (sg *SubGroups) of(pod *corev1.Pod) string {
	if sg.Annotation != "" && pod.Annotations[sg.Annotation] != sg.TopologyKey {
		return ""
	}
	return pod.Labels[sg.Label]
}

// placeSubGroups places a gang whose members form sub-groups, in the queue
// order of their first members. Sub-groups alone in a value of a key are
// placed as their controllers and kube-scheduler run them (see
// leaderSearch): the verdict is a plain yes only when every node a leader
// may land on lets its followers follow.
func placeSubGroups(ctx context.Context, base *schedule.Scheduler, sg *SubGroups, pending []*corev1.Pod) (*attempt, error) {
	s, err := base.Fork()
	if err != nil {
		return nil, err
	}
	p := &subGroupPlacer{ctx: ctx}
	total, err := p.units(s, sg, pending, nil, nil)
	if err != nil {
		return nil, err
	}
	if p.exhausted {
		total.noteNotEvaluated([]string{fmt.Sprintf("where the leaders of the %ss land: kube-scheduler takes any of "+
			"the equally scored nodes, and following them all takes more than %d cycles of a leader or trials of its "+
			"followers; beyond them only the first node by name was followed", sg.Unit, maxLeaderWork)})
	}
	// The gang's members in queue order, as the other placements list them.
	rank := make(map[*corev1.Pod]int, len(pending))
	for i, pod := range pending {
		rank[pod] = i
	}
	slices.SortStableFunc(total.assignments, func(x, y Assignment) int { return rank[x.Pod] - rank[y.Pod] })
	slices.SortStableFunc(total.unplaced, func(x, y *corev1.Pod) int { return rank[x] - rank[y] })
	return total, nil
}

// maxLeaderWork bounds what leaderSearch does (a leader's cycle on one
// combination of earlier choices, or its followers tried after it on one
// node): beyond it, only the first equally scored node is followed, and
// the placement says so (not evaluated, never a plain yes).
const maxLeaderWork = 64

// subGroupPlacer is what one placement of sub-groups shares.
type subGroupPlacer struct {
	ctx context.Context
	// work counts leaderSearch's cycles and trials; exhausted is set once
	// it passes maxLeaderWork.
	work      int
	exhausted bool
}

// units places members on s unit by unit, reserving on s what it keeps,
// on the nodes named within (nil: every node). A unit that is placed whole
// (or, unless sg.Whole, in part) is kept; a Whole unit that is not leaves
// its members unplaced, with the blocker of its attempt. Members of no
// unit come last, anywhere within. keys are the topology keys of the units
// these are within.
// spend counts one leader cycle or trial against maxLeaderWork.
func (p *subGroupPlacer) spend() {
	p.work++
	if p.work > maxLeaderWork {
		p.exhausted = true
	}
}

func (p *subGroupPlacer) units(s *schedule.Scheduler, sg *SubGroups, members []*corev1.Pod, within, keys []string) (*attempt, error) {
	order, groups, free := sg.Split(members)
	var total *attempt
	var err error
	if sg.TopologyKey != "" {
		total, err = newLeaderSearch(p, s, sg, order, groups, within, append(slices.Clone(keys), sg.TopologyKey)).run(s)
	} else {
		total, err = p.each(s, sg, order, groups, within, keys)
	}
	if err != nil {
		return nil, err
	}
	a, err := placeWithin(p.ctx, s, within, free)
	if err != nil {
		return nil, err
	}
	total.add(a)
	return total, nil
}

// each places units without a topology key of their own one after the
// other, each as its pods go (its inner units, if any, within it).
func (p *subGroupPlacer) each(s *schedule.Scheduler, sg *SubGroups, order []string, groups map[string][]*corev1.Pod, within, keys []string) (*attempt, error) {
	total := &attempt{}
	for _, id := range order {
		u, err := s.Fork()
		if err != nil {
			return nil, err
		}
		var a *attempt
		if sg.Inner != nil {
			a, err = p.units(u, sg.Inner, groups[id], within, keys)
		} else {
			a, err = placeWithin(p.ctx, u, within, groups[id])
		}
		if err != nil {
			return nil, err
		}
		if sg.Whole && len(a.unplaced) > 0 {
			total.add(discarded(groups[id], a))
			continue
		}
		if err := reserveAll(s, a.assignments); err != nil {
			return nil, err
		}
		total.add(a)
	}
	return total, nil
}

// discarded is a Whole unit's attempt a that did not place all its
// members: none is kept, the blocker stays with what its cycle ran after.
func discarded(members []*corev1.Pod, a *attempt) *attempt {
	return &attempt{unplaced: members, blocker: a.blocker, before: a.before, notEvaluated: a.notEvaluated, why: a.why}
}

// joined is a followed by b, both unchanged.
func joined(a, b *attempt) *attempt {
	out := &attempt{}
	out.add(a)
	out.add(b)
	return out
}

// claimsOf are pod's claims as s allocated them, for a member with devices.
func claimsOf(s *schedule.Scheduler, pod *corev1.Pod) []*resourcev1.ResourceClaim {
	if s.DRA().UsesDevices(pod) {
		return s.Claims(pod)
	}
	return nil
}

// placeWithin places members one by one on a fork of s confined to within
// (nil: every node) and reserves on s what it placed.
func placeWithin(ctx context.Context, s *schedule.Scheduler, within []string, members []*corev1.Pod) (*attempt, error) {
	if len(members) == 0 {
		return &attempt{}, nil
	}
	f, err := s.Fork()
	if err != nil {
		return nil, err
	}
	f.Confine(within)
	a, err := placeWith(ctx, f, "", members)
	if err != nil {
		return nil, err
	}
	return a, reserveAll(s, a.assignments)
}

func reserveAll(s *schedule.Scheduler, assignments []Assignment) error {
	for _, as := range assignments {
		if err := s.Reserve(as.Pod, as.Node); err != nil {
			return err
		}
	}
	return nil
}

// add appends b, an attempt made after a's assignments were reserved, to
// a: its assignments and unplaced members; the first blocker stays, with
// the assignments its cycle ran after.
func (a *attempt) add(b *attempt) {
	if a.blocker == nil && b.blocker != nil {
		a.blocker, a.before = b.blocker, append(slices.Clone(a.assignments), b.before...)
	}
	a.assignments = append(a.assignments, b.assignments...)
	a.unplaced = append(a.unplaced, b.unplaced...)
	a.scoreSum += b.scoreSum
	a.noteNotEvaluated(b.notEvaluated)
	if a.why == "" {
		a.why = b.why
	}
}

// wholeUnits counts sg's units among members, and those none of whose
// members is unplaced.
func wholeUnits(sg *SubGroups, members, unplaced []*corev1.Pod) (whole, total int) {
	units, short := map[string]bool{}, map[string]bool{}
	for _, pod := range members {
		if id := sg.of(pod); id != "" {
			units[id] = true
		}
	}
	for _, pod := range unplaced {
		short[sg.of(pod)] = true
	}
	for id := range units {
		if !short[id] {
			whole++
		}
	}
	return whole, len(units)
}
