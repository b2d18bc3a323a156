package gang

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// QueueKey is where a pending gang stands in its scheduler's queue: its
// priority and the time it is taken to have entered the queue; a queue
// takes higher priorities first, then earlier times, then namespace/name
// (docs/design.md#the-queue). A system that orders its gangs by a key of
// its own says so (QueueKeyer); the others (selectors, pod groups without
// a group object) are queued by kube-scheduler pod by pod: the first
// pending member's priority and the earliest pending creation.
//
// A what-if gang (nothing created yet) enters last: the time is the zero
// time's opposite, the newest.
func QueueKey(snap *schedule.Snapshot, g *Gang) (priority int32, since time.Time) {
	pending := g.Pending()
	since = earliest(pending)
	if len(pending) > 0 {
		priority = PodPriority(pending[0])
	}
	if k, ok := SystemOf(g.Source).(QueueKeyer); ok {
		return k.QueueKey(snap, g, priority, since)
	}
	return priority, since
}

// PodQueueKey is QueueKey for a pod of no gang (kube-scheduler's
// PrioritySort): its priority, then its creation (a pod never created
// counts as the newest).
func PodQueueKey(pod *corev1.Pod) (priority int32, since time.Time) {
	return PodPriority(pod), earliest([]*corev1.Pod{pod})
}

// PodPriority is a pod's priority as kube-scheduler reads it
// (corev1helpers.PodPriority): spec.priority, 0 when unset.
func PodPriority(pod *corev1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}

// earliest is the earliest creation of pods; a pod never created (a
// what-if) counts as the newest.
func earliest(pods []*corev1.Pod) time.Time {
	var out time.Time
	for _, pod := range pods {
		t := pod.CreationTimestamp.Time
		if t.IsZero() {
			t = notCreatedTime
		}
		if out.IsZero() || t.Before(out) {
			out = t
		}
	}
	if out.IsZero() {
		out = notCreatedTime
	}
	return out
}

// NotCreated is the time a group or pod no API server stored (a what-if, a
// file's group without a creation time) is taken to enter its queue: after
// every one that exists, as its scheduler gives it the time it is created.
const NotCreated = "9999-12-31T23:59:59Z"

var notCreatedTime, _ = time.Parse(time.RFC3339, NotCreated)
