// Package admit decides whether a gang may start: validity, its source's
// own gate, ResourceQuota headroom for members that do not exist yet, and
// whole-gang placement, each check with its figures; and Ungate releases an
// admitted gang's members (docs/design.md#commands).
package admit

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
	// VerdictRejected: at least one check failed or could not be evaluated (exit 3).
	VerdictRejected Verdict = "Rejected"
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
	CheckQueue        = "VolcanoQueue"
	CheckPlacement    = "Placement"
)

// Gang decides whether the gang may start: it is valid, its source's own
// gate passes (coscheduling's minResources against free capacity, Volcano's
// enqueue check against its queue), new members fit the namespace's
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

	// One set of node infos serves the gates and the placement.
	base, err := schedule.NewScheduler(snap, schedule.Options{Profile: opts.Profile, Parallelism: opts.Parallelism})
	if err != nil {
		return nil, err
	}
	nodes := base.NodeInfos()
	switch g.Source {
	case gang.SourceCoscheduling:
		a.Checks = append(a.Checks, gateCheck(CheckMinResources, gang.CoschedulingGate(g, nodes)))
	case gang.SourceVolcano:
		// Without Queues to read (a saved file, or a kind the user may not
		// list) the queue check cannot be made; every Volcano installation
		// has the default queue, so its absence from the snapshot is no
		// reason to hold the gang back.
		if why := ""; snap.IsUnreadable("queues."+string(gang.SourceVolcano)) || len(snap.Queues) == 0 {
			why = "the snapshot holds no Volcano Queues"
			if snap.IsUnreadable("queues." + string(gang.SourceVolcano)) {
				why = "Volcano Queues could not be listed"
			}
			a.Checks = append(a.Checks, Check{Name: CheckQueue, Result: ResultSkipped, Reason: string(ResultNotEvaluated),
				Message: fmt.Sprintf("not evaluated: %s, so queue %q's state and capability are unknown; it does not hold the gang back", why, g.Queue)})
			break
		}
		queue := findQueue(snap, g.Queue)
		a.Checks = append(a.Checks, gateCheck(CheckQueue, gang.VolcanoEnqueueGate(g, queue, nodes, gang.VolcanoQueuePods(snap.PodGroups, snap.Pods, g.Queue))))
	default:
		a.Checks = append(a.Checks, Check{Name: CheckMinResources, Result: ResultSkipped, Message: "the gang source sets no minResources"})
	}
	a.Checks = append(a.Checks, quotaCheck(gang.Quota(snap, g)))

	p, err := gang.PlaceOn(ctx, base, g, opts)
	if err != nil {
		return nil, err
	}
	a.Placement = p
	placement := Check{Name: CheckPlacement, Result: passedIf(p.Verdict == gang.VerdictPlaced), Reason: string(p.Verdict), Message: p.Message,
		Figures: map[string]string{"maxPlaceable": fmt.Sprint(p.MaxPlaceable), "minMember": fmt.Sprint(p.MinMember)}}
	if p.Verdict == gang.VerdictPlaced && !p.Verified() {
		// Placed as far as evaluated is not a pass (docs/design.md#pipeline).
		placement.Result, placement.Reason = ResultNotEvaluated, string(ResultNotEvaluated)
		placement.Message += "; not evaluated: " + strings.Join(p.AllNotEvaluated(), "; ")
	}
	a.Checks = append(a.Checks, placement)

	a.Verdict = VerdictAdmitted
	for _, c := range a.Checks {
		if !c.Result.Passes() {
			a.Verdict = VerdictRejected
		}
	}
	return a, nil
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
	return c
}

func findQueue(snap *schedule.Snapshot, name string) *unstructured.Unstructured {
	for _, u := range snap.Queues {
		if u.GetName() == name {
			return u
		}
	}
	return nil
}
