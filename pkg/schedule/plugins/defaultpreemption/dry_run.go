package defaultpreemption

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// dryRun is one preemption evaluation for one pod: it tries the nodes where
// preemption might help and collects candidates.
type dryRun struct {
	pl        *DefaultPreemption
	state     *framework.CycleState
	preemptor *corev1.Pod
	priority  int32
	pdbs      *pdbChecker
	// now is the start time of pods that have not started.
	now time.Time
	// numCandidates is how many candidates are enough, as kube-scheduler counts.
	numCandidates int
}

// nodeOutcome is selectVictimsOnNode's answer for one node, with the rank
// pickOneCandidate compares (computed once: the memo keeps it with the
// victims) and the node's name (a memo hit then reads nothing of the node:
// on 65,000 nodes, reading each candidate's name from its NodeInfo was a
// cache miss each, 13 s of an explain).
type nodeOutcome struct {
	node             string
	victims          []*corev1.Pod
	numPDBViolations int
	status           *framework.Status
	rank             *rank
}

// candidate is the node's outcome as a preemption candidate.
func (o *nodeOutcome) candidate() *Candidate {
	return &Candidate{NodeName: o.node, Victims: o.victims, NumPDBViolations: o.numPDBViolations, rank: o.rank}
}

// run tries nodes (sorted by name) and returns the candidates, non-violating
// ones first, the tally of the verdicts of the nodes that are not
// candidates, and the errors met.
//
// kube-scheduler starts at a random offset into the nodes, tries them in
// parallel, and stops once it holds a candidate that violates no
// PodDisruptionBudget and numCandidates candidates in all (each kind capped
// at numCandidates; nodes already in flight finish). Here the start is the
// first node by name and the outcome is that of trying the nodes one by one
// in that order: nodes are tried in parallel batches, and a batch's results
// are taken in order up to the node where kube-scheduler's rule stops,
// the rest discarded. The same snapshot thus always gives the same answer.
// places are the nodes' places in the handle's list, which key the memo.
func (r *dryRun) run(ctx context.Context, nodes []*framework.NodeInfo, places []int) ([]*Candidate, *verdictTally, error) {
	var nonViolating, violating []*Candidate
	verdicts := &verdictTally{}
	// Errors are joined as kube-scheduler joins them: apimachinery's
	// aggregate, one message alone, several deduplicated in brackets.
	var errs []error

	batch := max(r.numCandidates, framework.DefaultParallelism)
	outcomes := make([]nodeOutcome, min(batch, len(nodes)))
	memo := memoOf(r.state)
	var tries []int
	for start := 0; start < len(nodes); start += batch {
		chunk := nodes[start:min(start+batch, len(nodes))]
		chunkPlaces := places[start:min(start+batch, len(nodes))]
		// The memo's answers are taken here, in one pass: only the nodes it
		// has none for are worth a goroutine.
		tries = tries[:0]
		known := memo.entriesNow()
		for i := range chunk {
			if o, ok := known.get(chunkPlaces[i], chunk[i]); ok {
				outcomes[i] = o
			} else {
				tries = append(tries, i)
			}
		}
		r.pl.handle.Parallelizer().Until(ctx, len(tries), func(k int) {
			i := tries[k]
			outcomes[i] = r.outcome(ctx, chunk[i], chunkPlaces[i], memo)
		})
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		for i, ni := range chunk {
			o := outcomes[i]
			if o.status.IsSuccess() && len(o.victims) > 0 {
				if o.numPDBViolations == 0 {
					if len(nonViolating) < r.numCandidates {
						nonViolating = append(nonViolating, o.candidate())
					}
				} else if len(violating) < r.numCandidates {
					violating = append(violating, o.candidate())
				}
				if len(nonViolating) > 0 && len(nonViolating)+len(violating) >= r.numCandidates {
					return append(nonViolating, violating...), verdicts, utilerrors.NewAggregate(errs)
				}
				continue
			}
			status := o.status
			if status.IsSuccess() {
				status = framework.AsStatus(fmt.Errorf("expected at least one victim pod on node %q", ni.Name()))
			}
			if status.Code() == framework.Error {
				errs = append(errs, statusError(status))
			}
			verdicts.add(status)
		}
	}
	return append(nonViolating, violating...), verdicts, utilerrors.NewAggregate(errs)
}

