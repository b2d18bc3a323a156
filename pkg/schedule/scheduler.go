package schedule

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/defaultpreemption"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/dynamicresources"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// NoNodeAvailableMsg starts every FailedScheduling message.
const NoNodeAvailableMsg = "0/%v nodes are available"

// Options tune a Scheduler.
type Options struct {
	// Profile is the scheduling profile; nil means DefaultProfile.
	Profile *Profile
	// RunAllFilters runs every Filter plugin on every node even after one
	// rejects it, so explain -o wide can show each plugin's verdict. The
	// node's status stays the first rejection, as kube-scheduler reports it.
	RunAllFilters bool
	// Parallelism bounds the workers of Filter and Score; 0 means 16, as in
	// kube-scheduler.
	Parallelism int
	// SkipPostFilter leaves PostFilter (preemption's dry run) out of a
	// cycle that finds no node: its message ends with the FitError, and no
	// node is nominated. For callers that read only the Filter verdicts
	// (the queue simulation, docs/design.md#the-queue).
	SkipPostFilter bool
}

// Scheduler runs scheduling cycles on one snapshot. Reserve changes its
// working copy so later cycles see the reserved pod, which is how a gang
// competes with itself; the snapshot it was built from is never changed.
type Scheduler struct {
	fw       *frameworkImpl
	handle   *framework.SnapshotHandle
	objects  framework.SnapshotObjects
	dra      *framework.DRA
	nodes    []*framework.NodeInfo // by name
	byName   map[string]int
	opts     Options
	profile  *Profile
	numNodes int
	// allowed, when set, confines Filter to these nodes (a topology domain);
	// the others are reported with NotInDomainReason.
	allowed []bool
	// labelKeys are the pod label keys a selector can read, built on first
	// use (selectedLabelKeys); forks share it until a reservation widens it.
	labelKeys *selectedKeys
	// partial is Snapshot.Partial, the not-evaluated reason every cycle
	// reports: no verdict on a partial snapshot is a plain yes.
	partial string
	// order scores the nodes for a profile with a NodeOrder of another
	// scheduler's; nil otherwise.
	order NodeScorer
	// orderTie is the last cycle's tie that order's scheduler would break
	// at random among nodes that differ; orderTies are those of the pods
	// reserved since, which every later cycle reports as not evaluated
	// (noteOrderTie).
	orderTie  *tieNote
	orderTies []tieNote
	// affinityNodeKeys are the node label keys the (anti-)affinity terms
	// of pods on nodes read, found on first use; reserving a pod with such
	// terms drops them (readsNodeLabels). Never changed once built.
	affinityNodeKeys map[string]bool
}

// NotInDomainReason is the status of nodes outside the topology domain a
// gang placement is confined to.
const NotInDomainReason = "node(s) were outside the gang's topology domain"

// NewScheduler builds the node infos of a snapshot and instantiates the profile on them.
func NewScheduler(snap *Snapshot, opts Options) (*Scheduler, error) {
	if opts.Profile == nil {
		p, err := DefaultProfile()
		if err != nil {
			return nil, err
		}
		opts.Profile = p
	}
	if opts.Parallelism <= 0 {
		opts.Parallelism = framework.DefaultParallelism
	}
	nodes := slices.Clone(snap.Nodes)
	slices.SortFunc(nodes, func(a, b *corev1.Node) int { return cmp.Compare(a.Name, b.Name) })
	infos := framework.BuildNodeInfos(nodes, snap.Pods)
	objects := framework.SnapshotObjects{
		Namespaces:             snap.Namespaces,
		PersistentVolumeClaims: snap.PersistentVolumeClaims,
		PersistentVolumes:      snap.PersistentVolumes,
		StorageClasses:         snap.StorageClasses,
		PodDisruptionBudgets:   snap.PodDisruptionBudgets,
		NativePodGroups:        NativePodGroups(snap.PodGroups),
		Workloads: framework.Workloads{
			Services:               snap.Services,
			ReplicationControllers: snap.ReplicationControllers,
			ReplicaSets:            snap.ReplicaSets,
			StatefulSets:           snap.StatefulSets,
			Unreadable:             func(ns string) []string { return snap.UnreadableIn(ns, SelectorKinds...) },
		},
		UnreadableStorage: func(ns string) []string {
			return snap.UnreadableIn(ns, KindPersistentVolumeClaims, "persistentvolumes", "storageclasses.storage.k8s.io")
		},
	}
	byName := make(map[string]int, len(infos))
	for i, n := range infos {
		byName[n.Name()] = i
	}
	dra := framework.NewDRA(framework.TaintDevices(snap.ResourceSlices, snap.DeviceTaintRules), snap.DeviceClasses, snap.ResourceClaims, snap.ResourceClaimTemplates, snap.Unreadable)
	dra.SetTaintRules(snap.DeviceTaintRules)
	return newScheduler(infos, byName, objects, dra, newNominator(snap.Pods, opts.Profile.Name), opts, snap.Partial)
}

