package podtopologyspread

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

// invalidScore marks ignored nodes during NormalizeScore.
const invalidScore = -1

// preScoreState is what PreScore computes for Score and NormalizeScore.
type preScoreState struct {
	constraints []topologySpreadConstraint
	// ignoredNodes lack a topology key of some constraint; they score 0.
	ignoredNodes sets.Set[string]
	// topologyValueToPodCounts[i] maps each domain of constraint i to its
	// matching pods over all nodes. (kube-scheduler keeps only the domains
	// of feasible nodes, the only ones Score reads; keeping all lets the
	// counts follow a changing feasible set.) Hostname constraints keep no
	// map: Score counts the node's own pods.
	topologyValueToPodCounts []map[string]int64
	// feasibleDomains[i] counts the feasible, not ignored nodes per domain
	// of constraint i, and feasibleNodes all of them: the sizes the
	// normalizing weights are computed from.
	feasibleDomains []map[string]int
	feasibleNodes   int
	// requireAll and inclusion are how PreScore decided which nodes count,
	// kept for ScoreAddPod and ScoreFeasible.
	requireAll bool
	inclusion  *inclusion
	// topologyNormalizingWeight[i] is log(domains+2), so that counts in a
	// topology with many small domains weigh as much as in one with few.
	topologyNormalizingWeight []float64
}

// Clone copies what ScoreAddPod and ScoreFeasible change.
func (s *preScoreState) Clone() framework.StateData {
	c := *s
	c.ignoredNodes = s.ignoredNodes.Clone()
	c.topologyValueToPodCounts = make([]map[string]int64, len(s.topologyValueToPodCounts))
	for i, m := range s.topologyValueToPodCounts {
		c.topologyValueToPodCounts[i] = maps.Clone(m)
	}
	c.feasibleDomains = make([]map[string]int, len(s.feasibleDomains))
	for i, m := range s.feasibleDomains {
		c.feasibleDomains[i] = maps.Clone(m)
	}
	c.topologyNormalizingWeight = slices.Clone(s.topologyNormalizingWeight)
	return &c
}

// PreScore prepares the counts for the pod's soft constraints (explicit, or
// defaulted with a selector); it returns Skip when there are none.
func (pl *PodTopologySpread) PreScore(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, filteredNodes []*framework.NodeInfo) *framework.Status {
	allNodes := pl.handle.NodeInfos().List()
	if len(allNodes) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	// Only non-system-default spreading requires nodes to hold every
	// topology key, so nodes without a zone label are still spread by
	// hostname under the system defaults.
	requireAllTopologies := len(pod.Spec.TopologySpreadConstraints) > 0 || !pl.systemDefaulted
	s, err := pl.initPreScoreState(pod, filteredNodes, requireAllTopologies)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("calculating preScoreState: %w", err))
	}
	if len(s.constraints) == 0 {
		return framework.NewStatus(framework.Skip)
	}

	k := len(s.constraints)
	in := newInclusion(klog.FromContext(ctx), pod, s.constraints)
	s.inclusion = in
	// counts[n*k+i] is node n's matching pods for constraint i, -1 when it
	// does not count (see calPreFilterState).
	counts := make([]int64, len(allNodes)*k)
	pl.handle.Parallelizer().Until(ctx, len(allNodes), func(n int) {
		row := counts[n*k : (n+1)*k]
		for i := range row {
			row[i] = -1
		}
		node := allNodes[n].Node()
		if node == nil || requireAllTopologies && !nodeLabelsMatchSpreadConstraints(node.Labels, s.constraints) {
			return
		}
		verdict := in.judge(node)
		for i := range s.constraints {
			c := &s.constraints[i]
			if !verdict.includes(c) {
				continue
			}
			// Hostname constraints are counted in Score.
			if c.TopologyKey == corev1.LabelHostname {
				continue
			}
			row[i] = int64(countPodsMatchSelector(allNodes[n].Pods, c.Selector, pod.Namespace))
		}
	})
	for n, ni := range allNodes {
		row := counts[n*k : (n+1)*k]
		for i := range s.constraints {
			if row[i] >= 0 {
				s.topologyValueToPodCounts[i][ni.Node().Labels[s.constraints[i].TopologyKey]] += row[i]
			}
		}
	}
	state.Write(preScoreStateKey, s)
	return nil
}

