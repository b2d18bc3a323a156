package gang

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/fields"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// nativeRules: a scheduling.k8s.io PodGroup (v1beta1 in Kubernetes 1.37);
// members name it in spec.schedulingGroup.podGroupName. kube-scheduler
// applies no gate of its own before placement.
var nativeRules = sourceRules{
	source: SourceNative,
	group:  schedule.NativeGroup,
	nameOf: func(pod *corev1.Pod) string {
		if sg := pod.Spec.SchedulingGroup; sg != nil && sg.PodGroupName != nil {
			return *sg.PodGroupName
		}
		return ""
	},
	setName: func(pod *corev1.Pod, name string) {
		pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &name}
	},
	read:         readNative,
	// podGroupSchedulingDefaultAlgorithm (schedule_one_podgroup.go) runs
	// every queued member once, ordered by PodGroupMemberPodsOrderingFunc
	// (priority, attempts, queue time, name), reverting the whole cycle
	// when fewer than minCount fit; the group waits for a cluster event
	// before its next cycle. Seen on the test bed (test/conformance
	// TestGangMembersThatNeedEachOther).
	onePass: "kube-scheduler v1.37 tries the members of a PodGroup once each, in its queue's order (priority, attempts, the time each entered the queue), in one cycle for the whole group",
	minimumField: "spec.schedulingPolicy.gang.minCount",
	missing:      "native PodGroups need the GenericWorkload feature, off by default in Kubernetes v1.37",
	// kube-scheduler v1.37's GangScheduling PreEnqueue keeps the pod out of
	// the queue until its PodGroup exists.
	held: func(name string) string {
		return fmt.Sprintf("waiting for pods's pod group %q to appear in scheduling queue", name)
	},
	// The same PreEnqueue keeps every member out while fewer than minCount
	// pods of the group exist; when they exist but too few can count,
	// PlacementFeasible ends the group's cycle (gangscheduling.go).
	short: func(g *Gang, v Validity) string {
		if n := g.Missing(); n > 0 {
			return fmt.Sprintf("waiting for minCount pods from a gang to appear in scheduling queue (minCount %d, %d member(s) exist, %d do not)",
				g.MinMember, g.MinMember-n, n)
		}
		return fmt.Sprintf("minCount (%d) cannot be satisfied: %d member(s) can count (the others failed or are being deleted)", g.MinMember, v.ValidCount)
	},
}

// readNative reads a scheduling.k8s.io PodGroup. A group with the basic
// policy, or none, has no all-or-nothing minimum: one member is enough.
func readNative(p *fields.Reader, g *Gang) error {
	gang, err := p.Map("spec", "schedulingPolicy", "gang")
	if err != nil {
		return err
	}
	g.MinMember = 1
	if gang != nil {
		basic, err := p.Map("spec", "schedulingPolicy", "basic")
		if err != nil {
			return err
		}
		if basic != nil {
			return p.Errorf([]string{"spec", "schedulingPolicy"}, "must set exactly one of basic and gang, both are set")
		}
		minCount, found, err := p.Int32(0, 1, "spec", "schedulingPolicy", "gang", "minCount")
		if err != nil {
			return err
		}
		if !found {
			return p.Errorf([]string{"spec", "schedulingPolicy", "gang", "minCount"}, "is required")
		}
		g.MinMember = minCount
	}
	topology, err := p.Slice("spec", "schedulingConstraints", "topology")
	if err != nil {
		return err
	}
	switch len(topology) {
	case 0:
	case 1:
		path := []string{"spec", "schedulingConstraints", "topology[0]", "key"}
		constraint, ok := topology[0].(map[string]any)
		if !ok {
			return p.Errorf(path[:3], "must be an object, got %s", fields.Describe(topology[0]))
		}
		key, ok := constraint["key"].(string)
		if !ok && constraint["key"] != nil {
			return p.Errorf(path, "must be a string, got %s", fields.Describe(constraint["key"]))
		}
		if key == "" {
			return p.Errorf(path, "is required")
		}
		g.TopologyKey = key
	default:
		return p.Errorf([]string{"spec", "schedulingConstraints", "topology"},
			"holds %d constraints; only one is supported", len(topology))
	}
	return nil
}
