package describe

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/explain"
)

// Pending prints the queue simulation as kubectl get prints a list: one
// row per gang with a pending member and per pending pod of no gang, in
// the order given (queue order unless --sort-by), with its scheduler,
// queue, priority, age, members (pending/all), the verdict and the reason
// (cut to the line width; -o wide keeps it whole and adds the position in
// the queue, the gang's kind and the nodes a starting entry goes to).
// allNamespaces adds the NAMESPACE column; SCHEDULER and QUEUE are left
// out when no line says anything there but the default.
func Pending(out io.Writer, lines []explain.Pending, allNamespaces bool, o Options) error {
	if len(lines) == 0 {
		if !o.NoHeaders {
			fmt.Fprintln(out, "No pending pods or gangs found.")
		}
		return nil
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	var columns []string
	if o.Wide {
		columns = append(columns, "Position")
	}
	if allNamespaces {
		columns = append(columns, "Namespace")
	}
	columns = append(columns, "Name")
	if o.Wide {
		columns = append(columns, "Gang")
	}
	// On a line's width, SCHEDULER and QUEUE are left out when they say
	// nothing (every pod the default scheduler's, no queue anywhere), so
	// that the reason has room; -o wide always shows them.
	showScheduler := o.Wide || slices.ContainsFunc(lines, func(l explain.Pending) bool { return l.Scheduler != corev1.DefaultSchedulerName })
	showQueue := o.Wide || slices.ContainsFunc(lines, func(l explain.Pending) bool { return l.Queue != "" })
	if showScheduler {
		columns = append(columns, "Scheduler")
	}
	if showQueue {
		columns = append(columns, "Queue")
	}
	columns = append(columns, "Priority", "Age", "Members", "Verdict")
	if o.Wide {
		columns = append(columns, "Nodes")
	}
	columns = append(columns, "Reason")
	var rows [][]any
	for i := range lines {
		l := &lines[i]
		var row []any
		if o.Wide {
			row = append(row, strconv.Itoa(l.Position))
		}
		if allNamespaces {
			row = append(row, l.Namespace)
		}
		row = append(row, l.Name())
		if o.Wide {
			kind := "-"
			switch {
			case l.Gang != nil && l.Gang.Subject != "" && l.Admission != nil:
				// A queueing layer's workload with no pods yet.
				kind = strings.ToLower(l.Admission.Layer)
			case l.Gang != nil:
				kind = gangKind(l.Gang.Source)
			case l.Group != "":
				kind = "missing " + l.Group
			}
			row = append(row, kind)
		}
		age := "<unknown>"
		if !l.Since.IsZero() && l.Since.Before(now) {
			age = duration.HumanDuration(now.Sub(l.Since))
		}
		if showScheduler {
			row = append(row, l.Scheduler)
		}
		if showQueue {
			row = append(row, cmp.Or(l.Queue, "-"))
		}
		row = append(row, strconv.Itoa(int(l.Priority)), age,
			fmt.Sprintf("%d/%d", l.PendingMembers, l.Members), string(l.Outcome))
		if o.Wide {
			row = append(row, cmp.Or(strings.Join(l.DistinctNodes(), ","), "-"))
		}
		row = append(row, l.Reason)
		rows = append(rows, row)
	}
	return printFitTable(out, o.NoHeaders, o.Wide, columns, rows)
}

// gangKind names a gang's system briefly (Rules.Name).
func gangKind(src gang.Source) string { return cmp.Or(gang.RulesOf(src).Name, string(src)) }
