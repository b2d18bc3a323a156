// Package testutil holds the object builders every test uses, in the style of
// kube-scheduler's and scheduler-plugins' test wrappers:
// MakePod().Namespace("ml").Name("w-0").Req(Res{"cpu": "2"}).Obj().
package testutil

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Res is a resource list written with quantity strings: Res{"cpu": "500m"}.
type Res map[corev1.ResourceName]string

// List turns r into a ResourceList; a bad quantity panics, as it is a bug in the test.
func (r Res) List() corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range r {
		out[name] = resource.MustParse(q)
	}
	return out
}

// NodeWrapper builds a Node.
type NodeWrapper struct{ corev1.Node }

// MakeNode starts a Ready node with room for 110 pods.
func MakeNode() *NodeWrapper {
	w := &NodeWrapper{}
	w.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
	w.Capacity(Res{corev1.ResourcePods: "110"})
	return w
}

// Name sets the name and the kubernetes.io/hostname label.
func (w *NodeWrapper) Name(name string) *NodeWrapper {
	w.Node.Name = name
	return w.Label(corev1.LabelHostname, name)
}

// Label adds a label.
func (w *NodeWrapper) Label(k, v string) *NodeWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[k] = v
	return w
}

// Capacity adds to capacity and allocatable alike.
func (w *NodeWrapper) Capacity(r Res) *NodeWrapper {
	if w.Status.Capacity == nil {
		w.Status.Capacity, w.Status.Allocatable = corev1.ResourceList{}, corev1.ResourceList{}
	}
	for name, q := range r.List() {
		w.Status.Capacity[name] = q
		w.Status.Allocatable[name] = q
	}
	return w
}

// Taint adds a taint.
func (w *NodeWrapper) Taint(key, value string, effect corev1.TaintEffect) *NodeWrapper {
	w.Spec.Taints = append(w.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	return w
}

// Unschedulable cordons the node.
func (w *NodeWrapper) Unschedulable() *NodeWrapper {
	w.Spec.Unschedulable = true
	return w
}

// Obj returns the node.
func (w *NodeWrapper) Obj() *corev1.Node { return &w.Node }

// PodWrapper builds a Pod.
type PodWrapper struct{ corev1.Pod }

// MakePod starts a pending pod in "default" with one container.
func MakePod() *PodWrapper {
	w := &PodWrapper{}
	w.Pod.Namespace = metav1.NamespaceDefault
	w.Spec.Containers = []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}
	w.Status.Phase = corev1.PodPending
	return w
}

// Name sets the name.
func (w *PodWrapper) Name(name string) *PodWrapper { w.Pod.Name = name; return w }

// Namespace sets the namespace.
func (w *PodWrapper) Namespace(ns string) *PodWrapper { w.Pod.Namespace = ns; return w }

// UID sets the UID.
func (w *PodWrapper) UID(uid string) *PodWrapper { w.Pod.UID = types.UID(uid); return w }

// Label adds a label.
func (w *PodWrapper) Label(k, v string) *PodWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[k] = v
	return w
}

// Annotation adds an annotation.
func (w *PodWrapper) Annotation(k, v string) *PodWrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[k] = v
	return w
}

// Req sets the first container's requests. Extended resources (such as
// nvidia.com/gpu) get an equal limit, as the API server requires.
func (w *PodWrapper) Req(r Res) *PodWrapper {
	res := &w.Spec.Containers[0].Resources
	res.Requests = r.List()
	for name, q := range res.Requests {
		if strings.Contains(string(name), "/") && !strings.HasPrefix(string(name), corev1.ResourceDefaultNamespacePrefix) {
			if res.Limits == nil {
				res.Limits = corev1.ResourceList{}
			}
			res.Limits[name] = q
		}
	}
	return w
}

// Node binds the pod to a node and marks it Running.
func (w *PodWrapper) Node(name string) *PodWrapper {
	w.Spec.NodeName = name
	w.Status.Phase = corev1.PodRunning
	return w
}

