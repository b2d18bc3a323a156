package explain

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/tainttoleration"
)

// tolerate suggests the tolerations for the taints that alone keep the
// blocked member off nodes that would otherwise take it (the GPU taint a
// pod template forgot), proven by placing the gang with them on every
// member. It says how many nodes those are.
func (x *explainer) tolerate(ctx context.Context, g *gang.Gang, _ *gang.Placement, e *Explanation) (*Suggestion, error) {
	if e.Pod == nil {
		return nil, nil
	}
	var taints []corev1.Taint
	nodes := 0
	for i := range e.Nodes {
		n := &e.Nodes[i]
		if n.Feasible || n.OutsideDomain || len(n.Filters) == 0 || verdictOf(n, tainttoleration.Name) == framework.Success {
			continue
		}
		onlyTaints := true
		for _, f := range n.Filters {
			if f.Plugin != tainttoleration.Name && f.Code != framework.Success && f.Code != framework.Skip {
				onlyTaints = false
			}
		}
		if !onlyTaints {
			continue
		}
		node := x.node(n.Name)
		if node == nil {
			continue
		}
		// Every taint the pod does not tolerate, as the plugin judges them:
		// tolerate the first, ask again. A node's condition taints (not
		// ready, unreachable, under pressure, cordoned) are for repairing
		// the node, not for tolerating: such a node does not count.
		probe := e.Pod.DeepCopy()
		var own []corev1.Taint
		repairable := false
		for {
			t, untolerated := tainttoleration.UntoleratedTaint(probe, node)
			if !untolerated {
				break
			}
			probe.Spec.Tolerations = append(probe.Spec.Tolerations, toleration(*t))
			if slices.Contains(nodeConditionTaints, t.Key) {
				repairable = true
				break
			}
			own = append(own, *t)
		}
		if repairable || len(own) == 0 {
			continue
		}
		nodes++
		for _, t := range own {
			if !slices.ContainsFunc(taints, func(o corev1.Taint) bool { return o.Key == t.Key && o.Value == t.Value && o.Effect == t.Effect }) {
				taints = append(taints, t)
			}
		}
	}
	if len(taints) == 0 {
		return nil, nil
	}
	tolerations := make([]corev1.Toleration, len(taints))
	for i, t := range taints {
		tolerations[i] = toleration(t)
	}
	// A toleration of the member's own that misses a taint by its value
	// alone is corrected rather than another added (suggest_nearmiss.go).
	misses := nearMisses(e.Pod, taints)
	then, err := x.place(ctx, x.snap, withMembers(g, func(pod *corev1.Pod) *corev1.Pod {
		c := pod.DeepCopy()
		c.Spec.Tolerations = corrected(c.Spec.Tolerations, taints)
		return c
	}))
	if err != nil || then.Verdict != gang.VerdictPlaced {
		return nil, err
	}
	var words, names []string
	for i, t := range tolerations {
		names = append(names, gang.FormatTaint(&taints[i]))
		w := fmt.Sprintf("{key: %s, operator: %s", t.Key, t.Operator)
		if t.Value != "" {
			w += ", value: " + t.Value
		}
		words = append(words, w+", effect: "+string(t.Effect)+"}")
	}
	who := "the pod"
	if !g.IsLonePod() {
		who = "the members"
	}
	if len(misses) > 0 {
		owner := "the pod's"
		if !g.IsLonePod() {
			owner = "the members'"
		}
		return &Suggestion{Kind: SuggestTolerate, Verified: true, Tolerations: names, NearMiss: true,
			Message: fmt.Sprintf("%s; then %d node(s) take %s: %s", nearMissWords(owner, misses), nodes, who, strings.TrimPrefix(fitsThen(g, then), "then ")),
		}, nil
	}
	return &Suggestion{Kind: SuggestTolerate, Verified: true, Tolerations: names,
		Message: fmt.Sprintf("tolerating %s would let %d node(s) take %s that only these taints keep off (add to the pod template's tolerations: %s); %s",
			strings.Join(names, ", "), nodes, who, strings.Join(words, ", "), fitsThen(g, then)),
	}, nil
}

// toleration tolerates exactly the taint: Equal to its value, or Exists
// when it has none.
func toleration(t corev1.Taint) corev1.Toleration {
	if t.Value == "" {
		return corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpExists, Effect: t.Effect}
	}
	return corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: t.Effect}
}

// node finds a node of the snapshot by name.
func (x *explainer) node(name string) *corev1.Node {
	if x.nodesByName == nil {
		x.nodesByName = make(map[string]*corev1.Node, len(x.plain.NodeInfos()))
		for _, ni := range x.plain.NodeInfos() {
			x.nodesByName[ni.Name()] = ni.Node()
		}
	}
	return x.nodesByName[name]
}
