package explain

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/coscheduling"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
)

// queueSim is the queue simulation's state (ListPending): the cluster as
// it is (initial), as the entries that started so far leave it (cur), and
// without any pod but DaemonSet and static ones (empty, on first use).
type queueSim struct {
	q                   QueueOptions
	initial, cur, empty *simState
	// changed says an entry started, so cur is no longer initial.
	changed bool
}

// simState is a snapshot and one working copy of it per profile, built on
// first use, all kept in step.
type simState struct {
	snap   *schedule.Snapshot
	par    int
	scheds map[*schedule.Profile]*schedule.Scheduler
	// classes lend the placements on a profile's working copy the classes
	// of equal pods the ones before found (schedule.ClassStore): one full
	// cycle per shape, not per entry.
	classes map[*schedule.Profile]*schedule.ClassStore
}

func newSimState(snap *schedule.Snapshot, par int) *simState {
	return &simState{snap: snap, par: par, scheds: map[*schedule.Profile]*schedule.Scheduler{}, classes: map[*schedule.Profile]*schedule.ClassStore{}}
}

func newQueueSim(snap *schedule.Snapshot, q QueueOptions) *queueSim {
	st := newSimState(snap, q.Parallelism)
	return &queueSim{q: q, initial: st, cur: &simState{snap: snap, par: q.Parallelism, scheds: st.scheds, classes: st.classes}}
}

// store is the class store of the state's working copies of profile p.
func (st *simState) store(p *schedule.Profile) *schedule.ClassStore {
	c := st.classes[p]
	if c == nil {
		c = schedule.NewClassStore()
		st.classes[p] = c
	}
	return c
}

// placeOn places g on the state's working copy of opts.Profile, with the
// state's classes.
func (st *simState) placeOn(ctx context.Context, g *gang.Gang, opts gang.PlaceOptions) (*gang.Placement, *schedule.Scheduler, error) {
	s, err := st.scheduler(opts.Profile)
	if err != nil {
		return nil, nil, err
	}
	opts.Classes = st.store(opts.Profile)
	p, err := gang.PlaceOn(ctx, st.snap, s, g, opts)
	return p, s, err
}

// scheduler is the state's working copy for profile p.
func (st *simState) scheduler(p *schedule.Profile) (*schedule.Scheduler, error) {
	if s := st.scheds[p]; s != nil {
		return s, nil
	}
	// The lines show Filter verdicts only: no preemption dry runs.
	s, err := schedule.NewScheduler(st.snap, schedule.Options{Profile: p, Parallelism: st.par, SkipPostFilter: true})
	if err != nil {
		return nil, err
	}
	st.scheds[p] = s
	return s, nil
}

// commit records plan, placed with profile p, as running: every working
// copy reserves it, the snapshot binds it (gang.Commit).
func (sim *queueSim) commit(plan []gang.Assignment, p *schedule.Profile) error {
	st := sim.mutable()
	snap, s, err := gang.Commit(st.snap, st.scheds[p], plan)
	if err != nil {
		return err
	}
	claims := slices.ContainsFunc(plan, func(a gang.Assignment) bool { return len(a.Pod.Spec.ResourceClaims) > 0 })
	for k, other := range st.scheds {
		if k == p {
			continue
		}
		if claims {
			// Another profile's DynamicResources would allocate devices of
			// its own; it is built again from the committed snapshot, which
			// holds the allocations p made, when next asked for.
			delete(st.scheds, k)
			continue
		}
		f, err := other.Fork()
		if err != nil {
			return err
		}
		for _, a := range plan {
			if err := f.Reserve(gang.Ungated(a.Pod), a.Node); err != nil {
				return err
			}
		}
		st.scheds[k] = f
	}
	st.snap, st.scheds[p] = snap, s
	return nil
}

// mutable is cur, split from initial on the first change: initial keeps
// its working copies; the classes go on with cur, whose copies descend
// from them.
func (sim *queueSim) mutable() *simState {
	st := sim.cur
	if !sim.changed {
		sim.cur = &simState{snap: st.snap, par: st.par, scheds: map[*schedule.Profile]*schedule.Scheduler{}, classes: st.classes}
		for k, v := range st.scheds {
			sim.cur.scheds[k] = v
		}
		st.classes = map[*schedule.Profile]*schedule.ClassStore{}
		sim.changed = true
	}
	return sim.cur
}

