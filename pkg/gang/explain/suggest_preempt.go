package explain

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// preempt asks kube-scheduler's preemption, as a what-if, which
// lower-priority pods it would evict for each member left over in turn, in
// the state the best attempt left: a member that fits once earlier victims
// are gone takes the first feasible node, one that does not gets its own
// victims and is assumed on the node preemption picks. The pick is
// kube-scheduler's ranking (fewest PodDisruptionBudget violations, then the
// lowest highest-priority victim, the smallest sum of priorities, the
// fewest victims) over every node, where kube-scheduler stops at a tenth:
// for a gang, the cheapest victims anywhere win (docs/design.md#commands).
// The victims are then removed from a copy of the snapshot and the gang
// placed again: the suggestion is made only when it then fits. Nothing is
// evicted.
func (x *explainer) preempt(ctx context.Context, g *gang.Gang, p *gang.Placement, e *Explanation) (*Suggestion, error) {
	if g.Source == gang.SourceNative {
		// kube-scheduler preempts for a native gang as a whole, not
		// member by member.
		return x.preemptPodGroup(ctx, g, p, e)
	}
	if p.Blocker == nil || p.Blocker.NominatedNode == "" {
		return nil, nil // kube-scheduler's own preemption found no room for the first
	}
	if group := x.wholeGroupVictim(g); group != "" {
		// kube-scheduler evicts such a group whole, across nodes; the
		// member-by-member dry run takes its pods one node at a time.
		e.NotEvaluated = append(e.NotEvaluated, fmt.Sprintf("preemption: the native PodGroup %s (disruptionMode All) is a candidate victim, "+
			"which kube-scheduler evicts whole across its nodes; this what-if does not model that for pods that preempt one by one", group))
		return nil, nil
	}
	// A pod alone gets kube-scheduler's own pick, the one its summary line
	// names; a gang the cheapest over every node.
	lone := g.IsLonePod()
	base := x.plain
	if !lone {
		var err error
		if base, err = x.plain.WithEveryPreemptionCandidate(); err != nil {
			return nil, err
		}
	}
	state, err := x.stateAfter(base, p.Planned())
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
	gone := map[podKey]bool{}
	var ok bool
	if sg := g.SubGroups; sg != nil && sg.TopologyKey != "" {
		ok, err = x.preemptSubGroups(ctx, state, sg, p, unplacedOf(g, p), s, gone)
	} else {
		_, ok, err = preemptMembers(ctx, state, gang.NativeGroupsOf(x.snap), unplacedOf(g, p), s, gone)
	}
	if err != nil || !ok {
		return nil, err
	}
	if len(s.Victims) == 0 {
		return nil, nil
	}
	// Proven on the explainer's scheduler with the victims evicted (as on
	// a copy of the snapshot without them).
	freed, err := x.plain.Fork()
	if err != nil {
		return nil, err
	}
	byNode := map[string][]*corev1.Pod{}
	for _, v := range s.Victims {
		byNode[v.Node] = append(byNode[v.Node], v.Pod)
	}
	for _, node := range slices.Sorted(maps.Keys(byNode)) {
		if err := freed.Evict(byNode[node], node); err != nil {
			return nil, err
		}
	}
	c := *x.snap
	c.Pods = withoutPods(x.snap.Pods, gone)
	then, err := x.placeOn(ctx, freed, &c, g)
	if err != nil {
		return nil, err
	}
	if then.Verdict != gang.VerdictPlaced {
		return nil, nil
	}
	s.Verified = true
	s.Message = "preempting " + describeVictims(s.Victims)
	if s.PDBViolations > 0 {
		s.Message += fmt.Sprintf("; %d of them beyond what a PodDisruptionBudget allows", s.PDBViolations)
	}
	if ns := unreadBudgets(x.snap, s.Victims); len(ns) > 0 {
		// Budgets rank preemption's candidates and victims
		// (docs/design.md#snapshot).
		s.Message += fmt.Sprintf("; not verified which victims kube-scheduler picks: the PodDisruptionBudgets of namespace(s) %s could not be listed",
			strings.Join(ns, ", "))
	}
	s.Message += "; " + fitsThen(g, then)
	if n := len(s.EquallyGood); n > 0 {
		if lone {
			s.Message += fmt.Sprintf("; the choice is not unique: kube-scheduler picks the node at random among %d equally good ones (%s), this one is the first by name",
				n, listSome(s.EquallyGood, 5))
		} else {
			s.Message += fmt.Sprintf("; not unique: %d nodes are equally good for the first member (%s), this plan takes the first by name "+
				"and kube-scheduler, preempting member by member, may evict others", n, listSome(s.EquallyGood, 3))
		}
	}
	return s, nil
}

