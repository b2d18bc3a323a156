package gang

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// leaderSearch places units that each need a value of sg.TopologyKey of
// their own the way their controllers and kube-scheduler do it. A unit's
// leader (a JobSet child Job's completion index 0, a LeaderWorkerSet
// group's leader) is created and scheduled alone: kube-scheduler puts it on
// the best-scored node, and which of equal top scores it takes is not up to
// the snapshot (v1.37.1's framework.NewSortedScoredNodes breaks ties with a
// Randomizer only extenders set, so the first node whose filters finished
// wins: an order of goroutines and of the node list), and
// its followers are created once it is bound, pinned to its value of the
// key (JobSet's pod webhook, setNodeSelector; LWS's pod controller,
// setNodeSelectorForWorkerPods). A leader that lands where its followers
// have no room leaves them Pending for good. So the search follows, unit
// by unit in queue order, every node a leader may land on (explore): the
// verdict is a plain yes only when every one of them, on every path of
// the earlier leaders' choices, lets its followers follow; the plan is
// then the first path by node name that places every unit (plan).
//
// When nothing of the units reads pods across values (byValue: one
// priority, so the leaders' anti-affinity keeps later units out of taken
// values, and no other term or spread constraint looks there), what later
// units can do depends only on the values not taken, so states whose
// untaken values are alike (the same nodes but for names: nodeSig) are
// followed once, and equal nodes of alike values share one trial.
type leaderSearch struct {
	p      *subGroupPlacer
	sg     *SubGroups
	order  []string
	groups map[string][]*corev1.Pod
	within []string
	// keys are the unit's key and those of the units it is within.
	keys []string
	// byValue: later units depend on the values not taken; alike: alike
	// nodes may share trials (byValue, and no member uses devices).
	byValue, alike bool
	valueOf        map[string]string
	nodeSigs       map[*framework.NodeInfo]string
	memo           map[string]followOutcome
	// follows keeps, per unit shape, node and value signature, whether the
	// followers follow (alike only); shapes are the units' shapes.
	follows map[string]bool
	shapes  map[int]string
	// pos is each node's index in NodeInfos (the same in every fork).
	pos map[string]int
	// failures are the choices that leave a unit short, in the order
	// found, once each; goodValues the values where a leader landed and
	// its followers followed.
	failures   []failure
	goodValues []string
}

// followOutcome is what following units k.. from one state found: whether
// some path places every unit whole, and whether every path does.
type followOutcome struct{ ok, allOK bool }

func newLeaderSearch(p *subGroupPlacer, s *schedule.Scheduler, sg *SubGroups, order []string, groups map[string][]*corev1.Pod, within, keys []string) *leaderSearch {
	ls := &leaderSearch{p: p, sg: sg, order: order, groups: groups, within: within, keys: keys,
		valueOf: map[string]string{}, nodeSigs: map[*framework.NodeInfo]string{}, memo: map[string]followOutcome{},
		follows: map[string]bool{}, shapes: map[int]string{}, pos: map[string]int{}}
	in := inSet(within)
	for i, ni := range s.NodeInfos() {
		ls.pos[ni.Name()] = i
		if v, ok := ni.Node().Labels[sg.TopologyKey]; ok && (in == nil || in[ni.Name()]) {
			ls.valueOf[ni.Name()] = v
		}
	}
	var members []*corev1.Pod
	for _, id := range order {
		members = append(members, groups[id]...)
	}
	nested := map[string]bool{}
	ls.byValue = readsOnlyKeys(members, s.NodeInfos(), func(key string) bool {
		if slices.Contains(keys, key) {
			return true
		}
		if _, ok := nested[key]; !ok {
			nested[key] = nests(s.NodeInfos(), key, sg.TopologyKey)
		}
		return nested[key]
	})
	ls.alike = ls.byValue && !slices.ContainsFunc(members, s.DRA().UsesDevices)
	return ls
}

func inSet(names []string) map[string]bool {
	if names == nil {
		return nil
	}
	in := make(map[string]bool, len(names))
	for _, n := range names {
		in[n] = true
	}
	return in
}

