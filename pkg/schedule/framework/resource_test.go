package framework

import (
	"fmt"
	"math/rand/v2"
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
