package gang

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// ResolvePod returns the pod namespace/name and the gang it belongs to
// through any source's membership key (in the sources' precedence order,
// GroupsOf, taking the first whose PodGroup the snapshot holds; then a
// group of pods without a group object, GroupResolver). The gang is nil when the pod names no
// group. When it names one the snapshot does not hold, the pod is returned
// with a nil gang and a *NotFoundError, since every gang scheduler holds such
// a pod back. A pod the snapshot does not hold is a *NotFoundError.
func ResolvePod(snap *schedule.Snapshot, namespace, name string) (*Gang, *corev1.Pod, error) {
	i, found := slices.BinarySearchFunc(snap.Pods, [2]string{namespace, name}, func(p *corev1.Pod, key [2]string) int {
		if c := strings.Compare(p.Namespace, key[0]); c != 0 {
			return c
		}
		return strings.Compare(p.Name, key[1])
	})
	var pod *corev1.Pod
	if found {
		pod = snap.Pods[i]
	} else {
		// The snapshot may not be sorted; fall back to a scan.
		for _, p := range snap.Pods {
			if p.Namespace == namespace && p.Name == name {
				pod = p
				break
			}
		}
	}
	if pod == nil {
		return nil, nil, &NotFoundError{Resource: "pods", Namespace: namespace, Name: name,
			Hint: "the snapshot holds only pods that have not finished (Succeeded and Failed pods are left out)"}
	}
	var firstMissing error
	for _, ref := range GroupsOf(pod) {
		g, err := ResolvePodGroup(snap, ref)
		var nf *NotFoundError
		if errors.As(err, &nf) {
			if firstMissing == nil {
				nf.Hint = joinHints(fmt.Sprintf("pod %s/%s names it", namespace, name), nf.Hint)
				firstMissing = nf
			}
			continue
		}
		if err != nil {
			return nil, pod, err
		}
		return g, pod, nil
	}
	if firstMissing == nil {
		for _, s := range Systems() {
			r, ok := s.(GroupResolver)
			if name := s.NameOf(pod); ok && name != "" {
				g, err := r.ResolveGroup(snap, namespace, name)
				return g, pod, err
			}
		}
		if g := HeldPod(snap, pod); g != nil {
			return g, pod, nil
		}
	}
	return nil, pod, firstMissing
}

// HeldPod is a pod of no gang that a queueing layer holds (gated) as a
// workload of its own, as that layer's gang of one queued for it
// (PodHolder); nil when none does.
func HeldPod(snap *schedule.Snapshot, pod *corev1.Pod) *Gang {
	if len(pod.Spec.SchedulingGates) == 0 {
		return nil
	}
	for _, a := range admitters {
		if h, ok := a.(PodHolder); ok {
			if g := h.HeldPod(snap, pod); g != nil {
				return g
			}
		}
	}
	return nil
}

// HeldForGroup says why a pod whose PodGroup does not exist stays pending,
// in the words of the scheduler of the group's source, with the group it
// waits for; "" when the pod names no PodGroup or one that exists. Each gang scheduler holds such a pod
// until the group is created (kube-scheduler's GangScheduling at PreEnqueue,
// others at Permit, System.Held): a verdict, not bad input
// (docs/design.md#gangs).
// unread is set when the group's kind could not be read (its list was
// refused): then nobody knows whether it exists, and the reason says so.
func HeldForGroup(snap *schedule.Snapshot, pod *corev1.Pod) (why string, group Ref, unread bool) {
	var first, unreadRef *Ref
	var unreadErr *NotFoundError
	for _, ref := range GroupsOf(pod) {
		_, err := ResolvePodGroup(snap, ref)
		var nf *NotFoundError
		if !errors.As(err, &nf) {
			return "", Ref{}, false
		}
		if first == nil {
			first = &ref
		}
		// Any group that could not be read may exist and own the pod.
		if unreadRef == nil && nf.Unread() {
			unreadRef, unreadErr = &ref, nf
		}
	}
	if first == nil {
		return "", Ref{}, false
	}
	if unreadRef != nil {
		return fmt.Sprintf("its PodGroup podgroups.%s/%s in namespace %s could not be read (the list of %s was refused), so whether it exists, and what its gang needs, are not evaluated",
			unreadRef.Group, unreadRef.Name, unreadRef.Namespace, strings.Join(unreadErr.Unreadable, ", ")), *unreadRef, true
	}
	src, _ := SourceOfGroup(first.Group)
	return fmt.Sprintf("%s: its PodGroup podgroups.%s/%s does not exist in namespace %s, and the pod stays pending until it is created",
		SystemOf(src).Held(first.Name), first.Group, first.Name, first.Namespace), *first, false
}

func joinHints(hints ...string) string {
	return strings.Join(slices.DeleteFunc(hints, func(s string) bool { return s == "" }), "; ")
}
