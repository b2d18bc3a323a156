// Package dynamicresources is kube-scheduler v1.37's DynamicResources plugin
// on a snapshot (docs/design.md#dynamic-resource-allocation): a pod's
// ResourceClaims are looked up (or, for a claim its template has not produced
// yet, made from the ResourceClaimTemplate as the resourceclaim controller
// would), allocated claims confine the pod to the nodes their devices are on,
// and unallocated ones are allocated per node by k8s.io/dynamic-resource-
// allocation's structured allocator, the one kube-scheduler itself runs, with
// the allocator features v1.37's default gates turn on. Assume keeps the
// allocation of the node a pod is reserved on in the working copy, so gang
// members compete for devices. Extended resources a DeviceClass backs get
// the plugin's own claim (extended.go).
//
// DeviceTaintRules reach the plugin already applied to the slices
// (framework.TaintDevices).
//
// Not reproduced, and reported as not evaluated where they matter: a
// snapshot that could not list the resource.k8s.io kinds. Not reproduced
// silently: device binding conditions of claims allocated already, and the
// filter timeout (a slow allocation is not cut short here).
package dynamicresources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const (
	// Name is DynamicResources' name in profiles.
	Name = "DynamicResources"

	// NotEvaluatedReason starts the reason of the not-evaluated status
	// PreFilter returns (framework.NotEvaluated) for a pod with resource
	// claims when the snapshot could not read what allocating them needs.
	NotEvaluatedReason = "DynamicResources not evaluated"

	// The reasons kube-scheduler's plugin gives, word for word.
	ReasonCannotAllocate = "cannot allocate all claims"
	ReasonNotAvailable   = "resourceclaim not available on the node"
	ReasonInUse          = "resourceclaim in use"

	stateKey framework.StateKey = Name
)

// Features are the allocator features kube-scheduler v1.37 enables with its
// default feature gates (AllocatorFeatures): DRAAdminAccess (GA),
// DRAPrioritizedList (GA), DRAPartitionableDevices (beta), DRADeviceTaints
// (GA), DRADeviceBindingConditions with DRAResourceClaimDeviceStatus (beta,
// GA), DRAConsumableCapacity (beta) and DRAFractionalCapacityRange (beta);
// list-type attributes, optional node operations, derived attributes and
// compatibility groups are alpha, off.
var Features = structured.Features{
	AdminAccess:             true,
	PrioritizedList:         true,
	PartitionableDevices:    true,
	DeviceTaints:            true,
	DeviceBindingAndStatus:  true,
	ConsumableCapacity:      true,
	FractionalCapacityRange: true,
}

var (
	_ framework.PreBindChecker   = &DynamicResources{}
	_ framework.PreFilterPlugin  = &DynamicResources{}
	_ framework.FilterPlugin     = &DynamicResources{}
	_ framework.ScorePlugin      = &DynamicResources{}
	_ framework.ScoreExtensions  = &DynamicResources{}
	_ framework.AssumePlugin     = &DynamicResources{}
	_ framework.PostFilterPlugin = &DynamicResources{}
)

// DynamicResources allocates pods' resource claims.
type DynamicResources struct {
	framework.DefaultNormalizer
	handle   framework.Handle
	celCache *cel.Cache
}

// New builds the plugin from *configv1.DynamicResourcesArgs; nil args mean
// kube-scheduler v1.37's defaults. The args are validated as kube-scheduler
// validates them (DRASchedulerFilterTimeout, DRADeviceBindingConditions and
// DRAResourceClaimDeviceStatus on), though the timeouts have nothing to time
// here.
func New(args runtime.Object, h framework.Handle) (framework.Plugin, error) {
	if args != nil {
		typed, ok := args.(*configv1.DynamicResourcesArgs)
		if !ok {
			return nil, fmt.Errorf("got args of type %T, want *DynamicResourcesArgs", args)
		}
		if typed != nil {
			if err := validate(typed); err != nil {
				return nil, err
			}
		}
	}
	// kube-scheduler keeps the 10 most recent compiled CEL expressions;
	// a gang's members repeat a few, so more would not help.
	return &DynamicResources{handle: h, celCache: cel.NewCache(10, cel.Features{EnableConsumableCapacity: Features.ConsumableCapacity})}, nil
}

