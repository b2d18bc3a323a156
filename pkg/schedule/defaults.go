package schedule

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// DefaultPod fills in, on a pod the API server has not seen (a manifest
// from -f, or a hand-made snapshot), the defaults the v1.37 API server
// gives every new Pod that scheduling reads: each container's requests
// default to its limits (SetDefaults_Pod; a GPU pod that sets only
// limits requests them), pod-level requests default from the
// containers' requests and the pod-level limits (DefaultPodLevelResources,
// PodLevelResources and PodLevelResourcesFixDefaulting on by default),
// schedulerName defaults to default-scheduler, a port's protocol to TCP,
// with hostNetwork each port's hostPort to its containerPort, and the
// phase to Pending (the pod strategy's PrepareForCreate). A pod
// the API server returned already has all of them: DefaultPod changes
// nothing there. See docs/design.md#snapshot.
func DefaultPod(pod *corev1.Pod) {
	spec := &pod.Spec
	for _, cs := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for i := range cs {
			DefaultContainer(&cs[i], spec.HostNetwork)
		}
	}
	defaultPodLevelRequests(pod)
	if spec.SchedulerName == "" {
		spec.SchedulerName = DefaultSchedulerName
	}
	// The pod strategy's PrepareForCreate starts every pod Pending: without
	// it, a hand-made pod's phase is unknown, and gang validity (Volcano's
	// task status) would not count it.
	if pod.Status.Phase == "" {
		pod.Status.Phase = corev1.PodPending
	}
}

// DefaultContainer is DefaultPod's part for one container of a pod with
// hostNetwork or without. It writes nothing to a container that already
// has its defaults, so containers that share their maps and slices (a
// binary snapshot's pods, docs/design.md#the-snapshot-file) may be
// defaulted on several goroutines at once.
func DefaultContainer(c *corev1.Container, hostNetwork bool) {
	if c.Resources.Limits != nil {
		if c.Resources.Requests == nil {
			c.Resources.Requests = corev1.ResourceList{}
		}
		for name, q := range c.Resources.Limits {
			if _, ok := c.Resources.Requests[name]; !ok {
				c.Resources.Requests[name] = q.DeepCopy()
			}
		}
	}
	for j := range c.Ports {
		p := &c.Ports[j]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if hostNetwork && p.HostPort == 0 && p.ContainerPort != 0 {
			p.HostPort = p.ContainerPort
		}
	}
}

// defaultPodLevelRequests is the requests part of the API server's
// DefaultPodLevelResources: when the pod sets pod-level resources, hugepage
// limits default to the containers' aggregated limits, and requests for
// cpu and memory to the containers' aggregated requests, then each
// supported pod-level limit without a request becomes the request.
func defaultPodLevelRequests(pod *corev1.Pod) {
	r := pod.Spec.Resources
	if r == nil || len(r.Requests)+len(r.Limits) == 0 {
		return
	}
	containers := &corev1.Pod{Spec: corev1.PodSpec{Containers: pod.Spec.Containers, InitContainers: pod.Spec.InitContainers}}
	limits := r.Limits
	if limits == nil {
		limits = corev1.ResourceList{}
	}
	for name, q := range resourcehelper.AggregateContainerLimits(containers, resourcehelper.PodResourcesOptions{}) {
		if !strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
			continue
		}
		if _, ok := r.Requests[name]; ok {
			continue
		}
		if _, ok := limits[name]; !ok {
			limits[name] = q
		}
	}
	if len(limits) > 0 {
		r.Limits = limits
	}
	requests := r.Requests
	if requests == nil {
		requests = corev1.ResourceList{}
	}
	for name, q := range resourcehelper.AggregateContainerRequests(containers, resourcehelper.PodResourcesOptions{}) {
		// Supported and overcommittable: cpu and memory, not hugepages.
		if _, ok := requests[name]; !ok && (name == corev1.ResourceCPU || name == corev1.ResourceMemory) {
			requests[name] = q
		}
	}
	for name, q := range r.Limits {
		if _, ok := requests[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) {
			requests[name] = q.DeepCopy()
		}
	}
	if len(requests) > 0 {
		r.Requests = requests
	}
}