// initPreScoreState finds the soft constraints, the ignored nodes, the
// domains of the feasible nodes and each constraint's normalizing weight.
func (pl *PodTopologySpread) initPreScoreState(pod *corev1.Pod, filteredNodes []*framework.NodeInfo, requireAllTopologies bool) (*preScoreState, error) {
	constraints, err := pl.constraints(pod, corev1.ScheduleAnyway)
	if err != nil {
		if len(pod.Spec.TopologySpreadConstraints) > 0 {
			return nil, fmt.Errorf("obtaining pod's soft topology spread constraints: %w", err)
		}
		return nil, fmt.Errorf("setting default soft topology spread constraints: %w", err)
	}
	s := &preScoreState{constraints: constraints, ignoredNodes: sets.New[string](), requireAll: requireAllTopologies}
	if len(constraints) == 0 {
		return s, nil
	}
	s.topologyValueToPodCounts = make([]map[string]int64, len(constraints))
	s.feasibleDomains = make([]map[string]int, len(constraints))
	for i := range constraints {
		s.topologyValueToPodCounts[i] = map[string]int64{}
		s.feasibleDomains[i] = map[string]int{}
	}
	s.topologyNormalizingWeight = make([]float64, len(constraints))
	for _, ni := range filteredNodes {
		s.feasible(ni.Node(), 1)
	}
	s.reweigh()
	return s, nil
}

// feasible adds (delta 1) or removes (-1) a feasible node: an ignored node
// (one without every topology key, when they are required) scores 0 and
// counts for no domain; a node without the key of a constraint (system
// defaults only) joins its "" domain, as in kube-scheduler.
func (s *preScoreState) feasible(node *corev1.Node, delta int) {
	if s.requireAll && !nodeLabelsMatchSpreadConstraints(node.Labels, s.constraints) {
		if delta > 0 {
			s.ignoredNodes.Insert(node.Name)
		} else {
			s.ignoredNodes.Delete(node.Name)
		}
		return
	}
	s.feasibleNodes += delta
	for i := range s.constraints {
		if s.constraints[i].TopologyKey == corev1.LabelHostname {
			continue
		}
		value := node.Labels[s.constraints[i].TopologyKey]
		if n := s.feasibleDomains[i][value] + delta; n > 0 {
			s.feasibleDomains[i][value] = n
		} else {
			delete(s.feasibleDomains[i], value)
		}
	}
}

// reweigh computes the normalizing weights from the feasible domains and
// reports whether one changed.
func (s *preScoreState) reweigh() bool {
	changed := false
	for i := range s.constraints {
		size := len(s.feasibleDomains[i])
		if s.constraints[i].TopologyKey == corev1.LabelHostname {
			size = s.feasibleNodes
		}
		if w := topologyNormalizingWeight(size); w != s.topologyNormalizingWeight[i] {
			s.topologyNormalizingWeight[i], changed = w, true
		}
	}
	return changed
}

// Score returns the node's weighted count of matching pods over its domains;
// NormalizeScore turns fewer pods into a higher score.
func (pl *PodTopologySpread) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, err := getPreScoreState(state)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	node := nodeInfo.Node()
	if node == nil {
		return 0, framework.AsStatus(errNoNode)
	}
	if s.ignoredNodes.Has(node.Name) {
		return 0, nil
	}
	var score float64
	for i := range s.constraints {
		c := &s.constraints[i]
		tpVal, ok := node.Labels[c.TopologyKey]
		if !ok {
			continue
		}
		var cnt int64
		if c.TopologyKey == corev1.LabelHostname {
			cnt = int64(countPodsMatchSelector(nodeInfo.Pods, c.Selector, pod.Namespace))
		} else {
			cnt = s.topologyValueToPodCounts[i][tpVal]
		}
		score += scoreForCount(cnt, c.MaxSkew, s.topologyNormalizingWeight[i])
	}
	return int64(math.Round(score)), nil
}

