package cmd

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/snapshot"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
)

// summaryTable says what a snapshot holds, one row per kind, with the details
// that tell at a glance whether it is the cluster the user meant.
func summaryTable(s *schedule.Snapshot) *metav1.Table {
	t := &metav1.Table{
		ColumnDefinitions: []metav1.TableColumnDefinition{
			{Name: "Resource", Type: "string"},
			{Name: "Count", Type: "integer"},
			{Name: "Details", Type: "string"},
		},
	}
	row := func(resource string, count int, details string) {
		t.Rows = append(t.Rows, metav1.TableRow{Cells: []any{resource, int64(count), details}})
	}

	zones := map[string]bool{}
	unschedulable := 0
	for _, n := range s.Nodes {
		if z, ok := n.Labels[corev1.LabelTopologyZone]; ok {
			zones[z] = true
		}
		if n.Spec.Unschedulable {
			unschedulable++
		}
	}
	row("nodes", len(s.Nodes), fmt.Sprintf("%d zone(s), %d unschedulable", len(zones), unschedulable))

	bound, gated := 0, 0
	for _, p := range s.Pods {
		if p.Spec.NodeName != "" {
			bound++
		} else if len(p.Spec.SchedulingGates) > 0 {
			gated++
		}
	}
	row("pods", len(s.Pods), fmt.Sprintf("%d bound, %d pending (%d gated)", bound, len(s.Pods)-bound, gated))
	row("namespaces", len(s.Namespaces), "")
	row("priorityclasses.scheduling.k8s.io", len(s.PriorityClasses), "")
	row("resourcequotas", len(s.ResourceQuotas), "")
	row("poddisruptionbudgets.policy", len(s.PodDisruptionBudgets), "")
	row("persistentvolumeclaims", len(s.PersistentVolumeClaims), "")
	row("persistentvolumes", len(s.PersistentVolumes), "")
	row("storageclasses.storage.k8s.io", len(s.StorageClasses), "")
	devices, sliceNodes := 0, map[string]bool{}
	for _, rs := range s.ResourceSlices {
		devices += len(rs.Spec.Devices)
		if rs.Spec.NodeName != nil {
			sliceNodes[*rs.Spec.NodeName] = true
		}
	}
	row("resourceslices.resource.k8s.io", len(s.ResourceSlices), fmt.Sprintf("%d device(s) on %d node(s)", devices, len(sliceNodes)))
	row("deviceclasses.resource.k8s.io", len(s.DeviceClasses), "")
	allocated := 0
	for _, c := range s.ResourceClaims {
		if c.Status.Allocation != nil {
			allocated++
		}
	}
	row("resourceclaims.resource.k8s.io", len(s.ResourceClaims), fmt.Sprintf("%d allocated", allocated))
	row("resourceclaimtemplates.resource.k8s.io", len(s.ResourceClaimTemplates), "")
	row("devicetaintrules.resource.k8s.io", len(s.DeviceTaintRules), "")

	systemRows(s, row)
	if cm := s.VolcanoConfigMap; cm != nil {
		name := cm.Namespace + "/" + cm.Name
		_, standIn := cm.Annotations[snapshot.UnreadableAnnotation]
		switch {
		case standIn:
			row("configmaps", 0, name+": Volcano's scheduler configuration, not readable")
		case configUnread(s):
			row("configmaps", 1, name+": Volcano's scheduler configuration, invalid")
		default:
			row("configmaps", 1, name+": Volcano's scheduler configuration")
		}
	}
	return t
}

// abbreviate lists up to n names and says how many more there are.
func abbreviate(names []string, n int) string {
	names = slices.Sorted(maps.Keys(toSet(names)))
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

func toSet(names []string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return set
}

// configUnread reports whether the Volcano scheduler's configuration on s
// could not be read.
func configUnread(s *schedule.Snapshot) bool {
	_, why := volcano.ConfigOf(s)
	return why != ""
}

// systemRows adds the gang systems' rows: each registered PodGroup kind,
// then the other registered kinds the snapshot holds.
func systemRows(s *schedule.Snapshot, row func(resource string, count int, details string)) {
	byGroup := map[string][]string{}
	for _, pg := range s.PodGroups {
		gvk := pg.GroupVersionKind()
		byGroup[gvk.Group] = append(byGroup[gvk.Group], pg.GetNamespace()+"/"+pg.GetName())
	}
	for _, k := range schedule.ObjectKinds() {
		if k.IsPodGroup() {
			names := byGroup[k.Group]
			row(k.String(), len(names), abbreviate(names, 3))
		}
	}
	// The gang systems' other objects, where the snapshot holds some.
	for _, k := range schedule.ObjectKinds() {
		if k.IsPodGroup() {
			continue
		}
		var names []string
		for _, u := range s.ObjectsOf(k.Group, k.Kind) {
			name := u.GetName()
			if ns := u.GetNamespace(); ns != "" {
				name = ns + "/" + name
			}
			names = append(names, name)
		}
		if len(names) > 0 {
			row(k.String(), len(names), abbreviate(names, 3))
		}
	}
}
