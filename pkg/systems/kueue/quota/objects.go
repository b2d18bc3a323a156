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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Group is Kueue's API group.
const Group = "kueue.x-k8s.io"

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
