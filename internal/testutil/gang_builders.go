package testutil

import (
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// VolcanoGroup makes the pod a member of a Volcano PodGroup (annotation
// scheduling.k8s.io/group-name).
func (w *PodWrapper) VolcanoGroup(name string) *PodWrapper {
	return w.Annotation("scheduling.k8s.io/group-name", name)
}

// VolcanoTask names the pod's Volcano task (annotation volcano.sh/task-spec).
func (w *PodWrapper) VolcanoTask(task string) *PodWrapper {
	return w.Annotation("volcano.sh/task-spec", task)
}

// CoschedulingGroup makes the pod a member of a coscheduling PodGroup (label
// scheduling.x-k8s.io/pod-group).
func (w *PodWrapper) CoschedulingGroup(name string) *PodWrapper {
	return w.Label("scheduling.x-k8s.io/pod-group", name)
}

// Terminating marks the pod as being deleted.
func (w *PodWrapper) Terminating() *PodWrapper {
	t := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w.DeletionTimestamp = &t
	return w
}

// BoundTo sets the node name and leaves the phase as it is (a pod bound but
// not yet started is Pending with a node).
func (w *PodWrapper) BoundTo(node string) *PodWrapper {
	w.Spec.NodeName = node
	return w
}

// MinResources sets spec.minResources (Volcano, coscheduling).
func (w *PodGroupWrapper) MinResources(r Res) *PodGroupWrapper {
	return w.Field(resMap(r), "minResources")
}

// MinTaskMember sets Volcano's spec.minTaskMember.
func (w *PodGroupWrapper) MinTaskMember(tasks map[string]int64) *PodGroupWrapper {
	m := map[string]any{}
	for name, n := range tasks {
		m[name] = n
	}
	return w.Field(m, "minTaskMember")
}

// Queue sets Volcano's spec.queue.
func (w *PodGroupWrapper) Queue(name string) *PodGroupWrapper {
	return w.Field(name, "queue")
}

// TopologyKey sets a native PodGroup's spec.schedulingConstraints.topology.
func (w *PodGroupWrapper) TopologyKey(key string) *PodGroupWrapper {
	return w.Field([]any{map[string]any{"key": key}}, "schedulingConstraints", "topology")
}

// Phase sets status.phase.
func (w *PodGroupWrapper) Phase(phase string) *PodGroupWrapper {
	_ = unstructured.SetNestedField(w.Object, phase, "status", "phase")
	return w
}

// MakeNativeBasicPodGroup starts a scheduling.k8s.io/v1beta1 PodGroup with the basic policy.
func MakeNativeBasicPodGroup(namespace, name string) *PodGroupWrapper {
	w := newPodGroup("scheduling.k8s.io/v1beta1", namespace, name)
	return w.Field(map[string]any{}, "schedulingPolicy", "basic")
}

// QueueWrapper builds a Volcano Queue as an unstructured object.
type QueueWrapper struct{ unstructured.Unstructured }

// MakeVolcanoQueue starts an Open scheduling.volcano.sh/v1beta1 Queue.
func MakeVolcanoQueue(name string) *QueueWrapper {
	w := &QueueWrapper{}
	w.Object = map[string]any{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"weight": int64(1)},
		"status": map[string]any{"state": "Open"}}
	return w
}

// Capability sets spec.capability.
func (w *QueueWrapper) Capability(r Res) *QueueWrapper {
	_ = unstructured.SetNestedField(w.Object, resMap(r), "spec", "capability")
	return w
}

// Guarantee sets spec.guarantee.resource.
func (w *QueueWrapper) Guarantee(r Res) *QueueWrapper {
	_ = unstructured.SetNestedField(w.Object, resMap(r), "spec", "guarantee", "resource")
	return w
}

// State sets status.state ("" removes it).
func (w *QueueWrapper) State(state string) *QueueWrapper {
	if state == "" {
		unstructured.RemoveNestedField(w.Object, "status", "state")
		return w
	}
	_ = unstructured.SetNestedField(w.Object, state, "status", "state")
	return w
}

// Obj returns the Queue.
func (w *QueueWrapper) Obj() *unstructured.Unstructured { return &w.Unstructured }

func resMap(r Res) map[string]any {
	m := map[string]any{}
	for name, q := range r {
		m[string(name)] = q
	}
	return m
}

// GPUNodes makes n nodes with 96 cpu, 1Ti memory and 8 GPUs in one zone
// (label topology.kubernetes.io/zone), named <zone>-<i>.
func GPUNodes(zone string, n int) []*corev1.Node {
	var out []*corev1.Node
	for i := range n {
		out = append(out, MakeNode().Name(fmt.Sprintf("%s-%d", zone, i)).Label(corev1.LabelTopologyZone, zone).
			Capacity(Res{"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": "8"}).Obj())
	}
	return out
}

// GPUWorkers makes n pending pods w-<i> in namespace ml, members of the
// native PodGroup "train", each asking for 8 cpu, 64Gi memory and gpus GPUs.
func GPUWorkers(n int, gpus string) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range n {
		out = append(out, MakePod().Namespace("ml").Name(fmt.Sprintf("w-%d", i)).Label("app", "train").
			Req(Res{"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": gpus}).PodGroup("train").Obj())
	}
	return out
}

