package describe

import (
	"fmt"
	"io"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// Placement prints a plan for people: the verdict and message, then every
// member with its node, score and status.
func Placement(out io.Writer, p *gang.Placement, o Options) error {
	fmt.Fprintf(out, "%s: %s\n", p.Verdict, p.Message)
	var rows [][]any
	for _, m := range p.Members() {
		node, score := m.Node, ""
		if node == "" {
			node = "<none>"
		}
		if m.Status == gang.PlanPlaced || m.Status == gang.PlanFits {
			score = fmt.Sprint(m.Score)
		}
		rows = append(rows, []any{m.Pod.Namespace + "/" + m.Pod.Name, node, score, string(m.Status)})
	}
	return printTable(out, o.NoHeaders, []string{"Pod", "Node", "Score", "Status"}, rows)
}
