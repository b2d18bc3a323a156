package explain

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
)

// SuggestMove: moving lower-priority pods off some nodes, into room other
// nodes have, makes whole nodes for the members a fragmented cluster holds
// in holes too small for one (issue #27).
const SuggestMove SuggestionKind = "Move"

// Move is one pod a Move suggestion moves: off From, onto To, where
// kube-scheduler would put it again once the gang is placed; To empty says
// it would find no room and stay Pending (an eviction).
type Move struct {
	Pod      *corev1.Pod
	From, To string
	Priority int32
	// NoController says no controller owns the pod: nothing recreates it,
	// so moving it means deleting it and creating it again by hand.
	NoController bool
	// Gang names the PodGroup the pod is a member of, if any: moving it
	// disturbs that gang (it is placed again alone here).
	Gang string
}

// Bounds of the search for pods to move: per node, at most
// maxMovesPerNode pods, chosen among the maxMoveCandidates that hold the
// most of the fragmented resource.
const (
	maxMovesPerNode   = 4
	maxMoveCandidates = 8
)

// nodeClearing is the cheapest set of pods to move off one node so that
// the blocked member fits there, and how many members then fit.
type nodeClearing struct {
	node   string
	pods   []*corev1.Pod
	fits   int
	cost   moveCost
	amount int64 // of the fragmented resource moved
}

// moveCost ranks sets of pods to move: fewer PodDisruptionBudget
// violations (as preemption ranks its candidates, suggest_preempt.go's
// cheaper), then fewer members of other gangs (moving one disturbs its
// gang), fewer pods no controller recreates, then fewer pods, the lower
// highest priority, the smaller sum of priorities, the less of the
// fragmented resource moved.
type moveCost struct {
	pdb, members, orphans, pods int
	top                         int32
	sum, amount                 int64
}

func compareMoveCost(a, b moveCost) int {
	return cmp.Or(cmp.Compare(a.pdb, b.pdb), cmp.Compare(a.members, b.members), cmp.Compare(a.orphans, b.orphans), cmp.Compare(a.pods, b.pods),
		cmp.Compare(a.top, b.top), cmp.Compare(a.sum, b.sum), cmp.Compare(a.amount, b.amount))
}

