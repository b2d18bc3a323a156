package framework

// DefaultNormalizeScore scales scores to [0, maxPriority] by the highest one,
// with integer division as kube-scheduler's helper does; reverse turns the
// highest into the lowest (TaintToleration counts intolerable taints). All
// zero scores become 0, or maxPriority when reversed.
func DefaultNormalizeScore(maxPriority int64, reverse bool, scores NodeScoreList) {
	var maxCount int64
	for i := range scores {
		maxCount = max(maxCount, scores[i].Score)
	}
	if maxCount == 0 {
		if reverse {
			for i := range scores {
				scores[i].Score = maxPriority
			}
		}
		return
	}
	for i := range scores {
		score := maxPriority * scores[i].Score / maxCount
		if reverse {
			score = maxPriority - score
		}
		scores[i].Score = score
	}
}
