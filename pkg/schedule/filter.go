package schedule

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// FilterOn runs PreFilter and then Filter on one node only, nominated pods
// included: the node's status in a cycle confined to it (nil when the pod
// fits there). It is Schedule confined to the node, without a result for
// every other node: what bind needs to re-check a plan member by member.
func (s *Scheduler) FilterOn(ctx context.Context, pod *corev1.Pod, nodeName string) (*framework.Status, error) {
	i, ok := s.byName[nodeName]
	if !ok {
		return nil, fmt.Errorf("node %q is not in the snapshot", nodeName)
	}
	for _, pl := range s.fw.preEnqueue {
		if st := pl.PreEnqueue(ctx, pod); !st.IsSuccess() {
			return st, nil
		}
	}
	state := framework.NewCycleState()
	preResult, preStatus, pluginsWithNodes := s.runPreFilter(ctx, state, pod, &Result{})
	switch {
	case preStatus.Code() == framework.Error:
		return nil, preStatus.AsError()
	case preStatus.IsRejected():
		return preStatus, nil
	}
	f := newNodeFilter(state, preResult, pluginsWithNodes)
	if f.absent != nil && !preResult.NodeNames.Has(nodeName) {
		return f.absent, nil
	}
	st, _ := s.fw.runFilterWithNominated(ctx, f.state, pod, s.nodes[i], false)
	if st.Code() == framework.Error {
		return nil, st.AsError()
	}
	return st, nil
}

// nodeFilter is what filtering one node needs once PreFilter has run: the
// cycle state, PreFilter's node set, and the statuses of nodes it leaves
// out and of nodes outside the confinement. A nil nodeFilter stands for a
// PreFilter that rejected the pod on every node.
type nodeFilter struct {
	state     *framework.CycleState
	preResult *framework.PreFilterResult
	absent    *framework.Status
	outside   *framework.Status
	// statusVersion names the statuses the cycle handed PostFilter
	// (nodeDiagnosis).
	statusVersion uint64
}

// newNodeFilter is what filtering a node needs after PreFilter returned
// preResult, restricted to nodes by pluginsWithNodes.
func newNodeFilter(state *framework.CycleState, preResult *framework.PreFilterResult, pluginsWithNodes sets.Set[string]) *nodeFilter {
	f := &nodeFilter{state: state, preResult: preResult,
		outside: framework.NewStatus(framework.UnschedulableAndUnresolvable, NotInDomainReason)}
	if !preResult.AllNodes() {
		f.absent = framework.NewStatus(framework.UnschedulableAndUnresolvable,
			fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(pluginsWithNodes)))
	}
	return f
}

// filterNode is node i's status in the cycle (nil when it fits), and with
// RunAllFilters every Filter plugin's verdict.
func (s *Scheduler) filterNode(ctx context.Context, f *nodeFilter, pod *corev1.Pod, i int) (*framework.Status, []PluginVerdict) {
	ni := s.nodes[i]
	if s.allowed != nil && !s.allowed[i] {
		return f.outside, nil
	}
	if f.absent != nil && !f.preResult.NodeNames.Has(ni.Name()) {
		return f.absent, nil
	}
	return s.fw.runFilterWithNominated(ctx, f.state, pod, ni, s.opts.RunAllFilters)
}

