package bind

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// checkNodes weighs what each target node of the bound members holds after
// the commit (onTargets) against what it has (docs/design.md#binding-a-gang):
// the lock keeps other runs of bind out, but kube-scheduler, or a tool
// without the lock, may have bound pods there since the re-check. A node
// past its allocatable in any resource, or its pod count, makes the
// verdict Overcommitted with the figures and the pods that arrived since
// the snapshot; with --on-partial=delete this run's members are taken back
// (those a controller owns). A node that could not be read makes the
// outcome unverified.
func (b *binder) checkNodes(ctx context.Context, snap *schedule.Snapshot, bound []int, onTargets targetPods) {
	// Members --on-partial=delete took back already are not weighed again.
	bound = slices.DeleteFunc(slices.Clone(bound), func(i int) bool { return b.r.Members[i].Result != OutcomeBound })
	if len(bound) == 0 {
		return
	}
	nodes := b.fresh
	if nodes == nil {
		nodes = snap
	}
	byName := map[string]*corev1.Node{}
	for _, n := range nodes.Nodes {
		byName[n.Name] = n
	}
	// A bound pod never moves: the pods bound in the snapshot are where
	// they were, and any other on a target node arrived since.
	before := map[string]bool{}
	for _, pod := range snap.Pods {
		if pod.Spec.NodeName != "" {
			before[string(pod.UID)] = true
		}
	}
	ours := map[string]bool{}
	for _, i := range bound {
		ours[string(b.p.Assignments[i].Pod.UID)] = true
	}
	r := b.r
	for _, name := range boundNodes(b.p, bound) {
		read := onTargets[name]
		if read.err != nil {
			r.unreadNodes = append(r.unreadNodes, fmt.Sprintf("node %s: %v", name, read.err))
			continue
		}
		if over := overcommitted(byName[name], read.pods); over != "" {
			var arrived []string
			for _, pod := range read.pods {
				if !before[string(pod.UID)] && !ours[string(pod.UID)] {
					arrived = append(arrived, podKey(pod))
				}
			}
			line := fmt.Sprintf("node %s holds %s", name, over)
			if len(arrived) > 0 {
				line += fmt.Sprintf("; arrived since the snapshot: %s", strings.Join(firstOf(arrived, 5), ", "))
			}
			r.Overcommitted = append(r.Overcommitted, line)
		}
	}
	if len(r.Overcommitted) == 0 {
		return
	}
	r.Verdict, r.Reason = VerdictOvercommitted, ""
	r.Message = fmt.Sprintf("bound, but %d node(s) now hold more than they have: others bound pods there since the re-check "+
		"(the kubelet will reject what does not fit): %s", len(r.Overcommitted), strings.Join(r.Overcommitted, "; "))
	if b.opts.OnPartial == OnPartialDelete {
		deleted := undo(ctx, b.c, r, bound, b.opts.Parallelism)
		r.BoundMembers -= int32(deleted)
		r.Message += "; " + deletedWhat(deleted) + " (--on-partial=delete)"
	} else {
		r.Message += "; this run's members were left bound (--on-partial=report)"
	}
}

// overcommitted says by how much pods exceed node's allocatable, resource
// by resource ("nvidia.com/gpu 16 of 8, pods 111 of 110"), or "".
func overcommitted(node *corev1.Node, pods []*corev1.Pod) string {
	if node == nil {
		return ""
	}
	// The node as the scheduler counts it: allocatable, and what its
	// pods request.
	ni := framework.NewNodeInfo(node)
	for _, pod := range pods {
		ni.AddPod(pod)
	}
	alloc, requested := ni.Allocatable, ni.Requested
	var over []string
	check := func(name corev1.ResourceName, have, want int64) {
		if want > have {
			over = append(over, fmt.Sprintf("%s %s of %s", name, gang.FormatQuantity(name, want), gang.FormatQuantity(name, have)))
		}
	}
	check(corev1.ResourceCPU, alloc.MilliCPU, requested.MilliCPU)
	check(corev1.ResourceMemory, alloc.Memory, requested.Memory)
	check(corev1.ResourceEphemeralStorage, alloc.EphemeralStorage, requested.EphemeralStorage)
	for _, name := range slices.Sorted(maps.Keys(requested.ScalarResources)) {
		check(name, alloc.ScalarResources[name], requested.ScalarResources[name])
	}
	if len(ni.Pods) > alloc.AllowedPodNumber {
		over = append(over, fmt.Sprintf("pods %d of %d", len(ni.Pods), alloc.AllowedPodNumber))
	}
	return strings.Join(over, ", ")
}

func firstOf(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
}

// unverified makes a run whose outcome is not known for every member say
// so: Bindings the server accepted whose pods could not be read back, ones
// whose answer and pod were both lost, target nodes that could not be read
// after the commit. It names the members that are bound for certain.
func (b *binder) unverified() {
	r := b.r
	var sure, unsure []string
	for _, m := range r.Members[:len(b.p.Assignments)] {
		switch {
		case m.Result == OutcomeUnknown:
			unsure = append(unsure, podKey(m.Pod))
		case m.Result == OutcomeBound:
			sure = append(sure, podKey(m.Pod))
		}
	}
	if len(unsure) == 0 && len(r.unreadNodes) == 0 && !r.anyUnverified() {
		return
	}
	r.Verdict, r.Reason = VerdictUnverified, ""
	msg := fmt.Sprintf("the outcome is not verified: %d Binding(s) succeeded (%s)", len(sure), strings.Join(firstOf(sure, 5), ", "))
	if len(unsure) > 0 {
		msg += fmt.Sprintf("; %d may or may not be bound (%s)", len(unsure), strings.Join(firstOf(unsure, 5), ", "))
	}
	if len(r.unreadNodes) > 0 {
		msg += "; could not read what the target nodes hold: " + strings.Join(firstOf(r.unreadNodes, 3), "; ")
	}
	if len(r.Overcommitted) > 0 {
		msg += "; nodes holding more than they have: " + strings.Join(r.Overcommitted, "; ")
	}
	r.Message = msg + "; read the pods again (kubectl get pods -o wide) before acting"
}

func (r *Report) anyUnverified() bool {
	for _, m := range r.Members {
		if m.Unverified {
			return true
		}
	}
	return false
}
