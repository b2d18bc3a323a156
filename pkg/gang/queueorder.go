package gang

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// QueueKey is where a pending gang stands in its scheduler's queue: its
// priority and the time it is taken to have entered the queue; a queue
// takes higher priorities first, then earlier times, then namespace/name
// (docs/design.md#the-queue).
//
//   - native (kube-scheduler's PodGroup entity, QueuedPodGroupInfo): the
//     PodGroup's priority (util.PodGroupPriority), and the time its first
//     member entered the queue, taken as the earliest pending member's
//     creation;
//   - coscheduling (Coscheduling.Less): the members' pod priority, then the
//     PodGroup's creation (GetCreationTimestamp);
//   - Volcano (Session.JobOrderFn with the priority and gang plugins: every
//     pending job is not ready, so the gang plugin ties): the job's
//     priority (its PodGroup's class, else the global default), then the
//     PodGroup's creation;
//   - Kueue pod groups and selectors (kube-scheduler, pod by pod): the
//     first pending member's priority and the earliest pending creation.
//
// A what-if gang (nothing created yet) enters last: the time is the zero
// time's opposite, the newest.
func QueueKey(snap *schedule.Snapshot, g *Gang) (priority int32, since time.Time) {
	pending := g.Pending()
	since = earliest(pending)
	switch g.Source {
	case SourceNative:
		return g.PodGroupPriorityValue(), since
	case SourceVolcano:
		j := volcanoJob(snap, g.PodGroup, g.Namespace, g.Name)
		if t, err := time.Parse(time.RFC3339, j.Created); err == nil {
			since = t
		}
		return j.Priority, since
	case SourceCoscheduling:
		if g.PodGroup != nil {
			if ts := g.PodGroup.GetCreationTimestamp(); !ts.IsZero() {
				since = ts.Time
			}
		}
	}
	if len(pending) > 0 {
		priority = PodPriority(pending[0])
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

var notCreatedTime, _ = time.Parse(time.RFC3339, notCreated)
