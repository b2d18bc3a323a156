package describe

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// Placement prints a plan for people: the verdict and message, then every
// member with its node, score and status. -o wide adds each member's
// requests and, for the member that blocks the gang, why no node takes it.
func Placement(out io.Writer, p *gang.Placement, o Options) error {
	verdict := string(p.Verdict)
	if p.Verdict == gang.VerdictPlaced && !p.Verified() {
		verdict += " (not verified)"
	}
	fmt.Fprintf(out, "%s: %s\n", verdict, p.Message)
	if line := admissionLine(p); line != "" {
		fmt.Fprintln(out, line)
	}
	members := p.Members()
	// Each status's members in natural order of their names (train-2
	// before train-10); they were placed in queue order.
	slices.SortStableFunc(members, func(a, b gang.MemberPlan) int {
		return cmp.Or(cmp.Compare(planRank(a.Status), planRank(b.Status)), comparePods(a.Pod, b.Pod))
	})
	devices := slices.ContainsFunc(members, func(m gang.MemberPlan) bool { return len(m.Claims) > 0 })
	columns := []string{"Pod", "Node", "Score", "Status"}
	if devices {
		columns = append(columns, "Devices")
	}
	if o.Wide {
		columns = append(columns, "Requests", "Message")
	}
	var rows [][]any
	for _, m := range members {
		node, score := m.Node, ""
		if node == "" {
			node = "<none>"
		}
		if m.Status == gang.PlanPlaced || m.Status == gang.PlanFits {
			score = fmt.Sprint(m.Score)
		}
		row := []any{m.Pod.Namespace + "/" + m.Pod.Name, node, score, string(m.Status)}
		if devices {
			row = append(row, gang.FormatDevices(m.Claims))
		}
		if o.Wide {
			msg := "-"
			if b := p.Blocker; b != nil && b.Pod.UID == m.Pod.UID && b.Pod.Namespace == m.Pod.Namespace && b.Pod.Name == m.Pod.Name {
				msg = b.Message
			}
			row = append(row, gang.FormatRequests(m.Pod), msg)
		}
		rows = append(rows, row)
	}
	if err := printTable(out, o.NoHeaders, columns, rows); err != nil {
		return err
	}
	if len(p.PlacedLater) > 0 {
		fmt.Fprintln(out, placedLater(p))
	}
	if o.Configuration != "" {
		fmt.Fprintln(out, o.Configuration)
	}
	notEvaluated := p.AllNotEvaluated()
	if len(notEvaluated) > 0 {
		fmt.Fprintln(out, "Not evaluated (the plan does not take these into account):")
		for _, n := range notEvaluated {
			fmt.Fprintf(out, "  - %s\n", n)
		}
	}
	return nil
}

// placedLater says which members were tried again after the members
// queued behind them, which they need (docs/design.md#gangs).
func placedLater(p *gang.Placement) string {
	return fmt.Sprintf("Order: %s fit only once members queued behind them were placed, and were tried again after them", strings.Join(gang.PodKeys(naturalPods(p.PlacedLater)), ", "))
}

// planRank orders the plan's statuses as Placement.Members lists them:
// running, then planned, then those that do not fit, then terminating.
func planRank(s gang.PlanStatus) int {
	switch s {
	case gang.PlanRunning:
		return 0
	case gang.PlanPlaced, gang.PlanFits:
		return 1
	case gang.PlanDoesNotFit:
		return 2
	}
	return 3
}

// admissionLine says what the queueing layer that admits the gang's
// workloads decided, when it admits them ("" otherwise: its refusal is the
// placement's message).
func admissionLine(p *gang.Placement) string {
	a := p.Admission
	if a == nil || !a.Admitted || a.Summary == "" {
		return ""
	}
	return a.Layer + ": " + a.Summary
}
