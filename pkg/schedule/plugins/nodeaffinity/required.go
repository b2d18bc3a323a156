package nodeaffinity

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// requiredAffinity is a pod's nodeSelector and required node affinity,
// parsed once per pod, as component-helpers' RequiredNodeAffinity is.
//
// It exists because RequiredNodeAffinity.Match allocates a fields.Set for
// every node it looks at, which would make Filter allocate on every node of a
// large cluster. It builds the very same apimachinery label and field
// selectors component-helpers builds (same operator mapping, same
// labels.NewRequirement validation) and evaluates them with the same rules;
// only the node's fields are served from the node itself instead of a fresh
// map. TestRequiredMatchesComponentHelpers checks it against
// component-helpers on every case the tests know.
type requiredAffinity struct {
	// labelSelector is the pod's nodeSelector; nil when it is empty.
	labelSelector labels.Selector
	// nodeSelector holds the required node affinity terms; nil when the pod
	// has no required node affinity.
	nodeSelector *nodeSelector
}

func newRequiredAffinity(pod *corev1.Pod) requiredAffinity {
	var r requiredAffinity
	if len(pod.Spec.NodeSelector) > 0 {
		r.labelSelector = labels.SelectorFromSet(pod.Spec.NodeSelector)
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		r.nodeSelector = newNodeSelector(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
	}
	return r
}

// match reports whether the node satisfies both the nodeSelector and the
// required node affinity.
func (r *requiredAffinity) match(node *corev1.Node) bool {
	if r.labelSelector != nil && !r.labelSelector.Matches(labels.Set(node.Labels)) {
		return false
	}
	if r.nodeSelector != nil {
		return r.nodeSelector.match(node)
	}
	return true
}

// nodeSelector is a parsed corev1.NodeSelector: its terms are ORed. Like
// component-helpers' LazyErrorNodeSelector, a term that does not parse
// matches nothing but does not spoil the others, and empty terms are dropped,
// so a selector with no usable term matches no node.
type nodeSelector struct {
	terms []nodeSelectorTerm
}

type nodeSelectorTerm struct {
	matchLabels labels.Selector
	matchFields fields.Selector
	invalid     bool
}

func newNodeSelector(ns *corev1.NodeSelector) *nodeSelector {
	s := &nodeSelector{terms: make([]nodeSelectorTerm, 0, len(ns.NodeSelectorTerms))}
	for i := range ns.NodeSelectorTerms {
		term := &ns.NodeSelectorTerms[i]
		if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
			continue
		}
		s.terms = append(s.terms, newNodeSelectorTerm(term))
	}
	return s
}

func newNodeSelectorTerm(term *corev1.NodeSelectorTerm) nodeSelectorTerm {
	var t nodeSelectorTerm
	var err error
	if len(term.MatchExpressions) != 0 {
		if t.matchLabels, err = labelSelector(term.MatchExpressions); err != nil {
			t.invalid = true
		}
	}
	if len(term.MatchFields) != 0 {
		if t.matchFields, err = fieldSelector(term.MatchFields); err != nil {
			t.invalid = true
		}
	}
	return t
}

// match reports whether any valid term matches the node. A term's fields are
// only looked at when the node has a name, as in component-helpers.
func (s *nodeSelector) match(node *corev1.Node) bool {
	if node == nil {
		return false
	}
	for i := range s.terms {
		t := &s.terms[i]
		if t.invalid {
			continue
		}
		if t.matchLabels != nil && !t.matchLabels.Matches(labels.Set(node.Labels)) {
			continue
		}
		if t.matchFields != nil && node.Name != "" && !t.matchFields.Matches((*nodeFields)(node)) {
			continue
		}
		return true
	}
	return false
}

// labelSelector turns matchExpressions into a label selector, mapping the
// node selector operators onto label selector ones.
func labelSelector(reqs []corev1.NodeSelectorRequirement) (labels.Selector, error) {
	selector := labels.NewSelector()
	for _, expr := range reqs {
		var op selection.Operator
		switch expr.Operator {
		case corev1.NodeSelectorOpIn:
			op = selection.In
		case corev1.NodeSelectorOpNotIn:
			op = selection.NotIn
		case corev1.NodeSelectorOpExists:
			op = selection.Exists
		case corev1.NodeSelectorOpDoesNotExist:
			op = selection.DoesNotExist
		case corev1.NodeSelectorOpGt:
			op = selection.GreaterThan
		case corev1.NodeSelectorOpLt:
			op = selection.LessThan
		default:
			return nil, fmt.Errorf("unsupported operator %q", expr.Operator)
		}
		r, err := labels.NewRequirement(expr.Key, op, expr.Values)
		if err != nil {
			return nil, err
		}
		selector = selector.Add(*r)
	}
	return selector, nil
}

// fieldSelector turns matchFields into a field selector: In and NotIn with
// exactly one value each, ANDed.
func fieldSelector(reqs []corev1.NodeSelectorRequirement) (fields.Selector, error) {
	selectors := make([]fields.Selector, 0, len(reqs))
	for _, expr := range reqs {
		if len(expr.Values) != 1 {
			return nil, fmt.Errorf("matchFields %q: must have one value", expr.Key)
		}
		switch expr.Operator {
		case corev1.NodeSelectorOpIn:
			selectors = append(selectors, fields.OneTermEqualSelector(expr.Key, expr.Values[0]))
		case corev1.NodeSelectorOpNotIn:
			selectors = append(selectors, fields.OneTermNotEqualSelector(expr.Key, expr.Values[0]))
		default:
			return nil, fmt.Errorf("unsupported field operator %q", expr.Operator)
		}
	}
	return fields.AndSelectors(selectors...), nil
}

// nodeFields presents a node as the field set component-helpers builds for
// it ({metadata.name: name}, only for a named node) without allocating one:
// a pointer converts to fields.Fields for free, a map would not be built for
// free.
type nodeFields corev1.Node

var _ fields.Fields = &nodeFields{}

// Has reports whether the field is set.
func (n *nodeFields) Has(field string) bool {
	return field == metav1.ObjectNameField && n.Name != ""
}

// Get returns the field's value, "" when it is not set.
func (n *nodeFields) Get(field string) string {
	if field == metav1.ObjectNameField {
		return n.Name
	}
	return ""
}
