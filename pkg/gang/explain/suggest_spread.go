package explain

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/podtopologyspread"
)

// SuggestSpread: the members' own spread constraint (DoNotSchedule) keeps
// them off nodes with room; a looser skew, proven by placing again, fits.
const SuggestSpread SuggestionKind = "Spread"

// spread proves that the blocked member's hard spread constraint is the
// blocker when nodes with room reject it for the spread alone: it names
// the domains with no room left, and the smallest doubling of maxSkew (up
// to the gang's size) that lets the gang start, else ScheduleAnyway
// (issue #27: "the spread constraint is the blocker: which zone is full,
// what skew would fit").
func (x *explainer) spread(ctx context.Context, g *gang.Gang, p *gang.Placement, e *Explanation) (*Suggestion, error) {
	if p.Blocker == nil || g.IsLonePod() {
		return nil, nil
	}
	pod := p.Blocker.Pod
	i := slices.IndexFunc(pod.Spec.TopologySpreadConstraints, func(c corev1.TopologySpreadConstraint) bool {
		return c.WhenUnsatisfiable == corev1.DoNotSchedule
	})
	if i < 0 {
		return nil, nil
	}
	c := pod.Spec.TopologySpreadConstraints[i]
	// Nodes with room that only the spread rejects, and domains whose
	// nodes all lack the resources.
	spreadOnly := 0
	room := map[string]bool{}
	domains := map[string]bool{}
	for _, n := range e.Nodes {
		if n.OutsideDomain {
			continue
		}
		node := x.node(n.Name)
		if node == nil {
			continue
		}
		v, ok := node.Labels[c.TopologyKey]
		if !ok {
			continue
		}
		domains[v] = true
		if n.Plugin == podtopologyspread.Name {
			spreadOnly++
		}
		if n.Feasible || (n.Plugin != noderesources.Name && n.Plugin != "") {
			room[v] = true
		}
	}
	if spreadOnly == 0 {
		return nil, nil
	}
	var full []string
	for v := range domains {
		if !room[v] {
			full = append(full, v)
		}
	}
	slices.Sort(full)
	with := func(change func(*corev1.TopologySpreadConstraint)) (*gang.Placement, error) {
		return x.place(ctx, x.snap, withMembers(g, func(m *corev1.Pod) *corev1.Pod {
			m = m.DeepCopy()
			for k := range m.Spec.TopologySpreadConstraints {
				if mc := &m.Spec.TopologySpreadConstraints[k]; mc.TopologyKey == c.TopologyKey && mc.WhenUnsatisfiable == corev1.DoNotSchedule {
					change(mc)
				}
			}
			return m
		}))
	}
	what := fmt.Sprintf("the members' spread constraint (topologyKey %s, maxSkew %d, DoNotSchedule) keeps them off %d node(s) with room", c.TopologyKey, c.MaxSkew, spreadOnly)
	if len(full) > 0 {
		what += fmt.Sprintf(": %s %s no room left, so the others may hold at most maxSkew more", c.TopologyKey+"="+strings.Join(full, ", "), isAre(len(full)))
	}
	for skew := c.MaxSkew * 2; skew <= max(int32(len(g.Members)), c.MaxSkew*2); skew *= 2 {
		then, err := with(func(mc *corev1.TopologySpreadConstraint) { mc.MaxSkew = skew })
		if err != nil {
			return nil, err
		}
		if then.Verdict == gang.VerdictPlaced {
			return &Suggestion{Kind: SuggestSpread, Verified: true, Message: fmt.Sprintf("%s; maxSkew %d would let the gang start: %s", what, skew, fitsThen(g, then))}, nil
		}
	}
	then, err := x.placeAnyway(ctx, with)
	if err != nil || then == nil {
		return nil, err
	}
	return &Suggestion{Kind: SuggestSpread, Verified: true, Message: fmt.Sprintf("%s; whenUnsatisfiable: ScheduleAnyway (a preference) would let the gang start: %s", what, fitsThen(g, then))}, nil
}

// placeAnyway places the gang with its hard spread made a preference; nil
// when it still does not start.
func (x *explainer) placeAnyway(_ context.Context, with func(func(*corev1.TopologySpreadConstraint)) (*gang.Placement, error)) (*gang.Placement, error) {
	then, err := with(func(mc *corev1.TopologySpreadConstraint) { mc.WhenUnsatisfiable = corev1.ScheduleAnyway })
	if err != nil || then.Verdict != gang.VerdictPlaced {
		return nil, err
	}
	return then, nil
}

func isAre(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}