// findNodesThatFitPod runs PreFilter, then Filter on every node in
// parallel (nominated pods included, as RunFilterPluginsWithNominatedPods),
// as kube-scheduler's findNodesThatFitPod does with
// percentageOfNodesToScore=100. It fills res.Nodes and returns the feasible
// nodes, every node's status (nil when feasible), and what filtering a node
// again needs (nil when PreFilter rejected the pod). A plugin error sets
// res.Verdict to VerdictError; a cancelled ctx returns its error alone.
func (s *Scheduler) findNodesThatFitPod(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, res *Result) ([]*framework.NodeInfo, []*framework.Status, *nodeFilter, error) {
	preResult, preStatus, pluginsWithNodes := s.runPreFilter(ctx, state, pod, res)
	if preStatus.Code() == framework.Error {
		res.Verdict = VerdictError
		return nil, nil, nil, preStatus.AsError()
	}

	statuses := make([]*framework.Status, len(s.nodes))
	var verdicts [][]PluginVerdict // with RunAllFilters only: none otherwise
	if s.opts.RunAllFilters {
		verdicts = make([][]PluginVerdict, len(s.nodes))
	}
	var filter *nodeFilter
	switch {
	case preStatus.IsRejected():
		res.PreFilterStatus = preStatus
		for i := range statuses {
			statuses[i] = preStatus
		}
	default:
		filter = newNodeFilter(state, preResult, pluginsWithNodes)
		var mu sync.Mutex
		var filterErr error
		s.handle.Parallelizer().Until(ctx, len(s.nodes), func(i int) {
			st, v := s.filterNode(ctx, filter, pod, i)
			statuses[i] = st
			if verdicts != nil {
				verdicts[i] = v
			}
			if st.Code() == framework.Error {
				mu.Lock()
				filterErr = st.AsError()
				mu.Unlock()
			}
		})
		if filterErr != nil {
			res.Verdict = VerdictError
			return nil, nil, nil, filterErr
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
	}

	var feasible []*framework.NodeInfo
	res.Nodes = make([]NodeResult, len(s.nodes))
	for i, ni := range s.nodes {
		res.Nodes[i] = NodeResult{Name: ni.Name(), Feasible: statuses[i] == nil, Status: statuses[i]}
		if verdicts != nil {
			res.Nodes[i].Filters = verdicts[i]
		}
		if statuses[i] == nil {
			feasible = append(feasible, ni)
		}
	}
	return feasible, statuses, filter, nil
}

// nodeDiagnosis is what diagnoseUnschedulable reads of a cycle's nodes.
type nodeDiagnosis struct {
	statuses []*framework.Status
	// counts, when given, are the Filter reasons of statuses counted
	// already.
	counts map[string]int
	// notEvaluated is notEvaluatedOnNodes(statuses).
	notEvaluated []string
	// version names these statuses for PostFilter; from and changed, when
	// set, say they are the statuses of version from with the nodes
	// changed (NodeInfo and status) since (defaultpreemption.TrackedNodeToStatus).
	version, from uint64
	changed       []int
}

// diagnoseUnschedulable words the FitError kube-scheduler records when no
// node fits ("0/N nodes are available: ...") and runs PostFilter
// (preemption's dry run), whose message follows.
func (s *Scheduler) diagnoseUnschedulable(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, d nodeDiagnosis, res *Result) error {
	res.Verdict = VerdictUnschedulable
	res.NotEvaluated = append(slices.Clip(res.NotEvaluated), d.notEvaluated...)
	counts := d.counts
	if counts == nil && res.PreFilterStatus == nil {
		counts = reasonCounts(d.statuses)
	}
	diagnosis := fitMessageFrom(s.numNodes, res.PreFilterStatus, counts)
	if s.opts.SkipPostFilter {
		res.Message = diagnosis
		return nil
	}
	postMsg, post, err := s.runPostFilter(ctx, state, pod, nodeStatuses{byName: s.byName, nodes: res.Nodes, version: d.version, from: d.from, changed: d.changed})
	if err != nil {
		return err
	}
	res.PostFilterMessage = postMsg
	if post != nil {
		res.NominatedNode, res.PreemptionVictims, res.PreemptionPDBViolations = post.NominatedNodeName, post.Victims, post.NumPDBViolations
		res.PreemptionEquallyGood = post.EquallyGood
	}
	res.Message = diagnosis
	if postMsg != "" {
		res.Message += " " + postMsg
	}
	return nil
}

// storageUnknown says why the pod's volumes cannot be evaluated: it has a
// PersistentVolumeClaim or a generic ephemeral volume, and a live read could
// not list the claims of its namespace, PersistentVolumes or StorageClasses
// (docs/design.md#snapshot). Every volume plugin reads them, and the first
// to miss a claim would say "not found", a wrong no; empty when known.
func (s *Scheduler) storageUnknown(pod *corev1.Pod) string {
	claims := false
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].PersistentVolumeClaim != nil || pod.Spec.Volumes[i].Ephemeral != nil {
			claims = true
			break
		}
	}
	if !claims {
		return ""
	}
	kinds := s.handle.UnreadableStorage(pod.Namespace)
	if len(kinds) == 0 {
		return ""
	}
	return fmt.Sprintf("volumes: the pod's PersistentVolumeClaims and their volumes are not evaluated: the snapshot could not list %s (namespace %s)",
		strings.Join(kinds, ", "), pod.Namespace)
}