// admit records a queueing layer's admission of p's gang
// (gang.CommitAdmission): its quota is held for the entries behind it,
// whatever its pods do, and the pods of the workloads it evicts leave
// their nodes.
func (sim *queueSim) admit(p *gang.Placement, prof *schedule.Profile) error {
	st := sim.mutable()
	s, err := st.scheduler(prof)
	if err != nil {
		return err
	}
	snap, next, err := gang.CommitAdmission(st.snap, s, p)
	if err != nil {
		return err
	}
	if next != s {
		// Pods left their nodes: the other profiles' copies are built
		// again from the snapshot when next asked for, and the classes
		// found before do not hold.
		clear(st.scheds)
		st.scheds[prof] = next
		st.classes = map[*schedule.Profile]*schedule.ClassStore{}
	}
	st.snap = snap
	return nil
}

// takeWaiting words a waiting workload's line by its queueing layer's
// decision (docs/design.md#the-queue). Refused, it takes no room: Held
// when no quota changes that, Waits behind the layer's workloads that hold
// it back or that the layer admitted ahead of it (it would be admitted on
// the quota as it is), Blocked otherwise; done says the line is decided.
// Admitted, its admission holds quota for the entries behind it whatever
// its pods do, and the pods are placed as any gang's.
func (sim *queueSim) takeWaiting(ahead []Pending, l *Pending, p *gang.Placement, opts gang.PlaceOptions) (done bool, err error) {
	a := p.Admission
	l.Admission = a
	switch {
	case a == nil:
		// No layer decided it: placed as it is, never a plain yes.
		l.undecided = true
		return false, nil
	case !a.Admitted && a.Gate == nil:
		// Not evaluated (its NotEvaluated): placed as it is.
		return false, nil
	case a.Admitted:
		// What of the layer's order one pass cannot tell (a queue behind
		// it that borrows less, one behind it that evicts it) is in its
		// NotEvaluated: the line is not verified.
		l.admittedBy = layerQueue(a)
		return false, sim.admit(p, opts.Profile)
	}
	l.Verdict, l.Reason = VerdictUnschedulable, a.Layer+": "+a.Message
	switch {
	case a.Inadmissible:
		l.Outcome = OutcomeHeld
		return true, nil
	case len(a.Behind) > 0:
		l.Outcome = OutcomeWaits
		for _, b := range a.Behind {
			// The line of the workload it waits behind, when listed.
			name := b
			for i := range ahead {
				if e := &ahead[i]; e.Gang != nil && len(e.Gang.Queued) > 0 && e.Gang.Namespace+"/"+e.Gang.Queued[0].Object.GetName() == b {
					name = qualifiedName(e, l.Namespace)
				}
			}
			l.Behind = append(l.Behind, name)
		}
		return true, nil
	}
	l.Outcome = OutcomeBlocked
	if !a.FirstInLine {
		return true, nil
	}
	// Admitted on the quota as it is: those the layer admitted ahead of
	// it in its queue take it.
	var admitted []string
	for i := range ahead {
		if ahead[i].admittedBy == layerQueue(a) {
			admitted = append(admitted, qualifiedName(&ahead[i], l.Namespace))
		}
	}
	if len(admitted) > 0 {
		l.Outcome, l.Behind = OutcomeWaits, admitted
		l.Reason += fmt.Sprintf(" (admitted on the quota as it is, but %s ahead of it take(s) it)", listSome(admitted, 3))
	}
	return true, nil
}

// layerQueue names a's layer and queue, as admittedBy does: "Kueue (research)".
func layerQueue(a *gang.Admission) string { return a.Layer + " (" + a.Queue + ")" }