// JobCompletionIndex is the label and annotation an Indexed Job's pods carry.
const JobCompletionIndex = "batch.kubernetes.io/job-completion-index"

// Indexed makes pods the members of an Indexed Job named job, as its
// controller makes them: each with its completion index as label and
// annotation, the hostname <job>-<index> in the subdomain job, and the
// index in its environment (JOB_COMPLETION_INDEX) and arguments.
func Indexed(job string, pods []*corev1.Pod) []*corev1.Pod {
	for i, pod := range pods {
		index := fmt.Sprint(i)
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Name = fmt.Sprintf("%s-%d-%05x", job, i, i*7919%0xfffff)
		pod.Labels[JobCompletionIndex], pod.Annotations[JobCompletionIndex] = index, index
		pod.Labels["batch.kubernetes.io/job-name"] = job
		pod.Spec.Hostname, pod.Spec.Subdomain = fmt.Sprintf("%s-%d", job, i), job
		for c := range pod.Spec.Containers {
			ctr := &pod.Spec.Containers[c]
			ctr.Env = append(ctr.Env, corev1.EnvVar{Name: "JOB_COMPLETION_INDEX", Value: index})
			ctr.Args = append(ctr.Args, "--rank="+index)
		}
	}
	return pods
}

// NeedEachOther is a random gang whose members need each other, on random
// nodes: one launcher (role=launcher) and equal workers (role=worker) that
// may require the launcher's zone, refuse to share a node with another
// worker, or spread evenly over the zones. Names are random, so the queue
// takes the members in any order. Nodes are named <prefix>z<zone>-<i>,
// zones <prefix>z<zone>; the members are in namespace ns, in no group.
type NeedEachOther struct {
	Nodes   []*corev1.Node
	Members []*corev1.Pod
	Min     int32
	// Shape says what the workers require, for messages.
	Shape string
}

// MakeNeedEachOther draws a NeedEachOther from r.
func MakeNeedEachOther(r *rand.Rand, ns, prefix string) NeedEachOther {
	var out NeedEachOther
	zones := 2 + r.IntN(3)
	// Every zone alike: the launcher's nodes tie, and where it lands among
	// them (kube-scheduler's node order, which a plan does not know; a gap
	// of docs/design.md) must not decide the outcome.
	perZone := 1 + r.IntN(3)
	var nodeGPUs []string
	for range perZone {
		nodeGPUs = append(nodeGPUs, []string{"8", "8", "4", "0"}[r.IntN(4)])
	}
	for z := range zones {
		for n := range perZone {
			name := fmt.Sprintf("%sz%d-%d", prefix, z, n)
			out.Nodes = append(out.Nodes, MakeNode().Name(name).Label(corev1.LabelTopologyZone, fmt.Sprintf("%sz%d", prefix, z)).
				Label(corev1.LabelHostname, name).
				Capacity(Res{"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": nodeGPUs[n], "pods": "110"}).Obj())
		}
	}
	name := func(role string) string { return fmt.Sprintf("%s-%04x", role, r.IntN(0x10000)) }
	// One launcher: with two, where the second lands depends on the
	// workers placed before it, in kube-scheduler as in a plan.
	out.Members = []*corev1.Pod{MakePod().Namespace(ns).Name(name("l")).Label("role", "launcher").
		Req(Res{"cpu": "1", "memory": "1Gi"}).Obj()}
	workers := 1 + r.IntN(4)
	affinity, anti, spread := r.IntN(4) != 0, r.IntN(3) == 0, r.IntN(3) == 0
	out.Shape = fmt.Sprintf("%d zones, %d nodes, %d workers; zone affinity to the launcher %v, hostname anti-affinity %v, zone spread %v",
		zones, len(out.Nodes), workers, affinity, anti, spread)
	// Equal workers: which of them takes which node does not change how
	// many fit, so only their need of each other could.
	gpus := []string{"4", "8"}[r.IntN(2)]
	seen := map[string]bool{out.Members[0].Name: true}
	for len(out.Members) < workers+1 {
		n := name("w")
		if seen[n] {
			continue
		}
		seen[n] = true
		w := MakePod().Namespace(ns).Name(n).Label("role", "worker").Req(Res{"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": gpus})
		if affinity {
			w.RequiredPodAffinity(MakePodAffinityTerm(corev1.LabelTopologyZone).MatchLabel("role", "launcher"))
		}
		if anti {
			w.RequiredPodAntiAffinity(MakePodAffinityTerm(corev1.LabelHostname).MatchLabel("role", "worker"))
		}
		pod := w.Obj()
		if spread {
			pod.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "worker"}}}}
		}
		out.Members = append(out.Members, pod)
	}
	out.Min = int32(1 + r.IntN(len(out.Members)))
	if r.IntN(2) == 0 {
		out.Min = int32(len(out.Members))
	}
	r.Shuffle(len(out.Members), func(i, j int) { out.Members[i], out.Members[j] = out.Members[j], out.Members[i] })
	return out
}
