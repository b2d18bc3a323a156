package explain

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// quantityOf is a container's request of one resource in the units
// gang.FormatQuantity takes (millicores for cpu).
func quantityOf(c *corev1.Container, name corev1.ResourceName) int64 {
	q, ok := c.Resources.Requests[name]
	if !ok {
		return 0
	}
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// initContainerSets names the init container whose request of name sets
// the pod's, when one does: the pod's request is the larger of the sum of
// its containers (sidecars included) and each init container's request
// plus the sidecars started before it, as kube computes it
// (k8s.io/component-helpers/resource PodRequests). It returns "" when the
// containers' sum is at least as large.
func initContainerSets(pod *corev1.Pod, name corev1.ResourceName) string {
	top, _, sum := setter(pod, name)
	if top == nil {
		return ""
	}
	return fmt.Sprintf("init container %s asks %s %s, which sets the pod's request (the largest init container or the sum of the containers, here %s %s)",
		top.Name, gang.FormatQuantity(name, quantityOf(top, name)), name, gang.FormatQuantity(name, sum), name)
}

// initContainerSetting is the name of the init container initContainerSets
// names, "" when none.
func initContainerSetting(pod *corev1.Pod, name corev1.ResourceName) string {
	if top, _, _ := setter(pod, name); top != nil {
		return top.Name
	}
	return ""
}

// setter is the init container whose request of name (with the sidecars
// started before it) exceeds sum, the containers' and sidecars'; nil when
// none does.
func setter(pod *corev1.Pod, name corev1.ResourceName) (*corev1.Container, int64, int64) {
	var sum, sidecars int64
	for i := range pod.Spec.Containers {
		sum += quantityOf(&pod.Spec.Containers[i], name)
	}
	var top *corev1.Container
	var topAmount int64
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars += quantityOf(c, name)
			sum += quantityOf(c, name)
			continue
		}
		if a := quantityOf(c, name) + sidecars; a > topAmount {
			top, topAmount = c, a
		}
	}
	if top == nil || topAmount <= sum {
		return nil, 0, sum
	}
	return top, topAmount, sum
}

// setByInit says, for the resources named, which init containers set the
// pod's request: "" when none does.
func setByInit(pod *corev1.Pod, names []corev1.ResourceName) string {
	out := ""
	for _, name := range names {
		if w := initContainerSets(pod, name); w != "" {
			out += "; " + w
		}
	}
	return out
}

// SetByInit names, per resource the pod requests, the init container
// whose request sets the pod's (initContainerSets), as "cpu set by init
// container prepare"; nil when the containers set every one.
func SetByInit(pod *corev1.Pod) []string {
	var out []string
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		if c := initContainerSetting(pod, name); c != "" {
			out = append(out, fmt.Sprintf("%s set by init container %s", name, c))
		}
	}
	return out
}
