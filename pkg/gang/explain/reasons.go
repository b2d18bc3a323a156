package explain

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/dynamicresources"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodedeclaredfeatures"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/tainttoleration"
)

// Detail is the node's verdict in words: the first failing plugin and its
// reason (Why), "-" for a feasible node. Printers show it as it is, so that
// no printer needs to know a plugin.
func (n *Node) Detail() string {
	why := n.Why()
	if n.Plugin == "" {
		return why
	}
	return n.Plugin + ": " + why
}

// Why is Detail without the plugin's name: the first failing plugin's
// reason, with what kube-scheduler's reason leaves out spelled out (the
// untolerated taint, how much of each resource is short, the missing node
// features); "-" for a feasible node.
func (n *Node) Why() string {
	if n.Plugin == "" && len(n.Reasons) == 0 {
		return "-"
	}
	detail := strings.Join(n.Reasons, ", ")
	switch n.Plugin {
	case tainttoleration.Name:
		if n.Taint != nil {
			detail = "untolerated taint " + gang.FormatTaint(n.Taint)
		}
	case noderesources.Name:
		if len(n.Insufficient) > 0 {
			detail = insufficientText(n.Insufficient)
		}
	case nodedeclaredfeatures.Name:
		if len(n.MissingFeatures) > 0 {
			detail += " (missing " + strings.Join(n.MissingFeatures, ", ") + ")"
		}
	case dynamicresources.Name:
		var short []string
		for _, f := range n.Devices {
			if f.Short() {
				short = append(short, f.String())
			}
		}
		if len(short) > 0 {
			detail += " (" + strings.Join(short, "; ") + ")"
		}
	}
	return detail
}

// insufficientText lists each short resource with how much is missing,
// extended resources (GPUs) first: "Insufficient nvidia.com/gpu (short 8),
// cpu (short 84.46)".
func insufficientText(ins []noderesources.InsufficientResource) string {
	ordered := slices.Clone(ins)
	slices.SortStableFunc(ordered, func(a, b noderesources.InsufficientResource) int {
		return cmp.Compare(rankResource(a.ResourceName), rankResource(b.ResourceName))
	})
	var parts []string
	for i, r := range ordered {
		if r.ResourceName == corev1.ResourcePods {
			parts = append(parts, r.Reason)
			continue
		}
		word := string(r.ResourceName)
		if i == 0 {
			word = r.Reason
		}
		parts = append(parts, fmt.Sprintf("%s (short %s)", word, gang.FormatQuantity(r.ResourceName, r.Short())))
	}
	return strings.Join(parts, ", ")
}

// rankResource puts extended resources before cpu, memory and the rest.
func rankResource(name corev1.ResourceName) int {
	switch name {
	case corev1.ResourceCPU:
		return 1
	case corev1.ResourceMemory:
		return 2
	case corev1.ResourceEphemeralStorage, corev1.ResourcePods:
		return 3
	}
	return 0
}

// FilterDetail is one Filter plugin's verdict on the node in words (the
// cells of -o wide): "ok", the reasons, or "-" when the plugin did not run.
func (n *Node) FilterDetail(plugin string) string {
	for _, f := range n.Filters {
		if f.Plugin != plugin {
			continue
		}
		switch {
		case f.Code == framework.Success:
			return "ok"
		case plugin == tainttoleration.Name && n.Taint != nil:
			return "taint " + gang.FormatTaint(n.Taint)
		}
		return strings.Join(f.Reasons, ", ")
	}
	return "-"
}

// NearMiss reports a node inside the domain that only lacks free
// resources for the pod: it would take it were capacity freed.
func (n *Node) NearMiss() bool {
	return !n.Feasible && !n.OutsideDomain && n.Plugin == noderesources.Name && len(n.Insufficient) > 0
}
