package snapshot

import (
	"fmt"
	"maps"
	"slices"

	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// resolvePriorities gives the pods of a saved snapshot that name a
// priorityClassName but carry no spec.priority (a hand-made or converted
// file: the API server's priority admission always sets it) the value of
// their class, as admission would, and says how many it changed and which
// classes it could not find (those pods keep priority 0).
func resolvePriorities(snap *schedule.Snapshot) []string {
	classes := map[string]*schedulingv1.PriorityClass{}
	for _, pc := range snap.PriorityClasses {
		classes[pc.Name] = pc
	}
	resolved, missing := 0, map[string]int{}
	for _, pod := range snap.Pods {
		name := pod.Spec.PriorityClassName
		if name == "" || pod.Spec.Priority != nil {
			continue
		}
		pc, ok := classes[name]
		var v int32
		switch {
		case ok:
			v = pc.Value
			if pod.Spec.PreemptionPolicy == nil && pc.PreemptionPolicy != nil {
				policy := *pc.PreemptionPolicy
				pod.Spec.PreemptionPolicy = &policy
			}
		default:
			if v, ok = schedule.SystemPriorityClasses[name]; !ok {
				missing[name]++
				continue
			}
		}
		pod.Spec.Priority = &v
		resolved++
	}
	var out []string
	if resolved > 0 {
		out = append(out, fmt.Sprintf("%d pod(s) name a priorityClassName but carry no spec.priority; their priority was taken from the PriorityClass, as the API server's admission sets it", resolved))
	}
	for _, name := range sortedNames(missing) {
		out = append(out, fmt.Sprintf("%d pod(s) name the PriorityClass %q, which the snapshot does not hold, and carry no spec.priority; they count as priority 0", missing[name], name))
	}
	return out
}

func sortedNames(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }
