package cmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/util/templates"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/explain"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodedeclaredfeatures"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/tainttoleration"
)

var explainLong = templates.LongDesc(`
	Explain why a pod or a whole gang is Pending, node by node and filter by
	filter, and what would make it fit.

	The summary line is byte for byte what kube-scheduler writes
	("0/N nodes are available: ..."); the node table shows, for every node,
	whether it is feasible, its score, how many more members of the gang it can
	hold, and the first filter that rejects it, naming the untolerated taint
	kube-scheduler's message hides. -o wide adds a column per filter plugin.

	For a gang it adds validity, how many members fit at most and where, the
	constraint that stops the next one, how many members each topology domain
	holds, and what would make it fit: the shortfall per resource, the
	lower-priority pods a preemption would evict (nothing is evicted), a node
	shape to add, nodes to uncordon or repair, a smaller minimum. Every change
	suggested is proven by placing the gang on a changed copy of the snapshot.

	Exit code 0 when the subject is schedulable, 3 when it is not.`)

var explainExample = templates.Examples(`
	# Explain a pending gang
	kubectl gang explain podgroup/llm-pretrain -n ml-research

	# Explain one pod (and its gang, if it belongs to one)
	kubectl gang explain pod/llm-pretrain-worker-0 -n ml-research

	# Every filter plugin's verdict on every node
	kubectl gang explain podgroup/llm-pretrain -n ml-research -o wide

	# Explain the pods a selector picks, as a gang of at least 4
	kubectl gang explain -l app=mpi-job --min-member 4

	# What if these manifests were applied?
	kubectl gang explain -f job.yaml`)

// ExplainOptions are the inputs of `kubectl gang explain`.
type ExplainOptions struct {
	GangVerbOptions
	NoColor bool
}

