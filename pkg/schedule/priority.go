package schedule

import (
	"math"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// SystemPriorityClasses are the PriorityClasses every API server has,
// whether or not a snapshot lists them, with their values.
var SystemPriorityClasses = map[string]int32{
	"system-node-critical":    2000001000,
	"system-cluster-critical": 2000000000,
}

// NativePodGroups reads the snapshot's scheduling.k8s.io PodGroups as
// kube-scheduler's preemption reads them (util.PodGroupPriority,
// getHighestAllAncestor), by namespace/name. A PodGroup whose fields are
// malformed is left out: its pods count at their own priority, as
// kube-scheduler counts pods whose group it cannot find.
func NativePodGroups(pgs []*unstructured.Unstructured) map[string]framework.NativePodGroup {
	var out map[string]framework.NativePodGroup
	for _, u := range pgs {
		if gvk := u.GroupVersionKind(); gvk.Group != NativeGroup || gvk.Kind != PodGroupKind {
			continue
		}
		var g framework.NativePodGroup
		switch v, found, err := unstructured.NestedFieldNoCopy(u.Object, "spec", "priority"); {
		case err != nil:
			continue
		case found:
			n, ok := toInt32(v)
			if !ok {
				continue
			}
			g.Priority = n
		}
		all, found, err := unstructured.NestedFieldNoCopy(u.Object, "spec", "disruptionMode", "all")
		if err != nil {
			continue
		}
		g.DisruptAll = found && all != nil
		if out == nil {
			out = map[string]framework.NativePodGroup{}
		}
		out[u.GetNamespace()+"/"+u.GetName()] = g
	}
	return out
}

// toInt32 reads a JSON number that must be a whole int32.
func toInt32(v any) (int32, bool) {
	var f float64
	switch n := v.(type) {
	case int64:
		f = float64(n)
	case int32:
		f = float64(n)
	case int:
		f = float64(n)
	case float64:
		f = n
	default:
		return 0, false
	}
	if f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return 0, false
	}
	return int32(f), true
}