// emptyState is the cluster without its pods, but DaemonSet and static
// pods (they come back on any node) and pending pods (they hold nothing);
// claims that only removed pods used are deallocated.
func (sim *queueSim) emptyState() *simState {
	if sim.empty == nil {
		snap := *sim.initial.snap
		snap.Pods = nil
		gone := map[types.UID]bool{}
		goneNames := map[[2]string]bool{}
		for _, pod := range sim.initial.snap.Pods {
			if pod.Spec.NodeName == "" || ofItsNode(pod) {
				snap.Pods = append(snap.Pods, pod)
				continue
			}
			gone[pod.UID] = true
			goneNames[[2]string{pod.Namespace, pod.Name}] = true
		}
		// A claim only pods that are gone were using holds no device any
		// more: its allocation goes with them.
		snap.ResourceClaims = nil
		for _, c := range sim.initial.snap.ResourceClaims {
			if c.Status.Allocation != nil && len(c.Status.ReservedFor) > 0 && !slices.ContainsFunc(c.Status.ReservedFor, func(r resourcev1.ResourceClaimConsumerReference) bool {
				return r.Resource != "pods" || !gone[r.UID] && !goneNames[[2]string{c.Namespace, r.Name}]
			}) {
				c = c.DeepCopy()
				c.Status = resourcev1.ResourceClaimStatus{}
			}
			snap.ResourceClaims = append(snap.ResourceClaims, c)
		}
		sim.empty = newSimState(&snap, sim.q.Parallelism)
	}
	return sim.empty
}

// ofItsNode reports whether pod belongs to its node: a DaemonSet's pod or
// a static pod's mirror. It would be there on an emptied cluster, and no
// move takes it elsewhere.
func ofItsNode(pod *corev1.Pod) bool {
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return true
	}
	c := metav1.GetControllerOf(pod)
	return c != nil && c.Kind == "DaemonSet"
}

// take simulates one entry on the state the ones ahead of it left.
func (sim *queueSim) take(ctx context.Context, ahead []Pending, l *Pending) error {
	if l.Outcome == OutcomeHeld {
		return nil
	}
	if l.Gang == nil && l.Group != "" {
		l.Verdict, l.Outcome = VerdictUnschedulable, OutcomeHeld
		var unread bool
		l.Reason, _, unread = gang.HeldForGroup(sim.initial.snap, l.Pod)
		if unread {
			// Not a no: its group may exist (explain pod/ says the same).
			l.Verdict = VerdictUnverified
		}
		return nil
	}
	source, pods := l.pendingPods()
	opts, held := sim.q.PlaceFor(source, pods)
	if held != "" {
		l.Verdict, l.Outcome, l.Reason = VerdictUnschedulable, OutcomeHeld, held
		return nil
	}
	if l.Gang != nil {
		err := sim.takeGang(ctx, ahead, l, opts)
		if l.admittedBy != "" {
			// Its layer admits it first; then its pods are placed.
			l.Reason = "admitted by " + l.admittedBy + "; " + l.Reason
		}
		if l.undecided && l.Outcome == OutcomeStarts {
			l.Outcome, l.Verdict = OutcomeUnverified, VerdictUnverified
			l.Reason += "; not verified: no queueing layer decided its workload"
		}
		return err
	}
	return sim.takePod(ctx, ahead, l, opts)
}

