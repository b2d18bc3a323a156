package gang

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

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
		for _, r := range GroupsOf(pod) {
			ref := fmt.Sprintf("podgroups.%s/%s", r.Group, r.Name)
			if !slices.Contains(groups, ref) {
				groups = append(groups, ref)
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
		if name := KueueGroupOfAll(g.Members); name != "" && namespace != "" && minMember == 0 {
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
	g.ReadKueueTopology()
	return g, nil
}
