package interpodaffinity

import "github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"

// Counts are the PreFilter state's counts, flattened for comparison:
// "key=value" -> count.
type Counts struct {
	Existing, Affinity, AntiAffinity map[string]int64
}

func flatten(m topologyToMatchedTermCount) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		out[k.key+"="+k.value] = v
	}
	return out
}

// PreFilterCounts returns the counts PreFilter left in cycleState.
func PreFilterCounts(cycleState *framework.CycleState) (Counts, error) {
	s, err := getPreFilterState(cycleState)
	if err != nil {
		return Counts{}, err
	}
	return Counts{flatten(s.existingAntiAffinityCounts), flatten(s.affinityCounts), flatten(s.antiAffinityCounts)}, nil
}

// PreScoreTopologyScore returns the per-domain sums PreScore left in cycleState.
func PreScoreTopologyScore(cycleState *framework.CycleState) (map[string]int64, error) {
	s, err := getPreScoreState(cycleState)
	if err != nil {
		return nil, err
	}
	return flatten(s.topologyScore), nil
}
