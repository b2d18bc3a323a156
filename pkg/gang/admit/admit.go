// Package admit decides whether a gang may start: validity, its source's
// own gate, ResourceQuota headroom for members that do not exist yet, and
// whole-gang placement, each check with its figures; and Ungate releases an
// admitted gang's members (docs/design.md#commands).
package admit

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// Result is how one admission check came out.
type Result string

// The check results.
const (
	// ResultPassed: the check passed.
	ResultPassed Result = "Passed"
	// ResultFailed: the check holds the gang back.
	ResultFailed Result = "Failed"
	// ResultSkipped: the check does not apply to this gang; it does not
	// hold it back.
	ResultSkipped Result = "Skipped"
	// ResultNotEvaluated: the check's inputs could not be read. Unknown is
	// not a pass: the gang is not admitted.
	ResultNotEvaluated Result = "NotEvaluated"
)

// Passes reports whether the result lets the gang through.
func (r Result) Passes() bool { return r == ResultPassed || r == ResultSkipped }

// Check is one admission check with its figures.
type Check struct {
	Name    string
	Result  Result
	Reason  string
	Message string
	// SchedulerMessage is the gang scheduler's own words for a source gate's
	// refusal, where Message words it for people.
	SchedulerMessage string
	Figures          map[string]string
}

// Verdict is the admission decision.
type Verdict string

// The admission verdicts.
const (
	// VerdictAdmitted: every check passed (exit 0).
	VerdictAdmitted Verdict = "Admitted"
	// VerdictRejected: at least one check failed (exit 3).
	VerdictRejected Verdict = "Rejected"
	// VerdictUnverified: no check failed, but at least one could not be
	// evaluated (exit 3): unknown is not a pass, nor a refusal
	// (docs/design.md#one-verdict-per-question).
	VerdictUnverified Verdict = "Unverified"
)

// Admission is the gang admission decision.
type Admission struct {
	Gang      *gang.Gang
	Verdict   Verdict
	Checks    []Check
	Placement *gang.Placement
}

// Admitted reports whether the gang may start.
func (a *Admission) Admitted() bool { return a.Verdict == VerdictAdmitted }

// passedIf is ResultPassed when ok, else ResultFailed.
func passedIf(ok bool) Result {
	if ok {
		return ResultPassed
	}
	return ResultFailed
}

// The names of the admission checks, in the order they run.
const (
	CheckValidity     = "Validity"
	CheckMinResources = "MinResources"
	CheckQuota        = "ResourceQuota"
	CheckPlacement    = "Placement"
)

// Gang decides whether the gang may start: it is valid, its source's own
// gate passes (gang.SourceGate; a check named by the source: a minimum of
// resources, a queue's), new members fit the namespace's
// ResourceQuotas, and the whole gang can be placed. Every check runs, so the
// answer lists every reason at once.
func Gang(ctx context.Context, snap *schedule.Snapshot, g *gang.Gang, opts gang.PlaceOptions) (*Admission, error) {
	a := &Admission{Gang: g}
	v := gang.Validate(g)
	validity := Check{Name: CheckValidity, Result: passedIf(v.Valid), Reason: v.Reason, Message: v.Message,
		Figures: map[string]string{"valid": fmt.Sprint(v.ValidCount), "minMember": fmt.Sprint(v.MinMember)}}
	if v.Valid {
		validity.Message = fmt.Sprintf("%d valid member(s), minimum %d", v.ValidCount, v.MinMember)
	}
	a.Checks = append(a.Checks, validity)

	// One placement call evaluates the source's gate too (gang.PlaceOn);
	// admit reports it as a check of its own, before quota and placement.
	base, err := schedule.NewScheduler(snap, schedule.Options{Profile: opts.Profile, Parallelism: opts.Parallelism})
	if err != nil {
		return nil, err
	}
	p, err := gang.PlaceOn(ctx, snap, base, g, opts)
	if err != nil {
		return nil, err
	}
	adm := p.Admission
	refused := adm != nil && !adm.Admitted && adm.Gate != nil
	if adm != nil {
		// A queueing layer decides first (docs/design.md#queueing-layers).
		a.Checks = append(a.Checks, admissionCheck(adm))
	}
	switch gate := p.SourceGate; {
	case refused:
		a.Checks = append(a.Checks, Check{Name: CheckMinResources, Result: ResultSkipped, Message: "not asked: " + adm.Layer + " does not admit the gang, and it decides before any scheduler"})
	case gate == nil:
		a.Checks = append(a.Checks, Check{Name: CheckMinResources, Result: ResultSkipped, Message: "the gang source sets no minResources"})
	case gate.NotEvaluated != "":
		// Unknown inputs that by the source's own rules hold nothing back
		// (docs/design.md#gangs): skipped, and said so.
		a.Checks = append(a.Checks, Check{Name: gate.Check, Result: ResultSkipped, Reason: string(ResultNotEvaluated), Message: gate.Message})
	default:
		a.Checks = append(a.Checks, gateCheck(gate.Check, gate))
	}
	if hold := p.Gate; hold != nil && hold != p.SourceGate && hold.Gate != gang.HoldValidity && hold.Gate != gang.HoldResourceQuota && !refused {
		// A hold of the source's own after placement (a queue's share at
		// allocation, a task readiness: Session): a check of its own.
		a.Checks = append(a.Checks, gateCheck(hold.Gate, hold))
	}
	a.Checks = append(a.Checks, quotaCheck(gang.Quota(snap, g)))

	a.Placement = p
	// The gate is a check of its own above; this one says whether the
	// members fit.
	verdict, message := p.Verdict, p.Message
	if p.Gate != nil {
		verdict, message = p.UngatedVerdict, p.UngatedMessage
	}
	placement := Check{Name: CheckPlacement, Result: passedIf(verdict == gang.VerdictPlaced), Reason: string(verdict), Message: message,
		Figures: map[string]string{"maxPlaceable": fmt.Sprint(p.MaxPlaceable), "minMember": fmt.Sprint(p.MinMember)}}
	if verdict == gang.VerdictPlaced && len(p.AllNotEvaluated()) > 0 {
		// Placed as far as evaluated is not a pass (docs/design.md#pipeline).
		placement.Result, placement.Reason = ResultNotEvaluated, string(ResultNotEvaluated)
		placement.Message += "; not evaluated: " + strings.Join(p.AllNotEvaluated(), "; ")
	}
	a.Checks = append(a.Checks, placement)

	a.Verdict = verdictOf(a.Checks)
	return a, nil
}