// move is the fragmentation fix: when the shortfall says the room exists
// in holes smaller than a member (short's Holes), it finds the cheapest
// pods of lower priority than the gang to move so that enough nodes the
// members may use become whole for the members left over: node by node,
// the cheapest set whose removal lets one member fit (moveCost), then the
// cheapest nodes until the members are covered. It is proven as preemption
// is: on a copy of the snapshot without those pods the gang is placed, all
// or nothing; then the moved pods are placed again after it, highest
// priority first, each where kube-scheduler would put it (or, finding no
// room, named as staying Pending: an eviction). Pods of a DaemonSet and
// mirror pods never move; pods no controller owns are named as such.
func (x *explainer) move(ctx context.Context, g *gang.Gang, p *gang.Placement, e *Explanation, short *Suggestion) (*Suggestion, error) {
	if short == nil || p.Blocker == nil {
		return nil, nil
	}
	// The resource the shortfall names first, when it calls it fragmented
	// (suggest_shortfall.go); not a sub-group's value of its own.
	if len(short.Shortfall) == 0 {
		return nil, nil
	}
	if first := short.Shortfall[0]; first.Holes == nil || first.DeviceClass != "" || first.Domain != "" {
		return nil, nil
	}
	frag := short.Shortfall[0].Name
	left := len(unplacedOf(g, p))
	if left == 0 {
		return nil, nil
	}
	below := gangPriority(g)
	groups := gang.NativeGroupsOf(x.snap)
	eligible := map[string]bool{}
	for _, n := range e.Nodes {
		if !n.OutsideDomain && n.Plugin == noderesources.Name {
			eligible[n.Name] = true
		}
	}
	state, err := x.stateAfter(x.base, p.Planned())
	if err != nil {
		return nil, err
	}
	per := framework.ComputePodResource(p.Blocker.Pod).Resource
	budgets := newBudgets(x.snap.PodDisruptionBudgets)
	var options []nodeClearing
	for _, ni := range state.NodeInfos() {
		if !eligible[ni.Name()] || !inScope(p, ni.Node()) {
			continue
		}
		if c, ok := cheapestClearing(ni, per, frag, below, groups, budgets); ok {
			options = append(options, c)
		}
	}
	slices.SortFunc(options, func(a, b nodeClearing) int {
		return cmp.Or(compareMoveCost(a.cost, b.cost), cmp.Compare(a.node, b.node))
	})
	var chosen []nodeClearing
	covered := 0
	for _, o := range options {
		if covered >= left {
			break
		}
		chosen = append(chosen, o)
		covered += o.fits
	}
	if covered < left {
		return nil, nil // not enough nodes can be made whole
	}
	// Proven on the explainer's scheduler with the pods taken off (as on a
	// copy of the snapshot without them).
	freed, err := x.plain.Fork()
	if err != nil {
		return nil, err
	}
	gone := map[podKey]bool{}
	var moved []*corev1.Pod
	for _, c := range chosen {
		if err := freed.Evict(c.pods, c.node); err != nil {
			return nil, err
		}
		for _, pod := range c.pods {
			gone[keyOf(pod)] = true
			moved = append(moved, pod)
		}
	}
	snap := *x.snap
	snap.Pods = withoutPods(x.snap.Pods, gone)
	then, err := x.placeOn(ctx, freed, &snap, g)
	if err != nil {
		return nil, err
	}
	if then.Verdict != gang.VerdictPlaced {
		return nil, nil
	}
	// The moved pods, recreated by their controllers, are scheduled after
	// the gang (its members are of higher priority, so they come first in
	// kube-scheduler's queue), highest priority first.
	after, err := x.stateAfter(freed, then.Assignments)
	if err != nil {
		return nil, err
	}
	from := map[*corev1.Pod]string{}
	for _, c := range chosen {
		for _, pod := range c.pods {
			from[pod] = c.node
		}
	}
	slices.SortStableFunc(moved, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(groups.VictimPriority(b), groups.VictimPriority(a)), cmp.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name))
	})
	s := &Suggestion{Kind: SuggestMove, Verified: true, PDBViolations: budgets.violations(moved)}
	to, err := placeAgain(ctx, after, x.snap, moved)
	if err != nil {
		return nil, err
	}
	for i, pod := range moved {
		m := Move{Pod: pod, From: from[pod], To: to[i], Priority: groups.VictimPriority(pod), NoController: metav1.GetControllerOf(pod) == nil}
		if refs := gang.GroupsOf(pod); len(refs) > 0 {
			m.Gang = refs[0].Namespace + "/" + refs[0].Name
		}
		s.Moves = append(s.Moves, m)
	}
	s.Message = describeMoves(s.Moves, len(chosen)) + "; " + fitsThen(g, then)
	if s.PDBViolations > 0 {
		s.Message += fmt.Sprintf("; %d of the moves beyond what a PodDisruptionBudget allows", s.PDBViolations)
	}
	return s, nil
}

// placeAgain schedules pods, as their controllers create them again, one
// after the other on s (its working copy of snap), each reserved where it
// goes before the next, and returns where each goes ("" when it finds no
// room). Each gets the cycle kube-scheduler would run for it: pods of one
// class in a row (schedulingCopy makes the sweeps of several Jobs alike
// one) share a Sequence's incremental cycles; a pod alone in its run gets
// one full cycle, not a full cycle and the Sequence's evaluation of every
// node for equal pods that do not follow. Sequences decide as full cycles
// do, so the destinations are those of full cycles one pod at a time.
func placeAgain(ctx context.Context, s *schedule.Scheduler, snap *schedule.Snapshot, pods []*corev1.Pod) ([]string, error) {
	workloads := framework.Workloads{Services: snap.Services, ReplicationControllers: snap.ReplicationControllers,
		ReplicaSets: snap.ReplicaSets, StatefulSets: snap.StatefulSets}
	again := make([]*corev1.Pod, len(pods))
	for i, pod := range pods {
		again[i] = schedulingCopy(pod, workloads, snap.UnreadableIn(pod.Namespace, schedule.SelectorKinds...))
	}
	to := make([]string, len(pods))
	for run := range equalRuns(s, again) {
		sched := scheduleFunc(s.Schedule)
		reserve := func(_ context.Context, pod *corev1.Pod, node string) error { return s.Reserve(pod, node) }
		if len(run) > 1 {
			seq := s.NewSequence()
			sched, reserve = seq.Schedule, seq.Reserve
		}
		for _, i := range run {
			res, err := sched(ctx, again[i])
			if err != nil {
				return nil, fmt.Errorf("moving %s/%s: %w", pods[i].Namespace, pods[i].Name, err)
			}
			if res.Verdict == schedule.VerdictScheduled {
				to[i] = res.SelectedNode
				if err := reserve(ctx, again[i], to[i]); err != nil {
					return nil, err
				}
			}
		}
	}
	return to, nil
}

