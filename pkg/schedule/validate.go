package schedule

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateResources checks a pod's requests and limits as the API server
// validates them (ValidateResourceRequirements): no quantity below zero,
// no request above its limit, in every container, init container and the
// pod-level resources. Pods read from a live cluster always pass; a
// hand-made manifest or snapshot may not, and a negative request would
// otherwise reach the scorers as an impossible score.
func ValidateResources(pod *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	for i := range pod.Spec.InitContainers {
		errs = append(errs, validateRequirements(&pod.Spec.InitContainers[i].Resources, spec.Child("initContainers").Index(i).Child("resources"))...)
	}
	for i := range pod.Spec.Containers {
		errs = append(errs, validateRequirements(&pod.Spec.Containers[i].Resources, spec.Child("containers").Index(i).Child("resources"))...)
	}
	if pod.Spec.Resources != nil {
		errs = append(errs, validateRequirements(pod.Spec.Resources, spec.Child("resources"))...)
	}
	for name, q := range pod.Spec.Overhead {
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(spec.Child("overhead").Key(string(name)), q.String(), "must be greater than or equal to 0"))
		}
	}
	return errs
}

func validateRequirements(r *corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedResourceNames(r.Limits) {
		if q := r.Limits[name]; q.Sign() < 0 {
			errs = append(errs, field.Invalid(path.Child("limits").Key(string(name)), q.String(), "must be greater than or equal to 0"))
		}
	}
	for _, name := range sortedResourceNames(r.Requests) {
		q := r.Requests[name]
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), q.String(), "must be greater than or equal to 0"))
			continue
		}
		if limit, ok := r.Limits[name]; ok && q.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), q.String(),
				fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		}
	}
	return errs
}

func sortedResourceNames(rl corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(rl))
	for name := range rl {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