// readsOnlyKeys reports whether the members' placement reads other pods
// only per value of the unit's key: one priority (JobSet's anti-affinity
// holds within a priority), no spread constraints, pod (anti-)affinity
// terms only on keys local reports (the unit's key, those of the units it
// is within, keys whose values nest in the unit's), and no pod on the nodes
// with a term on another key that selects a member. Default spreading by
// Services that select the members is not looked at.
func readsOnlyKeys(members []*corev1.Pod, nodes []*framework.NodeInfo, local func(string) bool) bool {
	if len(members) == 0 {
		return true
	}
	priority := ptr.Deref(members[0].Spec.Priority, 0)
	for _, pod := range members {
		if ptr.Deref(pod.Spec.Priority, 0) != priority || len(pod.Spec.TopologySpreadConstraints) > 0 {
			return false
		}
		if slices.ContainsFunc(affinityTerms(pod), func(t corev1.PodAffinityTerm) bool { return !local(t.TopologyKey) }) {
			return false
		}
	}
	for _, ni := range nodes {
		for _, pi := range ni.PodsWithAffinity {
			for _, t := range affinityTerms(pi.Pod) {
				if local(t.TopologyKey) {
					continue
				}
				sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
				if err != nil || slices.ContainsFunc(members, func(m *corev1.Pod) bool { return sel.Matches(labels.Set(m.Labels)) }) {
					return false
				}
			}
		}
	}
	return true
}

// nests reports whether every value of inner lies within one value of
// outer (a rack in a block, a node's hostname in its zone): terms on inner
// then read pods of one value of outer only.
func nests(nodes []*framework.NodeInfo, inner, outer string) bool {
	in := map[string]string{}
	for _, ni := range nodes {
		iv, ok := ni.Node().Labels[inner]
		if !ok {
			continue
		}
		ov, ok := ni.Node().Labels[outer]
		if !ok {
			return false
		}
		if was, seen := in[iv]; seen && was != ov {
			return false
		}
		in[iv] = ov
	}
	return true
}

