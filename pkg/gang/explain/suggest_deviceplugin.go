package explain

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// SuggestRepairDevicePlugin: a node's device plugin reports fewer devices
// allocatable than the node has (status.capacity above status.allocatable
// for an extended resource the blocked member asks for); restoring them
// makes room.
const SuggestRepairDevicePlugin SuggestionKind = "RepairDevicePlugin"

// LostDevices is what a node's device plugin no longer reports as
// allocatable of one extended resource.
type LostDevices struct {
	Node string
	Name corev1.ResourceName
	// Capacity and Allocatable are the node's status figures.
	Capacity, Allocatable int64
}

// isExtended is kube's IsExtendedResourceName (k8s.io/kubernetes
// pkg/apis/core/v1/helper): a name with a domain outside kubernetes.io. Only these Only these come from device plugins: the kubelet
// sets their allocatable to the healthy devices its plugin reports
// (pkg/kubelet/cm/devicemanager ManagerImpl.GetCapacity), while cpu,
// memory and hugepages are below capacity by design (reserved).
func isExtended(name corev1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.HasPrefix(s, corev1.ResourceDefaultNamespacePrefix) {
		return false
	}
	return !strings.Contains(s[:strings.Index(s, "/")], "kubernetes.io")
}

// lostDevices lists, per extended resource pod requests, how far the node's
// allocatable is below its capacity.
// A node with no allocatable at all has not reported it yet (it has just
// registered): nothing shows a device plugin fault there, and the warning
// that names such nodes says why no pod fits them.
func lostDevices(node *corev1.Node, req map[corev1.ResourceName]int64) []LostDevices {
	if node.Status.Allocatable == nil {
		return nil
	}
	var out []LostDevices
	for _, name := range slices.Sorted(func(yield func(corev1.ResourceName) bool) {
		for n := range req {
			if !yield(n) {
				return
			}
		}
	}) {
		if !isExtended(name) || req[name] <= 0 {
			continue
		}
		capacity, ok := node.Status.Capacity[name]
		if !ok {
			continue
		}
		alloc := node.Status.Allocatable[name]
		if capacity.Value() > alloc.Value() {
			out = append(out, LostDevices{Node: node.Name, Name: name, Capacity: capacity.Value(), Allocatable: alloc.Value()})
		}
	}
	return out
}

// devicePlugin is the node repair the data shows when a node has the
// devices the blocked member asks for but its device plugin stopped
// reporting them (allocatable below capacity): each such node that passes
// every other Filter plugin is restored (allocatable = capacity) on a
// working copy, alone, and the gang placed again; the nodes where it then
// fits are suggested, the gang's domain first.
func (x *explainer) devicePlugin(ctx context.Context, g *gang.Gang, p *gang.Placement, e *Explanation) (*Suggestion, error) {
	if p.Blocker == nil {
		return nil, nil
	}
	pod := p.Blocker.Pod
	req := framework.ComputePodResource(pod).Resource.ScalarResources
	if len(req) == 0 {
		return nil, nil
	}
	type candidate struct {
		node *corev1.Node
		lost []LostDevices
	}
	var candidates []candidate
	for i := range e.Nodes {
		n := &e.Nodes[i]
		node := x.node(n.Name)
		if n.Feasible || node == nil {
			continue
		}
		lost := lostDevices(node, req)
		if len(lost) == 0 || !passesOnceHealthy(n, pod, node, true) {
			continue
		}
		candidates = append(candidates, candidate{node, lost})
	}
	slices.SortStableFunc(candidates, func(a, b candidate) int {
		ia, ib := inScope(p, a.node), inScope(p, b.node)
		if ia != ib {
			if ia {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.node.Name, b.node.Name)
	})
	if len(candidates) > maxRepairCandidates {
		candidates = candidates[:maxRepairCandidates]
	}
	s := &Suggestion{Kind: SuggestRepairDevicePlugin, Verified: true}
	var then *gang.Placement
	var others []string
	for _, c := range candidates {
		restored := c.node.DeepCopy()
		for _, l := range c.lost {
			restored.Status.Allocatable[l.Name] = restored.Status.Capacity[l.Name]
		}
		fixed, err := x.plain.WithNodesReplaced([]*corev1.Node{restored})
		if err != nil {
			return nil, err
		}
		placed, err := x.placeOn(ctx, fixed, x.snap, g)
		if err != nil {
			return nil, err
		}
		if placed.Verdict != gang.VerdictPlaced {
			continue
		}
		if then == nil {
			then = placed
		} else {
			others = append(others, c.node.Name)
		}
		s.Lost = append(s.Lost, c.lost...)
	}
	if then == nil {
		return nil, nil
	}
	first := s.Lost[0]
	var amounts []string
	for _, l := range s.Lost {
		if l.Node == first.Node {
			amounts = append(amounts, fmt.Sprintf("%s allocatable of %s %s", gang.FormatQuantity(l.Name, l.Allocatable), gang.FormatQuantity(l.Name, l.Capacity), l.Name))
		}
	}
	s.Message = fmt.Sprintf("the device plugin on %s reports %s: repair that node (its device plugin or kubelet); %s",
		first.Node, strings.Join(amounts, ", "), fitsThen(g, then))
	if len(others) > 0 {
		s.Message += fmt.Sprintf("; repairing %s instead is enough too", strings.Join(others, " or "))
	}
	return s, nil
}
