package describe

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/explain"
)

// Explanation prints an explanation for people: the verdict first, then
// the summary line, the node table and (for gangs) the gang's figures and
// what would make it fit.
func Explanation(out io.Writer, e *explain.Explanation, o Options) error {
	w := &explainWriter{out: out, noHeaders: o.NoHeaders, wide: o.Wide, color: o.Color}
	return w.write(e)
}

// explainWriter prints an explanation for people: the verdict first, then
// the summary line, the node table and (for gangs) the gang's figures and
// what would make it fit.
type explainWriter struct {
	out       io.Writer
	noHeaders bool
	wide      bool
	color     bool
}

// ANSI styles, used only on a terminal.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
)

func (w *explainWriter) style(s, code string) string {
	if !w.color {
		return s
	}
	return code + s + ansiReset
}

func (w *explainWriter) title(s string) {
	fmt.Fprintf(w.out, "\n%s\n", w.style(s, ansiBold))
}

func (w *explainWriter) write(e *explain.Explanation) error {
	verdictColor := map[explain.Verdict]string{
		explain.VerdictSchedulable: ansiGreen, explain.VerdictUnschedulable: ansiRed, explain.VerdictGated: ansiYellow,
	}[e.Verdict]
	var subject string
	if e.Gang != nil {
		subject = describeGang(e.Gang)
	} else {
		subject = "pod " + e.Pod.Namespace + "/" + e.Pod.Name
	}
	fmt.Fprintf(w.out, "%s: %s\n", w.style(string(e.Verdict), ansiBold+verdictColor), subject)
	if m := e.Member; m != nil {
		fmt.Fprintln(w.out, memberAlone(m))
	}
	fmt.Fprintln(w.out, e.Message)

	if len(e.Nodes) > 0 {
		w.title(tableContext(e))
		if err := w.nodeTable(e); err != nil {
			return err
		}
	}
	if e.Gang != nil {
		if err := w.gang(e); err != nil {
			return err
		}
	}
	if len(e.Suggestions) > 0 {
		w.title("What would make it fit (each change proven by placing on a changed copy of the snapshot):")
		for _, s := range e.Suggestions {
			mark := ""
			if s.Verified {
				mark = w.style(" (verified)", ansiGreen)
			}
			fmt.Fprintf(w.out, "  - %s%s\n", s.Message, mark)
		}
	} else if e.Verdict == explain.VerdictUnschedulable {
		w.title("What would make it fit:")
		fmt.Fprintln(w.out, "  nothing tried was enough: no preemption, added node, repaired node or smaller minimum made it fit")
	}
	if len(e.NotEvaluated) > 0 {
		w.title("Not evaluated (the verdict does not take these into account):")
		for _, s := range e.NotEvaluated {
			fmt.Fprintf(w.out, "  - %s\n", s)
		}
	}
	return nil
}

// describeGang names a gang and where it comes from.
func describeGang(g *gang.Gang) string {
	switch g.Source {
	case gang.SourceSelector:
		return fmt.Sprintf("gang of the pods matching %q in %s", g.Name, orAll(g.Namespace))
	case gang.SourceFile:
		return fmt.Sprintf("gang %s from manifests (what-if)", g.Key())
	}
	return fmt.Sprintf("gang %s (%s PodGroup)", g.Key(), g.Source)
}

func orAll(ns string) string {
	if ns == "" {
		return "every namespace"
	}
	return "namespace " + ns
}

// tableContext says whose cycle the node table shows, and in what state.
func tableContext(e *explain.Explanation) string {
	pod := fmt.Sprintf("%s/%s (%s)", e.Pod.Namespace, e.Pod.Name, gang.FormatRequests(e.Pod))
	switch {
	case e.Gang == nil:
		return "Nodes for pod " + pod + "; FITS: how many pods like it each node holds:"
	case e.Blocked:
		s := "Nodes for " + pod + ", the first member that does not fit"
		if n := len(e.PlacedBefore); n > 0 {
			s += fmt.Sprintf(", after %d member(s) before it are placed", n)
		}
		if e.Domain != "" {
			s += " in " + e.TopologyKey + "=" + e.Domain
		}
		return s + "; FITS: how many more members like it each node holds:"
	}
	return "Nodes for " + pod + ", the gang's largest pending member; FITS: how many members like it each node holds:"
}

// nodeTable prints one row per node; -o wide adds a column per Filter plugin.
func (w *explainWriter) nodeTable(e *explain.Explanation) error {
	columns := []string{"Node", "Feasible", "Score"}
	if e.Gang != nil {
		columns = append(columns, "Placed")
	}
	if e.TopologyKey != "" {
		columns = append(columns, domainColumn(e.TopologyKey))
	}
	columns = append(columns, "Fits", "Reason")
	if w.wide {
		columns = append(columns, e.FilterPlugins...)
	}
	var rows [][]any
	for i := range e.Nodes {
		n := &e.Nodes[i]
		feasible, score := "no", "-"
		if n.Feasible {
			feasible, score = "yes", fmt.Sprint(n.Score)
		}
		row := []any{n.Name, feasible, score}
		if e.Gang != nil {
			row = append(row, dashIfZero(n.Placed))
		}
		if e.TopologyKey != "" {
			row = append(row, orDash(n.Domain))
		}
		fits := fmt.Sprint(n.Fits)
		if n.OutsideDomain {
			fits = "0"
		} else if n.FitsAtMost {
			fits = "<=" + fits
		}
		row = append(row, fits, nodeReason(e, n))
		if w.wide {
			for _, plugin := range e.FilterPlugins {
				row = append(row, n.FilterDetail(plugin))
			}
		}
		rows = append(rows, row)
	}
	return printTable(w.out, w.noHeaders, columns, rows)
}

