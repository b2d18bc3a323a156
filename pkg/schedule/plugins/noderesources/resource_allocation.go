package noderesources

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// resourceKind says where a scored resource lives in a framework.Resource, so
// Score switches on a small integer instead of comparing names per node.
type resourceKind uint8

const (
	kindCPU resourceKind = iota
	kindMemory
	kindEphemeralStorage
	kindOther
)

// scoredResource is one entry of a scoring resource list.
type scoredResource struct {
	name   corev1.ResourceName
	kind   resourceKind
	weight int64
	// scalar is true for the resources kube-scheduler counts as scalars
	// (extended, hugepages, kubernetes.io/-prefixed, attachable volumes): a
	// scalar the pod does not request is left out of the score.
	scalar bool
}

func newScoredResources(specs []configv1.ResourceSpec) []scoredResource {
	out := make([]scoredResource, 0, len(specs))
	for _, spec := range specs {
		name := corev1.ResourceName(spec.Name)
		res := scoredResource{name: name, weight: spec.Weight, scalar: framework.IsScalarResourceName(name)}
		switch name {
		case corev1.ResourceCPU:
			res.kind = kindCPU
		case corev1.ResourceMemory:
			res.kind = kindMemory
		case corev1.ResourceEphemeralStorage:
			res.kind = kindEphemeralStorage
		default:
			res.kind = kindOther
		}
		out = append(out, res)
	}
	return out
}

// resourceAllocation is what both score plugins share: the resources they
// score and which node total they compare against.
type resourceAllocation struct {
	resources []scoredResource
	// handle gives the DRA state, for extended resources backed by
	// DeviceClasses.
	handle framework.Handle
	// useRequested compares against the plain requests for cpu and memory
	// (BalancedAllocation). When false (Fit) both the pod's and the node's cpu
	// and memory count a container that requests nothing as 100m and 200MiB,
	// so that many request-less pods do not pile onto one node.
	useRequested bool
}

// podRequests returns the pod's request for each scored resource, in order,
// computed as kube-scheduler v1.37's scorers do, through component-helpers.
// The two scorers differ, and so must we:
//   - NodeResourcesFit's scorer is built without the feature flags
//     (kube-scheduler's NewFit sets them on the plugin, not on its scorer), so
//     it counts container requests only: pod-level requests and in-place
//     resize status are ignored, and a container that requests no cpu or
//     memory counts as 100m and 200MiB.
//   - BalancedAllocation honours pod-level requests and resize status, with
//     no defaults.
func (r *resourceAllocation) podRequests(pod *corev1.Pod) []int64 {
	opts := resourcehelper.PodResourcesOptions{
		UseStatusResources: true,
		InPlacePodLevelResourcesVerticalScalingEnabled: true,
	}
	if !r.useRequested {
		opts = resourcehelper.PodResourcesOptions{
			SkipPodLevelResources:       true,
			NonMissingContainerRequests: defaultContainerRequests,
		}
	}
	requests := resourcehelper.PodRequests(pod, opts)
	out := make([]int64, len(r.resources))
	for i, spec := range r.resources {
		q := requests[spec.name]
		if spec.kind == kindCPU {
			out[i] = q.MilliValue()
		} else {
			out[i] = q.Value()
		}
	}
	return out
}

// defaultContainerRequests are kube-scheduler's stand-ins for a container
// that requests no cpu or memory.
var defaultContainerRequests = corev1.ResourceList{
	corev1.ResourceCPU:    *resource.NewMilliQuantity(framework.DefaultMilliCPURequest, resource.DecimalSI),
	corev1.ResourceMemory: *resource.NewQuantity(framework.DefaultMemoryRequest, resource.DecimalSI),
}

// isBestEffort reports a pod that requests none of the scored resources.
func isBestEffort(podRequests []int64) bool {
	for _, q := range podRequests {
		if q != 0 {
			return false
		}
	}
	return true
}

// nodeAmounts returns the node's allocatable amount of a resource and the
// amount its pods already request. A resource the node does not have comes
// back as 0 allocatable, which leaves it out of the score.
//
// As kube-scheduler v1.37 (DRAExtendedResource, GA) does, an extended
// resource the node has no allocatable of but a DeviceClass backs counts the
// devices the class selects on the node and how many are allocated
// (DRA.ClassDevices), when there are any.
func (r *resourceAllocation) nodeAmounts(spec *scoredResource, nodeInfo *framework.NodeInfo) (allocatable, allocated int64) {
	requested := nodeInfo.NonZeroRequested
	if r.useRequested {
		requested = nodeInfo.Requested
	}
	switch spec.kind {
	case kindCPU:
		return nodeInfo.Allocatable.MilliCPU, requested.MilliCPU
	case kindMemory:
		return nodeInfo.Allocatable.Memory, requested.Memory
	case kindEphemeralStorage:
		return nodeInfo.Allocatable.EphemeralStorage, nodeInfo.Requested.EphemeralStorage
	}
	// Not Allocatable.Get: "pods" is no scalar, and kube-scheduler looks it
	// up (and finds nothing) among the scalars like any other name.
	allocatable, ok := nodeInfo.Allocatable.ScalarResources[spec.name]
	if allocatable == 0 && r.handle != nil {
		if dra := r.handle.DRA(); dra != nil {
			if class := dra.ExtendedResourceClass(spec.name); class != nil {
				if total, held := dra.ClassDevices(context.Background(), nodeInfo.Node(), class); total > 0 {
					return total, held
				}
			}
		}
	}
	if !ok {
		return 0, 0
	}
	return allocatable, nodeInfo.Requested.ScalarResources[spec.name]
}

// amounts returns the node's allocatable and allocated amounts of scored
// resource i, with ok false when the resource takes no part in the score on
// this node: a scalar the pod does not request, or one the node does not have.
func (r *resourceAllocation) amounts(i int, podRequest int64, nodeInfo *framework.NodeInfo) (allocatable, allocated int64, ok bool) {
	spec := &r.resources[i]
	if podRequest == 0 && spec.scalar {
		return 0, 0, false
	}
	allocatable, allocated = r.nodeAmounts(spec, nodeInfo)
	if allocatable == 0 {
		return 0, 0, false
	}
	return allocatable, allocated, true
}
