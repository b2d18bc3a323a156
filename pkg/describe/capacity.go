package describe

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang/capacity"
)

// CapacityLine is one shape's count, as capacity prints it.
type CapacityLine struct {
	// Name is the shape as the user named it: podgroup/X, job/train.
	Name   string
	Result *capacity.Result
}

// CopiesText words a count: "4", "4 (not verified)", "at least 1000".
func CopiesText(c *capacity.Result) string {
	s := fmt.Sprint(c.Copies)
	if c.AtLeast {
		s = "at least " + s
	}
	if c.Copies > 0 && !c.Verified() {
		s += " (not verified)"
	}
	return s
}

// NextCopy is why the next copy does not fit, or that it was not tried.
func NextCopy(c *capacity.Result) string {
	if c.AtLeast {
		return "not tried (--max)"
	}
	return c.Reason
}

// Capacity prints each shape's count, then (when chart is not nil) the
// free accelerators by hole size. -o wide adds the copies' domains and
// the whole message of the copy that does not fit.
func Capacity(out io.Writer, lines []CapacityLine, chart *capacity.HoleChart, o Options) error {
	if len(lines) > 0 {
		columns := []string{"NAME", "NAMESPACE", "MEMBERS", "COPIES", "NEXT COPY"}
		if o.Wide {
			columns = []string{"NAME", "NAMESPACE", "MEMBERS", "COPIES", "DOMAINS", "NEXT COPY"}
		}
		var rows [][]any
		for _, l := range lines {
			c := l.Result
			next := NextCopy(c)
			if o.Wide && c.Stop != nil {
				next = c.Stop.Message
			}
			row := []any{l.Name, c.Gang.Namespace, fmt.Sprint(len(c.Gang.Members)), CopiesText(c)}
			if o.Wide {
				row = append(row, domainsText(c.Domains))
			}
			rows = append(rows, append(row, next))
		}
		if err := printFitTable(out, o.NoHeaders, o.Wide, columns, rows); err != nil {
			return err
		}
		for _, l := range lines {
			if n := l.Result.NotEvaluated; len(n) > 0 {
				fmt.Fprintf(out, "Not evaluated for %s (the count does not take these into account):\n", l.Name)
				for _, s := range n {
					fmt.Fprintf(out, "  - %s\n", s)
				}
			}
		}
	}
	if chart == nil {
		return nil
	}
	if len(lines) > 0 {
		fmt.Fprintln(out)
	}
	return HoleChart(out, chart)
}

// domainsText counts the copies per domain: "zone-a x2, zone-b".
func domainsText(domains []string) string {
	if len(domains) == 0 {
		return "-"
	}
	var order []string
	count := map[string]int{}
	for _, d := range domains {
		if count[d] == 0 {
			order = append(order, d)
		}
		count[d]++
	}
	parts := make([]string, len(order))
	for i, d := range order {
		parts[i] = d
		if count[d] > 1 {
			parts[i] += fmt.Sprintf(" x%d", count[d])
		}
	}
	return strings.Join(parts, ", ")
}

// chartBar is the widest bar of the hole chart, so that a row fits 80
// columns.
const chartBar = 50

// HoleChart prints the free accelerators by hole size: per resource and
// domain, a bar per hole size some node has (largest first, down to none
// free) with the count of nodes that have it; sizes no node has are left
// out (JSON lists them all). Rows fit 80 columns.
func HoleChart(out io.Writer, c *capacity.HoleChart) error {
	left := ""
	if c.Unschedulable > 0 {
		left = fmt.Sprintf("\n(%d node(s) left out: cordoned or not Ready)", c.Unschedulable)
	}
	if len(c.Resources) == 0 {
		_, err := fmt.Fprintf(out, "No schedulable node has an extended resource or DRA devices to chart.%s\n", left)
		return err
	}
	by := "the whole cluster"
	if c.TopologyKey != "" {
		by = "by " + c.TopologyKey
	}
	for i, r := range c.Resources {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "Free %s per schedulable node, %s%s:\n", r.Resource, by, left)
		most := 0
		for _, d := range r.Domains {
			for _, n := range d.Holes {
				most = max(most, n)
			}
		}
		width := len(fmt.Sprint(r.Largest))
		for _, d := range r.Domains {
			name := d.Value
			if name == "" {
				name = "cluster"
			}
			fmt.Fprintf(out, "%s: %d node(s), %d free\n", name, d.Nodes, d.Free)
			for k := int64(len(d.Holes)) - 1; k >= 0; k-- {
				n := d.Holes[k]
				if n == 0 {
					continue // compact: the sizes some node has
				}
				bar := max(1, n*chartBar/most)
				fmt.Fprintf(out, "  %*d free %-*s %d\n", width, k, chartBar, strings.Repeat("#", bar), n)
			}
		}
	}
	return nil
}
