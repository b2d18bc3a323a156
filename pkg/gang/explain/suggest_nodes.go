package explain

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeaffinity"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/tainttoleration"
)

// addNodes finds the smallest node shape that, added N times where the
// gang was placed, lets it fit, and the smallest N: shapes of existing
// nodes the blocked member could use (those it is rejected from only for
// want of free resources, a cordon or a node condition) from the smallest,
// then a shape derived from the members' largest requests. Every count is
// proven by placing the gang on a copy of the snapshot with the nodes added
// (with copies of their DaemonSet pods).
func (x *explainer) addNodes(ctx context.Context, g *gang.Gang, p *gang.Placement, e *Explanation) (*Suggestion, error) {
	if p.Blocker == nil {
		return nil, nil
	}
	unplaced := unplacedOf(g, p)
	if len(unplaced) == 0 {
		return nil, nil
	}
	pod := p.Blocker.Pod
	byName := map[string]*corev1.Node{}
	for _, n := range x.snap.Nodes {
		byName[n.Name] = n
	}
	type shape struct {
		node *corev1.Node
		key  string
		size [3]int64
		room int // blocked members an empty node of the shape holds
	}
	var shapes []shape
	seen := map[string]bool{}
	podInfo := framework.NewPodInfo(pod)
	for i := range e.Nodes {
		n := &e.Nodes[i]
		node := byName[n.Name]
		if node == nil || !inScope(p, node) || !passesOnceHealthy(n, pod, node, true) {
			continue
		}
		empty := framework.NewNodeInfo(healthy(node))
		for _, ds := range x.daemonSetPods(node.Name) {
			empty.AddPod(ds)
		}
		room := roomFor(pod, &podInfo.Res, empty)
		if room == 0 {
			continue
		}
		key := shapeKey(node)
		if seen[key] {
			continue
		}
		seen[key] = true
		shapes = append(shapes, shape{node: node, key: key, size: shapeSize(node, podInfo.Res.Resource), room: room})
	}
	slices.SortStableFunc(shapes, func(a, b shape) int {
		return cmp.Or(slices.Compare(a.size[:], b.size[:]), cmp.Compare(a.node.Name, b.node.Name))
	})
	if len(shapes) > maxShapes {
		shapes = shapes[:maxShapes]
	}
	for _, sh := range shapes {
		n, placed, err := x.smallestCount(ctx, g, ceilDiv(len(unplaced), sh.room), len(unplaced), func(i int) (*corev1.Node, []*corev1.Pod) {
			name := fmt.Sprintf("%s-new-%d", sh.node.Name, i)
			return newNodeLike(sh.node, name), copyPods(x.daemonSetPods(sh.node.Name), name)
		})
		if err != nil {
			return nil, err
		}
		if n > 0 {
			t := newNodeLike(sh.node, sh.node.Name)
			newNodes := &NodeShape{Like: sh.node.Name, Count: n, Allocatable: t.Status.Allocatable, Labels: t.Labels, Taints: t.Spec.Taints,
				TopologyKey: p.TopologyKey, Domain: p.Domain}
			return &Suggestion{Kind: SuggestAddNodes, Verified: true, NewNodes: newNodes,
				Message: fmt.Sprintf("adding %d node(s) like %s (allocatable %s) to %s would make room; %s", n, sh.node.Name,
					formatResourceList(t.Status.Allocatable, podInfo.Res.Resource), where(p), fitsOnNew(g, placed))}, nil
		}
	}
	derived := x.derivedNode(pod, unplaced, p, e)
	room := max(1, roomFor(pod, &podInfo.Res, framework.NewNodeInfo(derived)))
	n, placed, err := x.smallestCount(ctx, g, ceilDiv(len(unplaced), room), len(unplaced), func(i int) (*corev1.Node, []*corev1.Pod) {
		c := derived.DeepCopy()
		c.Name = fmt.Sprintf("new-node-%d", i)
		c.Labels[corev1.LabelHostname] = c.Name
		return c, nil
	})
	if err != nil || n == 0 {
		return nil, err
	}
	newNodes := &NodeShape{Count: n, Allocatable: derived.Status.Allocatable, Labels: derived.Labels, Taints: derived.Spec.Taints,
		TopologyKey: p.TopologyKey, Domain: p.Domain}
	delete(newNodes.Labels, corev1.LabelHostname)
	var extra []string
	for _, k := range sortedKeys(newNodes.Labels) {
		extra = append(extra, k+"="+newNodes.Labels[k])
	}
	for _, t := range newNodes.Taints {
		extra = append(extra, "taint "+gang.FormatTaint(&t))
	}
	msg := fmt.Sprintf("adding %d node(s) with allocatable %s", n, formatResourceList(derived.Status.Allocatable, podInfo.Res.Resource))
	if len(extra) > 0 {
		msg += " (" + strings.Join(extra, ", ") + ")"
	}
	return &Suggestion{Kind: SuggestAddNodes, Verified: true, NewNodes: newNodes,
		Message: msg + " to " + where(p) + " would make room; " + fitsOnNew(g, placed)}, nil
}