// NewExplainOptions returns ExplainOptions with defaults.
func NewExplainOptions(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *ExplainOptions {
	return &ExplainOptions{GangVerbOptions: newGangVerbOptions(snapshot, streams)}
}

// NewCmdExplain returns the explain verb.
func NewCmdExplain(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewExplainOptions(snapshot, streams)
	cmd := &cobra.Command{
		Use:                   "explain (pod/NAME | podgroup/NAME | -l SELECTOR | -f FILE)",
		DisableFlagsInUseLine: true,
		Short:                 "Explain why a pod or gang is Pending and what would make it fit",
		Long:                  explainLong,
		Example:               explainExample,
		RunE:                  runE(o),
		ValidArgsFunction:     completeSubject(snapshot, true),
	}
	o.addFlags(cmd, "to explain")
	cmd.Flags().BoolVar(&o.NoColor, "no-color", o.NoColor, "Never colour the output (it is coloured only on a terminal anyway).")
	return cmd
}

// Complete resolves the subject, the namespace and the scheduling profile.
func (o *ExplainOptions) Complete(args []string) error {
	return o.complete(args, true, true)
}

// Validate checks the flags without I/O.
func (o *ExplainOptions) Validate() error {
	if err := o.Snapshot.Validate(); err != nil {
		return err
	}
	return validateOutput(o.PrintFlags, "wide")
}

// Run explains the subject and prints the explanation; a subject that is
// not schedulable ends with exit code 3 after it is printed.
func (o *ExplainOptions) Run(ctx context.Context) error {
	snap, err := o.Snapshot.Load(ctx, o.IOStreams)
	if err != nil {
		return err
	}
	opts := explain.ExplainOptions{PlaceOptions: o.Scheduler.placeOptions()}
	var e *explain.Explanation
	if o.subject.Kind == SubjectPod {
		g, pod, err := gang.ResolvePod(snap, o.namespace, o.subject.Name)
		if err != nil {
			return asInputError(err)
		}
		stop := o.explaining(g)
		if g != nil {
			e, err = explain.ExplainGang(ctx, snap, g, opts)
		} else {
			e, err = explain.ExplainPod(ctx, snap, pod, opts)
		}
		stop()
		if err != nil {
			return err
		}
	} else {
		g, err := resolveGang(snap, o.subject, o.namespace, o.Subject.MinMember)
		if err != nil {
			return err
		}
		stop := o.explaining(g)
		e, err = explain.ExplainGang(ctx, snap, g, opts)
		stop()
		if err != nil {
			return err
		}
	}
	for _, w := range e.Warnings {
		fmt.Fprintf(o.ErrOut, "Warning: %s\n", w)
	}
	if err := o.print(e); err != nil {
		return err
	}
	if e.Verdict != explain.VerdictSchedulable {
		return &exitError{code: ExitNo}
	}
	return nil
}

// explaining shows a progress line on a terminal while a long explanation
// (a large gang: placement, then every suggestion proven by placing again)
// is worked out.
func (o *ExplainOptions) explaining(g *gang.Gang) (stop func()) {
	start := time.Now()
	return showProgress(o.ErrOut, func() string {
		if g == nil {
			return fmt.Sprintf("explaining: %s", time.Since(start).Round(time.Second))
		}
		return fmt.Sprintf("explaining gang %s (%d members): placing it and checking what would make it fit, %s",
			g.Key(), len(g.Members), time.Since(start).Round(time.Second))
	})
}

// print writes the explanation for people, or as an Explanation object with -o.
func (o *ExplainOptions) print(e *explain.Explanation) error {
	var ns, name string
	if e.Gang != nil {
		ns, name = e.Gang.Namespace, e.Gang.Name
	} else {
		ns, name = e.Pod.Namespace, e.Pod.Name
	}
	if done, err := o.printObject("Explanation", ns, name, func() any { return ptrTo(explanationOutput(e)) }); done {
		return err
	}
	w := &explainWriter{out: o.Out, noHeaders: o.NoHeaders, wide: ptr.Deref(o.PrintFlags.OutputFormat, "") == "wide",
		color: !o.NoColor && printers.AllowsColorOutput(o.Out)}
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
	verdictColor := map[explain.ExplainVerdict]string{
		explain.VerdictSchedulable: ansiGreen, explain.VerdictUnschedulable: ansiRed, explain.VerdictGated: ansiYellow,
	}[e.Verdict]
	var subject string
	if e.Gang != nil {
		subject = describeGang(e.Gang)
	} else {
		subject = "pod " + e.Pod.Namespace + "/" + e.Pod.Name
	}
	fmt.Fprintf(w.out, "%s: %s\n", w.style(string(e.Verdict), ansiBold+verdictColor), subject)
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
				row = append(row, filterCell(n, plugin))
			}
		}
		rows = append(rows, row)
	}
	return printers.NewTablePrinter(printers.PrintOptions{NoHeaders: w.noHeaders}).PrintObj(table(columns, rows), w.out)
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
func nodeReason(e *explain.Explanation, n *explain.NodeExplanation) string {
	verdict := verdictText(n)
	if !n.OutsideDomain {
		return verdict
	}
	if n.Plugin == "" && len(n.Reasons) == 0 {
		return fmt.Sprintf("outside %s, else fits %d", e.Domain, n.Fits)
	}
	return "outside " + e.Domain + ", and " + verdict
}

// verdictText is a node's verdict in words.
func verdictText(n *explain.NodeExplanation) string {
	if n.Plugin == "" && len(n.Reasons) == 0 {
		return "-"
	}
	detail := strings.Join(n.Reasons, ", ")
	switch n.Plugin {
	case tainttoleration.Name:
		if n.Taint != nil {
			detail = "untolerated taint " + gang.FormatTaint(n.Taint)
		}
	case noderesources.Name:
		if len(n.Insufficient) > 0 {
			detail = insufficientText(n.Insufficient)
		}
	case nodedeclaredfeatures.Name:
		if len(n.MissingFeatures) > 0 {
			detail += " (missing " + strings.Join(n.MissingFeatures, ", ") + ")"
		}
	}
	if n.Plugin == "" {
		return detail
	}
	return n.Plugin + ": " + detail
}

