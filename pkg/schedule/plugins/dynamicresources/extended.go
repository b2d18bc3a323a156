package dynamicresources

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Extended resources backed by DRA (DRAExtendedResource, GA and locked on in
// v1.37; docs/design.md#dynamic-resource-allocation), as kube-scheduler's
// extendeddynamicresources.go handles them: a pod that requests an extended
// resource (nvidia.com/gpu) a DeviceClass names as its extendedResourceName,
// or deviceclass.resource.kubernetes.io/<class>, gets one more claim of the
// plugin's own. On a node that advertises no allocatable of that resource,
// the claim asks for that many devices of the class (NodeResourcesFit leaves
// the resource to this plugin there); on a node whose device plugin
// advertises it, NodeResourcesFit checks it as before.

// ReasonCannotFitResource is kube-scheduler's reason when an extended
// resource is neither advertised by the node nor backed by a DeviceClass.
const ReasonCannotFitResource = "cannot fit resource"

// ReasonStaleExtendedClaim is kube-scheduler's reason when the claim it made
// for the pod's extended resources in an earlier cycle is still there: it
// deletes the claim (PostFilter) and tries again.
const ReasonStaleExtendedClaim = "cannot schedule extended resource claim"

// ExtendedClaimName is the name given here to the claim kube-scheduler
// makes for a pod's extended resources: its generateName prefix
// (<pod>-extended-resources-) without the random suffix the API server adds.
func ExtendedClaimName(pod *corev1.Pod) string {
	name := pod.Name + "-extended-resources"
	if len(name) > 57 {
		name = name[:57]
	}
	return name
}

// newExtendedClaim is preFilterExtendedResources' in-memory claim: owned by
// the pod, annotated, with no requests until Filter fills them per node.
func newExtendedClaim(pod *corev1.Pod) *resourcev1.ResourceClaim {
	name := ExtendedClaimName(pod)
	return &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    pod.Namespace,
			Name:         name,
			UID:          types.UID("what-if/" + pod.Namespace + "/" + name),
			GenerateName: pod.Name + "-extended-resources-",
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true),
			}},
			Annotations: map[string]string{resourcev1.ExtendedResourceClaimAnnotation: "true"},
		},
	}
}

// extendedState is what PreFilter finds out about the pod's extended
// resources.
type extendedState struct {
	// claim is the plugin's claim for them (the last of stateData.claims):
	// one from an earlier cycle, or the in-memory one.
	claim *resourcev1.ResourceClaim
	// inMemory says claim is the in-memory one (not in the snapshot).
	inMemory bool
	// names are the pod's requests of names a class may back, sorted;
	// backed says which a class backs.
	names  []corev1.ResourceName
	backed []bool
	// byNode caches the per-node claim by which names the node leaves to
	// DRA (nodeClaim).
	byNode map[string]nodeExtClaim
}

// nodeExtClaim is a node's version of the extended-resource claim and a key
// of its requests (what the allocator reads of it).
type nodeExtClaim struct {
	claim *resourcev1.ResourceClaim
	key   string
}

// nodeClaim is filterExtendedResources: which of the pod's extended
// resources node must provide through DRA (backed by a class, no allocatable
// there), and the claim for them; nil when none (the device plugin provides
// them all). A request neither advertised by the node nor backed by a class
// keeps the pod off the node. key names the delegated set (for the memo).
func (x *extendedState) nodeClaim(dra *framework.DRA, pod *corev1.Pod, nodeInfo *framework.NodeInfo, mu *sync.Mutex) (claim *resourcev1.ResourceClaim, key string, st *framework.Status) {
	if x == nil {
		return nil, "", nil
	}
	if x.claim.Spec.Devices.Requests != nil {
		// From an earlier cycle: kube-scheduler deletes it and starts over.
		return nil, "", framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonStaleExtendedClaim)
	}
	var delegated []corev1.ResourceName
	for i, name := range x.names {
		allocatable, ok := nodeInfo.Allocatable.ScalarResources[name]
		switch {
		case x.backed[i] && allocatable == 0:
			delegated = append(delegated, name)
		case !ok:
			return nil, "", framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonCannotFitResource)
		}
	}
	if len(delegated) == 0 || x.claim.Status.Allocation != nil {
		return nil, "", nil
	}
	names := make([]string, len(delegated))
	for i, n := range delegated {
		names[i] = string(n)
	}
	set := strings.Join(names, ",")
	mu.Lock()
	defer mu.Unlock()
	if c, ok := x.byNode[set]; ok {
		return c.claim, c.key, nil
	}
	c := x.claim.DeepCopy()
	c.Spec.Devices.Requests = extendedRequests(pod, delegated, dra)
	if data, err := json.Marshal(c.Spec.Devices.Requests); err == nil {
		key = string(data)
	}
	if x.byNode == nil {
		x.byNode = map[string]nodeExtClaim{}
	}
	x.byNode[set] = nodeExtClaim{claim: c, key: key}
	return c, key, nil
}

