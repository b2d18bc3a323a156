package gang

import (
	"context"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// SubGroups are sub-groups of a gang's members that placement treats as
// units (docs/design.md#gangs): a JobSet's child Jobs with exclusive
// placement, each alone in one value of a node label; a LeaderWorkerSet's
// groups, each placed whole or not at all, alone in a value when the LWS
// asks for it, and their sub-groups, each alone in a value of another key.
// The workloads' webhooks give the pods the affinities that enforce
// exclusivity node by node; SubGroups tells placement to search a value
// per unit, and which units are all or nothing.
type SubGroups struct {
	// Unit names a sub-group in messages: "LeaderWorkerSet group".
	Unit string
	// Label's value names a member's sub-group.
	Label string
	// TopologyKey, when set, asks for each sub-group alone in one value of
	// this node label. A member takes part when its Annotation holds
	// TopologyKey (when Annotation is set); others are placed after, freely.
	TopologyKey, Annotation string
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

// placeSubGroups places a gang whose members form sub-groups: sub-group by
// sub-group, in the queue order of their first members (see
// subGroupPlacer.units). kube-scheduler alone puts a sub-group's first pod
// on the best-scored node, picking at random among ties, and the others
// follow it, so a value that cannot hold them all may be picked; this
// search says whether a placement exists and where.
func placeSubGroups(ctx context.Context, base *schedule.Scheduler, sg *SubGroups, pending []*corev1.Pod) (*attempt, error) {
	s, err := base.Fork()
	if err != nil {
		return nil, err
	}
	p := &subGroupPlacer{ctx: ctx, taken: map[*SubGroups]map[string]bool{}}
	total, err := p.units(s, sg, pending, nil)
	if err != nil {
		return nil, err
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

// subGroupPlacer holds, per level of sub-groups with a topology key, the
// values earlier units took.
type subGroupPlacer struct {
	ctx   context.Context
	taken map[*SubGroups]map[string]bool
}

func (p *subGroupPlacer) saveTaken() map[*SubGroups]map[string]bool { return cloneTaken(p.taken) }

func cloneTaken(taken map[*SubGroups]map[string]bool) map[*SubGroups]map[string]bool {
	out := make(map[*SubGroups]map[string]bool, len(taken))
	for sg, vs := range taken {
		out[sg] = maps.Clone(vs)
	}
	return out
}

func (p *subGroupPlacer) take(sg *SubGroups, v string) {
	if p.taken[sg] == nil {
		p.taken[sg] = map[string]bool{}
	}
	p.taken[sg][v] = true
}

// units places members on s unit by unit, reserving on s what it keeps,
// on the nodes named within (nil: every node). A unit that is placed whole
// (or, unless sg.Whole, in part) is kept; a Whole unit that is not leaves
// its members unplaced, with the blocker of its attempt. Members of no
// unit come last, anywhere within.
func (p *subGroupPlacer) units(s *schedule.Scheduler, sg *SubGroups, members []*corev1.Pod, within []string) (*attempt, error) {
	order, groups, free := sg.Split(members)
	total := &attempt{}
	for _, id := range order {
		before := p.saveTaken()
		u, err := s.Fork()
		if err != nil {
			return nil, err
		}
		a, err := p.unit(u, sg, groups[id], within)
		if err != nil {
			return nil, err
		}
		if sg.Whole && len(a.unplaced) > 0 {
			p.taken = before
			total.add(&attempt{unplaced: groups[id], blocker: a.blocker, before: a.before})
			continue
		}
		if err := reserveAll(s, a.assignments); err != nil {
			return nil, err
		}
		total.add(a)
	}
	a, err := placeWithin(p.ctx, s, within, free)
	if err != nil {
		return nil, err
	}
	total.add(a)
	return total, nil
}

// unit places one sub-group's members on u (a fork it may change): in the
// value of sg.TopologyKey that holds it whole with the tightest fit (then
// the higher score sum, then the name), else the one that holds the most,
// the rest tried where their pods could go (so the blocker is a real
// cycle); without a key, anywhere within. Inner units are placed within
// the value tried.
func (p *subGroupPlacer) unit(u *schedule.Scheduler, sg *SubGroups, members []*corev1.Pod, within []string) (*attempt, error) {
	if sg.TopologyKey == "" {
		if sg.Inner != nil {
			return p.units(u, sg.Inner, members, within)
		}
		return placeWithin(p.ctx, u, within, members)
	}
	var in map[string]bool
	if within != nil {
		in = make(map[string]bool, len(within))
		for _, n := range within {
			in[n] = true
		}
	}
	domains := map[string][]*framework.NodeInfo{}
	for _, ni := range u.NodeInfos() {
		if v, ok := ni.Node().Labels[sg.TopologyKey]; ok && (in == nil || in[ni.Name()]) {
			domains[v] = append(domains[v], ni)
		}
	}
	var requests []*framework.Resource
	for _, pod := range members {
		requests = append(requests, framework.ComputePodResource(pod).Resource)
	}
	resources := requestedResources(requests)
	lower, usable := lowerBound(requests, len(members)), usableNodes(members, u.NodeInfos())

	var best *attempt
	var bestTaken map[*SubGroups]map[string]bool
	bestValue := ""
	before := p.saveTaken()
	try := func(v string) error {
		f, err := u.Fork()
		if err != nil {
			return err
		}
		names := make([]string, len(domains[v]))
		for i, ni := range domains[v] {
			names[i] = ni.Name()
		}
		p.taken = cloneTaken(before)
		var a *attempt
		if sg.Inner != nil {
			a, err = p.units(f, sg.Inner, members, names)
		} else {
			f.Confine(names)
			a, err = placeWith(p.ctx, f, v, members)
		}
		if err != nil {
			return err
		}
		a.domain, a.free = v, freeFraction(f, names, resources)
		n := len(members)
		// Equal attempts go to the first value by name, whatever order
		// they were tried in.
		if len(a.assignments) > 0 && (best == nil || better(a, best, n, n) || (!better(best, a, n, n) && v < bestValue)) {
			best, bestValue, bestTaken = a, v, p.saveTaken()
		}
		return nil
	}
	// Values without the free capacity the whole sub-group needs cannot
	// hold it: they are tried (for the one that holds the most) only when
	// no other does. On many values most are skipped so.
	var short []string
	for _, v := range slices.Sorted(maps.Keys(domains)) {
		switch {
		case before[sg][v]:
		case shortfall(lower, domains[v], usable) != "":
			short = append(short, v)
		default:
			if err := try(v); err != nil {
				return nil, err
			}
		}
	}
	if best == nil || len(best.unplaced) > 0 {
		for _, v := range short {
			if err := try(v); err != nil {
				return nil, err
			}
		}
	}
	if best == nil {
		// No value takes even one: place it as its pods would go.
		p.taken = cloneTaken(before)
		return placeWithin(p.ctx, u, within, members)
	}
	p.taken = bestTaken
	p.take(sg, bestValue)
	if err := reserveAll(u, best.assignments); err != nil {
		return nil, err
	}
	out := &attempt{assignments: best.assignments, scoreSum: best.scoreSum, blocker: best.blocker, before: best.before}
	if len(best.unplaced) > 0 {
		// The value that holds the most holds not all: the others are
		// tried where their pods could go, which says what blocks them.
		a, err := placeWithin(p.ctx, u, within, best.unplaced)
		if err != nil {
			return nil, err
		}
		out.blocker, out.before = nil, nil
		out.add(a)
	}
	return out, nil
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
