// Package volcano is the gang system of Volcano's scheduler
// (volcano.sh, v1.14): a scheduling.volcano.sh PodGroup whose members carry
// GroupAnnotation, its session (enqueue, the queue's share at allocation,
// the gang plugin's readiness) around each placement
// (docs/design.md#volcano). The session's model is pkg/volcano. It
// registers itself with the gang core.
package volcano

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/pkg/fields"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	model "github.com/kubectl-gang/kubectl-gang/pkg/volcano"
)

// Source is the system's name among the gang sources.
const Source gang.Source = Group

// Volcano's membership keys: a member names its PodGroup in an annotation
// and its task (minTaskMember's key) in another.
const (
	GroupAnnotation = "scheduling.k8s.io/group-name"
	TaskAnnotation  = "volcano.sh/task-spec"
)

// DefaultQueue is the queue a Volcano PodGroup that names none goes to
// (the CRD's default for spec.queue).
const DefaultQueue = "default"

// QueueGate is the chart's own scheduling gate, which Volcano removes
// itself.
const QueueGate = "scheduling.volcano.sh/queue-allocation-gate"

// The reasons given for the fields of a Volcano PodGroup kubectl-gang cannot
// evaluate.
const (
	NotEvaluatedNetworkTopology = "Volcano places network topologies on HyperNodes, which the snapshot does not hold; " +
		"give --topology-key LABEL to keep the gang within one value of a node label instead"
	NotEvaluatedSubGroupPolicy = "sub-group gangs (minSubGroups, per-sub-group topology) are not evaluated"
)

// networkTopology is the field --topology-key stands in for.
const networkTopology = "spec.networkTopology"

// system: a scheduling.volcano.sh PodGroup; members carry GroupAnnotation;
// the enqueue step is the gate; members that finished count toward the
// minimum (the gang plugin's ready count).
type system struct{}

func init() {
	gang.Register(system{})
	schedule.RegisterObjectKind(schedule.ObjectKind{Group: model.Group, Resource: "podgroups", Kind: schedule.PodGroupKind, Namespaced: true})
	schedule.RegisterObjectKind(schedule.ObjectKind{Group: model.Group, Resource: "queues", Kind: "Queue"})
}

// Group is Volcano's scheduling API group (PodGroups and Queues).
const Group = model.Group

func (system) Rules() gang.Rules {
	return gang.Rules{Source: Source, Name: "volcano", Rank: 1, Group: Group, MinimumField: "spec.minMember",
		Missing: "is Volcano installed?", CountsSucceeded: true, OwnGate: QueueGate,
		CopyLabels: []string{"volcano.sh/job-name"}, TopologyStandIn: networkTopology,
		// allocateResourcesForTasks (pkg/scheduler/actions/allocate) pops a
		// job's tasks once each per session in task order, skips a task no
		// node passes, and discards the session's statement when the job is
		// not ready; the next session takes the tasks in the same order.
		OnePass: "Volcano's allocate action tries a job's tasks once each per session, in task order",
	}
}

func (system) NameOf(pod *corev1.Pod) string { return pod.Annotations[GroupAnnotation] }

func (system) SetName(pod *corev1.Pod, name string) {
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[GroupAnnotation] = name
}

func (system) Read(p *fields.Reader, g *gang.Gang) error { return Read(p, g) }

// Held: Volcano's scheduler takes up no job without its PodGroup.
func (system) Held(string) string { return "Volcano schedules no task of a job without its PodGroup" }

// Short: the gang core's words are the gang plugin's.
func (system) Short(*gang.Gang, gang.Validity) string { return "" }

// Open opens Volcano's session (enqueue, the queue share at allocation,
// task readiness) for a placement; its gate alone, for SourceGate, is the
// enqueue step.
func (system) Open(snap *schedule.Snapshot, g *gang.Gang, nodes []*framework.NodeInfo) gang.Session {
	return open(snap, g, nodes)
}

// QueueKey is Session.JobOrderFn with the priority and gang plugins
// (every pending job is not ready, so the gang plugin ties): the job's
// priority (its PodGroup's class, else the global default), then the
// PodGroup's creation.
func (system) QueueKey(snap *schedule.Snapshot, g *gang.Gang, _ int32, since time.Time) (int32, time.Time) {
	j := job(snap, g.PodGroup, g.Namespace, g.Name)
	if t, err := time.Parse(time.RFC3339, j.Created); err == nil {
		since = t
	}
	return j.Priority, since
}

// Committed: Volcano's next session counts a job whose tasks run as
// allocated, not pending (a Pending one would be enqueued and reserve its
// minResources again: session.go's enqueue), and its queue's allocation
// with it (proportion, capacity).
func (system) Committed(pg *unstructured.Unstructured) *unstructured.Unstructured {
	pg = pg.DeepCopy()
	_ = unstructured.SetNestedField(pg.Object, "Running", "status", "phase")
	return pg
}

// ConfigOf is the configuration Volcano's scheduler runs with on snap
// (its default when the snapshot holds none), and why the one the cluster
// runs could not be read ("" when it was).
func ConfigOf(snap *schedule.Snapshot) (*model.Config, string) { return model.ConfigIn(snap.Systems) }

// SetConfig makes c the configuration on snap (--volcano-config), over the
// one it holds and over why that could not be read.
func SetConfig(snap *schedule.Snapshot, c *model.Config) { model.SetConfigIn(&snap.Systems, c, "") }

func (system) TaskOf(pod *corev1.Pod) string { return TaskOf(pod) }

// GateOwner words the gates of Volcano's.
func (system) GateOwner(gate string) string {
	switch {
	case gate == QueueGate:
		return "Volcano's: it removes it once the pod's queue has room for it"
	case strings.HasPrefix(gate, "scheduling.volcano.sh/"):
		return "Volcano's"
	}
	return ""
}

// TaskOf returns a pod's Volcano task name: the volcano.sh/task-spec
// annotation, else the label of that name (Volcano's job controller sets
// both), else "".
func TaskOf(pod *corev1.Pod) string {
	if t := pod.Annotations[TaskAnnotation]; t != "" {
		return t
	}
	return pod.Labels[TaskAnnotation]
}

// Read reads a scheduling.volcano.sh PodGroup. An absent minMember is
// 0, as in Volcano (its CRD and webhooks default nothing; only PodGroups its
// controller creates for bare pods get 1): such a group has no gang minimum.
func Read(p *fields.Reader, g *gang.Gang) error {
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
		g.Queue = DefaultQueue
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
		g.NotEvaluatedFields = append(g.NotEvaluatedFields, gang.NotEvaluatedField{Field: networkTopology, Value: value, Reason: NotEvaluatedNetworkTopology})
	}
	sub, err := p.Slice("spec", "subGroupPolicy")
	if err != nil {
		return err
	}
	if len(sub) > 0 {
		g.NotEvaluatedFields = append(g.NotEvaluatedFields, gang.NotEvaluatedField{Field: "spec.subGroupPolicy",
			Value: fmt.Sprintf("%d sub-group policies", len(sub)), Reason: NotEvaluatedSubGroupPolicy})
	}
	return nil
}
