package quota

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// The flavor assigner of Kueue v0.17.0 (pkg/scheduler/flavorassigner,
// FlavorFungibility on, fair sharing off): for each pod set, each resource
// group's flavors are tried in order, and the best by isPreferred kept.

// mode is how a flavor holds a request, worst to best (preemptionMode).
type mode int

const (
	noFit mode = iota
	noPreemptionCandidates
	preempt
	reclaim
	fit
)

// preempts: the public mode is Preempt (FlavorAssignmentMode): a flavor
// holds the request once others are evicted, or would with candidates.
func (m mode) preempts() bool { return m == noPreemptionCandidates || m == preempt || m == reclaim }

// granular is a mode with the borrowing level it needs (granularMode).
type granular struct {
	mode   mode
	borrow int
}

// isPreferred: a is strictly better than b (flavorassigner.isPreferred).
func isPreferred(a, b granular, ff FlavorFungibility) bool {
	if a.mode == noFit {
		return false
	}
	if b.mode == noFit {
		return true
	}
	if ff.Preference != nil && *ff.Preference == "PreemptionOverBorrowing" {
		if a.borrow != b.borrow {
			return a.borrow < b.borrow
		}
		return a.mode > b.mode
	}
	if a.mode != b.mode {
		return a.mode > b.mode
	}
	return a.borrow < b.borrow
}

// shouldTryNextFlavor (flavorassigner.shouldTryNextFlavor).
func shouldTryNextFlavor(m granular, ff FlavorFungibility) bool {
	switch {
	case m.mode == noFit || m.mode == noPreemptionCandidates:
		return true
	case (m.mode == preempt || m.mode == reclaim) && ff.WhenCanPreempt == "TryNextFlavor":
		return true
	case m.borrow > 0 && ff.WhenCanBorrow == "TryNextFlavor":
		return true
	}
	return false
}

// fungibility is the ClusterQueue's flavorFungibility with the CRD's
// defaults filled in (MayStopSearch, TryNextFlavor).
func (c *ClusterQueueState) fungibility() FlavorFungibility {
	ff := FlavorFungibility{WhenCanBorrow: "MayStopSearch", WhenCanPreempt: "TryNextFlavor"}
	if f := c.Spec.FlavorFungibility; f != nil {
		if f.WhenCanBorrow != "" {
			ff.WhenCanBorrow = f.WhenCanBorrow
		}
		if f.WhenCanPreempt != "" {
			ff.WhenCanPreempt = f.WhenCanPreempt
		}
		ff.Preference = f.Preference
	}
	return ff
}

// preemption is the ClusterQueue's preemption with defaults (Never).
func (c *ClusterQueueState) preemption() Preemption {
	p := Preemption{WithinClusterQueue: "Never", ReclaimWithinCohort: "Never"}
	if q := c.Spec.Preemption; q != nil {
		if q.WithinClusterQueue != "" {
			p.WithinClusterQueue = q.WithinClusterQueue
		}
		if q.ReclaimWithinCohort != "" {
			p.ReclaimWithinCohort = q.ReclaimWithinCohort
		}
		p.BorrowWithinCohort = q.BorrowWithinCohort
	}
	return p
}

// borrowWithinCohortForbidden (classical.IsBorrowingWithinCohortForbidden).
func (p Preemption) borrowWithinCohortForbidden() bool {
	return p.BorrowWithinCohort == nil || p.BorrowWithinCohort.Policy == "" || p.BorrowWithinCohort.Policy == "Never"
}

// resourceGroup is the first of the ClusterQueue's resource groups that
// covers name (RGByResource); nil for none.
func (c *ClusterQueueState) resourceGroup(name corev1.ResourceName) *ResourceGroup {
	for i := range c.Spec.ResourceGroups {
		if slices.Contains(c.Spec.ResourceGroups[i].CoveredResources, name) {
			return &c.Spec.ResourceGroups[i]
		}
	}
	return nil
}

// Subject is a workload to admit, as Kueue's scheduler reads it.
type Subject struct {
	Namespace, Name, UID string
	Queue                string
	Priority             int32
	// QueueTime orders it among the pending Workloads (its creation; now
	// for one not created yet).
	QueueTime time.Time
	PodSets   []SubjectPodSet
	// Self is the Workload object Kueue made for it, when there is one: it
	// is left out of the pending ones ahead of it.
	Self *Workload
}

