package schedule

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/defaultpreemption"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Sequence schedules pods one after another on a Scheduler, each reserved
// before the next, as gang placement does. Runs of equal pods (same
// namespace, labels and spec, no volumes) are scheduled incrementally after
// the first full cycle: reserving one on node X changes, for the next,
//
//   - the node-local plugins' verdicts and scores on X only, so only X is
//     filtered and scored again by them;
//   - the verdicts of DomainFilterPlugins (PodTopologySpread,
//     InterPodAffinity) only on nodes sharing a topology domain with X,
//     unless the plugin's global part (a spread minimum) changed; they run
//     once per domain, not once per node;
//   - the scores of IncrementalScorePlugins (spreading, preferred pod
//     affinity) only on X and the nodes sharing one of the plugin's domains
//     with X, unless a node entering or leaving the feasible set changed
//     them all;
//
// and nothing else: every other Score plugin that looks at other nodes'
// pods must report its scores stable (StableScorePlugin). Normalization
// (of changed nodes only, for a RangeNormalizer whose range held) and the
// choice of the top node are redone whenever their inputs changed, so the
// decisions equal full cycles (a randomized test proves it). Anything else
// runs a full cycle.
type Sequence struct {
	s *Scheduler
	// store, when set, lends the sequence classes earlier sequences found
	// and keeps the ones it finds (ClassStore).
	store *ClassStore
	class *classCache
	// keyPod, keySet, key, scoreKey and keyOK cache classKey of the last
	// pod asked about.
	keyPod        *corev1.Pod
	keySet        *selectedKeys
	key, scoreKey string
	keyOK         bool
	// failed is the last full cycle of a pod that did not schedule, for the
	// pods of its class (a gang that does not fit asks for every member in
	// turn).
	failed *failedClass
	// hits counts incremental cycles, for tests and benchmarks.
	hits int
}

// classCache is what a full cycle found for one class of equal pods, kept up
// to date node by node.
type classCache struct {
	key   string
	state *framework.CycleState
	// owner is the sequence the class belongs to: the one that found it or
	// the last that took it from a ClassStore.
	owner *Sequence
	// view, for a class a ClassStore lends, are the NodeInfos its state
	// follows (the owner's nodes as of its last reservation).
	view []*framework.NodeInfo
	// caughtUp is how many nodes a class taken from a ClassStore had to
	// catch up with.
	caughtUp int
	// preNotEvaluated is what PreFilter could not evaluate for the class;
	// notEvaluated adds what every cycle on the working copy reports, for
	// every result.
	preNotEvaluated, notEvaluated []string
	// local are the Filter plugins run per node; domains the
	// DomainFilterPlugins run per domain.
	local   []framework.FilterPlugin
	domains []*domainFilter
	// scorers are the IncrementalScorePlugins among the score plugins.
	scorers []*domainScorer
	// localOK is the verdict of the local plugins (and the confinement),
	// feasible that and every domain verdict together.
	localOK  []bool
	feasible []bool
	// stale says raw[.][i] is out of date (never scored, or the node got a
	// pod since); it is scored again when feasible.
	stale    []bool
	rescored []int
	plugins  []framework.ScorePlugin
	weights  []int64
	raw      [][]int64 // per score plugin, per node (valid where scored)
	// contrib is each plugin's weighted, normalized score per node, and
	// total their sum: what the full cycle would compute.
	contrib [][]int64
	total   []int64
	names   []string
	dirty   []int
	// normalized says contrib of a normalizing plugin matches the current
	// raw scores and feasible set.
	normalized []bool
	// ranged says lo and hi hold the range of a RangeNormalizer's raw
	// scores over the feasible nodes at its last normalization.
	ranged []bool
	lo, hi []int64
	// ranges count the raw scores in lo and hi (rangeOf).
	ranges []*rangeCount
	// podInfo is the first reserved member's, reused for the others.
	podInfo *framework.PodInfo
	list    framework.NodeScoreList
	// touched collects the nodes whose feasibility may have changed in a
	// step.
	touched indexSet
	// changedNodes and allNodes are scratch lists: the nodes whose inputs
	// to normalization changed in a step, and every node.
	changedNodes, allNodes []int
	// best finds the node incremental picks.
	best bestTree
}

