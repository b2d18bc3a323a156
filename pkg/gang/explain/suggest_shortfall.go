package explain

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
)

// shortfall works out, per resource the blocked member requests, how much
// the members left over need beyond the free capacity of the nodes in scope
// that could take such a member (those only NodeResourcesFit rejects),
// after the best attempt's members are placed. Each node's free amount
// counts in whole requests of the blocked member, since a member cannot be
// split across nodes: 2 free GPUs do not help a member that needs 8.
func (x *explainer) shortfall(g *gang.Gang, p *gang.Placement, e *Explanation) *Suggestion {
	if p.Blocker == nil {
		return nil
	}
	unplaced := unplacedOf(g, p)
	if len(unplaced) == 0 {
		return nil
	}
	eligible := map[string]bool{}
	for _, n := range e.Nodes {
		if !n.OutsideDomain && (n.Feasible || n.Plugin == noderesources.Name) {
			eligible[n.Name] = true
		}
	}
	if len(eligible) == 0 {
		// No node could take such a member whatever it has free: what
		// blocks is not a resource (a selector, taints, affinity).
		return nil
	}
	blocked := framework.ComputePodResource(p.Blocker.Pod).Resource
	if x.nodesTooSmall(p.Blocker.Pod, blocked) != nil {
		// No node is large enough: freeing capacity would not help, and
		// addNodes says what the largest nodes offer.
		return nil
	}
	state, err := x.stateAfter(x.base, p.Planned())
	if err != nil {
		return nil
	}
	needs := make([]*framework.Resource, len(unplaced))
	for i, pod := range unplaced {
		needs[i] = framework.ComputePodResource(pod).Resource
	}
	var out []ResourceShortfall
	for _, name := range requestedNames(blocked) {
		per := blocked.Get(name)
		rs := ResourceShortfall{Name: name}
		for _, r := range needs {
			rs.Need += r.Get(name)
		}
		for _, ni := range state.NodeInfos() {
			if !eligible[ni.Name()] || !inScope(p, ni.Node()) {
				continue
			}
			free := max(0, ni.Allocatable.Get(name)-ni.Requested.Get(name))
			rs.Free += free
			rs.Usable += free / per * per
			if free > rs.MostFree || rs.MostFreeNode == "" {
				rs.MostFree, rs.MostFreeNode = free, ni.Name()
			}
		}
		if rs.Short = rs.Need - rs.Usable; rs.Short > 0 {
			out = append(out, rs)
		}
	}
	if len(out) == 0 {
		return nil
	}
	var amounts []string
	for _, rs := range out {
		amounts = append(amounts, gang.FormatQuantity(rs.Name, rs.Short)+" "+string(rs.Name))
	}
	first := out[0]
	var b strings.Builder
	fmt.Fprintf(&b, "short %s in %s", joinAnd(amounts), where(p))
	if g.Source != "" {
		fmt.Fprintf(&b, ": it holds %d of minimum %d member(s) at once; the %d left need", p.MaxPlaceable, p.MinMember, len(unplaced))
	} else {
		fmt.Fprintf(&b, ": %s/%s needs", p.Blocker.Pod.Namespace, p.Blocker.Pod.Name)
	}
	fmt.Fprintf(&b, " %s %s", gang.FormatQuantity(first.Name, blocked.Get(first.Name)), first.Name)
	if g.Source != "" {
		b.WriteString(" each")
	}
	if first.MostFreeNode == "" {
		b.WriteString(" on one node, and no node there could take it")
	} else {
		fmt.Fprintf(&b, " on one node, and the most free on any node it may run on is %s (%s)",
			gang.FormatQuantity(first.Name, first.MostFree), first.MostFreeNode)
	}
	return &Suggestion{Kind: SuggestShortfall, Shortfall: out, Message: b.String()}
}

// requestedNames lists the resources r holds a positive amount of, in the
// order suggestions name them: extended resources by name, then cpu,
// memory and ephemeral storage.
func requestedNames(r *framework.Resource) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, name := range sortedKeys(r.ScalarResources) {
		if r.ScalarResources[name] > 0 {
			out = append(out, name)
		}
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		if r.Get(name) > 0 {
			out = append(out, name)
		}
	}
	return out
}

// joinAnd joins "a", "b and c".
func joinAnd(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
