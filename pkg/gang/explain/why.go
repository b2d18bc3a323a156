package explain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeaffinity"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeports"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/podtopologyspread"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/tainttoleration"
)

// whyFirst gives the suggestion listed first one line saying why it leads
// (issue #27), from the rule that ranked it there (suggest's order: what
// holds the gang back before any node, what the data names as the
// blocker, a change that opens room the cluster has, the pods to move in a
// fragmented cluster, then the shortfall and the changes to the cluster).
func (e *Explanation) whyFirst() {
	if len(e.Suggestions) == 0 {
		return
	}
	s := &e.Suggestions[0]
	s.Why = firstReason(e, s)
}

// firstReason words why s leads.
func firstReason(e *Explanation, s *Suggestion) string {
	// rejecting counts the nodes in scope a plugin rejects the explained
	// pod on first.
	rejecting := func(plugin string) int {
		n := 0
		for i := range e.Nodes {
			if !e.Nodes[i].OutsideDomain && e.Nodes[i].Plugin == plugin {
				n++
			}
		}
		return n
	}
	scope := "the cluster"
	if e.Domain != "" {
		scope = e.TopologyKey + "=" + e.Domain
	}
	switch s.Kind {
	case SuggestQuota:
		return "the namespace's ResourceQuota refuses the members before any scheduler sees them"
	case SuggestSourceGate:
		return "the gang's own scheduler holds it back whatever the nodes have: nothing starts until that changes"
	case SuggestAdmission:
		return "the queueing layer admits workloads before any scheduler sees their pods, and this change alone lets it admit the gang"
	case SuggestVolcanoQueue:
		return "the Volcano queue holds the gang back, and this change to it alone makes the gang fit"
	case SuggestMembersMissing:
		return "no change to the cluster starts a gang whose members do not exist yet"
	case SuggestCreateClaim:
		return "kube-scheduler tries no node while a claim the pod mounts does not exist"
	case SuggestHostPort:
		return fmt.Sprintf("the host port the members ask for is taken on %d node(s) they could use", rejecting(nodeports.Name))
	case SuggestRepairDevicePlugin:
		return "the devices are on the node, only its device plugin does not report them"
	case SuggestTolerate:
		if s.NearMiss {
			return "the member's own toleration misses the taint by a slip (key case, effect or value), and corrected it opens the nodes the taint keeps off"
		}
		return fmt.Sprintf("it alone removes the blocker the summary names (taint %s on %d node(s))", strings.Join(s.Tolerations, ", "), rejecting(tainttoleration.Name))
	case SuggestSelector:
		return fmt.Sprintf("it alone removes the blocker the summary names (the node selector, on %d node(s))", rejecting(nodeaffinity.Name))
	case SuggestSpread:
		return fmt.Sprintf("it alone removes the blocker the summary names (the spread constraint, on %d node(s))", rejecting(podtopologyspread.Name))
	case SuggestMove:
		if r := fragmented(e.Suggestions); r != nil {
			return fmt.Sprintf("%s has the room (%s %s free), only in holes of %s; moved pods keep running, where preemption evicts them",
				scope, gang.FormatQuantity(r.Name, r.Free), r.Name, holeSizes(r))
		}
		return "moved pods keep running, where preemption evicts them"
	case SuggestShortfall:
		if len(s.Shortfall) > 0 && s.Shortfall[0].Domain != "" {
			scope = s.Shortfall[0].Domain // the value a sub-group needs of its own
		}
		if r := fragmented(e.Suggestions); r != nil {
			return fmt.Sprintf("the room is in %s, only in holes of %s: no change tried joins them", scope, holeSizes(r))
		}
		return fmt.Sprintf("capacity is short in %s: no toleration, selector or spread change tried opens room the cluster has", scope)
	case SuggestPreempt:
		return "lower-priority pods hold the room the members need, and kube-scheduler's preemption would evict them"
	case SuggestAddNodes:
		return "no change to the pods found room the cluster has; nodes of a shape it has make it"
	case SuggestRepairNodes:
		return "nodes that would take the members are cordoned or not Ready"
	case SuggestLowerMinMember:
		return "no change to the cluster tried makes room for the minimum"
	case SuggestNodesTooSmall:
		return "no node of the cluster could hold the member even empty"
	case SuggestUngate:
		return "it fits: only its scheduling gates keep kube-scheduler from trying it"
	case SuggestCreatePodGroup:
		return "the group's scheduler holds the pod until its PodGroup exists"
	}
	return ""
}

// fragmented is the shortfall's fragmented resource, if it names one.
func fragmented(ss []Suggestion) *ResourceShortfall {
	i := slices.IndexFunc(ss, func(s Suggestion) bool { return s.Kind == SuggestShortfall })
	if i < 0 || len(ss[i].Shortfall) == 0 || ss[i].Shortfall[0].Holes == nil || ss[i].Shortfall[0].DeviceClass != "" {
		return nil
	}
	return &ss[i].Shortfall[0]
}

// holeSizes words a fragmented resource's hole sizes, largest first: "4
// nvidia.com/gpu", "4, 2 nvidia.com/gpu".
func holeSizes(r *ResourceShortfall) string {
	sizes := holeSizesDesc(r.Holes)
	var parts []string
	for i, k := range sizes {
		if i == 3 {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, gang.FormatQuantity(r.Name, k))
	}
	return strings.Join(parts, ", ") + " " + string(r.Name)
}
