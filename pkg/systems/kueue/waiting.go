package kueue

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/kueue/quota"
)

// PodSetLabel names, on the pods made of a waiting Workload, the pod set
// each belongs to (the label Kueue puts on the pods it starts).
const PodSetLabel = "kueue.x-k8s.io/podset"

// WorkloadResource is how the verbs name a Workload.
const WorkloadResource = "workloads." + quota.Group

// Waiting are the Workloads that wait in their ClusterQueue's queue whose
// job made no pods yet (Kueue keeps it suspended): each a gang of the pods
// its pod sets make (workloadGang), queued for Kueue. A Workload of plain
// pods (owned by a Pod) is left out: its pods exist, gated, and are the
// queue's already.
func (admitter) Waiting(snap *schedule.Snapshot) []*gang.Gang {
	if len(unread(snap)) > 0 {
		return nil
	}
	m := modelOf(snap)
	if notInstalled(m) {
		return nil
	}
	// Kueue's decisions on them are made while their pods are.
	go m.Queue()
	var out []*gang.Gang
	for _, u := range snap.Objects {
		if u.GetKind() != quota.KindWorkload || u.GroupVersionKind().Group != quota.Group {
			continue
		}
		w := m.Workloads[u.GetNamespace()+"/"+u.GetName()]
		if w == nil || !w.Pending() || ownedByPod(w) || podCount(w) == 0 {
			// A Workload of no pods has nothing to start.
			continue
		}
		out = append(out, workloadGang(snap, u, w))
	}
	return out
}

// WaitingKind: a Workload is workload, workloads or wl (its CRD's
// names), of group kueue.x-k8s.io.
func (admitter) WaitingKind() (string, []string) {
	return quota.Group, []string{"workload", "workloads", "wl"}
}

// podCount is how many pods the Workload's pod sets make.
func podCount(w *quota.Workload) int64 {
	n := int64(0)
	for _, ps := range w.Spec.PodSets {
		n += int64(ps.Count)
	}
	return n
}

// Holds: obj is a Workload.
func (admitter) Holds(obj *unstructured.Unstructured) bool { return isWorkload(obj) }

// NotWaiting says why Workload obj is not among Waiting's.
func (admitter) NotWaiting(snap *schedule.Snapshot, obj *unstructured.Unstructured) string {
	m := modelOf(snap)
	w := m.Workloads[obj.GetNamespace()+"/"+obj.GetName()]
	switch {
	case w == nil:
		return "it could not be read (" + strings.Join(m.Problems, "; ") + ")"
	case w.HoldsQuota():
		return "Kueue admitted it already (it holds quota in ClusterQueue " + w.Status.Admission.ClusterQueue + ")"
	case w.IsFinished():
		return "it is finished"
	case w.Spec.Active != nil && !*w.Spec.Active:
		return "it is deactivated (spec.active: false)"
	case ownedByPod(w):
		return "its pods exist (a plain pod group's): explain one of them, pod/NAME"
	case podCount(w) == 0:
		return "its pod sets make no pod"
	}
	return "Kueue's objects could not be read"
}

// ownedByPod: the Workload is a plain pod's or a pod group's.
func ownedByPod(w *quota.Workload) bool {
	for _, o := range w.OwnerReferences {
		if o.Kind == "Pod" && o.APIVersion == "v1" {
			return true
		}
	}
	return false
}