// outcome tries the node and keeps the outcome in memo (when not nil and
// not an error) under its place.
func (r *dryRun) outcome(ctx context.Context, ni *framework.NodeInfo, place int, memo *Memo) nodeOutcome {
	var o nodeOutcome
	if !r.hasPotentialVictim(ni) {
		o = nodeOutcome{node: ni.Name(), status: noVictims}
	} else {
		// Each try works on copies: the node loses and regains pods, and
		// PreFilter extensions rewrite their state.
		victims, violations, status := r.selectVictimsOnNode(ctx, r.state.Clone(), ni.Clone())
		o = nodeOutcome{node: ni.Name(), victims: victims, numPDBViolations: violations, status: status}
		if status.IsSuccess() && len(victims) > 0 {
			r := rankOf(victims, violations)
			o.rank = &r
		}
	}
	if memo != nil && o.status.Code() != framework.Error {
		memo.put(place, ni, o)
	}
	return o
}

// noVictims is the verdict on a node without a pod of lower priority; one
// value serves every such node (verdicts are only counted, never changed).
var noVictims = framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonNoVictims)

// hasPotentialVictim reports a pod of lower priority on the node, so that
// nodes without one are not copied for nothing (the outcome is the same).
func (r *dryRun) hasPotentialVictim(ni *framework.NodeInfo) bool {
	for _, pi := range ni.Pods {
		if p, _ := r.pl.victimPriority(pi.Pod); p < r.priority {
			return true
		}
	}
	return false
}

// victimPriority is the priority preemption weighs a pod at as a victim,
// and whether it ranks as a pod group's (kube-scheduler v1.37 with
// GenericWorkload on, preemption.NewPodVictim): a pod of a native PodGroup
// the snapshot holds is a victim at its group's priority; every pod that
// names a PodGroup ranks above plain pods of the same priority. A pod that
// names a PodGroup exists only where the API server has GenericWorkload on,
// and the scheduler is taken to have it on too.
func (pl *DefaultPreemption) victimPriority(pod *corev1.Pod) (priority int32, group bool) {
	group = pod.Spec.SchedulingGroup != nil
	if ng, ok := pl.handle.NativePodGroupOf(pod); ok {
		return ng.Priority, group
	}
	return corev1helpers.PodPriority(pod), group
}

// victim is a pod that preemption may evict.
type victim struct {
	pi       *framework.PodInfo
	priority int32
	// group: the pod names a PodGroup (victimPriority).
	group bool
	start time.Time
	// index is the pod's place on the node, the last tie-break.
	index int
}

// moreImportant orders victims as kube-scheduler's MoreImportantVictim does
// for single pods: higher priority first, then a pod of a PodGroup before a
// plain pod, then the one that started earlier. Where kube-scheduler's order is left to
// chance (equal start times; pods not started yet get time.Now() as they are
// met, so the first on the node counts as oldest) the pod first on the node
// comes first.
func moreImportant(a, b victim) int {
	if a.priority != b.priority {
		if a.priority > b.priority {
			return -1
		}
		return 1
	}
	if a.group != b.group {
		if a.group {
			return -1
		}
		return 1
	}
	if c := a.start.Compare(b.start); c != 0 {
		return c
	}
	return a.index - b.index
}