// takeGang places a gang all or nothing behind its source's gate, as
// explain does.
func (sim *queueSim) takeGang(ctx context.Context, ahead []Pending, l *Pending, opts gang.PlaceOptions) error {
	g := l.Gang
	if r := gang.StaticGate(g); r != nil && g.GatedByOthers() == 0 && gang.Validate(g).Valid {
		// Its gate refuses it on any cluster: held, as placing it would
		// find (its members are not placed).
		p := &gang.Placement{Gang: g, MinMember: g.MinMember, Verdict: gang.VerdictUnschedulable}
		p.ApplyGate(r)
		l.Verdict, l.Reason, l.Outcome = VerdictUnschedulable, p.Message, OutcomeHeld
		return nil
	}
	// A workload its layer refuses goes no further (takeWaiting).
	queued := len(g.Queued) > 0
	opts.RefusalOnly = queued
	p, s, err := sim.cur.placeOn(ctx, g, opts)
	if err != nil {
		return err
	}
	if queued {
		if done, err := sim.takeWaiting(ahead, l, p, opts); done || err != nil {
			return err
		}
	}
	pending := g.Pending()
	gates := gang.GateNames(pending)
	// Volcano's own queue-allocation gate is Volcano's to remove when the
	// queue has room: such a gang competes (GatedByOthers).
	gated := g.GatedByOthers()
	l.Verdict, l.Reason = gangVerdict(p, gang.Validate(g), gated, gates)
	switch {
	case l.Verdict == VerdictGated:
		l.Outcome = OutcomeHeld
		l.Reason += gateOwnersBrief(gates)
		return nil
	case p.Verdict == gang.VerdictPlaced && p.Gate == nil:
		return sim.start(l, p.Planned(), opts.Profile, p.Verified(), p.AllNotEvaluated())
	}
	l.short, l.shortOther = insufficient(p.Blocker)
	if isCoscheduling(l) && p.Gate == nil {
		// Its members that fit are assumed and wait at Permit until one
		// does not and PostFilter rejects them (markUnsettled): on any
		// node where one passes, since equal scores tie by an order no
		// snapshot holds.
		if l.hold, _, err = passing(ctx, s, pending); err != nil {
			return err
		}
	}
	s0, p0 := s, p
	if sim.changed {
		// Does it fit the cluster as it is? Then those ahead took its room.
		if p0, s0, err = sim.initial.placeOn(ctx, g, opts); err != nil {
			return err
		}
		if p0.Verdict == gang.VerdictPlaced && p0.Gate == nil {
			sim.waits(ahead, l, p0.Planned())
			return nil
		}
		l.Verdict, l.Reason = gangVerdict(p0, gang.Validate(g), gated, gates)
	}
	if p0.Gate != nil {
		// Its source holds it (a queue, members not created yet).
		l.Outcome, l.Verdict = OutcomeHeld, VerdictUnschedulable
		return nil
	}
	if p0.Blocker != nil {
		// How many fit of the minimum, and why the next does not (worded
		// when it is not NeverFits, below).
		l.Reason = ""
		if p0.TopologyKey != "" && p0.PreferredTopologyKey == "" {
			// A required topology may be the blocker: the gang placed
			// again without it says so (issue #27).
			if why, err := topologyBlocks(ctx, sim.initial.snap, s0, opts, g, p0); err != nil {
				return err
			} else if why != "" {
				l.Reason = why
			}
		}
	}
	l.Outcome = OutcomeBlocked
	if p0.Blocker == nil {
		// Its own rules refuse it (validity): no cluster changes that.
		return nil
	}
	pe, _, err := sim.emptyState().placeOn(ctx, g, opts)
	if err != nil {
		return err
	}
	l.room = nodeSet(pe.Planned())
	if pe.Verdict != gang.VerdictPlaced && pe.Blocker != nil {
		l.Outcome = OutcomeNeverFits
		l.Reason = fmt.Sprintf("never fits, even with every other pod gone: %d/%d fit: %s", pe.MaxPlaceable, pe.MinMember, nodeVerdicts(pe.Blocker))
	} else if l.Reason == "" {
		l.Reason = fmt.Sprintf("%d/%d fit: %s", p0.MaxPlaceable, p0.MinMember, nodeVerdicts(p0.Blocker))
	}
	return nil
}