// extendedRequests is kube-scheduler's createRequestsAndMappings without the
// mappings (they go into the pod's status, which is not written here): per
// resource, one request per long-lived container (regular and sidecar) for
// its amount, named container-<index>-request-<index of the resource among
// the container's sorted request names>, and one request for the largest
// short-lived init container's need beyond what the long-lived containers
// after it already hold; sorted by name.
func extendedRequests(pod *corev1.Pod, names []corev1.ResourceName, dra *framework.DRA) []resourcev1.DeviceRequest {
	containers := slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers)
	numInit := len(pod.Spec.InitContainers)
	isShortLived := func(i int) bool {
		return i < numInit && (containers[i].RestartPolicy == nil || *containers[i].RestartPolicy != corev1.ContainerRestartPolicyAlways)
	}
	var out []resourcev1.DeviceRequest
	for _, name := range slices.Sorted(slices.Values(names)) {
		class := dra.ExtendedResourceClass(name)
		if class == nil {
			continue
		}
		longLived := make([]*resourcev1.DeviceRequest, len(containers))
		for i := range containers {
			if !isShortLived(i) {
				longLived[i] = containerRequest(i, &containers[i], name, class.Name, nil)
			}
		}
		var maxShort *resourcev1.DeviceRequest
		for i := range containers {
			if !isShortLived(i) {
				continue
			}
			if r := containerRequest(i, &containers[i], name, class.Name, longLived[i:]); r != nil {
				if maxShort == nil || maxShort.Exactly.Count < r.Exactly.Count {
					maxShort = r
				}
			}
		}
		if maxShort != nil {
			out = append(out, *maxShort)
		}
		for _, r := range longLived {
			if r != nil {
				out = append(out, *r)
			}
		}
	}
	slices.SortFunc(out, func(a, b resourcev1.DeviceRequest) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// containerRequest is createResourceRequestAndMappings' request: the devices
// container i needs of name beyond those the reusable requests (long-lived
// containers after a short-lived init container) already hold; nil when
// none.
func containerRequest(i int, c *corev1.Container, name corev1.ResourceName, className string, reusable []*resourcev1.DeviceRequest) *resourcev1.DeviceRequest {
	q, ok := c.Resources.Requests[name]
	if !ok {
		return nil
	}
	want, ok := q.AsInt64()
	if !ok || want == 0 {
		return nil
	}
	var sum int64
	for _, r := range reusable {
		if r != nil {
			sum += r.Exactly.Count
			if sum >= want {
				return nil
			}
		}
	}
	keys := sets.List(sets.KeySet(c.Resources.Requests))
	return &resourcev1.DeviceRequest{
		Name: fmt.Sprintf("container-%d-request-%d", i, slices.Index(keys, name)),
		Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: className,
			AllocationMode:  resourcev1.DeviceAllocationModeExactCount,
			Count:           want - sum,
		},
	}
}

// extendedNames returns the pod's extended resource requests a class may
// back, sorted by name.
func extendedNames(requests map[corev1.ResourceName]int64) []corev1.ResourceName {
	return slices.Sorted(maps.Keys(requests))
}
