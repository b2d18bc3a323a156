package explain

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeports"
)

// SuggestHostPort is a diagnosis: the host port a member asks for is held
// on the nodes it may use, and by whom.
const SuggestHostPort SuggestionKind = "HostPort"

// hostPorts names, when nodes reject the blocked member for its host
// ports (NodePorts), the pods holding each port on those nodes (the
// gang's own placed members among them): a node holds one member per
// host port (issue #27: "name the pod holding the port").
func (x *explainer) hostPorts(p *gang.Placement, e *Explanation) *Suggestion {
	if p.Blocker == nil {
		return nil
	}
	want := framework.HostPorts(p.Blocker.Pod)
	if len(want) == 0 {
		return nil
	}
	holders := map[string]string{} // pod -> node
	for _, a := range p.Planned() {
		if slices.ContainsFunc(framework.HostPorts(a.Pod), func(c corev1.ContainerPort) bool { return conflicts(want, c) }) {
			holders[a.Pod.Namespace+"/"+a.Pod.Name+" (a member of the gang)"] = a.Node
		}
	}
	rejectedBy := map[string]bool{}
	for _, n := range e.Nodes {
		if !n.OutsideDomain && n.Plugin == nodeports.Name {
			rejectedBy[n.Name] = true
		}
	}
	rejected := len(rejectedBy)
	for _, ni := range x.plain.NodeInfos() {
		if !rejectedBy[ni.Name()] {
			continue
		}
		for _, pi := range ni.Pods {
			if slices.ContainsFunc(framework.HostPorts(pi.Pod), func(c corev1.ContainerPort) bool { return conflicts(want, c) }) {
				holders[pi.Pod.Namespace+"/"+pi.Pod.Name] = ni.Name()
			}
		}
	}
	if rejected == 0 || len(holders) == 0 {
		return nil
	}
	names := make([]string, 0, len(holders))
	for pod := range holders {
		names = append(names, pod)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, pod := range names {
		parts[i] = fmt.Sprintf("on %s by %s", holders[pod], pod)
	}
	ports := make([]string, len(want))
	for i, c := range want {
		ports[i] = fmt.Sprintf("%d/%s", c.HostPort, protocol(c))
	}
	return &Suggestion{Kind: SuggestHostPort, Message: fmt.Sprintf("host port %s is held %s: a node takes one member per host port, so %d node(s) reject the next member",
		strings.Join(ports, ", "), strings.Join(parts, ", "), rejected)}
}

func protocol(c corev1.ContainerPort) corev1.Protocol {
	if c.Protocol == "" {
		return corev1.ProtocolTCP
	}
	return c.Protocol
}

// conflicts reports whether c takes a host port of want (same port and
// protocol; an unset host IP conflicts with every one).
func conflicts(want []corev1.ContainerPort, c corev1.ContainerPort) bool {
	return slices.ContainsFunc(want, func(w corev1.ContainerPort) bool {
		return w.HostPort == c.HostPort && protocol(w) == protocol(c) &&
			(w.HostIP == "" || c.HostIP == "" || w.HostIP == c.HostIP || w.HostIP == "0.0.0.0" || c.HostIP == "0.0.0.0")
	})
}
