package gang

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// Kueue's plain pod groups and topology-aware scheduling (kueue.x-k8s.io):
// a group is the pods of a namespace that carry KueuePodGroupLabel with one
// value, KueueTotalCountAnnotation saying how many there are; Kueue admits
// the group (removes its admission gate) only when all exist and fit its
// quota, so the gang's minimum is the total count (docs/design.md#gangs).
const (
	KueuePodGroupLabel        = "kueue.x-k8s.io/pod-group-name"
	KueueTotalCountAnnotation = "kueue.x-k8s.io/pod-group-total-count"
	// The pod set annotations of topology-aware scheduling: every pod of
	// the set in one value of the node label (required), or in as few as
	// can hold it, one if any (preferred).
	KueueRequiredTopology  = "kueue.x-k8s.io/podset-required-topology"
	KueuePreferredTopology = "kueue.x-k8s.io/podset-preferred-topology"
	kueueSliceTopology     = "kueue.x-k8s.io/podset-slice-required-topology"
	kueueSliceSize         = "kueue.x-k8s.io/podset-slice-size"
)

// kueueRules: a Kueue plain pod group, the pods that carry
// KueuePodGroupLabel; no group object, no gate of its own here (Kueue's
// quota is not modelled).
var kueueRules = sourceRules{
	source: SourceKueue,
	nameOf: func(pod *corev1.Pod) string { return pod.Labels[KueuePodGroupLabel] },
	// The minimum is the group's total count, which the pods carry.
	minimumField: "the pods' " + KueueTotalCountAnnotation,
	// Kueue admits a pod group once all its total count of pods exist:
	// a group short of them waits for them, in those terms.
	short: membersMissing,
}

// ResolveKueueGroup returns Kueue's pod group name in namespace: the
// snapshot's pods that carry its label, in queue order, the minimum their
// total count. No such pod is a *NotFoundError; members that give no
// total count, or different ones, are an error, as Kueue's webhook refuses
// them.
func ResolveKueueGroup(snap *schedule.Snapshot, namespace, name string) (*Gang, error) {
	g := &Gang{Source: SourceKueue, Namespace: namespace, Name: name}
	g.Members = membersOf(snap.Pods, SourceKueue, namespace, name)
	if len(g.Members) == 0 {
		return nil, &NotFoundError{Resource: "pods", Namespace: namespace, Selector: KueuePodGroupLabel + "=" + name,
			Hint: "the snapshot holds only pods that have not finished (Succeeded and Failed pods are left out)"}
	}
	var err error
	if g.MinMember, err = KueueTotalCount(g.Members, name); err != nil {
		return nil, err
	}
	g.SortMembers()
	g.ReadKueueTopology()
	return g, nil
}

// KueueTotalCount is the total count the members of Kueue pod group name
// give.
func KueueTotalCount(members []*corev1.Pod, name string) (int32, error) {
	count := int32(0)
	for _, pod := range members {
		v, ok := pod.Annotations[KueueTotalCountAnnotation]
		if !ok {
			return 0, fmt.Errorf("pod %s/%s is in Kueue pod group %s but has no %s annotation", pod.Namespace, pod.Name, name, KueueTotalCountAnnotation)
		}
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("pod %s/%s: %s must be a positive integer, got %q", pod.Namespace, pod.Name, KueueTotalCountAnnotation, v)
		}
		if count != 0 && int32(n) != count {
			return 0, fmt.Errorf("the pods of Kueue pod group %s give different %s (%d and %d)", name, KueueTotalCountAnnotation, count, n)
		}
		count = int32(n)
	}
	return count, nil
}

// ReadKueueTopology honours Kueue's topology-aware scheduling annotations
// on the members: a required (or preferred) topology every member gives
// becomes the gang's required (preferred) topology key, unless one is set
// already. One that only some members give (a pod set of several), or two
// keys, and slices, are reported as not evaluated.
func (g *Gang) ReadKueueTopology() {
	for _, a := range []struct {
		annotation string
		key        *string
	}{{KueueRequiredTopology, &g.TopologyKey}, {KueuePreferredTopology, &g.PreferredTopologyKey}} {
		keys, without := map[string]int{}, 0
		for _, pod := range g.Members {
			if v := pod.Annotations[a.annotation]; v != "" {
				keys[v]++
			} else {
				without++
			}
		}
		switch {
		case len(keys) == 0:
		case len(keys) == 1 && without == 0:
			for k := range keys {
				if *a.key == "" {
					*a.key = k
				}
			}
		default:
			var parts []string
			for _, k := range sortedKeys(keys) {
				parts = append(parts, fmt.Sprintf("%s on %d member(s)", k, keys[k]))
			}
			if without > 0 {
				parts = append(parts, fmt.Sprintf("none on %d", without))
			}
			g.NotEvaluatedFields = append(g.NotEvaluatedFields, NotEvaluatedField{Field: "metadata.annotations[" + a.annotation + "]", Value: strings.Join(parts, ", "),
				Reason: "pod sets with different topologies are not evaluated (the gang has one topology key); give --topology-key to choose one"})
		}
	}
	for _, pod := range g.Members {
		if v := pod.Annotations[kueueSliceTopology]; v != "" {
			g.NotEvaluatedFields = append(g.NotEvaluatedFields, NotEvaluatedField{Field: "metadata.annotations[" + kueueSliceTopology + "]",
				Value:  fmt.Sprintf("%s, slices of %s", v, pod.Annotations[kueueSliceSize]),
				Reason: "Kueue's topology slices are not evaluated; the pod set's required topology, if any, is"})
			break
		}
	}
}

// KueueGroupOfAll is the Kueue pod group every pod is in, or "" when one is
// in none or they are in several.
func KueueGroupOfAll(pods []*corev1.Pod) string {
	name := ""
	for _, pod := range pods {
		n := pod.Labels[KueuePodGroupLabel]
		if n == "" || (name != "" && n != name) {
			return ""
		}
		name = n
	}
	return name
}

// kueueGroupsOf lists the Kueue pod groups the pods are in.
func kueueGroupsOf(pods []*corev1.Pod) []string {
	var out []string
	for _, pod := range pods {
		if n := pod.Labels[KueuePodGroupLabel]; n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}