// scheduleFunc runs one scheduling cycle: Scheduler.Schedule or
// Sequence.Schedule.
type scheduleFunc func(context.Context, *corev1.Pod) (*schedule.Result, error)

// equalRuns yields the indexes of pods in order, cut into runs of pods in a
// row of one class (schedule.Sequence.Class, as the working copy stands
// before the first is scheduled); a pod without a class is a run alone. It
// only decides which pods share a Sequence, never a destination.
func equalRuns(s *schedule.Scheduler, pods []*corev1.Pod) iter.Seq[[]int] {
	return func(yield func([]int) bool) {
		probe := s.NewSequence()
		var run []int
		last, lastOK := "", false
		for i, pod := range pods {
			key, ok := probe.Class(pod)
			if len(run) > 0 && !(ok && lastOK && key == last) {
				if !yield(run) {
					return
				}
				run = nil
			}
			run = append(run, i)
			last, lastOK = key, ok
		}
		if len(run) > 0 {
			yield(run)
		}
	}
}

// gangPriority is the priority the gang's pending members would take room
// at: a native gang's PodGroup's, else the lowest of its pending members'.
func gangPriority(g *gang.Gang) int32 {
	if g.Source == gang.SourceNative {
		return g.PodGroupPriorityValue()
	}
	var low *int32
	for _, pod := range g.Pending() {
		v := gang.PodPriority(pod)
		if low == nil || v < *low {
			low = &v
		}
	}
	if low == nil {
		return 0
	}
	return *low
}

// movable reports whether a pod on a node may be moved for a gang of
// priority below: of lower priority, not a DaemonSet's (it belongs to its
// node), not a mirror pod (the kubelet runs it from a file), not
// terminating.
func movable(pod *corev1.Pod, below int32, groups gang.NativeGroups) bool {
	if groups.VictimPriority(pod) >= below || pod.DeletionTimestamp != nil {
		return false
	}
	return !ofItsNode(pod)
}

// cheapestClearing is the cheapest set of movable pods on ni whose
// removal lets a pod requesting per fit there (every resource it requests
// and a pod slot): the smallest sets first, among the candidates holding
// the most of frag.
func cheapestClearing(ni *framework.NodeInfo, per *framework.Resource, frag corev1.ResourceName, below int32, groups gang.NativeGroups, budgets *budgets) (nodeClearing, bool) {
	var cands []*framework.PodInfo
	for _, pi := range ni.Pods {
		if movable(pi.Pod, below, groups) {
			cands = append(cands, pi)
		}
	}
	if len(cands) == 0 {
		return nodeClearing{}, false
	}
	slices.SortStableFunc(cands, func(a, b *framework.PodInfo) int {
		return cmp.Or(cmp.Compare(b.Res.Resource.Get(frag), a.Res.Resource.Get(frag)), cmp.Compare(groups.VictimPriority(a.Pod), groups.VictimPriority(b.Pod)))
	})
	cands = cands[:min(len(cands), maxMoveCandidates)]
	names := requestedNames(per)
	fits := func(set []*framework.PodInfo) int {
		n := -1
		for _, name := range names {
			free := ni.Allocatable.Get(name) - ni.Requested.Get(name)
			for _, pi := range set {
				free += pi.Res.Resource.Get(name)
			}
			k := int(free / per.Get(name))
			if n < 0 || k < n {
				n = k
			}
		}
		if slots := ni.Allocatable.AllowedPodNumber - len(ni.Pods) + len(set); n < 0 || slots < n {
			n = slots
		}
		return n
	}
	var best *nodeClearing
	for size := 1; size <= min(maxMovesPerNode, len(cands)) && best == nil; size++ {
		for set := range combinations(cands, size) {
			k := fits(set)
			if k < 1 {
				continue
			}
			c := nodeClearing{node: ni.Name(), fits: k}
			pods := make([]*corev1.Pod, len(set))
			for i, pi := range set {
				pods[i] = pi.Pod
				v := groups.VictimPriority(pi.Pod)
				if i == 0 || v > c.cost.top {
					c.cost.top = v
				}
				c.cost.sum += int64(v)
				c.amount += pi.Res.Resource.Get(frag)
				if metav1.GetControllerOf(pi.Pod) == nil {
					c.cost.orphans++
				}
				if len(gang.GroupsOf(pi.Pod)) > 0 {
					c.cost.members++
				}
			}
			c.pods, c.cost.pods, c.cost.amount, c.cost.pdb = pods, len(pods), c.amount, budgets.violations(pods)
			if best == nil || compareMoveCost(c.cost, best.cost) < 0 {
				best = &c
			}
		}
	}
	if best == nil {
		return nodeClearing{}, false
	}
	return *best, true
}