// smallestCount finds the least n in 1..limit for which adding the nodes
// made by node(1..n) lets g fit. It starts from guess (how many nodes the
// members left over need by their requests alone), proves it, and checks
// that one node fewer is not enough; a guess that does not fit is doubled
// until one does, and the count then bisected. It returns 0 when even
// limit nodes do not fit.
func (x *explainer) smallestCount(ctx context.Context, g *gang.Gang, guess, limit int, node func(i int) (*corev1.Node, []*corev1.Pod)) (int, *gang.Placement, error) {
	limit = max(limit, guess, 1)
	results := map[int]*gang.Placement{}
	try := func(n int) (bool, error) {
		if n <= 0 {
			return false, nil // the snapshot as is: it does not fit
		}
		if p, ok := results[n]; ok {
			return p.Verdict == gang.VerdictPlaced, nil
		}
		c := *x.snap
		c.Nodes = slices.Clone(x.snap.Nodes)
		c.Pods = slices.Clone(x.snap.Pods)
		for i := 1; i <= n; i++ {
			node, pods := node(i)
			c.Nodes = append(c.Nodes, node)
			c.Pods = append(c.Pods, pods...)
		}
		p, err := x.place(ctx, &c, g)
		if err != nil {
			return false, err
		}
		results[n] = p
		return p.Verdict == gang.VerdictPlaced, nil
	}
	// lo does not fit, hi fits.
	lo, hi := 0, max(1, min(guess, limit))
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
	// The guess usually is the answer: one try below it proves that.
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
func shapeKey(node *corev1.Node) string {
	c := healthy(node)
	var b strings.Builder
	for _, name := range sortedKeys(c.Status.Allocatable) {
		q := c.Status.Allocatable[name]
		fmt.Fprintf(&b, "%s=%s,", name, q.String())
	}
	for _, t := range c.Spec.Taints {
		b.WriteString(gang.FormatTaint(&t) + ",")
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

// derivedNode is a node shaped after the members that do not fit: per
// resource the largest request among them (cpu rounded up to whole cores,
// memory to whole Gi), labelled with what the nodes in scope that pass
// the blocked member's node affinity share (or what its node selector asks
// for), and tainted as most of the nodes in scope it tolerates are.
func (x *explainer) derivedNode(pod *corev1.Pod, unplaced []*corev1.Pod, p *gang.Placement, e *Explanation) *corev1.Node {
	var most framework.Resource
	for _, m := range unplaced {
		r := framework.ComputePodResource(m).Resource
		most.MilliCPU = max(most.MilliCPU, r.MilliCPU)
		most.Memory = max(most.Memory, r.Memory)
		most.EphemeralStorage = max(most.EphemeralStorage, r.EphemeralStorage)
		for name, q := range r.ScalarResources {
			most.AddScalar(name, max(0, q-most.Get(name)))
		}
	}
	const gi = 1 << 30
	alloc := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity((most.MilliCPU+999)/1000, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity((most.Memory+gi-1)/gi*gi, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
	if most.EphemeralStorage > 0 {
		alloc[corev1.ResourceEphemeralStorage] = *resource.NewQuantity((most.EphemeralStorage+gi-1)/gi*gi, resource.BinarySI)
	}
	for name, q := range most.ScalarResources {
		alloc[name] = *resource.NewQuantity(q, resource.DecimalSI)
	}
	byName := map[string]*corev1.Node{}
	for _, n := range x.snap.Nodes {
		byName[n.Name] = n
	}
	var labels map[string]string
	taintSets := map[string][]corev1.Taint{}
	taintCount := map[string]int{}
	for i := range e.Nodes {
		n := &e.Nodes[i]
		node := byName[n.Name]
		if node == nil || !inScope(p, node) {
			continue
		}
		if verdictOf(n, nodeaffinity.Name) == framework.Success {
			if labels == nil {
				labels = cloneLabels(node.Labels)
			} else {
				for k, v := range labels {
					if node.Labels[k] != v {
						delete(labels, k)
					}
				}
			}
		}
		if verdictOf(n, tainttoleration.Name) == framework.Success {
			taints := healthy(node).Spec.Taints
			key := shapeKey(&corev1.Node{Spec: corev1.NodeSpec{Taints: taints}})
			taintSets[key] = taints
			taintCount[key]++
		}
	}
	if labels == nil {
		labels = cloneLabels(pod.Spec.NodeSelector)
	}
	delete(labels, corev1.LabelHostname)
	if p.TopologyKey != "" && p.Domain != "" {
		labels[p.TopologyKey] = p.Domain
	}
	var taints []corev1.Taint
	best := -1
	for _, key := range sortedKeys(taintCount) {
		if taintCount[key] > best {
			best, taints = taintCount[key], taintSets[key]
		}
	}
	node := &corev1.Node{}
	node.Labels = labels
	node.Spec.Taints = taints
	node.Status.Capacity, node.Status.Allocatable = alloc, alloc.DeepCopy()
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
	return node
}
