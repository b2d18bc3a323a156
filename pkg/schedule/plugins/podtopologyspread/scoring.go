package podtopologyspread

import (
	"context"
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
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
	// topologyValueToPodCounts[i] maps each domain of constraint i that holds
	// a feasible node to its matching pods over all nodes. Hostname
	// constraints keep no map: Score counts the node's own pods.
	topologyValueToPodCounts []map[string]int64
	// topologyNormalizingWeight[i] is log(domains+2), so that counts in a
	// topology with many small domains weigh as much as in one with few.
	topologyNormalizingWeight []float64
}

// Clone returns the state itself: Score only reads it.
func (s *preScoreState) Clone() framework.StateData { return s }

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
			// Domains without a feasible node need no count; hostname
			// constraints are counted in Score.
			if _, ok := s.topologyValueToPodCounts[i][node.Labels[c.TopologyKey]]; !ok {
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
	s := &preScoreState{constraints: constraints, ignoredNodes: sets.New[string]()}
	if len(constraints) == 0 {
		return s, nil
	}
	s.topologyValueToPodCounts = make([]map[string]int64, len(constraints))
	for i := range constraints {
		s.topologyValueToPodCounts[i] = map[string]int64{}
	}
	for _, ni := range filteredNodes {
		node := ni.Node()
		if requireAllTopologies && !nodeLabelsMatchSpreadConstraints(node.Labels, constraints) {
			s.ignoredNodes.Insert(node.Name)
			continue
		}
		for i := range constraints {
			if constraints[i].TopologyKey == corev1.LabelHostname {
				continue
			}
			// A node without the key (system defaults only) joins the ""
			// domain, as in kube-scheduler.
			value := node.Labels[constraints[i].TopologyKey]
			if _, ok := s.topologyValueToPodCounts[i][value]; !ok {
				s.topologyValueToPodCounts[i][value] = 0
			}
		}
	}
	s.topologyNormalizingWeight = make([]float64, len(constraints))
	for i := range constraints {
		size := len(s.topologyValueToPodCounts[i])
		if constraints[i].TopologyKey == corev1.LabelHostname {
			size = len(filteredNodes) - len(s.ignoredNodes)
		}
		s.topologyNormalizingWeight[i] = topologyNormalizingWeight(size)
	}
	return s, nil
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
	c, err := state.Read(preScoreStateKey)
	if err != nil {
		return nil, fmt.Errorf("error reading %q from cycleState: %w", preScoreStateKey, err)
	}
	s, ok := c.(*preScoreState)
	if !ok || s == nil {
		return nil, fmt.Errorf("%+v  convert to podtopologyspread.preScoreState error", c)
	}
	return s, nil
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

var _ framework.StableScorePlugin = (*PodTopologySpread)(nil)

// ScoreStable: PreScore skips exactly when the pod has no soft constraint
// (nor system defaults), which no other pod changes; soft constraints count
// pods that equal pods may match.
func (pl *PodTopologySpread) ScoreStable(_ *corev1.Pod, skipped bool) bool { return skipped }
