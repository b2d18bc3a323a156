package explain

import (
	"context"
	"fmt"
	"slices"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// admissionFixes are the suggestions for a gang a queueing layer does not
// admit (docs/design.md#queueing-layers): each of the layer's fixes placed
// again on a changed copy of the snapshot (its objects) or of the gang (its
// workloads), offered when the layer then admits it, verified when the
// members then fit too; then the refusal itself, with who holds the quota.
func (x *explainer) admissionFixes(ctx context.Context, g *gang.Gang, p *gang.Placement) ([]Suggestion, error) {
	adm := p.Admission
	var out []Suggestion
	for _, f := range adm.Fixes {
		snap := x.snap
		if f.Objects != nil {
			changed := *x.snap
			changed.Objects = f.Objects(x.snap.Objects)
			snap = &changed
		}
		subject := g
		if f.Gang != nil {
			subject = f.Gang(g)
		}
		// The layer's objects play no part in the nodes: the explainer's
		// scheduler serves.
		then, err := x.placeOn(ctx, x.plain, snap, subject)
		if err != nil {
			return nil, err
		}
		if then.Admission == nil || !then.Admission.Admitted {
			continue
		}
		if then.Verdict == gang.VerdictPlaced && then.Verified() {
			out = append(out, Suggestion{Kind: SuggestAdmission, Verified: true, Message: fmt.Sprintf("%s: then %s %s; %s", f.Words, adm.Layer, then.Admission.Summary, fitsThen(g, then))})
			continue
		}
		out = append(out, Suggestion{Kind: SuggestAdmission, Message: fmt.Sprintf("%s: then %s %s, but %s", f.Words, adm.Layer, then.Admission.Summary, then.Message)})
	}
	// What is proven to start the gang leads.
	slices.SortStableFunc(out, func(a, b Suggestion) int { return compareBool(b.Verified, a.Verified) })
	msg := fmt.Sprintf("%s does not admit the workload (%s): %s", adm.Layer, p.Gate.Reason, adm.Message)
	if adm.Holders != "" {
		msg += "; " + adm.Holders
	}
	return append(out, Suggestion{Kind: SuggestSourceGate, Message: msg}), nil
}