func newScheduler(infos []*framework.NodeInfo, byName map[string]int, objects framework.SnapshotObjects, dra *framework.DRA, nom *nominator, opts Options, partial string) (*Scheduler, error) {
	return newSchedulerOn(framework.NewIndexedSnapshotHandle(infos, byName, objects, opts.Parallelism), infos, byName, objects, dra, nom, opts, partial)
}

// newSchedulerOn is newScheduler on a handle made for infos.
func newSchedulerOn(h *framework.SnapshotHandle, infos []*framework.NodeInfo, byName map[string]int, objects framework.SnapshotObjects, dra *framework.DRA, nom *nominator, opts Options, partial string) (*Scheduler, error) {
	h.SetDRA(dra)
	fw, err := newFramework(opts.Profile, h)
	if err != nil {
		return nil, err
	}
	fw.nominator = nom
	s := &Scheduler{fw: fw, handle: h, objects: objects, dra: dra, nodes: infos, byName: byName, opts: opts, profile: opts.Profile, numNodes: len(infos), partial: partial}
	if o := opts.Profile.order; o != nil {
		if s.order, err = o.Build(orderHandle{fw}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Fork returns an independent working copy: reservations in one are not
// seen by the other. Node infos are shared until a Reserve replaces them.
func (s *Scheduler) Fork() (*Scheduler, error) { return s.fork(s.opts) }

// WithAllFilters returns a fork (see Fork) whose cycles run every Filter
// plugin on every node and record each verdict (Options.RunAllFilters).
func (s *Scheduler) WithAllFilters() (*Scheduler, error) {
	opts := s.opts
	opts.RunAllFilters = true
	return s.fork(opts)
}

// WithEveryPreemptionCandidate returns a fork (see Fork) whose preemption
// dry run weighs every node before it picks one: the profile's
// DefaultPreemption minCandidateNodesPercentage becomes 100. kube-scheduler
// stops at a tenth of the nodes (at least 100) for speed, which is no
// semantic: a gang's what-if wants the cheapest victims anywhere
// (docs/design.md#commands).
func (s *Scheduler) WithEveryPreemptionCandidate() (*Scheduler, error) {
	opts := s.opts
	p := *s.profile
	p.Args = maps.Clone(p.Args)
	args := &configv1.DefaultPreemptionArgs{}
	if a, ok := p.Args[defaultpreemption.Name].(*configv1.DefaultPreemptionArgs); ok && a != nil {
		args = a.DeepCopy()
	}
	args.MinCandidateNodesPercentage = ptr.To[int32](100)
	p.Args[defaultpreemption.Name] = args
	opts.Profile = &p
	return s.fork(opts)
}

func (s *Scheduler) fork(opts Options) (*Scheduler, error) {
	// The label key set is built here, once, not in every fork: forks of
	// one working copy then share it, and with it their class keys
	// (ClassStore).
	s.selectedLabelKeys()
	nodes := slices.Clone(s.nodes)
	// The fork's handle shares the indexes of the node names and objects.
	f, err := newSchedulerOn(s.handle.Fork(nodes, opts.Parallelism), nodes, s.byName, s.objects, s.dra.Fork(), s.fw.nominator.clone(), opts, s.partial)
	if err != nil {
		return nil, err
	}
	f.allowed, f.labelKeys = s.allowed, s.labelKeys
	f.orderTie, f.orderTies, f.affinityNodeKeys = s.orderTie, slices.Clip(s.orderTies), s.affinityNodeKeys
	return f, nil
}

// WithNodes returns a working copy with nodes added (a what-if: nodes
// like an existing one), with pods bound to them (their DaemonSet pods)
// and their ResourceSlices: the scheduler NewScheduler would build for the
// snapshot with them, without building the existing nodes again, and with
// this copy's reservations. It is not confined to a domain.
func (s *Scheduler) WithNodes(nodes []*corev1.Node, pods []*corev1.Pod, resourceSlices []*resourcev1.ResourceSlice) (*Scheduler, error) {
	infos, err := framework.AddNodeInfos(s.nodes, nodes, pods)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]int, len(infos))
	for i, n := range infos {
		byName[n.Name()] = i
	}
	// The selectable label keys are found again (lazily): the new pods
	// may bring selectors.
	f, err := newScheduler(infos, byName, s.objects, s.dra.WithSlices(resourceSlices), s.fw.nominator.clone(), s.opts, s.partial)
	if err != nil {
		return nil, err
	}
	f.orderTie, f.orderTies = s.orderTie, slices.Clip(s.orderTies)
	return f, nil
}

// WithNodesReplaced returns a working copy in which each of nodes (by name,
// already in the snapshot) replaces the node object of that name, its pods
// kept: a what-if on the node itself (uncordoned, a condition cleared).
func (s *Scheduler) WithNodesReplaced(nodes []*corev1.Node) (*Scheduler, error) {
	f, err := s.Fork()
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		i, ok := f.byName[n.Name]
		if !ok {
			return nil, fmt.Errorf("node %q is not in the snapshot", n.Name)
		}
		ni := f.nodes[i].Clone()
		ni.SetNode(n)
		f.handle.ReplaceNode(i, ni)
	}
	return f, nil
}