// SubjectPodSet is one pod set of a Subject.
type SubjectPodSet struct {
	Name     string
	Count    int32
	MinCount int32 // Count when it cannot be admitted partly
	// Spec is the pods' spec (its node selector, affinity and
	// tolerations choose flavors); PerPod the requests of one pod as Kueue
	// counts them (Requests).
	Spec   *corev1.PodSpec
	PerPod map[corev1.ResourceName]int64
}

// psAssignment is one pod set's part of an Assignment.
type psAssignment struct {
	name     string
	count    int32
	requests map[corev1.ResourceName]int64 // totals for count pods
	flavors  map[corev1.ResourceName]flavorAssignment
	reasons  []string
	err      error
}

type flavorAssignment struct {
	name   string
	mode   mode
	borrow int
}

// representative is the pod set's mode (PodSetAssignment.RepresentativeMode).
func (p *psAssignment) representative() mode {
	if p.err != nil || (len(p.requests) > 0 && len(p.flavors) == 0) {
		return noFit
	}
	if len(p.reasons) == 0 {
		return fit
	}
	m := fit
	for _, f := range p.flavors {
		m = min(m, f.mode)
	}
	return m
}

// Assignment is the flavor assigner's result for a Subject.
type Assignment struct {
	podSets []*psAssignment
	usage   map[FlavorResource]int64
	borrow  int
}

// Mode is the worst of the pod sets' modes (RepresentativeMode): Fit,
// Preempt or NoFit.
func (a *Assignment) mode() mode {
	if len(a.podSets) == 0 {
		return noFit
	}
	m := fit
	for _, p := range a.podSets {
		m = min(m, p.representative())
	}
	return m
}

// Message words an assignment that does not fit as Kueue does
// (Assignment.Message): per pod set, its reasons sorted and joined.
func (a *Assignment) Message() string {
	var parts []string
	for _, p := range a.podSets {
		if p.representative() == fit {
			continue
		}
		if p.err != nil {
			return fmt.Sprintf("failed to assign flavors to pod set %s: %v", p.name, p.err)
		}
		reasons := slices.Clone(p.reasons)
		slices.Sort(reasons)
		parts = append(parts, fmt.Sprintf("couldn't assign flavors to pod set %s: %s", p.name, strings.Join(reasons, ", ")))
	}
	return strings.Join(parts, "; ")
}

// needPreemption are the flavor-resources whose flavor needs preemption
// (flavorResourcesNeedPreemption).
func (a *Assignment) needPreemption() map[FlavorResource]bool {
	out := map[FlavorResource]bool{}
	for _, p := range a.podSets {
		for res, f := range p.flavors {
			if f.mode.preempts() {
				out[FlavorResource{f.name, res}] = true
			}
		}
	}
	return out
}

// assigner assigns flavors for one Subject in one ClusterQueue of a
// simulation.
type assigner struct {
	s   *sim
	cq  *ClusterQueueState
	sub *Subject
	// first is the first assignment decide made.
	first *Assignment
}

// assign is assignFlavors: counts, when given, are the pod sets' counts
// (partial admission), else their full counts.
func (a *assigner) assign(counts []int32) *Assignment {
	out := &Assignment{usage: map[FlavorResource]int64{}}
	coversPods := a.cq.resourceGroup(corev1.ResourcePods) != nil
	for i, ps := range a.sub.PodSets {
		count := ps.Count
		if counts != nil {
			count = counts[i]
		}
		requests := make(map[corev1.ResourceName]int64, len(ps.PerPod)+1)
		for r, v := range ps.PerPod {
			requests[r] = v * int64(count)
		}
		if coversPods {
			requests[corev1.ResourcePods] = int64(count)
		}
		psa := &psAssignment{name: ps.Name, count: count, requests: requests, flavors: map[corev1.ResourceName]flavorAssignment{}}
		failed := false
		for _, res := range a.resourceOrder(requests) {
			if requests[res] == 0 && a.cq.resourceGroup(res) == nil {
				continue
			}
			if _, done := psa.flavors[res]; done {
				continue
			}
			flavors, reasons, err := a.findFlavor(i, requests, res, out.usage)
			if err != nil || len(flavors) == 0 {
				psa.flavors, psa.reasons, psa.err = nil, reasons, err
				failed = true
				break
			}
			for r, f := range flavors {
				psa.flavors[r] = f
			}
			psa.reasons = append(psa.reasons, reasons...)
		}
		out.podSets = append(out.podSets, psa)
		for res, f := range psa.flavors {
			out.usage[FlavorResource{f.name, res}] += requests[res]
			out.borrow = max(out.borrow, f.borrow)
		}
		if failed {
			break
		}
	}
	return out
}

