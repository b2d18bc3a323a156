package interpodaffinity

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// preScoreStateKey is where PreScore leaves the per-domain scores.
const preScoreStateKey framework.StateKey = "PreScore" + Name

// preScoreState holds, per topology pair, the summed weights of the terms
// that pull the pod towards (positive) or push it away from (negative) that
// domain. Score adds up the pairs a node belongs to.
type preScoreState struct {
	topologyScore map[topologyPair]int64
	// topologyKeys are the distinct keys of topologyScore.
	topologyKeys []string
	// terms are what PreScore matched existing pods against, kept for
	// ScoreAddPod; domainKeys the keys a pod equal to the incoming one can
	// add scores to.
	terms      *scoreTerms
	domainKeys []string
}

// Clone copies what ScoreAddPod changes.
func (s *preScoreState) Clone() framework.StateData {
	c := *s
	c.topologyScore = maps.Clone(s.topologyScore)
	c.topologyKeys = slices.Clone(s.topologyKeys)
	return &c
}

// scoreTerms is what PreScore matches each existing pod against.
type scoreTerms struct {
	pod             *corev1.Pod
	namespaceLabels labels.Set
	preferred       []incomingTerm
	preferredAnti   []incomingTerm
	hardWeight      int32
}

// topologyScoreList collects a chunk's weighted matches before they are
// summed into the state's map.
type topologyScoreList []pairCount

func (l topologyScoreList) add(node *corev1.Node, key string, weight, multiplier int32) topologyScoreList {
	if tv, ok := node.Labels[key]; ok {
		l = append(l, pairCount{pair: topologyPair{key: key, value: tv}, count: int64(weight * multiplier)})
	}
	return l
}

// processExistingPod scores one existing pod, in kube-scheduler's order:
// the incoming pod's preferred affinity and anti-affinity terms against it,
// then its required affinity (at hardPodAffinityWeight) and preferred terms
// against the incoming pod.
func (t *scoreTerms) processExistingPod(l topologyScoreList, existing *framework.PodInfo, node *corev1.Node) topologyScoreList {
	if len(node.Labels) == 0 {
		return l
	}
	for i := range t.preferred {
		if term := &t.preferred[i]; term.matches(existing.Pod) {
			l = l.add(node, term.topologyKey, term.weight, 1)
		}
	}
	for i := range t.preferredAnti {
		if term := &t.preferredAnti[i]; term.matches(existing.Pod) {
			l = l.add(node, term.topologyKey, term.weight, -1)
		}
	}
	if t.hardWeight > 0 {
		for i := range existing.RequiredAffinityTerms {
			if term := &existing.RequiredAffinityTerms[i]; term.Matches(t.pod, t.namespaceLabels) {
				l = l.add(node, term.TopologyKey, t.hardWeight, 1)
			}
		}
	}
	for i := range existing.PreferredAffinityTerms {
		if term := &existing.PreferredAffinityTerms[i]; term.Matches(t.pod, t.namespaceLabels) {
			l = l.add(node, term.TopologyKey, term.Weight, 1)
		}
	}
	for i := range existing.PreferredAntiAffinityTerms {
		if term := &existing.PreferredAntiAffinityTerms[i]; term.Matches(t.pod, t.namespaceLabels) {
			l = l.add(node, term.TopologyKey, term.Weight, -1)
		}
	}
	return l
}

