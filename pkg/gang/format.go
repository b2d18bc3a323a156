package gang

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// FormatTaint spells a taint as kubectl taint takes it: key=value:Effect,
// or key:Effect without a value.
func FormatTaint(t *corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

// FormatRequests prints a pod's requests briefly: scalar resources first
// (the scarce ones, such as GPUs), then cpu and memory.
func FormatRequests(pod *corev1.Pod) string {
	r := framework.ComputePodResource(pod).Resource
	var parts []string
	for _, name := range sortedKeys(r.ScalarResources) {
		if q := r.ScalarResources[name]; q > 0 {
			parts = append(parts, FormatQuantity(name, q)+" "+string(name))
		}
	}
	if r.MilliCPU > 0 {
		parts = append(parts, FormatQuantity(corev1.ResourceCPU, r.MilliCPU)+" cpu")
	}
	if r.Memory > 0 {
		parts = append(parts, FormatQuantity(corev1.ResourceMemory, r.Memory)+" memory")
	}
	if r.EphemeralStorage > 0 {
		parts = append(parts, FormatQuantity(corev1.ResourceEphemeralStorage, r.EphemeralStorage)+" ephemeral-storage")
	}
	for _, c := range pod.Spec.ResourceClaims {
		parts = append(parts, "claim "+c.Name)
	}
	if len(parts) == 0 {
		return "no requests"
	}
	return strings.Join(parts, ", ")
}

// FormatQuantity prints an amount of a resource the way a user writes it:
// whole cpus or millicpus, Gi for memory and storage, plain numbers else.
func FormatQuantity(name corev1.ResourceName, v int64) string {
	return formatQuantity(name, v)
}