// workloadGang is a waiting Workload as a gang: for each pod set, count
// pods of its template named <workload>-<pod set>-<index>, labelled with
// their pod set, priorities filled in as the Priority admission plugin
// will when the job makes them; every one must run (Kueue admits the
// Workload whole, or at the counts a partial admission gives).
func workloadGang(snap *schedule.Snapshot, u *unstructured.Unstructured, w *quota.Workload) *gang.Gang {
	g := &gang.Gang{Source: gang.SourceFile, Namespace: w.Namespace, Name: w.Name, Subject: WorkloadResource + "/" + w.Name,
		Read: []string{fmt.Sprintf("%s %s (%s)", quota.KindWorkload, w.Name, u.GetAPIVersion())}}
	q := gang.QueuedWorkload{Object: u, Queue: w.Spec.QueueName, Created: w.QueueTime()}
	// The pods are its job's, as podsOf finds them (evicted, they leave).
	var owner []metav1.OwnerReference
	for _, o := range w.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			owner = append(owner, o)
		}
	}
	for i := range w.Spec.PodSets {
		ps := &w.Spec.PodSets[i]
		spec := ps.Spec()
		labels := maps.Clone(ps.Template.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		labels[PodSetLabel] = ps.Name
		for k := range ps.Count {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%d", w.Name, ps.Name, k), Namespace: w.Namespace,
					Labels: maps.Clone(labels), Annotations: maps.Clone(ps.Template.Annotations), OwnerReferences: owner},
				Spec:   *spec.DeepCopy(),
				Status: corev1.PodStatus{Phase: corev1.PodPending},
			}
			g.Members = append(g.Members, pod)
			q.Members = append(q.Members, pod.Name)
		}
		g.MinMember += ps.Count
	}
	for _, o := range w.OwnerReferences {
		if o.Controller != nil && *o.Controller && (o.Kind != "Job" || o.APIVersion != "batch/v1") {
			// A Job's pods are its template's; other kinds' controllers
			// add to theirs (a JobSet's exclusive placement, ...).
			g.NotEvaluatedFields = append(g.NotEvaluatedFields, gang.NotEvaluatedField{Field: "metadata.ownerReferences",
				Value:  o.Kind + " " + o.Name,
				Reason: fmt.Sprintf("its pods are made from Kueue's Workload templates: what the %s's controller adds to them (exclusive placement, ...) is not evaluated; give the %s's manifest with -f", o.Kind, o.Kind)})
		}
	}
	if err := schedule.ApplyPriorities(g.Members, snap.PriorityClasses); err != nil {
		g.NotEvaluatedFields = append(g.NotEvaluatedFields, gang.NotEvaluatedField{Field: "spec.podSets[].template.spec.priorityClassName",
			Reason: "the API server would refuse the pods the job makes: " + err.Error()})
	}
	g.Queued = []gang.QueuedWorkload{q}
	g.SortMembers()
	return g
}

// isWorkload: obj is one of Kueue's Workloads.
func isWorkload(obj *unstructured.Unstructured) bool {
	return obj.GetKind() == quota.KindWorkload && obj.GroupVersionKind().Group == quota.Group
}

// queueGroup queues pod group g for Kueue when the snapshot holds its
// Workload waiting for quota (owned by its pods): Kueue keeps its pods
// gated (AdmissionGate) until it admits the Workload, so its decision
// comes first (gang.PlaceOn), and the gate is Kueue's to remove.
func queueGroup(snap *schedule.Snapshot, g *gang.Gang) {
	if len(unread(snap)) > 0 {
		return
	}
	m := modelOf(snap)
	if notInstalled(m) {
		// Nothing would decide it: its pods wait for the gates.
		return
	}
	var w *quota.Workload
	for _, p := range g.Members {
		if w = m.OwnedBy(string(p.UID)); w != nil {
			break
		}
	}
	if w == nil || !w.Pending() || m.ObjectOf(w) == nil {
		return
	}
	q := gang.QueuedWorkload{Object: m.ObjectOf(w), Queue: w.Spec.QueueName, Created: w.QueueTime()}
	for _, p := range g.Members {
		q.Members = append(q.Members, p.Name)
	}
	g.Queued = []gang.QueuedWorkload{q}
}

// The scheduling gates Kueue puts on the pods of a plain pod (or pod
// group) it has not admitted: AdmissionGate, and, with topology-aware
// scheduling on (its default), TopologyGate, both removed on admission to
// a flavor without a topology (pod_controller.go prepare).
const (
	AdmissionGate = "kueue.x-k8s.io/admission"
	TopologyGate  = "kueue.x-k8s.io/topology"
)

// HoldingGates: Kueue holds the pods it has not admitted by its gates.
func (admitter) HoldingGates() []string { return []string{AdmissionGate, TopologyGate} }

// HeldPod is a plain pod Kueue holds (not of a pod group: its own
// Workload, owned by it, waits for quota) as a gang of one queued for
// Kueue, named pod/NAME (queueGroup decides the group of one).
func (admitter) HeldPod(snap *schedule.Snapshot, pod *corev1.Pod) *gang.Gang {
	if pod.Labels[PodGroupLabel] != "" || !slices.ContainsFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == AdmissionGate }) {
		return nil
	}
	g := &gang.Gang{Source: gang.SourceFile, Namespace: pod.Namespace, Name: pod.Name, Subject: "pod/" + pod.Name,
		MinMember: 1, Members: []*corev1.Pod{pod}, Read: []string{"Pod " + pod.Name + " (v1), a workload of Kueue's"}}
	queueGroup(snap, g)
	if len(g.Queued) == 0 {
		return nil
	}
	return g
}
