package quota

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Decision is Kueue's decision on one Subject: whether its scheduler
// reserves quota for it, where, and at whose expense.
type Decision struct {
	ClusterQueue string
	// Admitted: Kueue reserves quota for the workload, at once or, when
	// Preempts is not empty, once those Workloads are evicted.
	Admitted bool
	Preempts []Target
	// Reason and Message are the Workload's QuotaReserved=False condition
	// as Kueue writes it when it does not admit it ("Pending" from its
	// scheduler, "Inadmissible" from its workload controller); Message is
	// also the pending-preemption message when Preempts is set.
	Reason, Message string
	// Detail says more for people, in our words ("" when the message says
	// it all).
	Detail string
	// PodSets are the flavors assigned (status.admission's
	// podSetAssignments), for an admitted workload.
	PodSets []PodSetDecision
	// Borrows says what is borrowed and from which cohort, per flavor and
	// resource.
	Borrows []string
	// NotEvaluated says what of Kueue's rules could not be evaluated.
	NotEvaluated []string
	// Behind is the Workload at the head of a StrictFIFO ClusterQueue that
	// the workload waits behind; nil otherwise.
	Behind *Workload
	// Short are, for a refusal for quota, what the workload lacks in each
	// flavor its pod sets may use, in the ClusterQueue's order.
	Short []Shortfall
	// FirstInLine says, of a refusal for quota (Queue), that the model as
	// it is would admit it: it waits for those before it.
	FirstInLine bool
}

// Shortfall is what a workload lacks of one resource in one flavor.
type Shortfall struct {
	FlavorResource
	// Need is what the workload asks, Available what the ClusterQueue
	// may still take (its borrowing counted), Nominal its nominal quota.
	Need, Available, Nominal int64
	// BorrowingLimit is the ClusterQueue's, nil when it sets none or has
	// no cohort to borrow from; CohortFree is what its cohort tree could
	// still lend it were the limit no bound (potentialAvailable past the
	// limit, Available when none is set).
	BorrowingLimit *int64
	CohortFree     int64
	// Holders are the Workloads holding the ClusterQueue's quota of it,
	// the most first.
	Holders []Holder
}

// Holder is a Workload holding quota, and how much of one resource.
type Holder struct {
	Workload *Workload
	Uses     int64
}

// PodSetDecision is one pod set's admission.
type PodSetDecision struct {
	Name    string
	Count   int32
	Flavors map[corev1.ResourceName]string
	Usage   corev1.ResourceList
}

// PerPod are the requests of one pod of spec as Kueue counts them
// (workload.totalRequestsFromPodSets after AdjustResources): a limit
// stands for a missing request, init containers and sidecars as
// kube-scheduler counts them, plus overhead; in Kueue's units.
func PerPod(spec *corev1.PodSpec) map[corev1.ResourceName]int64 {
	pod := &corev1.Pod{Spec: *spec.DeepCopy()}
	fill := func(cs []corev1.Container) {
		for i := range cs {
			for name, q := range cs[i].Resources.Limits {
				if _, ok := cs[i].Resources.Requests[name]; !ok {
					if cs[i].Resources.Requests == nil {
						cs[i].Resources.Requests = corev1.ResourceList{}
					}
					cs[i].Resources.Requests[name] = q
				}
			}
		}
	}
	fill(pod.Spec.Containers)
	fill(pod.Spec.InitContainers)
	out := map[corev1.ResourceName]int64{}
	for name, q := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
		out[name] = value(name, q)
	}
	return out
}

// SubjectOf is a Workload of the snapshot as a Subject: its pod sets as
// its spec has them.
func SubjectOf(w *Workload) *Subject {
	if w.memo == nil {
		return subjectOf(w)
	}
	// Made once: the queue asks for every pending Workload many times.
	w.memo.once.Do(func() { w.memo.sub = subjectOf(w) })
	c := *w.memo.sub
	c.Self = w
	return &c
}

func subjectOf(w *Workload) *Subject {
	sub := &Subject{Namespace: w.Namespace, Name: w.Name, UID: string(w.UID), Queue: w.Spec.QueueName,
		Priority: w.Priority(), QueueTime: w.QueueTime(), Self: w}
	for i := range w.Spec.PodSets {
		ps := &w.Spec.PodSets[i]
		min := ps.Count
		if ps.MinCount != nil {
			min = *ps.MinCount
		}
		spec := ps.Spec()
		sub.PodSets = append(sub.PodSets, SubjectPodSet{Name: ps.Name, Count: ps.Count, MinCount: min,
			Spec: spec, PerPod: PerPod(spec)})
	}
	return sub
}

