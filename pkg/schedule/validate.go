package schedule

import (
	"fmt"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// ValidateResources checks the resources of a pod no API server has seen (a
// manifest from -f, a workload's template, a pod of a hand-made snapshot) as
// the v1.37 API server checks them when the pod is created
// (validateResourceRequirements, validatePodResources and validateOverhead in
// k8s.io/kubernetes pkg/apis/core/validation), in every container, init
// container, the pod-level resources and the overhead: resource names, no
// quantity below zero, extended resources integral, a request no higher than
// its limit and, for resources that cannot be overcommitted (extended
// resources, hugepages), equal to it, hugepages in whole pages and only with
// cpu or memory, pod-level requests covering the containers'. Then one rule
// of our own (ValidateRange): every quantity within what kube-scheduler's
// int64 arithmetic counts. Such a pod cannot be created, or would make
// kube-scheduler compute with wrapped numbers, so no answer about it is
// sound. See docs/design.md#snapshot.
func ValidateResources(pod *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	for i := range pod.Spec.InitContainers {
		errs = append(errs, validateRequirements(&pod.Spec.InitContainers[i].Resources, containerResourceName, spec.Child("initContainers").Index(i).Child("resources"))...)
	}
	for i := range pod.Spec.Containers {
		errs = append(errs, validateRequirements(&pod.Spec.Containers[i].Resources, containerResourceName, spec.Child("containers").Index(i).Child("resources"))...)
	}
	if pod.Spec.Resources != nil {
		errs = append(errs, validatePodLevel(pod, spec)...)
	}
	if len(pod.Spec.Overhead) > 0 {
		errs = append(errs, validateRequirements(&corev1.ResourceRequirements{Limits: pod.Spec.Overhead}, containerResourceName, spec.Child("overhead"))...)
	}
	if len(errs) > 0 {
		return errs
	}
	return ValidateRange(pod)
}

// ValidateStoredResources checks a pod an API server stored already (one with
// a UID, read from a cluster or saved by `snapshot`) for what no API server
// release ever accepted: a negative quantity. The other rules of
// ValidateResources were added over the releases, and a pod an older server
// accepted still runs and still fills its node: refusing the snapshot for it
// would refuse a real cluster.
func ValidateStoredResources(pod *corev1.Pod) field.ErrorList {
	if !anyNegative(pod) {
		// The usual case, without building a path: loading a snapshot
		// checks every pod.
		return nil
	}
	var errs field.ErrorList
	spec := field.NewPath("spec")
	check := func(rl corev1.ResourceList, path *field.Path) {
		for _, name := range sortedResourceNames(rl) {
			if q := rl[name]; q.Sign() < 0 {
				errs = append(errs, field.Invalid(path.Key(string(name)), q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	for i := range pod.Spec.InitContainers {
		r := &pod.Spec.InitContainers[i].Resources
		path := spec.Child("initContainers").Index(i).Child("resources")
		check(r.Limits, path.Child("limits"))
		check(r.Requests, path.Child("requests"))
	}
	for i := range pod.Spec.Containers {
		r := &pod.Spec.Containers[i].Resources
		path := spec.Child("containers").Index(i).Child("resources")
		check(r.Limits, path.Child("limits"))
		check(r.Requests, path.Child("requests"))
	}
	if r := pod.Spec.Resources; r != nil {
		check(r.Limits, spec.Child("resources", "limits"))
		check(r.Requests, spec.Child("resources", "requests"))
	}
	check(pod.Spec.Overhead, spec.Child("overhead"))
	return errs
}

// anyNegative says whether a quantity ValidateStoredResources checks is
// below zero.
func anyNegative(pod *corev1.Pod) bool {
	negative := func(rl corev1.ResourceList) bool {
		for _, q := range rl {
			if q.Sign() < 0 {
				return true
			}
		}
		return false
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if negative(cs[i].Resources.Limits) || negative(cs[i].Resources.Requests) {
				return true
			}
		}
	}
	if r := pod.Spec.Resources; r != nil && (negative(r.Limits) || negative(r.Requests)) {
		return true
	}
	return negative(pod.Spec.Overhead)
}

// The largest quantities kube-scheduler counts without wrapping: cpu in
// milli-units, every other resource in units, each in an int64
// (framework.Resource, as upstream's).
var (
	maxMilliQuantity = resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI)
	maxQuantity      = resource.NewQuantity(math.MaxInt64, resource.DecimalSI)
)

// ValidateRange refuses a quantity, or a pod's total request of a resource,
// beyond what kube-scheduler counts in an int64 (cpu: 9223372036854775 cores,
// in millicores; the rest: 9223372036854775807). The API server accepts
// larger values, but kube-scheduler's sums then wrap around, and what it
// decides on them (a pod of 9223372036854775807 cores "fits" anywhere, a larger
// one fails with an invalid score) says nothing about the cluster.
func ValidateRange(pod *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	check := func(rl corev1.ResourceList, path *field.Path) {
		for _, name := range sortedResourceNames(rl) {
			q := rl[name]
			if max := maxFor(name); q.Cmp(*max) > 0 {
				errs = append(errs, field.Invalid(path.Key(string(name)), q.String(), outOfRange(name, max)))
			}
		}
	}
	spec := field.NewPath("spec")
	for i := range pod.Spec.InitContainers {
		path := spec.Child("initContainers").Index(i).Child("resources")
		check(pod.Spec.InitContainers[i].Resources.Requests, path.Child("requests"))
		check(pod.Spec.InitContainers[i].Resources.Limits, path.Child("limits"))
	}
	for i := range pod.Spec.Containers {
		path := spec.Child("containers").Index(i).Child("resources")
		check(pod.Spec.Containers[i].Resources.Requests, path.Child("requests"))
		check(pod.Spec.Containers[i].Resources.Limits, path.Child("limits"))
	}
	if r := pod.Spec.Resources; r != nil {
		check(r.Requests, spec.Child("resources", "requests"))
		check(r.Limits, spec.Child("resources", "limits"))
	}
	check(pod.Spec.Overhead, spec.Child("overhead"))
	if len(errs) > 0 {
		return errs
	}
	// Each quantity in range may still add up past it (Quantity sums are exact;
	// kube-scheduler's int64 sums are not).
	total := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	for _, name := range sortedResourceNames(total) {
		q := total[name]
		if max := maxFor(name); q.Cmp(*max) > 0 {
			errs = append(errs, field.Invalid(field.NewPath("spec", "containers[*]", "resources", "requests").Key(string(name)), q.String(),
				"the pod's requests add up to more than kube-scheduler counts: "+outOfRange(name, max)))
		}
	}
	return errs
}

func maxFor(name corev1.ResourceName) *resource.Quantity {
	if name == corev1.ResourceCPU {
		return maxMilliQuantity
	}
	return maxQuantity
}

func outOfRange(name corev1.ResourceName, max *resource.Quantity) string {
	unit := "units"
	if name == corev1.ResourceCPU {
		unit = "millicores"
	}
	return fmt.Sprintf("must be at most %s, the most kube-scheduler counts in an int64 of %s (the API server accepts more; kube-scheduler's sums overflow)", max.String(), unit)
}

// validateRequirements is the API server's validateResourceRequirements.
// Errors name the resource's key where upstream names only the map, so that
// one line says which field is wrong.
func validateRequirements(r *corev1.ResourceRequirements, nameFn func(corev1.ResourceName, *field.Path) field.ErrorList, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	limPath, reqPath := path.Child("limits"), path.Child("requests")
	var cpuOrMemory, hugePages bool
	for _, name := range sortedResourceNames(r.Limits) {
		q := r.Limits[name]
		p := limPath.Key(string(name))
		errs = append(errs, nameFn(name, p)...)
		errs = append(errs, validateQuantity(name, q, p)...)
		if framework.IsHugePageResourceName(name) {
			hugePages = true
			errs = append(errs, validateHugePages(name, q, p)...)
		}
		cpuOrMemory = cpuOrMemory || name == corev1.ResourceCPU || name == corev1.ResourceMemory
	}
	for _, name := range sortedResourceNames(r.Requests) {
		q := r.Requests[name]
		p := reqPath.Key(string(name))
		errs = append(errs, nameFn(name, p)...)
		errs = append(errs, validateQuantity(name, q, p)...)
		if limit, ok := r.Limits[name]; ok {
			// Resources that cannot be overcommitted need request == limit.
			if q.Cmp(limit) != 0 && !overcommitAllowed(name) {
				errs = append(errs, field.Invalid(p, q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
			} else if q.Cmp(limit) > 0 {
				errs = append(errs, field.Invalid(p, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
			}
		} else if !overcommitAllowed(name) {
			errs = append(errs, field.Required(limPath.Key(string(name)), "Limit must be set for non overcommitable resources"))
		}
		if framework.IsHugePageResourceName(name) {
			hugePages = true
			errs = append(errs, validateHugePages(name, q, p)...)
		}
		cpuOrMemory = cpuOrMemory || name == corev1.ResourceCPU || name == corev1.ResourceMemory
	}
	if hugePages && !cpuOrMemory {
		errs = append(errs, field.Forbidden(path, "HugePages require cpu or memory"))
	}
	for i, c := range r.Claims {
		if c.Name == "" {
			errs = append(errs, field.Required(path.Child("claims").Index(i), ""))
		}
	}
	return errs
}

// validateQuantity is the API server's ValidateResourceQuantityValue.
func validateQuantity(name corev1.ResourceName, q resource.Quantity, path *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(path, q.String(), "must be greater than or equal to 0")}
	}
	if integerResource(name) && q.MilliValue()%1000 != 0 {
		return field.ErrorList{field.Invalid(path, q.String(), "must be an integer")}
	}
	return nil
}

// validateHugePages is the API server's validateResourceQuantityHugePageValue
// on create (no indivisible values allowed).
func validateHugePages(name corev1.ResourceName, q resource.Quantity, path *field.Path) field.ErrorList {
	page, err := resource.ParseQuantity(strings.TrimPrefix(string(name), corev1.ResourceHugePagesPrefix))
	if err != nil || page.Sign() <= 0 || page.MilliValue()%1000 != 0 || q.Value()%page.Value() != 0 {
		return field.ErrorList{field.Invalid(path, q.String(), fmt.Sprintf("%s is not positive integer multiple of %s", q.String(), name))}
	}
	return nil
}

// validatePodLevel is the API server's validatePodResources with
// validatePodResourceConsistency.
func validatePodLevel(pod *corev1.Pod, spec *field.Path) field.ErrorList {
	r := pod.Spec.Resources
	path := spec.Child("resources")
	if len(r.Requests)+len(r.Limits)+len(r.Claims) == 0 {
		return nil
	}
	if pod.Spec.OS != nil && pod.Spec.OS.Name == corev1.Windows {
		return field.ErrorList{field.Forbidden(path, "may not be set for a windows pod")}
	}
	var errs field.ErrorList
	if r.Claims != nil {
		errs = append(errs, field.Forbidden(path.Child("claims"), "claims may not be set for Resources at pod-level"))
	}
	errs = append(errs, validateRequirements(r, podLevelResourceName, path)...)
	if len(errs) > 0 {
		return errs
	}
	containers := &corev1.Pod{Spec: corev1.PodSpec{Containers: pod.Spec.Containers, InitContainers: pod.Spec.InitContainers}}
	requests := resourcehelper.AggregateContainerRequests(containers, resourcehelper.PodResourcesOptions{})
	for _, name := range sortedResourceNames(requests) {
		podLevel, ok := r.Requests[name]
		if ctr := requests[name]; ok && ctr.Cmp(podLevel) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), podLevel.String(),
				fmt.Sprintf("must be greater than or equal to aggregate container requests of %s", ctr.String())))
		}
	}
	limits := resourcehelper.AggregateContainerLimits(containers, resourcehelper.PodResourcesOptions{})
	for _, name := range sortedResourceNames(limits) {
		podLevel, ok := r.Limits[name]
		if ctr := limits[name]; ok && framework.IsHugePageResourceName(name) && ctr.Cmp(podLevel) > 0 {
			errs = append(errs, field.Invalid(path.Child("limits").Key(string(name)), podLevel.String(),
				fmt.Sprintf("must be greater than or equal to aggregate container limits of %s", ctr.String())))
		}
	}
	for i, c := range pod.Spec.Containers {
		for _, name := range sortedResourceNames(c.Resources.Limits) {
			podLevel, ok := r.Limits[name]
			if ctr := c.Resources.Limits[name]; ok && ctr.Cmp(podLevel) > 0 {
				errs = append(errs, field.Invalid(spec.Child("containers").Index(i).Child("resources", "limits").Key(string(name)), ctr.String(),
					fmt.Sprintf("must be less than or equal to pod limits of %s", podLevel.String())))
			}
		}
	}
	return errs
}

// standardContainerResources are the unprefixed names a container may
// request (besides hugepages-<size>).
var standardContainerResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)

// standardResources are the API server's IsStandardResourceName: the
// unprefixed names any resource list may hold.
var standardResources = sets.New(
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
	corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
	corev1.ResourceSecrets, corev1.ResourcePersistentVolumeClaims, corev1.ResourceConfigMaps,
	corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
)

// integerResources are the unprefixed names of the API server's
// IsIntegerResourceName; every extended resource is one too.
var integerResources = sets.New(
	corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
	corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
	corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
)

func integerResource(name corev1.ResourceName) bool {
	return integerResources.Has(name) || framework.IsExtendedResourceName(name)
}

// overcommitAllowed is the API server's IsOvercommitAllowed: native
// resources other than hugepages.
func overcommitAllowed(name corev1.ResourceName) bool {
	return framework.IsNativeResource(name) && !framework.IsHugePageResourceName(name)
}

// resourceName is the API server's validateResourceName.
func resourceName(name corev1.ResourceName, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if !strings.Contains(string(name), "/") && !standardResources.Has(name) && !quotaHugePages(name) {
		errs = append(errs, field.Invalid(path, name, "must be a standard resource type or fully qualified"))
	}
	return errs
}

// quotaHugePages is the API server's IsQuotaHugePageResourceName.
func quotaHugePages(name corev1.ResourceName) bool {
	return framework.IsHugePageResourceName(name) || strings.HasPrefix(string(name), corev1.ResourceRequestsHugePagesPrefix)
}

// containerResourceName is the API server's ValidateContainerResourceName.
func containerResourceName(name corev1.ResourceName, path *field.Path) field.ErrorList {
	errs := resourceName(name, path)
	if !strings.Contains(string(name), "/") {
		if !standardContainerResources.Has(name) && !framework.IsHugePageResourceName(name) {
			errs = append(errs, field.Invalid(path, name, "must be a standard resource for containers"))
		}
	} else if !framework.IsNativeResource(name) && !framework.IsExtendedResourceName(name) {
		errs = append(errs, field.Invalid(path, name, "doesn't follow extended resource name standard"))
	}
	return errs
}

// podLevelResourceName is the API server's validatePodResourceName.
func podLevelResourceName(name corev1.ResourceName, path *field.Path) field.ErrorList {
	if errs := resourceName(name, path); len(errs) > 0 {
		return errs
	}
	if !resourcehelper.IsSupportedPodLevelResource(name) {
		return field.ErrorList{field.NotSupported(path, name, sets.List(resourcehelper.SupportedPodLevelResources()))}
	}
	return nil
}

func sortedResourceNames(rl corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(rl))
	for name := range rl {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
