package describe

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/explain"
)

// Explanation prints an explanation for people: the verdict first, then
// the summary line, the node table and (for gangs) the gang's figures and
// what would make it fit.
func Explanation(out io.Writer, e *explain.Explanation, o Options) error {
	w := &explainWriter{out: out, noHeaders: o.NoHeaders, wide: o.Wide, color: o.Color, maxRows: o.MaxRows, configuration: o.Configuration}
	return w.write(e)
}

// explainWriter prints an explanation for people: the verdict first, then
// the summary line, the node table and (for gangs) the gang's figures and
// what would make it fit.
type explainWriter struct {
	out           io.Writer
	noHeaders     bool
	wide          bool
	color         bool
	maxRows       int
	configuration string
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

// title starts a section: a blank line and its title, or with
// --no-headers only the blank line, as tables lose their headers.
func (w *explainWriter) title(s string) {
	fmt.Fprintln(w.out)
	if w.noHeaders {
		return
	}
	for i, line := range wrap(s, lineWidth) {
		if i > 0 {
			line = "  " + line
		}
		fmt.Fprintln(w.out, w.style(line, ansiBold))
	}
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
	// The answer first: verdict, summary, what blocks, what would help.
	fmt.Fprintf(w.out, "%s: %s\n", w.style(string(e.Verdict), ansiBold+verdictColor), subject)
	if m := e.Member; m != nil {
		w.para("", memberAlone(m))
	}
	w.para("", e.Message)
	if strings.HasSuffix(e.Message, ". "+draPostFilterNotFound) {
		// Byte for byte kube-scheduler's; said once what the second "not
		// found" is, so that it is not read as a second missing object.
		w.para("", draNotFoundGloss)
	}
	if e.Gang != nil && e.Blocked {
		w.para("", blockedBy(e))
	}
	if q := e.Queue; q != nil && (q.Entry.Outcome == explain.OutcomeWaits || q.Entry.Outcome == explain.OutcomeUnverified || len(q.Ahead) > 0) {
		w.para("Queue: ", queuePlace(q))
	}
	if len(e.Suggestions) > 0 {
		w.title("What would make it fit (each change proven by placing on a changed copy of the snapshot):")
		for _, s := range e.Suggestions {
			msg := s.Message
			if s.Verified {
				msg += " (verified)"
			}
			w.para("  - ", msg)
			if s.Why != "" {
				// Why the first leads (issue #27).
				w.para("    ", "first: "+s.Why)
			}
		}
	} else if e.Verdict == explain.VerdictUnschedulable {
		w.title("What would make it fit:")
		fmt.Fprintln(w.out, "  nothing tried was enough: no preemption, added node, repaired node or smaller minimum made it fit")
	}
	if len(e.NotEvaluated) > 0 {
		w.title("Not evaluated (the verdict does not take these into account):")
		for _, s := range e.NotEvaluated {
			w.para("  - ", s)
		}
	}
	// Then the details.
	if e.Gang != nil {
		if err := w.gang(e); err != nil {
			return err
		}
	}
	if len(e.Nodes) > 0 {
		if err := w.reasons(e); err != nil {
			return err
		}
		w.title(tableContext(e))
		if err := w.nodeTable(e); err != nil {
			return err
		}
	}
	return nil
}

// draPostFilterNotFound is the message kube-scheduler's DynamicResources
// PostFilter fails with when its PreFilter did not run (an earlier PreFilter
// plugin rejected the pod: a PersistentVolumeClaim not found), which ends the
// PostFilter phase and so kube-scheduler's message (conformance case
// prefilter-rejects-before-dra); draNotFoundGloss says so on screen.
const (
	draPostFilterNotFound = "not found"
	draNotFoundGloss      = `(the last "not found" is kube-scheduler's own PostFilter message, which ends its message when a PreFilter plugin rejected the pod first: not a second missing object)`
)

// para prints text wrapped to the line width, the first line after
// prefix and the others indented as far (or by two spaces without one).
func (w *explainWriter) para(prefix, text string) {
	indent := strings.Repeat(" ", len(prefix))
	if prefix == "" {
		indent = "  "
	}
	for i, line := range wrap(text, lineWidth-len(prefix)) {
		if i == 0 {
			fmt.Fprintln(w.out, prefix+line)
		} else {
			fmt.Fprintln(w.out, indent+line)
		}
	}
}

// blockedBy names the member that does not fit and the constraint.
func blockedBy(e *explain.Explanation) string {
	s := fmt.Sprintf("Blocked by: %s/%s (%s) fits no node", e.Pod.Namespace, e.Pod.Name, requestsOf(e.Pod))
	if e.Domain != "" {
		s += " in " + e.TopologyKey + "=" + e.Domain
	}
	if n := len(e.PlacedBefore); n > 0 {
		s += fmt.Sprintf(" once the %d member(s) before it are placed", n)
	}
	if len(e.Blocking) > 0 {
		var parts []string
		for _, b := range e.Blocking {
			name := b.Plugin
			if name == "" {
				name = "topology"
			}
			parts = append(parts, fmt.Sprintf("%d %s", b.Nodes, name))
		}
		s += " (nodes rejected by " + strings.Join(parts, ", ") + ")"
	}
	return s + "."
}

// requestsOf is the pod's requests, with the init containers that set
// them named (the pod's request is the larger of its largest init
// container and the sum of its containers).
func requestsOf(pod *corev1.Pod) string {
	r := gang.FormatRequests(pod)
	if set := explain.SetByInit(pod); len(set) > 0 {
		r += "; " + strings.Join(set, ", ")
	}
	return r
}

// describeGang names a gang and where it comes from.
func describeGang(g *gang.Gang) string {
	switch g.Source {
	case gang.SourceSelector:
		return fmt.Sprintf("gang of the pods matching %q in %s", g.Name, orAll(g.Namespace))
	case gang.SourceFile:
		return fmt.Sprintf("gang %s from %s%s", g.Key(), readFrom(g), whatIf(g))
	}
	// A group object is named by its API group; a system's groups of pods
	// without one by the system's noun.
	what := string(g.Source) + " PodGroup"
	if r := gang.RulesOf(g.Source); r.Group == "" && r.Noun != "" {
		what = r.Noun
	}
	if len(g.Read) > 0 {
		return fmt.Sprintf("gang %s (%s) from %s%s", g.Key(), what, readFrom(g), whatIf(g))
	}
	return fmt.Sprintf("gang %s (%s)", g.Key(), what)
}

// whatIf says how much of a gang read from objects (-f, or a workload read
// from the cluster) does not exist yet: the members the API server has not
// seen have no UID.
func whatIf(g *gang.Gang) string {
	n := 0
	for _, p := range g.Members {
		if p.UID == "" {
			n++
		}
	}
	switch n {
	case 0:
		return ""
	case len(g.Members):
		return " (what-if)"
	}
	return fmt.Sprintf(" (what-if: %d of %d members not created yet)", n, len(g.Members))
}

// readFrom names the objects a what-if gang was read from: the one object
// with its kind and version, or how many.
func readFrom(g *gang.Gang) string {
	switch len(g.Read) {
	case 0:
		return "manifests"
	case 1:
		return g.Read[0]
	}
	return fmt.Sprintf("%d manifests", len(g.Read))
}

func orAll(ns string) string {
	if ns == "" {
		return "every namespace"
	}
	return "namespace " + ns
}

// tableContext says whose cycle the node table shows, and in what state.
func tableContext(e *explain.Explanation) string {
	pod := fmt.Sprintf("%s/%s (%s)", e.Pod.Namespace, e.Pod.Name, requestsOf(e.Pod))
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
		if len(e.PlacedBefore) > 0 {
			return s + "; MORE: how many more members like it each node holds once they are placed:"
		}
		return s + "; FITS: how many members like it each node holds:"
	}
	return "Nodes for " + pod + ", the gang's largest pending member, before the gang is placed; FITS: how many members like it " +
		"each node holds, PLACED: how many the plan puts there:"
}