func validate(a *configv1.DynamicResourcesArgs) error {
	var errs field.ErrorList
	if a.FilterTimeout != nil && a.FilterTimeout.Duration < 0 {
		errs = append(errs, field.Invalid(field.NewPath("filterTimeout"), a.FilterTimeout, "must be zero or positive"))
	}
	if a.BindingTimeout != nil && a.BindingTimeout.Duration < time.Second {
		errs = append(errs, field.Invalid(field.NewPath("bindingTimeout"), a.BindingTimeout, "must be at least 1 second"))
	}
	return errs.ToAggregate()
}

// Name returns the plugin's name.
func (pl *DynamicResources) Name() string { return Name }

// stateData is what PreFilter finds out for Filter, Score and Assume.
type stateData struct {
	// claims are the pod's claims, in the order of pod.spec.resourceClaims
	// (those whose template produced no claim on purpose left out).
	claims []*resourcev1.ResourceClaim
	// availableOnNodes is, for an allocated claim, the node selector of its
	// allocation (nil: every node).
	availableOnNodes []*nodeaffinity.NodeSelector
	// allocator allocates the claims that are not allocated yet; nil when
	// all are.
	allocator structured.Allocator

	// memoKey names the claims to allocate (their specs) when a node's
	// outcome may be remembered (DRA.Memo); empty otherwise.
	memoKey string
	dra     *framework.DRA

	// unknownExtended, on a snapshot that cannot show devices, are the
	// pod's extended resources a DeviceClass may back: Filter returns
	// unknownStatus on a node that does not advertise one of them.
	unknownExtended []corev1.ResourceName
	unknownStatus   *framework.Status

	// numUser is how many of claims are the pod's own; ext, when set, is
	// the plugin's claim for the pod's extended resources (the last one).
	numUser int
	ext     *extendedState

	mu sync.Mutex
	// unavailableClaims are the indices (in claims) of allocated claims
	// some node could not use, for PostFilter.
	unavailableClaims sets.Set[int]
	// nodeAllocations holds, per feasible node, what Filter allocated.
	nodeAllocations map[string]nodeAllocation
}

// nodeAllocation is one node's outcome: the allocation of each unallocated
// claim (in claims order), and the node's version of the extended-resource
// claim (nil: the node's device plugin provides them all).
type nodeAllocation struct {
	allocations []resourcev1.AllocationResult
	extClaim    *resourcev1.ResourceClaim
}

// Clone returns the state itself, as kube-scheduler's does: Filter only adds
// per-node results, which any clone may share.
func (s *stateData) Clone() framework.StateData { return s }

// toAllocate returns the claims to allocate on a node, the plugin's
// extended-resource claim replaced by the node's version of it (extClaim)
// when there is one.
func (s *stateData) toAllocate(extClaim *resourcev1.ResourceClaim) []*resourcev1.ResourceClaim {
	var out []*resourcev1.ResourceClaim
	for i, c := range s.claims {
		if c.Status.Allocation == nil {
			if i >= s.numUser && extClaim != nil {
				c = extClaim
			}
			out = append(out, c)
		}
	}
	return out
}

