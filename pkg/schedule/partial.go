package schedule

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// MissingNodes are the nodes pods of a snapshot are bound to that the
// snapshot does not hold, and those pods, both in name order: a partial
// snapshot (a file missing some Node objects, or a node deleted while its
// pods remain). kube-scheduler's cache leaves such pods out as this
// pipeline does; what the real cluster holds there is unknown.
type MissingNodes struct {
	Nodes []string
	Pods  []*corev1.Pod
}

// FindMissingNodes lists the nodes pods are bound to that snap does not hold.
func FindMissingNodes(snap *Snapshot) MissingNodes {
	held := make(map[string]bool, len(snap.Nodes))
	for _, n := range snap.Nodes {
		held[n.Name] = true
	}
	var m MissingNodes
	missing := map[string]bool{}
	for _, p := range snap.Pods {
		if node := p.Spec.NodeName; node != "" && !held[node] {
			m.Pods = append(m.Pods, p)
			if !missing[node] {
				missing[node] = true
				m.Nodes = append(m.Nodes, node)
			}
		}
	}
	slices.Sort(m.Nodes)
	slices.SortFunc(m.Pods, func(a, b *corev1.Pod) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return m
}

// maxNamed bounds the names a message lists.
const maxNamed = 3

// firstNames joins the first maxNamed names, saying how many more there are.
func firstNames(names []string) string {
	s := strings.Join(names[:min(len(names), maxNamed)], ", ")
	if more := len(names) - maxNamed; more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// String words what is missing, or "" when nothing is: the not-evaluated
// reason every cycle on such a snapshot carries (docs/design.md#snapshot).
func (m MissingNodes) String() string {
	if len(m.Nodes) == 0 {
		return ""
	}
	pods := make([]string, len(m.Pods))
	for i, p := range m.Pods {
		pods[i] = p.Namespace + "/" + p.Name
	}
	return fmt.Sprintf("the snapshot lacks %d node(s) that %d pod(s) are bound to (%s; pods %s): the real cluster has nodes, and pods on them, that this answer did not see",
		len(m.Nodes), len(m.Pods), firstNames(m.Nodes), firstNames(pods))
}
