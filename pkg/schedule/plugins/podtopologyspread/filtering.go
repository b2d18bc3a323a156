package podtopologyspread

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// noDomain is the minimum of a constraint with no eligible domain, as
// kube-scheduler's criticalPaths start out.
const noDomain = math.MaxInt32

// preFilterState is what PreFilter computes for Filter: for each hard
// constraint, how many matching pods each eligible topology domain holds and
// the smallest of those counts. An empty state (no constraints) accepts
// every node.
type preFilterState struct {
	constraints []topologySpreadConstraint
	// selfMatch[i] is 1 when the pod matches constraint i's selector.
	selfMatch []int
	// tpValueToMatchNum[i] maps each eligible domain of constraint i (a value
	// of its topology key) to its matching pods.
	tpValueToMatchNum []map[string]int
	// minMatchNum[i] is the smallest count in tpValueToMatchNum[i], noDomain
	// when it is empty; atMin[i] is how many domains hold it.
	//
	// kube-scheduler keeps two "critical paths" instead, which stays exact
	// only while pods are added to or removed from a single node (what
	// preemption does). Gang placement adds members on many nodes one after
	// another, so we keep the exact minimum: the same as kube-scheduler after
	// PreFilter and after changes on one node, and the same as a fresh
	// PreFilter after any sequence of AddPod and RemovePod.
	minMatchNum []int
	atMin       []int
	// inclusion is the pod's node affinity and tolerations, for AddPod and
	// RemovePod; shared by clones as it never changes.
	inclusion *inclusion
}

// Clone copies the counts; the constraints are shared as they never change.
func (s *preFilterState) Clone() framework.StateData {
	if s == nil {
		return (*preFilterState)(nil)
	}
	out := &preFilterState{
		constraints:       s.constraints,
		selfMatch:         s.selfMatch,
		tpValueToMatchNum: make([]map[string]int, len(s.tpValueToMatchNum)),
		minMatchNum:       append([]int(nil), s.minMatchNum...),
		atMin:             append([]int(nil), s.atMin...),
		inclusion:         s.inclusion,
	}
	for i, m := range s.tpValueToMatchNum {
		out.tpValueToMatchNum[i] = maps.Clone(m)
	}
	return out
}

// globalMin is the minimum Filter compares a domain against: 0 while fewer
// domains than minDomains are eligible.
func (s *preFilterState) globalMin(i int) int {
	if len(s.tpValueToMatchNum[i]) < int(s.constraints[i].MinDomains) {
		return 0
	}
	return s.minMatchNum[i]
}

// recomputeMin finds constraint i's minimum from scratch.
func (s *preFilterState) recomputeMin(i int) {
	s.minMatchNum[i], s.atMin[i] = noDomain, 0
	for _, num := range s.tpValueToMatchNum[i] {
		switch {
		case num < s.minMatchNum[i]:
			s.minMatchNum[i], s.atMin[i] = num, 1
		case num == s.minMatchNum[i]:
			s.atMin[i]++
		}
	}
}

// add changes domain value of constraint i by delta and keeps the minimum
// exact: a fall below it is the new minimum; the last domain holding it
// rising needs a scan (O(domains), only then: once per layer of a hostname
// spread, not once per pod).
func (s *preFilterState) add(i int, value string, delta int) {
	m := s.tpValueToMatchNum[i]
	old, existed := m[value]
	num := old + delta
	m[value] = num
	if existed && old == s.minMatchNum[i] {
		s.atMin[i]--
	}
	switch {
	case num < s.minMatchNum[i]:
		s.minMatchNum[i], s.atMin[i] = num, 1
	case num == s.minMatchNum[i]:
		s.atMin[i]++
	case s.atMin[i] == 0:
		s.recomputeMin(i)
	}
}

