package gang

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// domainsOutcome is what placing a gang in the domains of a topology key
// found: the best attempt, the running members that count with it, how
// many pending members it had to place (more than there are when the
// domain cannot be the gang's), what each domain held, and why none can
// hold the gang whatever fits, if so.
type domainsOutcome struct {
	best          *attempt
	running, need int
	domains       []DomainResult
	conflict      string
}

// inDomains tries every value of key as a candidate placement. A
// member running in a domain counts there only: when members already run
// in one domain, the gang is pinned to it; when they run in several (or on
// nodes without the label), no domain can hold the gang (the conflict says
// why) and the domains are tried only for the diagnosis.
func (pl *placing) inDomains(key string) (domainsOutcome, error) {
	base, pending := pl.base, pl.pending
	var out domainsOutcome
	domains := map[string][]*framework.NodeInfo{}
	valueOf := map[string]string{}
	for _, ni := range base.NodeInfos() {
		if v, ok := ni.Node().Labels[key]; ok {
			domains[v] = append(domains[v], ni)
			valueOf[ni.Name()] = v
		}
	}
	runningIn := map[string]int{}
	outside := 0
	for _, pod := range pl.running {
		if v, ok := valueOf[pod.Spec.NodeName]; ok {
			runningIn[v]++
		} else {
			outside++
		}
	}
	pinned := ""
	switch {
	case len(runningIn) > 1 || (outside > 0 && len(runningIn) > 0):
		out.conflict = fmt.Sprintf("members already run in %d values of %s (%s)", len(runningIn), key, strings.Join(slices.Sorted(maps.Keys(runningIn)), ", "))
	case outside > 0:
		out.conflict = fmt.Sprintf("members already run on nodes without the label %s", key)
	case len(runningIn) == 1:
		for v := range runningIn {
			pinned = v
		}
	}
	// A domain other than the one members run in can never hold the gang.
	impossible := len(pending) + 1
	needIn := func(v string) int {
		if out.conflict != "" || (pinned != "" && v != pinned) {
			return impossible
		}
		return int(pl.minMember) - runningIn[v] - pl.succeeded
	}

	values := make([]string, 0, len(domains))
	for v := range domains {
		values = append(values, v)
	}
	slices.Sort(values)
	requests := make([]*framework.Resource, len(pending))
	for i, pod := range pending {
		requests[i] = framework.ComputePodResource(pod).Resource
	}
	resources := requestedResources(requests)
	usable := usableNodes(pending, base.NodeInfos())
	binding := bindingResource(requests, base.NodeInfos(), usable)
	lowers := map[int]map[corev1.ResourceName]int64{}
	lowerFor := func(need int) map[corev1.ResourceName]int64 {
		if l, ok := lowers[need]; ok {
			return l
		}
		lowers[need] = lowerBound(requests, need)
		return lowers[need]
	}

	var best *attempt
	bestNeed := 0
	try := func(i int) error {
		dr := &out.domains[i]
		a, err := pl.attempts.get(base, key+"="+dr.Value, pl.members, func() (*attempt, error) {
			nodes := domains[dr.Value]
			s, err := base.Fork()
			if err != nil {
				return nil, err
			}
			names := make([]string, len(nodes))
			for i, n := range nodes {
				names[i] = n.Name()
			}
			s.Confine(names)
			fresh := func() (*schedule.Scheduler, error) {
				f, err := base.Fork()
				if err == nil {
					f.Confine(names)
				}
				return f, err
			}
			a, err := pl.placeOn(s, fresh, dr.Value)
			if err != nil {
				return nil, err
			}
			a.free = freeFraction(s, names, resources)
			return a, nil
		})
		if err != nil {
			return err
		}
		need := needIn(dr.Value)
		dr.Placed, dr.FreeFraction, dr.ScoreSum = len(a.assignments), a.free, a.scoreSum
		dr.Complete = len(a.assignments) >= need
		// A domain that could be the gang's beats one that cannot (kept
		// only to say how many members it would hold).
		eligible, bestEligible := need < impossible, bestNeed < impossible
		if best == nil || (eligible && !bestEligible) || (eligible == bestEligible && better(a, best, need, bestNeed)) {
			best, bestNeed = a, need
		}
		return nil
	}
	var skipped []int
	for _, v := range values {
		dr := DomainResult{Value: v, Nodes: len(domains[v]), Running: runningIn[v], Resource: binding}
		if binding != "" {
			dr.Free, dr.Allocatable, dr.Usable = freeOf(binding, domains[v], usable)
		}
		switch {
		case out.conflict != "":
			dr.Skipped = out.conflict
		case pinned != "" && v != pinned:
			dr.Skipped = fmt.Sprintf("members already run in %s=%s", key, pinned)
		default:
			dr.Skipped = shortfall(lowerFor(needIn(v)), domains[v], usable)
		}
		out.domains = append(out.domains, dr)
		if dr.Skipped != "" {
			skipped = append(skipped, len(out.domains)-1)
			continue
		}
		if err := try(len(out.domains) - 1); err != nil {
			return out, err
		}
	}
	// Skipped domains cannot hold the gang, so the verdict never needs them.
	// When no domain can, they are tried after all, for the diagnosis: how
	// many members each holds at most. A domain skipped for where members
	// run is never the verdict's.
	if best == nil || len(best.assignments) < bestNeed {
		for _, i := range skipped {
			if err := try(i); err != nil {
				return out, err
			}
		}
	}
	if best == nil {
		out.running, out.need = len(pl.running), int(pl.minMember)-len(pl.running)-pl.succeeded
		return out, nil
	}
	out.best, out.running, out.need = best, runningIn[best.domain], bestNeed
	return out, nil
}