// PreScore sums the weights of every matching preferred term (and required
// affinity term of existing pods) per topology pair. It looks at every node
// of the snapshot when the pod has preferred terms, otherwise only at nodes
// with pods that have (anti-)affinity; Skip when no term matched anything.
func (pl *InterPodAffinity) PreScore(ctx context.Context, cycleState *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	a := pod.Spec.Affinity
	hasPreferredAffinity := a != nil && a.PodAffinity != nil && len(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0
	hasPreferredAntiAffinity := a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0
	hasConstraints := hasPreferredAffinity || hasPreferredAntiAffinity
	if pl.ignorePreferredTermsOfExistingPods && !hasConstraints {
		return framework.NewStatus(framework.Skip)
	}

	var nodes []*framework.NodeInfo
	if hasConstraints {
		nodes = pl.handle.NodeInfos().List()
	} else {
		nodes = pl.handle.NodeInfos().HavePodsWithAffinityList()
	}

	pi := framework.NewPodInfo(pod)
	if pi.ParseError != nil {
		err := parseError(pod)
		if err == nil {
			err = pi.ParseError
		}
		return framework.AsStatus(fmt.Errorf("failed to parse pod: %w", err))
	}
	terms := &scoreTerms{
		pod:             pod,
		namespaceLabels: pl.handle.NamespaceLabels(pod.Namespace),
		preferred:       resolveWeightedTerms(pi.PreferredAffinityTerms, pl.handle.NamespaceLabels),
		preferredAnti:   resolveWeightedTerms(pi.PreferredAntiAffinityTerms, pl.handle.NamespaceLabels),
		hardWeight:      pl.hardPodAffinityWeight,
	}

	parts := make([]topologyScoreList, chunkCount(len(nodes)))
	pl.parallelChunks(ctx, len(nodes), func(c, start, end int) {
		var l topologyScoreList
		for _, ni := range nodes[start:end] {
			node := ni.Node()
			// Without preferred terms of its own, only pods with terms of
			// theirs can score the pod.
			pods := ni.PodsWithAffinity
			if hasConstraints {
				pods = ni.Pods
			}
			for _, existing := range pods {
				l = terms.processExistingPod(l, existing, node)
			}
		}
		parts[c] = l
	})

	s := &preScoreState{topologyScore: map[topologyPair]int64{}, terms: terms, domainKeys: ownTermKeys(pod, pl.hardPodAffinityWeight)}
	for _, l := range parts {
		s.addAll(l)
	}
	// A term that matched counts even when the weights cancel out: the
	// scores still get normalized, as kube-scheduler does.
	if len(s.topologyScore) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	cycleState.Write(preScoreStateKey, s)
	return nil
}

// addAll sums weighted matches into the state.
func (s *preScoreState) addAll(l topologyScoreList) {
	for _, pc := range l {
		s.topologyScore[pc.pair] += pc.count
		if !slices.Contains(s.topologyKeys, pc.pair.key) {
			s.topologyKeys = append(s.topologyKeys, pc.pair.key)
		}
	}
}

// ownTermKeys are the topology keys through which a pod equal to pod scores
// pod: its preferred terms (matched either way) and, with a hard weight, its
// required affinity terms.
func ownTermKeys(pod *corev1.Pod, hardWeight int32) []string {
	var keys []string
	add := func(k string) {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	a := pod.Spec.Affinity
	if a == nil {
		return nil
	}
	if pa := a.PodAffinity; pa != nil {
		for _, t := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			add(t.PodAffinityTerm.TopologyKey)
		}
		if hardWeight > 0 {
			for _, t := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				add(t.TopologyKey)
			}
		}
	}
	if paa := a.PodAntiAffinity; paa != nil {
		for _, t := range paa.PreferredDuringSchedulingIgnoredDuringExecution {
			add(t.PodAffinityTerm.TopologyKey)
		}
	}
	return keys
}

// getPreScoreState reads PreScore's state; a missing one is reported in
// kube-scheduler's words.
func getPreScoreState(cycleState *framework.CycleState) (*preScoreState, error) {
	s, err := framework.ReadState[*preScoreState](cycleState, preScoreStateKey)
	if errors.Is(err, framework.ErrNotFound) {
		return nil, fmt.Errorf("failed to read %q from cycleState: %w", preScoreStateKey, framework.ErrNotFound)
	}
	return s, err
}