// NormalizeScore maps the scores to [0, 100] with the fewest matching pods
// scoring highest: MaxNodeScore * (max + min - score) / max, in integers;
// ignored nodes score 0 and all nodes score 100 when the maximum is 0.
func (pl *PodTopologySpread) NormalizeScore(_ context.Context, state *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	s, err := getPreScoreState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	var minScore int64 = math.MaxInt64
	var maxScore int64
	for i, score := range scores {
		if s.ignoredNodes.Has(score.Name) {
			scores[i].Score = invalidScore
			continue
		}
		minScore = min(minScore, score.Score)
		maxScore = max(maxScore, score.Score)
	}
	for i := range scores {
		switch {
		case scores[i].Score == invalidScore:
			scores[i].Score = 0
		case maxScore == 0:
			scores[i].Score = framework.MaxNodeScore
		default:
			scores[i].Score = framework.MaxNodeScore * (maxScore + minScore - scores[i].Score) / maxScore
		}
	}
	return nil
}

// ScoreExtensions returns the plugin, which normalizes its scores.
func (pl *PodTopologySpread) ScoreExtensions() framework.ScoreExtensions { return pl }

func getPreScoreState(state *framework.CycleState) (*preScoreState, error) {
	s, err := framework.ReadState[*preScoreState](state, preScoreStateKey)
	if err == nil && s == nil {
		return nil, fmt.Errorf("nil %q in cycleState", preScoreStateKey)
	}
	return s, err
}

// topologyNormalizingWeight weighs a topology by its number of domains.
// size is at least 1 when a node is feasible, so for up to 5,000 nodes the
// weight lies in [log 3, log 5002] = [1.09, 8.52].
func topologyNormalizingWeight(size int) float64 {
	return math.Log(float64(size + 2))
}

// scoreForCount is cnt * weight + (maxSkew - 1): a larger maxSkew waters
// down the differences between domains, tolerating more skew.
func scoreForCount(cnt int64, maxSkew int32, tpWeight float64) float64 {
	return float64(cnt)*tpWeight + float64(maxSkew-1)
}

var (
	_ framework.StableScorePlugin      = (*PodTopologySpread)(nil)
	_ framework.IncrementalScorePlugin = (*PodTopologySpread)(nil)
)

// ScoreStable: PreScore skips exactly when the pod has no soft constraint
// (nor system defaults), which no other pod changes; soft constraints count
// pods that equal pods may match (ScoreAddPod follows them).
func (pl *PodTopologySpread) ScoreStable(_ *corev1.Pod, skipped bool) bool { return skipped }

// ScoreAddPod counts podInfo, added to nodeInfo after PreScore, as PreScore
// would have: in the pod's namespace, on a node that counts, where the
// selector matches. Hostname constraints need nothing: Score counts the
// node's own pods.
func (pl *PodTopologySpread) ScoreAddPod(_ context.Context, state *framework.CycleState, pod *corev1.Pod, podInfo *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreScoreState(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	added, node := podInfo.Pod, nodeInfo.Node()
	if node == nil || added.DeletionTimestamp != nil || added.Namespace != pod.Namespace ||
		s.requireAll && !nodeLabelsMatchSpreadConstraints(node.Labels, s.constraints) {
		return nil
	}
	verdict := s.inclusion.judge(node)
	for i := range s.constraints {
		c := &s.constraints[i]
		if c.TopologyKey == corev1.LabelHostname || !verdict.includes(c) || c.Selector.Empty() || !c.Selector.Matches(labels.Set(added.Labels)) {
			continue
		}
		s.topologyValueToPodCounts[i][node.Labels[c.TopologyKey]]++
	}
	return nil
}

// ScoreDomainKeys returns the keys of the constraints counted per domain
// (hostname constraints count the node's own pods).
func (pl *PodTopologySpread) ScoreDomainKeys(state *framework.CycleState) []string {
	s, err := getPreScoreState(state)
	if err != nil {
		return nil
	}
	return topologyKeys(s.constraints, corev1.LabelHostname)
}

// ScoreFeasible moves a node into or out of the feasible set the weights
// are computed from; a changed weight changes every score.
func (pl *PodTopologySpread) ScoreFeasible(state *framework.CycleState, nodeInfo *framework.NodeInfo, feasible bool) bool {
	s, err := getPreScoreState(state)
	if err != nil || nodeInfo.Node() == nil {
		return true
	}
	delta := -1
	if feasible {
		delta = 1
	}
	s.feasible(nodeInfo.Node(), delta)
	return s.reweigh()
}
