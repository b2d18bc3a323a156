package explain

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/dynamicresources"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
)

// addNodes finds the smallest node shape that, added N times where the
// gang was placed, lets it fit, and the smallest N. Only shapes the cluster
// has are tried (docs/design.md#commands): those of nodes the blocked member
// could use (rejected only for want of free resources, a cordon or a node
// condition), from the smallest, those in the gang's domain first; a node
// from another domain is added with the domain's label. Every count is
// proven by placing the gang on a copy of the snapshot with the nodes added
// (with copies of their DaemonSet pods). When no node could hold the member
// even empty, it says what the largest nodes offer instead
// (SuggestNodesTooSmall), and suggests no node at all.
func (x *explainer) addNodes(ctx context.Context, g *gang.Gang, p *gang.Placement, e *Explanation) (*Suggestion, error) {
	if p.Blocker == nil {
		return nil, nil
	}
	unplaced := unplacedOf(g, p)
	if len(unplaced) == 0 {
		return nil, nil
	}
	pod := p.Blocker.Pod
	type shape struct {
		node    *corev1.Node
		size    [3]int64
		room    int  // blocked members an empty node of the shape holds
		outside bool // in another domain than the gang's
		devices string
	}
	var shapes []shape
	seen := map[string]bool{}
	podInfo := framework.NewPodInfo(pod)
	for i := range e.Nodes {
		n := &e.Nodes[i]
		node := x.node(n.Name)
		if node == nil || !passesOnceHealthy(n, pod, node, true) {
			continue
		}
		// A node outside the domain was judged by the cycle without it.
		outside := !inScope(p, node)
		// The first node of a shape with room stands for the shape: the
		// key is cheap, the room is not (65,000 nodes of a few shapes).
		key := shapeKey(node) + deviceKey(n.Devices)
		if outside {
			key = "outside:" + key
		}
		if seen[key] {
			continue
		}
		empty := framework.NewNodeInfo(healthy(node))
		for _, ds := range x.daemonSetPods(node.Name) {
			empty.AddPod(ds)
		}
		room := roomFor(pod, &podInfo.Res, empty, x.base.DRA())
		if len(pod.Spec.ResourceClaims) > 0 || len(n.Devices) > 0 {
			// An empty node of the shape has every device of its slices free.
			room = min(room, deviceRoom(n.Devices))
		}
		if room == 0 {
			continue
		}
		seen[key] = true
		shapes = append(shapes, shape{node: node, size: shapeSize(node, podInfo.Res.Resource), room: room, outside: outside, devices: devicesText(n.Devices)})
	}
	slices.SortStableFunc(shapes, func(a, b shape) int {
		return cmp.Or(compareBool(a.outside, b.outside), slices.Compare(a.size[:], b.size[:]), cmp.Compare(a.node.Name, b.node.Name))
	})
	if len(shapes) > maxShapes {
		shapes = shapes[:maxShapes]
	}
	addsUp := x.roomAddsUp(ctx, g, p)
	for _, sh := range shapes {
		like := func(name string) *corev1.Node {
			c := newNodeLike(sh.node, name)
			if sh.outside {
				c.Labels[p.TopologyKey] = p.Domain
			}
			return c
		}
		n, placed, err := x.smallestCount(ctx, g, ceilDiv(len(unplaced), sh.room), len(unplaced), addsUp, func(i int) (*corev1.Node, []*corev1.Pod, []*resourcev1.ResourceSlice) {
			name := fmt.Sprintf("%s-new-%d", sh.node.Name, i)
			return like(name), copyPods(x.daemonSetPods(sh.node.Name), name), copySlices(x.snap.ResourceSlices, sh.node.Name, name)
		})
		if err != nil {
			return nil, err
		}
		if n > 0 {
			t := like(sh.node.Name)
			newNodes := &NodeShape{Like: sh.node.Name, Count: n, Allocatable: t.Status.Allocatable, Labels: t.Labels, Taints: t.Spec.Taints,
				TopologyKey: p.TopologyKey, Domain: p.Domain}
			return &Suggestion{Kind: SuggestAddNodes, Verified: true, NewNodes: newNodes,
				Message: fmt.Sprintf("adding %d node(s) like %s (allocatable %s%s) to %s would make room; %s", n, sh.node.Name,
					formatResourceList(t.Status.Allocatable, podInfo.Res.Resource), sh.devices, where(p), fitsOnNew(g, placed))}, nil
		}
	}
	if len(shapes) == 0 {
		return x.nodesTooSmall(pod, podInfo.Res.Resource), nil
	}
	return nil, nil
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// nodesTooSmall names, per resource the pod requests more of than any
// node of the cluster has allocatable, the most one node has: no node
// shape the cluster has could hold the pod, so none is suggested. It is
// nil when each resource alone fits on some node.
func (x *explainer) nodesTooSmall(pod *corev1.Pod, req *framework.Resource) *Suggestion {
	names := requestedNames(req)
	largest := make([]LargestNode, len(names))
	for i, name := range names {
		largest[i] = LargestNode{Name: name, Request: req.Get(name)}
	}
	for _, node := range x.snap.Nodes {
		alloc := framework.NewResource(node.Status.Allocatable)
		for i := range largest {
			if a := alloc.Get(largest[i].Name); a > largest[i].Allocatable || largest[i].Node == "" {
				largest[i].Allocatable, largest[i].Node = a, node.Name
			}
		}
	}
	largest = slices.DeleteFunc(largest, func(l LargestNode) bool { return l.Allocatable >= l.Request })
	if len(largest) == 0 {
		return nil
	}
	var words []string
	for _, l := range largest {
		node := "no node has any"
		if l.Allocatable > 0 {
			node = fmt.Sprintf("the most any node has allocatable is %s (%s)", gang.FormatQuantity(l.Name, l.Allocatable), l.Node)
		}
		words = append(words, fmt.Sprintf("%s %s, %s", gang.FormatQuantity(l.Name, l.Request), l.Name, node))
	}
	// An init container whose request sets the pod's is named, and its
	// request is the one to lower (requests.go).
	short := make([]corev1.ResourceName, len(largest))
	for i, l := range largest {
		short[i] = l.Name
	}
	lower := "lower the request"
	init := setByInit(pod, short)
	if init != "" {
		lower = "lower that init container's request"
	}
	return &Suggestion{Kind: SuggestNodesTooSmall, Largest: largest,
		Message: fmt.Sprintf("no node of the cluster could hold %s/%s even empty: it requests %s%s; adding nodes of the shapes the cluster has would not help, so %s",
			pod.Namespace, pod.Name, strings.Join(words, "; "), init, lower)}
}

// roomAddsUp says the room for g's members adds up node by node, so that a
// guess of added nodes that fits, made from the members left over and the
// room an empty node of the shape has for them, is the least count: every
// member must fit (no minimum below the members, none running), all are
// of one class (equal in everything a plugin reads), a member's fit on a
// node depends on that node alone (Scheduler.NodeLocal: no pod affinity,
// no spread that refuses, its own or the profile's defaults), and no
// topology, sub-groups or Volcano queue ties them together. Then each node takes as
// many as fit on it whatever goes elsewhere (Filter looks at that node,
// and at running pods that do not move), the placement on the cluster as
// it is filled every node it could, and n added nodes hold at most n times
// an empty node's room: one node fewer than ceil(left over / room) cannot
// hold them.
func (x *explainer) roomAddsUp(ctx context.Context, g *gang.Gang, p *gang.Placement) bool {
	pending := g.Pending()
	if p.TopologyKey != "" || p.PreferredTopologyKey != "" || g.SubGroups != nil || g.Source == volcano.Source ||
		len(g.Running()) > 0 || len(g.Succeeded) > 0 || int(g.MinMember) != len(pending) {
		return false
	}
	seq := x.plain.NewSequence()
	first := ""
	for i, pod := range pending {
		key, ok := seq.Class(pod)
		if !ok || (i > 0 && key != first) {
			return false
		}
		first = key
	}
	// One class: one member answers for all.
	return len(pending) > 0 && x.plain.NodeLocal(ctx, pending[0])
}

// smallestCount finds the least n in 1..limit for which adding the nodes
// made by node(1..n) lets g fit. It starts from guess (how many nodes the
// members left over need by their requests alone), proves it, and checks
// that one node fewer is not enough, unless addsUp says it cannot be
// (roomAddsUp); a guess that does not fit is doubled until one does, and
// the count then bisected. It returns 0 when even limit nodes do not fit.
func (x *explainer) smallestCount(ctx context.Context, g *gang.Gang, guess, limit int, addsUp bool, node func(i int) (*corev1.Node, []*corev1.Pod, []*resourcev1.ResourceSlice)) (int, *gang.Placement, error) {
	limit = max(limit, guess, 1)
	results := map[int]*gang.Placement{}
	try := func(n int) (bool, error) {
		if n <= 0 {
			return false, nil // the snapshot as is: it does not fit
		}
		if p, ok := results[n]; ok {
			return p.Verdict == gang.VerdictPlaced, nil
		}
		// The explainer's scheduler with the nodes added (not built again
		// for the whole snapshot), then placed as on a changed copy.
		var nodes []*corev1.Node
		var pods []*corev1.Pod
		var resourceSlices []*resourcev1.ResourceSlice
		for i := 1; i <= n; i++ {
			n, p, rs := node(i)
			nodes, pods, resourceSlices = append(nodes, n), append(pods, p...), append(resourceSlices, rs...)
		}
		grown, err := x.plain.WithNodes(nodes, pods, resourceSlices)
		if err != nil {
			return false, err
		}
		p, err := x.placeOn(ctx, grown, x.snap, g)
		if err != nil {
			return false, err
		}
		results[n] = p
		return p.Verdict == gang.VerdictPlaced, nil
	}
	// lo does not fit, hi fits.
	lo, hi := 0, max(1, min(guess, limit))
	first := hi
	for {
		ok, err := try(hi)
		if err != nil {
			return 0, nil, err
		}
		if ok {
			break
		}
		if hi == limit {
			return 0, nil, nil
		}
		lo, hi = hi, min(2*hi, limit)
	}
	// The guess usually is the answer: one try below it proves that, or
	// the room adding up does.
	if hi == first && addsUp && hi == guess {
		lo = hi - 1
	}
	if hi-lo > 1 {
		ok, err := try(hi - 1)
		if err != nil {
			return 0, nil, err
		}
		if !ok {
			lo = hi - 1
		}
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		ok, err := try(mid)
		if err != nil {
			return 0, nil, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, results[hi], nil
}

func ceilDiv(a, b int) int {
	if b <= 0 {
		return a
	}
	return (a + b - 1) / b
}

// daemonSetPods returns the pods a DaemonSet runs on node: a new node of its
// shape would run them too.
func (x *explainer) daemonSetPods(node string) []*corev1.Pod {
	if x.dsPods == nil {
		x.dsPods = map[string][]*corev1.Pod{}
		for _, pod := range x.snap.Pods {
			if pod.Spec.NodeName == "" {
				continue
			}
			for _, ref := range pod.OwnerReferences {
				if ref.Kind == "DaemonSet" && ref.Controller != nil && *ref.Controller {
					x.dsPods[pod.Spec.NodeName] = append(x.dsPods[pod.Spec.NodeName], pod)
					break
				}
			}
		}
	}
	return x.dsPods[node]
}

// copyPods puts copies of pods on node.
func copyPods(pods []*corev1.Pod, node string) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(pods))
	for _, pod := range pods {
		c := pod.DeepCopy()
		c.Name = pod.Name + "-" + node
		c.UID = ""
		c.Spec.NodeName = node
		out = append(out, c)
	}
	return out
}

// copySlices copies the ResourceSlices a DRA driver publishes for node
// onto a new node: the same devices, in a pool of the new node's name.
func copySlices(all []*resourcev1.ResourceSlice, node, newNode string) []*resourcev1.ResourceSlice {
	var out []*resourcev1.ResourceSlice
	for _, rs := range all {
		if rs.Spec.NodeName == nil || *rs.Spec.NodeName != node {
			continue
		}
		c := rs.DeepCopy()
		c.Name, c.UID, c.ResourceVersion = strings.Replace(rs.Name, node, newNode, 1)+"-"+newNode, "", ""
		c.Spec.NodeName = &newNode
		c.Spec.Pool.Name = strings.Replace(rs.Spec.Pool.Name, node, newNode, 1)
		if c.Spec.Pool.Name == rs.Spec.Pool.Name {
			c.Spec.Pool.Name += "-" + newNode
		}
		out = append(out, c)
	}
	return out
}

// deviceRoom is how many pods with the device requests fits an empty node
// holds: for each request, its matching devices over the count it wants
// (a request for all of them: one pod).
func deviceRoom(fits []dynamicresources.RequestFit) int {
	room := -1
	for _, f := range fits {
		r := 1
		if f.Wanted > 0 {
			r = f.Matching / int(f.Wanted)
		} else if f.Matching == 0 {
			r = 0
		}
		if room < 0 || r < room {
			room = r
		}
	}
	return max(room, 0)
}

// devicesText words the devices a node's slices offer the requests: ";
// 8 gpu.nvidia.com devices" (empty without requests).
func devicesText(fits []dynamicresources.RequestFit) string {
	var parts []string
	for _, f := range fits {
		t := fmt.Sprintf("%d %s device(s)", f.Matching, f.Class)
		if !slices.Contains(parts, t) {
			parts = append(parts, t)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, ", ")
}

// deviceKey tells node shapes apart by the devices their slices offer the
// pod's requests.
func deviceKey(fits []dynamicresources.RequestFit) string {
	var b strings.Builder
	for _, f := range fits {
		fmt.Fprintf(&b, "%s/%s=%d,", f.Claim, f.Request, f.Matching)
	}
	return b.String()
}

// newNodeLike is a new, healthy node shaped like template.
func newNodeLike(template *corev1.Node, name string) *corev1.Node {
	c := healthy(template)
	c.Name, c.UID, c.ResourceVersion = name, "", ""
	c.Labels = cloneLabels(c.Labels)
	c.Labels[corev1.LabelHostname] = name
	c.Spec.ProviderID, c.Spec.PodCIDR, c.Spec.PodCIDRs = "", "", nil
	c.Status.Addresses = nil
	return c
}

// cloneLabels copies a label map; nil becomes empty.
func cloneLabels(m map[string]string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	return out
}

// shapeKey identifies nodes of one shape: allocatable and taints.
// The taints are those of a healthy copy (healthy: no node-condition
// taints), read from the node without copying it.
func shapeKey(node *corev1.Node) string {
	var b strings.Builder
	for _, name := range sortedKeys(node.Status.Allocatable) {
		q := node.Status.Allocatable[name]
		b.WriteString(string(name))
		b.WriteByte('=')
		b.WriteString(q.String())
		b.WriteByte(',')
	}
	for i := range node.Spec.Taints {
		if t := &node.Spec.Taints[i]; !slices.Contains(nodeConditionTaints, t.Key) {
			b.WriteString(gang.FormatTaint(t) + ",")
		}
	}
	return b.String()
}

// shapeSize orders shapes: the resources the pod requests, scalars first,
// then cpu, then memory.
func shapeSize(node *corev1.Node, req *framework.Resource) [3]int64 {
	a := framework.NewResource(node.Status.Allocatable)
	var scalars int64
	for name := range req.ScalarResources {
		scalars += a.Get(name)
	}
	return [3]int64{scalars, a.MilliCPU, a.Memory}
}

// formatResourceList prints the resources of a node shape that matter to
// the pod: its scalar requests, cpu and memory.
func formatResourceList(rl corev1.ResourceList, req *framework.Resource) string {
	r := framework.NewResource(rl)
	var parts []string
	parts = append(parts, gang.FormatQuantity(corev1.ResourceCPU, r.MilliCPU)+" cpu", gang.FormatQuantity(corev1.ResourceMemory, r.Memory)+" memory")
	for _, name := range sortedKeys(req.ScalarResources) {
		parts = append(parts, gang.FormatQuantity(name, r.Get(name))+" "+string(name))
	}
	return strings.Join(parts, ", ")
}