// Score sums the weights of the domains the node belongs to: positive for
// affinity, negative for anti-affinity. NormalizeScore maps it to 0..100.
func (pl *InterPodAffinity) Score(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, err := getPreScoreState(cycleState)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	node := nodeInfo.Node()
	var score int64
	for _, key := range s.topologyKeys {
		if tv, ok := node.Labels[key]; ok {
			score += s.topologyScore[topologyPair{key: key, value: tv}]
		}
	}
	return score, nil
}

// ScoreExtensions returns the plugin, which normalizes its scores.
func (pl *InterPodAffinity) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore maps the scores linearly onto [0, MaxNodeScore], the lowest
// to 0 and the highest to MaxNodeScore, with kube-scheduler's float
// arithmetic and truncation; all 0 when every node scored the same.
func (pl *InterPodAffinity) NormalizeScore(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	s, err := getPreScoreState(cycleState)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(s.topologyScore) == 0 {
		return nil
	}
	var minCount int64 = math.MaxInt64
	var maxCount int64 = math.MinInt64
	for i := range scores {
		minCount = min(minCount, scores[i].Score)
		maxCount = max(maxCount, scores[i].Score)
	}
	maxMinDiff := maxCount - minCount
	for i := range scores {
		fScore := float64(0)
		if maxMinDiff > 0 {
			fScore = float64(framework.MaxNodeScore) * (float64(scores[i].Score-minCount) / float64(maxMinDiff))
		}
		scores[i].Score = int64(fScore)
	}
	return nil
}

var _ framework.StableScorePlugin = (*InterPodAffinity)(nil)

// ScoreStable: a pod equal to the incoming one adds to the scores only
// through its preferred terms (matched against the incoming pod, or, when
// the incoming pod has them, the incoming pod's terms matched against it)
// and its required affinity terms weighted by hardPodAffinityWeight. Without
// those, PreScore's outcome does not change as equal pods are added.
func (pl *InterPodAffinity) ScoreStable(pod *corev1.Pod, _ bool) bool {
	a := pod.Spec.Affinity
	if a == nil {
		return true
	}
	if pa := a.PodAffinity; pa != nil {
		if len(pa.PreferredDuringSchedulingIgnoredDuringExecution) > 0 ||
			pl.hardPodAffinityWeight > 0 && len(pa.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
			return false
		}
	}
	if paa := a.PodAntiAffinity; paa != nil && len(paa.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
		return false
	}
	return true
}

var (
	_ framework.IncrementalScorePlugin = (*InterPodAffinity)(nil)
	_ framework.RangeNormalizer        = (*InterPodAffinity)(nil)
)

// ScoreAddPod scores podInfo, added to nodeInfo after PreScore, as PreScore
// scores every existing pod.
func (pl *InterPodAffinity) ScoreAddPod(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, podInfo *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getPreScoreState(cycleState)
	if err != nil {
		return framework.AsStatus(err)
	}
	if node := nodeInfo.Node(); node != nil {
		s.addAll(s.terms.processExistingPod(nil, podInfo, node))
	}
	return nil
}

// ScoreDomainKeys returns the topology keys of the incoming pod's own terms.
func (pl *InterPodAffinity) ScoreDomainKeys(cycleState *framework.CycleState) []string {
	s, err := getPreScoreState(cycleState)
	if err != nil {
		return nil
	}
	return s.domainKeys
}

// ScoreFeasible: PreScore looks at every node, not the feasible ones.
func (pl *InterPodAffinity) ScoreFeasible(*framework.CycleState, *framework.NodeInfo, bool) bool {
	return false
}

// NormalizeOne is NormalizeScore for one score, given that PreScore did not
// skip (some term matched, so the scores are spread over [lowest, highest]).
func (pl *InterPodAffinity) NormalizeOne(score, lowest, highest int64) int64 {
	fScore := float64(0)
	if diff := highest - lowest; diff > 0 {
		fScore = float64(framework.MaxNodeScore) * (float64(score-lowest) / float64(diff))
	}
	return int64(fScore)
}