// combinations yields every subset of size k of items, in order (a new
// slice each time).
func combinations[T any](items []T, k int) iter.Seq[[]T] {
	return func(yield func([]T) bool) {
		idx := make([]int, k)
		for i := range idx {
			idx[i] = i
		}
		for {
			set := make([]T, k)
			for i, j := range idx {
				set[i] = items[j]
			}
			if !yield(set) {
				return
			}
			i := k - 1
			for i >= 0 && idx[i] == len(items)-k+i {
				i--
			}
			if i < 0 {
				return
			}
			idx[i]++
			for j := i + 1; j < k; j++ {
				idx[j] = idx[j-1] + 1
			}
		}
	}
}

// budgets counts the moves that go beyond what PodDisruptionBudgets allow,
// as kube-scheduler's filterPodsWithPDBViolation
// (pkg/scheduler/framework/preemption) charges victims: each budget of the
// pod's namespace whose selector matches it is charged once per pod it does
// not count as disrupted already, and a pod violates once a budget it is
// charged to goes below zero.
type budgets struct {
	pdbs      []*policyv1.PodDisruptionBudget
	selectors []labels.Selector
}

func newBudgets(pdbs []*policyv1.PodDisruptionBudget) *budgets {
	b := &budgets{pdbs: pdbs, selectors: make([]labels.Selector, len(pdbs))}
	for i, pdb := range pdbs {
		// A selector that does not parse, or is empty, protects no pod.
		if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil && !sel.Empty() {
			b.selectors[i] = sel
		}
	}
	return b
}

// violations counts the pods of a set whose move a budget does not allow.
func (b *budgets) violations(pods []*corev1.Pod) int {
	if len(b.pdbs) == 0 {
		return 0
	}
	allowed := make([]int32, len(b.pdbs))
	for i, pdb := range b.pdbs {
		allowed[i] = pdb.Status.DisruptionsAllowed
	}
	n := 0
	for _, pod := range pods {
		if len(pod.Labels) == 0 {
			continue
		}
		violates := false
		for i, pdb := range b.pdbs {
			if pdb.Namespace != pod.Namespace || b.selectors[i] == nil || !b.selectors[i].Matches(labels.Set(pod.Labels)) {
				continue
			}
			if _, disrupted := pdb.Status.DisruptedPods[pod.Name]; disrupted {
				continue
			}
			if allowed[i]--; allowed[i] < 0 {
				violates = true
			}
		}
		if violates {
			n++
		}
	}
	return n
}

