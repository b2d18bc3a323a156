// Package queuesort is kube-scheduler's PrioritySort plugin: pending pods in
// order of priority, then of the time they entered the queue. It also holds
// Compare, the total order kubectl-gang prints pods in.
package queuesort

import (
	"cmp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Name is PrioritySort's name in profiles.
const Name = "PrioritySort"

var _ framework.QueueSortPlugin = &PrioritySort{}

// PrioritySort orders pods by priority (highest first), then by queue
// timestamp (oldest first), exactly as kube-scheduler's queue does.
type PrioritySort struct{}

// New returns the plugin; it takes no arguments.
func New(_ runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	return &PrioritySort{}, nil
}

// Name returns the plugin's name.
func (pl *PrioritySort) Name() string { return Name }

// Less reports whether a goes before b. A pod without a priority counts as
// priority 0, as component-helpers' PodPriority says. Pods equal in both keys
// are left unordered, as in kube-scheduler's heap; use Compare where a total
// order is needed.
func (pl *PrioritySort) Less(a, b *framework.QueuedPodInfo) bool {
	p1, p2 := corev1helpers.PodPriority(a.Pod), corev1helpers.PodPriority(b.Pod)
	return p1 > p2 || (p1 == p2 && a.Timestamp.Before(b.Timestamp))
}

// Compare is the total order kubectl-gang's output uses for pods: priority,
// highest first; then creation time, oldest first; then namespace and name.
// It agrees with Less whenever a queued pod's timestamp is its creation time
// (which is how a one-shot run fills QueuedPodInfo.Timestamp), and breaks the
// ties Less leaves open so that every run prints the same order.
func Compare(a, b *corev1.Pod) int {
	return cmp.Or(
		cmp.Compare(corev1helpers.PodPriority(b), corev1helpers.PodPriority(a)),
		a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time),
		cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Name, b.Name),
	)
}
