package quota

import (
	"cmp"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kueue v0.17.0's classical preemption (pkg/scheduler/preemption,
// classicalPreemptions; fair sharing off): one ordered list of candidates,
// removed one by one until the workload fits, then filled back to the
// fewest.

// sim is a copy of the quota tree's usage that admissions and preemptions
// change (Kueue's scheduling snapshot); the Model is not changed.
type sim struct {
	m       *Model
	forks   map[*node]*node
	removed map[*Workload]bool
	// charged are the heads a cycle charged already.
	charged map[*Workload]bool
	// extra are the Workloads the simulation admitted (Queue), by
	// ClusterQueue, and their usage: candidates for preemption as the
	// model's admitted ones are.
	extra      map[*ClusterQueueState][]*Workload
	extraUsage map[*Workload]map[FlavorResource]int64
}

// usageOf is what w, holding quota on the simulation, uses.
func (s *sim) usageOf(w *Workload) map[FlavorResource]int64 {
	if u, ok := s.extraUsage[w]; ok {
		return u
	}
	u, _ := s.m.usageOf(w)
	return u
}

// admitted are cq's Workloads holding quota: the model's, then those the
// simulation admitted.
func (s *sim) admitted(cq *ClusterQueueState) []*Workload {
	if len(s.extra[cq]) == 0 {
		return cq.Admitted
	}
	return append(slices.Clip(cq.Admitted), s.extra[cq]...)
}

// newSim forks every node's usage.
func (m *Model) newSim() *sim {
	s := &sim{m: m, forks: map[*node]*node{}, removed: map[*Workload]bool{}, charged: map[*Workload]bool{}}
	for _, cq := range m.ClusterQueues {
		s.fork(cq.node)
	}
	return s
}

func (s *sim) fork(n *node) *node {
	if f := s.forks[n]; f != nil {
		return f
	}
	f := &node{name: n.name, quotas: n.quotas, subtree: n.subtree, usage: maps.Clone(n.usage), isCohort: n.isCohort}
	s.forks[n] = f
	if n.parent != nil {
		f.parent = s.fork(n.parent)
	}
	for _, c := range n.children {
		f.children = append(f.children, s.fork(c))
	}
	return f
}

// node is the simulation's node of a ClusterQueue.
func (s *sim) node(cq *ClusterQueueState) *node { return s.forks[cq.node] }

// remove takes a Workload's usage out (Snapshot.RemoveWorkload).
func (s *sim) remove(w *Workload) {
	cq := s.m.ClusterQueues[w.Status.Admission.ClusterQueue]
	s.removed[w] = true
	for fr, v := range s.usageOf(w) {
		s.node(cq).removeUsage(fr, v)
	}
}

// add puts a removed Workload's usage back (Snapshot.AddWorkload).
func (s *sim) add(w *Workload) {
	cq := s.m.ClusterQueues[w.Status.Admission.ClusterQueue]
	delete(s.removed, w)
	for fr, v := range s.usageOf(w) {
		s.node(cq).addUsage(fr, v)
	}
}

// addUsage adds an admission's usage to a ClusterQueue (AddUsage).
func (s *sim) addUsage(cq *ClusterQueueState, usage map[FlavorResource]int64) {
	for fr, v := range usage {
		s.node(cq).addUsage(fr, v)
	}
}

// Target is a Workload Kueue evicts to admit another, and why
// (InClusterQueue, InCohortReclamation, InCohortReclaimWhileBorrowing).
type Target struct {
	Workload *Workload
	Reason   string
}

// HumanReason words a target's reason as Kueue's preemption message does
// (HumanReadablePreemptionReasons).
func (t Target) HumanReason() string {
	switch t.Reason {
	case "InClusterQueue":
		return "prioritization in the ClusterQueue"
	case "InCohortReclamation":
		return "reclamation within the cohort"
	case "InCohortReclaimWhileBorrowing":
		return "reclamation within the cohort while borrowing"
	}
	return "UNKNOWN"
}

type variant int

const (
	never variant = iota
	withinCQ
	hierarchicalReclaim
	reclaimWithoutBorrowing
	reclaimWhileBorrowing
)

func (v variant) reason() string {
	switch v {
	case withinCQ:
		return "InClusterQueue"
	case hierarchicalReclaim, reclaimWithoutBorrowing:
		return "InCohortReclamation"
	case reclaimWhileBorrowing:
		return "InCohortReclaimWhileBorrowing"
	}
	return "Unknown"
}

type candidate struct {
	w       *Workload
	cq      *ClusterQueueState
	lca     *node // the simulation's subtree root it was found under
	variant variant
	// evicted, priority and reserved are w's, read once for order.
	evicted  bool
	priority int32
	reserved time.Time
}

// preemptCtx is one search for targets.
type preemptCtx struct {
	s        *sim
	cq       *ClusterQueueState
	sub      *Subject
	need     map[FlavorResource]bool
	requests map[FlavorResource]int64
	policy   Preemption
	// now is when the search runs (a Workload not reserved is reserved now).
	now time.Time
}

// targets is Preemptor.getTargets (classical): the Workloads to evict so
// that requests fit in cq, nil when no set does.
func (s *sim) targets(cq *ClusterQueueState, sub *Subject, need map[FlavorResource]bool, requests map[FlavorResource]int64) []Target {
	c := &preemptCtx{s: s, cq: cq, sub: sub, need: need, requests: requests, policy: cq.preemption(), now: time.Now()}
	same := c.sameQueueCandidates()
	hier, prio := c.cohortCandidates()
	for _, l := range [][]*candidate{same, hier, prio} {
		slices.SortFunc(l, c.order)
	}
	var all []*candidate
	evicted := func(l []*candidate) ([]*candidate, []*candidate) {
		i := 0
		for i < len(l) && l[i].w.evicted() {
			i++
		}
		return l[:i], l[i:]
	}
	eh, nh := evicted(hier)
	ep, np := evicted(prio)
	es, ns := evicted(same)
	all = append(append(append(append(append(append(all, eh...), ep...), es...), nh...), np...), ns...)

	forbidden := c.policy.borrowWithinCohortForbidden()
	var attempts []bool
	switch {
	case len(hier)+len(prio) == 0 || (forbidden && !c.underNominal()):
		attempts = []bool{true}
	case forbidden && len(hier) == 0:
		attempts = []bool{false, true}
	default:
		attempts = []bool{true, false}
	}
	for _, borrow := range attempts {
		var picked []*candidate
		for _, cand := range all {
			if !c.valid(cand, borrow) {
				continue
			}
			s.remove(cand.w)
			picked = append(picked, cand)
			if c.fits(borrow) {
				picked = c.fillBack(picked, borrow)
				for _, p := range picked {
					s.add(p.w)
				}
				out := make([]Target, len(picked))
				for i, p := range picked {
					out[i] = Target{Workload: p.w, Reason: p.variant.reason()}
				}
				return out
			}
		}
		for _, p := range picked {
			s.add(p.w)
		}
	}
	return nil
}

// fillBack puts back every target but the last one removed that the
// workload does not need (fillBackWorkloads).
func (c *preemptCtx) fillBack(picked []*candidate, borrow bool) []*candidate {
	for i := len(picked) - 2; i >= 0; i-- {
		c.s.add(picked[i].w)
		if c.fits(borrow) {
			picked[i] = picked[len(picked)-1]
			picked = picked[:len(picked)-1]
		} else {
			c.s.remove(picked[i].w)
		}
	}
	return picked
}

// fits is workloadFits: every request fits what is available, within
// the nominal quota unless borrowing is allowed.
func (c *preemptCtx) fits(borrow bool) bool {
	n := c.s.node(c.cq)
	for fr, v := range c.requests {
		if !borrow && n.borrowingWith(fr, v) {
			return false
		}
		if v > max(0, n.available(fr)) {
			return false
		}
	}
	return true
}

// underNominal: the ClusterQueue uses less than its nominal quota of every
// resource that needs preemption (queueUnderNominalInResourcesNeedingPreemption).
func (c *preemptCtx) underNominal() bool {
	n := c.s.node(c.cq)
	for fr := range c.need {
		if n.usage[fr] >= n.quotas[fr].nominal {
			return false
		}
	}
	return true
}

// valid is candidateIterator.candidateIsValid, on the simulation as it is.
func (c *preemptCtx) valid(cand *candidate, borrow bool) bool {
	if c.s.removed[cand.w] {
		return false
	}
	if cand.cq == c.cq {
		return true
	}
	if borrow && cand.variant == reclaimWithoutBorrowing {
		return false
	}
	n := c.s.node(cand.cq)
	if n.withinNominal(c.need) {
		return false
	}
	for p := n.parent; p != nil && p != cand.lca; p = p.parent {
		if p.withinNominal(c.need) {
			return false
		}
	}
	return true
}

// order is CandidatesOrdering: evicted first, other ClusterQueues' first,
// lower priority, the most recent quota reservation, then UID.
func (c *preemptCtx) order(a, b *candidate) int {
	return cmp.Or(compareBool(b.evicted, a.evicted),
		compareBool(a.cq == c.cq, b.cq == c.cq),
		cmp.Compare(a.priority, b.priority),
		b.reserved.Compare(a.reserved),
		cmp.Compare(a.w.UID, b.w.UID))
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

func (w *Workload) evicted() bool { return w.conditionTrue(ConditionEvicted) }

// reservedAt is when the Workload's quota was reserved (now when not).
func (w *Workload) reservedAt(now time.Time) time.Time {
	if c := w.Condition(ConditionQuotaReserved); c != nil && c.Status == metav1.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	return now
}

// sameQueueCandidates (collectSameQueueCandidates).
func (c *preemptCtx) sameQueueCandidates() []*candidate {
	if c.policy.WithinClusterQueue == "Never" {
		return nil
	}
	return c.fromQueue(c.cq, nil, false)
}

// fromQueue are the candidates of one ClusterQueue (getCandidatesFromCQ).
func (c *preemptCtx) fromQueue(cq *ClusterQueueState, lca *node, advantage bool) []*candidate {
	var out []*candidate
	for _, w := range c.s.admitted(cq) {
		if c.s.removed[w] {
			continue
		}
		if v := c.classify(cq, w, advantage); v != never {
			out = append(out, &candidate{w: w, cq: cq, lca: lca, variant: v, evicted: w.evicted(), priority: w.Priority(), reserved: w.reservedAt(c.now)})
		}
	}
	return out
}

// classify is classifyPreemptionVariant.
func (c *preemptCtx) classify(cq *ClusterQueueState, w *Workload, advantage bool) variant {
	if !c.usesNeeded(w) {
		return never
	}
	policy := c.policy.ReclaimWithinCohort
	if cq == c.cq {
		policy = c.policy.WithinClusterQueue
	}
	if !c.satisfies(w, policy) {
		return never
	}
	switch {
	case cq == c.cq:
		return withinCQ
	case advantage:
		return hierarchicalReclaim
	case c.policy.borrowWithinCohortForbidden():
		return reclaimWithoutBorrowing
	}
	if w.Priority() >= c.sub.Priority {
		return reclaimWithoutBorrowing
	}
	if t := c.policy.BorrowWithinCohort.MaxPriorityThreshold; t != nil && w.Priority() > *t {
		return reclaimWithoutBorrowing
	}
	return reclaimWhileBorrowing
}

// usesNeeded: the Workload holds a flavor-resource that needs preemption
// (WorkloadUsesResources).
func (c *preemptCtx) usesNeeded(w *Workload) bool {
	for _, psa := range w.Status.Admission.PodSetAssignments {
		for res, f := range psa.Flavors {
			if c.need[FlavorResource{f, res}] {
				return true
			}
		}
	}
	return false
}

// satisfies is SatisfiesPreemptionPolicy.
func (c *preemptCtx) satisfies(w *Workload, policy string) bool {
	lower := c.sub.Priority > w.Priority()
	switch policy {
	case "LowerPriority":
		return lower
	case "LowerOrNewerEqualPriority":
		return lower || (c.sub.Priority == w.Priority() && c.sub.QueueTime.Before(w.QueueTime()))
	case "Any":
		return true
	}
	return false
}

// cohortCandidates are the other ClusterQueues' candidates, those over
// which the workload has a hierarchical advantage and the others
// (collectCandidatesForHierarchicalReclaim).
func (c *preemptCtx) cohortCandidates() (hier, prio []*candidate) {
	n := c.s.node(c.cq)
	if n.parent == nil || c.policy.ReclaimWithinCohort == "Never" {
		return nil, nil
	}
	advantage, remaining := n.fitInQuota(c.requests)
	var previous *node
	for cur := n.parent; cur != nil; cur = cur.parent {
		list := &prio
		if advantage {
			list = &hier
		}
		c.inSubtree(cur, cur, previous, advantage, list)
		var fits bool
		fits, remaining = cur.fitInQuota(remaining)
		advantage = advantage || fits
		previous = cur
	}
	return hier, prio
}

// inSubtree is collectCandidatesInSubtree.
func (c *preemptCtx) inSubtree(cur, root, skip *node, advantage bool, out *[]*candidate) {
	for _, child := range cur.children {
		if !child.isCohort || child == skip || child.withinNominal(c.need) {
			continue
		}
		c.inSubtree(child, root, skip, advantage, out)
	}
	for _, child := range cur.children {
		if child.isCohort || child == c.s.node(c.cq) || child.withinNominal(c.need) {
			continue
		}
		*out = append(*out, c.fromQueue(c.s.m.ClusterQueues[child.name], root, advantage)...)
	}
}

// fitInQuota is QuantitiesFitInQuota: whether requests fit the node's
// quota, and what is left of them past its local quota.
func (n *node) fitInQuota(requests map[FlavorResource]int64) (bool, map[FlavorResource]int64) {
	fits := true
	remaining := make(map[FlavorResource]int64, len(requests))
	for fr, v := range requests {
		if n.usage[fr]+v > n.subtree[fr] {
			fits = false
		}
		remaining[fr] = max(0, v-n.localAvailable(fr))
	}
	return fits, remaining
}