// Confine limits Filter to the named nodes (one topology domain) for every
// later cycle; nil lifts the limit. PreFilter still sees the whole cluster,
// as kube-scheduler's plugins see it when it tries a placement.
func (s *Scheduler) Confine(nodeNames []string) {
	if nodeNames == nil {
		s.allowed = nil
		return
	}
	s.allowed = make([]bool, len(s.nodes))
	for _, n := range nodeNames {
		if i, ok := s.byName[n]; ok {
			s.allowed[i] = true
		}
	}
}

// Profile returns the profile the scheduler runs.
func (s *Scheduler) Profile() *Profile { return s.profile }

// NodeInfos returns the working copy's nodes, in name order.
func (s *Scheduler) NodeInfos() []*framework.NodeInfo { return s.nodes }

// Less orders two pending pods as the profile's QueueSort plugin does.
func (s *Scheduler) Less(a, b *framework.QueuedPodInfo) bool { return s.fw.queueSort.Less(a, b) }

// Reserve assumes pod runs on nodeName in the working copy: later cycles
// count its resources, ports and (anti-)affinity. The NodeInfo is replaced
// by a changed clone, so forks and anything holding the old one are
// unaffected. It costs O(1) besides the clone.
func (s *Scheduler) Reserve(pod *corev1.Pod, nodeName string) error {
	return s.reserve(pod, nodeName, nil)
}

// ReserveBound is Reserve for a pod bound to its node already
// (spec.nodeName set) that the working copy may keep as it is: the caller
// must not change it afterwards. It spares Reserve's copy of the pod.
func (s *Scheduler) ReserveBound(pod *corev1.Pod) error {
	return s.reserveOwned(pod, pod, pod.Spec.NodeName, nil)
}

// reserve is Reserve with an optional PodInfo of an equivalent pod to reuse.
func (s *Scheduler) reserve(pod *corev1.Pod, nodeName string, like *framework.PodInfo) error {
	return s.reserveOwned(pod, nil, nodeName, like)
}