// admissionCheck is a queueing layer's decision as a check of its own:
// passed when it admits the gang (what it could not evaluate makes it not
// evaluated), failed when it does not.
func admissionCheck(adm *gang.Admission) Check {
	switch {
	case adm.Admitted && len(adm.NotEvaluated) > 0:
		return Check{Name: adm.Layer, Result: ResultNotEvaluated, Reason: string(ResultNotEvaluated), Message: adm.Summary + "; not evaluated: " + strings.Join(adm.NotEvaluated, "; ")}
	case adm.Admitted:
		return Check{Name: adm.Layer, Result: ResultPassed, Message: adm.Summary}
	case adm.Gate != nil:
		return gateCheck(adm.Gate.Check, adm.Gate)
	}
	return Check{Name: adm.Layer, Result: ResultNotEvaluated, Reason: string(ResultNotEvaluated), Message: strings.Join(adm.NotEvaluated, "; ")}
}

// verdictOf is the admission verdict of the checks: Rejected when one
// failed, else Unverified when one could not be evaluated, else Admitted.
func verdictOf(checks []Check) Verdict {
	v := VerdictAdmitted
	for _, c := range checks {
		switch {
		case c.Result == ResultFailed:
			return VerdictRejected
		case !c.Result.Passes():
			v = VerdictUnverified
		}
	}
	return v
}

// notEvaluated is a check whose inputs could not be read: unknown is not a
// pass, so the gang is not admitted.
func notEvaluated(name, why string) Check {
	return Check{Name: name, Result: ResultNotEvaluated, Reason: string(ResultNotEvaluated), Message: why}
}

// quotaCheck is the ResourceQuota check of a quota result.
func quotaCheck(q gang.QuotaResult) Check {
	c := Check{Name: CheckQuota, Result: ResultPassed, Message: q.Message, Figures: q.Figures}
	switch q.Outcome {
	case gang.QuotaNone:
		c.Result = ResultSkipped
	case gang.QuotaUnknown:
		return notEvaluated(CheckQuota, q.Message)
	case gang.QuotaExceeded:
		c.Result, c.Reason = ResultFailed, "QuotaExceeded"
	}
	return c
}

func gateCheck(name string, r *gang.GateResult) Check {
	if r == nil {
		return Check{Name: name, Result: ResultSkipped}
	}
	c := Check{Name: name, Result: passedIf(r.Passed), Reason: r.Reason, Message: r.Message, Figures: r.Figures}
	if r.Detail != "" {
		c.Message, c.SchedulerMessage = r.Detail, r.Message
	}
	if r.Fix != "" {
		c.Message += "; to fix: " + r.Fix
	}
	return c
}
