package explain

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeaffinity"
)

// SelectorFix is one label a node selector or required node affinity asks
// for that no node carries, and the nearest that nodes do carry.
type SelectorFix struct {
	// Field is "nodeSelector" or "nodeAffinity".
	Field string
	// Key and Value are what the pod asks for (Value is empty for an
	// Exists expression); NewKey and NewValue the nearest label nodes
	// carry, and Nodes how many carry it.
	Key, Value       string
	NewKey, NewValue string
	Nodes            int
}

// maxListedValues bounds the existing values named when none is near.
const maxListedValues = 5

// selector handles a node selector or required node affinity that no node
// of the cluster matches: for each label it asks for that no node carries,
// the nearest one nodes do carry (a typo such as "-80G" for "-80GB", or a
// misspelt key), with how many nodes carry it, proven by placing the gang
// with the corrected labels. When no carried label is near, it names the
// values nodes carry for that key instead (no node is suggested with a label
// nobody uses).
func (x *explainer) selector(ctx context.Context, g *gang.Gang, _ *gang.Placement, e *Explanation) (*Suggestion, error) {
	pod := e.Pod
	if pod == nil {
		return nil, nil
	}
	for i := range e.Nodes {
		if verdictOf(&e.Nodes[i], nodeaffinity.Name) == framework.Success {
			return nil, nil // some node passes: not a label nobody carries
		}
	}
	idx := x.labelIndex()
	var fixes []SelectorFix
	var unknown []string
	ask := func(field, key, value string, exists bool) {
		if exists {
			if idx.keys[key] > 0 {
				return
			}
		} else if idx.values[key][value] > 0 {
			return
		}
		fix := SelectorFix{Field: field, Key: key, Value: value}
		switch {
		case idx.keys[key] > 0:
			// The key exists: the value is wrong.
			fix.NewKey = key
			fix.NewValue = nearest(value, sortedKeys(idx.values[key]))
		default:
			// The key itself is unknown: a misspelt key keeps its value.
			fix.NewKey = nearest(key, sortedKeys(idx.keys))
			switch {
			case fix.NewKey == "":
			case exists:
			case idx.values[fix.NewKey][value] > 0:
				fix.NewValue = value
			default:
				fix.NewValue = nearest(value, sortedKeys(idx.values[fix.NewKey]))
			}
		}
		if fix.NewKey == "" || (!exists && fix.NewValue == "") {
			unknown = append(unknown, describeUnknown(key, value, exists, idx))
			return
		}
		if exists {
			fix.Nodes = idx.keys[fix.NewKey]
		} else {
			fix.Nodes = idx.values[fix.NewKey][fix.NewValue]
		}
		fixes = append(fixes, fix)
	}
	for _, key := range sortedKeys(pod.Spec.NodeSelector) {
		ask("nodeSelector", key, pod.Spec.NodeSelector[key], false)
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, r := range term.MatchExpressions {
				switch r.Operator {
				case corev1.NodeSelectorOpIn:
					// A value nodes carry makes the expression match some node.
					if !slices.ContainsFunc(r.Values, func(v string) bool { return idx.values[r.Key][v] > 0 }) {
						for _, v := range r.Values {
							ask("nodeAffinity", r.Key, v, false)
						}
					}
				case corev1.NodeSelectorOpExists:
					ask("nodeAffinity", r.Key, "", true)
				}
			}
		}
	}
	if len(fixes) == 0 && len(unknown) == 0 {
		return nil, nil // each label is carried, only not together
	}
	var words []string
	for _, f := range fixes {
		// A near miss by case alone is named so: label keys and values
		// are matched exactly (issue #27).
		caseOnly := ""
		if strings.EqualFold(formatLabel(f.Key, f.Value), formatLabel(f.NewKey, f.NewValue)) {
			caseOnly = ", which differs only by case (labels match exactly)"
		}
		words = append(words, fmt.Sprintf("%s %s: no node carries it; the nearest label nodes carry is %s (%d node(s))%s",
			f.Field, formatLabel(f.Key, f.Value), formatLabel(f.NewKey, f.NewValue), f.Nodes, caseOnly))
	}
	words = append(words, unknown...)
	msg := strings.Join(words, "; ")
	s := &Suggestion{Kind: SuggestSelector, Selector: fixes}
	if len(fixes) == 0 {
		s.Message = msg
		return s, nil
	}
	then, err := x.place(ctx, x.snap, withMembers(g, func(m *corev1.Pod) *corev1.Pod { return withSelectorFixes(m, fixes) }))
	if err != nil {
		return nil, err
	}
	if then.Verdict == gang.VerdictPlaced {
		s.Verified = true
		s.Message = msg + "; " + fitsThen(g, then)
	} else {
		s.Message = msg + "; with that label it would still not fit (explain the corrected manifest for why)"
	}
	return s, nil
}

