package workload

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// KueueQueueName is the label (and, before Kueue v0.10, the annotation) by
// which a workload asks Kueue for admission: Kueue's job framework
// (jobframework.QueueName) reads it on every integration.
const KueueQueueName = "kueue.x-k8s.io/queue-name"

// notEvaluatedKueue says why a workload Kueue has not admitted gets no
// plain yes (docs/design.md#gangs): Kueue decides before kube-scheduler,
// and its rules are not modelled yet.
const notEvaluatedKueue = "Kueue admits the workload first: where Kueue runs, it stays suspended (its pods gated) until " +
	"the LocalQueue's ClusterQueue has quota for it, and Kueue's quota, flavors, cohorts and preemption are not " +
	"evaluated; the plan is where its pods go once Kueue admits it"

// noteKueue records a workload that waits for Kueue's admission: one that
// names a LocalQueue and that no API server has stored yet (Kueue's webhook
// suspends a new workload, or gates a new pod, that names a queue), or that
// is stored suspended (spec.suspend, or a Kubeflow job's
// spec.runPolicy.suspend): Kueue resumes it when it admits it. A stored
// workload that runs was admitted (or is not Kueue's), and its pods are
// judged as they are.
func (m *builder) noteKueue(obj *unstructured.Unstructured, kind, name string) {
	field := "metadata.labels[" + KueueQueueName + "]"
	queue := obj.GetLabels()[KueueQueueName]
	if queue == "" {
		field, queue = "metadata.annotations["+KueueQueueName+"]", obj.GetAnnotations()[KueueQueueName]
	}
	if queue == "" {
		return
	}
	suspended, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend")
	if !suspended {
		suspended, _, _ = unstructured.NestedBool(obj.Object, "spec", "runPolicy", "suspend")
	}
	if obj.GetUID() != "" && !suspended {
		return
	}
	if m.kueueQueues[queue] {
		return // said once per queue: the pods of one workload name it each
	}
	if m.kueueQueues == nil {
		m.kueueQueues = map[string]bool{}
	}
	m.kueueQueues[queue] = true
	m.notEvaluated = append(m.notEvaluated, gang.NotEvaluatedField{Field: field,
		Value: fmt.Sprintf("%s %s: LocalQueue %s", kind, name, queue), Reason: notEvaluatedKueue})
}
