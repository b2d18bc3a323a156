package gang

import (
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/fields"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// native is kube-scheduler's own gang system: a scheduling.k8s.io
// PodGroup (v1beta1 in Kubernetes 1.37); members name it in
// spec.schedulingGroup.podGroupName. Its gate is kube-scheduler's
// validatePodGroup (NativeGate), which fails every cycle of a group whose
// members disagree with it or with each other.
type native struct{}

func init() { Register(native{}) }

func (native) Rules() Rules {
	return Rules{Source: SourceNative, Name: "native", Rank: 0, Group: schedule.NativeGroup,
		// podGroupSchedulingDefaultAlgorithm (schedule_one_podgroup.go) runs
		// every queued member once, ordered by PodGroupMemberPodsOrderingFunc
		// (priority, attempts, queue time, name), reverting the whole cycle
		// when fewer than minCount fit; the group waits for a cluster event
		// before its next cycle. Seen on the test bed (test/conformance
		// TestGangMembersThatNeedEachOther).
		OnePass:      "kube-scheduler v1.37 tries the members of a PodGroup once each, in its queue's order (priority, attempts, the time each entered the queue), in one cycle for the whole group",
		MinimumField: "spec.schedulingPolicy.gang.minCount",
		Missing:      "native PodGroups need the GenericWorkload feature, off by default in Kubernetes v1.37",
	}
}

func (native) NameOf(pod *corev1.Pod) string {
	if sg := pod.Spec.SchedulingGroup; sg != nil && sg.PodGroupName != nil {
		return *sg.PodGroupName
	}
	return ""
}

func (native) SetName(pod *corev1.Pod, name string) {
	pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &name}
}

func (native) Read(p *fields.Reader, g *Gang) error { return readNative(p, g) }

func (native) Gate(_ *schedule.Snapshot, g *Gang, _ []*framework.NodeInfo) *GateResult {
	return NativeGate(g)
}

// Held: kube-scheduler v1.37's GangScheduling PreEnqueue keeps the pod out
// of the queue until its PodGroup exists.
func (native) Held(name string) string {
	return fmt.Sprintf("waiting for pods's pod group %q to appear in scheduling queue", name)
}

// Short: the same PreEnqueue keeps every member out while fewer than
// minCount pods of the group exist; when they exist but too few can count,
// PlacementFeasible ends the group's cycle (gangscheduling.go).
func (native) Short(g *Gang, v Validity) string {
	if n := g.Missing(); n > 0 {
		return fmt.Sprintf("waiting for minCount pods from a gang to appear in scheduling queue (minCount %d, %d member(s) exist, %d do not)",
			g.MinMember, g.MinMember-n, n)
	}
	return fmt.Sprintf("minCount (%d) cannot be satisfied: %d member(s) can count (the others failed or are being deleted)", g.MinMember, v.ValidCount)
}

