package explain

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// victimUnit is what kube-scheduler's pod group preemption evicts as one
// (preemption.Victim): a pod, or every scheduled pod of a native PodGroup
// whose disruptionMode is All.
type victimUnit struct {
	pods     []*corev1.Pod
	priority int32
	// group: a PodGroup's pods, or a pod that names one (kube-scheduler
	// ranks both above plain pods of the same priority).
	group bool
	start metav1.Time
	key   string
}

// moreImportantUnit is kube-scheduler's MoreImportantVictim
// (preemption/util.go): higher priority, then PodGroups and their pods over
// plain pods, then more pods, then the earlier start. A pod that has not
// started counts as starting now in kube-scheduler, which then breaks ties
// by the order it built the victims in; here by namespace/name.
func moreImportantUnit(a, b *victimUnit) int {
	if a.priority != b.priority {
		return cmp.Compare(b.priority, a.priority)
	}
	if a.group != b.group {
		if a.group {
			return -1
		}
		return 1
	}
	if len(a.pods) != len(b.pods) {
		return cmp.Compare(len(b.pods), len(a.pods))
	}
	if !a.start.Equal(&b.start) {
		if a.start.Before(&b.start) {
			return -1
		}
		return 1
	}
	return cmp.Compare(a.key, b.key)
}

// podGroupVictims are the snapshot's bound pods of lower priority than
// priority, as kube-scheduler's newDomainForWorkloadPreemption gathers them
// over the whole cluster: each pod at its native PodGroup's priority (else
// its own), the pods of a group with disruptionMode All as one unit.
func (x *explainer) podGroupVictims(priority int32, now metav1.Time) []*victimUnit {
	groups := gang.NativeGroupsOf(x.snap)
	onNode := map[string]bool{}
	for _, n := range x.snap.Nodes {
		onNode[n.Name] = true
	}
	byKey := map[string]*victimUnit{}
	var out []*victimUnit
	for _, pod := range x.snap.Pods {
		if pod.Spec.NodeName == "" || !onNode[pod.Spec.NodeName] {
			continue
		}
		ng, groupKey, inGroup := groups.Of(pod)
		key := "pod " + pod.Namespace + "/" + pod.Name
		if inGroup && ng.DisruptAll {
			key = "podgroup " + groupKey
		}
		start := now
		if pod.Status.StartTime != nil {
			start = *pod.Status.StartTime
		}
		u := byKey[key]
		if u == nil {
			u = &victimUnit{priority: groups.VictimPriority(pod), group: pod.Spec.SchedulingGroup != nil, start: start, key: key}
			byKey[key] = u
			out = append(out, u)
		}
		u.pods = append(u.pods, pod)
		if start.Before(&u.start) {
			u.start = start
		}
	}
	return slices.DeleteFunc(out, func(u *victimUnit) bool { return u.priority >= priority })
}

