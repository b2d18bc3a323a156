package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

var placeLong = templates.LongDesc(`
	Place a whole gang on the snapshot, all or nothing, and print the plan:
	every member and the node it goes to, with the node's score.

	Members are ordered as kube-scheduler's queue orders them, placed one by one,
	each reserved before the next, so the gang competes with itself for room.
	Ties between equal scores break by node name, so every run prints the same
	plan (kube-scheduler breaks them at random).

	Exit code 0 when the gang is placed, 3 when it cannot be.`)

var placeExample = templates.Examples(`
	# The plan for a PodGroup, as a table
	kubectl gang place podgroup/llm-pretrain -n ml-research

	# The plan as JSON for a script; the exit code says whether it fits
	kubectl gang place podgroups.scheduling.volcano.sh/mpi-job -o json

	# What if this Job were submitted?
	kubectl gang place -f job.yaml --min-member 8`)

// PlaceOptions are the inputs of `kubectl gang place`.
type PlaceOptions struct {
	GangVerbOptions
}

// NewPlaceOptions returns PlaceOptions with defaults.
func NewPlaceOptions(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *PlaceOptions {
	return &PlaceOptions{GangVerbOptions: newGangVerbOptions(snapshot, streams)}
}

// NewCmdPlace returns the place verb.
func NewCmdPlace(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewPlaceOptions(snapshot, streams)
	cmd := &cobra.Command{
		Use:                   "place (podgroup/NAME | -l SELECTOR | -f FILE)",
		DisableFlagsInUseLine: true,
		Short:                 "Print where every member of a gang would go, all or nothing",
		Long:                  placeLong,
		Example:               placeExample,
		RunE:                  runE(o),
		ValidArgsFunction:     completeSubject(snapshot, false),
	}
	o.addFlags(cmd, "to place")
	return cmd
}

// Complete resolves the subject, the namespace and the scheduling profile.
func (o *PlaceOptions) Complete(args []string) error {
	return o.complete(args, false, true)
}

// Validate checks the flags without I/O.
func (o *PlaceOptions) Validate() error {
	if err := o.Snapshot.Validate(); err != nil {
		return err
	}
	return validateOutput(o.PrintFlags, "wide")
}

// Run places the gang and prints the plan; a gang that cannot be placed
// ends with exit code 3 after the plan is printed.
func (o *PlaceOptions) Run(ctx context.Context) error {
	snap, g, err := o.loadGang(ctx)
	if err != nil {
		return err
	}
	p, err := gang.Place(ctx, snap, g, o.Scheduler.placeOptions())
	if err != nil {
		return err
	}
	if err := o.print(p); err != nil {
		return err
	}
	if p.Verdict != gang.VerdictPlaced {
		return &exitError{code: ExitNo}
	}
	return nil
}

// print writes the plan as a table, or as a Placement object with -o.
func (o *PlaceOptions) print(p *gang.Placement) error {
	if done, err := o.printObject("Placement", p.Gang.Namespace, p.Gang.Name, func() any { return ptrTo(placementOutput(p)) }); done {
		return err
	}
	fmt.Fprintf(o.Out, "%s: %s\n", p.Verdict, p.Message)
	return printers.NewTablePrinter(printers.PrintOptions{NoHeaders: o.NoHeaders}).PrintObj(placementTable(p), o.Out)
}

// placementRows lists every member with where it runs or would go.
func placementTable(p *gang.Placement) *metav1.Table {
	var rows [][]any
	for _, pod := range p.Running {
		rows = append(rows, []any{pod.Namespace + "/" + pod.Name, pod.Spec.NodeName, "", "Running"})
	}
	status := "Placed"
	assignments := p.Assignments
	if p.Verdict != gang.VerdictPlaced {
		status, assignments = "Fits (gang not placed)", p.BestAttempt
	}
	placed := map[string]bool{}
	for _, a := range assignments {
		rows = append(rows, []any{a.Pod.Namespace + "/" + a.Pod.Name, a.Node, fmt.Sprint(a.Score), status})
		placed[a.Pod.Namespace+"/"+a.Pod.Name] = true
	}
	for _, pod := range p.Gang.Members {
		key := pod.Namespace + "/" + pod.Name
		if pod.Spec.NodeName == "" && !placed[key] {
			rows = append(rows, []any{key, "<none>", "", "Does not fit"})
		}
	}
	return table([]string{"Pod", "Node", "Score", "Status"}, rows)
}

// PlacementOutput is the Placement printed with -o json|yaml.
type PlacementOutput struct {
	Gang         GangRef            `json:"gang"`
	Verdict      string             `json:"verdict"`
	MinMember    int32              `json:"minMember"`
	MaxPlaceable int32              `json:"maxPlaceable"`
	Running      []MemberOutput     `json:"running,omitempty"`
	Assignments  []AssignmentOutput `json:"assignments"`
	Unplaced     []string           `json:"unplaced,omitempty"`
	TopologyKey  string             `json:"topologyKey,omitempty"`
	Domain       string             `json:"domain,omitempty"`
	Domains      []DomainOutput     `json:"domains,omitempty"`
	Message      string             `json:"message"`
}

// GangRef names a gang and its source.
type GangRef struct {
	Source    string `json:"source"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// MemberOutput is a member already on a node.
type MemberOutput struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
}

// AssignmentOutput is a pending member and its node.
type AssignmentOutput struct {
	Pod   string `json:"pod"`
	Node  string `json:"node"`
	Score int64  `json:"score"`
}

// DomainOutput is one topology domain tried.
type DomainOutput struct {
	Value        string `json:"value"`
	Nodes        int64  `json:"nodes"`
	Placed       int64  `json:"placed"`
	Complete     bool   `json:"complete"`
	Skipped      string `json:"skipped,omitempty"`
	FreeFraction string `json:"freeFraction,omitempty"`
	ScoreSum     int64  `json:"scoreSum,omitempty"`
}

func placementOutput(p *gang.Placement) PlacementOutput {
	out := PlacementOutput{
		Gang:         GangRef{Source: string(p.Gang.Source), Namespace: p.Gang.Namespace, Name: p.Gang.Name},
		Verdict:      string(p.Verdict),
		MinMember:    p.MinMember,
		MaxPlaceable: p.MaxPlaceable,
		Assignments:  []AssignmentOutput{},
		TopologyKey:  p.TopologyKey,
		Domain:       p.Domain,
		Message:      p.Message,
	}
	for _, pod := range p.Running {
		out.Running = append(out.Running, MemberOutput{Pod: pod.Namespace + "/" + pod.Name, Node: pod.Spec.NodeName})
	}
	for _, a := range p.Assignments {
		out.Assignments = append(out.Assignments, AssignmentOutput{Pod: a.Pod.Namespace + "/" + a.Pod.Name, Node: a.Node, Score: a.Score})
	}
	for _, pod := range p.Unplaced {
		out.Unplaced = append(out.Unplaced, pod.Namespace+"/"+pod.Name)
	}
	for _, d := range p.Domains {
		do := DomainOutput{Value: d.Value, Nodes: int64(d.Nodes), Placed: int64(d.Placed), Complete: d.Complete, Skipped: d.Skipped, ScoreSum: d.ScoreSum}
		if d.Skipped == "" || d.Placed > 0 {
			do.FreeFraction = fmt.Sprintf("%.3f", d.FreeFraction)
		}
		out.Domains = append(out.Domains, do)
	}
	return out
}
