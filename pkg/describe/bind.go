package describe

import (
	"cmp"
	"fmt"
	"io"
	"slices"

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
	// The members in natural order of their names (train-2 before
	// train-10), those bound before bind ran last, as bind lists them.
	members := slices.Clone(r.Members)
	slices.SortStableFunc(members, func(a, b bind.MemberResult) int {
		return cmp.Or(cmp.Compare(boundBefore(a), boundBefore(b)), comparePods(a.Pod, b.Pod))
	})
	var rows [][]any
	for _, m := range members {
		rows = append(rows, []any{m.Pod.Namespace + "/" + m.Pod.Name, m.Node, string(m.Result), m.Message})
	}
	return printTable(out, o.NoHeaders, []string{"Pod", "Node", "Result", "Message"}, rows)
}

// boundBefore ranks the members bound before bind ran after the others.
func boundBefore(m bind.MemberResult) int {
	if m.Result == bind.OutcomeAlreadyBound {
		return 1
	}
	return 0
}