// takePod schedules a pod of no gang.
func (sim *queueSim) takePod(ctx context.Context, ahead []Pending, l *Pending, opts gang.PlaceOptions) error {
	pod := l.Pod
	if len(pod.Spec.SchedulingGates) > 0 {
		gates := gang.GateNames([]*corev1.Pod{pod})
		l.Verdict, l.Outcome = VerdictGated, OutcomeHeld
		l.Reason = "scheduling gates: " + strings.Join(gates, ", ")
		l.Reason += gateOwnersBrief(gates)
		return nil
	}
	s, err := sim.cur.scheduler(opts.Profile)
	if err != nil {
		return err
	}
	// The class store spares the full cycle of a pod whose shape was
	// placed before; one that does not fit gets a full cycle all the same.
	res, err := s.NewSequenceIn(sim.cur.store(opts.Profile)).Schedule(ctx, pod)
	if err != nil {
		return fmt.Errorf("scheduling %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if res.Verdict == schedule.VerdictScheduled {
		l.Verdict = VerdictSchedulable
		return sim.start(l, []gang.Assignment{{Pod: pod, Node: res.SelectedNode}}, opts.Profile, len(res.NotEvaluated) == 0, res.NotEvaluated)
	}
	l.Verdict = VerdictUnschedulable
	l.short, l.shortOther = insufficient(res)
	if sim.changed {
		s0, err := sim.initial.scheduler(opts.Profile)
		if err != nil {
			return err
		}
		if res, err = s0.Schedule(ctx, pod); err != nil {
			return fmt.Errorf("scheduling %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		if res.Verdict == schedule.VerdictScheduled {
			var feasible []gang.Assignment
			for _, n := range res.Nodes {
				if n.Feasible {
					feasible = append(feasible, gang.Assignment{Pod: pod, Node: n.Name})
				}
			}
			sim.waits(ahead, l, feasible)
			return nil
		}
	}
	l.Outcome, l.Reason = OutcomeBlocked, nodeVerdicts(res)
	empty := sim.emptyState()
	se, err := empty.scheduler(opts.Profile)
	if err != nil {
		return err
	}
	re, err := se.NewSequenceIn(empty.store(opts.Profile)).Schedule(ctx, pod)
	if err != nil {
		return fmt.Errorf("scheduling %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	l.room = map[string]bool{re.SelectedNode: true}
	if re.Verdict != schedule.VerdictScheduled {
		l.Outcome, l.Reason = OutcomeNeverFits, "never fits, even with every other pod gone: "+nodeVerdicts(re)
	}
	return nil
}

// start records an entry that is placed: it holds its nodes for the
// entries behind it.
func (sim *queueSim) start(l *Pending, plan []gang.Assignment, p *schedule.Profile, verified bool, notEvaluated []string) error {
	l.Nodes = nil
	for _, a := range plan {
		l.Nodes = append(l.Nodes, a.Node)
	}
	l.Outcome, l.Reason = OutcomeStarts, "starts on "+listSome(l.DistinctNodes(), 3)
	if !verified {
		l.Outcome, l.Verdict = OutcomeUnverified, VerdictUnverified
		l.Reason = "would start on " + listSome(l.DistinctNodes(), 3)
		if len(notEvaluated) > 0 {
			l.Reason += "; not verified: " + notEvaluated[0]
		}
	}
	if err := sim.commit(plan, p); err != nil {
		return err
	}
	if g := l.Gang; g != nil && g.Source == volcano.Source {
		// Volcano's session counts a job whose tasks run as allocated
		// (gang.CommitGroup).
		sim.cur.snap = gang.CommitGroup(sim.cur.snap, g)
	}
	return nil
}

// waits records an entry that fits the cluster as it is (on the nodes of
// plan, or any of them for a pod alone) but not after the entries ahead:
// Behind names those that started on those nodes, else every one that
// started. A start it waits behind only by an order no snapshot holds
// (race) is no plain yes: it becomes Unverified.
func (sim *queueSim) waits(ahead []Pending, l *Pending, plan []gang.Assignment) {
	want := nodeSet(plan)
	l.room = want
	var on, all []int
	for i := range ahead {
		a := &ahead[i]
		if a.Outcome != OutcomeStarts && a.Outcome != OutcomeUnverified {
			continue
		}
		all = append(all, i)
		if slices.ContainsFunc(a.Nodes, func(n string) bool { return want[n] }) {
			on = append(on, i)
		}
	}
	behind := on
	if len(behind) == 0 {
		behind = all
	}
	raced := false
	for _, i := range behind {
		a := &ahead[i]
		l.Behind = append(l.Behind, qualifiedName(a, l.Namespace))
		why := race(a, l)
		if why == "" {
			continue
		}
		raced = true
		if a.Outcome == OutcomeStarts {
			a.Outcome, a.Verdict = OutcomeUnverified, VerdictUnverified
			a.Reason += "; not verified: " + why
		}
		if a.unsettled == "" {
			a.unsettled, a.brief = why, qualifiedName(l, a.Namespace)+" may go first"
		}
	}
	l.Outcome, l.Raced = OutcomeWaits, raced
	l.Reason = fmt.Sprintf("waits: fits the cluster as it is, but %s ahead of it take(s) the room", listSome(l.Behind, 3))
	if raced {
		// docs/design.md#the-queue.
		l.Reason += " (ahead by an order the scheduler's own queue may not keep)"
	}
}

// race says why a, which starts ahead of l on the room l would use, is
// ahead only by an order no snapshot holds; "" when its place is certain.
// kube-scheduler takes equal priorities by the time each entered its queue
// (refreshed at every attempt: PrioritySort.Less over QueueingParams'
// Timestamp); Coscheduling.Less orders equal priorities by the PodGroup's
// creation, then the pod's name, all in the snapshot; Volcano's session by
// priority and creation within a queue, and queues by their share
// (round robin), which the list does not model; two schedulers race.
func race(a, l *Pending) string {
	switch {
	case a.Scheduler != l.Scheduler:
		return fmt.Sprintf("%s, of another scheduler (%s), waits for the same room: the two schedulers race", qualifiedName(l, a.Namespace), l.Scheduler)
	case volcanoGang(a) && volcanoGang(l) && a.Queue != l.Queue:
		if slices.Contains(a.tiedQueues, l.Queue) {
			return fmt.Sprintf("%s, of Volcano queue %s, waits for the same room: which of queues %s and %s Volcano's allocate takes first is not known here (volcano.Session.QueueOrder)", qualifiedName(l, a.Namespace), l.Queue, a.Queue, l.Queue)
		}
		return ""
	case a.Priority != l.Priority:
		return ""
	case isCoscheduling(a) && isCoscheduling(l):
		return ""
	case volcanoGang(a) && volcanoGang(l) && !a.Since.Equal(l.Since):
		return ""
	}
	return fmt.Sprintf("%s, of equal priority, waits for the same room: the scheduler takes equal priorities by the time each entered its queue, which the snapshot does not hold", qualifiedName(l, a.Namespace))
}

// volcanoNext puts at entries[i] the Volcano gang Volcano's allocate
// action takes next on the state the entries before it left, of the
// Volcano gangs at i and after it not held (entries[i] is one): it pops the
// queue of the highest priority and the smallest share
// (volcano.Session.QueueOrder, proportion's QueueOrderFn), takes that
// queue's next job (the list keeps a queue's jobs in JobOrderFn's order:
// priority, then creation) and pushes the queue back with its share
// updated (allocate.go's allocateResources). The others keep their order.
// The queues that tie with the one taken are recorded (tiedQueues): which
// one Volcano's priority queue pops first, nothing in the snapshot says.
func (sim *queueSim) volcanoNext(entries []Pending, i int) error {
	var heads []int
	seen := map[string]bool{}
	for j := i; j < len(entries); j++ {
		if l := &entries[j]; volcanoGang(l) && l.Outcome != OutcomeHeld && !seen[l.Queue] {
			seen[l.Queue] = true
			heads = append(heads, j)
		}
	}
	if len(heads) < 2 {
		return nil
	}
	g := entries[i].Gang
	opts, _ := sim.q.PlaceFor(g.Source, g.Pending())
	s, err := sim.cur.scheduler(opts.Profile)
	if err != nil {
		return err
	}
	order := volcano.QueueOrder(sim.cur.snap, g, s.NodeInfos())
	best := heads[0]
	for _, j := range heads[1:] {
		if order(entries[j].Queue, entries[best].Queue) < 0 {
			best = j
		}
	}
	var tied []string
	for _, j := range heads {
		if j != best && order(entries[j].Queue, entries[best].Queue) == 0 {
			tied = append(tied, entries[j].Queue)
		}
	}
	if best != i {
		e := entries[best]
		copy(entries[i+1:best+1], entries[i:best])
		entries[i] = e
	}
	entries[i].tiedQueues = tied
	return nil
}

// volcanoGang reports whether the entry is a Volcano gang.
func volcanoGang(l *Pending) bool { return l.Gang != nil && l.Gang.Source == volcano.Source }

// isCoscheduling reports whether the entry is a Coscheduling gang, whose
// queue orders equal priorities by the PodGroup's creation
// (Coscheduling.Less), which the snapshot holds.
func isCoscheduling(l *Pending) bool { return l.Gang != nil && l.Gang.Source == coscheduling.Source }

// nodeSet is the set of plan's nodes.
func nodeSet(plan []gang.Assignment) map[string]bool {
	out := map[string]bool{}
	for _, a := range plan {
		out[a.Node] = true
	}
	return out
}

// DistinctNodes are the nodes a starting entry goes to, each once, in
// order.
func (p *Pending) DistinctNodes() []string {
	var out []string
	seen := make(map[string]bool, len(p.Nodes))
	for _, n := range p.Nodes {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// markPreemption takes back the plain yes of entries a preemption may undo.
// kube-scheduler's PostFilter (and its pod-group preemption) evicts pods of
// lower priority for a pod that does not fit, unless the pod's
// preemptionPolicy is Never: an entry that waits or is blocked may evict
// what started behind it at a lower priority once those run, so such
// starts become Unverified, and its own line says it may preempt when the
// cluster runs pods of lower priority. Only starts on a node the entry
// would use (its room) that hold what it lacks (a resource its cycle found
// insufficient, or anything when another reason blocked it) are at risk. Volcano's allocate does not preempt
// (its preempt action is not modelled, docs/design.md#volcano).
func markPreemption(snap *schedule.Snapshot, lines []Pending) {
	lowest, any := int32(0), false
	for _, pod := range snap.Pods {
		if pod.Spec.NodeName != "" && pod.DeletionTimestamp == nil {
			if p := gang.PodPriority(pod); !any || p < lowest {
				lowest, any = p, true
			}
		}
	}
	for i := range lines {
		e := &lines[i]
		if (e.Outcome != OutcomeWaits && e.Outcome != OutcomeBlocked) || !mayPreempt(e) {
			continue
		}
		if a := e.Admission; a != nil && !a.Admitted {
			// Its queueing layer holds its pods from every scheduler.
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			s := &lines[j]
			if s.Outcome == OutcomeStarts && s.Priority < e.Priority && slices.ContainsFunc(s.Nodes, func(n string) bool { return e.room[n] }) &&
				(e.shortOther || requestsAny(s, e.short)) {
				s.Outcome, s.Verdict = OutcomeUnverified, VerdictUnverified
				s.Reason = fmt.Sprintf("%s; not verified: %s of priority %d, ahead of it, may preempt it (kube-scheduler preempts lower priorities for a pod that does not fit)", s.Reason, e.Name(), e.Priority)
			}
		}
		if any && lowest < e.Priority {
			e.Reason += fmt.Sprintf("; kube-scheduler may preempt running pods of lower priority for it (from %d)", lowest)
		}
	}
}

// mayPreempt reports whether kube-scheduler would preempt for the entry's
// pending pods: not Volcano's, and a preemptionPolicy other than Never.
func mayPreempt(l *Pending) bool {
	source, pods := l.pendingPods()
	if source == volcano.Source {
		return false
	}
	for _, pod := range pods {
		if pod.Spec.PreemptionPolicy == nil || *pod.Spec.PreemptionPolicy != corev1.PreemptNever {
			return true
		}
	}
	return false
}

// insufficient reads a blocking cycle: the resources its nodes lacked
// ("Insufficient X"), and whether another reason rejected a node.
func insufficient(res *schedule.Result) (names []corev1.ResourceName, other bool) {
	if res == nil {
		return nil, true
	}
	for _, n := range res.Nodes {
		if n.Feasible || n.Status == nil {
			continue
		}
		for _, r := range n.Status.Reasons() {
			switch {
			case r == schedule.NotInDomainReason:
			case strings.HasPrefix(r, "Insufficient "):
				if name := corev1.ResourceName(strings.TrimPrefix(r, "Insufficient ")); !slices.Contains(names, name) {
					names = append(names, name)
				}
			default:
				other = true
			}
		}
	}
	if len(names) == 0 {
		other = true
	}
	return names, other
}

// requestsAny reports whether the entry's pending pods request one of
// names.
func requestsAny(l *Pending, names []corev1.ResourceName) bool {
	_, pods := l.pendingPods()
	for _, pod := range pods {
		for _, c := range append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...) {
			for _, name := range names {
				if q, ok := c.Resources.Requests[name]; ok && !q.IsZero() {
					return true
				}
			}
		}
	}
	return false
}

// SetQueue records where the subject stands in the queue. A Volcano gang
// that fits the cluster as it is but waits behind Volcano jobs ahead of it
// is no plain yes: Volcano's allocate action takes the jobs of one session
// in order (Session.JobOrderFn), so those ahead take their room first (the
// gap docs/design.md#volcano named); its verdict becomes Unverified, with
// who is ahead. Other schedulers' entries ahead race with it, and the
// queue line says so without changing the verdict.
func (e *Explanation) SetQueue(q *QueuePlace) {
	e.Queue = q
	if q == nil || e.Verdict != VerdictSchedulable {
		return
	}
	// One verdict (docs/design.md#the-queue): the first line and the exit
	// code answer "will it start now", and the queue may say otherwise.
	// A raced wait or an uncertain start is said on the queue line (the
	// gang itself fits, and may start).
	if q.Entry.Outcome == OutcomeWaits && !q.Entry.Raced && !e.volcanoHeld(q) {
		e.Verdict, e.Message = VerdictUnschedulable, fmt.Sprintf("%s; it %s", strings.TrimSuffix(e.Message, "."), q.Entry.Reason)
		return
	}
	e.volcanoWaits(q)
}

// volcanoHeld reports whether a Volcano gang that waits does so behind
// Volcano gangs of its own session (volcanoWaits).
func (e *Explanation) volcanoHeld(q *QueuePlace) bool {
	return e.Gang != nil && e.Gang.Source == volcano.Source && len(e.volcanoAhead(q)) > 0
}

// volcanoAhead are the Volcano gangs ahead of a Volcano gang that take the
// room it would use.
func (e *Explanation) volcanoAhead(q *QueuePlace) []string {
	var held []string
	for _, a := range q.Ahead {
		if a.Gang != nil && a.Gang.Source == volcano.Source && slices.Contains(q.Entry.Behind, qualifiedName(&a, q.Entry.Namespace)) {
			held = append(held, qualifiedName(&a, q.Entry.Namespace))
		}
	}
	return held
}

// volcanoWaits: a Volcano gang that waits behind Volcano gangs of its own
// session is not verified (the session's allocate order).
func (e *Explanation) volcanoWaits(q *QueuePlace) {
	if e.Gang == nil || e.Gang.Source != volcano.Source || q.Entry.Outcome != OutcomeWaits || e.Verdict != VerdictSchedulable {
		return
	}
	held := e.volcanoAhead(q)
	if len(held) == 0 {
		return
	}
	e.NotEvaluated = append(e.NotEvaluated, fmt.Sprintf("Volcano's allocate takes the jobs ahead of it in the same session first, and %s take(s) the room it would use", listSome(held, 3)))
	e.unverified()
}

// qualifiedName is an entry's name as another entry's Behind names it.
func qualifiedName(a *Pending, namespace string) string {
	if a.Namespace != namespace {
		return a.Namespace + "/" + a.Name()
	}
	return a.Name()
}

// gateOwnersBrief names who removes gates, " (Kueue's, ...)", or "".
func gateOwnersBrief(gates []string) string {
	var owners []string
	for _, g := range gates {
		if o, _, _ := strings.Cut(gang.GateOwner(g), ":"); o != "" && !slices.Contains(owners, o) {
			owners = append(owners, o)
		}
	}
	if len(owners) == 0 {
		return ""
	}
	return " (" + strings.Join(owners, ", ") + ")"
}
