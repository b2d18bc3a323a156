package quota

import (
	"cmp"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Queue is Kueue's decision on every pending Workload of the model, taken
// one after another in QueueOrder over every ClusterQueue (priority, then
// the time it was queued, then UID, as a ClusterQueue orders its own) on
// one simulation:
// each is decided on what those before it left, as Admit decides a
// Workload (its flavors, partial admission, preemption within its
// ClusterQueue and reclaim in its cohort), and one admitted holds its
// quota (and may be preempted) for those after it. A StrictFIFO queue
// whose head is not admitted holds the rest behind it; a BestEffortFIFO
// queue passes over it (Kueue parks it as inadmissible). Made once per
// model (docs/design.md#kueue).
//
// Where Kueue's cycles may differ from one pass, the decision says so in
// NotEvaluated (never a plain yes): Kueue takes one head per ClusterQueue
// a cycle, those that borrow less first (makeClassicalIterator), so one
// that borrows may lose its quota to one queued after it; one admitted
// here may be evicted by one queued after it, which Kueue may have tried
// first; and once a preemption frees quota, Workloads parked before it
// may be queued again and take it first.
func (m *Model) Queue() map[*Workload]Decision {
	m.queueOnce.Do(func() { m.queue = m.decideQueue() })
	return m.queue
}

// QueueOrderOf orders pending Workloads over every ClusterQueue as Queue
// takes them.
func QueueOrderOf(a, b *Workload) int {
	return cmp.Or(QueueOrder(a, b), strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

func (m *Model) decideQueue() map[*Workload]Decision {
	var order []*Workload
	for _, w := range m.ordered {
		if w.Pending() {
			order = append(order, w)
		}
	}
	slices.SortStableFunc(order, QueueOrderOf)
	out := make(map[*Workload]Decision, len(order))
	// The cohort trees share no quota: each is decided on its own, at
	// once, in the order above.
	trees := map[*node][]*Workload{}
	var roots []*node
	for _, w := range order {
		cq, d, ok := m.precheck(SubjectOf(w))
		if !ok {
			out[w] = d
			continue
		}
		r := cq.node.root()
		if trees[r] == nil {
			roots = append(roots, r)
		}
		trees[r] = append(trees[r], w)
	}
	results := make([]map[*Workload]Decision, len(roots))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, r := range roots {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = m.decideTree(trees[r])
		})
	}
	wg.Wait()
	for _, r := range results {
		maps.Copy(out, r)
	}
	return out
}

// decideTree is decideQueue for the pending Workloads of one cohort tree,
// in order, whose LocalQueue and ClusterQueue admit them (precheck).
func (m *Model) decideTree(order []*Workload) map[*Workload]Decision {
	out := make(map[*Workload]Decision, len(order))
	// s is the queue as the Workloads decided so far leave it; first, the
	// model as it is, for whether one refused would be admitted first in
	// line.
	s, first := m.newSim(), m.newSim()
	s.extra, s.extraUsage = map[*ClusterQueueState][]*Workload{}, map[*Workload]map[FlavorResource]int64{}
	head := map[*ClusterQueueState]*Workload{}
	// parked are the cohort trees (by root) and the ClusterQueues where a
	// Workload was refused and parked.
	parked, parkedIn := map[*node]bool{}, map[*ClusterQueueState]bool{}
	now := time.Now()
	// origin is the Workload each one the pass admitted stands for.
	origin := map[*Workload]*Workload{}
	for i, w := range order {
		sub := SubjectOf(w)
		cq, d, _ := m.precheck(sub)
		if why := w.backoff(m.now); why != "" {
			// In no queue yet: no head, taking nothing.
			d.Reason, d.Message = "Backoff", why
			out[w] = d
			continue
		}
		if h := head[cq]; h != nil {
			d.Behind = h
			d.Reason, d.Message = "Pending", fmt.Sprintf("waiting behind Workload %s/%s at the head of StrictFIFO ClusterQueue %s", h.Namespace, h.Name, cq.Name)
			d.Detail = "Kueue pops the head of a StrictFIFO queue until it is admitted; it is not"
			out[w] = d
			continue
		}
		if m.fairSharing[cq.node.root()] && cq.node.parent != nil {
			d.NotEvaluated = append(d.NotEvaluated, fmt.Sprintf("ClusterQueue %s's cohort sets fairSharing: where Kueue's configuration enables fair sharing, its ordering and preemption by share are not evaluated (classical rules are used)", cq.Name))
		}
		as := &assigner{s: s, cq: cq, sub: sub}
		a, targets := as.decide()
		if !d.decided(as, a, targets) {
			if cq.Strategy() == "StrictFIFO" {
				head[cq] = w
			}
			// Parked (or, a StrictFIFO head, tried every cycle): once
			// quota is freed it may take it before those after it.
			parked[cq.node.root()], parkedIn[cq] = true, true
			fa, ft := (&assigner{s: first, cq: cq, sub: sub}).decide()
			d.FirstInLine = fa.mode() == fit || len(ft) > 0
			out[w] = d
			continue
		}
		for _, t := range targets {
			s.remove(t.Workload)
			if o := origin[t.Workload]; o != nil {
				// Admitted before it in this pass, evicted for it: Kueue
				// may as well have tried this one first.
				od := out[o]
				od.NotEvaluated = append(od.NotEvaluated, fmt.Sprintf("Workload %s/%s, queued after it, is admitted by evicting it, and Kueue may try that one first: not evaluated", w.Namespace, w.Name))
				out[o] = od
			}
		}
		d.PodSets, d.Borrows = m.describe(s, cq, a)
		if len(d.Borrows) > 0 && i < len(order)-1 {
			// Kueue takes the heads of a cohort's queues that borrow less
			// first (makeClassicalIterator), whatever their age.
			d.NotEvaluated = append(d.NotEvaluated, "it borrows from its cohort, and Kueue tries the Workloads that borrow less first, whatever their order: one queued after it may take that quota: not evaluated")
		}
		if len(targets) > 0 && (parkedIn[cq] || len(d.Borrows) > 0 && parked[cq.node.root()]) {
			// Its queue's parked Workloads come before it, and a
			// cohort's that borrow no more than it may.
			d.NotEvaluated = append(d.NotEvaluated, "once its preemption frees quota, Kueue queues again the Workloads it parked as inadmissible, and one of them may take that quota first: not evaluated")
		}
		d.NotEvaluated = append(d.NotEvaluated, m.checksFor(cq, a)...)
		s.addUsage(cq, a.usage)
		held := w.heldIn(cq.Name, d.PodSets, now)
		origin[held] = w
		s.extra[cq] = append(s.extra[cq], held)
		s.extraUsage[held] = a.usage
		out[w] = d
	}
	return out
}

// heldIn is w as it is once admitted in ClusterQueue cq with pod sets
// sets at now: holding that quota (a copy; w is not changed).
func (w *Workload) heldIn(cq string, sets []PodSetDecision, now time.Time) *Workload {
	c := *w
	c.simulated = true
	c.Status.Admission = &WorkloadAdmission{ClusterQueue: cq}
	for _, ps := range sets {
		count := ps.Count
		c.Status.Admission.PodSetAssignments = append(c.Status.Admission.PodSetAssignments,
			PodSetAssignment{Name: ps.Name, Flavors: ps.Flavors, ResourceUsage: ps.Usage, Count: &count})
	}
	c.Status.Conditions = []metav1.Condition{{Type: ConditionQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved",
		LastTransitionTime: metav1.NewTime(now)}}
	return &c
}

// Unsettled are the pending Workloads (but self) that Queue admits in the
// cohort tree of ClusterQueue cq: a snapshot Kueue has settled has none
// (it admits what fits at once). A workload decided alone (Admit) does
// not count them ahead of it, and they may take its quota first.
func (m *Model) Unsettled(cq string, self *Workload) []*Workload {
	c := m.ClusterQueues[cq]
	if c == nil {
		return nil
	}
	root := c.node.root()
	var out []*Workload
	for w, d := range m.Queue() {
		if w == self || !d.Admitted {
			continue
		}
		if o := m.ClusterQueues[d.ClusterQueue]; o != nil && o.node.root() == root {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, QueueOrderOf)
	return out
}