// labelIndex counts, over the snapshot's nodes, the nodes carrying each
// label key and each key=value.
type labelIndex struct {
	keys   map[string]int
	values map[string]map[string]int
}

func (x *explainer) labelIndex() *labelIndex {
	idx := &labelIndex{keys: map[string]int{}, values: map[string]map[string]int{}}
	for _, n := range x.snap.Nodes {
		for k, v := range n.Labels {
			idx.keys[k]++
			if idx.values[k] == nil {
				idx.values[k] = map[string]int{}
			}
			idx.values[k][v]++
		}
	}
	return idx
}

// describeUnknown says that no node carries a label, and what nodes carry
// for that key.
func describeUnknown(key, value string, exists bool, idx *labelIndex) string {
	if idx.keys[key] == 0 {
		return fmt.Sprintf("no node carries the label key %s, nor one near it", key)
	}
	values := sortedKeys(idx.values[key])
	slices.SortStableFunc(values, func(a, b string) int { return cmp.Compare(idx.values[key][b], idx.values[key][a]) })
	// Only the values listed are worded; listSome counts the rest.
	listed := slices.Clone(values)
	for i, v := range listed[:min(len(listed), maxListedValues)] {
		listed[i] = fmt.Sprintf("%s (%d)", v, idx.values[key][v])
	}
	return fmt.Sprintf("no node carries %s; nodes carry %s=%s", formatLabel(key, value), key, listSome(listed, maxListedValues))
}

// formatLabel prints key=value, or the key alone for Exists.
func formatLabel(key, value string) string {
	if value == "" {
		return key
	}
	return key + "=" + value
}

// withSelectorFixes is a copy of pod whose node selector and required node
// affinity ask for the corrected labels.
func withSelectorFixes(pod *corev1.Pod, fixes []SelectorFix) *corev1.Pod {
	c := pod.DeepCopy()
	for _, f := range fixes {
		switch f.Field {
		case "nodeSelector":
			if v, ok := c.Spec.NodeSelector[f.Key]; ok && v == f.Value {
				delete(c.Spec.NodeSelector, f.Key)
				c.Spec.NodeSelector[f.NewKey] = f.NewValue
			}
		case "nodeAffinity":
			a := c.Spec.Affinity
			if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
				continue
			}
			terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
			for i := range terms {
				for j := range terms[i].MatchExpressions {
					r := &terms[i].MatchExpressions[j]
					if r.Key != f.Key {
						continue
					}
					if r.Operator == corev1.NodeSelectorOpExists && f.Value == "" {
						r.Key = f.NewKey
						continue
					}
					if r.Operator == corev1.NodeSelectorOpIn && slices.Contains(r.Values, f.Value) {
						r.Key = f.NewKey
						r.Values = slices.Clone(r.Values)
						r.Values[slices.Index(r.Values, f.Value)] = f.NewValue
					}
				}
			}
		}
	}
	return c
}

// nearest returns the candidate nearest to s by edit distance (ignoring
// case), if it is near enough to be a slip of the keyboard: at most a
// quarter of the longer string's characters apart (at least 2), or s is a
// prefix of it or it of s. Ties go to the first candidate.
func nearest(s string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		limit := max(2, max(utf8.RuneCountInString(s), utf8.RuneCountInString(c))/4)
		near := d <= limit || (s != "" && c != "" && (strings.HasPrefix(c, s) || strings.HasPrefix(s, c)))
		if near && (bestDist < 0 || d < bestDist) {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