func better(a, b *attempt, needA, needB int) bool {
	if b == nil {
		return true
	}
	ca, cb := len(a.assignments) >= needA, len(b.assignments) >= needB
	if ca != cb {
		return ca
	}
	if !ca && len(a.assignments) != len(b.assignments) {
		return len(a.assignments) > len(b.assignments)
	}
	if a.free != b.free {
		return a.free < b.free
	}
	return a.scoreSum > b.scoreSum
}

// lowerBound is, per resource, the least the gang's pending members can
// need together: the sum of the need smallest requests.
func lowerBound(requests []*framework.Resource, need int) map[corev1.ResourceName]int64 {
	if need <= 0 {
		return nil
	}
	per := map[corev1.ResourceName][]int64{}
	for _, r := range requests {
		per[corev1.ResourceCPU] = append(per[corev1.ResourceCPU], r.MilliCPU)
		per[corev1.ResourceMemory] = append(per[corev1.ResourceMemory], r.Memory)
		for name, q := range r.ScalarResources {
			per[name] = append(per[name], q)
		}
	}
	out := map[corev1.ResourceName]int64{}
	for name, qs := range per {
		for len(qs) < len(requests) {
			qs = append(qs, 0) // members that do not request it
		}
		slices.Sort(qs)
		var sum int64
		for _, q := range qs[:min(need, len(qs))] {
			sum += q
		}
		if sum > 0 {
			out[name] = sum
		}
	}
	out[corev1.ResourcePods] = int64(min(need, len(requests)))
	return out
}

// shortfall says which resource a domain lacks for the lower bound, or "":
// counting only the nodes some member may use, the resource it lacks most
// (relative to the need), with the figures.
func shortfall(lower map[corev1.ResourceName]int64, nodes []*framework.NodeInfo, usable map[string]bool) string {
	if len(lower) == 0 {
		return ""
	}
	worst, worstRatio := corev1.ResourceName(""), 0.0
	var worstFree int64
	count := 0
	for _, name := range slices.Sorted(maps.Keys(lower)) {
		var free int64
		count = 0
		for _, ni := range nodes {
			if !usable[ni.Name()] {
				continue
			}
			count++
			if name == corev1.ResourcePods {
				free += max(0, int64(ni.Allocatable.AllowedPodNumber-len(ni.Pods)))
				continue
			}
			free += max(0, ni.Allocatable.Get(name)-ni.Requested.Get(name))
		}
		if free >= lower[name] {
			continue
		}
		// The largest share missing binds; scalars (GPUs) before cpu and
		// memory on a tie.
		ratio := float64(lower[name]-free) / float64(lower[name])
		if worst == "" || ratio > worstRatio || (ratio == worstRatio && framework.IsScalarResourceName(name) && !framework.IsScalarResourceName(worst)) {
			worst, worstRatio, worstFree = name, ratio, free
		}
	}
	if worst == "" {
		return ""
	}
	if count == 0 {
		return "no node here that the members may use"
	}
	return fmt.Sprintf("needs at least %s %s, has %s free on the %d node(s) the members may use",
		formatQuantity(worst, lower[worst]), worst, formatQuantity(worst, worstFree), count)
}

// freeFraction is the share of the domain's allocatable left free after the
// placement, averaged over cpu, memory and the scalars the gang requests.
func freeFraction(s *schedule.Scheduler, names []string, resources []corev1.ResourceName) float64 {
	in := make(map[string]bool, len(names))
	for _, n := range names {
		in[n] = true
	}
	alloc, free := make([]int64, len(resources)), make([]int64, len(resources))
	for _, ni := range s.NodeInfos() {
		if !in[ni.Name()] {
			continue
		}
		for k, name := range resources {
			a := ni.Allocatable.Get(name)
			alloc[k] += a
			free[k] += max(0, a-ni.Requested.Get(name))
		}
	}
	var total float64
	var counted int
	for k := range resources {
		if alloc[k] > 0 {
			total += float64(free[k]) / float64(alloc[k])
			counted++
		}
	}
	if counted == 0 {
		return 0
	}
	return total / float64(counted)
}

// requestedResources lists cpu, memory and every scalar resource the
// members request, in first-seen order: what freeFraction averages over.
func requestedResources(requests []*framework.Resource) []corev1.ResourceName {
	resources := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}
	for _, r := range requests {
		for name := range r.ScalarResources {
			if !slices.Contains(resources, name) {
				resources = append(resources, name)
			}
		}
	}
	return resources
}

// formatQuantity prints a resource amount the way a user writes it.
func formatQuantity(name corev1.ResourceName, v int64) string {
	switch name {
	case corev1.ResourceCPU:
		return strconv.FormatFloat(float64(v)/1000, 'f', -1, 64)
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		const gi = 1 << 30
		if v%gi == 0 {
			return fmt.Sprintf("%dGi", v/gi)
		}
		return fmt.Sprintf("%.1fGi", float64(v)/gi)
	}
	return fmt.Sprint(v)
}
