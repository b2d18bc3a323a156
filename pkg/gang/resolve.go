package gang

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// Ref names a PodGroup: podgroup/NAME (Group empty: whichever source has it)
// or podgroups.<group>/NAME.
type Ref struct {
	Namespace string
	Name      string
	// Group is the PodGroup's API group, e.g. scheduling.volcano.sh; empty
	// means any of the supported sources.
	Group string
}

// podGroupGroups are the API groups of the supported PodGroups, in the order
// listings use.
var podGroupGroups = []string{schedule.NativeGroup, schedule.VolcanoGroup, schedule.CoschedulingGroup}

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
				ref.Group, strings.Join(podGroupGroups, ", "))
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
		return nil, &NotFoundError{Resource: resource, Namespace: ref.Namespace, Name: ref.Name, Hint: podGroupHint(snap, ref)}
	case 1:
	default:
		amb := &AmbiguousError{Namespace: ref.Namespace, Name: ref.Name}
		for _, group := range podGroupGroups {
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
	g, err := gangFromPodGroup(pg)
	if err != nil {
		return nil, err
	}
	g.Members = membersOf(snap.Pods, g.Source, g.Namespace, g.Name)
	if g.Source == SourceVolcano {
		g.Succeeded = membersOf(snap.SucceededPods, g.Source, g.Namespace, g.Name)
	}
	g.SortMembers()
	return g, nil
}

// membersOf returns the pods in namespace that name the PodGroup name of source src.
func membersOf(pods []*corev1.Pod, src Source, namespace, name string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range pods {
		if pod.Namespace == namespace && GroupNameOf(pod, src) == name {
			out = append(out, pod)
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
			"is a gang scheduler installed, and may you list its PodGroups?", strings.Join(podGroupGroups, ", ")))
	}
	if len(counts) > 0 {
		var held []string
		for _, group := range podGroupGroups {
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
	switch group {
	case schedule.NativeGroup:
		return "native PodGroups need the GenericWorkload feature, off by default in Kubernetes v1.37"
	case schedule.VolcanoGroup:
		return "is Volcano installed?"
	case schedule.CoschedulingGroup:
		return "is the scheduler-plugins coscheduling controller installed?"
	}
	return ""
}

// ResolveSelector returns the ad hoc gang of the pods in namespace ("" means
// every namespace) that sel matches, in queue order. minMember 0 means every
// matched pod must run; a minMember above the number matched is accepted
// (the gang is then invalid, which Validate reports). No pod matched is a
// *NotFoundError.
func ResolveSelector(snap *schedule.Snapshot, namespace string, sel labels.Selector, minMember int32) (*Gang, error) {
	if sel == nil {
		return nil, errors.New("no label selector given")
	}
	if minMember < 0 {
		return nil, fmt.Errorf("--min-member must not be negative, got %d", minMember)
	}
	g := &Gang{Source: SourceSelector, Namespace: namespace, Name: sel.String()}
	for _, pod := range snap.Pods {
		if (namespace == "" || pod.Namespace == namespace) && sel.Matches(labels.Set(pod.Labels)) {
			g.Members = append(g.Members, pod)
		}
	}
	if len(g.Members) == 0 {
		return nil, &NotFoundError{Resource: "pods", Namespace: namespace, Selector: sel.String(),
			Hint: "the snapshot holds only pods that have not finished (Succeeded and Failed pods are left out)"}
	}
	// Pods of a PodGroup are a gang with rules of its own (its minimum, its
	// topology): an ad hoc gang of them would drop those silently.
	var groups []string
	for _, pod := range g.Members {
		for _, src := range []Source{SourceNative, SourceVolcano, SourceCoscheduling} {
			if name := GroupNameOf(pod, src); name != "" {
				ref := fmt.Sprintf("podgroups.%s/%s", src, name)
				if !slices.Contains(groups, ref) {
					groups = append(groups, ref)
				}
			}
		}
	}
	if len(groups) > 0 {
		slices.Sort(groups)
		return nil, fmt.Errorf("the pods matching %q belong to %s: name the group instead, so that its minimum and topology apply",
			sel.String(), strings.Join(groups, ", "))
	}
	// The pods of one Kueue pod group, all of them, are that group (its
	// total count the minimum); some of them, or of several, are refused
	// as PodGroups' are.
	if kg := kueueGroupsOf(g.Members); len(kg) > 0 {
		if name := kueueGroupOfAll(g.Members); name != "" && namespace != "" && minMember == 0 {
			if kueue, err := ResolveKueueGroup(snap, namespace, name); err != nil || len(kueue.Members) == len(g.Members) {
				return kueue, err
			}
		}
		return nil, fmt.Errorf("the pods matching %q belong to Kueue pod group(s) %s: select all of one group with -l %s=NAME, or name a member (pod/NAME), so that its total count applies",
			sel.String(), strings.Join(kg, ", "), KueuePodGroupLabel)
	}
	g.SortMembers()
	g.MinMember = minMember
	if minMember == 0 {
		g.MinMember = int32(len(g.Members))
	}
	g.readKueueTopology()
	return g, nil
}

// ResolvePod returns the pod namespace/name and the gang it belongs to
// through any source's membership key (native spec.schedulingGroup first,
// then Volcano's annotation, then the coscheduling label, taking the first
// whose PodGroup the snapshot holds). The gang is nil when the pod names no
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
	for _, src := range []Source{SourceNative, SourceVolcano, SourceCoscheduling} {
		group := GroupNameOf(pod, src)
		if group == "" {
			continue
		}
		g, err := ResolvePodGroup(snap, Ref{Namespace: namespace, Name: group, Group: string(src)})
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
		if name := GroupNameOf(pod, SourceKueue); name != "" {
			g, err := ResolveKueueGroup(snap, namespace, name)
			return g, pod, err
		}
	}
	return nil, pod, firstMissing
}

func joinHints(hints ...string) string {
	return strings.Join(slices.DeleteFunc(hints, func(s string) bool { return s == "" }), "; ")
}