// ahead reports whether w comes before sub in its ClusterQueue's queue.
func (sub *Subject) ahead(w *Workload) bool {
	if w.Priority() != sub.Priority {
		return w.Priority() > sub.Priority
	}
	if !w.QueueTime().Equal(sub.QueueTime) {
		return w.QueueTime().Before(sub.QueueTime)
	}
	return sub.UID != "" && string(w.UID) < sub.UID
}

// Admit decides sub as Kueue v0.17.0 would on the model: its LocalQueue and
// ClusterQueue, the pending Workloads ahead of it in that ClusterQueue's
// queue (a StrictFIFO queue waits behind its head), the flavors, and the
// preemptions (docs/design.md#kueue).
func (m *Model) Admit(sub *Subject) Decision {
	if w := sub.Self; w != nil && !w.Pending() {
		return m.settled(w)
	}
	cq, d, ok := m.precheck(sub)
	if !ok {
		return d
	}
	if w := sub.Self; w != nil {
		if why := w.backoff(m.now); why != "" {
			d.Reason, d.Message = "Backoff", why
			return d
		}
	}
	s := m.newSim()
	// The Workloads ahead in the queue go first: those that fit (or fit
	// partly) take their quota; one that preempts is popped every cycle
	// until it is admitted (the sticky head of a BestEffortFIFO queue), so
	// it takes its quota once its targets are gone; in a StrictFIFO queue
	// the first that does not fit holds every one behind it.
	for _, w := range cq.Pending {
		if w == sub.Self || !sub.ahead(w) {
			continue
		}
		ahead := &assigner{s: s, cq: cq, sub: SubjectOf(w)}
		a, targets := ahead.decide()
		switch {
		case a.mode() == fit && len(targets) == 0:
			s.addUsage(cq, a.usage)
			continue
		case len(targets) > 0:
			// Kueue pops it every cycle until its targets are gone and it
			// is admitted; then the queue moves on.
			for _, t := range targets {
				s.remove(t.Workload)
			}
			s.addUsage(cq, a.usage)
			continue
		case cq.Strategy() == "StrictFIFO":
			d.Behind = w
			d.Reason, d.Message = "Pending", fmt.Sprintf("waiting behind Workload %s/%s at the head of StrictFIFO ClusterQueue %s", w.Namespace, w.Name, cq.Name)
			d.Detail = "Kueue pops the head of a StrictFIFO queue until it is admitted; it is not: " + a.Message()
			return d
		}
	}
	if m.fairSharing[cq.node.root()] && cq.node.parent != nil {
		// Kueue's Configuration (not in the API) says whether it runs fair
		// sharing; with it, heads are ordered and preemption chosen by
		// dominant resource share, which is not modelled.
		d.NotEvaluated = append(d.NotEvaluated, fmt.Sprintf("ClusterQueue %s's cohort sets fairSharing: where Kueue's configuration enables fair sharing, its ordering and preemption by share are not evaluated (classical rules are used)", cq.Name))
	}
	as := &assigner{s: s, cq: cq, sub: sub}
	// The heads of the cohort's other StrictFIFO queues come up every
	// cycle: those ordered before this workload take their quota first.
	m.cycle(s, as, false)
	a, targets := as.decide()
	if len(targets) > 0 {
		// Once the targets are gone, the quota they held is there for every
		// queue of the cohort: their parked workloads are queued again, and
		// those ordered before this one take it first (then it tries again).
		for _, t := range targets {
			s.remove(t.Workload)
		}
		m.cycle(s, as, true)
		var more []Target
		if a, more = as.decide(); a.mode() == fit || len(more) > 0 {
			targets = append(targets, more...)
		} else {
			targets = nil
		}
	}
	if !d.decided(as, a, targets) {
		return d
	}
	d.PodSets, d.Borrows = m.describe(s, cq, a)
	d.NotEvaluated = append(d.NotEvaluated, m.checksFor(cq, a)...)
	return d
}

