package framework

import (
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	resourcehelper "k8s.io/component-helpers/resource"
)

// The requests kube-scheduler assumes for a container that sets none, so that
// many request-less pods do not pile onto one node when scoring.
const (
	DefaultMilliCPURequest int64 = 100               // 0.1 core
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024 // 200 MiB
)

// Resource is a set of compute resources as plain integers, so the hot paths
// compare numbers instead of Quantities: milli-CPU, bytes, pod count, and the
// scalar resources (extended, hugepages, attachable volumes) by value.
type Resource struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	AllowedPodNumber int
	ScalarResources  map[corev1.ResourceName]int64
}

// NewResource converts a ResourceList.
func NewResource(rl corev1.ResourceList) *Resource {
	r := &Resource{}
	r.Add(rl)
	return r
}

// Add adds a ResourceList.
func (r *Resource) Add(rl corev1.ResourceList) {
	for name, q := range rl {
		switch name {
		case corev1.ResourceCPU:
			r.MilliCPU += q.MilliValue()
		case corev1.ResourceMemory:
			r.Memory += q.Value()
		case corev1.ResourcePods:
			r.AllowedPodNumber += int(q.Value())
		case corev1.ResourceEphemeralStorage:
			r.EphemeralStorage += q.Value()
		default:
			if IsScalarResourceName(name) {
				r.AddScalar(name, q.Value())
			}
		}
	}
}

// AddScalar adds quantity of a scalar resource.
func (r *Resource) AddScalar(name corev1.ResourceName, quantity int64) {
	if r.ScalarResources == nil {
		r.ScalarResources = map[corev1.ResourceName]int64{}
	}
	r.ScalarResources[name] += quantity
}

// Clone copies the resource.
func (r *Resource) Clone() *Resource {
	out := *r
	if r.ScalarResources != nil {
		out.ScalarResources = make(map[corev1.ResourceName]int64, len(r.ScalarResources))
		for k, v := range r.ScalarResources {
			out.ScalarResources[k] = v
		}
	}
	return &out
}

// Get returns one resource by name (pods as a count, cpu in milli-units).
func (r *Resource) Get(name corev1.ResourceName) int64 {
	switch name {
	case corev1.ResourceCPU:
		return r.MilliCPU
	case corev1.ResourceMemory:
		return r.Memory
	case corev1.ResourceEphemeralStorage:
		return r.EphemeralStorage
	case corev1.ResourcePods:
		return int64(r.AllowedPodNumber)
	}
	return r.ScalarResources[name]
}

// IsScalarResourceName reports the resources kube-scheduler counts as scalars:
// extended resources, hugepages, kubernetes.io/-prefixed native resources and
// attachable volumes.
func IsScalarResourceName(name corev1.ResourceName) bool {
	if v, ok := scalarNames.Load(name); ok {
		return v.(bool)
	}
	v := IsExtendedResourceName(name) || IsHugePageResourceName(name) ||
		IsPrefixedNativeResource(name) || strings.HasPrefix(string(name), corev1.ResourceAttachableVolumesPrefix)
	scalarNames.Store(name, v)
	return v
}

// scalarNames caches IsScalarResourceName: a cluster has a handful of
// resource names, and validating one as a qualified name is not cheap.
var scalarNames sync.Map

// IsExtendedResourceName reports a resource such as nvidia.com/gpu: a fully
// qualified name outside the kubernetes.io/ namespace.
func IsExtendedResourceName(name corev1.ResourceName) bool {
	if IsNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

// IsNativeResource reports an unprefixed or kubernetes.io/ resource.
func IsNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || IsPrefixedNativeResource(name)
}