// preemptPodGroup is kube-scheduler v1.37's preemption for a native gang
// (DefaultPreemption's PodGroupPostFilter, PodGroupEvaluator.Preempt in
// preemption/podgrouppreemption.go) as a what-if. The gang preempts at its
// PodGroup's priority, over the whole cluster at once ("on node cluster"):
// every bound pod of lower priority (a pod of a native PodGroup at its
// group's priority; a group with disruptionMode All as one victim) is
// taken away, the gang is placed as its pod group cycle places it, and the
// victims are then given back one by one, most important first (those a
// PodDisruptionBudget protects before the others), each kept when every
// member still passes Filter on its node. The rest are the victims. The
// suggestion is made only when the gang is then placed on the snapshot
// without them.
func (x *explainer) preemptPodGroup(ctx context.Context, g *gang.Gang, p *gang.Placement, e *Explanation) (*Suggestion, error) {
	if p.Gate != nil {
		return nil, nil // refused before any member is tried
	}
	for _, pod := range g.Pending() {
		if pp := pod.Spec.PreemptionPolicy; pp != nil && *pp == corev1.PreemptNever {
			return nil, nil // "not eligible due to preemptionPolicy=Never."
		}
	}
	now := metav1.Now()
	units := x.podGroupVictims(g.PodGroupPriorityValue(), now)
	if len(units) == 0 {
		return nil, nil // "No preemption victims found for incoming preemptor"
	}
	for _, u := range units {
		for _, pod := range u.pods {
			if len(pod.Spec.ResourceClaims) > 0 {
				// Giving a victim back re-reserves its claims, which this
				// what-if does not model.
				e.NotEvaluated = append(e.NotEvaluated, fmt.Sprintf(
					"pod group preemption: candidate victim %s/%s uses ResourceClaims, which this what-if does not give back", pod.Namespace, pod.Name))
				return nil, nil
			}
		}
	}
	state, err := x.plain.Fork()
	if err != nil {
		return nil, err
	}
	if err := evictUnits(state, units); err != nil {
		return nil, err
	}
	without := x.snapWithout(units)
	then, err := x.placeOn(ctx, state, without, g)
	if err != nil {
		return nil, err
	}
	if then.Verdict != gang.VerdictPlaced {
		return nil, nil // even with every lower-priority pod gone
	}
	assignments := then.Assignments

	slices.SortStableFunc(units, moreImportantUnit)
	violating, counts, nonViolating := splitByBudgets(units, x.snap.PodDisruptionBudgets)
	fast := !crossNodeFilters(assignments, units)
	onAssigned := map[string]bool{}
	for _, a := range assignments {
		onAssigned[a.Node] = true
	}
	var victims []*victimUnit
	pdbViolations := 0
	for i, u := range append(violating, nonViolating...) {
		kept, err := reprieve(ctx, state, u, assignments, fast, onAssigned)
		if err != nil {
			return nil, err
		}
		if !kept {
			victims = append(victims, u)
			if i < len(violating) {
				pdbViolations += counts[i]
			}
		}
	}
	if len(victims) == 0 {
		return nil, nil
	}
	slices.SortStableFunc(victims, moreImportantUnit)

	// Proven on the explainer's scheduler with the victims evicted.
	freed, err := x.plain.Fork()
	if err != nil {
		return nil, err
	}
	if err := evictUnits(freed, victims); err != nil {
		return nil, err
	}
	proof, err := x.placeOn(ctx, freed, x.snapWithout(victims), g)
	if err != nil {
		return nil, err
	}
	if proof.Verdict != gang.VerdictPlaced {
		return nil, nil
	}
	s := &Suggestion{Kind: SuggestPreempt, Verified: true, PDBViolations: pdbViolations}
	for _, u := range victims {
		for _, pod := range u.pods {
			s.Victims = append(s.Victims, Victim{Pod: pod, Node: pod.Spec.NodeName, Priority: u.priority})
		}
	}
	s.Message = "preempting " + describeVictims(s.Victims)
	if pdbViolations > 0 {
		s.Message += fmt.Sprintf("; %d of them beyond what a PodDisruptionBudget allows", pdbViolations)
	}
	s.Message += fmt.Sprintf("; %s (kube-scheduler's pod group preemption: at the PodGroup's priority %d, over the whole cluster)",
		fitsThen(g, proof), g.PodGroupPriorityValue())
	return s, nil
}

// evictUnits takes the units' pods off their nodes in s.
func evictUnits(s *schedule.Scheduler, units []*victimUnit) error {
	byNode := map[string][]*corev1.Pod{}
	for _, u := range units {
		for _, pod := range u.pods {
			byNode[pod.Spec.NodeName] = append(byNode[pod.Spec.NodeName], pod)
		}
	}
	for _, node := range slices.Sorted(maps.Keys(byNode)) {
		if err := s.Evict(byNode[node], node); err != nil {
			return err
		}
	}
	return nil
}

// snapWithout is the snapshot without the units' pods.
func (x *explainer) snapWithout(units []*victimUnit) *schedule.Snapshot {
	gone := map[*corev1.Pod]bool{}
	for _, u := range units {
		for _, pod := range u.pods {
			gone[pod] = true
		}
	}
	c := *x.snap
	c.Pods = slices.DeleteFunc(slices.Clone(x.snap.Pods), func(pod *corev1.Pod) bool { return gone[pod] })
	return &c
}

