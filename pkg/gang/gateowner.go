package gang

import (
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// GateSetBy returns the field manager that set gate on pod, as the API
// server records it in metadata.managedFields: the manager whose fieldsV1
// owns f:spec, f:schedulingGates, k:{"name":"<gate>"} (structured-merge-diff
// keys a list of maps by its merge key, name for schedulingGates). "" when
// none does: managedFields not kept (a snapshot leaves them out), or not
// recorded.
func GateSetBy(pod *corev1.Pod, gate string) string {
	for _, mf := range pod.ManagedFields {
		if mf.FieldsV1 == nil || mf.Subresource != "" {
			continue
		}
		var fields struct {
			Spec struct {
				Gates map[string]json.RawMessage `json:"f:schedulingGates"`
			} `json:"f:spec"`
		}
		if json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields) != nil {
			continue
		}
		for key := range fields.Spec.Gates {
			k, ok := strings.CutPrefix(key, "k:")
			if !ok {
				continue
			}
			var item struct {
				Name string `json:"name"`
			}
			if json.Unmarshal([]byte(k), &item) == nil && item.Name == gate {
				return mf.Manager
			}
		}
	}
	return ""
}

// GateOwnerOf words who owns gate on pods: the field manager that set it
// (GateSetBy, the first pod that records one), with the owner's own words
// when the gate is one kubectl-gang knows (GateOwner), else the manager
// alone; "" when neither is known (issue #27: gates and who owns them).
func GateOwnerOf(pods []*corev1.Pod, gate string) string {
	manager := ""
	for _, pod := range pods {
		if !hasGate(pod, gate) {
			continue
		}
		if manager = GateSetBy(pod, gate); manager != "" {
			break
		}
	}
	known := GateOwner(gate)
	switch {
	case manager == "":
		return known
	case known == "":
		return "set by manager " + manager + " (the pod's managedFields): whoever runs as it removes it"
	}
	return known + " (set by manager " + manager + ")"
}

// GateOwnersOf words the owners of gates on pods, "GATE is OWNER" or
// "GATE was set by manager M ...", for those known; "" when none is.
func GateOwnersOf(pods []*corev1.Pod, gates []string) string {
	var parts []string
	for _, g := range gates {
		switch o := GateOwnerOf(pods, g); {
		case o == "":
		case strings.HasPrefix(o, "set by manager "):
			parts = append(parts, g+" was "+o)
		default:
			parts = append(parts, g+" is "+o)
		}
	}
	return strings.Join(parts, "; ")
}

func hasGate(pod *corev1.Pod, gate string) bool {
	for _, g := range pod.Spec.SchedulingGates {
		if g.Name == gate {
			return true
		}
	}
	return false
}
