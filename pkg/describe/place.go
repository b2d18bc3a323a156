package describe

import (
	"fmt"
	"io"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// Placement prints a plan for people: the verdict and message, then every
// member with its node, score and status. -o wide adds each member's
// requests and, for the member that blocks the gang, why no node takes it.
func Placement(out io.Writer, p *gang.Placement, o Options) error {
	fmt.Fprintf(out, "%s: %s\n", p.Verdict, p.Message)
	columns := []string{"Pod", "Node", "Score", "Status"}
	if o.Wide {
		columns = append(columns, "Requests", "Message")
	}
	var rows [][]any
	for _, m := range p.Members() {
		node, score := m.Node, ""
		if node == "" {
			node = "<none>"
		}
		if m.Status == gang.PlanPlaced || m.Status == gang.PlanFits {
			score = fmt.Sprint(m.Score)
		}
		row := []any{m.Pod.Namespace + "/" + m.Pod.Name, node, score, string(m.Status)}
		if o.Wide {
			msg := "-"
			if b := p.Blocker; b != nil && b.Pod.UID == m.Pod.UID && b.Pod.Namespace == m.Pod.Namespace && b.Pod.Name == m.Pod.Name {
				msg = b.Message
			}
			row = append(row, gang.FormatRequests(m.Pod), msg)
		}
		rows = append(rows, row)
	}
	return printTable(out, o.NoHeaders, columns, rows)
}