// PreFilter finds the pod's claims and prepares their allocation.
func (pl *DynamicResources) PreFilter(ctx context.Context, cycleState *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	s := &stateData{nodeAllocations: map[string]nodeAllocation{}}
	cycleState.Write(stateKey, s)
	var dra *framework.DRA
	if pl.handle != nil {
		dra = pl.handle.DRA()
	}
	if dra == nil || dra.Empty() || len(dra.Unreadable()) > 0 {
		// A snapshot without any resource.k8s.io object (a file written
		// by kubectl get, or by an older build) cannot tell "none" from
		// "not read".
		if len(pod.Spec.ResourceClaims) == 0 {
			// Extended resources a class the snapshot cannot show
			// might back: not evaluated on the nodes that do not
			// advertise them, and only there.
			return nil, s.extendedUnknown(dra, pod)
		}
		return nil, framework.NotEvaluated(fmt.Sprintf("%s: resource claim(s) %s: %s, so device allocation is not evaluated",
			NotEvaluatedReason, claimNames(pod), unknownWhy(dra)))
	}
	if !dra.UsesDevices(pod) {
		return nil, framework.NewStatus(framework.Skip)
	}
	claims, st := podClaims(dra, pod)
	if st != nil {
		return nil, st
	}
	s.numUser = len(claims)
	s.dra = dra
	if requests := dra.ExtendedRequests(pod); requests != nil {
		x := &extendedState{names: extendedNames(requests)}
		for _, name := range x.names {
			x.backed = append(x.backed, dra.ExtendedResourceClass(name) != nil)
		}
		if c := dra.ExtendedResourceClaim(pod); c != nil {
			x.claim = c
		} else {
			x.claim, x.inMemory = newExtendedClaim(pod), true
		}
		s.ext = x
		claims = append(claims, x.claim)
	}
	if len(claims) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	s.claims = claims
	s.availableOnNodes = make([]*nodeaffinity.NodeSelector, len(claims))
	toAllocate := 0
	for i, claim := range claims {
		if claim.Status.Allocation != nil {
			if !resourceclaim.CanBeReserved(claim) && !framework.ReservedFor(claim, pod) {
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonInUse)
			}
			if sel := claim.Status.Allocation.NodeSelector; sel != nil {
				ns, err := nodeaffinity.NewNodeSelector(sel)
				if err != nil {
					return nil, framework.AsStatus(err)
				}
				s.availableOnNodes[i] = ns
			}
			continue
		}
		toAllocate++
		if i >= s.numUser {
			// The plugin's own claim for extended resources gets its
			// requests per node, in Filter.
			continue
		}
		for _, request := range claim.Spec.Devices.Requests {
			switch {
			case request.Exactly != nil:
				if st := validateDeviceClass(dra, request.Exactly.DeviceClassName, request.Name); st != nil {
					return nil, st
				}
			case len(request.FirstAvailable) > 0:
				for _, sub := range request.FirstAvailable {
					if st := validateDeviceClass(dra, sub.DeviceClassName, request.Name+"/"+sub.Name); st != nil {
						return nil, st
					}
				}
			default:
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable,
					fmt.Sprintf("resource claim %s/%s, request %s: unknown request type", claim.Namespace, claim.Name, request.Name))
			}
		}
	}
	if toAllocate > 0 {
		a, err := structured.NewAllocator(ctx, Features, dra.AllocatedState(), dra, dra.ResourceSlices(), pl.celCache)
		if err != nil {
			return nil, framework.AsStatus(err)
		}
		s.allocator = a
		if toAllocate == len(claims) {
			// Only the claims' specs matter to the allocator (not their
			// names): members of one template share outcomes. The
			// extended-resource claim's requests are added per node.
			specs := make([]resourcev1.ResourceClaimSpec, len(claims))
			for i, c := range claims {
				specs[i] = c.Spec
			}
			if data, err := json.Marshal(specs); err == nil {
				s.memoKey = string(data)
			}
		}
	}
	return nil, nil
}

// unknownWhy says why the snapshot cannot show the pod's devices.
func unknownWhy(dra *framework.DRA) string {
	if dra != nil && len(dra.Unreadable()) > 0 {
		return "the snapshot could not list " + strings.Join(dra.Unreadable(), ", ")
	}
	return "the snapshot holds no ResourceClaims, ResourceSlices or DeviceClasses"
}

