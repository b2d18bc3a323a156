package gang

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// GateResult is a gang scheduler's own admission decision about a gang,
// taken before any pod is placed (each system's gate is in its wing,
// Gater or Session).
type GateResult struct {
	// Gate names the check as the scheduler names it (a PreFilter's name).
	Gate string
	// Check names it among admit's checks: MinResources.
	Check  string
	Passed bool
	// NotEvaluated says why the gate could not be checked (its inputs
	// could not be read); such a gate passes, holding nothing back, and
	// admit reports it as skipped.
	NotEvaluated string
	// Reason is a CamelCase word for a refusal; empty when passed.
	Reason string
	// Message is what the scheduler says, worded as it words it.
	Message string
	// Detail says the same for people where the scheduler's words do not
	// (some print Go's rendering of a ResourceList): the figures
	// compared, as kubectl prints quantities. Empty when Message is enough.
	Detail string
	// Fix says what would let the gate pass, when neither Message nor
	// Detail says it; empty otherwise.
	Fix string
	// Shortfall is how much of each resource is missing when a resource
	// check refused; nil otherwise.
	Shortfall corev1.ResourceList
	// Needs is, for a queue's limit, what the queue must hold for the
	// gang's minimum, in the resources it fell short of (what it holds
	// plus the minimum's requests); nil otherwise.
	Needs corev1.ResourceList
	// Figures are the numbers the decision compared, by name, for display.
	Figures map[string]string
}

// SourceGate is the gate the gang's own scheduler applies before it places
// a member (its system's Gate, or its session's); nil when it has none.
func SourceGate(snap *schedule.Snapshot, g *Gang, nodes []*framework.NodeInfo) *GateResult {
	switch s := SystemOf(g.Source).(type) {
	case Opener:
		return s.Open(snap, g, nodes).Gate()
	case Gater:
		return s.Gate(snap, g, nodes)
	}
	return nil
}

// ApplyGate makes the placement honour its source's gate: a gang the gate
// holds back is not placed, whatever would fit (its scheduler never tries
// a member), and the message says why with the gate's figures. The plan
// that would fit stays, for the diagnosis, and so does what placement
// alone said (UngatedVerdict, UngatedMessage).
func (p *Placement) ApplyGate(r *GateResult) {
	if r == nil || r.Passed {
		return
	}
	p.Gate = r
	p.UngatedVerdict, p.UngatedMessage = p.Verdict, p.Message
	if p.Verdict == VerdictPlaced {
		p.Verdict = VerdictUnschedulable
		p.BestAttempt, p.Assignments, p.Unplaced = p.Assignments, nil, nil
	}
	why := r.Message
	if r.Detail != "" {
		why = r.Detail
	}
	if r.Fix != "" {
		why += "; to fix: " + r.Fix
	}
	p.Message = fmt.Sprintf("gang %s is held back by %s (%s): %s", p.Gang.Key(), r.Gate, r.Reason, why)
}

// NeedFreeShort words, per requested resource in name order, what is
// needed, what is free and what is short, as kubectl prints quantities:
// "cpu need 12, free 3, short 9; pods need 4, free 400".
func NeedFreeShort(need, free, short corev1.ResourceList) string {
	var parts []string
	for _, name := range sortedKeys(need) {
		q, f := Canonical(need[name]), Canonical(free[name])
		part := fmt.Sprintf("%s need %s, free %s", name, q.String(), f.String())
		if sq, ok := short[name]; ok && sq.Sign() > 0 {
			part += ", short " + sq.String()
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}

// FormatResources renders a ResourceList as "cpu=4, memory=8Gi", by name.
func FormatResources(rl corev1.ResourceList) string {
	names := make([]string, 0, len(rl))
	for name := range rl {
		names = append(names, string(name))
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, name := range names {
		q := rl[corev1.ResourceName(name)]
		parts[i] = name + "=" + q.String()
	}
	return strings.Join(parts, ", ")
}

// Canonical returns q re-created from its value so it prints in canonical
// form whatever arithmetic produced it.
func Canonical(q resource.Quantity) resource.Quantity {
	if q.MilliValue()%1000 == 0 {
		return *resource.NewQuantity(q.Value(), q.Format)
	}
	return *resource.NewMilliQuantity(q.MilliValue(), q.Format)
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
