package explain

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/interpodaffinity"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeports"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/dynamicresources"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeunschedulable"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/tainttoleration"
)

// nodeConditionTaints are the taints the node lifecycle controller puts on
// nodes that are not Ready or under pressure; they go when the node is
// healthy again.
var nodeConditionTaints = []string{
	corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable, corev1.TaintNodeUnschedulable,
	corev1.TaintNodeMemoryPressure, corev1.TaintNodeDiskPressure, corev1.TaintNodePIDPressure,
	corev1.TaintNodeNetworkUnavailable, corev1.TaintNodeOutOfService,
}

// conditionTaints returns the node's node-condition taints.
func conditionTaints(node *corev1.Node) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range node.Spec.Taints {
		if slices.Contains(nodeConditionTaints, t.Key) {
			out = append(out, t)
		}
	}
	return out
}

// healthy returns a copy of node uncordoned, Ready, without its
// node-condition taints.
func healthy(node *corev1.Node) *corev1.Node {
	c := node.DeepCopy()
	c.Spec.Unschedulable = false
	c.Spec.Taints = slices.DeleteFunc(c.Spec.Taints, func(t corev1.Taint) bool { return slices.Contains(nodeConditionTaints, t.Key) })
	c.Status.Conditions = slices.DeleteFunc(c.Status.Conditions, func(nc corev1.NodeCondition) bool { return nc.Type == corev1.NodeReady })
	c.Status.Conditions = append(c.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"})
	return c
}

// passesOnceHealthy reports whether a node's filter verdicts for the
// blocked member all pass, but for the ones a healthy copy of the node
// would pass (NodeUnschedulable, node-condition taints) and, when
// resources is set, NodeResourcesFit (a new node is empty).
func passesOnceHealthy(n *Node, pod *corev1.Pod, node *corev1.Node, resources bool) bool {
	if len(n.Filters) == 0 {
		return n.Feasible
	}
	for _, f := range n.Filters {
		if f.Code == framework.Success || f.Code == framework.Skip {
			continue
		}
		switch f.Plugin {
		case nodeunschedulable.Name:
			continue
		case tainttoleration.Name:
			if _, untolerated := tainttoleration.UntoleratedTaint(pod, healthy(node)); !untolerated {
				continue
			}
		case noderesources.Name:
			if resources {
				continue
			}
		case nodeports.Name:
			// A host port pods on the node hold: an empty node of the
			// shape has it free; adding one is proven by placing again.
			if resources {
				continue
			}
		case interpodaffinity.Name:
			// A pod the member keeps away from by hostname: an empty node
			// has none (anti-affinity over wider domains, or affinity,
			// an added node does not settle).
			if resources && onlyHostnameAntiAffinity(pod) {
				continue
			}
		case dynamicresources.Name:
			// Devices the node has but other claims hold are capacity too.
			if resources && len(n.Devices) > 0 && !slices.ContainsFunc(n.Devices, func(f dynamicresources.RequestFit) bool {
				return f.Matching == 0 || (f.Wanted > 0 && int64(f.Matching) < f.Wanted)
			}) {
				continue
			}
		}
		return false
	}
	return true
}

// repairNodes tries nodes that are cordoned or not Ready (or under
// pressure) and would otherwise take the blocked member: each repaired
// alone on a copy of the snapshot, then, if none is enough alone, all
// together. Nodes where the gang was placed come first.
func (x *explainer) repairNodes(ctx context.Context, g *gang.Gang, p *gang.Placement, e *Explanation) (*Suggestion, error) {
	if p.Blocker == nil {
		return nil, nil
	}
	pod := p.Blocker.Pod
	byName := map[string]*corev1.Node{}
	for _, n := range x.snap.Nodes {
		byName[n.Name] = n
	}
	podInfo := framework.NewPodInfo(pod)
	infos := map[string]*framework.NodeInfo{}
	for _, ni := range x.base.NodeInfos() {
		infos[ni.Name()] = ni
	}
	var candidates []*corev1.Node
	room := map[string]int{}
	for i := range e.Nodes {
		n := &e.Nodes[i]
		node := byName[n.Name]
		if node == nil || (!node.Spec.Unschedulable && len(conditionTaints(node)) == 0) {
			continue
		}
		if passesOnceHealthy(n, pod, node, false) {
			candidates = append(candidates, node)
			room[node.Name] = roomFor(pod, &podInfo.Res, infos[node.Name], x.base.DRA())
		}
	}
	left := len(unplacedOf(g, p))
	slices.SortStableFunc(candidates, func(a, b *corev1.Node) int {
		ia, ib := inScope(p, a), inScope(p, b)
		if ia != ib {
			if ia {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Name, b.Name)
	})
	if len(candidates) > maxRepairCandidates {
		candidates = candidates[:maxRepairCandidates]
	}
	try := func(nodes []*corev1.Node) (*gang.Placement, error) {
		var changed []*corev1.Node
		for _, n := range nodes {
			changed = append(changed, healthy(n))
		}
		// The explainer's scheduler with the nodes repaired, placed as on
		// a changed copy of the snapshot.
		fixed, err := x.plain.WithNodesReplaced(changed)
		if err != nil {
			return nil, err
		}
		return x.placeOn(ctx, fixed, x.snap, g)
	}
	s := &Suggestion{Kind: SuggestRepairNodes, Verified: true}
	var then *gang.Placement
	total := 0
	for _, n := range candidates {
		total += room[n.Name]
		if room[n.Name] < left {
			continue // it cannot take every member left over by itself
		}
		placed, err := try([]*corev1.Node{n})
		if err != nil {
			return nil, err
		}
		if placed.Verdict == gang.VerdictPlaced {
			s.Repairs = append(s.Repairs, NodeRepair{Node: n.Name, Uncordon: n.Spec.Unschedulable, Taints: conditionTaints(n)})
			if then == nil {
				then = placed
			}
		}
	}
	if len(s.Repairs) == 0 && len(candidates) > 1 && total >= left {
		placed, err := try(candidates)
		if err != nil {
			return nil, err
		}
		if placed.Verdict == gang.VerdictPlaced {
			s.Together, then = true, placed
			for _, n := range candidates {
				s.Repairs = append(s.Repairs, NodeRepair{Node: n.Name, Uncordon: n.Spec.Unschedulable, Taints: conditionTaints(n)})
			}
		}
	}
	if len(s.Repairs) == 0 {
		return nil, nil
	}
	var actions []string
	for _, r := range s.Repairs {
		actions = append(actions, r.String())
	}
	if s.Together {
		s.Message = strings.Join(actions, " and ") + ", all of them, would make room; " + fitsThen(g, then)
	} else if len(actions) == 1 {
		s.Message = actions[0] + " would make room; " + fitsThen(g, then)
	} else {
		s.Message = strings.Join(actions, ", or ") + ": any one of them would make room; " + fitsThen(g, then)
	}
	return s, nil
}

// String says what to do to the node.
func (r NodeRepair) String() string {
	var taints []string
	for _, t := range r.Taints {
		if r.Uncordon && t.Key == corev1.TaintNodeUnschedulable {
			continue // it goes with the cordon
		}
		taints = append(taints, gang.FormatTaint(&t))
	}
	switch {
	case r.Uncordon && len(taints) > 0:
		return fmt.Sprintf("uncordoning %s and getting it Ready (its taints %s go)", r.Node, strings.Join(taints, ", "))
	case r.Uncordon:
		return "uncordoning " + r.Node
	}
	return fmt.Sprintf("getting %s Ready again (its taints %s go)", r.Node, strings.Join(taints, ", "))
}

// onlyHostnameAntiAffinity: the pod's required inter-pod terms are all
// anti-affinity over the hostname.
func onlyHostnameAntiAffinity(pod *corev1.Pod) bool {
	af := pod.Spec.Affinity
	if af == nil || af.PodAntiAffinity == nil || len(af.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) == 0 {
		return false
	}
	if af.PodAffinity != nil && len(af.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
		return false
	}
	for _, t := range af.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if t.TopologyKey != corev1.LabelHostname {
			return false
		}
	}
	return true
}