// bestTree finds the feasible node of the highest total, the first in the
// nodes' order of equal ones (what a full cycle's selectHost picks), in
// time that grows with the nodes whose total or feasibility changed since
// the last pick, not with all nodes: a tournament over the nodes, each
// inner entry the better of its two halves' winners. A step that changes
// many nodes (a normalization whose range moved: every node's score) reads
// every node instead, as before, and the tournament is built again at the
// next step that changes few (docs/design.md#pipeline).
type bestTree struct {
	size int
	// win[size+i] is i when node i is feasible, else -1; win[k] for
	// k < size is the better of win[2k] and win[2k+1]; win[1] the pick.
	win []int32
	// pending are the nodes changed since the last pick while built;
	// lost says there were too many to keep (more than limit).
	pending []int32
	limit   int
	built   bool
	lost    bool
	// count is how many changes were noted while not built.
	count int
}

// bestTreeLimit is how many changed nodes a step may have for the
// tournament to be kept up to date node by node: a sixteenth of the nodes,
// and at least 16 (a small cluster's steps use the tournament too, which
// the randomized tests against full cycles then check).
func bestTreeLimit(n int) int { return max(n/16, 16) }

// changed notes that node i's total or feasibility changed.
func (t *bestTree) changed(i int) {
	switch {
	case !t.built:
		t.count++
	case t.lost:
	case len(t.pending) >= t.limit:
		t.lost, t.pending = true, t.pending[:0]
	default:
		t.pending = append(t.pending, int32(i))
	}
}

// better is the winner of a and b, a before b in the nodes' order: the
// higher total, a on a tie; -1 stands for no feasible node.
func (c *classCache) better(a, b int32) int32 {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	case c.total[b] > c.total[a]:
		return b
	}
	return a
}

// bestNode returns the feasible node of the highest total, the first of
// equal ones; -1 when none is feasible.
func (c *classCache) bestNode() int {
	t, n := &c.best, len(c.feasible)
	switch {
	case t.built && !t.lost:
		for _, i := range t.pending {
			k := t.size + int(i)
			t.win[k] = -1
			if c.feasible[i] {
				t.win[k] = i
			}
			for k /= 2; k >= 1; k /= 2 {
				t.win[k] = c.better(t.win[2*k], t.win[2*k+1])
			}
		}
		t.pending = t.pending[:0]
		return int(t.win[1])
	case t.lost || t.count > bestTreeLimit(n):
		// Many changed: every node is read, and the tournament waits for
		// a step that changes few.
		t.built, t.lost, t.count, t.pending = false, false, 0, t.pending[:0]
		best := -1
		for i, ok := range c.feasible {
			if ok && (best < 0 || c.total[i] > c.total[best]) {
				best = i
			}
		}
		return best
	}
	t.size = 1
	for t.size < n {
		t.size *= 2
	}
	if len(t.win) != 2*t.size {
		t.win = make([]int32, 2*t.size)
	}
	for i := range t.size {
		t.win[t.size+i] = -1
		if i < n && c.feasible[i] {
			t.win[t.size+i] = int32(i)
		}
	}
	for k := t.size - 1; k >= 1; k-- {
		t.win[k] = c.better(t.win[2*k], t.win[2*k+1])
	}
	t.built, t.count, t.limit = true, 0, bestTreeLimit(n)
	return int(t.win[1])
}

// indexSet collects indexes (of nodes or domains) once each per step: the
// list in insertion order, and a mark per index saying it is in.
type indexSet struct {
	list  []int
	mark  []uint32
	stamp uint32
}

func newIndexSet(n int) indexSet { return indexSet{mark: make([]uint32, n), stamp: 1} }

// add puts i in the set and reports whether it was not in yet.
func (s *indexSet) add(i int) bool {
	if s.mark[i] == s.stamp {
		return false
	}
	s.mark[i] = s.stamp
	s.list = append(s.list, i)
	return true
}

// clear empties the set for the next step.
func (s *indexSet) clear() {
	s.stamp++
	s.list = s.list[:0]
}

// domainScorer follows one IncrementalScorePlugin: the nodes whose raw
// score a reservation changed, by the plugin's domain keys.
type domainScorer struct {
	pl framework.IncrementalScorePlugin
	j  int // index in classCache.plugins
	// byValue[k] lists, per value of keys[k], the nodes with that value.
	keys    []string
	byValue []map[string][]int
	// dirty are the nodes to rescore, all every node.
	dirty indexSet
	all   bool
}

