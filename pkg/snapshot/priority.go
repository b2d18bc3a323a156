package snapshot

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// systemPriorities are the PriorityClasses every API server has, whether or
// not a snapshot file lists them.
var systemPriorities = map[string]int32{
	"system-node-critical":    2000001000,
	"system-cluster-critical": 2000000000,
}

// resolvePriorities gives the pods of a saved snapshot that name a
// priorityClassName but carry no spec.priority (a hand-made or converted
// file: the API server's priority admission always sets it) the value of
// their class, as admission would, and says how many it changed and which
// classes it could not find (those pods keep priority 0).
func resolvePriorities(snap *schedule.Snapshot) []string {
	values := map[string]int32{}
	for name, v := range systemPriorities {
		values[name] = v
	}
	for _, pc := range snap.PriorityClasses {
		values[pc.Name] = pc.Value
	}
	resolved, missing := 0, map[string]int{}
	for _, pod := range snap.Pods {
		name := pod.Spec.PriorityClassName
		if name == "" || pod.Spec.Priority != nil {
			continue
		}
		v, ok := values[name]
		if !ok {
			missing[name]++
			continue
		}
		pod.Spec.Priority = &v
		if pod.Spec.PreemptionPolicy == nil {
			for _, pc := range snap.PriorityClasses {
				if pc.Name == name && pc.PreemptionPolicy != nil {
					p := *pc.PreemptionPolicy
					pod.Spec.PreemptionPolicy = &p
				}
			}
		}
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
