package gang

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// MemberState is where a gang member stands, as placement counts it
// (docs/design.md#gangs).
type MemberState string

// The member states.
const (
	// MemberRunning: bound to a node and not being deleted; it counts
	// toward the minimum and is not placed again.
	MemberRunning MemberState = "Running"
	// MemberPending: waiting for a node; placement tries it. A pending
	// member with scheduling gates is placed as if they were removed.
	MemberPending MemberState = "Pending"
	// MemberTerminating: being deleted (a gang scheduler's Releasing). Bound, it
	// still holds its node, which the snapshot accounts for; it never
	// counts toward the minimum and is never placed.
	MemberTerminating MemberState = "Terminating"
)

// StateOf is a member's state.
func StateOf(pod *corev1.Pod) MemberState {
	switch {
	case pod.DeletionTimestamp != nil:
		return MemberTerminating
	case pod.Spec.NodeName != "":
		return MemberRunning
	}
	return MemberPending
}

// MembersIn returns the members in state s, in queue order.
func (g *Gang) MembersIn(s MemberState) []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range g.Members {
		if StateOf(pod) == s {
			out = append(out, pod)
		}
	}
	return out
}

// Running returns the members bound to nodes that count toward the minimum.
func (g *Gang) Running() []*corev1.Pod { return g.MembersIn(MemberRunning) }

// Pending returns the members waiting for a node, gated ones included.
func (g *Gang) Pending() []*corev1.Pod { return g.MembersIn(MemberPending) }

// PendingUngated returns the pending members as placement sees them:
// without scheduling gates, since a plan answers "where would they go once
// released".
func (g *Gang) PendingUngated() []*corev1.Pod {
	out := g.Pending()
	for i, pod := range out {
		out[i] = Ungated(pod)
	}
	return out
}

// GatedCount is how many pending members have scheduling gates.
func (g *Gang) GatedCount() int {
	n := 0
	for _, pod := range g.Pending() {
		if len(pod.Spec.SchedulingGates) > 0 {
			n++
		}
	}
	return n
}

// HeldCount is how many pending members scheduling gates hold: every gate
// but a queueing layer's own on a gang queued for it (GateHolder), which
// is the layer's decision, asked first (PlaceOn), and removed when it
// admits the gang.
func (g *Gang) HeldCount() int {
	queued := len(g.Queued) > 0
	n := 0
	for _, pod := range g.Pending() {
		if slices.ContainsFunc(pod.Spec.SchedulingGates, func(sg corev1.PodSchedulingGate) bool { return !(queued && holdingGate(sg.Name)) }) {
			n++
		}
	}
	return n
}

// GatedByOthers is how many pending members have scheduling gates other
// than their own scheduler's (Rules.OwnGate): a scheduler that removes its
// gate itself when its queue has room lets a member gated only by it
// compete for room as any other (docs/design.md#the-queue).
func (g *Gang) GatedByOthers() int {
	own := rulesOf(g.Source).OwnGate
	queued := len(g.Queued) > 0
	n := 0
	for _, pod := range g.Pending() {
		if slices.ContainsFunc(pod.Spec.SchedulingGates, func(sg corev1.PodSchedulingGate) bool {
			// A queueing layer's own gate on a gang queued for it is its
			// decision, asked first (PlaceOn), not a hold.
			return (own == "" || sg.Name != own) && !(queued && holdingGate(sg.Name))
		}) {
			n++
		}
	}
	return n
}

// Ungated returns the pod without scheduling gates (a copy when it has any).
func Ungated(pod *corev1.Pod) *corev1.Pod {
	if len(pod.Spec.SchedulingGates) == 0 {
		return pod
	}
	c := pod.DeepCopy()
	c.Spec.SchedulingGates = nil
	return c
}

// PodKeys names pods namespace/name, in their order.
func PodKeys(pods []*corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, pod := range pods {
		out = append(out, pod.Namespace+"/"+pod.Name)
	}
	return out
}

// GateNames lists the scheduling gates of pods, sorted, each once.
func GateNames(pods []*corev1.Pod) []string {
	var out []string
	for _, pod := range pods {
		for _, g := range pod.Spec.SchedulingGates {
			if !slices.Contains(out, g.Name) {
				out = append(out, g.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// GateOwner says who removes a scheduling gate the gang systems know
// (issue #27: "scheduling gates and who owns them", GateKeeper), or "" for
// a gate of someone else's.
func GateOwner(gate string) string {
	for _, s := range Systems() {
		if k, ok := s.(GateKeeper); ok {
			if o := k.GateOwner(gate); o != "" {
				return o
			}
		}
	}
	return ""
}