// QueueKey: kube-scheduler's PodGroup entity (QueuedPodGroupInfo) is
// ordered by the PodGroup's priority (util.PodGroupPriority), and the time
// its first member entered the queue, taken as the earliest pending
// member's creation.
func (native) QueueKey(_ *schedule.Snapshot, g *Gang, _ int32, since time.Time) (int32, time.Time) {
	return g.PodGroupPriorityValue(), since
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
	if g.PodGroupPriorityClassName, err = p.String("spec", "priorityClassName"); err != nil {
		return err
	}
	priority, found, err := p.Int32(0, math.MinInt32, "spec", "priority")
	if err != nil {
		return err
	}
	if found {
		g.PodGroupPriority = &priority
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

// GateNative names kube-scheduler's validation of a native pod group among
// the gates (validatePodGroup in pkg/scheduler/schedule_one_podgroup.go).
const GateNative = "PodGroupValidation"

// The reasons kube-scheduler's validatePodGroup refuses a pod group. It
// fails the group's cycle with an error (the members' PodScheduled and the
// PodGroup's PodGroupInitiallyScheduled conditions say SchedulerError) and
// words each only in its message; the reasons are kubectl-gang's.
const (
	// ReasonPriorityMismatch: a member's priority is not the PodGroup's.
	ReasonPriorityMismatch = "PriorityMismatch"
	// ReasonSchedulerNameMismatch: members name different schedulers.
	ReasonSchedulerNameMismatch = "SchedulerNameMismatch"
	// ReasonPreemptionPolicyMismatch: members have different preemption policies.
	ReasonPreemptionPolicyMismatch = "PreemptionPolicyMismatch"
)

// PodGroupPriorityValue is the priority kube-scheduler gives a native gang as a
// whole (util.PodGroupPriority): the PodGroup's spec.priority, 0 when it
// carries none. Its members must all have it, and it is the priority the
// gang preempts by and is preempted at.
func (g *Gang) PodGroupPriorityValue() int32 {
	if g.PodGroupPriority != nil {
		return *g.PodGroupPriority
	}
	return 0
}

// StaticGate is the refusal of g's gate that no state of the cluster
// changes (a native group's validation: NativeGate); nil when it passes or
// g's system has none. The queue holds such a gang without placing it.
func StaticGate(g *Gang) *GateResult {
	if r := NativeGate(g); r != nil && !r.Passed {
		return r
	}
	return nil
}

// NativeGate is kube-scheduler v1.37's validatePodGroup
// (pkg/scheduler/schedule_one_podgroup.go) for a native gang, as it runs at
// the start of every pod group cycle with the GenericWorkload gate on and
// PodGroupPreemptionPolicy off (the v1.37 defaults): every pod of the group,
// the queued ones in queue order and then the scheduled ones, must name the
// first queued pod's scheduler, have the PodGroup's priority, and have the
// first pod's preemption policy. The first pod that does not fails the whole
// cycle with kube-scheduler's message, and no member is ever scheduled. Nil
// for gangs of other sources; passed when no member waits for a node (no
// cycle runs). Members held by scheduling gates count as queued: the answer
// is for once they are released.
func NativeGate(g *Gang) *GateResult {
	if g.Source != SourceNative {
		return nil
	}
	r := &GateResult{Gate: GateNative, Check: GateNative, Passed: true, Message: "every member has the pod group's priority, scheduler and preemption policy"}
	queued := g.Pending()
	if len(queued) == 0 {
		return r
	}
	var scheduled []*corev1.Pod
	for _, pod := range g.Members {
		if pod.Spec.NodeName != "" {
			scheduled = append(scheduled, pod)
		}
	}
	schedulerName := queued[0].Spec.SchedulerName
	pgPriority := g.PodGroupPriorityValue()
	policy := preemptionPolicyOf(queued[0])
	r.Figures = map[string]string{"podGroupPriority": fmt.Sprint(pgPriority)}
	for _, pod := range append(queued, scheduled...) {
		var reason, msg string
		switch podPriority := corev1Priority(pod); {
		case pod.Spec.SchedulerName != schedulerName:
			reason = ReasonSchedulerNameMismatch
			msg = fmt.Sprintf("all pods in a single pod group should have the same .spec.schedulerName set, got: %q and %q", pod.Spec.SchedulerName, schedulerName)
		case podPriority != pgPriority:
			reason = ReasonPriorityMismatch
			msg = fmt.Sprintf("all pods in a single pod group should have the same priority as the pod group's priority, got %d and %d", podPriority, pgPriority)
		case preemptionPolicyOf(pod) != policy:
			reason = ReasonPreemptionPolicyMismatch
			msg = fmt.Sprintf("all pods in a single pod group should have the same preemption policy, got %v and %v", preemptionPolicyOf(pod), policy)
		default:
			continue
		}
		r.Passed, r.Reason, r.Message = false, reason, msg
		r.Detail = fmt.Sprintf("kube-scheduler fails every cycle of the group with SchedulerError (at pod %s): %s", pod.Name, msg)
		r.Fix = nativeFix(g, reason)
		return r
	}
	return r
}

// nativeFix says how to make a group validatePodGroup refuses schedulable.
func nativeFix(g *Gang, reason string) string {
	switch reason {
	case ReasonSchedulerNameMismatch:
		return "give every member the same spec.schedulerName"
	case ReasonPreemptionPolicyMismatch:
		return "give every member the same preemptionPolicy (it comes from the members' PriorityClass)"
	}
	// One priority class among the members: the PodGroup should carry it.
	classes := map[string]int32{}
	for _, pod := range g.Members {
		classes[pod.Spec.PriorityClassName] = corev1Priority(pod)
	}
	pgClass := g.PodGroupPriorityClassName
	if pgClass == "" {
		pgClass = "none"
	}
	if len(classes) == 1 {
		for name, value := range classes {
			if name != "" {
				return fmt.Sprintf("set the PodGroup's spec.priorityClassName to %q (priority %d), the members' class: the field is immutable, so recreate the PodGroup; or give the members the PodGroup's class (%s, priority %d)",
					name, value, pgClass, g.PodGroupPriorityValue())
			}
		}
	}
	return fmt.Sprintf("every member must have the PodGroup's priority %d: give them its priorityClassName (%s), or recreate the PodGroup with theirs",
		g.PodGroupPriorityValue(), pgClass)
}

// corev1Priority is a pod's priority as kube-scheduler reads it
// (corev1helpers.PodPriority): spec.priority, 0 when unset.
func corev1Priority(pod *corev1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}

// preemptionPolicyOf is a pod's preemption policy as kube-scheduler reads
// it (podPreemptionPolicy): PreemptLowerPriority when unset.
func preemptionPolicyOf(pod *corev1.Pod) corev1.PreemptionPolicy {
	if pod.Spec.PreemptionPolicy != nil {
		return *pod.Spec.PreemptionPolicy
	}
	return corev1.PreemptLowerPriority
}

// ResolvePodGroupPriority gives a native PodGroup that no API server has
// stored (from -f, or a hand-made snapshot: no UID) and that carries no
// spec.priority what the Priority admission plugin gives a new one
// (admitPodGroup): the value of its spec.priorityClassName, else of the
// global default class (the lowest-valued if several), else 0. A class that
// does not exist is refused as admission refuses it. Stored groups and other
// sources are left as they are: kube-scheduler reads a stored group's
// missing priority as 0.
func ResolvePodGroupPriority(g *Gang, classes []*schedulingv1.PriorityClass) error {
	if g.Source != SourceNative || g.PodGroupPriority != nil || g.PodGroup == nil || g.PodGroup.GetUID() != "" {
		return nil
	}
	var value int32
	name := g.PodGroupPriorityClassName
	switch {
	case name == "":
		var def *schedulingv1.PriorityClass
		for _, pc := range classes {
			if pc.GlobalDefault && (def == nil || pc.Value < def.Value) {
				def = pc
			}
		}
		if def == nil {
			return nil // priority 0, as nil reads
		}
		name, value = def.Name, def.Value
	default:
		found := false
		for _, pc := range classes {
			if pc.Name == name {
				value, found = pc.Value, true
			}
		}
		if !found {
			if value, found = schedule.SystemPriorityClasses[name]; !found {
				return fmt.Errorf("podgroups.%s %s: no PriorityClass with name %s was found", schedule.NativeGroup, g.Key(), name)
			}
		}
	}
	g.PodGroupPriorityClassName, g.PodGroupPriority = name, &value
	return nil
}

// NativeGroup is what kube-scheduler's preemption reads of a native
// PodGroup whose pods may be victims: its priority (every pod of the group
// is a victim at it, whatever its own) and whether its disruptionMode is
// All (every scheduled pod of the group goes together or none).
type NativeGroup = framework.NativePodGroup

// NativeGroups are a snapshot's native PodGroups by namespace/name.
type NativeGroups map[string]NativeGroup

// NativeGroupsOf reads the snapshot's native PodGroups as preemption sees
// them (schedule.NativePodGroups).
func NativeGroupsOf(snap *schedule.Snapshot) NativeGroups {
	return schedule.NativePodGroups(snap.PodGroups)
}

// Of returns the native PodGroup pod belongs to, if it names one that exists.
func (n NativeGroups) Of(pod *corev1.Pod) (NativeGroup, string, bool) {
	name := native{}.NameOf(pod)
	if name == "" {
		return NativeGroup{}, "", false
	}
	key := pod.Namespace + "/" + name
	ng, ok := n[key]
	return ng, key, ok
}

// VictimPriority is the priority kube-scheduler's preemption gives pod as a
// victim with GenericWorkload on (preemption.GetPodPriority): its native
// PodGroup's, else its own.
func (n NativeGroups) VictimPriority(pod *corev1.Pod) int32 {
	if ng, _, ok := n.Of(pod); ok {
		return ng.Priority
	}
	return corev1Priority(pod)
}