// fitsColumn names the column of how many pods like the table's each node
// holds: FITS in the snapshot as it is, MORE once the members before a
// blocked one are placed (the table is then that state's).
func fitsColumn(e *explain.Explanation) string {
	if e.Gang != nil && e.Blocked && len(e.PlacedBefore) > 0 {
		return "More"
	}
	return "Fits"
}

// nodeTable prints one row per node; -o wide adds a column per Filter
// plugin and lists every node. Otherwise the table holds the most telling
// rows (nodes that got members, the best feasible ones, then the nearest
// misses in the domain) up to the row limit, and cuts reasons to the line
// width; a last line says how many more there are.
func (w *explainWriter) nodeTable(e *explain.Explanation) error {
	columns := []string{"Node"}
	if e.Gang != nil {
		columns = append(columns, "Placed")
	}
	domainKey := e.TopologyKey
	if e.Placement != nil {
		domainKey = cmp.Or(domainKey, e.Placement.PreferredTopologyKey)
	}
	if domainKey != "" {
		columns = append(columns, domainColumn(domainKey))
	}
	// A score and no reason say the node is feasible; -o wide spells it out.
	if w.wide {
		columns = append(columns, "Feasible")
	}
	columns = append(columns, "Score", fitsColumn(e), "Reason")
	if w.wide {
		columns = append(columns, e.FilterPlugins...)
	}
	order := make([]int, len(e.Nodes))
	for i := range order {
		order[i] = i
	}
	limit := w.maxRows
	if w.wide || limit <= 0 || limit >= len(e.Nodes) {
		limit = len(e.Nodes)
	} else {
		slices.SortStableFunc(order, func(a, b int) int {
			return compareRelevance(&e.Nodes[a], &e.Nodes[b])
		})
	}
	var rows [][]any
	for _, i := range order[:limit] {
		n := &e.Nodes[i]
		feasible, score := "no", "-"
		if n.Feasible {
			feasible, score = "yes", fmt.Sprint(n.Score)
		}
		row := []any{n.Name}
		if e.Gang != nil {
			row = append(row, dashIfZero(n.Placed))
		}
		if domainKey != "" {
			row = append(row, orDash(n.Domain))
		}
		fits := fmt.Sprint(n.Fits)
		if n.OutsideDomain {
			fits = "0"
		} else if n.FitsAtMost {
			fits = "<=" + fits
		}
		if w.wide {
			row = append(row, feasible)
		}
		// The histogram above names the plugins; a short row has less room.
		row = append(row, score, fits, nodeReason(e, n, w.wide))
		if w.wide {
			for _, plugin := range e.FilterPlugins {
				row = append(row, n.FilterDetail(plugin))
			}
		}
		rows = append(rows, row)
	}
	return w.table(columns, rows, len(e.Nodes)-limit, "node(s); -o wide or --max-rows=0 lists every node")
}