// extendedUnknown prepares Filter for a pod without claims on a snapshot
// that cannot show devices: the extended resources a DeviceClass may back
// (DRA.MayBack) are not evaluated on the nodes that do not advertise them
// (no allocatable, so kube-scheduler's NodeResourcesFit would leave them to
// DynamicResources), while a node whose device plugin advertises them all is
// judged as kube-scheduler judges it, by NodeResourcesFit alone
// (shouldDelegateResourceToDRA). Skip when there are none. A claim an
// earlier cycle made for the pod's extended resources
// (status.extendedResourceClaimStatus), which the snapshot cannot show,
// keeps the whole pod not evaluated.
func (s *stateData) extendedUnknown(dra *framework.DRA, pod *corev1.Pod) *framework.Status {
	var names []corev1.ResourceName
	for name, q := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
		if !q.IsZero() && dra.MayBack(name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	slices.Sort(names)
	list := make([]string, len(names))
	for i, n := range names {
		list[i] = string(n)
	}
	if pod.Status.ExtendedResourceClaimStatus != nil {
		return framework.NotEvaluated(fmt.Sprintf("%s: the claim kube-scheduler made for extended resource(s) %s: %s, so device allocation is not evaluated",
			NotEvaluatedReason, strings.Join(list, ", "), unknownWhy(dra)))
	}
	s.unknownExtended = names
	// Short: kube-scheduler's "0/N nodes are available" message counts it.
	why := unknownWhy(dra)
	if dra != nil && slices.Contains(dra.Unreadable(), "deviceclasses.resource.k8s.io") {
		why = "DeviceClasses could not be listed"
	}
	s.unknownStatus = framework.NotEvaluatedOnNode(fmt.Sprintf("%s: node(s) did not advertise %s, which a DeviceClass may back there; %s",
		NotEvaluatedReason, strings.Join(list, ", "), why)).WithPlugin(Name)
	return nil
}

func claimNames(pod *corev1.Pod) string {
	names := make([]string, len(pod.Spec.ResourceClaims))
	for i, c := range pod.Spec.ResourceClaims {
		names[i] = fmt.Sprintf("%q", c.Name)
	}
	return strings.Join(names, ", ")
}

// podClaims returns the pod's claims, as kube-scheduler's
// foreachPodResourceClaim finds them. A claim its template has not produced
// yet (no entry in status.resourceClaimStatuses: a what-if, or a pod the
// resourceclaim controller has not got to) is the claim that controller
// would make (NewClaimFromTemplate), or this working copy's assumed version
// of it.
func podClaims(dra *framework.DRA, pod *corev1.Pod) ([]*resourcev1.ResourceClaim, *framework.Status) {
	var claims []*resourcev1.ResourceClaim
	for i := range pod.Spec.ResourceClaims {
		pc := &pod.Spec.ResourceClaims[i]
		name, mustCheckOwner, err := resourceclaim.Name(pod, pc)
		if errors.Is(err, resourceclaim.ErrClaimNotFound) {
			c, st := claimFromTemplate(dra, pod, pc)
			if st != nil {
				return nil, st
			}
			claims = append(claims, c)
			continue
		}
		if err != nil {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
		}
		if name == nil {
			// The template deliberately produced no claim.
			continue
		}
		claim, ok := dra.Claim(pod.Namespace, *name)
		if !ok {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable,
				fmt.Sprintf("resourceclaim.resource.k8s.io %q not found", *name))
		}
		if claim.DeletionTimestamp != nil {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("resourceclaim %q is being deleted", claim.Name))
		}
		if mustCheckOwner {
			if err := resourceclaim.IsForPod(pod, claim, false); err != nil {
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
			}
		}
		claims = append(claims, claim)
	}
	return claims, nil
}

// PodClaimAnnotation is the annotation the resourceclaim controller puts on
// a claim it makes from a template: the pod's name for the claim.
const PodClaimAnnotation = "resource.kubernetes.io/pod-claim-name"

// ClaimNameFromTemplate is the name given here to the claim a template will
// produce for a pod: the controller's generateName prefix without its random
// suffix (a stand-in: the real name ends in five random characters).
func ClaimNameFromTemplate(pod *corev1.Pod, podClaimName string) string {
	name := pod.Name + "-" + podClaimName
	if len(name) > 57 {
		name = name[:57]
	}
	return name
}

// claimFromTemplate makes the claim the resourceclaim controller would make
// for pod's claim pc from its ResourceClaimTemplate (the controller's
// handleClaim: the template's metadata and spec, the pod as controlling
// owner, the pod-claim-name annotation), unless this working copy assumed it
// already.
func claimFromTemplate(dra *framework.DRA, pod *corev1.Pod, pc *corev1.PodResourceClaim) (*resourcev1.ResourceClaim, *framework.Status) {
	name := ClaimNameFromTemplate(pod, pc.Name)
	if c, ok := dra.Claim(pod.Namespace, name); ok && isTemplateClaimOf(c, pod, pc.Name) {
		return c, nil
	}
	t, ok := dra.ClaimTemplate(pod.Namespace, *pc.ResourceClaimTemplateName)
	if !ok {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable,
			fmt.Sprintf("resourceclaimtemplate.resource.k8s.io %q not found", *pc.ResourceClaimTemplateName))
	}
	annotations := map[string]string{PodClaimAnnotation: pc.Name}
	for k, v := range t.Spec.Annotations {
		annotations[k] = v
	}
	c := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   pod.Namespace,
			UID:         types.UID("what-if/" + pod.Namespace + "/" + name),
			Labels:      t.Spec.Labels,
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: *t.Spec.Spec.DeepCopy(),
	}
	return c, nil
}

