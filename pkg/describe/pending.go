package describe

import (
	"fmt"
	"io"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/explain"
)

// Pending prints what waits for a node as kubectl get prints a list: one
// row per gang with a pending member and per pending pod of no gang, with
// the gang's kind, how many members wait, the verdict and the first reason
// (cut to the line width; -o wide keeps it whole). allNamespaces adds the
// NAMESPACE column.
func Pending(out io.Writer, lines []explain.Pending, allNamespaces bool, o Options) error {
	if len(lines) == 0 {
		if !o.NoHeaders {
			fmt.Fprintln(out, "No pending pods or gangs found.")
		}
		return nil
	}
	var columns []string
	if allNamespaces {
		columns = append(columns, "Namespace")
	}
	columns = append(columns, "Name", "Gang", "Pending", "Verdict", "Reason")
	var rows [][]any
	for i := range lines {
		l := &lines[i]
		var row []any
		if allNamespaces {
			row = append(row, l.Namespace)
		}
		kind := "-"
		switch {
		case l.Gang != nil:
			kind = gangKind(l.Gang.Source)
		case l.Group != "":
			kind = "missing " + l.Group
		}
		row = append(row, l.Name(), kind, fmt.Sprintf("%d/%d", l.PendingMembers, l.Members), string(l.Verdict), l.Reason)
		rows = append(rows, row)
	}
	return printFitTable(out, o.NoHeaders, o.Wide, columns, rows)
}

// gangKind names a gang's PodGroup kind briefly.
func gangKind(src gang.Source) string {
	switch src {
	case gang.SourceNative:
		return "native"
	case gang.SourceVolcano:
		return "volcano"
	case gang.SourceCoscheduling:
		return "coscheduling"
	case gang.SourceKueue:
		return "kueue"
	}
	return string(src)
}
