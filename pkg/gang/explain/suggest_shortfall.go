package explain

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/dynamicresources"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
)

// shortfall works out, per resource the blocked member requests, how much
// the members left over need beyond the free capacity of the nodes in scope
// that could take such a member (those only NodeResourcesFit rejects), and
// per device request of its claims, how many devices of the class they need
// beyond those free on the nodes only DynamicResources rejects, after the
// best attempt's members are placed. Each node's free amount counts in whole
// requests of the blocked member, since a member cannot be split across
// nodes: 2 free GPUs do not help a member that needs 8.
func (x *explainer) shortfall(ctx context.Context, g *gang.Gang, p *gang.Placement, e *Explanation) *Suggestion {
	if p.Blocker == nil {
		return nil
	}
	unplaced := unplacedOf(g, p)
	if len(unplaced) == 0 {
		return nil
	}
	out := x.resourceShortfall(g, p, e, unplaced)
	out = append(out, x.deviceShortfall(ctx, p, e, unplaced)...)
	if len(out) == 0 {
		return nil
	}
	first := out[0]
	scope, left := where(p), len(unplaced)
	if first.value != "" {
		scope, left = first.value, first.left
	}
	var amounts []string
	for _, rs := range out {
		if rs.value != first.value {
			continue
		}
		a := rs.amount(rs.Short)
		if rs.DeviceClass != "" {
			a += " for request " + string(rs.Name)
		}
		amounts = append(amounts, a)
	}
	var b strings.Builder
	if first.Holes != nil && first.DeviceClass == "" {
		// Enough is free in all, in holes too small for one member:
		// fragmentation, not a shortage (issue #27).
		fmt.Fprintf(&b, "fragmented: %s free in %s would hold the %d member(s) left, but in holes smaller than the %s each needs on one node (%s); whole, ",
			first.amount(first.Free), scope, left, first.amount(first.per), holes(first))
	}
	fmt.Fprintf(&b, "short %s in %s", joinAnd(amounts), scope)
	switch {
	case first.pinned:
		fmt.Fprintf(&b, ", where the blocked %s's other members go: it holds %d of minimum %d member(s) at once; the %d left of it need",
			first.unit, p.MaxPlaceable, p.MinMember, left)
	case first.value != "":
		fmt.Fprintf(&b, " (of the values no other %s holds, the one with the most room): it holds %d of minimum %d member(s) at once; the %d left of the blocked %s need",
			first.unit, p.MaxPlaceable, p.MinMember, left, first.unit)
	case !g.IsLonePod():
		fmt.Fprintf(&b, ": it holds %d of minimum %d member(s) at once; the %d left need", p.MaxPlaceable, p.MinMember, len(unplaced))
	default:
		fmt.Fprintf(&b, ": %s/%s needs", p.Blocker.Pod.Namespace, p.Blocker.Pod.Name)
	}
	fmt.Fprintf(&b, " %s", first.amount(first.per))
	if !g.IsLonePod() {
		b.WriteString(" each")
	}
	switch {
	case first.MostFreeNode == "":
		b.WriteString(" on one node, and no node there could take it")
	case first.value != "":
		mostFree := gang.FormatQuantity(first.Name, first.MostFree)
		if first.DeviceClass != "" {
			mostFree = fmt.Sprint(first.MostFree)
		}
		where := " on one node, all in one value,"
		if first.pinned {
			where = " on one node there,"
		}
		fmt.Fprintf(&b, "%s and the most free on any node there is %s (%s)", where, mostFree, first.MostFreeNode)
	default:
		mostFree := gang.FormatQuantity(first.Name, first.MostFree)
		if first.DeviceClass != "" {
			mostFree = fmt.Sprint(first.MostFree)
		}
		fmt.Fprintf(&b, " on one node, and the most free on any node it may run on is %s (%s)", mostFree, first.MostFreeNode)
	}
	list := make([]ResourceShortfall, len(out))
	names := make([]corev1.ResourceName, 0, len(out))
	for i, rs := range out {
		list[i] = rs.ResourceShortfall
		if rs.DeviceClass == "" {
			names = append(names, rs.Name)
		}
	}
	// An init container whose request sets the member's is named (requests.go).
	b.WriteString(setByInit(p.Blocker.Pod, names))
	return &Suggestion{Kind: SuggestShortfall, Shortfall: list, Message: b.String()}
}