// PreFilter counts, over every node of the snapshot, the pods matching each
// hard constraint per topology domain. It returns Skip when the pod has no
// hard constraint (explicit, or defaulted with a selector).
//
// The nodes come from the Handle, as kube-scheduler's framework passes its
// snapshot's full node list: spreading always counts the whole (working)
// snapshot, whatever subset the caller considers.
func (pl *PodTopologySpread) PreFilter(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	// Default constraints take the pod's selector from the objects of its
	// namespace: unread there, the spreading (a score with the system
	// defaults, a filter with listed DoNotSchedule ones) is not known, so
	// the pod is never a plain yes (docs/design.md#snapshot).
	if r, ok := pl.handle.(SelectorKindsReader); ok && len(pod.Spec.TopologySpreadConstraints) == 0 && len(pl.defaultConstraints) > 0 {
		if kinds := r.UnreadableSelectorKinds(pod.Namespace); len(kinds) > 0 {
			return nil, framework.NotEvaluated(fmt.Sprintf("%s: default topology spreading takes the pod's selector from the Services, ReplicationControllers, ReplicaSets and StatefulSets of namespace %s, and the snapshot could not list %s there",
				NotEvaluatedReason, pod.Namespace, strings.Join(kinds, ", ")))
		}
	}
	s, err := pl.calPreFilterState(ctx, pod, pl.handle.NodeInfos().List())
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	// The empty state is written too, so Filter and the extensions accept
	// the pod even when a caller does not honour Skip.
	state.Write(preFilterStateKey, s)
	if len(s.constraints) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	return nil, nil
}

func (pl *PodTopologySpread) calPreFilterState(ctx context.Context, pod *corev1.Pod, nodes []*framework.NodeInfo) (*preFilterState, error) {
	constraints, err := pl.constraints(pod, corev1.DoNotSchedule)
	if err != nil {
		if len(pod.Spec.TopologySpreadConstraints) > 0 {
			err = fmt.Errorf("obtaining pod's hard topology spread constraints: %w", err)
		} else {
			err = fmt.Errorf("setting default hard topology spread constraints: %w", err)
		}
		return nil, fmt.Errorf("get constraints from pod: %w", err)
	}
	if len(constraints) == 0 {
		return &preFilterState{}, nil
	}
	k := len(constraints)
	s := &preFilterState{
		constraints:       constraints,
		selfMatch:         make([]int, k),
		tpValueToMatchNum: make([]map[string]int, k),
		minMatchNum:       make([]int, k),
		atMin:             make([]int, k),
		inclusion:         newInclusion(klog.FromContext(ctx), pod, constraints),
	}
	podLabels := labels.Set(pod.Labels)
	for i := range constraints {
		if constraints[i].Selector.Matches(podLabels) {
			s.selfMatch[i] = 1
		}
		size := 0
		if constraints[i].TopologyKey == corev1.LabelHostname {
			size = len(nodes)
		}
		s.tpValueToMatchNum[i] = make(map[string]int, size)
	}

	// counts[n*k+i] is node n's matching pods for constraint i, -1 when the
	// node is not part of the constraint's domains. One flat slice keeps the
	// parallel part free of per-node allocations.
	counts := make([]int, len(nodes)*k)
	pl.handle.Parallelizer().Until(ctx, len(nodes), func(n int) {
		row := counts[n*k : (n+1)*k]
		node := nodes[n].Node()
		if node == nil || !nodeLabelsMatchSpreadConstraints(node.Labels, constraints) {
			for i := range row {
				row[i] = -1
			}
			return
		}
		verdict := s.inclusion.judge(node)
		for i := range constraints {
			c := &constraints[i]
			if !verdict.includes(c) {
				row[i] = -1
				continue
			}
			row[i] = countPodsMatchSelector(nodes[n].Pods, c.Selector, pod.Namespace)
		}
	})
	for n, ni := range nodes {
		row := counts[n*k : (n+1)*k]
		for i := range constraints {
			if row[i] >= 0 {
				s.tpValueToMatchNum[i][ni.Node().Labels[constraints[i].TopologyKey]] += row[i]
			}
		}
	}
	for i := range constraints {
		s.recomputeMin(i)
	}
	return s, nil
}

// PreFilterExtensions returns the plugin: it keeps its counts right when pods
// are added or removed after PreFilter.
func (pl *PodTopologySpread) PreFilterExtensions() framework.PreFilterExtensions { return pl }

