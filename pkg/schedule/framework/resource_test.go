package framework

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// TestComputePodResourceSkipsOnlyWhatChangesNothing checks the shortcut in
// ComputePodResource against the full component-helpers computation on
// random pods: containers and init containers with and without cpu and
// memory requests, pod-level requests, and status resources.
func TestComputePodResourceSkipsOnlyWhatChangesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	maybe := func(rl corev1.ResourceList, name corev1.ResourceName, q string) {
		if rng.IntN(4) > 0 {
			rl[name] = resource.MustParse(q)
		}
	}
	for i := range 2000 {
		pod := &corev1.Pod{}
		for c := range 1 + rng.IntN(3) {
			rl := corev1.ResourceList{}
			maybe(rl, corev1.ResourceCPU, fmt.Sprintf("%dm", 50+rng.IntN(4000)))
			maybe(rl, corev1.ResourceMemory, fmt.Sprintf("%dMi", 10+rng.IntN(4000)))
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: fmt.Sprint("c", c), Resources: corev1.ResourceRequirements{Requests: rl}})
		}
		if rng.IntN(3) == 0 {
			rl := corev1.ResourceList{}
			maybe(rl, corev1.ResourceCPU, "2")
			maybe(rl, corev1.ResourceMemory, "3Gi")
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: "init", Resources: corev1.ResourceRequirements{Requests: rl}})
		}
		if rng.IntN(4) == 0 {
			pod.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{}}
			maybe(pod.Spec.Resources.Requests, corev1.ResourceCPU, "5")
			maybe(pod.Spec.Resources.Requests, corev1.ResourceMemory, "9Gi")
		}
		if rng.IntN(5) == 0 {
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", AllocatedResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}}
		}
		got := ComputePodResource(pod)

		requests := resourcehelper.PodRequests(pod, podRequestOptions)
		opts := podRequestOptions
		opts.NonMissingContainerRequests = nonMissingContainerRequests(requests, resourcehelper.IsPodLevelRequestsSet(pod))
		non0 := requests
		if len(opts.NonMissingContainerRequests) > 0 {
			non0 = resourcehelper.PodRequests(pod, opts)
		}
		cpu, mem := non0[corev1.ResourceCPU], non0[corev1.ResourceMemory]
		if got.Non0CPU != cpu.MilliValue() || got.Non0Mem != mem.Value() {
			t.Fatalf("pod %d: non-zero cpu %d mem %d, full computation %d %d\n%+v", i, got.Non0CPU, got.Non0Mem, cpu.MilliValue(), mem.Value(), pod.Spec)
		}
	}
}

// TestComputePodResourceOneContainer checks the one-container shortcut
// against the full component-helpers computation, on random pods with one
// or two containers, extended resources, fractional quantities, overhead,
// pod-level requests, status resources and an infeasible resize: the
// requests and the non-zero figures are the same, and the shortcut is
// taken where it applies.
func TestComputePodResourceOneContainer(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 29))
	maybe := func(rl corev1.ResourceList, name corev1.ResourceName, q string) {
		if rng.IntN(5) > 0 {
			rl[name] = resource.MustParse(q)
		}
	}
	shortcuts := 0
	for i := range 3000 {
		pod := &corev1.Pod{}
		for c := range 1 + rng.IntN(2) {
			rl := corev1.ResourceList{}
			maybe(rl, corev1.ResourceCPU, []string{"100m", "0.0001", "1.5", "32"}[rng.IntN(4)])
			maybe(rl, corev1.ResourceMemory, []string{"1Gi", "1.5Mi", "400Gi", "1k"}[rng.IntN(4)])
			maybe(rl, "nvidia.com/gpu", "4")
			maybe(rl, corev1.ResourceEphemeralStorage, "10Gi")
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: fmt.Sprint("c", c), Resources: corev1.ResourceRequirements{Requests: rl}})
		}
		switch rng.IntN(12) {
		case 0:
			pod.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
		case 1:
			pod.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("40")}}
		case 2:
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")}}}}
		case 3:
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", AllocatedResources: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("800Gi")}}}
		case 4:
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible}}
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}
		case 6:
			pod.Status.AllocatedResources = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("70")}
			pod.Status.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("70")}}
		case 5:
			pod.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50")}}}}
		}
		if oneContainerRequestsOnly(pod) {
			shortcuts++
		}
		got, want := ComputePodResource(pod), computePodResource(pod)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("pod %d: got %+v (%+v), full computation %+v (%+v)\n%+v\n%+v", i, got, *got.Resource, want, *want.Resource, pod.Spec, pod.Status)
		}
	}
	if shortcuts < 300 {
		t.Errorf("the shortcut was taken for %d pods of 3000, want it to apply to many", shortcuts)
	}
}