func newDomainScorer(pl framework.IncrementalScorePlugin, j int, state *framework.CycleState, nodes []*framework.NodeInfo) *domainScorer {
	d := &domainScorer{pl: pl, j: j, keys: pl.ScoreDomainKeys(state), dirty: newIndexSet(len(nodes))}
	d.byValue = make([]map[string][]int, len(d.keys))
	for k, key := range d.keys {
		d.byValue[k] = map[string][]int{}
		for i, ni := range nodes {
			if v, ok := ni.Node().Labels[key]; ok {
				d.byValue[k][v] = append(d.byValue[k][v], i)
			}
		}
	}
	return d
}

// added marks the nodes whose score a pod added on node i changed.
func (d *domainScorer) added(i int, ni *framework.NodeInfo) {
	d.dirty.add(i)
	labels := ni.Node().Labels
	for k, key := range d.keys {
		if v, ok := labels[key]; ok {
			for _, n := range d.byValue[k][v] {
				d.dirty.add(n)
			}
		}
	}
}

// domainFilter is one DomainFilterPlugin's verdict per domain: nodes with
// equal values of its keys form a group and share a verdict.
type domainFilter struct {
	pl      framework.DomainFilterPlugin
	keys    []string
	global  []int
	group   []int32 // per node
	members [][]int // per group
	ok      []bool  // per group
	// byValue[k] lists, per value of keys[k], the groups with that value.
	byValue []map[string][]int32
	// seen are the groups evaluated in the current step.
	seen indexSet
}

// NewSequence starts a sequence on the scheduler's working copy.
func (s *Scheduler) NewSequence() *Sequence { return &Sequence{s: s} }

// Schedule runs the cycle for pod; see Sequence. The result of a pod that
// fits no node may share its Nodes with the results of the pods of its
// class scheduled after it: read them before the next Schedule, or copy
// them.
func (q *Sequence) Schedule(ctx context.Context, pod *corev1.Pod) (*Result, error) {
	key, ok := q.classKey(pod)
	if ok && q.failed != nil && q.failed.key == key {
		res, err := q.retry(ctx, pod)
		if err != nil || res != nil {
			return res, err
		}
		q.failed = nil
	}
	classKey := q.classCacheKey()
	q.ownClass()
	if ok && (q.class == nil || q.class.key != classKey) {
		// A class an earlier placement found, brought up to date.
		c, err := q.store.take(ctx, q, classKey, pod)
		if err != nil {
			return nil, err
		}
		if c != nil {
			q.class = c
			res, err := q.incremental(ctx, pod)
			if err != nil || res != nil {
				q.hits++
				if c.caughtUp >= storeAgainAfter {
					// Kept again as it is now, so that the next take has
					// fewer nodes to catch up with.
					q.store.put(q.s, c)
				}
				return res, err
			}
		}
	} else if ok && q.class != nil {
		res, err := q.incremental(ctx, pod)
		if err != nil || res != nil {
			q.hits++
			return res, err
		}
	}
	// A pod does not yield to its own nomination, so equal pods may get
	// different answers while nominations exist.
	remember := ok && len(q.s.fw.nominator.byNode) == 0
	var memo *defaultpreemption.Memo
	if remember {
		memo = defaultpreemption.NewMemo()
	}
	res, filter, err := q.s.scheduleOne(ctx, pod, memo)
	if err != nil {
		return res, err
	}
	q.class, q.failed = nil, nil
	if remember && res.Verdict != VerdictScheduled {
		q.failed = &failedClass{key: key, res: res, filter: filter, nodes: slices.Clone(q.s.nodes), mark: q.s.handle.Mark(), allowed: q.s.allowed, memo: memo,
			nodeLocal: filter != nil && res.Verdict == VerdictUnschedulable && q.s.fw.nodeLocal(filter.state)}
		if filter != nil {
			q.failed.statusVersion = filter.statusVersion
		}
	}
	// A profile's NodeOrder is not followed incrementally: every member
	// gets a full cycle.
	if ok && res.Verdict == VerdictScheduled && q.s.order == nil {
		q.class, err = q.newClass(ctx, classKey, pod)
		if err != nil {
			return nil, err
		}
		if q.class != nil {
			q.class.owner = q
			q.store.keep(q.s, q.class)
		}
	}
	return res, nil
}

