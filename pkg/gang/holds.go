package gang

import (
	"fmt"
)

// What holds a gang back besides where its members fit: the rules every
// verb that answers "will it start" applies the same way, so that place,
// explain, admit and bind give one verdict for one question
// (docs/design.md#one-verdict-per-question).

// VerdictGated is a placement whose pending members carry scheduling gates:
// kube-scheduler does not try a gated pod (its SchedulingGates PreEnqueue
// plugin), so the gang does not start until they are removed, whatever fits.
// Only place reports it; explain says Gated, bind refuses the members, and
// admit decides whether to remove them.
const VerdictGated Verdict = "Gated"

// The checks a placement may be held back by, besides its source's gate.
const (
	// HoldValidity: the gang is not valid by its source's rules (a task
	// below its minTaskMember, Tasker), so its scheduler tries no member.
	HoldValidity = "Validity"
	// HoldResourceQuota: the namespace's ResourceQuota would refuse members
	// that do not exist yet, so they would never be created.
	HoldResourceQuota = "ResourceQuota"
)

// applyValidity holds back a placed gang its source's validity rules
// refuse (ValidateWith: a task below its minTaskMember; enough members in
// all but not of each task). Placement
// already counts the members against the minimum, so only the per-task
// rule can refuse a gang placement placed.
func (p *Placement) applyValidity() {
	if p.Verdict != VerdictPlaced {
		return
	}
	if v := Validate(p.Gang); !v.Valid {
		p.ApplyGate(&GateResult{Gate: HoldValidity, Check: HoldValidity, Reason: v.Reason, Message: validityMessage(v)})
	}
}

// validityMessage words an invalid gang's validity with its per-task figures.
func validityMessage(v Validity) string {
	msg := v.Message
	for _, t := range v.Tasks {
		if t.Min > 0 && t.Valid < t.Min {
			msg += fmt.Sprintf("; task %s: %d valid, minTaskMember %d", t.Name, t.Valid, t.Min)
		}
	}
	return msg
}

// QuotaRefusal words a ResourceQuota that would refuse the new members.
func QuotaRefusal(q QuotaResult) string {
	return "the namespace's ResourceQuota would refuse the new members, so they would never exist: " + q.Message
}

// ApplyQuota makes the placement honour the namespace's ResourceQuotas for
// the members that do not exist yet (Quota): a gang whose new members the
// quota admission plugin would refuse is not placed, whatever fits, and
// quotas that could not be read leave the placement not verified. A gang
// some other check holds back already keeps that verdict.
func (p *Placement) ApplyQuota(q QuotaResult) {
	switch q.Outcome {
	case QuotaUnknown:
		p.NotEvaluated = append(p.NotEvaluated, q.Message)
	case QuotaExceeded:
		if p.Verdict != VerdictPlaced {
			return
		}
		p.ApplyGate(&GateResult{Gate: HoldResourceQuota, Check: HoldResourceQuota, Reason: "QuotaExceeded", Message: q.Message})
		p.Message = QuotaRefusal(q)
	}
}

// HoldGated gives the verdict Gated to a placement whose pending members
// carry scheduling gates, as explain does. A gang that fits once released
// keeps its Assignments (where the members go then: a plan to compare with
// what the scheduler does after the release); the message says which gates
// hold them and what placement said.
func (p *Placement) HoldGated() {
	n := p.Gang.HeldCount()
	if n == 0 {
		return
	}
	p.OnceReleased, p.Verdict = p.Verdict, VerdictGated
	p.Message = fmt.Sprintf("%d pending member(s) waiting for scheduling gates: %v; once released: %s", n, GateNames(p.Gang.Pending()), p.Message)
}
