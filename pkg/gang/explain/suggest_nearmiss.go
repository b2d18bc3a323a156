package explain

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/tainttoleration"
)

// nearMiss is a toleration of the pod's own that misses a taint by a slip:
// its key differs only by case, and (or) its effect differs, or (operator
// Equal) its value differs, and the toleration with those corrected tolerates the
// taint (kube's Toleration.ToleratesTaint, k8s.io/api/core/v1/toleration.go,
// compares the effect, the key, then the value for Equal; the key exactly).
// Fixed is the corrected toleration, Differs what was corrected (key,
// effect, value).
type nearMiss struct {
	Toleration corev1.Toleration
	Taint      corev1.Taint
	Fixed      corev1.Toleration
	Differs    []string
}

// nearMissOf is tol's near miss of t, if it is one. A toleration with no
// key (operator Exists) tolerates every taint and is never one.
func nearMissOf(tol corev1.Toleration, t corev1.Taint) (nearMiss, bool) {
	if tol.Key == "" || !strings.EqualFold(tol.Key, t.Key) || tolerates(tol, t) {
		return nearMiss{}, false
	}
	m := nearMiss{Toleration: tol, Taint: t, Fixed: tol}
	if tol.Key != t.Key {
		m.Fixed.Key = t.Key
		m.Differs = append(m.Differs, "key")
	}
	if tol.Effect != "" && tol.Effect != t.Effect {
		m.Fixed.Effect = t.Effect
		m.Differs = append(m.Differs, "effect")
	}
	if (tol.Operator == corev1.TolerationOpEqual || tol.Operator == "") && tol.Value != t.Value {
		m.Fixed.Value = t.Value
		m.Differs = append(m.Differs, "value")
	}
	// One slip: a key of another case, beside at most one of effect and
	// value (both differing is another toleration, not a slip).
	slips := len(m.Differs)
	if m.Fixed.Key != tol.Key {
		slips--
	}
	if len(m.Differs) == 0 || slips > 1 || !tolerates(m.Fixed, t) {
		return nearMiss{}, false
	}
	return m, true
}

// tolerates reports whether tol tolerates t, as TaintToleration's Filter
// judges it (tainttoleration.UntoleratedTaint).
func tolerates(tol corev1.Toleration, t corev1.Taint) bool {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{tol}}}
	node := &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{t}}}
	_, untolerated := tainttoleration.UntoleratedTaint(pod, node)
	return !untolerated
}

// nearMisses finds, for each taint, the pod's toleration that misses it by
// a slip (nearMissOf).
func nearMisses(pod *corev1.Pod, taints []corev1.Taint) []nearMiss {
	var out []nearMiss
	for _, t := range taints {
		for _, tol := range pod.Spec.Tolerations {
			if m, ok := nearMissOf(tol, t); ok {
				out = append(out, m)
				break
			}
		}
	}
	return out
}

// corrected returns the tolerations with each near miss corrected: its key
// and value in place; a toleration whose effect differs is kept (it may
// tolerate another taint of the key) and one with the taint's effect is
// added beside it. Every other taint gets a toleration of its own.
func corrected(tolerations []corev1.Toleration, taints []corev1.Taint) []corev1.Toleration {
	out := append([]corev1.Toleration(nil), tolerations...)
	for _, t := range taints {
		fixed := false
		for i := range out {
			m, ok := nearMissOf(out[i], t)
			if !ok {
				continue
			}
			if m.Fixed.Effect != out[i].Effect {
				out = append(out, m.Fixed)
			} else {
				out[i] = m.Fixed
			}
			fixed = true
			break
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
		var differs, set []string
		for _, d := range m.Differs {
			switch d {
			case "key":
				differs = append(differs, fmt.Sprintf("the key differs only by case (%q vs %q)", m.Toleration.Key, m.Taint.Key))
				set = append(set, fmt.Sprintf("key: %s", m.Taint.Key))
			case "effect":
				differs = append(differs, fmt.Sprintf("the effect differs (%s vs %s)", m.Toleration.Effect, m.Taint.Effect))
				set = append(set, fmt.Sprintf("effect: %s (beside it, or no effect to match every effect)", m.Taint.Effect))
			case "value":
				differs = append(differs, fmt.Sprintf("the value differs (%q vs %q)", m.Toleration.Value, m.Taint.Value))
				set = append(set, fmt.Sprintf("value: %q", m.Taint.Value))
			}
		}
		parts = append(parts, fmt.Sprintf("%s toleration %s is a near miss of taint %s: %s: set %s",
			who, describeToleration(m.Toleration), gang.FormatTaint(&m.Taint), strings.Join(differs, ", "), strings.Join(set, ", ")))
	}
	return strings.Join(parts, "; ")
}

// describeToleration prints a toleration as a pod spec has it.
func describeToleration(t corev1.Toleration) string {
	op := t.Operator
	if op == "" {
		op = corev1.TolerationOpEqual
	}
	w := fmt.Sprintf("{key: %s, operator: %s", t.Key, op)
	if op == corev1.TolerationOpEqual {
		w += fmt.Sprintf(", value: %q", t.Value)
	}
	if t.Effect != "" {
		w += ", effect: " + string(t.Effect)
	}
	return w + "}"
}
