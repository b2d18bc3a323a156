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
	"math"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-gang/kubectl-gang/pkg/fields"
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
	// memo holds what is made of it once (SubjectOf); nil for one not
	// decoded from an object.
	memo *workloadMemo
	// simulated says Queue admitted it (heldIn): its quota reservation is
	// not the object's.
	simulated         bool
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
		Conditions      []metav1.Condition `json:"conditions,omitempty"`
		Admission       *WorkloadAdmission `json:"admission,omitempty"`
		ReclaimablePods []struct {
			Name  string `json:"name"`
			Count int32  `json:"count"`
		} `json:"reclaimablePods,omitempty"`
		// RequeueAt is status.requeueState.requeueAt: after an eviction
		// Kueue queues it again then (its backoff).
		RequeueAt *metav1.Time `json:"-"`
	} `json:"status,omitempty"`
}

// WorkloadAdmission is a Workload's status.admission: the ClusterQueue
// that reserved its quota and what each pod set was given.
type WorkloadAdmission struct {
	ClusterQueue      string             `json:"clusterQueue"`
	PodSetAssignments []PodSetAssignment `json:"podSetAssignments"`
}

// Workload condition types (workload_types.go).
const (
	ConditionQuotaReserved = "QuotaReserved"
	ConditionAdmitted      = "Admitted"
	ConditionEvicted       = "Evicted"
	ConditionRequeued      = "Requeued"
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
// Simulated reports whether the queue's pass admitted it (its reservation
// is not the object's).
func (w *Workload) Simulated() bool { return w.simulated }

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

// decodeWorkload reads a Workload field by field (pkg/fields: each error
// names the object and the field), its pod templates left for
// PodSet.Spec: a snapshot holds thousands, and the converter's reflection
// over every template cost as much as the snapshot's load.
// workloadMemo is what is made of a Workload once.
type workloadMemo struct {
	once sync.Once
	sub  *Subject
}

func decodeWorkload(u *unstructured.Unstructured) (*Workload, error) {
	w := &Workload{memo: &workloadMemo{}}
	w.Name, w.Namespace, w.UID = u.GetName(), u.GetNamespace(), u.GetUID()
	w.CreationTimestamp = u.GetCreationTimestamp()
	w.OwnerReferences = u.GetOwnerReferences()
	w.Labels = u.GetLabels()
	r := fields.New(u)
	var err error
	if w.Spec.QueueName, err = r.String("spec", "queueName"); err != nil {
		return nil, err
	}
	if p, found, err := r.Int32(0, math.MinInt32, "spec", "priority"); err != nil {
		return nil, err
	} else if found {
		w.Spec.Priority = &p
	}
	if v, found, err := r.Get("spec", "active"); err != nil {
		return nil, err
	} else if found {
		active, ok := v.(bool)
		if !ok {
			return nil, r.Errorf([]string{"spec", "active"}, "must be a boolean, got %s", fields.Describe(v))
		}
		w.Spec.Active = &active
	}
	sets, err := r.Slice("spec", "podSets")
	if err != nil {
		return nil, err
	}
	if len(sets) < 1 || len(sets) > 8 {
		// The API server refuses it (workload_types.go: MinItems=1,
		// MaxItems=8).
		return nil, r.Errorf([]string{"spec", "podSets"}, "must have 1 to 8 items, has %d", len(sets))
	}
	for i, raw := range sets {
		m, ok := raw.(map[string]any)
		path := []string{"spec", "podSets", strconv.Itoa(i)}
		if !ok {
			return nil, r.Errorf(path, "must be an object, got %s", fields.Describe(raw))
		}
		ps, err := readPodSet(r.Within(m))
		if err != nil {
			return nil, fields.Prefix(err, path)
		}
		w.Spec.PodSets = append(w.Spec.PodSets, ps)
	}
	conds, err := r.Slice("status", "conditions")
	if err != nil {
		return nil, err
	}
	for i, raw := range conds {
		m, ok := raw.(map[string]any)
		path := []string{"status", "conditions", strconv.Itoa(i)}
		if !ok {
			return nil, r.Errorf(path, "must be an object, got %s", fields.Describe(raw))
		}
		c, err := readCondition(r.Within(m))
		if err != nil {
			return nil, fields.Prefix(err, path)
		}
		w.Status.Conditions = append(w.Status.Conditions, c)
	}
	if adm, err := r.Map("status", "admission"); err != nil {
		return nil, err
	} else if adm != nil {
		if w.Status.Admission, err = readAdmission(r.Within(adm)); err != nil {
			return nil, fields.Prefix(err, []string{"status", "admission"})
		}
	}
	if at, err := r.String("status", "requeueState", "requeueAt"); err != nil {
		return nil, err
	} else if at != "" {
		t := metav1.Time{}
		if err := t.UnmarshalQueryParameter(at); err != nil {
			return nil, r.Errorf([]string{"status", "requeueState", "requeueAt"}, "must be a time (RFC 3339), got %q", at)
		}
		w.Status.RequeueAt = &t
	}
	reclaim, err := r.Slice("status", "reclaimablePods")
	if err != nil {
		return nil, err
	}
	for _, raw := range reclaim {
		m, _ := raw.(map[string]any)
		rp := r.Within(m)
		name, err := rp.String("name")
		if err != nil {
			return nil, fields.Prefix(err, []string{"status", "reclaimablePods"})
		}
		n, _, err := rp.Int32(0, 0, "count")
		if err != nil {
			return nil, fields.Prefix(err, []string{"status", "reclaimablePods"})
		}
		w.Status.ReclaimablePods = append(w.Status.ReclaimablePods, struct {
			Name  string `json:"name"`
			Count int32  `json:"count"`
		}{name, n})
	}
	return w, nil
}

// readPodSet reads one of spec.podSets, its template left as read.
func readPodSet(r *fields.Reader) (PodSet, error) {
	ps := PodSet{once: &sync.Once{}}
	var err error
	if ps.Name, err = r.String("name"); err != nil {
		return ps, err
	}
	if ps.Count, _, err = r.Int32(1, 0, "count"); err != nil {
		return ps, err
	}
	if n, found, err := r.Int32(0, 1, "minCount"); err != nil {
		return ps, err
	} else if found {
		ps.MinCount = &n
	}
	ps.raw, err = r.Map("template")
	return ps, err
}

// readCondition reads one of status.conditions.
func readCondition(r *fields.Reader) (metav1.Condition, error) {
	var c metav1.Condition
	var err error
	var status, at string
	for _, f := range []struct {
		into *string
		name string
	}{{&c.Type, "type"}, {&status, "status"}, {&c.Reason, "reason"}, {&c.Message, "message"}, {&at, "lastTransitionTime"}} {
		if *f.into, err = r.String(f.name); err != nil {
			return c, err
		}
	}
	c.Status = metav1.ConditionStatus(status)
	if at != "" {
		if err := c.LastTransitionTime.UnmarshalQueryParameter(at); err != nil {
			return c, r.Errorf([]string{"lastTransitionTime"}, "%v", err)
		}
	}
	return c, nil
}

// readAdmission reads status.admission.
func readAdmission(r *fields.Reader) (*WorkloadAdmission, error) {
	a := &WorkloadAdmission{}
	var err error
	if a.ClusterQueue, err = r.String("clusterQueue"); err != nil {
		return nil, err
	}
	psas, err := r.Slice("podSetAssignments")
	if err != nil {
		return nil, err
	}
	for i, raw := range psas {
		m, _ := raw.(map[string]any)
		p := r.Within(m)
		path := []string{"podSetAssignments", strconv.Itoa(i)}
		psa := PodSetAssignment{}
		if psa.Name, err = p.String("name"); err != nil {
			return nil, fields.Prefix(err, path)
		}
		flavors, err := p.Map("flavors")
		if err != nil {
			return nil, fields.Prefix(err, path)
		}
		if flavors != nil {
			psa.Flavors = make(map[corev1.ResourceName]string, len(flavors))
			for res := range flavors {
				if psa.Flavors[corev1.ResourceName(res)], err = p.String("flavors", res); err != nil {
					return nil, fields.Prefix(err, path)
				}
			}
		}
		if psa.ResourceUsage, err = p.Resources("resourceUsage"); err != nil {
			return nil, fields.Prefix(err, path)
		}
		if n, found, err := p.Int32(0, 0, "count"); err != nil {
			return nil, fields.Prefix(err, path)
		} else if found {
			psa.Count = &n
		}
		a.PodSetAssignments = append(a.PodSetAssignments, psa)
	}
	return a, nil
}