// reserveOwned is reserve; assumed, when set, is pod bound to nodeName
// already, which the working copy keeps (else it keeps a copy of pod).
func (s *Scheduler) reserveOwned(pod, assumed *corev1.Pod, nodeName string, like *framework.PodInfo) error {
	if af := pod.Spec.Affinity; af != nil && (af.PodAffinity != nil || af.PodAntiAffinity != nil) {
		s.affinityNodeKeys = nil
	}
	if t := s.orderTie; t != nil && t.pod.Namespace == pod.Namespace && t.pod.Name == pod.Name && t.node == nodeName {
		// The coin toss now shapes the working copy.
		s.orderTies = append(slices.Clip(s.orderTies), *t)
		s.orderTie = nil
	}
	i, ok := s.byName[nodeName]
	if !ok {
		return fmt.Errorf("node %q is not in the snapshot", nodeName)
	}
	for _, pl := range s.fw.assume {
		if st := pl.Assume(context.Background(), pod, s.nodes[i]); !st.IsSuccess() {
			return fmt.Errorf("reserving pod %s/%s on node %q: %s: %s", pod.Namespace, pod.Name, nodeName, pl.Name(), st.Message())
		}
	}
	if assumed == nil {
		// A shallow copy: pods are never changed once read (a what-if
		// changes a deep copy), so the copy shares the pod's maps and
		// slices and differs in its node only.
		c := *pod
		c.Spec.NodeName = nodeName
		assumed = &c
	}
	ni := s.nodes[i].Clone()
	var pi *framework.PodInfo
	if like != nil {
		pi = like.ForEquivalentPod(assumed)
	} else {
		pi = framework.NewPodInfo(assumed)
	}
	ni.AddPodInfo(pi)
	s.noteReserved(pi)
	// s.nodes is this scheduler's own slice (Fork copies it); the NodeInfo
	// may be shared with a fork, hence the clone above.
	s.handle.ReplaceNode(i, ni)
	// An assumed pod is no longer nominated.
	s.fw.nominator.forget(pod)
	return nil
}

// DRA returns the working copy's devices and claims (nil-safe methods).
func (s *Scheduler) DRA() *framework.DRA { return s.dra }

// Claims returns the ResourceClaims this working copy allocated or reserved
// for pod when it was reserved, with their allocations, by name.
func (s *Scheduler) Claims(pod *corev1.Pod) []*resourcev1.ResourceClaim {
	return s.dra.AssumedFor(pod)
}

// DeviceFit says, for each device request of pod's unallocated claims, how
// many devices on nodeName match and are free in this working copy (the
// profile's DynamicResources plugin counts them; nil without it).
func (s *Scheduler) DeviceFit(ctx context.Context, pod *corev1.Pod, nodeName string) []dynamicresources.RequestFit {
	i, ok := s.byName[nodeName]
	if !ok {
		return nil
	}
	for _, pl := range s.fw.preFilter {
		if d, ok := pl.(*dynamicresources.DynamicResources); ok {
			return d.DeviceFit(ctx, pod, s.nodes[i].Node())
		}
	}
	return nil
}

// Evict takes pods off nodeName in the working copy, the inverse of Reserve:
// a preemption what-if removes its victims this way. Nothing is evicted
// from the cluster.
func (s *Scheduler) Evict(pods []*corev1.Pod, nodeName string) error {
	i, ok := s.byName[nodeName]
	if !ok {
		return fmt.Errorf("node %q is not in the snapshot", nodeName)
	}
	ni := s.nodes[i].Clone()
	for _, p := range pods {
		if err := ni.RemovePod(p); err != nil {
			return err
		}
	}
	s.handle.ReplaceNode(i, ni)
	return nil
}

// Schedule runs one scheduling cycle for pod, as kube-scheduler's
// scheduleOne does with percentageOfNodesToScore 100, and records every
// verdict and score. Its steps keep upstream's names (findNodesThatFitPod,
// prioritizeNodes, selectHost) so that a new kube-scheduler release can be
// compared step by step. It returns an error only for a plugin error.
func (s *Scheduler) Schedule(ctx context.Context, pod *corev1.Pod) (*Result, error) {
	res, _, err := s.scheduleOne(ctx, pod, nil)
	return res, err
}

// cycleNotEvaluated is what every cycle of pod on this working copy
// reports as not evaluated before its plugins run.
func (s *Scheduler) cycleNotEvaluated(pod *corev1.Pod) []string {
	var out []string
	if s.partial != "" {
		out = append(out, s.partial)
	}
	out = append(out, s.orderTiesFor(pod)...)
	if m := s.profile.NotEvaluated(); m != "" {
		out = append(out, m)
	}
	if why := s.storageUnknown(pod); why != "" {
		out = append(out, why)
	}
	return out
}

