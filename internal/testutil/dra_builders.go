package testutil

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// MakeDeviceClass returns a DeviceClass selecting driver's devices by CEL,
// as a driver's documented class does; extra are more selectors.
func MakeDeviceClass(name, driver string, extra ...string) *resourcev1.DeviceClass {
	c := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, expr := range append([]string{fmt.Sprintf("device.driver == %q", driver)}, extra...) {
		c.Spec.Selectors = append(c.Spec.Selectors, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: expr}})
	}
	return c
}

// Device is one device of a slice: its name, string attributes and capacities.
type Device struct {
	Name     string
	Attrs    map[string]string
	Capacity Res
}

// MakeNodeSlice returns the ResourceSlice a driver publishes for node: one
// pool named after the node, generation 1, one slice.
func MakeNodeSlice(node, driver string, devices ...Device) *resourcev1.ResourceSlice {
	s := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-" + driver},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   driver,
			NodeName: ptr.To(node),
			Pool:     resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
		},
	}
	for _, d := range devices {
		dev := resourcev1.Device{Name: d.Name}
		if len(d.Attrs) > 0 {
			dev.Attributes = map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{}
			for k, v := range d.Attrs {
				dev.Attributes[resourcev1.QualifiedName(k)] = resourcev1.DeviceAttribute{StringValue: ptr.To(v)}
			}
		}
		if len(d.Capacity) > 0 {
			dev.Capacity = map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{}
			for k, v := range d.Capacity {
				dev.Capacity[resourcev1.QualifiedName(k)] = resourcev1.DeviceCapacity{Value: resource.MustParse(v)}
			}
		}
		s.Spec.Devices = append(s.Spec.Devices, dev)
	}
	return s
}

// Devices returns n devices named prefix0, prefix1, ... with attrs.
func Devices(prefix string, n int, attrs map[string]string) []Device {
	out := make([]Device, n)
	for i := range out {
		out[i] = Device{Name: fmt.Sprintf("%s%d", prefix, i), Attrs: attrs}
	}
	return out
}

// ExactRequest is a device request for count devices of class, with CEL
// selectors.
func ExactRequest(name, class string, count int64, selectors ...string) resourcev1.DeviceRequest {
	r := resourcev1.DeviceRequest{Name: name, Exactly: &resourcev1.ExactDeviceRequest{
		DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: count,
	}}
	for _, expr := range selectors {
		r.Exactly.Selectors = append(r.Exactly.Selectors, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: expr}})
	}
	return r
}

// MakeClaimTemplate returns a ResourceClaimTemplate with requests.
func MakeClaimTemplate(namespace, name string, requests ...resourcev1.DeviceRequest) *resourcev1.ResourceClaimTemplate {
	return &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: requests}}},
	}
}

// MakeClaim returns a ResourceClaim with requests, not allocated.
func MakeClaim(namespace, name string, requests ...resourcev1.DeviceRequest) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-claim-" + namespace + "-" + name)},
		Spec:       resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: requests}},
	}
}

// ClaimTemplate gives the pod a claim made from a ResourceClaimTemplate.
func (w *PodWrapper) ClaimTemplate(podClaim, template string) *PodWrapper {
	w.Spec.ResourceClaims = append(w.Spec.ResourceClaims, corev1.PodResourceClaim{Name: podClaim, ResourceClaimTemplateName: ptr.To(template)})
	return w
}

// Claim gives the pod an existing ResourceClaim.
func (w *PodWrapper) Claim(podClaim, claim string) *PodWrapper {
	w.Spec.ResourceClaims = append(w.Spec.ResourceClaims, corev1.PodResourceClaim{Name: podClaim, ResourceClaimName: ptr.To(claim)})
	return w
}