// Phase sets the phase.
func (w *PodWrapper) Phase(p corev1.PodPhase) *PodWrapper { w.Status.Phase = p; return w }

// Priority sets the priority class name and the value admission would fill in.
func (w *PodWrapper) Priority(class string, value int32) *PodWrapper {
	w.Spec.PriorityClassName = class
	w.Spec.Priority = &value
	return w
}

// Toleration adds a toleration.
func (w *PodWrapper) Toleration(key, value string, effect corev1.TaintEffect) *PodWrapper {
	op := corev1.TolerationOpEqual
	if value == "" {
		op = corev1.TolerationOpExists
	}
	w.Spec.Tolerations = append(w.Spec.Tolerations, corev1.Toleration{Key: key, Operator: op, Value: value, Effect: effect})
	return w
}

// SchedulingGate adds a scheduling gate.
func (w *PodWrapper) SchedulingGate(name string) *PodWrapper {
	w.Spec.SchedulingGates = append(w.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: name})
	return w
}

// PodGroup makes the pod a member of a native scheduling.k8s.io PodGroup.
func (w *PodWrapper) PodGroup(name string) *PodWrapper {
	w.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &name}
	return w
}

// Created sets the creation time, which orders pods of equal priority.
func (w *PodWrapper) Created(t time.Time) *PodWrapper {
	w.CreationTimestamp = metav1.NewTime(t)
	return w
}

// Obj returns the pod.
func (w *PodWrapper) Obj() *corev1.Pod { return &w.Pod }

// MakePriorityClass returns a PriorityClass.
func MakePriorityClass(name string, value int32) *schedulingv1.PriorityClass {
	return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
}

// MakeNamespace returns a Namespace.
func MakeNamespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// PodGroupWrapper builds a PodGroup of any source as an unstructured object,
// as the snapshot holds it.
type PodGroupWrapper struct{ unstructured.Unstructured }

// MakeNativePodGroup starts a scheduling.k8s.io/v1beta1 PodGroup with a gang policy.
func MakeNativePodGroup(namespace, name string, minCount int64) *PodGroupWrapper {
	w := newPodGroup("scheduling.k8s.io/v1beta1", namespace, name)
	_ = unstructured.SetNestedField(w.Object, minCount, "spec", "schedulingPolicy", "gang", "minCount")
	return w
}

// MakeVolcanoPodGroup starts a scheduling.volcano.sh/v1beta1 PodGroup.
func MakeVolcanoPodGroup(namespace, name string, minMember int64) *PodGroupWrapper {
	w := newPodGroup("scheduling.volcano.sh/v1beta1", namespace, name)
	_ = unstructured.SetNestedField(w.Object, minMember, "spec", "minMember")
	return w
}

// MakeCoschedulingPodGroup starts a scheduling.x-k8s.io/v1alpha1 PodGroup.
func MakeCoschedulingPodGroup(namespace, name string, minMember int64) *PodGroupWrapper {
	w := newPodGroup("scheduling.x-k8s.io/v1alpha1", namespace, name)
	_ = unstructured.SetNestedField(w.Object, minMember, "spec", "minMember")
	return w
}

func newPodGroup(apiVersion, namespace, name string) *PodGroupWrapper {
	w := &PodGroupWrapper{}
	w.Object = map[string]any{"apiVersion": apiVersion, "kind": "PodGroup",
		"metadata": map[string]any{"namespace": namespace, "name": name}, "spec": map[string]any{}}
	return w
}

// Field sets a field under spec, e.g. Field("queue", "research").
func (w *PodGroupWrapper) Field(value any, path ...string) *PodGroupWrapper {
	_ = unstructured.SetNestedField(w.Object, value, append([]string{"spec"}, path...)...)
	return w
}

// Obj returns the PodGroup.
func (w *PodGroupWrapper) Obj() *unstructured.Unstructured { return &w.Unstructured }