// precheck is what Kueue decides of sub before its quota: its LocalQueue
// and ClusterQueue exist and are active, the ClusterQueue selects its
// namespace; ok false with the refusal. d carries the ClusterQueue and
// what is not evaluated.
func (m *Model) precheck(sub *Subject) (cq *ClusterQueueState, d Decision, ok bool) {
	if sub.Queue == "" {
		// No queue manager takes it up: it waits for ever.
		return nil, Decision{Reason: "Inadmissible", Message: "the Workload names no LocalQueue (spec.queueName is empty)"}, false
	}
	lqKey := sub.Namespace + "/" + sub.Queue
	lq := m.LocalQueues[lqKey]
	if lq == nil {
		return nil, Decision{Reason: "Inadmissible", Message: fmt.Sprintf("LocalQueue %s doesn't exist", sub.Queue)}, false
	}
	if p := lq.Spec.StopPolicy; p != nil && *p != StopNone {
		return nil, Decision{Reason: "Inadmissible", Message: fmt.Sprintf("LocalQueue %s is inactive", sub.Queue),
			Detail: fmt.Sprintf("its stopPolicy is %s", *p)}, false
	}
	cq = m.ClusterQueues[lq.Spec.ClusterQueue]
	if cq == nil {
		return nil, Decision{ClusterQueue: lq.Spec.ClusterQueue, Reason: "Inadmissible", Message: fmt.Sprintf("ClusterQueue %s doesn't exist", lq.Spec.ClusterQueue)}, false
	}
	d = Decision{ClusterQueue: cq.Name}
	if cq.Inactive != "" {
		d.Reason, d.Message, d.Detail = "Inadmissible", fmt.Sprintf("ClusterQueue %s is inactive", cq.Name), cq.Inactive
		return nil, d, false
	}
	switch matches, known := m.MatchesNamespace(cq, sub.Namespace); {
	case !known:
		d.NotEvaluated = append(d.NotEvaluated, fmt.Sprintf("ClusterQueue %s's namespaceSelector: the labels of namespace %s are not in the snapshot", cq.Name, sub.Namespace))
	case !matches:
		d.Reason, d.Message = "Pending", "Workload namespace doesn't match ClusterQueue selector"
		return nil, d, false
	}
	for _, rg := range cq.Spec.ResourceGroups {
		for _, f := range rg.Flavors {
			if rf := m.Flavors[f.Name]; rf != nil && rf.Spec.TopologyName != nil {
				d.NotEvaluated = append(d.NotEvaluated, fmt.Sprintf("flavor %s of ClusterQueue %s uses topology-aware scheduling (Topology %s), which is not evaluated", f.Name, cq.Name, *rf.Spec.TopologyName))
			}
		}
	}
	return cq, d, true
}

// decided words the decision on as's workload, given its assignment a and
// the targets it preempts: admitted at once, after those preemptions, or
// not (Kueue's message, what it lacks); it reports whether admitted.
func (d *Decision) decided(as *assigner, a *Assignment, targets []Target) bool {
	switch {
	case a.mode() == fit && len(targets) == 0:
		d.Admitted = true
	case len(targets) > 0:
		d.Admitted, d.Preempts = true, targets
		slices.SortFunc(d.Preempts, func(x, y Target) int {
			return strings.Compare(x.Workload.Namespace+"/"+x.Workload.Name, y.Workload.Namespace+"/"+y.Workload.Name)
		})
		d.Message = fmt.Sprintf("%s. Pending the preemption of %d workload(s)", as.first.Message(), len(targets))
	default:
		d.Reason, d.Message = "Pending", a.Message()
		d.Short = as.shortfalls()
	}
	return d.Admitted
}

