package gang

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/fields"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Volcano's membership keys: a member names its PodGroup in an annotation
// and its task (minTaskMember's key) in another.
const (
	VolcanoGroupAnnotation = "scheduling.k8s.io/group-name"
	VolcanoTaskAnnotation  = "volcano.sh/task-spec"
)

// VolcanoDefaultQueue is the queue a Volcano PodGroup that names none goes to
// (the CRD's default for spec.queue).
const VolcanoDefaultQueue = "default"

// The reasons given for the fields of a Volcano PodGroup kubectl-gang cannot
// evaluate.
const (
	NotEvaluatedNetworkTopology = "Volcano places network topologies on HyperNodes, which the snapshot does not hold; " +
		"give --topology-key LABEL to keep the gang within one value of a node label instead"
	NotEvaluatedSubGroupPolicy = "sub-group gangs (minSubGroups, per-sub-group topology) are not evaluated"
)

// volcanoNetworkTopology is the field --topology-key stands in for.
const volcanoNetworkTopology = "spec.networkTopology"

// volcanoRules: a scheduling.volcano.sh PodGroup; members carry
// VolcanoGroupAnnotation; the enqueue step is the gate; members that
// finished count toward the minimum (the gang plugin's ready count).
var volcanoRules = sourceRules{
	source:  SourceVolcano,
	group:   schedule.VolcanoGroup,
	nameOf:  func(pod *corev1.Pod) string { return pod.Annotations[VolcanoGroupAnnotation] },
	setName: setVolcanoGroup,
	read:    readVolcano,
	// Volcano's session (enqueue, the queue share at allocation, task
	// readiness) is opened by PlaceOn (openVolcano); the gate alone, for
	// SourceGate, is its enqueue step.
	gate: func(snap *schedule.Snapshot, g *Gang, nodes []*framework.NodeInfo) *GateResult {
		return openVolcano(snap, g, nodes).gate(g)
	},
	minimumField: "spec.minMember",
	missing:      "is Volcano installed?",
	// Volcano's scheduler takes up no job without its PodGroup.
	held:            func(string) string { return "Volcano schedules no task of a job without its PodGroup" },
	countsSucceeded: true,
	// allocateResourcesForTasks (pkg/scheduler/actions/allocate) pops a
	// job's tasks once each per session in task order, skips a task no
	// node passes, and discards the session's statement when the job is
	// not ready; the next session takes the tasks in the same order.
	onePass: "Volcano's allocate action tries a job's tasks once each per session, in task order",
}

func setVolcanoGroup(pod *corev1.Pod, name string) {
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[VolcanoGroupAnnotation] = name
}

// TaskOf returns a pod's Volcano task name: the volcano.sh/task-spec
// annotation, else the label of that name (Volcano's job controller sets
// both), else "".
func TaskOf(pod *corev1.Pod) string {
	if t := pod.Annotations[VolcanoTaskAnnotation]; t != "" {
		return t
	}
	return pod.Labels[VolcanoTaskAnnotation]
}

// readVolcano reads a scheduling.volcano.sh PodGroup. An absent minMember is
// 0, as in Volcano (its CRD and webhooks default nothing; only PodGroups its
// controller creates for bare pods get 1): such a group has no gang minimum.
func readVolcano(p *fields.Reader, g *Gang) error {
	var err error
	if g.MinMember, _, err = p.Int32(0, 0, "spec", "minMember"); err != nil {
		return err
	}
	if g.MinTaskMember, err = p.Int32Map("spec", "minTaskMember"); err != nil {
		return err
	}
	if g.MinResources, err = p.Resources("spec", "minResources"); err != nil {
		return err
	}
	if g.Queue, err = p.String("spec", "queue"); err != nil {
		return err
	}
	if g.Queue == "" {
		g.Queue = VolcanoDefaultQueue
	}
	nt, err := p.Map("spec", "networkTopology")
	if err != nil {
		return err
	}
	if nt != nil {
		mode, err := p.String("spec", "networkTopology", "mode")
		if err != nil {
			return err
		}
		if mode == "" {
			mode = "hard" // the CRD's default
		}
		if mode != "hard" && mode != "soft" {
			return p.Errorf([]string{"spec", "networkTopology", "mode"}, `must be "hard" or "soft", got %q`, mode)
		}
		value := "mode=" + mode
		tier, found, err := p.Int32(0, 0, "spec", "networkTopology", "highestTierAllowed")
		if err != nil {
			return err
		}
		if found {
			value += " highestTierAllowed=" + strconv.Itoa(int(tier))
		}
		tierName, err := p.String("spec", "networkTopology", "highestTierName")
		if err != nil {
			return err
		}
		if tierName != "" {
			value += " highestTierName=" + tierName
		}
		g.NotEvaluatedFields = append(g.NotEvaluatedFields, NotEvaluatedField{Field: volcanoNetworkTopology, Value: value, Reason: NotEvaluatedNetworkTopology})
	}
	sub, err := p.Slice("spec", "subGroupPolicy")
	if err != nil {
		return err
	}
	if len(sub) > 0 {
		g.NotEvaluatedFields = append(g.NotEvaluatedFields, NotEvaluatedField{Field: "spec.subGroupPolicy",
			Value: fmt.Sprintf("%d sub-group policies", len(sub)), Reason: NotEvaluatedSubGroupPolicy})
	}
	return nil
}
