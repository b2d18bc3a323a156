package testutil

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodAffinityTermWrapper builds a PodAffinityTerm:
// MakePodAffinityTerm("topology.kubernetes.io/zone").In("app", "web").Obj().
type PodAffinityTermWrapper struct{ corev1.PodAffinityTerm }

// MakePodAffinityTerm starts a term over topologyKey with an empty label
// selector (which selects every pod) in the pod's own namespace.
func MakePodAffinityTerm(topologyKey string) *PodAffinityTermWrapper {
	return &PodAffinityTermWrapper{corev1.PodAffinityTerm{TopologyKey: topologyKey, LabelSelector: &metav1.LabelSelector{}}}
}

func (w *PodAffinityTermWrapper) expression(key string, op metav1.LabelSelectorOperator, values []string) *PodAffinityTermWrapper {
	w.LabelSelector.MatchExpressions = append(w.LabelSelector.MatchExpressions,
		metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: values})
	return w
}

// In selects pods whose label key has one of values.
func (w *PodAffinityTermWrapper) In(key string, values ...string) *PodAffinityTermWrapper {
	return w.expression(key, metav1.LabelSelectorOpIn, values)
}

// NotIn selects pods whose label key is missing or has none of values.
func (w *PodAffinityTermWrapper) NotIn(key string, values ...string) *PodAffinityTermWrapper {
	return w.expression(key, metav1.LabelSelectorOpNotIn, values)
}

// Exists selects pods with label key.
func (w *PodAffinityTermWrapper) Exists(key string) *PodAffinityTermWrapper {
	return w.expression(key, metav1.LabelSelectorOpExists, nil)
}

// DoesNotExist selects pods without label key.
func (w *PodAffinityTermWrapper) DoesNotExist(key string) *PodAffinityTermWrapper {
	return w.expression(key, metav1.LabelSelectorOpDoesNotExist, nil)
}

// MatchLabel selects pods with label key=value.
func (w *PodAffinityTermWrapper) MatchLabel(key, value string) *PodAffinityTermWrapper {
	if w.LabelSelector.MatchLabels == nil {
		w.LabelSelector.MatchLabels = map[string]string{}
	}
	w.LabelSelector.MatchLabels[key] = value
	return w
}

// Namespaces sets the namespaces the term looks in.
func (w *PodAffinityTermWrapper) Namespaces(namespaces ...string) *PodAffinityTermWrapper {
	w.PodAffinityTerm.Namespaces = namespaces
	return w
}

// NamespaceSelector sets the namespace selector; an empty one selects every namespace.
func (w *PodAffinityTermWrapper) NamespaceSelector(s *metav1.LabelSelector) *PodAffinityTermWrapper {
	w.PodAffinityTerm.NamespaceSelector = s
	return w
}

// Obj returns the term.
func (w *PodAffinityTermWrapper) Obj() corev1.PodAffinityTerm { return w.PodAffinityTerm }

func (w *PodWrapper) ensurePodAffinity() *corev1.PodAffinity {
	if w.Spec.Affinity == nil {
		w.Spec.Affinity = &corev1.Affinity{}
	}
	if w.Spec.Affinity.PodAffinity == nil {
		w.Spec.Affinity.PodAffinity = &corev1.PodAffinity{}
	}
	return w.Spec.Affinity.PodAffinity
}

func (w *PodWrapper) ensurePodAntiAffinity() *corev1.PodAntiAffinity {
	if w.Spec.Affinity == nil {
		w.Spec.Affinity = &corev1.Affinity{}
	}
	if w.Spec.Affinity.PodAntiAffinity == nil {
		w.Spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	return w.Spec.Affinity.PodAntiAffinity
}

// RequiredPodAffinity adds a required pod affinity term.
func (w *PodWrapper) RequiredPodAffinity(t *PodAffinityTermWrapper) *PodWrapper {
	a := w.ensurePodAffinity()
	a.RequiredDuringSchedulingIgnoredDuringExecution = append(a.RequiredDuringSchedulingIgnoredDuringExecution, t.Obj())
	return w
}

// PreferredPodAffinity adds a preferred pod affinity term with a weight.
func (w *PodWrapper) PreferredPodAffinity(weight int32, t *PodAffinityTermWrapper) *PodWrapper {
	a := w.ensurePodAffinity()
	a.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PreferredDuringSchedulingIgnoredDuringExecution,
		corev1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: t.Obj()})
	return w
}

// RequiredPodAntiAffinity adds a required pod anti-affinity term.
func (w *PodWrapper) RequiredPodAntiAffinity(t *PodAffinityTermWrapper) *PodWrapper {
	a := w.ensurePodAntiAffinity()
	a.RequiredDuringSchedulingIgnoredDuringExecution = append(a.RequiredDuringSchedulingIgnoredDuringExecution, t.Obj())
	return w
}

// PreferredPodAntiAffinity adds a preferred pod anti-affinity term with a weight.
func (w *PodWrapper) PreferredPodAntiAffinity(weight int32, t *PodAffinityTermWrapper) *PodWrapper {
	a := w.ensurePodAntiAffinity()
	a.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PreferredDuringSchedulingIgnoredDuringExecution,
		corev1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: t.Obj()})
	return w
}