// failedClass is the last full cycle of a pod no node fit, kept for the
// pods of its class that come after it: as long as no node changed, they
// get the same answer; when the class's fit on a node depends on that node
// alone (nodeLocal), only the nodes that changed since (a member reserved,
// victims evicted) are filtered again, and preemption's dry run reuses its
// outcome on every other node (memo). A gang that does not fit, or the
// preemption what-if of explain, thus costs one full cycle per class plus
// a node or two per member.
type failedClass struct {
	key    string
	res    *Result
	filter *nodeFilter
	// nodes are the NodeInfos res was computed on; a NodeInfo is replaced,
	// never changed, when its node gets or loses a pod.
	nodes []*framework.NodeInfo
	// mark is when nodes were last brought up to date: the nodes changed
	// since are the handle's (ChangedSince), not found by comparing all.
	mark      framework.NodeMark
	allowed   []bool
	memo      *defaultpreemption.Memo
	nodeLocal bool
	// nodeResults, statuses and counts are the node results, their
	// statuses and their Filter reasons counted, owned by the failed class
	// from its first retry on and kept up to date node by node;
	// notEvaluatedNodes counts the statuses that are not evaluated, and
	// preNotEvaluated is what res says was not evaluated before those
	// (the cycle's and PreFilter's).
	nodeResults       []NodeResult
	statuses          []*framework.Status
	counts            map[string]int
	notEvaluatedNodes int
	preNotEvaluated   []string
	// statusVersion names the statuses last handed PostFilter
	// (nodeDiagnosis): the full cycle's, then each retry's, which are the
	// ones before with the changed nodes'.
	statusVersion uint64
}

// nodeLocal reports whether, in a cycle with this state, a pod's verdict
// on a node depends on that node's pods alone: every Filter plugin that
// counts the pods of other nodes skipped it (no spread constraint of its
// own, no pod affinity of its own, no running pod's anti-affinity selects
// it).
func (fw *frameworkImpl) nodeLocal(state *framework.CycleState) bool {
	for _, pl := range fw.preFilter {
		if pl.PreFilterExtensions() != nil && !state.SkipFilterPlugins[pl.Name()] {
			return false
		}
	}
	return true
}

// NodeLocal reports whether pod's fit on a node depends on that node's pods
// alone on this working copy (nodeLocal: every Filter plugin that counts
// other nodes' pods skipped it at PreFilter: no spread constraint of its
// own or by the profile's defaults, no pod affinity of its own, no running
// pod's anti-affinity that may select it), and PreFilter passed.
func (s *Scheduler) NodeLocal(ctx context.Context, pod *corev1.Pod) bool {
	state := framework.NewCycleState()
	if _, st, _ := s.runPreFilter(ctx, state, pod, &Result{}); !st.IsSuccess() {
		return false
	}
	return s.fw.nodeLocal(state)
}