// domainColumn names the topology column after the key's last part:
// topology.kubernetes.io/zone is ZONE.
func domainColumn(key string) string {
	if i := strings.LastIndexAny(key, "/."); i >= 0 && i < len(key)-1 {
		return key[i+1:]
	}
	return key
}

func dashIfZero(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// nodeReason is the REASON cell: the first failing plugin and its reason,
// with the taint, the shortfalls or the missing features spelled out. A
// node outside the gang's domain says so, and how it would do otherwise.
func nodeReason(e *explain.Explanation, n *explain.Node) string {
	verdict := n.Detail()
	if !n.OutsideDomain {
		return verdict
	}
	if n.Plugin == "" && len(n.Reasons) == 0 {
		return fmt.Sprintf("outside %s, else fits %d", e.Domain, n.Fits)
	}
	return "outside " + e.Domain + ", and " + verdict
}

// gang prints validity, how many fit and where, what blocks the next
// member, and the topology domains.
func (w *explainWriter) gang(e *explain.Explanation) error {
	g, p, v := e.Gang, e.Placement, e.Validity
	w.title("Gang:")
	validity := fmt.Sprintf("valid: %d valid member(s), minimum %d", v.ValidCount, v.MinMember)
	if !v.Valid {
		validity = fmt.Sprintf("invalid (%s): %s", v.Reason, v.Message)
	}
	fmt.Fprintf(w.out, "  Validity:     %s\n", validity)
	for _, t := range v.Tasks {
		fmt.Fprintf(w.out, "                task %s: %d valid, minimum %d\n", t.Name, t.Valid, t.Min)
	}
	fmt.Fprintf(w.out, "  Members:      %d, %d running, %d pending", len(g.Members), len(p.Running), len(g.Members)-len(p.Running))
	if e.GatedMembers > 0 {
		fmt.Fprintf(w.out, " (%d gated)", e.GatedMembers)
	}
	fmt.Fprintln(w.out)
	fmt.Fprintf(w.out, "  Fit at once:  %d of minimum %d%s\n", p.MaxPlaceable, p.MinMember, placedWhere(p))
	if len(e.Blocking) > 0 {
		fmt.Fprintf(w.out, "  Blocked by:   %s/%s fits no node", e.Pod.Namespace, e.Pod.Name)
		if e.Domain != "" {
			fmt.Fprintf(w.out, " in %s=%s", e.TopologyKey, e.Domain)
		}
		fmt.Fprintln(w.out, ":")
		for _, b := range e.Blocking {
			name := b.Plugin
			if name == "" {
				name = "(topology)"
			}
			fmt.Fprintf(w.out, "                %d node(s) %s: %s\n", b.Nodes, name, strings.Join(b.Reasons, ", "))
		}
	}
	if len(e.Domains) == 0 {
		return nil
	}
	w.title(fmt.Sprintf("Members each %s holds at once (minimum %d):", p.TopologyKey, p.MinMember))
	var rows [][]any
	for _, d := range e.Domains {
		complete := "no"
		if d.Complete {
			complete = "yes"
		}
		note := d.Skipped
		if note != "" {
			note = "not enough room: " + note
		}
		rows = append(rows, []any{d.Value, fmt.Sprint(d.Nodes), fmt.Sprint(d.Holds), complete, orDash(note)})
	}
	return printTable(w.out, w.noHeaders, []string{"Domain", "Nodes", "Holds", "Complete", "Note"}, rows)
}

// placedWhere lists where the members that fit go, briefly.
func placedWhere(p *gang.Placement) string {
	counts := map[string]int{}
	var nodes []string
	add := func(node string) {
		if counts[node] == 0 {
			nodes = append(nodes, node)
		}
		counts[node]++
	}
	for _, pod := range p.Running {
		add(pod.Spec.NodeName)
	}
	for _, a := range p.Planned() {
		add(a.Node)
	}
	if len(nodes) == 0 {
		return ""
	}
	var parts []string
	for _, n := range nodes {
		if counts[n] > 1 {
			parts = append(parts, fmt.Sprintf("%s (%d)", n, counts[n]))
		} else {
			parts = append(parts, n)
		}
	}
	s := ""
	if p.Domain != "" && p.TopologyKey != "" {
		s = " in " + p.TopologyKey + "=" + p.Domain
	}
	return s + ", on " + strings.Join(parts, ", ")
}

// memberAlone says how the member asked about does by itself.
func memberAlone(m *explain.MemberAlone) string {
	pod := m.Pod.Namespace + "/" + m.Pod.Name
	switch {
	case m.Bound:
		return fmt.Sprintf("Pod %s runs on %s already; below, its gang.", pod, m.Node)
	case m.Fits:
		return fmt.Sprintf("Pod %s alone would fit (best node %s, score %d): it waits for its gang, below.", pod, m.Node, m.Score)
	}
	return fmt.Sprintf("Pod %s does not fit by itself either: %s", pod, m.Message)
}
