// Package scenario generates random but reproducible scheduling scenarios for
// the conformance suite: a small cluster (namespaces, nodes and running pods
// bound at creation) plus one pending pod for kube-scheduler and our pipeline
// to decide on. Everything derives from one seed, so a failing scenario is
// replayed from its seed alone.
//
// The package is pure, objects out; creating them on a cluster is the
// suite's job.
package scenario

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ScenarioLabel marks every node and namespace of a scenario with its name.
const ScenarioLabel = "conformance.kubectl-gang.io/scenario"

// Label keys scenarios put on nodes and pods.
const (
	LabelDiskType     = "example.com/disktype"
	LabelGeneration   = "example.com/generation"
	LabelAccelerator  = "example.com/accelerator"
	LabelInstanceType = corev1.LabelInstanceTypeStable
	LabelApp          = "app"
	LabelTeam         = "team"
	LabelVersion      = "version"
	LabelEnv          = "env"
)

// ResourceGPU is the extended resource GPU nodes advertise.
const ResourceGPU corev1.ResourceName = "nvidia.com/gpu"

// Priority classes. Running pods get HighPriority or MidPriority and the
// pending pod MidPriority, NeverPreemptPriority or none (0), so the pending
// pod never outranks a running one: preemption can never find a victim, and
// so never changes the cluster under the comparison. NeverPreemptPriority
// carries preemptionPolicy Never, which a pod can only get from its class.
const (
	HighPriority         = "conformance-high"
	HighPriorityValue    = 2000
	MidPriority          = "conformance-mid"
	MidPriorityValue     = 1000
	NeverPreemptPriority = "conformance-mid-never-preempt"
)

// PriorityClasses returns the priority classes scenarios refer to; create
// them once per cluster.
func PriorityClasses() []*schedulingv1.PriorityClass {
	never := corev1.PreemptNever
	return []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: HighPriority}, Value: HighPriorityValue},
		{ObjectMeta: metav1.ObjectMeta{Name: MidPriority}, Value: MidPriorityValue},
		{ObjectMeta: metav1.ObjectMeta{Name: NeverPreemptPriority}, Value: MidPriorityValue, PreemptionPolicy: &never},
	}
}

// OverheadRuntimeClass is a RuntimeClass with a pod overhead: the API server
// copies its overhead into the spec of every pod that names it, and
// kube-scheduler adds it to the pod's requests.
const OverheadRuntimeClass = "conformance-overhead"

// RuntimeClasses returns the runtime classes scenarios refer to; create them
// once per cluster.
func RuntimeClasses() []*nodev1.RuntimeClass {
	return []*nodev1.RuntimeClass{{
		ObjectMeta: metav1.ObjectMeta{Name: OverheadRuntimeClass},
		Handler:    "conformance",
		Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("250m"),
			corev1.ResourceMemory: resource.MustParse("120Mi"),
		}},
	}}
}

// Scenario is one cluster state plus one pending pod.
type Scenario struct {
	// Name prefixes every object name and is the main namespace's name.
	Name string
	// Seed generated the scenario (0 for hand-written ones).
	Seed uint64
	// Namespaces are created first; Namespaces[0] holds the pending pod.
	Namespaces []*corev1.Namespace
	// Nodes carry their status (capacity, allocatable, conditions, images).
	Nodes []*corev1.Node
	// Running pods are bound at creation (spec.nodeName set).
	Running []*corev1.Pod
	// Finished pods are bound at creation too, then given a terminal phase
	// (Succeeded or Failed, as in their status): they hold no resources, and
	// neither kube-scheduler nor a snapshot counts them.
	Finished []*corev1.Pod
	// Pending is the pod kube-scheduler and our pipeline decide on.
	Pending *corev1.Pod
	// Services are created before the nodes; their selectors give pods
	// without spread constraints default ones.
	Services []*corev1.Service
	// Nominated are pending pods an earlier preemption nominated to a node
	// (status.nominatedNodeName). They carry a scheduling gate, so
	// kube-scheduler keeps them pending, and are created before the pending
	// pod: its queue then holds their nominations.
	Nominated []*corev1.Pod

	// Dynamic Resource Allocation objects (resource.k8s.io/v1), created
	// after the running pods. DeviceClasses and ResourceSlices are
	// cluster-wide and labelled with ScenarioLabel.
	DeviceClasses  []*resourcev1.DeviceClass
	ResourceSlices []*resourcev1.ResourceSlice
	// ResourceClaims are created as they are; a claim with a
	// status.allocation gets its status written after (as the scheduler
	// that allocated it would have), with status.reservedFor naming running
	// pods by name only: the harness fills in the created pods' UIDs.
	ResourceClaims []*resourcev1.ResourceClaim
	// ResourceClaimTemplates are what the pending pod's claims may be made
	// from. No resourceclaim controller runs: the harness makes the claim
	// once the pending pod exists, as the controller would.
	ResourceClaimTemplates []*resourcev1.ResourceClaimTemplate
	// ExtendedResources are the extended resources the pending pod requests
	// that a DeviceClass backs (DRAExtendedResource), sorted: where a node
	// does not advertise one, kube-scheduler allocates it as devices of the
	// class, in a claim of its own for the pod.
	ExtendedResources []corev1.ResourceName
}

// NominationGate keeps nominated pods of a scenario pending.
const NominationGate = "conformance.kubectl-gang.io/nominated"

// Namespace is the namespace of the pending pod.
func (s *Scenario) Namespace() string { return s.Namespaces[0].Name }

// Summary describes the scenario's size in one line.
func (s *Scenario) Summary() string {
	out := fmt.Sprintf("%d nodes, %d running pods", len(s.Nodes), len(s.Running))
	if len(s.Finished) > 0 {
		out += fmt.Sprintf(", %d finished pods", len(s.Finished))
	}
	if len(s.Services) > 0 {
		out += fmt.Sprintf(", %d services", len(s.Services))
	}
	if len(s.Nominated) > 0 {
		out += fmt.Sprintf(", %d nominated pods", len(s.Nominated))
	}
	if s.HasDRA() {
		out += fmt.Sprintf(", %d device classes, %d resource slices, %d resource claims, %d claim templates",
			len(s.DeviceClasses), len(s.ResourceSlices), len(s.ResourceClaims), len(s.ResourceClaimTemplates))
	}
	if len(s.ExtendedResources) > 0 {
		out += fmt.Sprintf(", extended resources %v backed by device classes", s.ExtendedResources)
	}
	return out
}

// HasDRA reports whether the scenario has any resource.k8s.io object.
func (s *Scenario) HasDRA() bool {
	return len(s.DeviceClasses)+len(s.ResourceSlices)+len(s.ResourceClaims)+len(s.ResourceClaimTemplates) > 0
}

// Name returns the scenario name Generate gives a seed.
func Name(seed uint64) string { return "s" + strconv.FormatUint(seed, 10) }

// NewNamespace returns a namespace labelled as belonging to scenario.
func NewNamespace(name, scenario string, labels map[string]string) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{ScenarioLabel: scenario}}}
	for k, v := range labels {
		ns.Labels[k] = v
	}
	return ns
}
