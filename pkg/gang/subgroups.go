package gang

import (
	"context"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Exclusive is a workload's exclusive placement: each sub-group of members
// (a JobSet's child Job) alone in one value of TopologyKey. The workload's
// webhook gives the pods the affinities that enforce it; Exclusive tells
// placement to look for a value per sub-group (docs/design.md#gangs).
type Exclusive struct {
	TopologyKey string
	// SubGroupLabel's value names a member's sub-group. A member takes part
	// when its Annotation holds TopologyKey; others are placed after, freely.
	SubGroupLabel, Annotation string
}

// subGroupOf is the sub-group pod belongs to, or "" when it takes no part.
func (e *Exclusive) subGroupOf(pod *corev1.Pod) string {
	if pod.Annotations[e.Annotation] != e.TopologyKey {
		return ""
	}
	return pod.Labels[e.SubGroupLabel]
}

// placeSubGroups places a gang with exclusive sub-groups: sub-group by
// sub-group, in the queue order of their first members, each value of the
// key that no earlier sub-group took is tried on a fork confined to its
// nodes, and the value that holds the whole sub-group with the tightest fit
// wins (then the higher score sum, then the name): its members are
// reserved there. When no value holds all of it, the one that holds the
// most takes what it holds. kube-scheduler alone puts a sub-group's first pod on the
// best-scored node, picking at random among ties, and the others follow it,
// so a value that cannot hold them all may be picked; this search says
// whether a placement exists and where. Members no value holds are placed
// unconfined, as their pods would go, so the attempt says what blocks them.
// Members of no sub-group come last, anywhere.
func placeSubGroups(ctx context.Context, base *schedule.Scheduler, ex *Exclusive, pending []*corev1.Pod) (*attempt, error) {
	s, err := base.Fork()
	if err != nil {
		return nil, err
	}
	var order []string
	groups := map[string][]*corev1.Pod{}
	var free []*corev1.Pod
	for _, pod := range pending {
		sg := ex.subGroupOf(pod)
		if sg == "" {
			free = append(free, pod)
			continue
		}
		if _, ok := groups[sg]; !ok {
			order = append(order, sg)
		}
		groups[sg] = append(groups[sg], pod)
	}
	domains := map[string][]string{}
	for _, ni := range s.NodeInfos() {
		if v, ok := ni.Node().Labels[ex.TopologyKey]; ok {
			domains[v] = append(domains[v], ni.Name())
		}
	}
	values := slices.Sorted(maps.Keys(domains))
	var requests []*framework.Resource
	for _, pod := range pending {
		requests = append(requests, framework.ComputePodResource(pod).Resource)
	}
	resources := requestedResources(requests)
	taken := map[string]bool{}
	total := &attempt{}
	add := func(a *attempt) {
		total.assignments = append(total.assignments, a.assignments...)
		total.unplaced = append(total.unplaced, a.unplaced...)
		total.scoreSum += a.scoreSum
		if total.blocker == nil {
			total.blocker = a.blocker
		}
	}
	for _, sg := range order {
		members := groups[sg]
		var best *attempt
		bestValue := ""
		try := func(v string) error {
			f, err := s.Fork()
			if err != nil {
				return err
			}
			f.Confine(domains[v])
			a, err := placeWith(ctx, f, v, members)
			if err != nil {
				return err
			}
			a.free = freeFraction(f, domains[v], resources)
			n := len(members)
			// Equal attempts go to the first value by name, whatever order
			// they were tried in.
			if len(a.assignments) > 0 && (best == nil || better(a, best, n, n) || (!better(best, a, n, n) && v < bestValue)) {
				best, bestValue = a, v
			}
			return nil
		}
		// Values without the free capacity the whole sub-group needs cannot
		// hold it: they are tried (for the one that holds the most) only
		// when no other does. On many values most are skipped so.
		infos := map[string][]*framework.NodeInfo{}
		for _, ni := range s.NodeInfos() {
			if v, ok := ni.Node().Labels[ex.TopologyKey]; ok {
				infos[v] = append(infos[v], ni)
			}
		}
		var subRequests []*framework.Resource
		for _, pod := range members {
			subRequests = append(subRequests, framework.ComputePodResource(pod).Resource)
		}
		lower, usable := lowerBound(subRequests, len(members)), usableNodes(members, s.NodeInfos())
		var short []string
		for _, v := range values {
			if taken[v] {
				continue
			}
			if shortfall(lower, infos[v], usable) != "" {
				short = append(short, v)
				continue
			}
			if err := try(v); err != nil {
				return nil, err
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
			a, err := placeWith(ctx, s, "", members)
			if err != nil {
				return nil, err
			}
			add(a)
			continue
		}
		taken[bestValue] = true
		for _, as := range best.assignments {
			if err := s.Reserve(as.Pod, as.Node); err != nil {
				return nil, err
			}
		}
		add(&attempt{assignments: best.assignments, scoreSum: best.scoreSum})
		if len(best.unplaced) > 0 {
			// The value that holds the most holds not all: the others are
			// tried where their pods could go, which says what blocks them.
			a, err := placeWith(ctx, s, "", best.unplaced)
			if err != nil {
				return nil, err
			}
			add(a)
		}
	}
	a, err := placeWith(ctx, s, "", free)
	if err != nil {
		return nil, err
	}
	add(a)
	// The gang's members in queue order, as the other placements list them.
	rank := make(map[*corev1.Pod]int, len(pending))
	for i, pod := range pending {
		rank[pod] = i
	}
	slices.SortStableFunc(total.assignments, func(x, y Assignment) int { return rank[x.Pod] - rank[y.Pod] })
	slices.SortStableFunc(total.unplaced, func(x, y *corev1.Pod) int { return rank[x] - rank[y] })
	return total, nil
}
