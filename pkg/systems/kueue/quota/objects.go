// Package quota is Kueue's admission as Kueue v0.17.0 decides it
// (kueue.x-k8s.io/v1beta2): the ResourceFlavors, ClusterQueues, Cohorts,
// LocalQueues and Workloads of a snapshot, the quota tree they make, what
// the admitted Workloads use, and the flavor assignment of one more
// Workload (docs/design.md#kueue). It is pure: objects in, decisions out;
// it reads Kueue's objects with types of its own (the JSON fields of
// Kueue's API), not Kueue's code.
package quota

import (
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Group is Kueue's API group, Version the version whose fields this
// package reads.
const (
	Group   = "kueue.x-k8s.io"
	Version = "v1beta2"
)

// The kinds of Kueue's objects the admission reads.
const (
	KindResourceFlavor        = "ResourceFlavor"
	KindClusterQueue          = "ClusterQueue"
	KindCohort                = "Cohort"
	KindLocalQueue            = "LocalQueue"
	KindWorkload              = "Workload"
	KindWorkloadPriorityClass = "WorkloadPriorityClass"
	KindAdmissionCheck        = "AdmissionCheck"
	KindTopology              = "Topology"
)

// ResourceFlavor is kueue.x-k8s.io ResourceFlavor (apis/kueue/v1beta2
// resourceflavor_types.go).
type ResourceFlavor struct {
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		NodeLabels   map[string]string   `json:"nodeLabels,omitempty"`
		NodeTaints   []corev1.Taint      `json:"nodeTaints,omitempty"`
		Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
		TopologyName *string             `json:"topologyName,omitempty"`
	} `json:"spec,omitempty"`
}

// ResourceGroup is a ClusterQueue's or Cohort's resource group: the
// resources it covers and, per flavor in the order to try them, the quota.
type ResourceGroup struct {
	CoveredResources []corev1.ResourceName `json:"coveredResources,omitempty"`
	Flavors          []FlavorQuotas        `json:"flavors,omitempty"`
}

// FlavorQuotas are one flavor's quotas in a resource group.
type FlavorQuotas struct {
	Name      string          `json:"name"`
	Resources []ResourceQuota `json:"resources,omitempty"`
}

// ResourceQuota is the quota of one resource in one flavor.
type ResourceQuota struct {
	Name           corev1.ResourceName `json:"name,omitempty"`
	NominalQuota   resource.Quantity   `json:"nominalQuota,omitempty"`
	BorrowingLimit *resource.Quantity  `json:"borrowingLimit,omitempty"`
	LendingLimit   *resource.Quantity  `json:"lendingLimit,omitempty"`
}

// StopPolicy values (a ClusterQueue's or LocalQueue's spec.stopPolicy).
const (
	StopNone         = "None"
	StopHold         = "Hold"
	StopHoldAndDrain = "HoldAndDrain"
)

// ClusterQueue is kueue.x-k8s.io ClusterQueue (clusterqueue_types.go).
type ClusterQueue struct {
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		ResourceGroups    []ResourceGroup       `json:"resourceGroups,omitempty"`
		CohortName        string                `json:"cohortName,omitempty"`
		QueueingStrategy  string                `json:"queueingStrategy,omitempty"`
		NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
		FlavorFungibility *FlavorFungibility    `json:"flavorFungibility,omitempty"`
		Preemption        *Preemption           `json:"preemption,omitempty"`
		StopPolicy        *string               `json:"stopPolicy,omitempty"`
		AdmissionChecks   []string              `json:"admissionChecks,omitempty"`
		// AdmissionChecksStrategy lists checks per flavor.
		AdmissionChecksStrategy *struct {
			AdmissionChecks []struct {
				Name      string   `json:"name,omitempty"`
				OnFlavors []string `json:"onFlavors,omitempty"`
			} `json:"admissionChecks,omitempty"`
		} `json:"admissionChecksStrategy,omitempty"`
		FairSharing *struct {
			Weight *resource.Quantity `json:"weight,omitempty"`
		} `json:"fairSharing,omitempty"`
	} `json:"spec,omitempty"`
}

// FlavorFungibility is a ClusterQueue's spec.flavorFungibility.
type FlavorFungibility struct {
	WhenCanBorrow  string  `json:"whenCanBorrow,omitempty"`
	WhenCanPreempt string  `json:"whenCanPreempt,omitempty"`
	Preference     *string `json:"preference,omitempty"`
}

// Preemption is a ClusterQueue's spec.preemption.
type Preemption struct {
	ReclaimWithinCohort string `json:"reclaimWithinCohort,omitempty"`
	BorrowWithinCohort  *struct {
		Policy               string `json:"policy,omitempty"`
		MaxPriorityThreshold *int32 `json:"maxPriorityThreshold,omitempty"`
	} `json:"borrowWithinCohort,omitempty"`
	WithinClusterQueue string `json:"withinClusterQueue,omitempty"`
}

