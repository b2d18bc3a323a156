package explain

import (
	"context"
	"fmt"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// lowerMinMember proves that the gang would start with its minimum lowered
// to how many fit at most.
func (x *explainer) lowerMinMember(ctx context.Context, g *gang.Gang, p *gang.Placement, _ *Explanation) (*Suggestion, error) {
	if g.IsLonePod() || p.MaxPlaceable <= 0 || p.MaxPlaceable >= g.MinMember {
		return nil, nil
	}
	lower := *g
	lower.MinMember = p.MaxPlaceable
	placed, err := x.place(ctx, x.snap, &lower)
	if err != nil || placed.Verdict != gang.VerdictPlaced {
		return nil, err
	}
	waiting := len(g.PendingUngated()) - len(placed.Assignments)
	msg := fmt.Sprintf("lowering the minimum (%s) from %d to %d would let the gang start: %s",
		g.Source.MinimumField(), g.MinMember, p.MaxPlaceable, fitsThen(g, placed))
	if waiting > 0 {
		msg += fmt.Sprintf(" and %d wait(s)", waiting)
	}
	return &Suggestion{Kind: SuggestLowerMinMember, Verified: true, MinMember: p.MaxPlaceable, Message: msg}, nil
}