// scheduleOne is Schedule; it also returns what filtering one node again
// needs (nil when the pod is gated or an error stopped the cycle), and
// puts memo, when given, in the cycle state for preemption's dry run.
func (s *Scheduler) scheduleOne(ctx context.Context, pod *corev1.Pod, memo *defaultpreemption.Memo) (*Result, *nodeFilter, error) {
	res := &Result{Pod: pod, NumAllNodes: s.numNodes, NotEvaluated: s.cycleNotEvaluated(pod)}
	for _, pl := range s.fw.preEnqueue {
		if st := pl.PreEnqueue(ctx, pod); !st.IsSuccess() {
			res.Verdict = VerdictGated
			res.Message = st.Message()
			return res, nil, nil
		}
	}

	state := framework.NewCycleState()
	if memo != nil {
		state.Write(defaultpreemption.MemoStateKey, memo)
	}
	feasible, statuses, filter, err := s.findNodesThatFitPod(ctx, state, pod, res)
	if err != nil {
		if res.Verdict == VerdictError {
			return res, nil, err
		}
		return nil, nil, err
	}
	if len(feasible) == 0 {
		d := nodeDiagnosis{statuses: statuses, notEvaluated: notEvaluatedOnNodes(statuses), version: statusVersions.Add(1)}
		if filter != nil {
			filter.statusVersion = d.version
		}
		if err := s.diagnoseUnschedulable(ctx, state, pod, d, res); err != nil {
			res.Verdict = VerdictError
			return res, nil, err
		}
		return res, filter, nil
	}
	if s.order != nil {
		err = s.orderPrioritize(ctx, state, pod, feasible, res)
	} else {
		err = s.prioritizeNodes(ctx, state, pod, feasible, res)
	}
	if err != nil {
		res.Verdict = VerdictError
		return res, nil, err
	}
	s.selectHost(res)
	if s.order != nil {
		s.noteOrderTie(pod, res)
	}
	for _, pl := range s.fw.preBindCheck {
		if st := pl.PreBindCheck(ctx, state, pod, res.SelectedNode); !st.IsSuccess() {
			// kube-scheduler fails the binding cycle and retries later;
			// the pod is not bound. A decision, not a failure of ours.
			res.Verdict = VerdictError
			res.Message = fmt.Sprintf("running PreBind plugin %q: %s", pl.Name(), st.Message())
			break
		}
	}
	return res, filter, nil
}

// statusVersions numbers the statuses cycles hand PostFilter.
var statusVersions atomic.Uint64

// selectHost picks the highest final score, as kube-scheduler's selectHost
// does, but breaks ties by node name where kube-scheduler picks at random,
// so every run gives the same plan.
func (s *Scheduler) selectHost(res *Result) {
	res.Verdict = VerdictScheduled
	res.SelectedNode = res.TopNodes()[0]
	res.SelectedScore = res.Nodes[s.byName[res.SelectedNode]].Score
}

// runPreFilter runs the PreFilter plugins as kube-scheduler does: Skip
// disables the plugin's Filter for this pod, UnschedulableAndUnresolvable
// stops at once, Unschedulable lets the others run, and node sets returned by
// plugins are intersected.
func (s *Scheduler) runPreFilter(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, res *Result) (*framework.PreFilterResult, *framework.Status, sets.Set[string]) {
	var result *framework.PreFilterResult
	var returnStatus *framework.Status
	withNodes := sets.New[string]()
	for _, pl := range s.fw.preFilter {
		r, st := pl.PreFilter(ctx, state, pod, s.nodes)
		if st.IsSkip() {
			state.SkipFilterPlugins[pl.Name()] = true
			if st.IsNotEvaluated() {
				res.NotEvaluated = append(res.NotEvaluated, pl.Name()+": "+st.Message())
			}
			continue
		}
		if !st.IsSuccess() {
			st.WithPlugin(pl.Name())
			switch st.Code() {
			case framework.UnschedulableAndUnresolvable:
				return nil, st, nil
			case framework.Unschedulable:
				returnStatus = st
				continue
			}
			return nil, framework.AsStatus(fmt.Errorf("running PreFilter plugin %q: %w", pl.Name(), st.AsError())).WithPlugin(pl.Name()), nil
		}
		if !r.AllNodes() {
			withNodes.Insert(pl.Name())
		}
		result = result.Merge(r)
		if !result.AllNodes() && len(result.NodeNames) == 0 {
			msg := fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", sets.List(withNodes))
			if len(withNodes) == 1 {
				msg = fmt.Sprintf("node(s) didn't satisfy plugin %v", sets.List(withNodes)[0])
			}
			return result, framework.NewStatus(framework.UnschedulableAndUnresolvable, msg), withNodes
		}
	}
	return result, returnStatus, withNodes
}