// Cohort is kueue.x-k8s.io Cohort (cohort_types.go): a node of the cohort
// tree, with quota of its own.
type Cohort struct {
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		ParentName     string          `json:"parentName,omitempty"`
		ResourceGroups []ResourceGroup `json:"resourceGroups,omitempty"`
		FairSharing    *struct {
			Weight *resource.Quantity `json:"weight,omitempty"`
		} `json:"fairSharing,omitempty"`
	} `json:"spec,omitempty"`
}

// LocalQueue is kueue.x-k8s.io LocalQueue (localqueue_types.go).
type LocalQueue struct {
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		ClusterQueue string  `json:"clusterQueue,omitempty"`
		StopPolicy   *string `json:"stopPolicy,omitempty"`
	} `json:"spec,omitempty"`
}

// WorkloadPriorityClass is kueue.x-k8s.io WorkloadPriorityClass.
type WorkloadPriorityClass struct {
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Value             int32 `json:"value"`
}

// PodSet is one set of a Workload's pods that share a template.
type PodSet struct {
	Name     string                 `json:"name"`
	Template corev1.PodTemplateSpec `json:"template,omitempty"`
	Count    int32                  `json:"count"`
	MinCount *int32                 `json:"minCount,omitempty"`
	// raw is the template as read, decoded into Template on first use
	// (Spec) under once: an admitted Workload's usage is its admission's,
	// so most templates are never needed, and a Model is shared.
	raw  map[string]any
	once *sync.Once
}

// Spec is the pod set's pod spec.
func (ps *PodSet) Spec() *corev1.PodSpec {
	if ps.once != nil {
		ps.once.Do(func() { _ = runtime.DefaultUnstructuredConverter.FromUnstructured(ps.raw, &ps.Template) })
	}
	return &ps.Template.Spec
}

// PodSetAssignment is what an admission gave one pod set.
type PodSetAssignment struct {
	Name          string                         `json:"name"`
	Flavors       map[corev1.ResourceName]string `json:"flavors,omitempty"`
	ResourceUsage corev1.ResourceList            `json:"resourceUsage,omitempty"`
	Count         *int32                         `json:"count,omitempty"`
}

// Workload is kueue.x-k8s.io Workload (workload_types.go).
type Workload struct {
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		PodSets          []PodSet `json:"podSets"`
		QueueName        string   `json:"queueName,omitempty"`
		Priority         *int32   `json:"priority,omitempty"`
		PriorityClassRef *struct {
			Group string `json:"group,omitempty"`
			Kind  string `json:"kind,omitempty"`
			Name  string `json:"name,omitempty"`
		} `json:"priorityClassRef,omitempty"`
		Active *bool `json:"active,omitempty"`
	} `json:"spec,omitempty"`
	Status struct {
		Conditions []metav1.Condition `json:"conditions,omitempty"`
		Admission  *struct {
			ClusterQueue      string             `json:"clusterQueue"`
			PodSetAssignments []PodSetAssignment `json:"podSetAssignments"`
		} `json:"admission,omitempty"`
		ReclaimablePods []struct {
			Name  string `json:"name"`
			Count int32  `json:"count"`
		} `json:"reclaimablePods,omitempty"`
	} `json:"status,omitempty"`
}

// Workload condition types (workload_types.go).
const (
	ConditionQuotaReserved = "QuotaReserved"
	ConditionAdmitted      = "Admitted"
	ConditionEvicted       = "Evicted"
	ConditionFinished      = "Finished"
	ConditionPreempted     = "Preempted"
)

// Condition is the status of condition typ ("" when absent).
func (w *Workload) Condition(typ string) *metav1.Condition {
	for i := range w.Status.Conditions {
		if w.Status.Conditions[i].Type == typ {
			return &w.Status.Conditions[i]
		}
	}
	return nil
}

func (w *Workload) conditionTrue(typ string) bool {
	c := w.Condition(typ)
	return c != nil && c.Status == metav1.ConditionTrue
}

// HasQuotaReservation: Kueue counts the Workload's admission against its
// ClusterQueue (workload.HasQuotaReservation) until it finishes.
func (w *Workload) HasQuotaReservation() bool {
	return w.conditionTrue(ConditionQuotaReserved) && w.Status.Admission != nil
}

// IsFinished: the Workload's job finished (workload.IsFinished).
func (w *Workload) IsFinished() bool { return w.conditionTrue(ConditionFinished) }

// decode reads u into out, naming the object in the error.
func decode(u *unstructured.Unstructured, out any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, false); err != nil {
		return fmt.Errorf("%s %s: %w", u.GetKind(), nameOf(u), err)
	}
	return nil
}

func nameOf(u *unstructured.Unstructured) string {
	if u.GetNamespace() != "" {
		return u.GetNamespace() + "/" + u.GetName()
	}
	return u.GetName()
}

