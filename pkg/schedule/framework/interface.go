package framework

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Score bounds: every plugin's normalized score is in [MinNodeScore, MaxNodeScore].
const (
	MinNodeScore int64 = 0
	MaxNodeScore int64 = 100
	// MaxTotalScore bounds the weighted sum.
	MaxTotalScore int64 = 1<<63 - 1
)

// NodeScore is one node's score from one plugin.
type NodeScore struct {
	Name  string
	Score int64
}

// NodeScoreList is a plugin's scores, in the order of the feasible nodes.
type NodeScoreList []NodeScore

// PreFilterResult narrows the nodes Filter has to look at; nil means all.
type PreFilterResult struct {
	NodeNames sets.Set[string]
}

// AllNodes reports whether the result keeps every node.
func (r *PreFilterResult) AllNodes() bool { return r == nil || r.NodeNames == nil }

// Merge intersects two results.
func (r *PreFilterResult) Merge(o *PreFilterResult) *PreFilterResult {
	if r.AllNodes() && o.AllNodes() {
		return nil
	}
	if r.AllNodes() {
		return &PreFilterResult{NodeNames: sets.New(o.NodeNames.UnsortedList()...)}
	}
	if o.AllNodes() {
		return &PreFilterResult{NodeNames: sets.New(r.NodeNames.UnsortedList()...)}
	}
	return &PreFilterResult{NodeNames: r.NodeNames.Intersection(o.NodeNames)}
}

// Plugin is what every plugin is.
type Plugin interface {
	Name() string
}

// QueuedPodInfo is a pod waiting to be scheduled, as QueueSort sees it.
type QueuedPodInfo struct {
	*PodInfo
	// Timestamp is when the pod entered the queue; for a one-shot run, its
	// creation time.
	Timestamp time.Time
}

// QueueSortPlugin orders pending pods.
type QueueSortPlugin interface {
	Plugin
	Less(a, b *QueuedPodInfo) bool
}

// PreFilterExtensions keep a plugin's PreFilter state right when pods are
// added to or removed from a node after PreFilter ran: by preemption what-ifs
// and by gang members reserved one after another.
type PreFilterExtensions interface {
	AddPod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podInfoToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	RemovePod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podInfoToRemove *PodInfo, nodeInfo *NodeInfo) *Status
}

// PreFilterPlugin runs once per pod before Filter.
type PreFilterPlugin interface {
	Plugin
	PreFilter(ctx context.Context, state *CycleState, pod *corev1.Pod, nodes []*NodeInfo) (*PreFilterResult, *Status)
	// PreFilterExtensions may be nil.
	PreFilterExtensions() PreFilterExtensions
}

// FilterPlugin decides whether the pod can run on a node.
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeInfo *NodeInfo) *Status
}

// NodeToStatus gives the Filter verdict for each node.
type NodeToStatus interface {
	Get(nodeName string) *Status
}

// PostFilterResult is what a PostFilter plugin proposes, such as a node
// where preemption would make room.
type PostFilterResult struct {
	NominatedNodeName string
	// Victims are the pods a preemption would evict from the nominated
	// node, and NumPDBViolations how many of them a budget protects. The
	// pipeline never evicts: explain reports them.
	Victims          []*corev1.Pod
	NumPDBViolations int
	// EquallyGood are the other candidate nodes preemption ranks as high
	// as the nominated one: kube-scheduler picks among them at random.
	EquallyGood []string
}

// PostFilterPlugin runs when no node is feasible (preemption).
type PostFilterPlugin interface {
	Plugin
	PostFilter(ctx context.Context, state *CycleState, pod *corev1.Pod, filteredNodeStatus NodeToStatus) (*PostFilterResult, *Status)
}

// PreScorePlugin runs once before Score, over the feasible nodes.
type PreScorePlugin interface {
	Plugin
	PreScore(ctx context.Context, state *CycleState, pod *corev1.Pod, nodes []*NodeInfo) *Status
}

// ScoreExtensions normalize a plugin's scores to [MinNodeScore, MaxNodeScore].
type ScoreExtensions interface {
	NormalizeScore(ctx context.Context, state *CycleState, pod *corev1.Pod, scores NodeScoreList) *Status
}

// RangeNormalizer is ScoreExtensions whose NormalizeScore maps each score
// by a function of that score and of the lowest and highest score of the
// list, nothing else. Sequence uses it to normalize again only the scores
// that changed while the range stays the same.
type RangeNormalizer interface {
	ScoreExtensions
	NormalizeOne(score, lowest, highest int64) int64
}

// ScorePlugin ranks feasible nodes.
type ScorePlugin interface {
	Plugin
	Score(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeInfo *NodeInfo) (int64, *Status)
	// ScoreExtensions may be nil.
	ScoreExtensions() ScoreExtensions
}

// ReservePlugin keeps plugin state right once a node is chosen.
type ReservePlugin interface {
	Plugin
	Reserve(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) *Status
	Unreserve(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string)
}

// AssumePlugin keeps what a plugin allocates for a pod in the working copy
// when the pod is reserved on a node: kube-scheduler's Reserve for state that
// lives beyond the node (DynamicResources' device allocations). The
// scheduler calls it from Reserve, before the pod is added to the node.
type AssumePlugin interface {
	Plugin
	Assume(ctx context.Context, pod *corev1.Pod, nodeInfo *NodeInfo) *Status
}

// PreBindChecker is a PreFilter plugin whose PreBind fails, in a way the
// cycle's state shows, for the pod on the node it was scheduled to:
// kube-scheduler then reports an error and does not bind the pod. The
// scheduler asks it after selecting the node; a non-success status is that
// error.
type PreBindChecker interface {
	Plugin
	PreBindCheck(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) *Status
}

