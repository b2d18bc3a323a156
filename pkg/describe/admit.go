package describe

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang/admit"
)

// Admission prints the admission decision for people: the verdict, one row
// per check with its details, and what --ungate did (u, when it ran).
func Admission(out io.Writer, a *admit.Admission, u *admit.UngateReport, o Options) error {
	fmt.Fprintf(out, "%s: gang %s (%s)\n", a.Verdict, a.Gang.Key(), a.Gang.Source)
	var rows [][]any
	for _, c := range a.Checks {
		rows = append(rows, []any{c.Name, string(c.Result), c.Message})
	}
	if err := printTable(out, o.NoHeaders, []string{"Check", "Result", "Details"}, rows); err != nil {
		return err
	}
	if o.Configuration != "" {
		fmt.Fprintln(out, o.Configuration)
	}
	if u == nil {
		return nil
	}
	switch {
	case len(u.Changed) > 0:
		fmt.Fprintf(out, "Gate %s: nothing more removed: %d member(s) changed since the snapshot: %s\n", u.Gate, len(u.Changed), strings.Join(naturalKeys(u.Changed), ", "))
		if len(u.Ungated) > 0 {
			fmt.Fprintf(out, "Gate %s was already removed from: %s\n", u.Gate, strings.Join(naturalKeys(u.Ungated), ", "))
		}
	default:
		fmt.Fprintf(out, "Gate %s removed from %d member(s)", u.Gate, len(u.Ungated))
		if len(u.Untouched) > 0 {
			fmt.Fprintf(out, "; %d did not have it", len(u.Untouched))
		}
		fmt.Fprintln(out)
	}
	if len(u.Bound)+len(u.NotBoundYet) > 0 {
		fmt.Fprintf(out, "Bound by their scheduler within %s: %d of %d released member(s)\n", u.Waited.Round(time.Millisecond),
			len(u.Bound), len(u.Bound)+len(u.NotBoundYet))
	}
	return nil
}