// decodeWorkload reads a Workload field by field, its pod templates left
// for PodSet.Spec: a snapshot holds thousands, and the converter's
// reflection over every template cost as much as the snapshot's load.
func decodeWorkload(u *unstructured.Unstructured) (*Workload, error) {
	w := &Workload{}
	w.Name, w.Namespace, w.UID = u.GetName(), u.GetNamespace(), u.GetUID()
	w.CreationTimestamp = u.GetCreationTimestamp()
	w.OwnerReferences = u.GetOwnerReferences()
	w.Labels = u.GetLabels()
	bad := func(field string, err error) error {
		return fmt.Errorf("%s %s: %s: %w", KindWorkload, nameOf(u), field, err)
	}
	spec, _ := u.Object["spec"].(map[string]any)
	w.Spec.QueueName, _ = spec["queueName"].(string)
	if v, ok := spec["priority"]; ok && v != nil {
		p, ok := toInt(v)
		if !ok {
			return nil, bad("spec.priority", fmt.Errorf("not an integer: %v", v))
		}
		p32 := int32(p)
		w.Spec.Priority = &p32
	}
	if v, ok := spec["active"].(bool); ok {
		w.Spec.Active = &v
	}
	sets, _ := spec["podSets"].([]any)
	for _, raw := range sets {
		m, ok := raw.(map[string]any)
		if !ok {
			return nil, bad("spec.podSets", fmt.Errorf("not an object"))
		}
		ps := PodSet{}
		ps.Name, _, _ = unstructured.NestedString(m, "name")
		if c, ok := toInt(m["count"]); ok {
			ps.Count = int32(c)
		}
		if c, ok := toInt(m["minCount"]); ok {
			mc := int32(c)
			ps.MinCount = &mc
		}
		ps.raw, _ = m["template"].(map[string]any)
		ps.once = &sync.Once{}
		w.Spec.PodSets = append(w.Spec.PodSets, ps)
	}
	status, _ := u.Object["status"].(map[string]any)
	if conds, ok := status["conditions"].([]any); ok {
		for _, raw := range conds {
			m, _ := raw.(map[string]any)
			c := metav1.Condition{}
			c.Type, _, _ = unstructured.NestedString(m, "type")
			s, _, _ := unstructured.NestedString(m, "status")
			c.Status = metav1.ConditionStatus(s)
			c.Reason, _, _ = unstructured.NestedString(m, "reason")
			c.Message, _, _ = unstructured.NestedString(m, "message")
			if t, _, _ := unstructured.NestedString(m, "lastTransitionTime"); t != "" {
				if err := c.LastTransitionTime.UnmarshalQueryParameter(t); err != nil {
					return nil, bad("status.conditions", err)
				}
			}
			w.Status.Conditions = append(w.Status.Conditions, c)
		}
	}
	if adm, ok := status["admission"].(map[string]any); ok {
		a := &struct {
			ClusterQueue      string             `json:"clusterQueue"`
			PodSetAssignments []PodSetAssignment `json:"podSetAssignments"`
		}{}
		a.ClusterQueue, _, _ = unstructured.NestedString(adm, "clusterQueue")
		psas, _ := adm["podSetAssignments"].([]any)
		for _, raw := range psas {
			m, _ := raw.(map[string]any)
			psa := PodSetAssignment{}
			psa.Name, _, _ = unstructured.NestedString(m, "name")
			if fl, ok := m["flavors"].(map[string]any); ok {
				psa.Flavors = make(map[corev1.ResourceName]string, len(fl))
				for r, f := range fl {
					psa.Flavors[corev1.ResourceName(r)], _ = f.(string)
				}
			}
			if ru, ok := m["resourceUsage"].(map[string]any); ok {
				psa.ResourceUsage = make(corev1.ResourceList, len(ru))
				for r, v := range ru {
					q, err := parseQuantity(v)
					if err != nil {
						return nil, bad("status.admission.podSetAssignments.resourceUsage["+r+"]", err)
					}
					psa.ResourceUsage[corev1.ResourceName(r)] = q
				}
			}
			if c, ok := toInt(m["count"]); ok {
				c32 := int32(c)
				psa.Count = &c32
			}
			a.PodSetAssignments = append(a.PodSetAssignments, psa)
		}
		w.Status.Admission = a
	}
	if rps, ok := status["reclaimablePods"].([]any); ok {
		for _, raw := range rps {
			m, _ := raw.(map[string]any)
			name, _, _ := unstructured.NestedString(m, "name")
			c, _ := toInt(m["count"])
			w.Status.ReclaimablePods = append(w.Status.ReclaimablePods, struct {
				Name  string `json:"name"`
				Count int32  `json:"count"`
			}{name, int32(c)})
		}
	}
	return w, nil
}

// toInt reads a JSON number as decoded into an unstructured object.
func toInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	}
	return 0, false
}

// parseQuantity reads a quantity as JSON gives it (a string or a number).
func parseQuantity(v any) (resource.Quantity, error) {
	switch q := v.(type) {
	case string:
		return resource.ParseQuantity(q)
	case int64, int, float64:
		n, ok := toInt(q)
		if !ok {
			return resource.Quantity{}, fmt.Errorf("not a quantity: %v", v)
		}
		return *resource.NewQuantity(n, resource.DecimalSI), nil
	}
	return resource.Quantity{}, fmt.Errorf("not a quantity: %v", v)
}
