// Package kueue is the gang system of Kueue's plain pod groups and
// topology-aware scheduling (kueue.x-k8s.io): a group is the pods of a
// namespace that carry PodGroupLabel with one value, TotalCountAnnotation
// saying how many there are; Kueue admits the group (removes its admission
// gate) only when all exist and fit its quota, so the gang's minimum is the
// total count (docs/design.md#gangs). It registers itself with the gang
// core.
package kueue

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/fields"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// Source is the system's name among the gang sources: a Kueue plain pod
// group, no group object.
const Source gang.Source = "kueue.x-k8s.io"

// The keys of Kueue's pod groups and topology-aware scheduling.
const (
	PodGroupLabel        = "kueue.x-k8s.io/pod-group-name"
	TotalCountAnnotation = "kueue.x-k8s.io/pod-group-total-count"
	// The pod set annotations of topology-aware scheduling: every pod of
	// the set in one value of the node label (required), or in as few as
	// can hold it, one if any (preferred).
	RequiredTopology  = "kueue.x-k8s.io/podset-required-topology"
	PreferredTopology = "kueue.x-k8s.io/podset-preferred-topology"
	sliceTopology     = "kueue.x-k8s.io/podset-slice-required-topology"
	// RoleHashAnnotation names a pod group's pod's role: the pod set of its
	// Workload.
	RoleHashAnnotation = "kueue.x-k8s.io/role-hash"
	sliceSize          = "kueue.x-k8s.io/podset-slice-size"
)

// system: a Kueue plain pod group, the pods that carry PodGroupLabel; no
// group object, no gate of its own here (Kueue's quota is not modelled).
type system struct{}

func init() { gang.Register(system{}) }

func (system) Rules() gang.Rules {
	// The minimum is the group's total count, which the pods carry.
	return gang.Rules{Source: Source, Name: "kueue", Rank: 3, MinimumField: "the pods' " + TotalCountAnnotation,
		Noun: "Kueue pod group", Key: PodGroupLabel, CopyLabels: []string{PodGroupLabel}}
}

func (system) NameOf(pod *corev1.Pod) string { return pod.Labels[PodGroupLabel] }

func (system) SetName(pod *corev1.Pod, name string) {
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[PodGroupLabel] = name
}

func (system) Read(*fields.Reader, *gang.Gang) error { return nil }
func (system) Held(string) string                    { return "" }

// Short: Kueue admits a pod group once all its total count of pods exist:
// a group short of them waits for them, in those terms.
func (system) Short(g *gang.Gang, v gang.Validity) string { return gang.MembersMissing(g, v) }

// GateOwner words the gates of Kueue's.
func (system) GateOwner(gate string) string {
	switch {
	case gate == AdmissionGate:
		return "Kueue's: it removes it once a ClusterQueue admits the workload (check the Workload's conditions)"
	case gate == TopologyGate:
		return "Kueue's topology-aware scheduling: it removes it once the workload's topology is assigned"
	case strings.HasPrefix(gate, "kueue.x-k8s.io/"):
		return "Kueue's"
	}
	return ""
}

func (system) ReadMembers(g *gang.Gang) { ReadTopology(g) }

func (system) ResolveGroup(snap *schedule.Snapshot, namespace, name string) (*gang.Gang, error) {
	return ResolveGroup(snap, namespace, name)
}

// ResolveGroup returns Kueue's pod group name in namespace: the
// snapshot's pods that carry its label, in queue order, the minimum their
// total count. No such pod is a *NotFoundError; members that give no
// total count, or different ones, are an error, as Kueue's webhook refuses
// them.
func ResolveGroup(snap *schedule.Snapshot, namespace, name string) (*gang.Gang, error) {
	g := &gang.Gang{Source: Source, Namespace: namespace, Name: name}
	g.Members = gang.MembersOf(snap.Pods, Source, namespace, name)
	if len(g.Members) == 0 {
		return nil, &gang.NotFoundError{Resource: "pods", Namespace: namespace, Selector: PodGroupLabel + "=" + name,
			Hint: "the snapshot holds only pods that have not finished (Succeeded and Failed pods are left out)"}
	}
	var err error
	if g.MinMember, err = TotalCount(g.Members, name); err != nil {
		return nil, err
	}
	g.SortMembers()
	ReadTopology(g)
	queueGroup(snap, g)
	return g, nil
}

// TotalCount is the total count the members of Kueue pod group name
// give.
func TotalCount(members []*corev1.Pod, name string) (int32, error) {
	count := int32(0)
	for _, pod := range members {
		v, ok := pod.Annotations[TotalCountAnnotation]
		if !ok {
			return 0, fmt.Errorf("pod %s/%s is in Kueue pod group %s but has no %s annotation", pod.Namespace, pod.Name, name, TotalCountAnnotation)
		}
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("pod %s/%s: %s must be a positive integer, got %q", pod.Namespace, pod.Name, TotalCountAnnotation, v)
		}
		if count != 0 && int32(n) != count {
			return 0, fmt.Errorf("the pods of Kueue pod group %s give different %s (%d and %d)", name, TotalCountAnnotation, count, n)
		}
		count = int32(n)
	}
	return count, nil
}

// ReadTopology honours Kueue's topology-aware scheduling annotations
// on the members: a required (or preferred) topology every member gives
// becomes the gang's required (preferred) topology key, unless one is set
// already. One that only some members give (a pod set of several), or two
// keys, and slices, are reported as not evaluated.
func ReadTopology(g *gang.Gang) {
	for _, a := range []struct {
		annotation string
		key        *string
	}{{RequiredTopology, &g.TopologyKey}, {PreferredTopology, &g.PreferredTopologyKey}} {
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
			for _, k := range slices.Sorted(maps.Keys(keys)) {
				parts = append(parts, fmt.Sprintf("%s on %d member(s)", k, keys[k]))
			}
			if without > 0 {
				parts = append(parts, fmt.Sprintf("none on %d", without))
			}
			g.NotEvaluatedFields = append(g.NotEvaluatedFields, gang.NotEvaluatedField{Field: "metadata.annotations[" + a.annotation + "]", Value: strings.Join(parts, ", "),
				Reason: "pod sets with different topologies are not evaluated (the gang has one topology key); give --topology-key to choose one"})
		}
	}
	for _, pod := range g.Members {
		if v := pod.Annotations[sliceTopology]; v != "" {
			g.NotEvaluatedFields = append(g.NotEvaluatedFields, gang.NotEvaluatedField{Field: "metadata.annotations[" + sliceTopology + "]",
				Value:  fmt.Sprintf("%s, slices of %s", v, pod.Annotations[sliceSize]),
				Reason: "Kueue's topology slices are not evaluated; the pod set's required topology, if any, is"})
			break
		}
	}
}

// GroupOfAll is the Kueue pod group every pod is in, or "" when one is
// in none or they are in several.
func GroupOfAll(pods []*corev1.Pod) string {
	name := ""
	for _, pod := range pods {
		n := pod.Labels[PodGroupLabel]
		if n == "" || (name != "" && n != name) {
			return ""
		}
		name = n
	}
	return name
}