// retry answers for pod, of the failed class's class, from the failed
// class; nil when a full cycle must run.
func (q *Sequence) retry(ctx context.Context, pod *corev1.Pod) (*Result, error) {
	fc, s := q.failed, q.s
	if len(fc.allowed) != len(s.allowed) || (len(s.allowed) > 0 && &fc.allowed[0] != &s.allowed[0]) {
		return nil, nil
	}
	var changed []int
	if since, ok := s.handle.ChangedSince(fc.mark); ok {
		for _, i := range since {
			if s.nodes[i] != fc.nodes[i] {
				changed = append(changed, i)
			}
		}
	} else {
		for i, ni := range s.nodes {
			if ni != fc.nodes[i] {
				changed = append(changed, i)
			}
		}
	}
	fc.mark = s.handle.Mark()
	if len(changed) == 0 {
		// Nothing changed since an equal pod's cycle: the same verdict,
		// message and diagnosis (the slices are shared), for this pod.
		res := *fc.res
		res.Pod = pod
		return &res, nil
	}
	if !fc.nodeLocal || len(s.fw.nominator.byNode) > 0 {
		return nil, nil
	}
	if fc.nodeResults == nil {
		// The first retry copies the full cycle's node results once, so
		// that result stays as it was; later retries change the copy in
		// place (a bail-out below drops the failed class altogether).
		fc.nodeResults = slices.Clone(fc.res.Nodes)
		fc.statuses = make([]*framework.Status, len(fc.nodeResults))
		for i := range fc.nodeResults {
			fc.statuses[i] = fc.nodeResults[i].Status
		}
		if fc.counts == nil {
			fc.counts = reasonCounts(fc.statuses)
		}
		for _, st := range fc.statuses {
			if st.IsNotEvaluated() {
				fc.notEvaluatedNodes++
			}
		}
		// The full cycle's list ends with what its nodes' statuses say
		// (diagnoseUnschedulable); a retry says that again from its own.
		onNodes := notEvaluatedOnNodes(fc.statuses)
		fc.preNotEvaluated = slices.Clip(fc.res.NotEvaluated[:len(fc.res.NotEvaluated)-len(onNodes)])
	}
	for _, i := range changed {
		// A pod with required anti-affinity now on the node may keep the
		// class off every node of its topology domain.
		if len(s.nodes[i].PodsWithRequiredAntiAffinity) > 0 {
			return nil, nil
		}
		st, v := s.filterNode(ctx, fc.filter, pod, i)
		if st == nil || st.Code() == framework.Error {
			return nil, nil // it fits somewhere now, or a full cycle reports the error
		}
		for _, r := range fc.statuses[i].Reasons() {
			fc.counts[r]--
		}
		for _, r := range st.Reasons() {
			fc.counts[r]++
		}
		if fc.statuses[i].IsNotEvaluated() {
			fc.notEvaluatedNodes--
		}
		if st.IsNotEvaluated() {
			fc.notEvaluatedNodes++
		}
		fc.nodeResults[i] = NodeResult{Name: s.nodes[i].Name(), Status: st, Filters: v}
		fc.statuses[i] = st
		fc.nodes[i] = s.nodes[i]
	}
	res := &Result{Pod: pod, NumAllNodes: fc.res.NumAllNodes, NotEvaluated: fc.preNotEvaluated, Nodes: fc.nodeResults}
	d := nodeDiagnosis{statuses: fc.statuses, counts: fc.counts, version: statusVersions.Add(1), from: fc.statusVersion, changed: changed}
	fc.statusVersion = d.version
	if fc.notEvaluatedNodes > 0 {
		d.notEvaluated = notEvaluatedOnNodes(fc.statuses)
	}
	if err := s.diagnoseUnschedulable(ctx, fc.filter.state, pod, d, res); err != nil {
		res.Verdict = VerdictError
		return res, err
	}
	q.hits++
	fc.res = res
	return res, nil
}

// Evict takes pods off nodeName, as Scheduler.Evict does (a preemption
// what-if). The class of the pods that fit is dropped (its state follows
// reservations only); that of the pods that did not fit is kept, and sees
// the node changed.
func (q *Sequence) Evict(pods []*corev1.Pod, nodeName string) error {
	if err := q.s.Evict(pods, nodeName); err != nil {
		return err
	}
	q.class = nil
	return nil
}

// Reserve reserves pod on nodeName and marks the node for re-evaluation.
func (q *Sequence) Reserve(ctx context.Context, pod *corev1.Pod, nodeName string) error {
	var like *framework.PodInfo
	if q.ownClass() != nil {
		// The class's scores are stable only under equal pods.
		if _, ok := q.classKey(pod); !ok || q.classCacheKey() != q.class.key {
			q.class = nil
		} else {
			like = q.class.podInfo
		}
	}
	if err := q.s.reserve(pod, nodeName, like); err != nil {
		return err
	}
	if q.class != nil {
		i := q.s.byName[nodeName]
		ni := q.s.nodes[i]
		added := ni.Pods[len(ni.Pods)-1]
		if q.class.podInfo == nil {
			q.class.podInfo = added
		}
		if st := q.s.fw.runPreFilterExtensionAddPod(ctx, q.class.state, pod, added, ni); !st.IsSuccess() {
			q.dropClass() // fall back to full cycles
			return nil
		}
		for _, d := range q.class.scorers {
			if st := d.pl.ScoreAddPod(ctx, q.class.state, pod, added, ni); !st.IsSuccess() {
				q.dropClass()
				return nil
			}
			d.added(i, ni)
		}
		q.class.dirty = append(q.class.dirty, i)
		if q.class.view != nil {
			q.class.view[i] = ni
		}
	}
	return nil
}

