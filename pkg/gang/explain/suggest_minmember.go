package explain

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/kueue"
)

// lowerMinMember proves that the gang would start with its minimum lowered
// to how many fit at most.
//
// A gang short of members that do not exist yet is not told to lower its
// minimum: the members are missing (membersMissing says who creates them).
// Whether the job runs with fewer members is the workload's own word where
// the gang was expanded from one (gang.Elasticity: a PyTorchJob's elastic
// policy, Ray's autoscaling, a Volcano Job's minAvailable below its
// replicas): a lower minimum is a plain fix only for an elastic job and
// down to its elastic minimum; a job of fixed size (torchrun without an
// elastic policy, MPI, a JobSet, a LeaderWorkerSet) is told that fewer
// members means changing the job itself, not only the number (issue #27).
// Without the workload (a PodGroup, pods), a minimum below the members is
// taken as set so by design, and a minimum of every member as a job of
// fixed size.
func (x *explainer) lowerMinMember(ctx context.Context, g *gang.Gang, p *gang.Placement, _ *Explanation) (*Suggestion, error) {
	if g.IsLonePod() || p.MaxPlaceable <= 0 || p.MaxPlaceable >= g.MinMember || g.Missing() > 0 {
		return nil, nil
	}
	lower := *g
	lower.MinMember = p.MaxPlaceable
	placed, err := x.place(ctx, x.snap, &lower)
	if err != nil || placed.Verdict != gang.VerdictPlaced {
		return nil, err
	}
	waiting := len(g.PendingUngated()) - len(placed.Assignments)
	msg := fmt.Sprintf("lowering the minimum (%s) from %d to %d would let the gang start: %s",
		g.Source.MinimumField(), g.MinMember, p.MaxPlaceable, fitsThen(g, placed))
	if waiting > 0 {
		msg += fmt.Sprintf(" and %d wait(s)", waiting)
	}
	total := int32(len(g.Members) + len(g.Succeeded))
	switch el := g.Elasticity; {
	case el == nil && g.MinMember >= total:
		msg += fmt.Sprintf("; but the minimum is every member the job has (%d): a job of fixed size (MPI, torchrun without an elastic policy) hangs with fewer, so the job itself must change to run with %d, not only the minimum", total, p.MaxPlaceable)
	case el == nil:
	case !el.Elastic:
		msg += fmt.Sprintf("; but the job has a fixed size: %s, and hangs with fewer, so the job itself must change to run with %d, not only the minimum", el.Reason(), p.MaxPlaceable)
	case p.MaxPlaceable < el.Min:
		msg += fmt.Sprintf("; but the job is elastic only down to %d member(s): %s; below that the job itself must change to run with %d, not only the minimum", el.Min, el.Reason(), p.MaxPlaceable)
	default:
		msg += fmt.Sprintf("; the job is elastic down to %d member(s): %s", el.Min, el.Reason())
	}
	return &Suggestion{Kind: SuggestLowerMinMember, Verified: true, MinMember: p.MaxPlaceable, Message: msg}, nil
}

// SuggestMembersMissing: the gang is short of members that do not exist
// yet; it starts once they are created (by their controller, or whoever
// creates the group's pods).
const SuggestMembersMissing SuggestionKind = "MembersMissing"

// membersMissing says which members do not exist yet and who creates
// them, and proves that they would fit once created: copies of the last
// member stand in for them on a copy of the snapshot.
func (x *explainer) membersMissing(ctx context.Context, g *gang.Gang, _ *gang.Placement, _ *Explanation) (*Suggestion, error) {
	n := g.Missing()
	if n <= 0 || g.IsLonePod() || len(g.Members) == 0 {
		return nil, nil
	}
	msg := fmt.Sprintf("%d member(s) do not exist yet (%d of the minimum %d exist): the gang starts once they are created%s", n, g.MinMember-n, g.MinMember, creatorOf(g))
	withMissing := *g
	withMissing.Members = slices.Clone(g.Members)
	last := g.Members[len(g.Members)-1]
	for i := range n {
		c := last.DeepCopy()
		c.Name = fmt.Sprintf("%s-not-created-%d", last.Name, i)
		c.UID, c.Spec.NodeName, c.Status = "", "", corev1.PodStatus{Phase: corev1.PodPending}
		withMissing.Members = append(withMissing.Members, c)
	}
	then, err := x.place(ctx, x.snap, &withMissing)
	if err != nil {
		return nil, err
	}
	if then.Verdict == gang.VerdictPlaced {
		return &Suggestion{Kind: SuggestMembersMissing, Verified: true, Message: msg + fmt.Sprintf("; once created like %s, %s", last.Name, fitsThen(g, then))}, nil
	}
	return &Suggestion{Kind: SuggestMembersMissing, Message: msg + fmt.Sprintf("; even then they would not all fit: %s", then.Message)}, nil
}

// creatorOf says who creates a gang's pods, as a clause: the controller
// owning its members, or for a Kueue pod group what Kueue waits for.
func creatorOf(g *gang.Gang) string {
	for _, pod := range g.Members {
		if ref := metav1.GetControllerOf(pod); ref != nil {
			return fmt.Sprintf(" by their %s %s/%s", ref.Kind, pod.Namespace, ref.Name)
		}
	}
	if g.Source == kueue.Source {
		return fmt.Sprintf(" (Kueue admits a pod group once all %d of its pods, its %s, exist)", g.MinMember, kueue.TotalCountAnnotation)
	}
	return ""
}