// notEvaluatedOnNodes says, once each, what nodes were left out for
// (framework.NotEvaluatedOnNode), with how many: when no node fits, those
// might, so the "no" is not a confident one. When one fits, the pod is
// placed on a node whose verdict is known, and they change nothing.
func notEvaluatedOnNodes(statuses []*framework.Status) []string {
	var whats []string
	count := map[string]int{}
	for _, st := range statuses {
		if !st.IsNotEvaluated() {
			continue
		}
		what := st.Plugin() + ": " + st.Message()
		if count[what] == 0 {
			whats = append(whats, what)
		}
		count[what]++
	}
	for i, what := range whats {
		whats[i] = fmt.Sprintf("%s (%d node(s))", what, count[what])
	}
	return whats
}

// fitMessage builds kube-scheduler's FailedScheduling message before the
// preemption part: the PreFilter message when PreFilter rejected the pod,
// else a histogram of every node's reasons, each "count reason", sorted as
// strings.
func fitMessage(numAllNodes int, preFilter *framework.Status, statuses []*framework.Status) string {
	return fitMessageFrom(numAllNodes, preFilter, reasonCounts(statuses))
}

// reasonCounts counts how many nodes give each Filter reason.
func reasonCounts(statuses []*framework.Status) map[string]int {
	counts := map[string]int{}
	for _, st := range statuses {
		for _, r := range st.Reasons() {
			counts[r]++
		}
	}
	return counts
}

// fitMessageFrom is fitMessage from reasons counted already.
func fitMessageFrom(numAllNodes int, preFilter *framework.Status, counts map[string]int) string {
	msg := fmt.Sprintf(NoNodeAvailableMsg+":", numAllNodes)
	if preFilter != nil {
		return msg + fmt.Sprintf(" %v.", preFilter.Message())
	}
	var parts []string
	for reason, n := range counts {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%v %v", n, reason))
		}
	}
	sort.Strings(parts)
	if len(parts) > 0 {
		msg += fmt.Sprintf(" %v.", strings.Join(parts, ", "))
	}
	return msg
}

// nodeStatuses is the NodeToStatus PostFilter plugins read: the cycle's
// node results, found by the scheduler's index of node names.
type nodeStatuses struct {
	byName map[string]int
	nodes  []NodeResult
	// version, from and changed: nodeDiagnosis's.
	version, from uint64
	changed       []int
}

// Versions says which statuses these are, and how they differ from the
// ones they were made from (defaultpreemption.TrackedNodeToStatus).
func (m nodeStatuses) Versions() (version, from uint64, changed []int) {
	return m.version, m.from, m.changed
}

// Len is how many nodes the cycle has results for: the scheduler's, in its
// order.
func (m nodeStatuses) Len() int { return len(m.nodes) }

// StatusAt is Get for the i-th node of the scheduler's list.
func (m nodeStatuses) StatusAt(i int) *framework.Status { return m.nodes[i].Status }

func (m nodeStatuses) Get(name string) *framework.Status {
	if i, ok := m.byName[name]; ok && i < len(m.nodes) && m.nodes[i].Name == name {
		return m.nodes[i].Status
	}
	return nil
}