// selectVictimsOnNode is kube-scheduler's SelectVictimsOnNode on copies of a
// node and of the cycle state: remove every pod of lower priority; if the pod
// still does not fit, the node cannot help; otherwise put pods back, most
// important first and those whose eviction would violate a
// PodDisruptionBudget before the others, keeping each one the pod still fits
// beside. What cannot be put back are the victims.
func (r *dryRun) selectVictimsOnNode(ctx context.Context, state *framework.CycleState, nodeInfo *framework.NodeInfo) ([]*corev1.Pod, int, *framework.Status) {
	var potential []victim
	for i, pi := range nodeInfo.Pods {
		if p, group := r.pl.victimPriority(pi.Pod); p < r.priority {
			potential = append(potential, victim{pi: pi, priority: p, group: group, start: startTime(pi.Pod, r.now), index: i})
		}
	}
	if len(potential) == 0 {
		return nil, 0, noVictims
	}

	runner := r.pl.runner
	remove := func(v victim) error {
		if err := nodeInfo.RemovePod(v.pi.Pod); err != nil {
			return err
		}
		return statusError(runner.RunPreFilterExtensionRemovePod(ctx, state, r.preemptor, v.pi, nodeInfo))
	}
	for _, v := range potential {
		if err := remove(v); err != nil {
			return nil, 0, framework.AsStatus(err)
		}
	}
	// Had the pod affinity to one of the victims, it would not fit now; like
	// kube-scheduler, we do not look for that case.
	if status := runner.RunFilterPlugins(ctx, state, r.preemptor, nodeInfo); !status.IsSuccess() {
		return nil, 0, status
	}

	slices.SortFunc(potential, moreImportant)
	violatingVictims, nonViolatingVictims := r.pdbs.split(potential)

	var victims []victim
	reprieve := func(v victim) (bool, error) {
		nodeInfo.AddPodInfo(v.pi)
		if err := statusError(runner.RunPreFilterExtensionAddPod(ctx, state, r.preemptor, v.pi, nodeInfo)); err != nil {
			return false, err
		}
		if runner.RunFilterPlugins(ctx, state, r.preemptor, nodeInfo).IsSuccess() {
			return true, nil
		}
		if err := remove(v); err != nil {
			return false, err
		}
		victims = append(victims, v)
		return false, nil
	}
	numViolations := 0
	for _, v := range violatingVictims {
		fits, err := reprieve(v)
		if err != nil {
			return nil, 0, framework.AsStatus(err)
		}
		if !fits {
			numViolations++
		}
	}
	for _, v := range nonViolatingVictims {
		if _, err := reprieve(v); err != nil {
			return nil, 0, framework.AsStatus(err)
		}
	}
	// Both passes ran in importance order; merge them back into one.
	if len(violatingVictims) > 0 && len(nonViolatingVictims) > 0 {
		slices.SortFunc(victims, moreImportant)
	}
	pods := make([]*corev1.Pod, len(victims))
	for i, v := range victims {
		pods[i] = v.pi.Pod
	}
	return pods, numViolations, nil
}

// startTime is when a pod started; kube-scheduler takes the current time for
// a pod that has not started yet.
func startTime(p *corev1.Pod, now time.Time) time.Time {
	if p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return now
}

// statusError turns a rejecting status into an error, as kube-scheduler's
// Status.AsError does (ours only does so for Error).
func statusError(s *framework.Status) error {
	switch s.Code() {
	case framework.Success, framework.Wait, framework.Skip:
		return nil
	}
	if err := s.AsError(); err != nil {
		return err
	}
	return errors.New(s.Message())
}

// pdbChecker tells which victims' eviction would violate a
// PodDisruptionBudget; selectors are parsed once per evaluation.
type pdbChecker struct {
	pdbs []parsedPDB
}

type parsedPDB struct {
	pdb      *policyv1.PodDisruptionBudget
	selector labels.Selector // nil when it selects nothing (unparsable or empty)
}

func newPDBChecker(pdbs []*policyv1.PodDisruptionBudget) *pdbChecker {
	c := &pdbChecker{pdbs: make([]parsedPDB, len(pdbs))}
	for i, pdb := range pdbs {
		c.pdbs[i].pdb = pdb
		selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		// A budget whose selector does not parse or is empty protects no pod.
		if err == nil && !selector.Empty() {
			c.pdbs[i].selector = selector
		}
	}
	return c
}

// split divides victims (in importance order) into those whose eviction
// would take a budget below zero and the others, as kube-scheduler's
// FilterVictimsWithPDBViolation does: each matching budget is charged in
// turn, pods the budget already counts as disrupted are not charged, and a
// pod violates once a budget it is charged to goes negative.
func (c *pdbChecker) split(victims []victim) (violating, nonViolating []victim) {
	if len(c.pdbs) == 0 {
		return nil, victims
	}
	allowed := make([]int32, len(c.pdbs))
	for i := range c.pdbs {
		allowed[i] = c.pdbs[i].pdb.Status.DisruptionsAllowed
	}
	isViolating := func(pod *corev1.Pod) bool {
		if len(pod.Labels) == 0 {
			return false
		}
		for i := range c.pdbs {
			p := &c.pdbs[i]
			if p.pdb.Namespace != pod.Namespace || p.selector == nil || !p.selector.Matches(labels.Set(pod.Labels)) {
				continue
			}
			if _, disrupted := p.pdb.Status.DisruptedPods[pod.Name]; disrupted {
				continue
			}
			allowed[i]--
			if allowed[i] < 0 {
				return true
			}
		}
		return false
	}
	for _, v := range victims {
		if isViolating(v.pi.Pod) {
			violating = append(violating, v)
		} else {
			nonViolating = append(nonViolating, v)
		}
	}
	return violating, nonViolating
}