// schedulingCopy is the pod as its controller creates it again
// (pendingCopy), for scheduling it: when its controller is of a kind
// kube-scheduler's default spreading does not select by
// (helper.DefaultSelector reads a ReplicationController, ReplicaSet or
// StatefulSet; framework.Workloads.DefaultSelector), the reference loses
// its controller mark, as no plugin reads it then. Pods alike but for
// which Job they came from then fall into one class of schedule.Sequence
// (whose key counts the controller, since default spreading may select by
// it) and share its incremental cycles. The copy is scheduled and reserved
// in the proof's working copy only; the Move names the pod itself. When a
// live read could not list the kinds the selector is made of (unreadable
// non-empty), the reference stays.
func schedulingCopy(pod *corev1.Pod, w framework.Workloads, unreadable []string) *corev1.Pod {
	c := pendingCopy(pod)
	ref := metav1.GetControllerOfNoCopy(c)
	if ref == nil || len(unreadable) > 0 {
		return c
	}
	with := w.DefaultSelector(c).String()
	i := slices.IndexFunc(c.OwnerReferences, func(r metav1.OwnerReference) bool { return r.Controller != nil && *r.Controller })
	refs := slices.Clone(c.OwnerReferences)
	refs[i].Controller = nil
	bare := *c
	bare.OwnerReferences = refs
	if w.DefaultSelector(&bare).String() != with {
		return c
	}
	return &bare
}

// pendingCopy is a bound pod as its controller would create it again:
// pending, on no node.
func pendingCopy(pod *corev1.Pod) *corev1.Pod {
	c := pod.DeepCopy()
	c.Spec.NodeName = ""
	c.Status = corev1.PodStatus{Phase: corev1.PodPending}
	return c
}

// describeMoves says which pods move where: each by name when they are
// few, else how many of each priority and the first few (the full list is
// in -o json's moves). Pods that would find no room are named as evicted,
// pods no controller owns as such.
func describeMoves(moves []Move, nodes int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "moving %d lower-priority pod(s) would free %d whole node(s) for the members", len(moves), nodes)
	name := func(m Move) string {
		v := Victim{Pod: m.Pod, Node: m.From, Priority: m.Priority}
		return victimName(v)
	}
	var stay, orphans, members []string
	if len(moves) <= maxListedVictims {
		var parts []string
		for _, m := range moves {
			if m.To == "" {
				parts = append(parts, fmt.Sprintf("%s off %s", name(m), m.From))
			} else {
				parts = append(parts, fmt.Sprintf("%s from %s to %s", name(m), m.From, m.To))
			}
		}
		b.WriteString(": " + strings.Join(parts, ", "))
	} else {
		byPriority := map[int32]int{}
		var first []string
		for i, m := range moves {
			byPriority[m.Priority]++
			if i < 3 {
				to := m.To
				if to == "" {
					to = "nowhere"
				}
				first = append(first, fmt.Sprintf("%s/%s from %s to %s", m.Pod.Namespace, m.Pod.Name, m.From, to))
			}
		}
		var counts []string
		for _, prio := range slices.Backward(slices.Sorted(maps.Keys(byPriority))) {
			counts = append(counts, fmt.Sprintf("%d of priority %d", byPriority[prio], prio))
		}
		fmt.Fprintf(&b, ": %s; first %s, ... (-o json lists every move)", strings.Join(counts, ", "), strings.Join(first, ", "))
	}
	for _, m := range moves {
		if m.To == "" {
			stay = append(stay, m.Pod.Namespace+"/"+m.Pod.Name)
		}
		if m.NoController {
			orphans = append(orphans, m.Pod.Namespace+"/"+m.Pod.Name)
		}
		if m.Gang != "" && !slices.Contains(members, m.Gang) {
			members = append(members, m.Gang)
		}
	}
	if len(stay) < len(moves) {
		b.WriteString("; each goes where kube-scheduler would put it after the gang (the first by name among equally good nodes)")
	}
	if len(stay) > 0 {
		fmt.Fprintf(&b, "; %d of them (%s) would find no room once the gang is placed and stay Pending: for them it is an eviction, not a move", len(stay), listSome(stay, 3))
	}
	if len(members) > 0 {
		fmt.Fprintf(&b, "; moved pods are members of PodGroup(s) %s, which a move disturbs (each pod is placed again alone here, not as its gang)", listSome(members, 3))
	}
	if len(orphans) > 0 {
		it := "it"
		if len(orphans) > 1 {
			it = "them"
		}
		fmt.Fprintf(&b, "; no controller owns %s: nothing recreates %s, so moving %s means deleting %s and creating %s again yourself",
			listSome(orphans, 3), it, it, it, it)
	}
	return b.String()
}
