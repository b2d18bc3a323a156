package gang

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/kubectl/pkg/util/qos"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// QuotaOutcome is how the namespace's ResourceQuotas take a gang's members
// that do not exist yet.
type QuotaOutcome string

// The quota outcomes.
const (
	// QuotaCharged: every member exists, so the quota charged it already.
	QuotaCharged QuotaOutcome = "Charged"
	// QuotaNone: the namespace has no ResourceQuota.
	QuotaNone QuotaOutcome = "None"
	// QuotaUnknown: the quotas could not be read (or one does not parse).
	QuotaUnknown QuotaOutcome = "Unknown"
	// QuotaFits: the new members fit every quota.
	QuotaFits QuotaOutcome = "Fits"
	// QuotaExceeded: the API server's quota admission would refuse them.
	QuotaExceeded QuotaOutcome = "Exceeded"
)

// QuotaResult is Quota's answer, with the figures compared.
type QuotaResult struct {
	Outcome QuotaOutcome
	Message string
	Figures map[string]string
}

// Quota charges the members that do not exist yet (what-if input) to the
// namespace's ResourceQuotas, as the quota admission plugin would charge
// them when they are created; existing members were charged when they were.
func Quota(snap *schedule.Snapshot, g *Gang) QuotaResult {
	c := QuotaResult{Outcome: QuotaFits, Figures: map[string]string{}}
	// The members the snapshot holds (a set of the members, not of every
	// pod of the cluster).
	type podName struct{ namespace, name string }
	members := make(map[podName]bool, len(g.Members))
	for _, p := range g.Members {
		members[podName{p.Namespace, p.Name}] = false
	}
	for _, p := range snap.Pods {
		if _, ok := members[podName{p.Namespace, p.Name}]; ok {
			members[podName{p.Namespace, p.Name}] = true
		}
	}
	newPods := 0
	for _, p := range g.Members {
		if !members[podName{p.Namespace, p.Name}] {
			newPods++
		}
	}
	if newPods == 0 {
		c.Outcome, c.Message = QuotaCharged, "every member exists, so the quota already charged it"
		return c
	}
	// Only the gang's namespace counts: a user who may list quotas there
	// but not cluster-wide gets a complete answer (docs/design.md#snapshot).
	if !snap.CanRead(schedule.KindResourceQuotas, g.Namespace) {
		return QuotaResult{Outcome: QuotaUnknown, Message: fmt.Sprintf("the ResourceQuotas of namespace %s could not be listed, so the quota headroom for the new members is unknown", g.Namespace)}
	}
	var quotas []*corev1.ResourceQuota
	for _, q := range snap.ResourceQuotas {
		if q.Namespace == g.Namespace {
			quotas = append(quotas, q)
		}
	}
	if len(quotas) == 0 {
		c.Outcome, c.Message = QuotaNone, fmt.Sprintf("namespace %s has no ResourceQuota", g.Namespace)
		return c
	}
	var problems []string
	for _, q := range quotas {
		usage := corev1.ResourceList{}
		charged := 0
		for _, p := range g.Members {
			if members[podName{p.Namespace, p.Name}] {
				continue
			}
			match, err := quotaSelects(q, p)
			if err != nil {
				return QuotaResult{Outcome: QuotaUnknown, Message: fmt.Sprintf("ResourceQuota %s: %v", q.Name, err)}
			}
			if !match {
				continue
			}
			charged++
			for name, v := range podQuotaUsage(p) {
				sum := usage[name]
				sum.Add(v)
				usage[name] = sum
			}
		}
		if charged == 0 {
			continue
		}
		names := make([]corev1.ResourceName, 0, len(q.Status.Hard))
		for name := range q.Status.Hard {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			req, ok := usage[name]
			if !ok {
				continue
			}
			hard, used := q.Status.Hard[name], q.Status.Used[name]
			after := used.DeepCopy()
			after.Add(req)
			c.Figures[q.Name+"/"+string(name)] = fmt.Sprintf("used %s + %s of %s", used.String(), req.String(), hard.String())
			if after.Cmp(hard) > 0 {
				problems = append(problems, fmt.Sprintf("exceeded quota: %s, requested: %s=%s, used: %s=%s, limited: %s=%s",
					q.Name, name, req.String(), name, used.String(), name, hard.String()))
			}
		}
	}
	if len(problems) > 0 {
		c.Outcome, c.Message = QuotaExceeded, strings.Join(problems, "; ")
		return c
	}
	c.Message = fmt.Sprintf("%d new member(s) fit the namespace's quota", newPods)
	return c
}

