package dynamicresources

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// RequestFit is how one device request of a pod's claim does on a node, for
// explain: kube-scheduler's reason ("cannot allocate all claims") names no
// request.
type RequestFit struct {
	// Claim is the claim's name, Request the request's (request/sub-request
	// for an alternative of firstAvailable), Class its DeviceClass.
	Claim, Request, Class string
	// Wanted is how many devices the request asks for; 0 means all that
	// match (allocationMode All).
	Wanted int64
	// Alternative marks one of a request's prioritized alternatives
	// (firstAvailable): the allocator needs only one of them.
	Alternative bool
	// Matching is how many devices the node can use (its own slices and
	// those of pools its node selector or allNodes reaches) match the
	// class's and the request's selectors; Free how many of those no
	// allocated claim holds and no taint the request does not tolerate
	// (NoSchedule, NoExecute; from the slice or a DeviceTaintRule) keeps
	// from it; Tainted how many of the matching ones such a taint keeps.
	Matching, Free, Tainted int
}

// String words the fit briefly, for a table cell: "gpus: 8 gpu.example.com
// wanted, 2 of 4 free" (the request's name; all: every matching device).
func (f RequestFit) String() string {
	wanted := fmt.Sprint(f.Wanted)
	if f.Wanted == 0 {
		wanted = "all"
	}
	s := fmt.Sprintf("%s: %s %s wanted, %d of %d free", f.Request, wanted, f.Class, f.Free, f.Matching)
	if f.Tainted > 0 {
		s += fmt.Sprintf(" (%d tainted)", f.Tainted)
	}
	return s
}

// Short reports whether the node lacks devices for the request.
func (f RequestFit) Short() bool {
	if f.Wanted == 0 {
		return f.Matching == 0 || f.Free < f.Matching
	}
	return int64(f.Free) < f.Wanted
}

// DeviceFit counts, for each request of pod's claims that are not
// allocated yet, the devices node offers that match and are free. It
// evaluates the CEL selectors as the allocator does but leaves out what
// only the allocator weighs (constraints across requests, counters of
// partitionable devices, consumable capacity, incomplete pools): a
// diagnosis, not an allocation. Claims it cannot find are left out.
func (pl *DynamicResources) DeviceFit(ctx context.Context, pod *corev1.Pod, node *corev1.Node) []RequestFit {
	if pl.handle == nil || !pl.handle.DRA().UsesDevices(pod) {
		return nil
	}
	dra := pl.handle.DRA()
	claims, st := podClaims(dra, pod)
	if st != nil {
		claims = nil
	}
	type candidate struct {
		driver string
		dev    *resourcev1.Device
		id     structured.DeviceID
	}
	var devices []candidate
	for _, rs := range dra.SlicesFor(node) {
		for i := range rs.Spec.Devices {
			d := &rs.Spec.Devices[i]
			devices = append(devices, candidate{driver: rs.Spec.Driver, dev: d, id: structured.MakeDeviceID(rs.Spec.Driver, rs.Spec.Pool.Name, d.Name)})
		}
	}
	held := dra.AllocatedState().AllocatedDevices
	matches := func(selectors []resourcev1.DeviceSelector, c candidate) bool {
		return framework.SelectorsMatch(ctx, pl.celCache, selectors, c.driver, c.dev)
	}
	// tainted is the allocator's taintPreventsAllocation.
	tainted := func(d *resourcev1.Device, tolerations []resourcev1.DeviceToleration) bool {
		for _, taint := range d.Taints {
			if taint.Effect != resourcev1.DeviceTaintEffectNoSchedule && taint.Effect != resourcev1.DeviceTaintEffectNoExecute {
				continue
			}
			if !slices.ContainsFunc(tolerations, func(t resourcev1.DeviceToleration) bool { return resourceclaim.ToleratesTaint(t, taint) }) {
				return true
			}
		}
		return false
	}
	fit := func(claim, request, className string, selectors []resourcev1.DeviceSelector, tolerations []resourcev1.DeviceToleration, mode resourcev1.DeviceAllocationMode, count int64) RequestFit {
		f := RequestFit{Claim: claim, Request: request, Class: className, Wanted: count}
		if mode == resourcev1.DeviceAllocationModeAll {
			f.Wanted = 0
		}
		class, err := dra.Get(className)
		if err != nil {
			return f
		}
		for _, c := range devices {
			if matches(class.Spec.Selectors, c) && matches(selectors, c) {
				f.Matching++
				switch {
				case tainted(c.dev, tolerations):
					f.Tainted++
				case !held.Has(c.id):
					f.Free++
				}
			}
		}
		return f
	}
	var out, ext []RequestFit
	if c := dra.ExtendedResourceClaim(pod); c == nil || c.Status.Allocation == nil {
		// The extended resources the node leaves to DRA, one line each
		// ("nvidia.com/gpu: 8 gpu.nvidia.com wanted, ..."), however many
		// containers' requests kube-scheduler's claim splits them into.
		requests := dra.ExtendedRequests(pod)
		for _, name := range extendedNames(requests) {
			class := dra.ExtendedResourceClass(name)
			if class == nil || !node.Status.Allocatable.Name(name, resource.DecimalSI).IsZero() {
				continue
			}
			var wanted int64
			for _, r := range extendedRequests(pod, []corev1.ResourceName{name}, dra) {
				wanted += r.Exactly.Count
			}
			ext = append(ext, fit(ExtendedClaimName(pod), string(name), class.Name, nil, nil, resourcev1.DeviceAllocationModeExactCount, wanted))
		}
	}
	for _, claim := range claims {
		if claim.Status.Allocation != nil {
			continue
		}
		for _, r := range claim.Spec.Devices.Requests {
			switch {
			case r.Exactly != nil:
				out = append(out, fit(claim.Name, r.Name, r.Exactly.DeviceClassName, r.Exactly.Selectors, r.Exactly.Tolerations, r.Exactly.AllocationMode, r.Exactly.Count))
			default:
				for _, sub := range r.FirstAvailable {
					f := fit(claim.Name, r.Name+"/"+sub.Name, sub.DeviceClassName, sub.Selectors, sub.Tolerations, sub.AllocationMode, sub.Count)
					f.Alternative = true
					out = append(out, f)
				}
			}
		}
	}
	return append(out, ext...)
}
