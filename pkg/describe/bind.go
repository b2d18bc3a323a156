package describe

import (
	"fmt"
	"io"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang/bind"
)

// BindReport prints what bind did for people: the verdict (and the step
// that stopped it), the message, then one row per member.
func BindReport(out io.Writer, r *bind.Report, o Options) error {
	verdict := string(r.Verdict)
	if r.Reason != "" {
		verdict += " (" + string(r.Reason) + ")"
	}
	fmt.Fprintf(out, "%s: %s\n", verdict, r.Message)
	if len(r.Members) == 0 {
		return nil
	}
	var rows [][]any
	for _, m := range r.Members {
		rows = append(rows, []any{m.Pod.Namespace + "/" + m.Pod.Name, m.Node, string(m.Result), m.Message})
	}
	return printTable(out, o.NoHeaders, []string{"Pod", "Node", "Result", "Message"}, rows)
}