// pickOneCandidate is kube-scheduler's pickOneNodeForPreemption: of the
// candidates, the one with the fewest PodDisruptionBudget violations, then
// the lowest highest victim priority, then the smallest sum of victim
// priorities, then the fewest victims, then the latest start among the
// highest-priority victims. kube-scheduler breaks a remaining tie at random
// (map order); we take the first node by name.
// The others still tied after every criterion are returned too: where
// kube-scheduler picks one of them at random, this picks the first by name.
//
// Taking, criterion by criterion, the candidates that score best keeps those
// whose ranks are the greatest in the criteria's order: one pass finds
// them, and only they are put in name order.
func pickOneCandidate(candidates []*Candidate, now time.Time) (*Candidate, []*Candidate) {
	if len(candidates) == 1 {
		return candidates[0], nil
	}
	var best []*Candidate
	var top *rank
	var topStart int64
	for _, c := range candidates {
		if c.rank == nil {
			r := rankOf(c.Victims, c.NumPDBViolations)
			c.rank = &r
		}
		start := c.rank.earliest(now).UnixNano()
		switch d := compareRanks(c.rank, start, top, topStart); {
		case top == nil || d > 0:
			top, topStart, best = c.rank, start, append(best[:0], c)
		case d == 0:
			best = append(best, c)
		}
	}
	byName := func(a, b *Candidate) int { return strings.Compare(a.NodeName, b.NodeName) }
	if !slices.IsSortedFunc(best, byName) {
		slices.SortFunc(best, byName)
	}
	if len(best) == 1 {
		return best[0], nil
	}
	return best[0], best[1:]
}

// compareRanks compares a and b (with their earliest starts at the moment
// of the pick) in pickOneCandidate's order of criteria: positive when a is
// the better candidate.
func compareRanks(a *rank, aStart int64, b *rank, bStart int64) int {
	if b == nil {
		return 1
	}
	return cmp.Or(cmp.Compare(a.pdb, b.pdb), cmp.Compare(a.highest, b.highest), cmp.Compare(a.sum, b.sum),
		cmp.Compare(a.count, b.count), cmp.Compare(aStart, bStart))
}

// rank is a candidate as pickOneCandidate compares it, each criterion a
// number where more is better: fewer PodDisruptionBudget violations, a
// lower priority of the most important victim, a lower sum of priorities
// (each shifted by MaxInt32+1 so that all are positive, and a node with a
// few negative-priority victims does not win over one with fewer victims
// of the same priority), fewer victims, and the latest earliest start among
// the victims of the highest priority. That start depends on the moment
// for victims that have not started (kube-scheduler takes time.Now()), so
// it is kept in parts and completed by earliest.
type rank struct {
	pdb, highest, sum, count int64
	// started is the earliest start among the highest-priority victims
	// that started (hasStarted: some did); unstarted says some did not.
	started    time.Time
	hasStarted bool
	unstarted  bool
}

// rankOf computes the rank of a node whose victims (most important first)
// are victims.
func rankOf(victims []*corev1.Pod, pdbViolations int) rank {
	r := rank{pdb: -int64(pdbViolations), highest: -int64(corev1helpers.PodPriority(victims[0])), count: -int64(len(victims))}
	var sum int64
	top := corev1helpers.PodPriority(victims[0])
	for _, p := range victims {
		priority := corev1helpers.PodPriority(p)
		sum += int64(priority) + int64(math.MaxInt32) + 1
		top = max(top, priority)
	}
	r.sum = -sum
	for _, p := range victims {
		if corev1helpers.PodPriority(p) != top {
			continue
		}
		switch {
		case p.Status.StartTime == nil:
			r.unstarted = true
		case !r.hasStarted || p.Status.StartTime.Time.Before(r.started):
			r.started, r.hasStarted = p.Status.StartTime.Time, true
		}
	}
	return r
}

// earliest is kube-scheduler's GetEarliestPodStartTime of the rank's victims
// at now: the earliest start among the victims of the highest priority.
func (r *rank) earliest(now time.Time) time.Time {
	switch {
	case !r.hasStarted:
		return now
	case r.unstarted && now.Before(r.started):
		return now
	}
	return r.started
}
