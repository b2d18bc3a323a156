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
	// The pods of one group of pods (GroupResolver), all of them, are that
	// group (its total count the minimum); some of them, or of several,
	// are refused as PodGroups' are.
	for _, s := range Systems() {
		r, ok := s.(GroupResolver)
		if !ok {
			continue
		}
		var names []string
		all := true
		for _, pod := range g.Members {
			n := s.NameOf(pod)
			all = all && n != ""
			if n != "" && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			continue
		}
		slices.Sort(names)
		if all && len(names) == 1 && namespace != "" && minMember == 0 {
			if grp, err := r.ResolveGroup(snap, namespace, names[0]); err != nil || len(grp.Members) == len(g.Members) {
				return grp, err
			}
		}
		rules := s.Rules()
		return nil, fmt.Errorf("the pods matching %q belong to %s(s) %s: select all of one group with -l %s=NAME, or name a member (pod/NAME), so that its total count applies",
			sel.String(), rules.Noun, strings.Join(names, ", "), rules.Key)
	}
	g.SortMembers()
	g.MinMember = minMember
	if minMember == 0 {
		g.MinMember = int32(len(g.Members))
	}
	for _, s := range Systems() {
		if r, ok := s.(GroupResolver); ok {
			r.ReadMembers(g)
		}
	}
	return g, nil
}
