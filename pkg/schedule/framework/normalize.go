package framework

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// DefaultNormalizer gives a plugin that embeds it kube-scheduler's default
// normalization onto [0, MaxNodeScore], as a RangeNormalizer; Reverse turns
// the highest score into the lowest. The plugin's ScoreExtensions returns
// the plugin itself.
type DefaultNormalizer struct {
	Reverse bool
}

// NormalizeScore is DefaultNormalizeScore onto [0, MaxNodeScore].
func (n DefaultNormalizer) NormalizeScore(_ context.Context, _ *CycleState, _ *corev1.Pod, scores NodeScoreList) *Status {
	DefaultNormalizeScore(MaxNodeScore, n.Reverse, scores)
	return nil
}

// NormalizeOne is NormalizeScore for one score.
func (n DefaultNormalizer) NormalizeOne(score, _, highest int64) int64 {
	return DefaultNormalizeOne(MaxNodeScore, n.Reverse, score, max(highest, 0))
}

var _ RangeNormalizer = DefaultNormalizer{}

// DefaultNormalizeScore scales scores to [0, maxPriority] by the highest one,
// with integer division as kube-scheduler's helper does; reverse turns the
// highest into the lowest (TaintToleration counts intolerable taints). All
// zero scores become 0, or maxPriority when reversed.
func DefaultNormalizeScore(maxPriority int64, reverse bool, scores NodeScoreList) {
	var maxCount int64
	for i := range scores {
		maxCount = max(maxCount, scores[i].Score)
	}
	for i := range scores {
		scores[i].Score = DefaultNormalizeOne(maxPriority, reverse, scores[i].Score, maxCount)
	}
}

// DefaultNormalizeOne is what DefaultNormalizeScore makes of one score when
// the highest of the list (or 0, if higher) is maxCount.
func DefaultNormalizeOne(maxPriority int64, reverse bool, score, maxCount int64) int64 {
	if maxCount == 0 {
		if reverse {
			return maxPriority
		}
		return score
	}
	score = maxPriority * score / maxCount
	if reverse {
		score = maxPriority - score
	}
	return score
}