// resourceOrder is the order the resources of requests are tried in: the
// ClusterQueue's resource groups' covered resources in spec order, then
// the others by name. (Kueue iterates a map, in random order; only which
// reasons a message lists can differ.)
func (a *assigner) resourceOrder(requests map[corev1.ResourceName]int64) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, rg := range a.cq.Spec.ResourceGroups {
		for _, r := range rg.CoveredResources {
			if _, ok := requests[r]; ok && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	var rest []corev1.ResourceName
	for r := range requests {
		if !slices.Contains(out, r) {
			rest = append(rest, r)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// findFlavor is findFlavorForPodSets for pod set i and the resource group
// of res: the flavors of every resource the group covers.
func (a *assigner) findFlavor(i int, requests map[corev1.ResourceName]int64, res corev1.ResourceName, assumed map[FlavorResource]int64) (map[corev1.ResourceName]flavorAssignment, []string, error) {
	rg := a.cq.resourceGroup(res)
	if rg == nil {
		return nil, []string{fmt.Sprintf("resource %s unavailable in ClusterQueue", res)}, nil
	}
	var covered []corev1.ResourceName
	for _, r := range rg.CoveredResources {
		if _, ok := requests[r]; ok {
			covered = append(covered, r)
		}
	}
	ff := a.cq.fungibility()
	selector := flavorSelector(a.sub.PodSets[i].Spec, a.labelKeys(rg))
	var reasons []string
	var best map[corev1.ResourceName]flavorAssignment
	bestMode := granular{mode: noFit, borrow: int(^uint(0) >> 1)}
	for _, fq := range rg.Flavors {
		if why := a.checkFlavor(fq.Name, a.sub.PodSets[i].Spec, selector); why != "" {
			reasons = append(reasons, why)
			continue
		}
		assignments := map[corev1.ResourceName]flavorAssignment{}
		rep := granular{mode: fit}
		for _, r := range covered {
			fr := FlavorResource{fq.Name, r}
			m, borrow, why := a.fitsQuota(fr, assumed[fr], requests[r])
			reasons = append(reasons, why...)
			g := granular{m, borrow}
			if isPreferred(rep, g, ff) {
				rep = g
			}
			if rep.mode == noFit {
				break
			}
			assignments[r] = flavorAssignment{name: fq.Name, mode: m, borrow: borrow}
		}
		if !shouldTryNextFlavor(rep, ff) {
			best, bestMode = assignments, rep
			break
		}
		if isPreferred(rep, bestMode, ff) {
			best, bestMode = assignments, rep
		}
	}
	if bestMode.mode == fit {
		return best, nil, nil
	}
	return best, reasons, nil
}

// labelKeys are the node label keys of the resource group's existing
// flavors (clusterQueue.updateLabelKeys).
func (a *assigner) labelKeys(rg *ResourceGroup) map[string]bool {
	keys := map[string]bool{}
	for _, fq := range rg.Flavors {
		if f := a.s.m.Flavors[fq.Name]; f != nil {
			for k := range f.Spec.NodeLabels {
				keys[k] = true
			}
		}
	}
	return keys
}

// checkFlavor is checkFlavorForPodSets without topology-aware scheduling:
// "" when the flavor may hold the pods, else Kueue's reason.
func (a *assigner) checkFlavor(name string, spec *corev1.PodSpec, selector nodeaffinity.RequiredNodeAffinity) string {
	f := a.s.m.Flavors[name]
	if f == nil {
		return fmt.Sprintf("flavor %s not found", name)
	}
	tolerations := append(slices.Clone(spec.Tolerations), f.Spec.Tolerations...)
	if taint, untolerated := corev1helpers.FindMatchingUntoleratedTaint(logr.Discard(), f.Spec.NodeTaints, tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, true); untolerated {
		return fmt.Sprintf("untolerated taint %s in flavor %s", taint, name)
	}
	if ok, _ := selector.Match(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: f.Spec.NodeLabels}}); !ok {
		return fmt.Sprintf("flavor %s doesn't match node affinity", name)
	}
	return ""
}

// flavorSelector is the pods' node selector and required node affinity
// limited to the keys the resource group's flavors label (flavorSelector):
// a term left empty matches every flavor.
func flavorSelector(spec *corev1.PodSpec, keys map[string]bool) nodeaffinity.RequiredNodeAffinity {
	pod := &corev1.Pod{}
	for k, v := range spec.NodeSelector {
		if keys[k] {
			if pod.Spec.NodeSelector == nil {
				pod.Spec.NodeSelector = map[string]string{}
			}
			pod.Spec.NodeSelector[k] = v
		}
	}
	if aff := spec.Affinity; aff != nil && aff.NodeAffinity != nil && aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		var terms []corev1.NodeSelectorTerm
		empty := false
		for _, t := range aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			var exprs []corev1.NodeSelectorRequirement
			for _, e := range t.MatchExpressions {
				if keys[e.Key] {
					exprs = append(exprs, e)
				}
			}
			if len(exprs) == 0 {
				empty = true
				break
			}
			terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: exprs})
		}
		if !empty && len(terms) > 0 {
			pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
		}
	}
	return nodeaffinity.GetRequiredNodeAffinity(pod)
}