func isTemplateClaimOf(c *resourcev1.ResourceClaim, pod *corev1.Pod, podClaimName string) bool {
	ref := metav1.GetControllerOfNoCopy(c)
	return ref != nil && ref.Kind == "Pod" && ref.Name == pod.Name && ref.UID == pod.UID && c.Annotations[PodClaimAnnotation] == podClaimName
}

// validateDeviceClass is kube-scheduler's: a request without a class is an
// error, a class that does not exist keeps the pod off every node.
func validateDeviceClass(dra *framework.DRA, className, requestName string) *framework.Status {
	if className == "" {
		return framework.AsStatus(fmt.Errorf("request %s: unsupported request type", requestName))
	}
	if _, err := dra.Get(className); err != nil {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("request %s: device class %s does not exist", requestName, className))
	}
	return nil
}

// PreFilterExtensions returns nil: other pods do not change what the plugin
// computes (their claims do, through the working copy).
func (pl *DynamicResources) PreFilterExtensions() framework.PreFilterExtensions { return nil }

func getState(cycleState *framework.CycleState) (*stateData, error) {
	v, err := cycleState.Read(stateKey)
	if err != nil {
		return nil, fmt.Errorf("reading %q from cycleState: %w", stateKey, err)
	}
	s, ok := v.(*stateData)
	if !ok {
		return nil, fmt.Errorf("%q has type %T", stateKey, v)
	}
	return s, nil
}

// Filter checks that the pod's allocated claims are available on the node
// and that the others can be allocated there, and keeps that allocation.
func (pl *DynamicResources) Filter(ctx context.Context, cycleState *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getState(cycleState)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.unknownExtended != nil {
		for _, name := range s.unknownExtended {
			if nodeInfo.Allocatable.ScalarResources[name] <= 0 {
				return s.unknownStatus
			}
		}
		return nil
	}
	if len(s.claims) == 0 {
		return nil
	}
	extClaim, extKey, st := s.ext.nodeClaim(s.dra, pod, nodeInfo, &s.mu)
	if st != nil {
		return st
	}
	if extClaim == nil && s.numUser == 0 {
		// Only extended resources, which the node's device plugin
		// provides: NodeResourcesFit checked them.
		return nil
	}
	node := nodeInfo.Node()
	var unavailable []int
	for i := range s.claims {
		if sel := s.availableOnNodes[i]; sel != nil && !sel.Match(node) {
			unavailable = append(unavailable, i)
		}
	}
	var allocations []resourcev1.AllocationResult
	if s.allocator != nil {
		// A node whose devices are as they were when claims of the same
		// specs were tried on it gets the same outcome: the allocator is a
		// function of the claims, the node's slices and which of their
		// devices are held (DRA.NodeKey says when nothing else counts).
		nodeKey, memo := "", false
		claimsKey := s.memoKey
		if s.ext != nil {
			// The claim's requests on this node (none where the device
			// plugin provides the resources).
			claimsKey += "\x00" + extKey
		}
		if s.memoKey != "" {
			nodeKey, memo = s.dra.NodeKey(node.Name)
		}
		if memo {
			if r, ok := s.dra.Memo(claimsKey, node.Name, nodeKey); ok {
				if r.Failed != "" {
					return framework.NewStatus(framework.UnschedulableAndUnresolvable, r.Failed)
				}
				s.mu.Lock()
				s.nodeAllocations[node.Name] = nodeAllocation{allocations: r.Allocations, extClaim: extClaim} // read only: Assume copies
				s.mu.Unlock()
				return nil
			}
		}
		toAllocate := s.toAllocate(extClaim)
		result, err := s.allocator.Allocate(ctx, node, toAllocate)
		switch {
		case errors.Is(err, structured.ErrFailedAllocationOnNode):
			if memo {
				s.dra.Remember(claimsKey, node.Name, nodeKey, framework.MemoResult{Failed: err.Error()})
			}
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
		case ctx.Err() != nil:
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("asked by caller to stop allocating devices: %v", context.Cause(ctx)))
		case err != nil:
			return framework.AsStatus(err)
		}
		if len(result) != len(toAllocate) {
			if memo {
				s.dra.Remember(claimsKey, node.Name, nodeKey, framework.MemoResult{Failed: ReasonCannotAllocate})
			}
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonCannotAllocate)
		}
		allocations = result
		if memo && !sharesDevices(result) {
			s.dra.Remember(claimsKey, node.Name, nodeKey, framework.MemoResult{Allocations: result})
		}
	}
	if len(unavailable) > 0 {
		s.mu.Lock()
		if s.unavailableClaims == nil {
			s.unavailableClaims = sets.New[int]()
		}
		s.unavailableClaims.Insert(unavailable...)
		s.mu.Unlock()
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ReasonNotAvailable)
	}
	if s.allocator != nil {
		s.mu.Lock()
		s.nodeAllocations[node.Name] = nodeAllocation{allocations: allocations, extClaim: extClaim}
		s.mu.Unlock()
	}
	return nil
}

