package admit

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/kubectl/pkg/util/qos"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Check is one admission check with its figures.
type Check struct {
	Name    string
	Passed  bool
	Skipped bool // the check does not apply to this gang
	Reason  string
	Message string
	Figures map[string]string
}

// Admission is the gang admission decision.
type Admission struct {
	Gang      *gang.Gang
	Admitted  bool
	Checks    []Check
	Placement *gang.Placement
}

// The names of the admission checks, in the order they run.
const (
	CheckValidity     = "Validity"
	CheckMinResources = "MinResources"
	CheckQuota        = "ResourceQuota"
	CheckQueue        = "VolcanoQueue"
	CheckPlacement    = "Placement"
)

// Admit decides whether the gang may start: it is valid, its source's own
// gate passes (coscheduling's minResources against free capacity, Volcano's
// enqueue check against its queue), new members fit the namespace's
// ResourceQuotas, and the whole gang can be placed. Every check runs, so the
// answer lists every reason at once.
func Admit(ctx context.Context, snap *schedule.Snapshot, g *gang.Gang, opts gang.PlaceOptions) (*Admission, error) {
	a := &Admission{Gang: g}
	v := gang.Validate(g)
	validity := Check{Name: CheckValidity, Passed: v.Valid, Reason: v.Reason, Message: v.Message,
		Figures: map[string]string{"valid": fmt.Sprint(v.ValidCount), "minMember": fmt.Sprint(v.MinMember)}}
	if v.Valid {
		validity.Message = fmt.Sprintf("%d valid member(s), minimum %d", v.ValidCount, v.MinMember)
	}
	a.Checks = append(a.Checks, validity)

	// One set of node infos serves the gates and the placement.
	base, err := schedule.NewScheduler(snap, schedule.Options{Profile: opts.Profile, Parallelism: opts.Parallelism})
	if err != nil {
		return nil, err
	}
	nodes := base.NodeInfos()
	switch g.Source {
	case gang.SourceCoscheduling:
		a.Checks = append(a.Checks, gateCheck(CheckMinResources, gang.CoschedulingGate(g, nodes)))
	case gang.SourceVolcano:
		if snap.IsUnreadable("queues." + string(gang.SourceVolcano)) {
			a.Checks = append(a.Checks, notEvaluated(CheckQueue, "Volcano Queues could not be listed, so the queue's capability is unknown"))
			break
		}
		queue := findQueue(snap, g.Queue)
		a.Checks = append(a.Checks, gateCheck(CheckQueue, gang.VolcanoEnqueueGate(g, queue, nodes, gang.VolcanoQueuePods(snap.PodGroups, snap.Pods, g.Queue))))
	default:
		a.Checks = append(a.Checks, Check{Name: CheckMinResources, Passed: true, Skipped: true, Message: "the gang source sets no minResources"})
	}
	a.Checks = append(a.Checks, quotaCheck(snap, g))

	p, err := gang.PlaceOn(ctx, base, g, opts)
	if err != nil {
		return nil, err
	}
	a.Placement = p
	a.Checks = append(a.Checks, Check{Name: CheckPlacement, Passed: p.Verdict == gang.VerdictPlaced, Reason: string(p.Verdict), Message: p.Message,
		Figures: map[string]string{"maxPlaceable": fmt.Sprint(p.MaxPlaceable), "minMember": fmt.Sprint(p.MinMember)}})

	a.Admitted = true
	for _, c := range a.Checks {
		a.Admitted = a.Admitted && c.Passed
	}
	return a, nil
}

// notEvaluated is a check whose inputs could not be read: unknown is not a
// pass, so the gang is not admitted.
func notEvaluated(name, why string) Check {
	return Check{Name: name, Passed: false, Reason: "NotEvaluated", Message: why}
}

func gateCheck(name string, r *gang.GateResult) Check {
	if r == nil {
		return Check{Name: name, Passed: true, Skipped: true}
	}
	return Check{Name: name, Passed: r.Passed, Reason: r.Reason, Message: r.Message, Figures: r.Figures}
}

func findQueue(snap *schedule.Snapshot, name string) *unstructured.Unstructured {
	for _, u := range snap.Queues {
		if u.GetName() == name {
			return u
		}
	}
	return nil
}

// quotaCheck charges the members that do not exist yet (what-if input) to
// the namespace's ResourceQuotas, as the quota admission plugin would charge
// them when they are created; existing members were charged when they were.
func quotaCheck(snap *schedule.Snapshot, g *gang.Gang) Check {
	c := Check{Name: CheckQuota, Passed: true, Figures: map[string]string{}}
	existing := map[string]bool{}
	for _, p := range snap.Pods {
		existing[p.Namespace+"/"+p.Name] = true
	}
	newPods := 0
	for _, p := range g.Members {
		if !existing[p.Namespace+"/"+p.Name] {
			newPods++
		}
	}
	if newPods == 0 {
		c.Message = "every member exists, so the quota already charged it"
		return c
	}
	if snap.IsUnreadable("resourcequotas") {
		return notEvaluated(CheckQuota, "ResourceQuotas could not be listed, so the quota headroom for the new members is unknown")
	}
	var quotas []*corev1.ResourceQuota
	for _, q := range snap.ResourceQuotas {
		if q.Namespace == g.Namespace {
			quotas = append(quotas, q)
		}
	}
	if len(quotas) == 0 {
		c.Skipped = true
		c.Message = fmt.Sprintf("namespace %s has no ResourceQuota", g.Namespace)
		return c
	}
	var problems []string
	for _, q := range quotas {
		usage := corev1.ResourceList{}
		charged := 0
		for _, p := range g.Members {
			if existing[p.Namespace+"/"+p.Name] {
				continue
			}
			match, err := quotaSelects(q, p)
			if err != nil {
				return notEvaluated(CheckQuota, fmt.Sprintf("ResourceQuota %s: %v", q.Name, err))
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
		c.Passed, c.Reason, c.Message = false, "QuotaExceeded", strings.Join(problems, "; ")
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