// shortOf is a shortfall with the blocked member's own amount (per); for
// a sub-group that needs a value of a key of its own (value set: key=value),
// the shortfall of its members left (left) in the value that comes closest.
type shortOf struct {
	ResourceShortfall
	per         int64
	value, unit string
	left        int
	// pinned: the sub-group's placed members hold the value.
	pinned bool
}

// amount words v of the shortfall's resource: "8 nvidia.com/gpu", "16Gi
// memory", "8 gpu.nvidia.com device(s)".
func (s shortOf) amount(v int64) string {
	if s.DeviceClass != "" {
		return fmt.Sprintf("%d %s device(s)", v, s.DeviceClass)
	}
	return gang.FormatQuantity(s.Name, v) + " " + string(s.Name)
}

// resourceShortfall is the shortfall of each resource the blocked member
// requests (but extended resources DeviceClasses back: deviceShortfall) on
// the nodes only NodeResourcesFit rejects.
func (x *explainer) resourceShortfall(g *gang.Gang, p *gang.Placement, e *Explanation, unplaced []*corev1.Pod) []shortOf {
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
	// A sub-group with a value of its own (an exclusive JobSet Job, a
	// LeaderWorkerSet group): its members left need room in one value no
	// other sub-group holds (the one its placed members hold, when some
	// are placed); the value with the most room is the measure.
	sg := g.SubGroups
	unit := ""
	if sg != nil && sg.TopologyKey != "" {
		unit = sg.Of(p.Blocker.Pod)
	}
	// valueOf is the value of the sub-group's key a node counts in; ok is
	// false for a node the sub-group may not use.
	valueOf := func(*framework.NodeInfo) (v string, ok bool) { return "", true }
	pinned := "" // the value the sub-group's own placed members hold
	if unit != "" {
		taken := map[string]bool{}
		for _, a := range p.Planned() {
			switch u := sg.Of(a.Pod); {
			case u == unit:
				pinned = x.node(a.Node).Labels[sg.TopologyKey]
			case u != "":
				taken[x.node(a.Node).Labels[sg.TopologyKey]] = true
			}
		}
		for _, pod := range p.Running {
			if u := sg.Of(pod); u != "" && u != unit {
				taken[x.node(pod.Spec.NodeName).Labels[sg.TopologyKey]] = true
			}
		}
		unplaced = slices.DeleteFunc(slices.Clone(unplaced), func(pod *corev1.Pod) bool { return sg.Of(pod) != unit })
		valueOf = func(ni *framework.NodeInfo) (string, bool) {
			v, ok := ni.Node().Labels[sg.TopologyKey]
			return v, ok && !taken[v] && (pinned == "" || v == pinned)
		}
	}
	needs := make([]*framework.Resource, len(unplaced))
	for i, pod := range unplaced {
		needs[i] = framework.ComputePodResource(pod).Resource
	}
	var out []shortOf
	for _, name := range requestedNames(blocked) {
		if x.base.DRA().ExtendedResourceClass(name) != nil {
			continue
		}
		per := blocked.Get(name)
		var need int64
		for _, r := range needs {
			need += r.Get(name)
		}
		byValue := map[string]*shortOf{}
		var values []string
		for _, ni := range state.NodeInfos() {
			if !eligible[ni.Name()] || !inScope(p, ni.Node()) {
				continue
			}
			v, ok := valueOf(ni)
			if !ok {
				continue
			}
			rs := byValue[v]
			if rs == nil {
				rs = &shortOf{ResourceShortfall: ResourceShortfall{Name: name, Need: need}, per: per, left: len(unplaced)}
				if unit != "" {
					rs.value, rs.unit, rs.pinned = sg.TopologyKey+"="+v, sg.Unit, pinned != ""
					rs.Domain = rs.value
				}
				byValue[v] = rs
				values = append(values, v)
			}
			free := max(0, ni.Allocatable.Get(name)-ni.Requested.Get(name))
			rs.Free += free
			rs.Usable += free / per * per
			if free > 0 {
				if rs.Holes == nil {
					rs.Holes = map[int64]int{}
				}
				rs.Holes[free]++
			}
			if free > rs.MostFree || rs.MostFreeNode == "" {
				rs.MostFree, rs.MostFreeNode = free, ni.Name()
			}
		}
		if len(values) == 0 {
			continue
		}
		// The value with the most room (the first by name among equals).
		slices.Sort(values)
		best := byValue[values[0]]
		for _, v := range values[1:] {
			if byValue[v].Usable > best.Usable {
				best = byValue[v]
			}
		}
		if best.Short = best.Need - best.Usable; best.Short > 0 {
			if best.Free < best.Need {
				best.Holes = nil // short in all: not a matter of holes
			}
			out = append(out, *best)
		}
	}
	return out
}