// IsPrefixedNativeResource reports a kubernetes.io/ resource.
func IsPrefixedNativeResource(name corev1.ResourceName) bool {
	return strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

// IsHugePageResourceName reports a hugepages-<size> resource.
func IsHugePageResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// PodResource is what a pod requests, computed once per pod: the requests
// kube-scheduler checks for fit, and the CPU and memory with the non-zero
// defaults it uses for scoring.
type PodResource struct {
	Resource *Resource
	Non0CPU  int64
	Non0Mem  int64
}

// podRequestOptions are the component-helpers options with kube-scheduler
// v1.37's feature gates at their defaults: in-place resize (GA) counts the
// status resources, pod-level resources (beta, on) are honoured.
var podRequestOptions = resourcehelper.PodResourcesOptions{
	UseStatusResources: true,
	InPlacePodLevelResourcesVerticalScalingEnabled: true,
	SkipPodLevelResources:                          false,
}

// ComputePodResource computes a pod's requests, init and sidecar containers
// and overhead included, through k8s.io/component-helpers, as kube-scheduler does.
func ComputePodResource(pod *corev1.Pod) PodResource {
	if oneContainerRequestsOnly(pod) {
		// Most pods of a large cluster: resourcehelper.PodRequests would
		// copy the container's requests into new maps three times over
		// (most of the cost of building node infos) to return them as
		// they are.
		return containerRequests(&pod.Spec.Containers[0])
	}
	return computePodResource(pod)
}

// containerRequests is the requests of a pod for which
// oneContainerRequestsOnly holds, c being its container.
func containerRequests(c *corev1.Container) PodResource {
	requests := c.Resources.Requests
	cpu, mem := requests[corev1.ResourceCPU], requests[corev1.ResourceMemory]
	return PodResource{Resource: NewResource(requests), Non0CPU: cpu.MilliValue(), Non0Mem: mem.Value()}
}

// oneContainerRequestsOnly reports a pod whose requests, as
// resourcehelper.PodRequests computes them, are its one container's
// requests: one container requesting cpu and memory, no init containers, no
// overhead, no pod-level resources, no resources in its status (in-place
// resize: no allocated or actuated resources, no infeasible resize), so
// AggregateContainerRequests' max(spec, actuated, allocated) is the spec,
// and the non-zero defaults change nothing.
func oneContainerRequestsOnly(pod *corev1.Pod) bool {
	if len(pod.Spec.Containers) != 1 || len(pod.Spec.InitContainers) > 0 || pod.Spec.Overhead != nil || pod.Spec.Resources != nil ||
		pod.Status.AllocatedResources != nil || pod.Status.Resources != nil || len(pod.Status.NodeAllocatableResourceClaimStatuses) > 0 {
		return false
	}
	return requestsCPUAndMemoryEverywhere(pod) && !resourcehelper.IsPodResizeInfeasible(pod)
}

// computePodResource is ComputePodResource for every pod.
func computePodResource(pod *corev1.Pod) PodResource {
	requests := resourcehelper.PodRequests(pod, podRequestOptions)
	podLevel := resourcehelper.IsPodLevelRequestsSet(pod)
	nonMissing := nonMissingContainerRequests(requests, podLevel)
	non0 := requests
	if len(nonMissing) > 0 && !requestsCPUAndMemoryEverywhere(pod) {
		opts := podRequestOptions
		opts.NonMissingContainerRequests = nonMissing
		non0 = resourcehelper.PodRequests(pod, opts)
	}
	cpu, mem := non0[corev1.ResourceCPU], non0[corev1.ResourceMemory]
	return PodResource{Resource: NewResource(requests), Non0CPU: cpu.MilliValue(), Non0Mem: mem.Value()}
}

// requestsCPUAndMemoryEverywhere reports a pod whose every container and init
// container requests both cpu and memory in its spec, and whose status
// carries no resources that would replace the spec's: for it the defaults for
// missing requests change nothing, so the second component-helpers pass can
// be skipped (it is most of the cost of building node infos).
func requestsCPUAndMemoryEverywhere(pod *corev1.Pod) bool {
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for _, cs := range statuses {
			if cs.AllocatedResources != nil || cs.Resources != nil {
				return false
			}
		}
	}
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range list {
			if _, ok := c.Resources.Requests[corev1.ResourceCPU]; !ok {
				return false
			}
			if _, ok := c.Resources.Requests[corev1.ResourceMemory]; !ok {
				return false
			}
		}
	}
	return true
}

// nonMissingContainerRequests are the defaults for requests left unset: for
// every container when the pod sets no pod-level requests, else only for a
// resource unset at both levels.
func nonMissingContainerRequests(requests corev1.ResourceList, podLevelSet bool) corev1.ResourceList {
	defaults := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(DefaultMilliCPURequest, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(DefaultMemoryRequest, resource.DecimalSI),
	}
	if !podLevelSet {
		return defaults
	}
	out := corev1.ResourceList{}
	for name, q := range defaults {
		if _, ok := requests[name]; !ok {
			out[name] = q
		}
	}
	return out
}