// table prints a section's table, its last column cut to the line width
// unless -o wide, and says how many rows were left out (more, of what).
func (w *explainWriter) table(columns []string, rows [][]any, more int, what string) error {
	if err := printFitTable(w.out, w.noHeaders, w.wide, columns, rows); err != nil {
		return err
	}
	if more > 0 && !w.noHeaders {
		fmt.Fprintf(w.out, "... and %d more %s\n", more, what)
	}
	return nil
}

// compareRelevance orders nodes for a short table: nodes that got members,
// then feasible ones by score, then near misses inside the domain (short
// of free resources only), other misses there, the rest last.
func compareRelevance(a, b *explain.Node) int {
	rank := func(n *explain.Node) int {
		switch {
		case n.Placed > 0:
			return 0
		case n.Feasible:
			return 1
		case n.NearMiss():
			return 2
		case !n.OutsideDomain:
			return 3
		}
		return 4
	}
	if c := cmp.Compare(rank(a), rank(b)); c != 0 {
		return c
	}
	return cmp.Compare(b.Score, a.Score)
}

// reasons groups the nodes by verdict, like kube-scheduler's summary but
// with the nodes' own words and example names: a histogram that stays a
// few lines on thousands of nodes.
func (w *explainWriter) reasons(e *explain.Explanation) error {
	type group struct {
		reason string
		names  []string
	}
	var groups []*group
	byReason := map[string]*group{}
	for i := range e.Nodes {
		n := &e.Nodes[i]
		var reason string
		switch {
		case n.OutsideDomain:
			reason = "outside " + e.TopologyKey + "=" + e.Domain
		case n.Feasible:
			reason = "feasible"
		default:
			reason = explain.CompactReasons(n.Reasons)
			if n.Plugin != "" {
				reason = n.Plugin + ": " + reason
			}
		}
		g := byReason[reason]
		if g == nil {
			g = &group{reason: reason}
			byReason[reason] = g
			groups = append(groups, g)
		}
		g.names = append(g.names, n.Name)
	}
	slices.SortStableFunc(groups, func(a, b *group) int { return cmp.Compare(len(b.names), len(a.names)) })
	w.title(fmt.Sprintf("Nodes by verdict for %s/%s:", e.Pod.Namespace, e.Pod.Name))
	var rows [][]any
	for _, g := range groups {
		examples := strings.Join(g.names[:min(2, len(g.names))], ", ")
		if more := len(g.names) - 2; more > 0 {
			examples += fmt.Sprintf(" (+%d)", more)
		}
		rows = append(rows, []any{fmt.Sprint(len(g.names)), g.reason, examples})
	}
	columns := []string{"Nodes", "Verdict", "Examples"}
	fitColumn(columns, rows, 1, w.noHeaders)
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
func nodeReason(e *explain.Explanation, n *explain.Node, withPlugin bool) string {
	verdict := n.Why()
	if withPlugin {
		verdict = n.Detail()
	}
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
	if w.configuration != "" {
		w.para("  ", w.configuration)
	}
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
	w.para("  Fit at once:  ", fmt.Sprintf("%d of minimum %d%s", p.MaxPlaceable, p.MinMember, placedWhere(p)))
	if len(p.PlacedLater) > 0 {
		w.para("  ", placedLater(p))
	}
	if q := p.QueueOrder; q != nil {
		w.para("  Queue order:  ", fmt.Sprintf("%d of minimum %d fit when the cycle takes %s first", q.Worst, p.MinMember, strings.Join(gang.PodKeys(naturalPods(q.NeedOthers)), ", ")))
	}
	if len(e.Domains) == 0 {
		return nil
	}
	key := p.TopologyKey
	if p.PreferredTopologyKey != "" && !p.PreferredMet {
		key = p.PreferredTopologyKey + " (preferred, not met)"
	}
	w.title(fmt.Sprintf("Members each %s holds at once (minimum %d):", key, p.MinMember))
	domains := e.Domains
	limit := len(domains)
	if !w.wide && w.maxRows > 0 && len(domains) > w.maxRows {
		// The ones that hold the most first.
		domains = slices.Clone(domains)
		slices.SortStableFunc(domains, func(a, b explain.DomainHold) int { return cmp.Compare(b.Holds, a.Holds) })
		limit = w.maxRows
	}
	resource := ""
	for _, d := range domains {
		if d.Resource != "" {
			resource = string(d.Resource)
			break
		}
	}
	columns := []string{"Domain", "Holds", "Complete", "Nodes"}
	if resource != "" {
		columns = append(columns, "Free "+resource)
	}
	columns = append(columns, "Note")
	var rows [][]any
	for _, d := range domains[:limit] {
		complete := "no"
		if d.Complete {
			complete = "yes"
		}
		// The NODES column says on how many nodes the figures are.
		note, _, _ := strings.Cut(d.Skipped, " on the ")
		row := []any{d.Value, fmt.Sprint(d.Holds), complete, fmt.Sprintf("%d/%d", d.Usable, d.Nodes)}
		if resource != "" {
			row = append(row, fmt.Sprintf("%s %s/%s", bar(d.Free, d.Allocatable), gang.FormatQuantity(d.Resource, d.Free), gang.FormatQuantity(d.Resource, d.Allocatable)))
		}
		rows = append(rows, append(row, orDash(note)))
	}
	if err := w.table(columns, rows, len(e.Domains)-limit, "domain(s); -o wide or --max-rows=0 lists them all"); err != nil {
		return err
	}
	if !w.noHeaders {
		fmt.Fprintf(w.out, "NODES: the members may use / all (affinity, taints, cordons); FREE: free/allocatable on those, before placement\n")
	}
	return nil
}

// bar draws free of total as a 10-character gauge, # for free.
func bar(free, total int64) string {
	if total <= 0 {
		return "[" + strings.Repeat(".", 10) + "]"
	}
	n := int((free*10 + total/2) / total)
	n = max(0, min(10, n))
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", 10-n) + "]"
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
	const listed = 8
	for _, n := range nodes[:min(listed, len(nodes))] {
		if counts[n] > 1 {
			parts = append(parts, fmt.Sprintf("%s (%d)", n, counts[n]))
		} else {
			parts = append(parts, n)
		}
	}
	if len(nodes) > listed {
		parts = append(parts, fmt.Sprintf("and %d more node(s)", len(nodes)-listed))
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

// queuePlace words where the subject stands in the queue simulation,
// printed when it adds to the explanation: the subject waits behind others,
// or others start before it (the verdict and reason being its own).
func queuePlace(q *explain.QueuePlace) string {
	s := fmt.Sprintf("position %d of %d", q.Entry.Position, q.Of)
	switch q.Entry.Outcome {
	case explain.OutcomeWaits:
		return s + ", " + q.Entry.Reason
	case explain.OutcomeHeld:
		// Held outside the pipeline: who starts ahead does not matter.
		return s + ", held: " + q.Entry.Reason
	case explain.OutcomeBlocked, explain.OutcomeNeverFits:
		// It does not fit even first: the verdict says why.
		return s
	case explain.OutcomeUnverified:
		// Its start is no plain yes (docs/design.md#the-queue): why.
		s += ", " + q.Entry.Reason
	}
	if len(q.Ahead) > 0 {
		var names []string
		for _, a := range q.Ahead {
			names = append(names, a.Name())
		}
		if len(names) > 3 {
			names = append(names[:3], fmt.Sprintf("%d more", len(q.Ahead)-3))
		}
		verb := "start"
		if len(q.Ahead) == 1 {
			verb = "starts"
		}
		s += fmt.Sprintf(" (%d ahead of it %s first: %s)", len(q.Ahead), verb, strings.Join(names, ", "))
	}
	return s
}