// wholeGroupVictim names a native PodGroup with disruptionMode All that has
// a bound pod of lower priority (its group's) than a pending member of g:
// kube-scheduler's preemption would take it as one victim across its nodes.
func (x *explainer) wholeGroupVictim(g *gang.Gang) string {
	var top int32 = math.MinInt32
	for _, pod := range g.Pending() {
		top = max(top, corev1helpers.PodPriority(pod))
	}
	groups := gang.NativeGroupsOf(x.snap)
	for _, pod := range x.snap.Pods {
		if pod.Spec.NodeName == "" {
			continue
		}
		if ng, key, ok := groups.Of(pod); ok && ng.DisruptAll && ng.Priority < top {
			return key
		}
	}
	return ""
}

// preemptMembers runs the preemption what-if for pods one after another on
// state: a pod that fits once earlier victims are gone takes the first
// feasible node, one that does not gets its own victims (added to s and
// gone) and is assumed on the node preemption picks. It returns where each
// pod went, and false when one finds no room even so.
func preemptMembers(ctx context.Context, state *schedule.Scheduler, groups gang.NativeGroups, pods []*corev1.Pod, s *Suggestion, gone map[podKey]bool) ([]gang.Assignment, bool, error) {
	var placed []gang.Assignment
	// Members of one class share their cycles: after a member's victims go
	// and it takes their node, the next is filtered again there only.
	seq := state.NewSequence()
	for _, pod := range pods {
		res, err := seq.Schedule(ctx, gang.Ungated(pod))
		if err != nil {
			return nil, false, fmt.Errorf("preemption what-if for %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		if res.Verdict == schedule.VerdictScheduled {
			// Earlier victims made room: it takes the node kube-scheduler
			// would. (The result of a pod scheduled on its class's
			// incremental path lists no nodes.)
			node := res.SelectedNode
			if err := seq.Reserve(ctx, pod, node); err != nil {
				return nil, false, err
			}
			placed = append(placed, gang.Assignment{Pod: pod, Node: node})
			continue
		}
		if res.NominatedNode == "" || len(res.PreemptionVictims) == 0 {
			return nil, false, nil
		}
		if len(s.Victims) == 0 && len(res.PreemptionEquallyGood) > 0 {
			// The first preemption's node is one of several equally good.
			s.EquallyGood = append([]string{res.NominatedNode}, res.PreemptionEquallyGood...)
		}
		s.PDBViolations += res.PreemptionPDBViolations
		for _, v := range res.PreemptionVictims {
			s.Victims = append(s.Victims, Victim{Pod: v, Node: res.NominatedNode, Priority: groups.VictimPriority(v)})
			gone[keyOf(v)] = true
		}
		if err := seq.Evict(res.PreemptionVictims, res.NominatedNode); err != nil {
			return nil, false, err
		}
		if err := seq.Reserve(ctx, pod, res.NominatedNode); err != nil {
			return nil, false, err
		}
		placed = append(placed, gang.Assignment{Pod: pod, Node: res.NominatedNode})
	}
	return placed, true, nil
}

// preemptSubGroups is the preemption what-if for a gang whose sub-groups
// each need a value of a topology key of their own (JobSet's exclusive
// child Jobs, LeaderWorkerSet groups): member by member, a sub-group's
// leader would be put where preemption finds room and its followers may
// find none there. So each sub-group left over tries every value no other
// sub-group holds, its members preempting within that value only, and
// takes the value whose victims are cheapest (kube-scheduler's ranking
// applied to the sub-group's victims together: fewest budget violations,
// lowest highest priority, smallest sum, fewest); members in no sub-group
// are tried after, anywhere. It reports false when a sub-group finds no
// value.
func (x *explainer) preemptSubGroups(ctx context.Context, state *schedule.Scheduler, sg *gang.SubGroups, p *gang.Placement, pods []*corev1.Pod, s *Suggestion, gone map[podKey]bool) (bool, error) {
	valueOf := map[string]string{}
	var values []string
	allowed := map[string]bool{}
	for _, ni := range state.NodeInfos() {
		v, ok := ni.Node().Labels[sg.TopologyKey]
		if !ok || !inScope(p, ni.Node()) {
			continue
		}
		if _, seen := allowed[v]; !seen {
			values = append(values, v)
		}
		allowed[v] = true
		valueOf[ni.Name()] = v
	}
	slices.Sort(values)
	taken := map[string]bool{}
	for _, a := range p.Planned() {
		if sg.Of(a.Pod) != "" {
			taken[valueOf[a.Node]] = true
		}
	}
	for _, pod := range p.Running {
		if sg.Of(pod) != "" {
			taken[valueOf[pod.Spec.NodeName]] = true
		}
	}
	order, units, free := sg.Split(pods)
	for _, u := range order {
		type trial struct {
			s      *Suggestion
			gone   map[podKey]bool
			placed []gang.Assignment
		}
		var best *trial
		for _, v := range values {
			if taken[v] {
				continue
			}
			fork, err := state.Fork()
			if err != nil {
				return false, err
			}
			var names []string
			for n, nv := range valueOf {
				if nv == v {
					names = append(names, n)
				}
			}
			fork.Confine(names)
			t := &trial{s: &Suggestion{}, gone: map[podKey]bool{}}
			placed, ok, err := preemptMembers(ctx, fork, gang.NativeGroupsOf(x.snap), units[u], t.s, t.gone)
			if err != nil {
				return false, err
			}
			if !ok {
				continue
			}
			t.placed = placed
			if best == nil || cheaper(t.s, best.s) {
				best = t
			}
		}
		if best == nil {
			return false, nil
		}
		// The chosen value's evictions and placements, on the working copy.
		byNode := map[string][]*corev1.Pod{}
		var nodes []string
		for _, v := range best.s.Victims {
			if _, ok := byNode[v.Node]; !ok {
				nodes = append(nodes, v.Node)
			}
			byNode[v.Node] = append(byNode[v.Node], v.Pod)
		}
		for _, n := range nodes {
			if err := state.Evict(byNode[n], n); err != nil {
				return false, err
			}
		}
		for _, a := range best.placed {
			if err := state.Reserve(a.Pod, a.Node); err != nil {
				return false, err
			}
			taken[valueOf[a.Node]] = true
		}
		if len(s.Victims) == 0 {
			s.EquallyGood = best.s.EquallyGood
		}
		s.Victims = append(s.Victims, best.s.Victims...)
		s.PDBViolations += best.s.PDBViolations
		maps.Copy(gone, best.gone)
	}
	if len(free) == 0 {
		return true, nil
	}
	_, ok, err := preemptMembers(ctx, state, gang.NativeGroupsOf(x.snap), free, s, gone)
	return ok, err
}

// cheaper ranks two sets of victims as kube-scheduler ranks preemption
// candidates: fewer PodDisruptionBudget violations, then the lower highest
// priority, the smaller sum of priorities, fewer victims.
func cheaper(a, b *Suggestion) bool {
	if a.PDBViolations != b.PDBViolations {
		return a.PDBViolations < b.PDBViolations
	}
	high := func(s *Suggestion) (top int32, sum int64) {
		top = math.MinInt32
		for _, v := range s.Victims {
			top = max(top, v.Priority)
			sum += int64(v.Priority)
		}
		return top, sum
	}
	ta, sa := high(a)
	tb, sb := high(b)
	if ta != tb {
		return ta < tb
	}
	if sa != sb {
		return sa < sb
	}
	return len(a.Victims) < len(b.Victims)
}

// maxListedVictims bounds the victims a preemption suggestion names on
// screen; the JSON lists them all.
const maxListedVictims = 6

// describeVictims says which pods a preemption evicts: each by name when
// they are few, else how many of each priority class on how many nodes and
// the first few names (the full list is in -o json's victims).
func describeVictims(victims []Victim) string {
	nodes := map[string]bool{}
	for _, v := range victims {
		nodes[v.Node] = true
	}
	if len(victims) <= maxListedVictims {
		byNode := map[string][]string{}
		var order []string
		for _, v := range victims {
			if _, ok := byNode[v.Node]; !ok {
				order = append(order, v.Node)
			}
			byNode[v.Node] = append(byNode[v.Node], victimName(v))
		}
		var parts []string
		for _, n := range order {
			parts = append(parts, strings.Join(byNode[n], ", ")+" on "+n)
		}
		return fmt.Sprintf("%d lower-priority pod(s) would make room: %s", len(victims), strings.Join(parts, "; "))
	}
	type class struct {
		name     string
		priority int32
		count    int
	}
	var classes []*class
	byClass := map[string]*class{}
	for _, v := range victims {
		key := fmt.Sprintf("%s/%d", v.Pod.Spec.PriorityClassName, v.Priority)
		c := byClass[key]
		if c == nil {
			c = &class{name: v.Pod.Spec.PriorityClassName, priority: v.Priority}
			byClass[key] = c
			classes = append(classes, c)
		}
		c.count++
	}
	var counts []string
	for _, c := range classes {
		name := c.name
		if name == "" {
			name = "no class"
		}
		counts = append(counts, fmt.Sprintf("%d of %s (priority %d)", c.count, name, c.priority))
	}
	var first []string
	for _, v := range victims[:3] {
		first = append(first, v.Pod.Namespace+"/"+v.Pod.Name+" on "+v.Node)
	}
	return fmt.Sprintf("%d lower-priority pod(s) on %d node(s) would make room: %s; first %s, ... (-o json lists every victim)",
		len(victims), len(nodes), strings.Join(counts, ", "), strings.Join(first, ", "))
}

// victimName names a victim with its priority and class.
func victimName(v Victim) string {
	desc := v.Pod.Namespace + "/" + v.Pod.Name + " (priority " + fmt.Sprint(v.Priority)
	if v.Pod.Spec.PriorityClassName != "" {
		desc += ", " + v.Pod.Spec.PriorityClassName
	}
	return desc + ")"
}

// listSome joins the first limit of items and says how many more there
// are: "a, b, c and 7 more".
func listSome(items []string, limit int) string {
	s := strings.Join(items[:min(limit, len(items))], ", ")
	if len(items) > limit {
		s += fmt.Sprintf(" and %d more", len(items)-limit)
	}
	return s
}

// unreadBudgets returns the namespaces of victims whose PodDisruptionBudgets
// the snapshot could not list, sorted.
func unreadBudgets(snap *schedule.Snapshot, victims []Victim) []string {
	var out []string
	for _, v := range victims {
		if !snap.CanRead(schedule.KindPodDisruptionBudgets, v.Pod.Namespace) && !slices.Contains(out, v.Pod.Namespace) {
			out = append(out, v.Pod.Namespace)
		}
	}
	slices.Sort(out)
	return out
}