// PermitPlugin may hold a pod back (gang checks).
type PermitPlugin interface {
	Plugin
	Permit(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) (*Status, time.Duration)
}

// BindPlugin binds a pod to a node. No plugin in the pure core binds: binding
// is done by pkg/gang/bind, behind a client.
type BindPlugin interface {
	Plugin
	Bind(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) *Status
}

// NodeInfoLister lists the nodes of the snapshot a cycle runs on.
type NodeInfoLister interface {
	// List returns every node.
	List() []*NodeInfo
	// HavePodsWithAffinityList returns the nodes with at least one pod with (anti-)affinity.
	HavePodsWithAffinityList() []*NodeInfo
	// HavePodsWithRequiredAntiAffinityList returns the nodes with at least one pod with required anti-affinity.
	HavePodsWithRequiredAntiAffinityList() []*NodeInfo
	// Get returns one node, or an error if it is not in the snapshot.
	Get(name string) (*NodeInfo, error)
}

// Handle is what plugins may read besides the pod and the node: the
// snapshot, namespace labels, storage objects, and the parallelizer. Unlike
// kube-scheduler's Handle it has no client: the core never talks to a server.
type Handle interface {
	NodeInfos() NodeInfoLister
	// NamespaceLabels returns a namespace's labels, nil if it is not in the snapshot.
	NamespaceLabels(namespace string) labels.Set
	// Storage returns the PVCs, PVs and StorageClasses of the snapshot.
	Storage() StorageLister
	// PodDisruptionBudgets returns the budgets of the snapshot.
	PodDisruptionBudgets() []*policyv1.PodDisruptionBudget
	// NativePodGroupOf returns the scheduling.k8s.io PodGroup a pod names,
	// when the snapshot holds it.
	NativePodGroupOf(pod *corev1.Pod) (NativePodGroup, bool)
	// DRA returns the resource.k8s.io objects and the claims this working
	// copy allocated; nil when the handle has none.
	DRA() *DRA
	Parallelizer() Parallelizer
}

// StorageLister finds the storage objects volume plugins read.
type StorageLister interface {
	PersistentVolumeClaim(namespace, name string) (*corev1.PersistentVolumeClaim, bool)
	PersistentVolume(name string) (*corev1.PersistentVolume, bool)
	StorageClass(name string) (*storagev1.StorageClass, bool)
}

// Parallelizer runs pieces of work on a bounded number of goroutines.
type Parallelizer interface {
	Until(ctx context.Context, pieces int, work func(piece int))
}

// PluginsRunner runs the profile's plugins for one node; the Handle a
// framework gives its plugins implements it (preemption what-ifs need it:
// they remove victims from a node copy and run Filter again).
type PluginsRunner interface {
	RunPreFilterExtensionAddPod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podInfoToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	RunPreFilterExtensionRemovePod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podInfoToRemove *PodInfo, nodeInfo *NodeInfo) *Status
	RunFilterPlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeInfo *NodeInfo) *Status
}

// DomainFilterPlugin is a Filter plugin whose verdict on a node depends on
// the pods of other nodes only through what its cycle state counts per
// topology domain (PodTopologySpread, InterPodAffinity). When gang members
// are placed one after another, this lets the plugin run once per domain
// whose counts changed instead of once per node.
type DomainFilterPlugin interface {
	FilterPlugin
	// FilterDomainKeys returns the node label keys the verdict depends on,
	// given the state PreFilter wrote: nodes with the same value (or none)
	// for every key get the same verdict, and adding a pod to the cycle
	// state (AddPod) on node X changes only the verdict of nodes that share
	// X's value of some key, unless FilterGlobal changes.
	FilterDomainKeys(state *CycleState) []string
	// FilterGlobal appends to dst what every node's verdict depends on, such
	// as the smallest domain count of a spread constraint.
	FilterGlobal(state *CycleState, dst []int) []int
}

// StableScorePlugin is a Score plugin whose scores may depend on the pods of
// other nodes. A plugin that keeps PreFilterExtensions (and so counts pods
// elsewhere) must implement it for its scores to be reused across a run of
// equal pods.
type StableScorePlugin interface {
	ScorePlugin
	// ScoreStable reports whether adding pods equal to pod (same namespace,
	// labels and spec) on any nodes leaves the outcome of PreScore for pod
	// (skipped: it returned Skip) and every raw score unchanged.
	ScoreStable(pod *corev1.Pod, skipped bool) bool
}

// IncrementalScorePlugin is a Score plugin whose scores depend on the pods
// of other nodes through PreScore state it can keep up to date, so that
// equal pods placed one after another need not run PreScore again
// (PodTopologySpread's soft and default constraints).
type IncrementalScorePlugin interface {
	ScorePlugin
	// ScoreAddPod accounts in the PreScore state for podInfo added to
	// nodeInfo, as PreFilterExtensions.AddPod does for PreFilter state.
	ScoreAddPod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podInfo *PodInfo, nodeInfo *NodeInfo) *Status
	// ScoreDomainKeys returns the node label keys through which a pod added
	// on node X changes other nodes' scores: after ScoreAddPod, the scores
	// that changed are X's and those of nodes sharing X's value of a key.
	ScoreDomainKeys(state *CycleState) []string
	// ScoreFeasible moves a node into (true) or out of the feasible set
	// PreScore was given and reports whether every score may have changed.
	ScoreFeasible(state *CycleState, nodeInfo *NodeInfo, feasible bool) bool
}
