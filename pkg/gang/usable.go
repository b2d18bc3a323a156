package gang

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeunschedulable"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/tainttoleration"
)

// usableNodes reports, per node name, whether some pending member may use
// the node whatever is free on it: its required node affinity and node
// selector match, it tolerates the node's NoSchedule and NoExecute taints,
// and the node is not cordoned (or the member tolerates that). Domain
// figures count only these nodes (docs/design.md#gangs): the free cpu of a
// tainted control-plane node is no room for a GPU worker. Members are
// checked once per distinct node selector, affinity and tolerations.
func usableNodes(pending []*corev1.Pod, nodes []*framework.NodeInfo) map[string]bool {
	type class struct {
		pod      *corev1.Pod
		affinity nodeaffinity.RequiredNodeAffinity
	}
	var classes []class
	for _, pod := range pending {
		// Members of one template share these (Indexed Jobs too); a semantic
		// comparison, since tolerations hold pointers (tolerationSeconds).
		if slices.ContainsFunc(classes, func(c class) bool { return sameNodeConstraints(c.pod, pod) }) {
			continue
		}
		classes = append(classes, class{pod: pod, affinity: nodeaffinity.GetRequiredNodeAffinity(pod)})
	}
	out := make(map[string]bool, len(nodes))
	for _, ni := range nodes {
		node := ni.Node()
		for _, c := range classes {
			if ok, _ := c.affinity.Match(node); !ok {
				continue
			}
			if _, untolerated := tainttoleration.UntoleratedTaint(c.pod, node); untolerated {
				continue
			}
			if nodeunschedulable.Rejects(c.pod, node) {
				continue
			}
			out[node.Name] = true
			break
		}
	}
	return out
}

// sameNodeConstraints reports whether two pods ask the same of a node: node
// selector, required node affinity and tolerations.
func sameNodeConstraints(a, b *corev1.Pod) bool {
	return apiequality.Semantic.DeepEqual(a.Spec.NodeSelector, b.Spec.NodeSelector) &&
		apiequality.Semantic.DeepEqual(requiredNodeAffinity(a), requiredNodeAffinity(b)) &&
		apiequality.Semantic.DeepEqual(a.Spec.Tolerations, b.Spec.Tolerations)
}

func requiredNodeAffinity(pod *corev1.Pod) *corev1.NodeSelector {
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		return a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// bindingResource is the resource the pending members need most of
// relative to what the nodes they may use have free: the one that runs
// out first, which domain figures name.
func bindingResource(requests []*framework.Resource, nodes []*framework.NodeInfo, usable map[string]bool) corev1.ResourceName {
	need := map[corev1.ResourceName]int64{}
	for _, r := range requests {
		need[corev1.ResourceCPU] += r.MilliCPU
		need[corev1.ResourceMemory] += r.Memory
		for name, q := range r.ScalarResources {
			need[name] += q
		}
	}
	best, bestRatio := corev1.ResourceName(""), -1.0
	for _, name := range slices.Sorted(maps.Keys(need)) {
		if need[name] <= 0 {
			continue
		}
		var free int64
		for _, ni := range nodes {
			if usable[ni.Name()] {
				free += max(0, ni.Allocatable.Get(name)-ni.Requested.Get(name))
			}
		}
		ratio := float64(need[name]) / float64(max(free, 1))
		if ratio > bestRatio {
			best, bestRatio = name, ratio
		}
	}
	return best
}

// freeOf sums, over the usable nodes among nodes, the free and allocatable
// amounts of one resource.
func freeOf(name corev1.ResourceName, nodes []*framework.NodeInfo, usable map[string]bool) (free, allocatable int64, count int) {
	for _, ni := range nodes {
		if !usable[ni.Name()] {
			continue
		}
		count++
		allocatable += ni.Allocatable.Get(name)
		free += max(0, ni.Allocatable.Get(name)-ni.Requested.Get(name))
	}
	return free, allocatable, count
}
