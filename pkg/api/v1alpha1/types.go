// Package v1alpha1 is the published output contract of kubectl gang: the
// objects explain, place, admit and bind print with -o json|yaml|jsonpath,
// as apiVersion kubectl-gang.github.io/v1alpha1. Scripts depend on these
// field names; change them only with a new version (docs/design.md#output).
// The conversions from the core's results are in conversion.go.
package v1alpha1

import (
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GroupVersion is the apiVersion of every result kubectl gang prints with -o.
const GroupVersion = "kubectl-gang.github.io/v1alpha1"

// The kinds of the results, one per verb.
const (
	KindExplanation = "Explanation"
	KindPlacement   = "Placement"
	KindAdmission   = "Admission"
	// KindPendingList is what explain prints without a subject.
	KindPendingList = "PendingList"
	KindBindReport  = "BindReport"
)

// Explanation is what explain prints with -o json|yaml (kind Explanation).
type Explanation struct {
	Verdict string `json:"verdict"`
	// Queue is where the subject stands in the queue simulation, when it
	// is pending in the snapshot (docs/design.md#the-queue).
	Queue *QueuePlace `json:"queue,omitempty"`
	// Message is the summary line: kube-scheduler's FailedScheduling message
	// when the subject does not fit.
	Message string `json:"message"`
	// Pod is the pod the nodes are about: the pod explained, or the gang's
	// first member that does not fit (Blocked), or its largest pending member.
	Pod          string       `json:"pod,omitempty"`
	PodRequests  string       `json:"podRequests,omitempty"`
	Blocked      bool         `json:"blocked,omitempty"`
	PlacedBefore []Assignment `json:"placedBefore,omitempty"`
	Gang         *GangRef     `json:"gang,omitempty"`
	// Member is how the pod asked about (explain pod/NAME of a gang's pod)
	// does by itself.
	Member      *MemberAlone `json:"member,omitempty"`
	TopologyKey string       `json:"topologyKey,omitempty"`
	Domain      string       `json:"domain,omitempty"`
	// Preferred says whether the gang's preferred topology held it.
	Preferred *PreferredTopology `json:"preferredTopology,omitempty"`
	Nodes     []Node             `json:"nodes"`
	Gates     []string           `json:"gates,omitempty"`
	// Quota is why the namespace's ResourceQuota would refuse members that
	// do not exist yet (a what-if).
	Quota        string   `json:"quota,omitempty"`
	NotEvaluated []string `json:"notEvaluated,omitempty"`

	Validity     *Validity    `json:"validity,omitempty"`
	MinMember    *int32       `json:"minMember,omitempty"`
	MaxPlaceable *int32       `json:"maxPlaceable,omitempty"`
	Running      []Member     `json:"running,omitempty"`
	PlacedOn     []Assignment `json:"placedOn,omitempty"`
	Blocking     []Blocking   `json:"blocking,omitempty"`
	Domains      []DomainHold `json:"domains,omitempty"`
	Suggestions  []Suggestion `json:"suggestions"`
	// VolcanoConfiguration names, for a Volcano gang, the configuration of
	// Volcano's scheduler it was judged with.
	VolcanoConfiguration *VolcanoConfiguration `json:"volcanoConfiguration,omitempty"`
	// Kueue is Kueue's decision, for a workload that names a LocalQueue.
	Kueue *Kueue `json:"kueue,omitempty"`
}

// VolcanoConfiguration says which configuration of Volcano's scheduler (its
// volcano-scheduler.conf: actions, plugins, their arguments) a Volcano gang
// was judged with (docs/design.md#volcanos-configuration).
type VolcanoConfiguration struct {
	// Source is where it came from: "file PATH" (--volcano-config),
	// "ConfigMap NAMESPACE/NAME" (read from the cluster, or "... (from the
	// snapshot FILE)"), or Volcano's default configuration (the chart's).
	// Empty when Unread is set.
	Source string `json:"source,omitempty"`
	// Unread says why the scheduler's configuration could not be known
	// (no permission to read its ConfigMap, or a ConfigMap Volcano itself
	// would not load): what depends on it is not evaluated.
	Unread string `json:"unread,omitempty"`
}

// Node is one node of the explanation.
type Node struct {
	Name     string `json:"name"`
	Domain   string `json:"domain,omitempty"`
	Feasible bool   `json:"feasible"`
	// Score is set for feasible nodes only: an infeasible node has none.
	Score *int64 `json:"score,omitempty"`
	// Fits is how many pods like the explained one the node holds in the
	// state the nodes are described in: the snapshot as it is, or, for a
	// blocked gang, once the members in placedBefore are placed (then it is
	// how many more; the screen calls that column MORE). Feasible and
	// score are of that state too.
	Fits       int64 `json:"fits"`
	FitsAtMost bool  `json:"fitsAtMost,omitempty"`
	// Placed counts the gang's members that run there or that the plan puts there.
	Placed int64 `json:"placed,omitempty"`
	// Plugin is the first Filter plugin that rejects the node.
	Plugin  string   `json:"plugin,omitempty"`
	Reasons []string `json:"reasons"`
	// Taint is the untolerated taint, key=value:Effect.
	Taint           string         `json:"taint,omitempty"`
	Insufficient    []Insufficient `json:"insufficient,omitempty"`
	MissingFeatures []string       `json:"missingFeatures,omitempty"`
	// Devices says, when DynamicResources rejects the node, how each device
	// request of the pod's unallocated claims does there.
	Devices []DeviceFit `json:"devices,omitempty"`
	// WithoutDomain is how a node outside the gang's topology domain would do
	// without the confinement.
	WithoutDomain *NodeVerdict    `json:"withoutDomain,omitempty"`
	Filters       []FilterVerdict `json:"filters,omitempty"`
}

// NodeVerdict is a node's verdict.
type NodeVerdict struct {
	Feasible bool     `json:"feasible"`
	Fits     int64    `json:"fits"`
	Plugin   string   `json:"plugin,omitempty"`
	Reasons  []string `json:"reasons,omitempty"`
}

// Insufficient is one resource a node lacks.
type Insufficient struct {
	Resource  string `json:"resource"`
	Requested string `json:"requested"`
	Free      string `json:"free"`
	Short     string `json:"short"`
}

// FilterVerdict is one Filter plugin's verdict on a node.
type FilterVerdict struct {
	Plugin  string   `json:"plugin"`
	Code    string   `json:"code"`
	Reasons []string `json:"reasons,omitempty"`
}

// Validity is the gang's validity.
type Validity struct {
	Valid      bool           `json:"valid"`
	ValidCount int32          `json:"validCount"`
	MinMember  int32          `json:"minMember"`
	Reason     string         `json:"reason,omitempty"`
	Message    string         `json:"message,omitempty"`
	Tasks      []TaskValidity `json:"tasks,omitempty"`
}

// TaskValidity is one Volcano task's validity.
type TaskValidity struct {
	Name  string `json:"name"`
	Valid int32  `json:"valid"`
	Min   int32  `json:"min"`
}

// Blocking is how many nodes one plugin rejects the blocked member from first.
type Blocking struct {
	Plugin  string   `json:"plugin,omitempty"`
	Nodes   int64    `json:"nodes"`
	Reasons []string `json:"reasons"`
}

// DomainHold is how many members a topology domain holds at once.
type DomainHold struct {
	Value    string `json:"value"`
	Nodes    int64  `json:"nodes"`
	Holds    int32  `json:"holds"`
	Complete bool   `json:"complete"`
	Skipped  string `json:"skipped,omitempty"`
	// Usable counts the nodes the members may use (affinity, taints and
	// cordons allow it); Resource is the gang's binding resource, Free and
	// Allocatable its amounts on those nodes before the placement.
	Usable      int64  `json:"usable"`
	Resource    string `json:"resource,omitempty"`
	Free        string `json:"free,omitempty"`
	Allocatable string `json:"allocatable,omitempty"`
}

// Suggestion is one thing that would make the subject fit.
type Suggestion struct {
	Kind     string `json:"kind"`
	Message  string `json:"message"`
	Verified bool   `json:"verified"`
	// Why says, for the suggestion listed first, why it leads: the blocker
	// it removes, or what ranked it first.
	Why string `json:"why,omitempty"`

	Shortfall     []Shortfall `json:"shortfall,omitempty"`
	Victims       []Victim    `json:"victims,omitempty"`
	PDBViolations int64       `json:"pdbViolations,omitempty"`
	// Tolerations are the taints a Tolerate suggestion tolerates, as
	// key=value:Effect.
	Tolerations []string `json:"tolerations,omitempty"`
	// EquallyGood are the nodes the first preemption could equally pick
	// (kube-scheduler picks at random), the one named first.
	EquallyGood []string     `json:"equallyGood,omitempty"`
	NewNodes    *NodeShape   `json:"newNodes,omitempty"`
	Repairs     []NodeRepair `json:"repairs,omitempty"`
	Together    bool         `json:"together,omitempty"`
	MinMember   int32        `json:"minMember,omitempty"`
	Gates       []string     `json:"gates,omitempty"`
	// Selector are the labels a Selector suggestion corrects.
	Selector []SelectorFix `json:"selector,omitempty"`
	// Largest is, for NodesTooSmall, per resource the blocked member
	// requests more of than any node has allocatable, the most one node has.
	Largest []Largest `json:"largest,omitempty"`
	// NearMiss says a Tolerate suggestion corrects a toleration of the
	// member's own that misses the taint by its value only.
	NearMiss bool `json:"nearMiss,omitempty"`
	// DevicesLost are, for RepairDevicePlugin, the devices a node's device
	// plugin no longer reports as allocatable.
	DevicesLost []DevicesLost `json:"devicesLost,omitempty"`
	// Claims are, for CreateClaim, the PersistentVolumeClaims to create, as
	// namespace/name.
	Claims []string `json:"claims,omitempty"`
	// Moves are, for Move, the lower-priority pods to move off nodes to
	// make them whole for the members, and where each would go again.
	Moves []Move `json:"moves,omitempty"`
}

// Move is one pod a Move suggestion moves: off node from, onto node to,
// where kube-scheduler would put it again once the gang is placed; to
// empty says it would stay Pending (an eviction).
type Move struct {
	Pod               string `json:"pod"`
	From              string `json:"from"`
	To                string `json:"to,omitempty"`
	Priority          int32  `json:"priority"`
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// NoController says nothing recreates the pod: moving it is deleting
	// it and creating it again by hand.
	NoController bool `json:"noController,omitempty"`
	// Gang is the PodGroup (namespace/name) the pod is a member of.
	Gang string `json:"gang,omitempty"`
}

// DevicesLost is a node's capacity and allocatable of one extended resource
// whose device plugin reports fewer devices than the node has.
type DevicesLost struct {
	Node        string `json:"node"`
	Resource    string `json:"resource"`
	Capacity    int64  `json:"capacity"`
	Allocatable int64  `json:"allocatable"`
}

// SelectorFix is a label a node selector or required node affinity asks for
// that no node carries, and the nearest label nodes carry.
type SelectorFix struct {
	// Field is nodeSelector or nodeAffinity.
	Field string `json:"field"`
	Key   string `json:"key"`
	// Value is empty for an Exists expression.
	Value    string `json:"value,omitempty"`
	NewKey   string `json:"newKey"`
	NewValue string `json:"newValue,omitempty"`
	// Nodes is how many nodes carry the new label.
	Nodes int64 `json:"nodes"`
}

// Largest is the most of one resource a node has allocatable, against the
// blocked member's request.
type Largest struct {
	Resource    string `json:"resource"`
	Request     string `json:"request"`
	Allocatable string `json:"allocatable"`
	Node        string `json:"node,omitempty"`
}

// Shortfall is how much of a resource is missing. With deviceClass set, it
// is devices of that DeviceClass a request of the members' claims (resource:
// the request's name, or the extended resource the class backs) is short of,
// the amounts are device counts.
type Shortfall struct {
	Resource    string `json:"resource"`
	DeviceClass string `json:"deviceClass,omitempty"`
	// Domain (key=value) is the one topology value the figures are for,
	// when the blocked sub-group needs a value of its own.
	Domain       string `json:"domain,omitempty"`
	Short        string `json:"short"`
	Need         string `json:"need"`
	Usable       string `json:"usable"`
	Free         string `json:"free"`
	MostFree     string `json:"mostFree"`
	MostFreeNode string `json:"mostFreeNode,omitempty"`
}

// Victim is a pod a preemption would evict.
type Victim struct {
	Pod               string `json:"pod"`
	Node              string `json:"node"`
	Priority          int32  `json:"priority"`
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// NodeShape is a node shape to add.
type NodeShape struct {
	Like        string            `json:"like,omitempty"`
	Count       int64             `json:"count"`
	Allocatable map[string]string `json:"allocatable"`
	Labels      map[string]string `json:"labels,omitempty"`
	Taints      []string          `json:"taints,omitempty"`
	TopologyKey string            `json:"topologyKey,omitempty"`
	Domain      string            `json:"domain,omitempty"`
}

// NodeRepair is what to do to a node.
type NodeRepair struct {
	Node     string   `json:"node"`
	Uncordon bool     `json:"uncordon,omitempty"`
	Taints   []string `json:"taints,omitempty"`
}

// Placement is what place prints with -o json|yaml (kind Placement).
type Placement struct {
	Gang GangRef `json:"gang"`
	// Verdict is Placed, Unschedulable, or Gated (members carry scheduling
	// gates; the plan is where they go once released).
	Verdict string `json:"verdict"`
	// OnceReleased is, for a Gated placement, the verdict once the gates
	// are removed: Placed or Unschedulable.
	OnceReleased string `json:"onceReleased,omitempty"`
	// Conflict says why no topology domain can hold the gang: its members
	// already run in several.
	Conflict     string   `json:"conflict,omitempty"`
	MinMember    int32    `json:"minMember"`
	MaxPlaceable int32    `json:"maxPlaceable"`
	Running      []Member `json:"running,omitempty"`
	// Assignments are the members the plan places; empty when the gang
	// cannot be placed (nothing would be).
	Assignments []Assignment `json:"assignments"`
	Unplaced    []string     `json:"unplaced,omitempty"`
	// Members says of every member what the placement found, also when
	// the gang cannot be placed (then the members that would fit are
	// "Fits (gang not placed)", and the first "Does not fit" one blocks).
	Members     []MemberPlan `json:"members"`
	TopologyKey string       `json:"topologyKey,omitempty"`
	Domain      string       `json:"domain,omitempty"`
	// Preferred is set when a preferred topology was asked for: whether
	// one of its domains held the gang (else the members spread over the
	// cluster and topologyKey is empty).
	Preferred *PreferredTopology `json:"preferredTopology,omitempty"`
	Domains   []Domain           `json:"domains,omitempty"`
	Message   string             `json:"message"`
	// NotEvaluated lists what the placement could not evaluate (a plugin's
	// reason, or a part of the gang's definition): a placement with any is
	// not a plain yes, and place exits 3.
	NotEvaluated []string `json:"notEvaluated,omitempty"`
	// PlacedLater are members that fit only once members queued behind
	// them were placed, and were tried again after them (the order used).
	PlacedLater []string `json:"placedLater,omitempty"`
	// QueueOrder is set when the gang's scheduler tries each member once
	// per cycle and the gang fits only when the cycle takes the members
	// others need first: the verdict is then Unschedulable.
	QueueOrder *QueueOrder `json:"queueOrder,omitempty"`
	// HeldBy is set when the gang's own scheduler holds it back whatever
	// fits on the nodes: coscheduling's PreFilter, Volcano's enqueue step,
	// its queue share at allocation, its task readiness, kube-scheduler's
	// pod group validation, a quota, a source validity rule.
	HeldBy *Hold `json:"heldBy,omitempty"`
	// VolcanoConfiguration names, for a Volcano gang, the configuration of
	// Volcano's scheduler it was placed with (unset inside an Admission,
	// which says it once, beside its checks).
	VolcanoConfiguration *VolcanoConfiguration `json:"volcanoConfiguration,omitempty"`
	// Kueue is Kueue's decision, for a workload that names a LocalQueue.
	Kueue *Kueue `json:"kueue,omitempty"`
}

// Kueue is Kueue's decision on the workloads that name one of its
// LocalQueues, as kubectl-gang models Kueue v0.17.0's admission
// (docs/design.md#kueue): Kueue decides before kube-scheduler sees a pod.
type Kueue struct {
	// Admitted: Kueue reserves quota for the workload, at once or after
	// the preemptions listed.
	Admitted bool `json:"admitted"`
	// ClusterQueue is the ClusterQueue its LocalQueue points at.
	ClusterQueue string `json:"clusterQueue,omitempty"`
	// Flavors are the flavors assigned, pod set -> resource -> flavor, as
	// the Workload's status.admission.podSetAssignments names them.
	Flavors map[string]map[string]string `json:"flavors,omitempty"`
	// Counts are the pods admitted per pod set (status.admission's
	// count: fewer than asked in a partial admission).
	Counts map[string]int32 `json:"counts,omitempty"`
	// Borrows says what the admission borrows, and from which cohort.
	Borrows string `json:"borrows,omitempty"`
	// Preempts are the Workloads (namespace/name) Kueue evicts first.
	Preempts []string `json:"preempts,omitempty"`
	// Message is Kueue's own words: its QuotaReserved condition's message
	// when it does not admit the workload, or the pending preemption.
	Message string `json:"message,omitempty"`
	// NotEvaluated says what of Kueue's rules could not be evaluated
	// (admission checks, topology-aware flavors, unreadable objects): an
	// answer with any is not a plain yes.
	NotEvaluated []string `json:"notEvaluated,omitempty"`
}

// Hold is a gang scheduler's own refusal, with what it compared.
type Hold struct {
	// Gate names the check: VolcanoEnqueue, VolcanoAllocate, VolcanoJobReady,
	// CoschedulingPreFilter, PodGroupValidation, Validity, ResourceQuota.
	Gate   string `json:"gate"`
	Reason string `json:"reason"`
	// Message is the scheduler's own words, with the figures.
	Message string `json:"message"`
	// Fix says what would let the check pass.
	Fix string `json:"fix,omitempty"`
	// Shortfall is how much of each resource was missing.
	Shortfall map[string]string `json:"shortfall,omitempty"`
	// Figures are the numbers compared, by name (a Volcano queue's
	// deserved share, allocated, capability, the groups holding it, the
	// configuration used).
	Figures map[string]string `json:"figures,omitempty"`
}

// QueueOrder says which members fit only once others are placed, and how
// many members run or fit when the cycle takes those first.
type QueueOrder struct {
	NeedOthers []string `json:"needOthers"`
	Worst      int32    `json:"worst"`
}

// PreferredTopology says whether the preferred topology held the gang.
type PreferredTopology struct {
	TopologyKey string `json:"topologyKey"`
	Met         bool   `json:"met"`
}

// MemberAlone is how one member does by itself, before its gang.
type MemberAlone struct {
	Pod     string `json:"pod"`
	Fits    bool   `json:"fits"`
	Bound   bool   `json:"bound,omitempty"`
	Node    string `json:"node,omitempty"`
	Score   int64  `json:"score,omitempty"`
	Message string `json:"message,omitempty"`
}

// MemberPlan is one member and what the placement found for it: Running,
// Placed, Fits (gang not placed), Does not fit, or Terminating.
type MemberPlan struct {
	Pod    string `json:"pod"`
	Node   string `json:"node,omitempty"`
	Score  int64  `json:"score,omitempty"`
	Status string `json:"status"`
}

// GangRef names a gang and its source.
type GangRef struct {
	Source    string `json:"source"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Read names the objects a what-if (-f) gang was expanded from:
	// "Kind name (group/version)".
	Read []string `json:"read,omitempty"`
}

// Member is a member already on a node.
type Member struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
}

// Assignment is a pending member and its node.
type Assignment struct {
	Pod   string `json:"pod"`
	Node  string `json:"node"`
	Score int64  `json:"score"`
	// Claims are the member's ResourceClaims with the devices the plan
	// allocates them, as kube-scheduler would write them into each
	// claim's status.allocation.
	Claims []ClaimAllocation `json:"claims,omitempty"`
}

// DeviceFit is one device request on one node: how many devices it wants
// (0: all that match), how many the node offers that match, how many of
// those are free.
type DeviceFit struct {
	Claim    string `json:"claim"`
	Request  string `json:"request"`
	Class    string `json:"deviceClass"`
	Wanted   int64  `json:"wanted"`
	Matching int64  `json:"matching"`
	Free     int64  `json:"free"`
}

// ClaimAllocation is one ResourceClaim and its allocation.
type ClaimAllocation struct {
	// Name is the claim's name; a claim its template has not produced
	// yet gets the stand-in name <pod>-<pod claim>.
	Name       string                       `json:"name"`
	Allocation *resourcev1.AllocationResult `json:"allocation,omitempty"`
}

// Domain is one topology domain tried.
type Domain struct {
	Value string `json:"value"`
	Nodes int64  `json:"nodes"`
	// Running is how many members already run in the domain: only they
	// count toward the minimum there.
	Running      int64  `json:"running,omitempty"`
	Placed       int64  `json:"placed"`
	Complete     bool   `json:"complete"`
	Skipped      string `json:"skipped,omitempty"`
	FreeFraction string `json:"freeFraction,omitempty"`
	ScoreSum     int64  `json:"scoreSum,omitempty"`
}

// Admission is what admit prints with -o json|yaml (kind Admission).
type Admission struct {
	Gang GangRef `json:"gang"`
	// Verdict is Admitted, Rejected (a check failed) or Unverified (none
	// failed, one could not be evaluated), the field every kind of this
	// version answers with (Placement, Explanation, BindReport), so that
	// one jsonpath reads any verb's answer; Admitted says the same as a
	// bool and stays (the contract adds fields, never renames them).
	Verdict   string        `json:"verdict"`
	Admitted  bool          `json:"admitted"`
	Checks    []Check       `json:"checks"`
	Placement Placement     `json:"placement"`
	Ungate    *UngateReport `json:"ungate,omitempty"`
	// VolcanoConfiguration names, for a Volcano gang, the configuration of
	// Volcano's scheduler it was judged with.
	VolcanoConfiguration *VolcanoConfiguration `json:"volcanoConfiguration,omitempty"`
	// Kueue is Kueue's decision, for a workload that names a LocalQueue.
	Kueue *Kueue `json:"kueue,omitempty"`
}

// Check is one admission check.
type Check struct {
	Name    string `json:"name"`
	Result  string `json:"result"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// SchedulerMessage is the gang scheduler's own words for a source
	// gate's refusal (coscheduling's "resource gap: ..."), where Message
	// words it for people.
	SchedulerMessage string            `json:"schedulerMessage,omitempty"`
	Figures          map[string]string `json:"figures,omitempty"`
}

// BindReport is what bind prints with -o json|yaml (kind BindReport).
type BindReport struct {
	Gang         GangRef        `json:"gang"`
	Verdict      string         `json:"verdict"`
	Reason       string         `json:"reason,omitempty"`
	Message      string         `json:"message"`
	MinMember    int32          `json:"minMember"`
	BoundMembers int32          `json:"boundMembers"`
	Members      []MemberResult `json:"members"`
	LostEvents   int            `json:"lostEvents,omitempty"`
	// Overcommitted lists the target nodes that hold more than they have
	// after the commit (verdict Overcommitted), with the figures.
	Overcommitted []string `json:"overcommitted,omitempty"`
}

// MemberResult is what bind did with one member.
type MemberResult struct {
	Pod     string `json:"pod"`
	Node    string `json:"node,omitempty"`
	Result  string `json:"result"`
	Message string `json:"message,omitempty"`
	// Unverified: its Binding succeeded but the pod could not be read back.
	Unverified bool `json:"unverified,omitempty"`
}

// UngateReport says what admit --ungate did.
type UngateReport struct {
	Gate      string   `json:"gate"`
	Ungated   []string `json:"ungated,omitempty"`
	Untouched []string `json:"untouched,omitempty"` // members without the gate
	Changed   []string `json:"changed,omitempty"`   // members that changed since the snapshot: nothing more was written
	// Bound and NotBoundYet are the released members their scheduler had
	// bound, and had not, when admit stopped waiting (--wait-bound).
	Bound       []string `json:"bound,omitempty"`
	NotBoundYet []string `json:"notBoundYet,omitempty"`
}

// PendingList is what explain prints with -o json|yaml and no subject
// (kind PendingList): the queue simulation, one item per gang with a
// pending member and per pending pod of no gang, in queue order
// (docs/design.md#the-queue).
type PendingList struct {
	Items []PendingItem `json:"items"`
}

// PendingItem is one gang or pod that waits.
type PendingItem struct {
	Namespace string `json:"namespace"`
	// Name is the subject as explain takes it: pod/NAME or podgroup/NAME.
	Name string   `json:"name"`
	Gang *GangRef `json:"gang,omitempty"`
	// MissingPodGroup is the PodGroup a pod names that does not exist.
	MissingPodGroup string `json:"missingPodGroup,omitempty"`
	Pending         int64  `json:"pending"`
	Members         int64  `json:"members"`
	// Position is its place in the queue (1 first), counted over every
	// namespace.
	Position int64 `json:"position"`
	// Scheduler is the pods' schedulerName; Queue the gang's queue.
	Scheduler string `json:"scheduler,omitempty"`
	Queue     string `json:"queue,omitempty"`
	// Priority and Since are its queue key: higher priorities first, then
	// the earlier time it entered the queue (its members' creation or its
	// PodGroup's, as its scheduler takes it).
	Priority int32        `json:"priority"`
	Since    *metav1.Time `json:"since,omitempty"`
	// Verdict is the queue's outcome: Starts, Unverified, Waits, Blocked,
	// NeverFits or Held.
	Verdict string `json:"verdict"`
	// Explain is explain's own verdict on the state the entries ahead left
	// (Schedulable, Unschedulable, Gated, Unverified).
	Explain string `json:"explain,omitempty"`
	Reason  string `json:"reason"`
	// Nodes are the nodes a starting entry's pending pods go to, one per
	// pod, in order.
	Nodes []string `json:"nodes,omitempty"`
	// Behind names the entries ahead that take the room it would use
	// (Waits).
	Behind []string `json:"behind,omitempty"`
	// Raced says a waiting entry is behind only by an order its scheduler
	// may not keep: it may start in the place of an entry ahead of it
	// (docs/design.md#the-queue). A script must not read its Waits as "does
	// not start".
	Raced bool `json:"raced,omitempty"`
	// Kueue is Kueue's decision on a Workload that waits in a ClusterQueue
	// with no pods yet, made on what the entries ahead of it left.
	Kueue *Kueue `json:"kueue,omitempty"`
}

// QueuePlace is where an explained subject stands in the queue.
type QueuePlace struct {
	// Position counts from 1 over every namespace; Of is the queue's length.
	Position int64 `json:"position"`
	Of       int64 `json:"of"`
	// Verdict and Reason are the subject's line of the list.
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	// Raced is the line's: it waits only by an order its scheduler may not
	// keep.
	Raced bool `json:"raced,omitempty"`
	// Ahead names the entries before it that start.
	Ahead []string `json:"ahead,omitempty"`
}