// deviceShortfall is the shortfall in devices of each request of the
// blocked member's claims (prioritized alternatives and allocation mode All
// left out: they have no one count), on the nodes in scope only
// DynamicResources rejects, counting each node's free devices in whole
// requests (a member's claim is allocated on one node). The members left
// over need what their own requests of the same name and class ask for.
func (x *explainer) deviceShortfall(ctx context.Context, p *gang.Placement, e *Explanation, unplaced []*corev1.Pod) []shortOf {
	type key struct{ request, class string }
	var nodes []*Node
	for i := range e.Nodes {
		n := &e.Nodes[i]
		if !n.OutsideDomain && n.Plugin == dynamicresources.Name && len(n.Devices) > 0 {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		return nil
	}
	need := map[key]int64{}
	for _, pod := range unplaced {
		for _, f := range x.base.DeviceFit(ctx, pod, nodes[0].Name) {
			if !f.Alternative && f.Wanted > 0 {
				need[key{f.Request, f.Class}] += f.Wanted
			}
		}
	}
	var out []shortOf
	for _, f := range nodes[0].Devices {
		k := key{f.Request, f.Class}
		if f.Alternative || f.Wanted == 0 || need[k] == 0 {
			continue
		}
		rs := shortOf{ResourceShortfall: ResourceShortfall{Name: corev1.ResourceName(f.Request), DeviceClass: f.Class, Need: need[k]}, per: f.Wanted}
		for _, n := range nodes {
			for _, nf := range n.Devices {
				if nf.Request != f.Request || nf.Class != f.Class {
					continue
				}
				free := int64(nf.Free)
				rs.Free += free
				rs.Usable += free / f.Wanted * f.Wanted
				if free > rs.MostFree || rs.MostFreeNode == "" {
					rs.MostFree, rs.MostFreeNode = free, n.Name
				}
			}
		}
		if rs.Short = rs.Need - rs.Usable; rs.Short > 0 {
			out = append(out, rs)
		}
	}
	return out
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

// holes words a fragmented resource's free amounts by node, largest first:
// "4 free on 2,000 nodes, 2 free on 10 nodes".
func holes(s shortOf) string {
	sizes := holeSizesDesc(s.Holes)
	var parts []string
	for i, k := range sizes {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("%d smaller size(s)", len(sizes)-4))
			break
		}
		parts = append(parts, fmt.Sprintf("%s free on %d node(s)", gang.FormatQuantity(s.Name, k), s.Holes[k]))
	}
	return strings.Join(parts, ", ")
}

// holeSizesDesc are the hole sizes of holes (free amount -> nodes),
// largest first.
func holeSizesDesc(holes map[int64]int) []int64 {
	sizes := slices.Sorted(maps.Keys(holes))
	slices.Reverse(sizes)
	return sizes
}
