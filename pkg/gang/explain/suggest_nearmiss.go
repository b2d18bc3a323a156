package explain

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// nearMiss is a toleration of the pod's own that misses a taint only by
// its value: same key, same effect (or none, which matches every effect),
// operator Equal, another value (kube's Toleration.ToleratesTaint,
// k8s.io/api/core/v1/toleration.go, compares key, effect, then the value
// for Equal).
type nearMiss struct {
	Toleration corev1.Toleration
	Taint      corev1.Taint
}

// nearMisses finds, for each taint, the pod's toleration that misses it by
// its value alone.
func nearMisses(pod *corev1.Pod, taints []corev1.Taint) []nearMiss {
	var out []nearMiss
	for _, t := range taints {
		for _, tol := range pod.Spec.Tolerations {
			if tol.Key == t.Key && (tol.Effect == "" || tol.Effect == t.Effect) &&
				(tol.Operator == corev1.TolerationOpEqual || tol.Operator == "") && tol.Value != t.Value {
				out = append(out, nearMiss{Toleration: tol, Taint: t})
				break
			}
		}
	}
	return out
}

// corrected returns the tolerations with each near miss set to its taint's
// value, and a toleration added for every other taint.
func corrected(tolerations []corev1.Toleration, taints []corev1.Taint) []corev1.Toleration {
	out := append([]corev1.Toleration(nil), tolerations...)
	for _, t := range taints {
		fixed := false
		for i := range out {
			tol := &out[i]
			if tol.Key == t.Key && (tol.Effect == "" || tol.Effect == t.Effect) &&
				(tol.Operator == corev1.TolerationOpEqual || tol.Operator == "") && tol.Value != t.Value {
				tol.Value, fixed = t.Value, true
				break
			}
		}
		if !fixed {
			out = append(out, toleration(t))
		}
	}
	return out
}

// nearMissWords says what a near miss is, in the pod spec's terms.
func nearMissWords(who string, misses []nearMiss) string {
	var parts []string
	for _, m := range misses {
		effect := ""
		if m.Toleration.Effect != "" {
			effect = ", effect: " + string(m.Toleration.Effect)
		}
		parts = append(parts, fmt.Sprintf("%s toleration {key: %s, operator: Equal, value: %q%s} is a near miss of taint %s: same key and effect, but the value differs (%q vs %q): set value: %q",
			who, m.Toleration.Key, m.Toleration.Value, effect, gang.FormatTaint(&m.Taint), m.Toleration.Value, m.Taint.Value, m.Taint.Value))
	}
	return strings.Join(parts, "; ")
}