// insufficientText lists each short resource with how much is missing.
func insufficientText(ins []noderesources.InsufficientResource) string {
	var parts []string
	for _, r := range ins {
		if r.ResourceName == corev1.ResourcePods {
			parts = append(parts, r.Reason)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (short %s)", r.Reason, gang.FormatQuantity(r.ResourceName, r.Short())))
	}
	return strings.Join(parts, ", ")
}

// filterCell is one plugin's verdict on a node for -o wide.
func filterCell(n *explain.NodeExplanation, plugin string) string {
	for _, f := range n.Filters {
		if f.Plugin != plugin {
			continue
		}
		switch {
		case f.Code == framework.Success:
			return "ok"
		case plugin == tainttoleration.Name && n.Taint != nil:
			return "taint " + gang.FormatTaint(n.Taint)
		}
		return strings.Join(f.Reasons, ", ")
	}
	return "-"
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
	return printers.NewTablePrinter(printers.PrintOptions{NoHeaders: w.noHeaders}).PrintObj(table([]string{"Domain", "Nodes", "Holds", "Complete", "Note"}, rows), w.out)
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

// ExplanationOutput is the Explanation printed with -o json|yaml.
type ExplanationOutput struct {
	Verdict string `json:"verdict"`
	// Message is the summary line: kube-scheduler's FailedScheduling message
	// when the subject does not fit.
	Message string `json:"message"`
	// Pod is the pod the nodes are about: the pod explained, or the gang's
	// first member that does not fit (Blocked), or its largest pending member.
	Pod          string             `json:"pod,omitempty"`
	PodRequests  string             `json:"podRequests,omitempty"`
	Blocked      bool               `json:"blocked,omitempty"`
	PlacedBefore []AssignmentOutput `json:"placedBefore,omitempty"`
	Gang         *GangRef           `json:"gang,omitempty"`
	TopologyKey  string             `json:"topologyKey,omitempty"`
	Domain       string             `json:"domain,omitempty"`
	Nodes        []NodeOutput       `json:"nodes"`
	Gates        []string           `json:"gates,omitempty"`
	NotEvaluated []string           `json:"notEvaluated,omitempty"`

	Validity     *ValidityOutput    `json:"validity,omitempty"`
	MinMember    *int32             `json:"minMember,omitempty"`
	MaxPlaceable *int32             `json:"maxPlaceable,omitempty"`
	Running      []MemberOutput     `json:"running,omitempty"`
	PlacedOn     []AssignmentOutput `json:"placedOn,omitempty"`
	Blocking     []BlockingOutput   `json:"blocking,omitempty"`
	Domains      []DomainHoldOutput `json:"domains,omitempty"`
	Suggestions  []SuggestionOutput `json:"suggestions"`
}

// NodeOutput is one node of the explanation.
type NodeOutput struct {
	Name     string `json:"name"`
	Domain   string `json:"domain,omitempty"`
	Feasible bool   `json:"feasible"`
	Score    int64  `json:"score"`
	// Fits is how many more pods like the explained one the node holds.
	Fits       int64 `json:"fits"`
	FitsAtMost bool  `json:"fitsAtMost,omitempty"`
	// Placed counts the gang's members that run there or that the plan puts there.
	Placed int64 `json:"placed,omitempty"`
	// Plugin is the first Filter plugin that rejects the node.
	Plugin  string   `json:"plugin,omitempty"`
	Reasons []string `json:"reasons"`
	// Taint is the untolerated taint, key=value:Effect.
	Taint           string               `json:"taint,omitempty"`
	Insufficient    []InsufficientOutput `json:"insufficient,omitempty"`
	MissingFeatures []string             `json:"missingFeatures,omitempty"`
	// WithoutDomain is how a node outside the gang's topology domain would do
	// without the confinement.
	WithoutDomain *VerdictOutput `json:"withoutDomain,omitempty"`
	Filters       []FilterOutput `json:"filters,omitempty"`
}

// VerdictOutput is a node's verdict.
type VerdictOutput struct {
	Feasible bool     `json:"feasible"`
	Fits     int64    `json:"fits"`
	Plugin   string   `json:"plugin,omitempty"`
	Reasons  []string `json:"reasons,omitempty"`
}

// InsufficientOutput is one resource a node lacks.
type InsufficientOutput struct {
	Resource  string `json:"resource"`
	Requested string `json:"requested"`
	Free      string `json:"free"`
	Short     string `json:"short"`
}

// FilterOutput is one Filter plugin's verdict on a node.
type FilterOutput struct {
	Plugin  string   `json:"plugin"`
	Code    string   `json:"code"`
	Reasons []string `json:"reasons,omitempty"`
}

// ValidityOutput is the gang's validity.
type ValidityOutput struct {
	Valid      bool         `json:"valid"`
	ValidCount int32        `json:"validCount"`
	MinMember  int32        `json:"minMember"`
	Reason     string       `json:"reason,omitempty"`
	Message    string       `json:"message,omitempty"`
	Tasks      []TaskOutput `json:"tasks,omitempty"`
}

// TaskOutput is one Volcano task's validity.
type TaskOutput struct {
	Name  string `json:"name"`
	Valid int32  `json:"valid"`
	Min   int32  `json:"min"`
}

// BlockingOutput is how many nodes one plugin rejects the blocked member from first.
type BlockingOutput struct {
	Plugin  string   `json:"plugin,omitempty"`
	Nodes   int64    `json:"nodes"`
	Reasons []string `json:"reasons"`
}

// DomainHoldOutput is how many members a topology domain holds at once.
type DomainHoldOutput struct {
	Value    string `json:"value"`
	Nodes    int64  `json:"nodes"`
	Holds    int32  `json:"holds"`
	Complete bool   `json:"complete"`
	Skipped  string `json:"skipped,omitempty"`
}

// SuggestionOutput is one thing that would make the subject fit.
type SuggestionOutput struct {
	Kind     string `json:"kind"`
	Message  string `json:"message"`
	Verified bool   `json:"verified"`

	Shortfall     []ShortfallOutput `json:"shortfall,omitempty"`
	Victims       []VictimOutput    `json:"victims,omitempty"`
	PDBViolations int64             `json:"pdbViolations,omitempty"`
	NewNodes      *NodeShapeOutput  `json:"newNodes,omitempty"`
	Repairs       []RepairOutput    `json:"repairs,omitempty"`
	Together      bool              `json:"together,omitempty"`
	MinMember     int32             `json:"minMember,omitempty"`
	Gates         []string          `json:"gates,omitempty"`
}

// ShortfallOutput is how much of a resource is missing.
type ShortfallOutput struct {
	Resource     string `json:"resource"`
	Short        string `json:"short"`
	Need         string `json:"need"`
	Usable       string `json:"usable"`
	Free         string `json:"free"`
	MostFree     string `json:"mostFree"`
	MostFreeNode string `json:"mostFreeNode,omitempty"`
}

// VictimOutput is a pod a preemption would evict.
type VictimOutput struct {
	Pod               string `json:"pod"`
	Node              string `json:"node"`
	Priority          int32  `json:"priority"`
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// NodeShapeOutput is a node shape to add.
type NodeShapeOutput struct {
	Like        string            `json:"like,omitempty"`
	Count       int64             `json:"count"`
	Allocatable map[string]string `json:"allocatable"`
	Labels      map[string]string `json:"labels,omitempty"`
	Taints      []string          `json:"taints,omitempty"`
	TopologyKey string            `json:"topologyKey,omitempty"`
	Domain      string            `json:"domain,omitempty"`
}

// RepairOutput is what to do to a node.
type RepairOutput struct {
	Node     string   `json:"node"`
	Uncordon bool     `json:"uncordon,omitempty"`
	Taints   []string `json:"taints,omitempty"`
}

func explanationOutput(e *explain.Explanation) ExplanationOutput {
	out := ExplanationOutput{
		Verdict:      string(e.Verdict),
		Message:      e.Message,
		Blocked:      e.Blocked,
		TopologyKey:  e.TopologyKey,
		Domain:       e.Domain,
		Nodes:        []NodeOutput{},
		Gates:        e.Gates,
		NotEvaluated: e.NotEvaluated,
		Suggestions:  []SuggestionOutput{},
	}
	if e.Pod != nil {
		out.Pod = e.Pod.Namespace + "/" + e.Pod.Name
		out.PodRequests = gang.FormatRequests(e.Pod)
	}
	for _, a := range e.PlacedBefore {
		out.PlacedBefore = append(out.PlacedBefore, AssignmentOutput{Pod: a.Pod.Namespace + "/" + a.Pod.Name, Node: a.Node, Score: a.Score})
	}
	for i := range e.Nodes {
		out.Nodes = append(out.Nodes, nodeOutput(&e.Nodes[i]))
	}
	if g := e.Gang; g != nil {
		p, v := e.Placement, e.Validity
		out.Gang = &GangRef{Source: string(g.Source), Namespace: g.Namespace, Name: g.Name}
		out.MinMember, out.MaxPlaceable = ptr.To(p.MinMember), ptr.To(p.MaxPlaceable)
		out.Validity = &ValidityOutput{Valid: v.Valid, ValidCount: v.ValidCount, MinMember: v.MinMember, Reason: v.Reason, Message: v.Message}
		for _, t := range v.Tasks {
			out.Validity.Tasks = append(out.Validity.Tasks, TaskOutput{Name: t.Name, Valid: t.Valid, Min: t.Min})
		}
		for _, pod := range p.Running {
			out.Running = append(out.Running, MemberOutput{Pod: pod.Namespace + "/" + pod.Name, Node: pod.Spec.NodeName})
		}
		for _, a := range p.Planned() {
			out.PlacedOn = append(out.PlacedOn, AssignmentOutput{Pod: a.Pod.Namespace + "/" + a.Pod.Name, Node: a.Node, Score: a.Score})
		}
		for _, b := range e.Blocking {
			out.Blocking = append(out.Blocking, BlockingOutput{Plugin: b.Plugin, Nodes: int64(b.Nodes), Reasons: b.Reasons})
		}
		for _, d := range e.Domains {
			out.Domains = append(out.Domains, DomainHoldOutput{Value: d.Value, Nodes: int64(d.Nodes), Holds: d.Holds, Complete: d.Complete, Skipped: d.Skipped})
		}
	}
	for _, s := range e.Suggestions {
		out.Suggestions = append(out.Suggestions, suggestionOutput(s))
	}
	return out
}

func nodeOutput(n *explain.NodeExplanation) NodeOutput {
	o := NodeOutput{Name: n.Name, Domain: n.Domain, Feasible: n.Feasible, Score: n.Score, Fits: int64(n.Fits), FitsAtMost: n.FitsAtMost,
		Placed: int64(n.Placed), Plugin: n.Plugin, Reasons: append([]string{}, n.Reasons...), MissingFeatures: n.MissingFeatures}
	if n.Taint != nil {
		o.Taint = gang.FormatTaint(n.Taint)
	}
	for _, r := range n.Insufficient {
		o.Insufficient = append(o.Insufficient, InsufficientOutput{
			Resource:  string(r.ResourceName),
			Requested: gang.FormatQuantity(r.ResourceName, r.Requested),
			Free:      gang.FormatQuantity(r.ResourceName, max(0, r.Capacity-r.Used)),
			Short:     gang.FormatQuantity(r.ResourceName, r.Short()),
		})
	}
	for _, f := range n.Filters {
		o.Filters = append(o.Filters, FilterOutput{Plugin: f.Plugin, Code: f.Code.String(), Reasons: f.Reasons})
	}
	if n.OutsideDomain {
		o.WithoutDomain = &VerdictOutput{Feasible: n.Plugin == "" && len(n.Reasons) == 0, Fits: o.Fits, Plugin: n.Plugin, Reasons: n.Reasons}
		o.Fits, o.FitsAtMost, o.Plugin, o.Reasons = 0, false, "", []string{schedule.NotInDomainReason}
	}
	return o
}

func suggestionOutput(s explain.Suggestion) SuggestionOutput {
	o := SuggestionOutput{Kind: string(s.Kind), Message: s.Message, Verified: s.Verified, PDBViolations: int64(s.PDBViolations),
		Together: s.Together, MinMember: s.MinMember, Gates: s.Gates}
	for _, r := range s.Shortfall {
		o.Shortfall = append(o.Shortfall, ShortfallOutput{
			Resource: string(r.Name), Short: gang.FormatQuantity(r.Name, r.Short), Need: gang.FormatQuantity(r.Name, r.Need),
			Usable: gang.FormatQuantity(r.Name, r.Usable), Free: gang.FormatQuantity(r.Name, r.Free),
			MostFree: gang.FormatQuantity(r.Name, r.MostFree), MostFreeNode: r.MostFreeNode,
		})
	}
	for _, v := range s.Victims {
		o.Victims = append(o.Victims, VictimOutput{Pod: v.Pod.Namespace + "/" + v.Pod.Name, Node: v.Node, Priority: v.Priority, PriorityClassName: v.Pod.Spec.PriorityClassName})
	}
	if n := s.NewNodes; n != nil {
		shape := &NodeShapeOutput{Like: n.Like, Count: int64(n.Count), Allocatable: map[string]string{}, TopologyKey: n.TopologyKey, Domain: n.Domain}
		for name, q := range n.Allocatable {
			shape.Allocatable[string(name)] = q.String()
		}
		if n.Like == "" {
			shape.Labels = n.Labels
		}
		for _, t := range n.Taints {
			shape.Taints = append(shape.Taints, gang.FormatTaint(&t))
		}
		o.NewNodes = shape
	}
	for _, r := range s.Repairs {
		ro := RepairOutput{Node: r.Node, Uncordon: r.Uncordon}
		for _, t := range r.Taints {
			ro.Taints = append(ro.Taints, gang.FormatTaint(&t))
		}
		o.Repairs = append(o.Repairs, ro)
	}
	return o
}