// AddPod counts podInfoToAdd on nodeInfo in the PreFilter state.
func (pl *PodTopologySpread) AddPod(_ context.Context, state *framework.CycleState, podToSchedule *corev1.Pod, podInfoToAdd *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(podInfoToAdd.Pod, podToSchedule, nodeInfo.Node(), 1)
	return nil
}

// RemovePod uncounts podInfoToRemove on nodeInfo in the PreFilter state.
func (pl *PodTopologySpread) RemovePod(_ context.Context, state *framework.CycleState, podToSchedule *corev1.Pod, podInfoToRemove *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(podInfoToRemove.Pod, podToSchedule, nodeInfo.Node(), -1)
	return nil
}

// updateWithPod applies kube-scheduler's rules: only pods of the scheduled
// pod's namespace, only on nodes with every topology key that the
// constraint's inclusion policies admit, only where the selector matches.
// Like kube-scheduler it does not look at the pod's deletion timestamp.
func (s *preFilterState) updateWithPod(updated, podToSchedule *corev1.Pod, node *corev1.Node, delta int) {
	if s == nil || len(s.constraints) == 0 || updated.Namespace != podToSchedule.Namespace || node == nil {
		return
	}
	if !nodeLabelsMatchSpreadConstraints(node.Labels, s.constraints) {
		return
	}
	// The state was built for podToSchedule: its inclusion holds that pod's
	// node affinity and tolerations, parsed once.
	verdict := s.inclusion.judge(node)
	podLabels := labels.Set(updated.Labels)
	for i := range s.constraints {
		c := &s.constraints[i]
		if !c.Selector.Matches(podLabels) || !verdict.includes(c) {
			continue
		}
		s.add(i, node.Labels[c.TopologyKey], delta)
	}
}

func getPreFilterState(state *framework.CycleState) (*preFilterState, error) {
	s, err := framework.ReadState[*preFilterState](state, preFilterStateKey)
	if err == nil && s == nil {
		return nil, fmt.Errorf("nil %q in cycleState", preFilterStateKey)
	}
	return s, err
}

var errNoNode = errors.New("node not found")

// Filter rejects a node where placing the pod would make its domain's count
// (plus one if the pod matches itself) exceed the global minimum by more
// than maxSkew, and a node that lacks a topology key. It runs in
// O(constraints) and allocates only to reject.
func (pl *PodTopologySpread) Filter(_ context.Context, state *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreFilterState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(s.constraints) == 0 {
		return nil
	}
	node := nodeInfo.Node()
	if node == nil {
		return framework.AsStatus(errNoNode)
	}
	for i := range s.constraints {
		c := &s.constraints[i]
		tpVal, ok := node.Labels[c.TopologyKey]
		if !ok {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch)
		}
		skew := s.tpValueToMatchNum[i][tpVal] + s.selfMatch[i] - s.globalMin(i)
		if skew > int(c.MaxSkew) {
			return framework.NewStatus(framework.Unschedulable, ErrReasonConstraintsNotMatch)
		}
	}
	return nil
}

var _ framework.DomainFilterPlugin = (*PodTopologySpread)(nil)

// FilterDomainKeys returns the hard constraints' topology keys: Filter looks
// at nothing of a node but their values.
func (pl *PodTopologySpread) FilterDomainKeys(state *framework.CycleState) []string {
	s, err := getPreFilterState(state)
	if err != nil {
		return nil
	}
	return topologyKeys(s.constraints, "")
}

// topologyKeys lists the constraints' distinct topology keys, leaving out except.
func topologyKeys(constraints []topologySpreadConstraint, except string) []string {
	var keys []string
	for i := range constraints {
		if k := constraints[i].TopologyKey; k != except && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// FilterGlobal appends the minimum each hard constraint's skew is measured
// against.
func (pl *PodTopologySpread) FilterGlobal(state *framework.CycleState, dst []int) []int {
	s, err := getPreFilterState(state)
	if err != nil {
		return dst
	}
	for i := range s.constraints {
		dst = append(dst, s.globalMin(i))
	}
	return dst
}