// partial is the partial admission search (PodSetReducer.Search): the
// largest counts, shrunk in proportion toward the pod sets' minCounts, that
// fit or fit after preemption.
func (a *assigner) partial() (*Assignment, []Target, bool) {
	var deltas []int64
	total := int64(0)
	for _, ps := range a.sub.PodSets {
		d := int64(ps.Count - ps.MinCount)
		deltas = append(deltas, d)
		total += d
	}
	if total == 0 {
		return nil, nil, false
	}
	var last *Assignment
	var lastTargets []Target
	lastGood := int64(-1)
	counts := func(k int64) []int32 {
		out := make([]int32, len(deltas))
		for i, ps := range a.sub.PodSets {
			out[i] = ps.Count - int32(deltas[i]*k/total)
		}
		return out
	}
	idx := sort.Search(int(total)+1, func(k int) bool {
		as := a.assign(counts(int64(k)))
		var t []Target
		ok := as.mode() == fit
		if !ok && as.mode().preempts() {
			t = a.s.targets(a.cq, a.sub, as.needPreemption(), as.usage)
			ok = len(t) > 0
		}
		if ok {
			lastGood, last, lastTargets = int64(k), as, t
		}
		return ok
	})
	if int64(idx) != lastGood {
		return nil, nil, false
	}
	return last, lastTargets, true
}

// describe is the admission's pod sets (Assignment.ToAPI) and what it
// borrows.
func (m *Model) describe(s *sim, cq *ClusterQueueState, a *Assignment) ([]PodSetDecision, []string) {
	var out []PodSetDecision
	for _, p := range a.podSets {
		ps := PodSetDecision{Name: p.name, Count: p.count, Flavors: map[corev1.ResourceName]string{}, Usage: corev1.ResourceList{}}
		for res, f := range p.flavors {
			ps.Flavors[res] = f.name
			ps.Usage[res] = Quantity(res, p.requests[res])
		}
		out = append(out, ps)
	}
	n := s.node(cq)
	var borrows []string
	for _, fr := range sortedFRs(a.usage) {
		v := a.usage[fr]
		if !n.borrowingWith(fr, v) {
			continue
		}
		over := n.usage[fr] + v - n.quotas[fr].nominal
		from := "its cohort"
		if n.parent != nil {
			from = "cohort " + n.parent.name
		}
		borrows = append(borrows, fmt.Sprintf("%s of %s in flavor %s from %s (nominal quota %s, in use %s)",
			qstr(fr.Resource, over), fr.Resource, fr.Flavor, from, qstr(fr.Resource, n.quotas[fr].nominal), qstr(fr.Resource, n.usage[fr])))
	}
	return out, borrows
}

func sortedFRs(m map[FlavorResource]int64) []FlavorResource {
	out := make([]FlavorResource, 0, len(m))
	for fr := range m {
		out = append(out, fr)
	}
	slices.SortFunc(out, func(a, b FlavorResource) int {
		if a.Flavor != b.Flavor {
			return strings.Compare(a.Flavor, b.Flavor)
		}
		return strings.Compare(string(a.Resource), string(b.Resource))
	})
	return out
}

// checksFor are the admission checks the admission waits for
// (AdmissionChecksForWorkload): Kueue reserves quota, then admits only
// once each is Ready, which the snapshot cannot tell.
func (m *Model) checksFor(cq *ClusterQueueState, a *Assignment) []string {
	s := cq.Spec.AdmissionChecksStrategy
	if s == nil {
		return nil
	}
	used := map[string]bool{}
	for _, p := range a.podSets {
		for _, f := range p.flavors {
			used[f.name] = true
		}
	}
	var out []string
	for _, c := range s.AdmissionChecks {
		applies := len(c.OnFlavors) == 0
		for _, f := range c.OnFlavors {
			applies = applies || used[f]
		}
		if applies {
			out = append(out, fmt.Sprintf("admission check %s of ClusterQueue %s: Kueue reserves the quota, then admits the workload only once the check is Ready, which is not evaluated", c.Name, cq.Name))
		}
	}
	return out
}

var _ = resource.Quantity{}

// decide is the assignment of a scheduling cycle's entry
// (getInitialAssignments): the full counts, then the targets when it
// needs preemption, then partial admission when neither fits. The first
// assignment decided is kept for the pending-preemption message.
func (a *assigner) decide() (*Assignment, []Target) {
	as := a.assign(nil)
	var targets []Target
	if as.mode().preempts() {
		targets = a.s.targets(a.cq, a.sub, as.needPreemption(), as.usage)
	}
	if as.mode() != fit && len(targets) == 0 {
		if pa, pt, ok := a.partial(); ok {
			as, targets = pa, pt
		}
	}
	if a.first == nil {
		a.first = as
	}
	return as, targets
}

// entry is one head of a scheduling cycle.
type entry struct {
	w       *Workload
	sub     *Subject
	cq      *ClusterQueueState
	a       *Assignment
	targets []Target
}

