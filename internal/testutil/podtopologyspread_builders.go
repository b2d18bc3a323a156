package testutil

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SpreadConstraint adds a topology spread constraint, with the argument
// order of kube-scheduler's test wrapper; nil pointers and slices leave the
// optional fields unset.
func (w *PodWrapper) SpreadConstraint(maxSkew int32, topologyKey string, action corev1.UnsatisfiableConstraintAction,
	selector *metav1.LabelSelector, minDomains *int32, nodeAffinityPolicy, nodeTaintsPolicy *corev1.NodeInclusionPolicy,
	matchLabelKeys []string) *PodWrapper {
	w.Spec.TopologySpreadConstraints = append(w.Spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
		MaxSkew:            maxSkew,
		TopologyKey:        topologyKey,
		WhenUnsatisfiable:  action,
		LabelSelector:      selector,
		MinDomains:         minDomains,
		NodeAffinityPolicy: nodeAffinityPolicy,
		NodeTaintsPolicy:   nodeTaintsPolicy,
		MatchLabelKeys:     matchLabelKeys,
	})
	return w
}
