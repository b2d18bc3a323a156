package workload

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// noteQueued records a workload that waits for a queueing layer's
// admission (gang.QueuedBy: one that names a queue and is not stored yet,
// or is stored suspended), with the pods made from it: the layer decides
// before any scheduler (docs/design.md#queueing-layers).
func (m *builder) noteQueued(obj *unstructured.Unstructured, pods []*corev1.Pod) error {
	queue, waits := gang.QueuedBy(obj)
	if !waits {
		return nil
	}
	q := gang.QueuedWorkload{Object: obj, Queue: queue}
	if obj.GetUID() != "" {
		q.Created = obj.GetCreationTimestamp().Time
	}
	for _, p := range pods {
		q.Members = append(q.Members, p.Name)
	}
	m.queued = append(m.queued, q)
	return nil
}