// ownClass returns the sequence's class, nil when it has none or a later
// sequence took it over from the store (ClassStore.take).
func (q *Sequence) ownClass() *classCache {
	if q.class != nil && q.class.owner != q {
		q.class = nil
	}
	return q.class
}

// dropClass gives up the class, whose state no longer follows the nodes:
// the store does not lend it either.
func (q *Sequence) dropClass() {
	q.store.forget(q.class)
	q.class = nil
}

// Class returns a key that pods the sequence would schedule alike share
// (equal in everything the plugins read; see classKey), and whether pod
// has one: pods with volumes or resource claims have none.
func (q *Sequence) Class(pod *corev1.Pod) (string, bool) { return q.classKey(pod) }

// classKey is classKey, remembered for the last pod (and the label keys it
// was made with): the full key, for everything a cycle decides.
func (q *Sequence) classKey(pod *corev1.Pod) (string, bool) {
	sk := q.s.selectedLabelKeys()
	if pod != q.keyPod || sk != q.keySet {
		q.keyPod, q.keySet = pod, sk
		q.scoreKey, q.key, q.keyOK = sk.classKey(pod)
		if q.keyOK && q.s.dra.UsesDevices(pod) {
			// Extended resources a DeviceClass backs are devices too.
			q.scoreKey, q.key, q.keyOK = "", "", false
		}
	}
	return q.key, q.keyOK
}

// classCacheKey is the key of the last pod classKey was asked about for its
// classCache, which holds Filter and Score only: the part of the key those
// read while no pod is nominated (nominations are taken by priority), the
// full key otherwise.
func (q *Sequence) classCacheKey() string {
	if len(q.s.fw.nominator.byNode) > 0 {
		return q.key
	}
	return q.scoreKey
}

// classKey returns keys that pods equal in everything the plugins read
// share, and whether such pods can be scheduled incrementally at all (no
// volumes or resource claims, whose plugins look at other pods and at
// objects beyond the nodes). Names, annotations, labels no selector can
// read (schedulingLabels) and the per-pod fields no plugin reads
// (schedulingSpec) are left out, so the members of an Indexed Job share a
// class. The keys name the label key set they were made with.
//
// score is what Filter and Score read; full adds what only the queue,
// nominations and preemption read (priority, preemption policy, the
// PodGroup a pod names: DefaultPreemption's victimPriority) and the
// controller when default spreading cannot select by it: only a
// ReplicationController, ReplicaSet or StatefulSet is looked up
// (Workloads.DefaultSelector), so the pods of equal shape of different Jobs
// share a score key (the queue simulation places many such gangs).
func classKey(pod *corev1.Pod, sk *selectedKeys) (score, full string, ok bool) {
	if len(pod.Spec.Volumes) > 0 || len(pod.Spec.ResourceClaims) > 0 {
		return "", "", false
	}
	spec := schedulingSpec(pod.Spec)
	rest := struct {
		Controller        *metav1.OwnerReference
		Priority          *int32
		PriorityClassName string
		PreemptionPolicy  *corev1.PreemptionPolicy
		SchedulingGroup   *corev1.PodSchedulingGroup
	}{metav1.GetControllerOfNoCopy(pod), spec.Priority, spec.PriorityClassName, spec.PreemptionPolicy, spec.SchedulingGroup}
	spec.Priority, spec.PriorityClassName, spec.PreemptionPolicy, spec.SchedulingGroup = nil, "", nil, nil
	controller := rest.Controller
	if controller != nil && !framework.DefaultSelectsByController(controller) {
		controller = nil
	}
	data, err := json.Marshal(struct {
		KeySet     uint64
		Namespace  string
		Labels     map[string]string
		Controller *metav1.OwnerReference
		Spec       corev1.PodSpec
	}{sk.version, pod.Namespace, schedulingLabels(pod, sk), controller, spec})
	if err != nil {
		return "", "", false
	}
	more, err := json.Marshal(rest)
	if err != nil {
		return "", "", false
	}
	return string(data), string(data) + "\x00" + string(more), true
}

// podDependent says whether a plugin counts pods of other nodes in its
// cycle state, which is what PreFilterExtensions are for.
func (fw *frameworkImpl) podDependent(name string) bool {
	for _, pl := range fw.preFilter {
		if pl.Name() == name {
			return pl.PreFilterExtensions() != nil
		}
	}
	return false
}