// runPostFilter runs PostFilter plugins (preemption) until one succeeds, as
// kube-scheduler does, and returns the message it adds to FailedScheduling.
func (s *Scheduler) runPostFilter(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, byNode nodeStatuses) (string, *framework.PostFilterResult, error) {
	if len(s.fw.postFilter) == 0 {
		return "", nil, nil
	}
	// As RunPostFilterPlugins: success or UnschedulableAndUnresolvable
	// ends the run with that plugin's status, an error too (kube-scheduler
	// writes its message where the preemption message goes, and so do we);
	// otherwise the reasons of every plugin are joined as a Status joins
	// them.
	var reasons []string
	for _, pl := range s.fw.postFilter {
		r, st := pl.PostFilter(ctx, state, pod, byNode)
		switch {
		case st.IsSuccess():
			return st.Message(), r, nil
		case st.Code() == framework.UnschedulableAndUnresolvable, st.Code() == framework.Error:
			return st.Message(), r, nil
		}
		reasons = append(reasons, st.Reasons()...)
	}
	return strings.Join(reasons, ", "), nil, nil
}

// prioritizeNodes runs PreScore, Score and NormalizeScore on the feasible
// nodes, as kube-scheduler's prioritizeNodes does, and records each plugin's weighted score and the total per node.
func (s *Scheduler) prioritizeNodes(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, feasible []*framework.NodeInfo, res *Result) error {
	skip, err := s.fw.runPreScore(ctx, state, pod, feasible)
	if err != nil {
		return err
	}
	var plugins []framework.ScorePlugin
	for _, pl := range s.fw.score {
		if !skip[pl.Name()] {
			plugins = append(plugins, pl)
		}
	}
	scores := make([]framework.NodeScoreList, len(plugins))
	for j := range plugins {
		scores[j] = make(framework.NodeScoreList, len(feasible))
	}
	var mu sync.Mutex
	var scoreErr error
	s.handle.Parallelizer().Until(ctx, len(feasible), func(i int) {
		ni := feasible[i]
		for j, pl := range plugins {
			v, st := pl.Score(ctx, state, pod, ni)
			if !st.IsSuccess() {
				mu.Lock()
				scoreErr = fmt.Errorf("running Score plugin %q: %w", pl.Name(), st.AsError())
				mu.Unlock()
				return
			}
			scores[j][i] = framework.NodeScore{Name: ni.Name(), Score: v}
		}
	})
	if scoreErr != nil {
		return scoreErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for j, pl := range plugins {
		ext := pl.ScoreExtensions()
		if ext == nil {
			continue
		}
		if st := ext.NormalizeScore(ctx, state, pod, scores[j]); !st.IsSuccess() {
			return fmt.Errorf("running NormalizeScore of %q: %w", pl.Name(), st.AsError())
		}
	}
	// One backing array holds every node's plugin scores.
	backing := make([]PluginScore, len(feasible)*len(plugins))
	for i, ni := range feasible {
		n := &res.Nodes[s.byName[ni.Name()]]
		n.Scores = backing[i*len(plugins) : (i+1)*len(plugins) : (i+1)*len(plugins)]
		for j, pl := range plugins {
			v := scores[j][i].Score
			if v < framework.MinNodeScore || v > framework.MaxNodeScore {
				return fmt.Errorf("plugin %q returns an invalid score %v, it should be in the range of [%v, %v] after normalizing",
					pl.Name(), v, framework.MinNodeScore, framework.MaxNodeScore)
			}
			weighted := v * s.fw.weights[pl.Name()]
			n.Scores[j] = PluginScore{Plugin: pl.Name(), Score: weighted}
			n.Score += weighted
		}
	}
	return nil
}