// fitsQuota is fitsResourceQuota: val = what earlier pod sets of the
// workload took of fr plus request.
func (a *assigner) fitsQuota(fr FlavorResource, assumed, request int64) (mode, int, []string) {
	n := a.s.node(a.cq)
	available := max(0, n.available(fr))
	maxCapacity := n.potentialAvailable(fr)
	val := assumed + request
	if val > maxCapacity {
		return noFit, 0, []string{fmt.Sprintf("insufficient quota for %s in flavor %s, previously considered podsets requests (%s) + current podset request (%s) > maximum capacity (%s)",
			fr.Resource, fr.Flavor, qstr(fr.Resource, assumed), qstr(fr.Resource, request), qstr(fr.Resource, maxCapacity))}
	}
	borrow, mayReclaim := n.heightThatFits(fr, val)
	if val <= available {
		return fit, borrow, nil
	}
	why := []string{fmt.Sprintf("insufficient unused quota for %s in flavor %s, %s more needed", fr.Resource, fr.Flavor, qstr(fr.Resource, val-available))}
	p := a.cq.preemption()
	if val <= n.quotas[fr].nominal || mayReclaim || !p.borrowWithinCohortForbidden() {
		m, b := a.simulatePreemption(fr, val)
		return m, b, why
	}
	return noFit, borrow, why
}

// simulatePreemption is PreemptionOracle.SimulatePreemption: the targets
// for fr alone, and the borrowing level once they are gone.
func (a *assigner) simulatePreemption(fr FlavorResource, val int64) (mode, int) {
	n := a.s.node(a.cq)
	targets := a.s.targets(a.cq, a.sub, map[FlavorResource]bool{fr: true}, map[FlavorResource]int64{fr: val})
	if len(targets) == 0 {
		b, _ := n.heightThatFits(fr, val)
		return noPreemptionCandidates, b
	}
	for _, t := range targets {
		a.s.remove(t.Workload)
	}
	b, _ := n.heightThatFits(fr, val)
	for _, t := range targets {
		a.s.add(t.Workload)
	}
	for _, t := range targets {
		if t.Workload.Status.Admission.ClusterQueue == a.cq.Name {
			return preempt, b
		}
	}
	return reclaim, b
}

func qstr(name corev1.ResourceName, v int64) string {
	q := Quantity(name, v)
	return q.String()
}

// heightThatFits is FindHeightOfLowestSubtreeThatFits: the borrowing
// level a ClusterQueue needs for val of fr (0: within its nominal quota),
// and whether a subtree below the root could hold it.
func (n *node) heightThatFits(fr FlavorResource, val int64) (int, bool) {
	if !n.borrowingWith(fr, val) || n.parent == nil {
		return 0, n.parent != nil
	}
	remaining := val - n.localAvailable(fr)
	for p := n.parent; p != nil; p = p.parent {
		if !p.borrowingWith(fr, remaining) {
			return p.height(), p.parent != nil
		}
		remaining -= p.localAvailable(fr)
	}
	return n.root().height(), false
}

// borrowingWith: usage plus v passes the node's quota (a ClusterQueue's
// nominal, a Cohort's subtree quota).
func (n *node) borrowingWith(fr FlavorResource, v int64) bool {
	if n.isCohort {
		return n.usage[fr]+v > n.subtree[fr]
	}
	return n.usage[fr]+v > n.quotas[fr].nominal
}

// withinNominal: the node uses no more than its quota of any of frs
// (IsWithinNominalInResources).
func (n *node) withinNominal(frs map[FlavorResource]bool) bool {
	for fr := range frs {
		if n.usage[fr] > n.subtree[fr] {
			return false
		}
	}
	return true
}

// height is getNodeHeight.
func (n *node) height() int {
	h := min(len(n.children), 1)
	for _, c := range n.children {
		if c.isCohort {
			h = max(h, c.height()+1)
		}
	}
	return h
}