// affinityTerms are every pod affinity and anti-affinity term of pod,
// required and preferred.
func affinityTerms(pod *corev1.Pod) []corev1.PodAffinityTerm {
	a := pod.Spec.Affinity
	if a == nil {
		return nil
	}
	var out []corev1.PodAffinityTerm
	if pa := a.PodAffinity; pa != nil {
		out = append(out, pa.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			out = append(out, w.PodAffinityTerm)
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		out = append(out, pa.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			out = append(out, w.PodAffinityTerm)
		}
	}
	return out
}

// run follows every unit from s, reserves the plan on s and says, on the
// plan, what kube-scheduler's choices among equal scores may do: when some
// path leaves a unit short and another does not, the placement is a coin
// toss (not a plain yes: the risk is listed as not evaluated, with the
// nodes and the remedy); when every path does, the plan says why where it
// leaves a unit short.
func (ls *leaderSearch) run(s *schedule.Scheduler) (*attempt, error) {
	out, err := ls.explore(0, s, nil, nil)
	if err != nil {
		return nil, err
	}
	a, err := ls.plan(0, s, nil)
	if err != nil {
		return nil, err
	}
	if err := reserveAll(s, a.assignments); err != nil {
		return nil, err
	}
	if out.ok && !out.allOK {
		a.noteNotEvaluated([]string{ls.coinToss()})
	}
	return a, nil
}

// coinToss words the risk: the choices that leave a unit short, and what
// removes it.
func (ls *leaderSearch) coinToss() string {
	var parts []string
	for _, f := range ls.failures {
		part := f.what
		if !slices.Contains(f.after, "") {
			part += " (after " + f.after[0]
			if n := len(f.after) - 1; n > 0 {
				part += fmt.Sprintf(", or %d other choice(s) of the leaders before it", n)
			}
			part += ")"
		}
		parts = append(parts, part)
	}
	good := slices.Sorted(slices.Values(ls.goodValues))
	return fmt.Sprintf("a coin toss: kube-scheduler puts each %s's leader on a node of the best score, any of equal "+
		"scores (the first whose filters finish, which no snapshot shows), and its other pods must follow it to that node's %s; %s. To remove the risk, pin the pods to the values "+
		"that hold them (a nodeSelector or node affinity on %s: %s), or score nodes so that the ones with room for the "+
		"whole %s win (e.g. NodeResourcesFit's RequestedToCapacityRatio or MostAllocated counting the resource it needs)",
		ls.sg.Unit, ls.sg.TopologyKey, strings.Join(parts, "; "), ls.sg.TopologyKey, strings.Join(good, ", "), ls.sg.Unit)
}

// failure is a choice that leaves a unit short (what), and the earlier
// leaders' choices it came after ("": none).
type failure struct {
	what  string
	after []string
}

// fail records a choice that leaves a unit short, once per earlier path.
func (ls *leaderSearch) fail(what string, trail []string) {
	after := strings.Join(trail, ", ")
	i := slices.IndexFunc(ls.failures, func(f failure) bool { return f.what == what })
	if i < 0 {
		ls.failures = append(ls.failures, failure{what: what})
		i = len(ls.failures) - 1
	}
	if !slices.Contains(ls.failures[i].after, after) {
		ls.failures[i].after = append(ls.failures[i].after, after)
	}
}

// leaderOf splits a unit's pending members into its leader and the others;
// the leader is nil when it is not pending (it runs already: the others
// follow where it is).
func (ls *leaderSearch) leaderOf(members []*corev1.Pod) (*corev1.Pod, []*corev1.Pod) {
	if ls.sg.LeaderLabel == "" {
		return members[0], members[1:]
	}
	i := slices.IndexFunc(members, func(pod *corev1.Pod) bool { return pod.Labels[ls.sg.LeaderLabel] == ls.sg.LeaderValue })
	if i < 0 {
		return nil, members
	}
	return members[i], slices.Concat(members[:i], members[i+1:])
}

// trial is a unit's leader reserved on one node (or running already) and
// its followers placed after it, on g; good when every one is placed.
type trial struct {
	a    *attempt
	g    *schedule.Scheduler
	good bool
	// value is the value of the key the unit takes ("" when unknown).
	value string
}

// step is one unit's leader cycle on one state: its top-scored nodes
// and a trial per node (equal nodes of alike values share one), or, when
// the leader runs already, the followers' trial alone.
type step struct {
	leader, members []*corev1.Pod
	res             *schedule.Result
	ties            []string
	trials          []*trial
	running         *trial
	// s, k, followers and quick are what trialAt needs; shared holds the
	// trials of alike nodes.
	s         *schedule.Scheduler
	k         int
	followers []*corev1.Pod
	quick     bool
	shared    map[string]*trial
	// values are the signatures of the values, for the state keys.
	values map[string]string
}

func (ls *leaderSearch) step(k int, s *schedule.Scheduler, quick bool) (*step, error) {
	ctx := ls.p.ctx
	members := ls.groups[ls.order[k]]
	leader, followers := ls.leaderOf(members)
	st := &step{members: members}
	if ls.byValue {
		st.values = ls.valueSigs(s)
	}
	if leader == nil {
		g, err := s.Fork()
		if err != nil {
			return nil, err
		}
		a, err := placeWithin(ctx, g, ls.within, followers)
		if err != nil {
			return nil, err
		}
		st.running = &trial{a: a, g: g, good: len(a.unplaced) == 0}
		if len(a.assignments) > 0 {
			st.running.value = ls.valueOf[a.assignments[0].Node]
		}
		return st, nil
	}
	st.leader = []*corev1.Pod{leader}
	f, err := s.Fork()
	if err != nil {
		return nil, err
	}
	f.Confine(ls.within)
	res, err := f.Schedule(ctx, leader)
	if err != nil {
		return nil, fmt.Errorf("scheduling %s/%s: %w", leader.Namespace, leader.Name, err)
	}
	st.res = res
	if res.Verdict != schedule.VerdictScheduled {
		return st, nil
	}
	st.ties = res.TopNodes()
	if ls.p.exhausted {
		st.ties = st.ties[:1]
	}
	st.s, st.k, st.followers, st.quick = s, k, followers, quick
	st.trials, st.shared = make([]*trial, len(st.ties)), map[string]*trial{}
	return st, nil
}

// trialAt is the trial of the leader on st's i-th tie, made on first use.
func (ls *leaderSearch) trialAt(st *step, i int) (*trial, error) {
	if st.trials[i] != nil {
		return st.trials[i], nil
	}
	ctx, s, node, leader := ls.p.ctx, st.s, st.ties[i], st.leader[0]
	key := node
	if ls.alike {
		key = ls.nodeSig(s, node) + "\x00" + st.values[ls.valueOf[node]]
	}
	if t, ok := st.shared[key]; ok {
		st.trials[i] = &trial{a: t.a, g: t.g, good: t.good, value: ls.valueOf[node]}
		return st.trials[i], nil
	}
	// Whether the followers follow is the same for a unit of the same
	// shape on an alike node of an alike value, in any state: kept across
	// states (alike only).
	cached := ""
	if ls.alike {
		cached = ls.shape(st.k) + "\x00" + key
	}
	if good, ok := ls.follows[cached]; ok && st.quick {
		st.trials[i] = &trial{good: good, value: ls.valueOf[node]}
		st.shared[key] = st.trials[i]
		return st.trials[i], nil
	}
	ls.p.spend()
	g, err := s.Fork()
	if err != nil {
		return nil, err
	}
	if err := g.Reserve(leader, node); err != nil {
		return nil, err
	}
	var fa *attempt
	switch {
	case st.quick && ls.alike && ls.sg.Inner == nil:
		// Only whether they follow: tried within the value, where they
		// are pinned anyway.
		fa, err = placeWithin(ctx, g, ls.nodesOf(ls.valueOf[node]), st.followers)
	default:
		fa, err = ls.followers(g, st.followers, node)
	}
	if err != nil {
		return nil, err
	}
	t := &trial{g: g, good: len(fa.unplaced) == 0, value: ls.valueOf[node]}
	if !st.quick {
		t.a = &attempt{assignments: []Assignment{{Pod: leader, Node: node, Score: st.res.SelectedScore, Claims: claimsOf(g, leader)}}, scoreSum: st.res.SelectedScore}
		t.a.noteNotEvaluated(st.res.NotEvaluated)
		t.a.add(fa)
	} else if ls.alike {
		// The leader alone stands for its unit in later states: it keeps
		// later leaders out of its value (byValue).
		t.g = nil
	}
	if cached != "" {
		ls.follows[cached] = t.good
	}
	st.trials[i], st.shared[key] = t, t
	return t, nil
}

// stateKey names the state after units ..k-1 took the values (byValue) or
// nodes of path: for byValue, the signatures of the values not taken.
func (ls *leaderSearch) stateKey(k int, values map[string]string, path []string) string {
	if !ls.byValue {
		return strconv.Itoa(k) + "\x00" + strings.Join(path, "\x00")
	}
	var left []string
	for v, sig := range values {
		if !slices.Contains(path, v) {
			left = append(left, sig)
		}
	}
	slices.Sort(left)
	return strconv.Itoa(k) + "\x00" + strings.Join(left, "\x00")
}

// choice is what a trial adds to the path: its value (byValue) or node.
func (ls *leaderSearch) choice(st *step, i int) string {
	if ls.byValue {
		return st.trials[i].value
	}
	return st.ties[i]
}

// explore follows units k.. from state s; path holds the choices made
// before and trail words those that were a choice among equal scores.
func (ls *leaderSearch) explore(k int, s *schedule.Scheduler, path, trail []string) (followOutcome, error) {
	if k == len(ls.order) {
		return followOutcome{ok: true, allOK: true}, nil
	}
	var values map[string]string
	if ls.byValue {
		values = ls.valueSigs(s)
	}
	key := ls.stateKey(k, values, path)
	if o, ok := ls.memo[key]; ok {
		return o, nil
	}
	ls.p.spend()
	st, err := ls.step(k, s, true)
	if err != nil {
		return followOutcome{}, err
	}
	var out followOutcome
	switch {
	case st.running != nil:
		if st.running.good {
			if out, err = ls.explore(k+1, st.running.g, append(slices.Clone(path), st.running.value), trail); err != nil {
				return followOutcome{}, err
			}
		}
	case st.res.Verdict != schedule.VerdictScheduled:
		// No node for the leader: its followers are never created.
		if len(trail) > 0 {
			ls.fail(fmt.Sprintf("%s/%s finds no node", st.leader[0].Namespace, st.leader[0].Name), trail)
		}
	default:
		if out, err = ls.follow(k, s, st, path, trail); err != nil {
			return followOutcome{}, err
		}
	}
	ls.memo[key] = out
	return out, nil
}

// follow is explore's step for a leader that fits: its bad nodes recorded,
// then every good node's state followed (once per state key).
func (ls *leaderSearch) follow(k int, s *schedule.Scheduler, st *step, path, trail []string) (followOutcome, error) {
	leader := st.leader[0]
	if n := ls.untried(st); n > 1 && n > maxLeaderWork-ls.p.work {
		// More nodes than the work left can try: none is, beyond the
		// first (the placement says the choice was not followed).
		ls.p.exhausted = true
	}
	for i := range st.ties {
		if ls.p.exhausted && i > 0 && st.trials[i] == nil {
			// Out of work: the nodes not tried yet are not followed.
			st.ties, st.trials = st.ties[:i], st.trials[:i]
			break
		}
		if _, err := ls.trialAt(st, i); err != nil {
			return followOutcome{}, err
		}
	}
	for _, t := range st.trials {
		if t.good && !slices.Contains(ls.goodValues, t.value) {
			ls.goodValues = append(ls.goodValues, t.value)
		}
	}
	what, bad := ls.short(st)
	if what != "" {
		ls.fail(what, trail)
	}
	out := followOutcome{allOK: len(bad) == 0}
	seen := map[string]bool{}
	for i, t := range st.trials {
		if !t.good {
			continue
		}
		next := append(slices.Clone(path), ls.choice(st, i))
		key := ls.stateKey(k+1, st.values, next)
		if seen[key] {
			continue
		}
		seen[key] = true
		more := trail
		if len(st.ties) > 1 {
			more = append(slices.Clone(trail), fmt.Sprintf("%s/%s on %s", leader.Namespace, leader.Name, ls.nodesAndValues(st.ties[i:i+1])))
		}
		g := t.g
		if g == nil {
			// A quick trial: the leader alone stands for its unit, which
			// keeps later leaders out of its value (byValue).
			var err error
			if g, err = s.Fork(); err != nil {
				return followOutcome{}, err
			}
			if err := g.Reserve(leader, st.ties[i]); err != nil {
				return followOutcome{}, err
			}
		}
		rest, err := ls.explore(k+1, g, next, more)
		if err != nil {
			return followOutcome{}, err
		}
		out.ok = out.ok || rest.ok
		out.allOK = out.allOK && rest.allOK
	}
	return out, nil
}

// untried counts the trials st's ties need that are not known yet.
func (ls *leaderSearch) untried(st *step) int {
	if !ls.alike {
		return len(st.ties)
	}
	keys := map[string]bool{}
	for _, node := range st.ties {
		key := ls.nodeSig(st.s, node) + "\x00" + st.values[ls.valueOf[node]]
		if _, known := ls.follows[ls.shape(st.k)+"\x00"+key]; !known {
			keys[key] = true
		}
	}
	return len(keys)
}

// short words the nodes of the top score where the leader's followers
// cannot follow, if any, and returns them.
func (ls *leaderSearch) short(st *step) (string, []string) {
	var bad []string
	for i, t := range st.trials {
		if t != nil && !t.good {
			bad = append(bad, st.ties[i])
		}
	}
	leader := st.leader[0]
	who := fmt.Sprintf("%s/%s, the leader of its %s,", leader.Namespace, leader.Name, ls.sg.Unit)
	switch {
	case len(bad) == 0:
		return "", nil
	case len(st.ties) == 1:
		return fmt.Sprintf("%s goes to %s, the best-scored node, where the rest cannot follow", who, ls.nodesAndValues(bad)), bad
	case len(bad) == len(st.ties):
		return fmt.Sprintf("%s goes to one of %s (equal top scores), and the rest can follow on none", who, ls.nodesAndValues(bad)), bad
	}
	return fmt.Sprintf("%s may land on %s, where the rest cannot follow", who, ls.nodesAndValues(bad)), bad
}

// plan is the path the placement shows, from unit k on state s: at each
// unit the first node by name whose followers follow and whose state lets
// every later unit be placed (as explore found), else the first whose
// followers follow, else the first. A unit short of members keeps what
// kube-scheduler would bind (the leader, the followers that fit) unless it
// is Whole.
func (ls *leaderSearch) plan(k int, s *schedule.Scheduler, path []string) (*attempt, error) {
	if k == len(ls.order) {
		return &attempt{}, nil
	}
	st, err := ls.step(k, s, false)
	if err != nil {
		return nil, err
	}
	var t *trial
	var choice string
	switch {
	case st.running != nil:
		t, choice = st.running, st.running.value
	case st.res.Verdict != schedule.VerdictScheduled:
		a := &attempt{unplaced: st.members, blocker: st.res}
		a.noteNotEvaluated(st.res.NotEvaluated)
		rest, err := ls.plan(k+1, s, path)
		if err != nil {
			return nil, err
		}
		return joined(a, rest), nil
	default:
		// The first good node whose state lets every later unit be placed,
		// else the first good one, else the first; nodes known to strand
		// the followers (alike, from explore) are not tried again.
		chosen, firstGood := -1, -1
		for i := range st.ties {
			if ls.alike {
				key := ls.nodeSig(s, st.ties[i]) + "\x00" + st.values[ls.valueOf[st.ties[i]]]
				if good, ok := ls.follows[ls.shape(k)+"\x00"+key]; ok && !good {
					continue
				}
			}
			if ls.p.exhausted && firstGood >= 0 {
				break
			}
			tr, err := ls.trialAt(st, i)
			if err != nil {
				return nil, err
			}
			if !tr.good {
				continue
			}
			if firstGood < 0 {
				firstGood = i
			}
			if o, ok := ls.memo[ls.stateKey(k+1, st.values, append(slices.Clone(path), ls.choice(st, i)))]; ok && o.ok {
				chosen = i
				break
			}
		}
		if chosen < 0 {
			chosen = max(firstGood, 0)
		}
		if _, err := ls.trialAt(st, chosen); err != nil {
			return nil, err
		}
		if !st.trials[chosen].good && !ls.p.exhausted {
			// Every node leaves the rest short: all tried, for the words.
			for i := range st.ties {
				if _, err := ls.trialAt(st, i); err != nil {
					return nil, err
				}
			}
		}
		t, choice = st.trials[chosen], ls.choice(st, chosen)
	}
	a, next := t.a, t.g
	if !t.good {
		// Every node the leader may take leaves the rest short here.
		if ls.sg.Whole {
			a, next = discarded(st.members, t.a), s
		} else {
			a = joined(t.a, &attempt{})
		}
		if st.running == nil && a.why == "" {
			a.why, _ = ls.short(st)
		}
	}
	rest, err := ls.plan(k+1, next, append(slices.Clone(path), choice))
	if err != nil {
		return nil, err
	}
	return joined(a, rest), nil
}

// followers places a unit's members after its leader, reserved on node:
// as their pods go (their terms pin them to the leader's value), or, with
// inner units, those within the leader's value.
func (ls *leaderSearch) followers(g *schedule.Scheduler, followers []*corev1.Pod, node string) (*attempt, error) {
	if ls.sg.Inner == nil {
		return placeWithin(ls.p.ctx, g, ls.within, followers)
	}
	var names []string
	for n, v := range ls.valueOf {
		if v == ls.valueOf[node] {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return ls.p.units(g, ls.sg.Inner, followers, names, ls.keys)
}

// nodeSig is what a filter or score reads of a node and its pods, but its
// name and value: alike nodes have the same. A node with pods that have
// pod (anti-)affinity terms or claims on volumes is like no other.
func (ls *leaderSearch) nodeSig(s *schedule.Scheduler, node string) string {
	return ls.sigOf(s.NodeInfos()[ls.pos[node]])
}

func (ls *leaderSearch) sigOf(ni *framework.NodeInfo) string {
	if sig, ok := ls.nodeSigs[ni]; ok {
		return sig
	}
	sig := "node " + ni.Name()
	if len(ni.PodsWithAffinity) == 0 && len(ni.PodsWithRequiredAntiAffinity) == 0 && len(ni.PVCRefCounts) == 0 {
		n := ni.Node()
		nodeLabels := maps.Clone(n.Labels)
		delete(nodeLabels, corev1.LabelHostname)
		delete(nodeLabels, ls.sg.TopologyKey)
		sig = fmt.Sprintf("%v|%v|%v|%v|%v|%v|%d|%v|%v", nodeLabels, n.Spec.Taints, n.Spec.Unschedulable,
			*ni.Allocatable, *ni.Requested, *ni.NonZeroRequested, len(ni.Pods), ni.UsedPorts, slices.Sorted(maps.Keys(ni.ImageStates)))
	}
	ls.nodeSigs[ni] = sig
	return sig
}

// valueSigs is, per value, the signatures of its nodes (sorted).
func (ls *leaderSearch) valueSigs(s *schedule.Scheduler) map[string]string {
	per := map[string][]string{}
	for _, ni := range s.NodeInfos() {
		if v, ok := ls.valueOf[ni.Name()]; ok {
			per[v] = append(per[v], ls.sigOf(ni))
		}
	}
	out := make(map[string]string, len(per))
	for v, sigs := range per {
		slices.Sort(sigs)
		out[v] = strings.Join(sigs, "\x01")
	}
	return out
}

// shape is what of unit k's members placement reads within a value, but
// the labels that name the unit (alike only: their pod terms are on the
// keys alone): equal for the child Jobs of one replicated Job.
func (ls *leaderSearch) shape(k int) string {
	if sh, ok := ls.shapes[k]; ok {
		return sh
	}
	var b strings.Builder
	for _, pod := range ls.groups[ls.order[k]] {
		spec := pod.Spec.DeepCopy()
		if spec.Affinity != nil {
			spec.Affinity = &corev1.Affinity{NodeAffinity: spec.Affinity.NodeAffinity}
		}
		spec.Hostname, spec.NodeName = "", ""
		for i := range spec.Containers {
			spec.Containers[i].Env, spec.Containers[i].Command, spec.Containers[i].Args = nil, nil, nil
		}
		fmt.Fprintf(&b, "%s|%v|%v\x01", pod.Labels[ls.sg.LeaderLabel], *framework.ComputePodResource(pod).Resource, spec.String())
	}
	ls.shapes[k] = b.String()
	return ls.shapes[k]
}

// nodesOf are the nodes of value v (within).
func (ls *leaderSearch) nodesOf(v string) []string {
	var names []string
	for n, nv := range ls.valueOf {
		if nv == v {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// nodesAndValues words nodes with their values of the key, the nodes of
// one value together: "a-0, a-1 (zone=a), b-0 (zone=b)"; at most 6 nodes.
func (ls *leaderSearch) nodesAndValues(nodes []string) string {
	var values []string
	byValue := map[string][]string{}
	for _, n := range nodes[:min(len(nodes), 6)] {
		v := ls.valueOf[n]
		if _, ok := byValue[v]; !ok {
			values = append(values, v)
		}
		byValue[v] = append(byValue[v], n)
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = fmt.Sprintf("%s (%s=%s)", strings.Join(byValue[v], ", "), ls.sg.TopologyKey, v)
	}
	if len(nodes) > 6 {
		parts = append(parts, fmt.Sprintf("%d more", len(nodes)-6))
	}
	return strings.Join(parts, ", ")
}