// podQuotaUsage is what the quota admission plugin charges for a pod: its
// requests under requests.* and, for cpu, memory, ephemeral-storage and huge
// pages, the bare names; its cpu, memory and ephemeral-storage limits under
// limits.*; and one pod.
func podQuotaUsage(p *corev1.Pod) corev1.ResourceList {
	reqs := framework.ComputePodResource(p).Resource
	out := corev1.ResourceList{
		corev1.ResourcePods:                     *resource.NewQuantity(1, resource.DecimalSI),
		corev1.ResourceName("count/pods"):       *resource.NewQuantity(1, resource.DecimalSI),
		corev1.ResourceRequestsCPU:              *resource.NewMilliQuantity(reqs.MilliCPU, resource.DecimalSI),
		corev1.ResourceCPU:                      *resource.NewMilliQuantity(reqs.MilliCPU, resource.DecimalSI),
		corev1.ResourceRequestsMemory:           *resource.NewQuantity(reqs.Memory, resource.BinarySI),
		corev1.ResourceMemory:                   *resource.NewQuantity(reqs.Memory, resource.BinarySI),
		corev1.ResourceRequestsEphemeralStorage: *resource.NewQuantity(reqs.EphemeralStorage, resource.BinarySI),
		corev1.ResourceEphemeralStorage:         *resource.NewQuantity(reqs.EphemeralStorage, resource.BinarySI),
	}
	for name, q := range reqs.ScalarResources {
		out[corev1.ResourceName(corev1.DefaultResourceRequestsPrefix+string(name))] = *resource.NewQuantity(q, resource.DecimalSI)
		// Huge pages are charged under their bare name too (the
		// evaluator's requestedResourcePrefixes); extended resources not.
		if strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
			out[name] = *resource.NewQuantity(q, resource.BinarySI)
		}
	}
	for name, q := range resourcehelper.PodLimits(p, resourcehelper.PodResourcesOptions{}) {
		switch name {
		case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
			out[corev1.ResourceName("limits."+string(name))] = q
		}
	}
	return out
}

// quotaSelects reports whether a quota's scopes select a pod, as the pod
// quota evaluator decides for the scopes that concern pods. A scope this
// check does not know is an error: unknown is not "does not apply".
func quotaSelects(q *corev1.ResourceQuota, p *corev1.Pod) (bool, error) {
	var reqs []corev1.ScopedResourceSelectorRequirement
	for _, s := range q.Spec.Scopes {
		reqs = append(reqs, corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		reqs = append(reqs, q.Spec.ScopeSelector.MatchExpressions...)
	}
	for _, r := range reqs {
		var match bool
		switch r.ScopeName {
		case corev1.ResourceQuotaScopeTerminating:
			match = p.Spec.ActiveDeadlineSeconds != nil && *p.Spec.ActiveDeadlineSeconds >= 0
		case corev1.ResourceQuotaScopeNotTerminating:
			match = p.Spec.ActiveDeadlineSeconds == nil || *p.Spec.ActiveDeadlineSeconds < 0
		case corev1.ResourceQuotaScopeBestEffort:
			match = isBestEffort(p)
		case corev1.ResourceQuotaScopeNotBestEffort:
			match = !isBestEffort(p)
		case corev1.ResourceQuotaScopePriorityClass:
			switch r.Operator {
			case corev1.ScopeSelectorOpExists:
				match = p.Spec.PriorityClassName != ""
			case corev1.ScopeSelectorOpDoesNotExist:
				match = p.Spec.PriorityClassName == ""
			case corev1.ScopeSelectorOpIn:
				match = slices.Contains(r.Values, p.Spec.PriorityClassName)
			case corev1.ScopeSelectorOpNotIn:
				match = !slices.Contains(r.Values, p.Spec.PriorityClassName)
			}
			if r.Operator == corev1.ScopeSelectorOpExists || r.Operator == corev1.ScopeSelectorOpDoesNotExist ||
				r.Operator == corev1.ScopeSelectorOpIn || r.Operator == corev1.ScopeSelectorOpNotIn {
				if !match {
					return false, nil
				}
				continue
			}
			return false, fmt.Errorf("scope operator %q is not evaluated", r.Operator)
		default:
			return false, fmt.Errorf("scope %q is not evaluated", r.ScopeName)
		}
		if r.Operator == corev1.ScopeSelectorOpDoesNotExist {
			match = !match
		}
		if !match {
			return false, nil
		}
	}
	return true, nil
}

// isBestEffort is the BestEffort QoS class, as the API server computes it
// (pod-level resources and zero quantities included).
func isBestEffort(p *corev1.Pod) bool {
	return qos.ComputePodQOS(p) == corev1.PodQOSBestEffort
}