// cycle lets the heads of the cohort tree's other ClusterQueues that Kueue
// orders before the workload of a (makeClassicalIterator: less borrowing,
// then higher priority, then older) act first on s: one that fits takes
// its quota; one that needs preemption without candidates reserves what
// it may (quotaResourcesToReserve) unless its queue reclaims from Any.
// all says every queue has a head (the parked workloads were queued
// again); otherwise only StrictFIFO queues do, their head popped every
// cycle.
func (m *Model) cycle(s *sim, a *assigner, all bool) {
	root := a.cq.node.root()
	if !root.isCohort {
		return
	}
	var entries []entry
	for _, name := range slices.Sorted(maps.Keys(m.ClusterQueues)) {
		c := m.ClusterQueues[name]
		if c == a.cq || c.Inactive != "" || c.node.root() != root {
			continue
		}
		for _, w := range m.pendingIn(s, c) {
			if w == a.sub.Self || s.charged[w] {
				continue
			}
			if ok, known := m.MatchesNamespace(c, w.Namespace); !ok && known {
				break
			}
			hs := SubjectOf(w)
			ha := &assigner{s: s, cq: c, sub: hs}
			e := entry{w: w, sub: hs, cq: c, a: ha.assign(nil)}
			if e.a.mode().preempts() {
				e.targets = s.targets(c, hs, e.a.needPreemption(), e.a.usage)
			}
			// Parked workloads are no heads until quota is freed; a
			// StrictFIFO queue's head and a preempting (sticky) one are.
			if all || c.Strategy() == "StrictFIFO" || len(e.targets) > 0 {
				entries = append(entries, e)
			}
			break
		}
	}
	if len(entries) == 0 {
		return
	}
	mine := a.assign(nil)
	before := func(e entry) bool {
		if e.a.borrow != mine.borrow {
			return e.a.borrow < mine.borrow
		}
		if e.sub.Priority != a.sub.Priority {
			return e.sub.Priority > a.sub.Priority
		}
		if !e.sub.QueueTime.Equal(a.sub.QueueTime) {
			return e.sub.QueueTime.Before(a.sub.QueueTime)
		}
		return a.sub.UID != "" && e.sub.UID < a.sub.UID
	}
	slices.SortStableFunc(entries, func(x, y entry) int {
		return cmp.Or(cmp.Compare(x.a.borrow, y.a.borrow), cmp.Compare(y.sub.Priority, x.sub.Priority), x.sub.QueueTime.Compare(y.sub.QueueTime))
	})
	for _, e := range entries {
		if !before(e) {
			break
		}
		switch m := e.a.mode(); {
		case m == fit:
			if s.fits(e.cq, e.a.usage) {
				s.addUsage(e.cq, e.a.usage)
				s.charged[e.w] = true
			}
		case len(e.targets) > 0:
			// Its fit is checked with its targets gone, and its usage
			// added whatever they hold (scheduler.go schedule, fits).
			for _, t := range e.targets {
				s.remove(t.Workload)
			}
			ok := s.fits(e.cq, e.a.usage)
			for _, t := range e.targets {
				s.add(t.Workload)
			}
			if ok {
				s.addUsage(e.cq, e.a.usage)
				s.charged[e.w] = true
			}
		case m.preempts() && e.cq.preemption().ReclaimWithinCohort != "Any":
			s.addUsage(e.cq, s.reserve(e.cq, e.a))
			s.charged[e.w] = true
		}
	}
}