// sharesDevices reports an allocation of a share of a device (a share ID is
// made afresh per allocation, so it is not remembered).
func sharesDevices(allocations []resourcev1.AllocationResult) bool {
	for _, a := range allocations {
		for _, r := range a.Devices.Results {
			if r.ShareID != nil {
				return true
			}
		}
	}
	return false
}

// ReasonDeallocated is what kube-scheduler's PostFilter says when it
// deallocates a claim the pod could not use where it is allocated.
const ReasonDeallocated = "deallocation of ResourceClaim completed"

// PostFilter is kube-scheduler's, as a dry run: when the pod fits nowhere and
// one of its allocated claims was unavailable on some node and is reserved
// for nobody else, kube-scheduler deallocates it (so that the next attempt
// may allocate it elsewhere) and says so, and it deletes the claim an
// earlier cycle made for the pod's extended resources; nothing is changed
// here. Like
// kube-scheduler's, it fails with "not found" when PreFilter did not run
// (an earlier PreFilter plugin rejected the pod), which kube-scheduler
// reports in place of the preemption message.
func (pl *DynamicResources) PostFilter(_ context.Context, cycleState *framework.CycleState, pod *corev1.Pod, _ framework.NodeToStatus) (*framework.PostFilterResult, *framework.Status) {
	v, err := cycleState.Read(stateKey)
	if err != nil {
		return nil, framework.AsStatus(errors.New("not found"))
	}
	s, ok := v.(*stateData)
	if !ok || len(s.claims) == 0 {
		return nil, framework.NewStatus(framework.Unschedulable)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	staleExt := s.ext != nil && !s.ext.inMemory
	for _, i := range sets.List(s.unavailableClaims) {
		if i >= s.numUser {
			if staleExt {
				break
			}
			continue
		}
		c := s.claims[i]
		if r := c.Status.ReservedFor; len(r) == 0 || (len(r) == 1 && r[0].UID == pod.UID) {
			return nil, framework.NewStatus(framework.Unschedulable, ReasonDeallocated)
		}
	}
	if staleExt {
		// The claim an earlier cycle made for the pod's extended
		// resources: kube-scheduler deletes it and tries again.
		return nil, framework.NewStatus(framework.Unschedulable, ReasonDeleted)
	}
	return nil, framework.NewStatus(framework.Unschedulable)
}

// ReasonDeleted is what kube-scheduler's PostFilter says when it deletes the
// claim it made for the pod's extended resources in an earlier cycle.
const ReasonDeleted = "deletion of ResourceClaim completed"

// Score favours the nodes where a claim's prioritized alternatives
// (firstAvailable) got an earlier choice, as kube-scheduler's computeScore.
func (pl *DynamicResources) Score(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, err := getState(cycleState)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	if len(s.claims) == 0 {
		return 0, nil
	}
	s.mu.Lock()
	na, found := s.nodeAllocations[nodeInfo.Name()]
	s.mu.Unlock()
	if !found {
		return 0, nil
	}
	allocations := na.allocations
	var score int64
	next := 0
	for _, claim := range s.claims {
		allocation := claim.Status.Allocation
		if allocation == nil {
			if next >= len(allocations) {
				return 0, framework.AsStatus(fmt.Errorf("number of allocations %d is smaller than number of claims needing allocation", len(allocations)))
			}
			allocation = &allocations[next]
			next++
		}
		subRequests := sets.New[string]()
		for _, r := range allocation.Devices.Results {
			if resourceclaim.IsSubRequestRef(r.Request) {
				subRequests.Insert(r.Request)
			}
		}
		for _, req := range claim.Spec.Devices.Requests {
			for i, sub := range req.FirstAvailable {
				if subRequests.Has(resourceclaim.CreateSubRequestRef(req.Name, sub.Name)) {
					score += int64(resourcev1.FirstAvailableDeviceRequestMaxSize - i)
				}
			}
		}
	}
	return score, nil
}

var _ framework.RangeNormalizer = &DynamicResources{}

// ScoreExtensions returns the plugin itself: it normalizes its scores with
// the embedded DefaultNormalizer, as kube-scheduler's NormalizeScore does.
func (pl *DynamicResources) ScoreExtensions() framework.ScoreExtensions { return pl }

// Assume is Reserve for a working copy: it allocates the pod's claims on
// the node it is reserved on (the allocation the cycle's Filter found there:
// the allocator is deterministic) and records them, allocated and reserved
// for the pod, in the handle's DRA state. A pod without claims costs nothing.
func (pl *DynamicResources) Assume(ctx context.Context, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if pl.handle == nil || !pl.handle.DRA().UsesDevices(pod) {
		return nil
	}
	state := framework.NewCycleState()
	if _, st := pl.PreFilter(ctx, state, pod, nil); !st.IsSuccess() {
		if st.IsSkip() {
			return nil
		}
		return st
	}
	if st := pl.Filter(ctx, state, pod, nodeInfo); !st.IsSuccess() {
		return st
	}
	s, err := getState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	na := s.nodeAllocations[nodeInfo.Name()]
	dra := pl.handle.DRA()
	next := 0
	for i, claim := range s.claims {
		c := claim
		if c.Status.Allocation == nil {
			if i >= s.numUser && na.extClaim == nil && s.numUser == 0 {
				// The node's device plugin provides the extended
				// resources, and the pod has no claim of its own: Filter
				// allocated nothing.
				continue
			}
			if next >= len(na.allocations) {
				return framework.AsStatus(fmt.Errorf("%d allocations for more claims", len(na.allocations)))
			}
			allocation := &na.allocations[next]
			next++
			if i >= s.numUser {
				if na.extClaim == nil {
					// The node's device plugin provides the extended
					// resources: kube-scheduler makes no claim.
					continue
				}
				c = na.extClaim
			}
			c = c.DeepCopy()
			c.Status.Allocation = allocation
			if !slices.Contains(c.Finalizers, resourcev1.Finalizer) {
				c.Finalizers = append(c.Finalizers, resourcev1.Finalizer)
			}
		}
		dra.Assume(c, pod)
	}
	return nil
}

// PreBindCheck is kube-scheduler v1.37.1's PreBind outcome for a pod with
// claims of its own that also requests an extended resource a DeviceClass
// backs, on a node whose device plugin provides it: Filter allocates the
// plugin's claim with no requests there, and PreBind, having no request
// mappings to write into the pod's status, fails ("nil or empty request
// mappings"), so kube-scheduler never binds the pod to that node.
func (pl *DynamicResources) PreBindCheck(_ context.Context, cycleState *framework.CycleState, pod *corev1.Pod, nodeName string) *framework.Status {
	s, err := getState(cycleState)
	if err != nil || s.ext == nil || s.numUser == 0 || s.ext.claim.Status.Allocation != nil {
		return nil
	}
	s.mu.Lock()
	na, ok := s.nodeAllocations[nodeName]
	s.mu.Unlock()
	if ok && na.extClaim == nil {
		return framework.AsStatus(fmt.Errorf("nil or empty request mappings, no update of pod %s/%s ExtendedResourceClaimStatus", pod.Namespace, pod.Name))
	}
	return nil
}
