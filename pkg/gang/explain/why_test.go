package explain

import (
	"testing"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/tainttoleration"
)

// Every kind of suggestion that can be listed first says why it leads, in
// terms of the ranking: the blocker it removes, or what ranked it there.
func TestWhyFirst(t *testing.T) {
	nodes := []Node{{Name: "g0", Plugin: tainttoleration.Name}, {Name: "g1", Plugin: tainttoleration.Name}, {Name: "g2", Plugin: noderesources.Name},
		{Name: "o", Plugin: tainttoleration.Name, OutsideDomain: true}}
	frag := Suggestion{Kind: SuggestShortfall, Shortfall: []ResourceShortfall{{Name: "nvidia.com/gpu", Free: 12, Holes: map[int64]int{4: 2, 2: 2}}}}
	short := Suggestion{Kind: SuggestShortfall, Shortfall: []ResourceShortfall{{Name: "nvidia.com/gpu", Free: 4}}}
	tests := []struct {
		name  string
		first Suggestion
		rest  []Suggestion
		zone  string
		want  string
	}{
		{"a toleration that opens room", Suggestion{Kind: SuggestTolerate, Tolerations: []string{"gpu=true:NoSchedule"}}, nil, "",
			"it alone removes the blocker the summary names (taint gpu=true:NoSchedule on 2 node(s))"},
		{"a near miss", Suggestion{Kind: SuggestTolerate, NearMiss: true}, nil, "", "the member's own toleration misses the taint by a slip (key case, effect or value), and corrected it opens the nodes the taint keeps off"},
		{"the move in a fragmented domain", Suggestion{Kind: SuggestMove}, []Suggestion{frag}, "a",
			"topology.kubernetes.io/zone=a has the room (12 nvidia.com/gpu free), only in holes of 4, 2 nvidia.com/gpu; moved pods keep running, where preemption evicts them"},
		{"a fragmented shortfall", frag, nil, "", "the room is in the cluster, only in holes of 4, 2 nvidia.com/gpu: no change tried joins them"},
		{"a shortfall", short, nil, "a", "capacity is short in topology.kubernetes.io/zone=a: no toleration, selector or spread change tried opens room the cluster has"},
		{"a sub-group's shortfall", Suggestion{Kind: SuggestShortfall, Shortfall: []ResourceShortfall{{Name: "nvidia.com/gpu", Domain: "block=b2"}}}, nil, "",
			"capacity is short in block=b2: no toleration, selector or spread change tried opens room the cluster has"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Explanation{Nodes: nodes, Suggestions: append([]Suggestion{tt.first}, tt.rest...)}
			if tt.zone != "" {
				e.TopologyKey, e.Domain = "topology.kubernetes.io/zone", tt.zone
			}
			e.whyFirst()
			if got := e.Suggestions[0].Why; got != tt.want {
				t.Errorf("why %q\nwant %q", got, tt.want)
			}
			for _, s := range e.Suggestions[1:] {
				if s.Why != "" {
					t.Errorf("%s, not first, says why: %q", s.Kind, s.Why)
				}
			}
		})
	}
	for _, k := range []SuggestionKind{SuggestShortfall, SuggestPreempt, SuggestAddNodes, SuggestRepairNodes, SuggestLowerMinMember, SuggestSelector,
		SuggestNodesTooSmall, SuggestUngate, SuggestTolerate, SuggestQuota, SuggestSourceGate, SuggestCreatePodGroup, SuggestCreateClaim,
		SuggestRepairDevicePlugin, SuggestHostPort, SuggestMembersMissing, SuggestMove, SuggestSpread, SuggestVolcanoQueue} {
		if firstReason(&Explanation{}, &Suggestion{Kind: k}) == "" {
			t.Errorf("%s says nothing of why it is first", k)
		}
	}
}