// pendingIn are the Workloads waiting in c's queue on s, in Kueue's order:
// the pending ones and the ones s evicted.
func (m *Model) pendingIn(s *sim, c *ClusterQueueState) []*Workload {
	out := slices.Clone(c.Pending)
	for _, w := range c.Admitted {
		if s.removed[w] {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, QueueOrder)
	return out
}

// fits is ClusterQueueSnapshot.Fits: every flavor-resource of usage is
// available.
func (s *sim) fits(cq *ClusterQueueState, usage map[FlavorResource]int64) bool {
	n := s.node(cq)
	for fr, v := range usage {
		if max(0, n.available(fr)) < v {
			return false
		}
	}
	return true
}

// reserve is what a head that needs preemption but has no candidates
// holds back for the rest of a cycle (quotaResourcesToReserve): within its
// nominal quota, or up to its borrowing limit when it borrows.
func (s *sim) reserve(cq *ClusterQueueState, a *Assignment) map[FlavorResource]int64 {
	n := s.node(cq)
	out := map[FlavorResource]int64{}
	for fr, v := range a.usage {
		q := n.quotas[fr]
		switch {
		case a.borrow > 0 && q.borrowing == nil:
			out[fr] = v
		case a.borrow > 0:
			out[fr] = min(v, q.nominal+*q.borrowing-n.usage[fr])
		default:
			out[fr] = max(0, min(v, q.nominal-n.usage[fr]))
		}
	}
	return out
}

// shortfalls are what the subject lacks in each flavor its pod sets may
// use (checkFlavor), at full counts, on the simulation as it is.
func (a *assigner) shortfalls() []Shortfall {
	total := map[corev1.ResourceName]int64{}
	for _, ps := range a.sub.PodSets {
		for r, v := range ps.PerPod {
			total[r] += v * int64(ps.Count)
		}
		if a.cq.resourceGroup(corev1.ResourcePods) != nil {
			total[corev1.ResourcePods] += int64(ps.Count)
		}
	}
	n := a.s.node(a.cq)
	var out []Shortfall
	for _, rg := range a.cq.Spec.ResourceGroups {
		for _, fq := range rg.Flavors {
			usable := true
			for i := range a.sub.PodSets {
				spec := a.sub.PodSets[i].Spec
				if a.checkFlavor(fq.Name, spec, flavorSelector(spec, a.labelKeys(&rg))) != "" {
					usable = false
				}
			}
			if !usable {
				continue
			}
			for _, r := range rg.CoveredResources {
				need, ok := total[r]
				if !ok || need == 0 {
					continue
				}
				fr := FlavorResource{fq.Name, r}
				avail := max(0, n.available(fr))
				if need <= avail {
					continue
				}
				sf := Shortfall{FlavorResource: fr, Need: need, Available: avail, Nominal: n.quotas[fr].nominal, CohortFree: avail}
				if q := n.quotas[fr]; q.borrowing != nil && n.parent != nil {
					l := *q.borrowing
					sf.BorrowingLimit = &l
					sf.CohortFree = max(0, n.availableUnbounded(fr))
				}
				for _, w := range a.s.admitted(a.cq) {
					if u := a.s.usageOf(w); u[fr] > 0 && !a.s.removed[w] {
						sf.Holders = append(sf.Holders, Holder{Workload: w, Uses: u[fr]})
					}
				}
				slices.SortStableFunc(sf.Holders, func(x, y Holder) int { return cmp.Compare(y.Uses, x.Uses) })
				out = append(out, sf)
			}
		}
	}
	return out
}

// WithPriority decides sub again as if it had priority p.
func (m *Model) WithPriority(sub *Subject, p int32) Decision {
	c := *sub
	c.Priority = p
	return m.Admit(&c)
}

// settled is the decision on a Workload Kueue has decided already: it
// holds quota (admitted, or reserved and waiting for its admission
// checks), or it is finished or deactivated and Kueue admits it no more.
func (m *Model) settled(w *Workload) Decision {
	switch {
	case w.HoldsQuota():
		d := Decision{ClusterQueue: w.Status.Admission.ClusterQueue, Admitted: true}
		for _, psa := range w.Status.Admission.PodSetAssignments {
			d.PodSets = append(d.PodSets, PodSetDecision{Name: psa.Name, Count: w.podSetCount(psa), Flavors: psa.Flavors, Usage: psa.ResourceUsage})
		}
		if !w.conditionTrue(ConditionAdmitted) {
			d.NotEvaluated = append(d.NotEvaluated, fmt.Sprintf("Workload %s/%s holds quota in ClusterQueue %s and waits for its admission checks, which are not evaluated", w.Namespace, w.Name, d.ClusterQueue))
		}
		return d
	case w.IsFinished():
		return Decision{Reason: "Finished", Message: fmt.Sprintf("Workload %s/%s is finished: Kueue admits it no more", w.Namespace, w.Name)}
	}
	return Decision{Reason: "Inactive", Message: fmt.Sprintf("Workload %s/%s is deactivated (spec.active: false): Kueue admits it no more", w.Namespace, w.Name)}
}