// reprieve gives u's pods back in state when every assignment still passes
// Filter on its node, each member reserved after its check, as
// kube-scheduler's reprieveVictim does; it reports whether u was kept.
// fast: no Filter of a member reads a node other than its own, so a unit
// with no pod on an assigned node is kept without a check (every member
// passed before, and nothing it reads changed).
func reprieve(ctx context.Context, state *schedule.Scheduler, u *victimUnit, assignments []gang.Assignment, fast bool, onAssigned map[string]bool) (bool, error) {
	giveBack := func(s *schedule.Scheduler) error {
		for _, pod := range u.pods {
			if err := s.Reserve(pod, pod.Spec.NodeName); err != nil {
				return err
			}
		}
		return nil
	}
	if fast && !slices.ContainsFunc(u.pods, func(pod *corev1.Pod) bool { return onAssigned[pod.Spec.NodeName] }) {
		return true, giveBack(state)
	}
	trial, err := state.Fork()
	if err != nil {
		return false, err
	}
	if err := giveBack(trial); err != nil {
		return false, err
	}
	check, err := trial.Fork()
	if err != nil {
		return false, err
	}
	for _, a := range assignments {
		st, err := check.FilterOn(ctx, a.Pod, a.Node)
		if err != nil {
			return false, err
		}
		if !st.IsSuccess() {
			return false, nil
		}
		if err := check.Reserve(a.Pod, a.Node); err != nil {
			return false, err
		}
	}
	return true, giveBack(state)
}

// crossNodeFilters reports whether a member's Filter may read pods on
// other nodes: pod (anti)affinity, hard spread constraints, volumes or
// claims of a member, or required anti-affinity of a candidate victim.
func crossNodeFilters(assignments []gang.Assignment, units []*victimUnit) bool {
	for _, a := range assignments {
		if aff := a.Pod.Spec.Affinity; aff != nil && (aff.PodAffinity != nil || aff.PodAntiAffinity != nil) {
			return true
		}
		if len(a.Pod.Spec.ResourceClaims) > 0 || slices.ContainsFunc(a.Pod.Spec.Volumes, func(v corev1.Volume) bool {
			return v.PersistentVolumeClaim != nil || v.Ephemeral != nil
		}) {
			return true
		}
		for _, c := range a.Pod.Spec.TopologySpreadConstraints {
			if c.WhenUnsatisfiable == corev1.DoNotSchedule {
				return true
			}
		}
	}
	for _, u := range units {
		for _, pod := range u.pods {
			if aff := pod.Spec.Affinity; aff != nil && aff.PodAntiAffinity != nil && len(aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
				return true
			}
		}
	}
	return false
}

// splitByBudgets is kube-scheduler's FilterVictimsWithPDBViolation for
// units in importance order: each pod charges the budgets that select it
// (pods a budget counts as disrupted already excepted), and a unit with a
// pod that takes a budget below zero violates, with the count of such pods.
func splitByBudgets(units []*victimUnit, pdbs []*policyv1.PodDisruptionBudget) (violating []*victimUnit, counts []int, nonViolating []*victimUnit) {
	allowed := make([]int32, len(pdbs))
	selectors := make([]labels.Selector, len(pdbs))
	for i, pdb := range pdbs {
		allowed[i] = pdb.Status.DisruptionsAllowed
		if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil && !sel.Empty() {
			selectors[i] = sel
		}
	}
	violates := func(pod *corev1.Pod) bool {
		if len(pod.Labels) == 0 {
			return false
		}
		for i, pdb := range pdbs {
			if pdb.Namespace != pod.Namespace || selectors[i] == nil || !selectors[i].Matches(labels.Set(pod.Labels)) {
				continue
			}
			if _, disrupted := pdb.Status.DisruptedPods[pod.Name]; disrupted {
				continue
			}
			allowed[i]--
			if allowed[i] < 0 {
				return true
			}
		}
		return false
	}
	for _, u := range units {
		n := 0
		for _, pod := range u.pods {
			if violates(pod) {
				n++
			}
		}
		if n > 0 {
			violating, counts = append(violating, u), append(counts, n)
		} else {
			nonViolating = append(nonViolating, u)
		}
	}
	return violating, counts, nonViolating
}
