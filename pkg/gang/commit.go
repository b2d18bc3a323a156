package gang

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// Commit is the state a placed gang leaves: a fork of s with every planned
// member reserved on its node, and a copy of snap in which those members
// are bound there (a bound copy replaces the pending pod of the same
// namespace and name; a member the snapshot does not hold, a what-if's or
// a copy's, is added) and their ResourceClaims carry the allocations the
// reservations made. snap and s are not changed. Gangs placed one after
// another each see the ones before them running: the queue simulation and
// the capacity count place on what Commit returns
// (docs/design.md#the-queue).
func Commit(snap *schedule.Snapshot, s *schedule.Scheduler, plan []Assignment) (*schedule.Snapshot, *schedule.Scheduler, error) {
	next, err := s.Fork()
	if err != nil {
		return nil, nil, err
	}
	if len(plan) == 0 {
		return snap, next, nil
	}
	bound := make(map[[2]string]*corev1.Pod, len(plan))
	var claims []*resourcev1.ResourceClaim
	for _, a := range plan {
		// One copy, bound and ungated, for the working copy and the
		// snapshot both; a shallow one: a snapshot's pods are never
		// changed in place (docs/design.md), so it shares the pod's maps
		// and slices and differs in its node and gates only.
		pod := *a.Pod
		pod.Spec.NodeName, pod.Spec.SchedulingGates = a.Node, nil
		c := &pod
		if err := next.ReserveBound(c); err != nil {
			return nil, nil, err
		}
		bound[[2]string{c.Namespace, c.Name}] = c
		if len(a.Claims) > 0 {
			claims = append(claims, a.Claims...)
		} else {
			// A plan that does not carry them (a pod of no gang): the
			// allocations this reservation made.
			claims = append(claims, next.Claims(c)...)
		}
	}
	out := *snap
	// snap.Pods are in namespace/name order (Snapshot.Sort, as loading and
	// Commit leave them): a member's pending pod is found by a binary
	// search, not by reading every pod.
	pods := snap.Pods
	var added []*corev1.Pod
	for _, c := range bound {
		if i, found := slices.BinarySearchFunc(pods, c, byNamespaceName); found && pods[i].Spec.NodeName == "" {
			// Only a pending pod can be a planned member.
			if &pods[0] == &snap.Pods[0] {
				pods = slices.Clone(pods)
			}
			pods[i] = c
			continue
		}
		// A member the snapshot does not hold (a what-if's, a copy's).
		added = append(added, c)
	}
	if len(added) > 0 {
		// One merge (a new slice) keeps the pods in namespace/name order.
		slices.SortFunc(added, byNamespaceName)
		pods = mergeSorted(pods, added)
	}
	out.Pods = pods
	if len(claims) > 0 {
		byName := make(map[[2]string]*resourcev1.ResourceClaim, len(claims))
		for _, c := range claims {
			byName[[2]string{c.Namespace, c.Name}] = c
		}
		out.ResourceClaims = make([]*resourcev1.ResourceClaim, 0, len(snap.ResourceClaims)+len(claims))
		for _, c := range snap.ResourceClaims {
			k := [2]string{c.Namespace, c.Name}
			if n, ok := byName[k]; ok {
				c = n
				delete(byName, k)
			}
			out.ResourceClaims = append(out.ResourceClaims, c)
		}
		for _, c := range byName {
			i, _ := slices.BinarySearchFunc(out.ResourceClaims, c, func(a, b *resourcev1.ResourceClaim) int {
				return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
			})
			out.ResourceClaims = slices.Insert(out.ResourceClaims, i, c)
		}
	}
	return &out, next, nil
}

// CommitGroup is the snapshot a started gang's group object leaves: snap
// with g's PodGroup in it (added for a copy or a what-if the snapshot does
// not hold, replacing the one of that kind, namespace and name otherwise),
// as its system's controller leaves it once the gang starts (Committer).
// snap is not changed; a gang without a group object leaves it as it is.
func CommitGroup(snap *schedule.Snapshot, g *Gang) *schedule.Snapshot {
	if g.PodGroup == nil {
		return snap
	}
	pg := g.PodGroup
	if c, ok := SystemOf(g.Source).(Committer); ok {
		pg = c.Committed(pg)
	}
	out := *snap
	out.PodGroups = slices.Clone(snap.PodGroups)
	gvk := pg.GroupVersionKind()
	i := slices.IndexFunc(out.PodGroups, func(u *unstructured.Unstructured) bool {
		return u.GroupVersionKind().GroupKind() == gvk.GroupKind() && u.GetNamespace() == pg.GetNamespace() && u.GetName() == pg.GetName()
	})
	if i >= 0 {
		out.PodGroups[i] = pg
	} else {
		// Where Snapshot.Sort puts it.
		i, _ = slices.BinarySearchFunc(out.PodGroups, pg, schedule.CompareGroupObjects)
		out.PodGroups = slices.Insert(out.PodGroups, i, pg)
	}
	return &out
}

// mergeSorted merges two slices sorted by namespace/name into a new one,
// b's pods after a's equal ones. b is the short one (a gang's members
// among a cluster's pods): each is placed by a binary search and the runs
// of a between them are copied whole.
func mergeSorted(a, b []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(a)+len(b))
	for _, p := range b {
		// The first of a that sorts after p.
		i, _ := slices.BinarySearchFunc(a, p, func(x, p *corev1.Pod) int {
			if byNamespaceName(x, p) <= 0 {
				return -1
			}
			return 1
		})
		out = append(append(out, a[:i]...), p)
		a = a[i:]
	}
	return append(out, a...)
}

func byNamespaceName(a, b *corev1.Pod) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}
