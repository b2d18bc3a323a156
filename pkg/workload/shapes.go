package workload

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// SplitShapes divides manifests into the gangs of a list of shapes
// (kubectl gang capacity): objects that make pods by themselves (a Job,
// a JobSet, a vcjob, ...) are each a shape of their own when there are
// several, and the objects that only serve them (ResourceClaimTemplates,
// ResourceClaims, training runtimes) go with every shape. Manifests with
// Pods or a PodGroup are one gang (the group and its pods belong
// together), as are manifests with one workload or a kind this build does
// not read (FromManifests then says why).
func SplitShapes(objs []*unstructured.Unstructured) [][]*unstructured.Unstructured {
	var workloads, serving []*unstructured.Unstructured
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		k := kindOf(gvk)
		switch {
		case k == nil, gvk == podGVK, schedule.IsPodGroup(gvk):
			return [][]*unstructured.Unstructured{objs}
		case k.makesNoPods:
			serving = append(serving, obj)
		default:
			workloads = append(workloads, obj)
		}
	}
	if len(workloads) < 2 {
		return [][]*unstructured.Unstructured{objs}
	}
	out := make([][]*unstructured.Unstructured, len(workloads))
	for i, w := range workloads {
		out[i] = append([]*unstructured.Unstructured{w}, serving...)
	}
	return out
}
