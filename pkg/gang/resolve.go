package gang

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// Ref names a PodGroup: podgroup/NAME (Group empty: whichever source has it)
// or podgroups.<group>/NAME.
type Ref struct {
	Namespace string
	Name      string
	// Group is the PodGroup's API group, e.g. scheduling.x-k8s.io; empty
	// means any of the supported sources.
	Group string
}

// ResolvePodGroup finds the PodGroup ref names among the snapshot's PodGroups
// of every source and returns it as a Gang with its members (the snapshot's
// pods in its namespace that name it through the source's membership key),
// in queue order. A name found in more than one API group is an
// *AmbiguousError; none found is a *NotFoundError. A malformed PodGroup is an
// error naming the object and the field.
func ResolvePodGroup(snap *schedule.Snapshot, ref Ref) (*Gang, error) {
	if ref.Group != "" {
		if _, ok := SourceOfGroup(ref.Group); !ok {
			return nil, fmt.Errorf("unknown PodGroup API group %q: kubectl-gang reads PodGroups of %s",
				ref.Group, strings.Join(PodGroupGroups(), ", "))
		}
	}
	// One PodGroup per API group: a group served at two versions (as a
	// snapshot file may hold it) is the same object.
	byGroup := map[string]*unstructured.Unstructured{}
	for _, u := range snap.PodGroups {
		gvk := u.GroupVersionKind()
		if !schedule.IsPodGroup(gvk) || u.GetNamespace() != ref.Namespace || u.GetName() != ref.Name {
			continue
		}
		if ref.Group != "" && gvk.Group != ref.Group {
			continue
		}
		if prev, ok := byGroup[gvk.Group]; !ok || preferVersion(u, prev) {
			byGroup[gvk.Group] = u
		}
	}
	switch len(byGroup) {
	case 0:
		resource := "podgroups"
		if ref.Group != "" {
			resource += "." + ref.Group
		}
		return nil, &NotFoundError{Resource: resource, Namespace: ref.Namespace, Name: ref.Name, Hint: podGroupHint(snap, ref),
			Unreadable: unreadPodGroups(snap, ref)}
	case 1:
	default:
		amb := &AmbiguousError{Namespace: ref.Namespace, Name: ref.Name}
		for _, group := range PodGroupGroups() {
			if u, ok := byGroup[group]; ok {
				amb.Choices = append(amb.Choices, podGroupRef(u))
			}
		}
		return nil, amb
	}
	var pg *unstructured.Unstructured
	for _, u := range byGroup {
		pg = u
	}
	g, err := FromPodGroup(pg)
	if err != nil {
		return nil, err
	}
	// A hand-made snapshot's PodGroup gets the priority admission gives it.
	if err := ResolvePodGroupPriority(g, snap.PriorityClasses); err != nil {
		return nil, err
	}
	g.Members = MembersOf(snap.Pods, g.Source, g.Namespace, g.Name)
	if rulesOf(g.Source).CountsSucceeded {
		g.Succeeded = MembersOf(snap.SucceededPods, g.Source, g.Namespace, g.Name)
	}
	g.SortMembers()
	return g, nil
}

// MembersOf returns the pods in namespace that name the PodGroup name of source src.
func MembersOf(pods []*corev1.Pod, src Source, namespace, name string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range pods {
		if pod.Namespace == namespace && GroupNameOf(pod, src) == name {
			out = append(out, pod)
		}
	}
	return out
}

// unreadPodGroups names the PodGroup kinds ref may be of (its group's, or
// every source's) that the snapshot could not read in ref's namespace.
func unreadPodGroups(snap *schedule.Snapshot, ref Ref) []string {
	var out []string
	for _, group := range PodGroupGroups() {
		if resource := "podgroups." + group; (ref.Group == "" || ref.Group == group) && !snap.CanRead(resource, ref.Namespace) {
			out = append(out, resource)
		}
	}
	return out
}

// podGroupHint says which PodGroups the snapshot holds, for a NotFoundError.
func podGroupHint(snap *schedule.Snapshot, ref Ref) string {
	counts := map[string]int{}
	elsewhere := map[string]bool{}
	for _, u := range snap.PodGroups {
		gvk := u.GroupVersionKind()
		if !schedule.IsPodGroup(gvk) {
			continue
		}
		counts[gvk.Group]++
		if u.GetName() == ref.Name && u.GetNamespace() != ref.Namespace && (ref.Group == "" || gvk.Group == ref.Group) {
			elsewhere[u.GetNamespace()] = true
		}
	}
	var parts []string
	switch {
	case ref.Group != "" && counts[ref.Group] == 0:
		parts = append(parts, fmt.Sprintf("the snapshot holds no %s PodGroups (%s)", ref.Group, missingSourceHint(ref.Group)))
	case len(counts) == 0:
		parts = append(parts, fmt.Sprintf("the snapshot holds no PodGroups of any kind (%s): "+
			"is a gang scheduler installed, and may you list its PodGroups?", strings.Join(PodGroupGroups(), ", ")))
	}
	if len(counts) > 0 {
		var held []string
		for _, group := range PodGroupGroups() {
			if n := counts[group]; n > 0 {
				held = append(held, group+" "+strconv.Itoa(n))
			}
		}
		parts = append(parts, "PodGroups in the snapshot: "+strings.Join(held, ", "))
	}
	if len(elsewhere) > 0 {
		namespaces := sortedKeys(elsewhere)
		for i, ns := range namespaces {
			namespaces[i] = strconv.Quote(ns)
		}
		parts = append(parts, fmt.Sprintf("a PodGroup named %q exists in namespace %s", ref.Name, strings.Join(namespaces, ", ")))
	}
	return strings.Join(parts, "; ")
}

func missingSourceHint(group string) string {
	if src, ok := SourceOfGroup(group); ok {
		return rulesOf(src).Missing
	}
	return ""
}
