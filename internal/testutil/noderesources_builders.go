package testutil

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Containers replaces the pod's containers with one container per request
// list, in order; with none the pod has no containers at all, as the bare
// pods in kube-scheduler's own tests have (so no non-zero defaults apply).
func (w *PodWrapper) Containers(reqs ...Res) *PodWrapper {
	w.Spec.Containers = nil
	for i, r := range reqs {
		w.Spec.Containers = append(w.Spec.Containers, corev1.Container{
			Name:      fmt.Sprintf("c%d", i),
			Image:     "registry.k8s.io/pause:3.10",
			Resources: requirements(r),
		})
	}
	return w
}

// InitReq adds a (run-to-completion) init container with these requests.
func (w *PodWrapper) InitReq(r Res) *PodWrapper {
	w.Spec.InitContainers = append(w.Spec.InitContainers, corev1.Container{
		Name:      fmt.Sprintf("init%d", len(w.Spec.InitContainers)),
		Image:     "registry.k8s.io/pause:3.10",
		Resources: requirements(r),
	})
	return w
}

// SidecarReq adds a sidecar (an init container with restartPolicy Always)
// with these requests.
func (w *PodWrapper) SidecarReq(r Res) *PodWrapper {
	always := corev1.ContainerRestartPolicyAlways
	w.Spec.InitContainers = append(w.Spec.InitContainers, corev1.Container{
		Name:          fmt.Sprintf("sidecar%d", len(w.Spec.InitContainers)),
		Image:         "registry.k8s.io/pause:3.10",
		RestartPolicy: &always,
		Resources:     requirements(r),
	})
	return w
}

// Overhead sets the pod overhead a RuntimeClass would add.
func (w *PodWrapper) Overhead(r Res) *PodWrapper {
	w.Spec.Overhead = r.List()
	return w
}

// PodLevelReq sets pod-level requests (spec.resources.requests).
func (w *PodWrapper) PodLevelReq(r Res) *PodWrapper {
	w.Spec.Resources = &corev1.ResourceRequirements{Requests: r.List()}
	return w
}

// requirements are requests with an equal limit for extended resources, as
// the API server requires and Req does.
func requirements(r Res) corev1.ResourceRequirements {
	if len(r) == 0 {
		return corev1.ResourceRequirements{}
	}
	tmp := MakePod().Req(r)
	return tmp.Spec.Containers[0].Resources
}
