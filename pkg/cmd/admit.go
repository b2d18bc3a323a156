package cmd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/kubernetes"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/admit"
)

var admitLong = templates.LongDesc(`
	Decide whether a gang may be admitted: it is valid (enough members), its
	minResources fit the free capacity, its namespace's ResourceQuota has room,
	its Volcano Queue's capability allows it, and the whole gang can be placed.
	Each check is reported with its figures.

	With --ungate GATE, once admitted, that scheduling gate is removed from every
	member (with resourceVersion preconditions) so the scheduler takes them.

	Exit code 0 when admitted, 3 when rejected.`)

var admitExample = templates.Examples(`
	# Would this gang be admitted?
	kubectl gang admit podgroup/llm-pretrain -n ml-research

	# Admit it and release its members to the scheduler
	kubectl gang admit podgroup/llm-pretrain -n ml-research --ungate example.com/gang`)

// AdmitOptions are the inputs of `kubectl gang admit`.
type AdmitOptions struct {
	GangVerbOptions
	// Ungate is the scheduling gate removed from every member once admitted.
	Ungate string
}

// NewAdmitOptions returns AdmitOptions with defaults.
func NewAdmitOptions(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *AdmitOptions {
	return &AdmitOptions{GangVerbOptions: newGangVerbOptions(snapshot, streams)}
}

// NewCmdAdmit returns the admit verb.
func NewCmdAdmit(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewAdmitOptions(snapshot, streams)
	cmd := &cobra.Command{
		Use:                   "admit (podgroup/NAME | -l SELECTOR | -f FILE) [--ungate GATE]",
		DisableFlagsInUseLine: true,
		Short:                 "Decide whether a whole gang may start, and optionally release it",
		Long:                  admitLong,
		Example:               admitExample,
		RunE:                  runE(o),
		ValidArgsFunction:     completeSubject(snapshot, false),
	}
	o.addFlags(cmd, "to admit")
	cmd.Flags().StringVar(&o.Ungate, "ungate", o.Ungate, "Once admitted, remove this scheduling gate from every member of the gang.")
	return cmd
}

// Complete resolves the gang from the arguments.
func (o *AdmitOptions) Complete(args []string) error {
	return o.complete(args, false, true)
}

// Validate checks the flags without I/O.
func (o *AdmitOptions) Validate() error {
	if err := o.Snapshot.Validate(); err != nil {
		return err
	}
	if o.Ungate != "" {
		if errs := validation.IsQualifiedName(o.Ungate); len(errs) > 0 {
			return usageErrorf("invalid --ungate %q: %s", o.Ungate, errs[0])
		}
		if o.subject.Kind == SubjectFile {
			return usageErrorf("--ungate needs pods that exist; it cannot be used with -f")
		}
		if o.Snapshot.Offline() {
			return usageErrorf("--ungate writes to the cluster; it cannot be used with --snapshot")
		}
	}
	return validateOutput(o.PrintFlags)
}

// Run decides admission, prints every check, and with --ungate releases the
// members; a rejection ends with exit code 3.
func (o *AdmitOptions) Run(ctx context.Context) error {
	snap, g, err := o.loadGang(ctx)
	if err != nil {
		return err
	}
	a, err := admit.Admit(ctx, snap, g, o.Scheduler.placeOptions())
	if err != nil {
		return err
	}
	var ungated *ungateReport
	if a.Admitted && o.Ungate != "" {
		ungated, err = o.ungate(ctx, g)
		if err != nil {
			return err
		}
	}
	if err := o.print(a, ungated); err != nil {
		return err
	}
	if !a.Admitted || (ungated != nil && len(ungated.Changed) > 0) {
		return &exitError{code: ExitNo}
	}
	return nil
}

// ungateReport says what --ungate did.
type ungateReport struct {
	Gate      string   `json:"gate"`
	Ungated   []string `json:"ungated,omitempty"`
	Untouched []string `json:"untouched,omitempty"` // members without the gate
	Changed   []string `json:"changed,omitempty"`   // members that changed since the snapshot: nothing more was written
}

// ungate removes the gate from every member that has it, each with the
// resourceVersion the decision was made on as a precondition. Every member is
// checked before anything is written, so a gang that moved is left alone; a
// member that changes between the check and its update stops the rest.
func (o *AdmitOptions) ungate(ctx context.Context, g *gang.Gang) (*ungateReport, error) {
	cfg, err := o.Snapshot.RESTConfig()
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	r := &ungateReport{Gate: o.Ungate}
	var todo []*corev1.Pod
	for _, pod := range g.Members {
		key := pod.Namespace + "/" + pod.Name
		current, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			if apierrors.IsNotFound(err) {
				r.Changed = append(r.Changed, key+" (deleted)")
				continue
			}
			return nil, fmt.Errorf("reading pod %s: %w", key, err)
		}
		if current.UID != pod.UID || current.ResourceVersion != pod.ResourceVersion {
			r.Changed = append(r.Changed, key)
			continue
		}
		if !slices.ContainsFunc(current.Spec.SchedulingGates, func(sg corev1.PodSchedulingGate) bool { return sg.Name == o.Ungate }) {
			r.Untouched = append(r.Untouched, key)
			continue
		}
		todo = append(todo, current)
	}
	if len(r.Changed) > 0 {
		return r, nil
	}
	for _, pod := range todo {
		key := pod.Namespace + "/" + pod.Name
		pod.Spec.SchedulingGates = slices.DeleteFunc(pod.Spec.SchedulingGates, func(sg corev1.PodSchedulingGate) bool { return sg.Name == o.Ungate })
		if _, err := cs.CoreV1().Pods(pod.Namespace).Update(ctx, pod, metav1.UpdateOptions{FieldManager: "kubectl-gang"}); err != nil {
			if apierrors.IsConflict(err) {
				r.Changed = append(r.Changed, key)
				return r, nil
			}
			return r, fmt.Errorf("removing gate %q from %s: %w", o.Ungate, key, err)
		}
		r.Ungated = append(r.Ungated, key)
	}
	return r, nil
}

// AdmissionOutput is the Admission printed with -o json|yaml.
type AdmissionOutput struct {
	Gang      GangRef         `json:"gang"`
	Admitted  bool            `json:"admitted"`
	Checks    []CheckOutput   `json:"checks"`
	Placement PlacementOutput `json:"placement"`
	Ungate    *ungateReport   `json:"ungate,omitempty"`
}

// CheckOutput is one admission check.
type CheckOutput struct {
	Name    string            `json:"name"`
	Result  string            `json:"result"`
	Reason  string            `json:"reason,omitempty"`
	Message string            `json:"message,omitempty"`
	Figures map[string]string `json:"figures,omitempty"`
}

func checkResult(c admit.Check) string {
	switch {
	case c.Reason == "NotEvaluated":
		return "NotEvaluated"
	case c.Skipped:
		return "Skipped"
	case c.Passed:
		return "Passed"
	}
	return "Failed"
}

func (o *AdmitOptions) print(a *admit.Admission, u *ungateReport) error {
	if done, err := o.printObject("Admission", a.Gang.Namespace, a.Gang.Name, func() any {
		out := AdmissionOutput{Gang: GangRef{Source: string(a.Gang.Source), Namespace: a.Gang.Namespace, Name: a.Gang.Name},
			Admitted: a.Admitted, Placement: placementOutput(a.Placement), Ungate: u}
		for _, c := range a.Checks {
			out.Checks = append(out.Checks, CheckOutput{Name: c.Name, Result: checkResult(c), Reason: c.Reason, Message: c.Message, Figures: c.Figures})
		}
		return &out
	}); done {
		return err
	}
	verdict := "Admitted"
	if !a.Admitted {
		verdict = "Rejected"
	}
	fmt.Fprintf(o.Out, "%s: gang %s (%s)\n", verdict, a.Gang.Key(), a.Gang.Source)
	var rows [][]any
	for _, c := range a.Checks {
		rows = append(rows, []any{c.Name, checkResult(c), c.Message})
	}
	if err := printers.NewTablePrinter(printers.PrintOptions{NoHeaders: o.NoHeaders}).PrintObj(table([]string{"Check", "Result", "Details"}, rows), o.Out); err != nil {
		return err
	}
	if u != nil {
		switch {
		case len(u.Changed) > 0:
			fmt.Fprintf(o.Out, "Gate %s: nothing more removed: %d member(s) changed since the snapshot: %s\n", u.Gate, len(u.Changed), strings.Join(u.Changed, ", "))
			if len(u.Ungated) > 0 {
				fmt.Fprintf(o.Out, "Gate %s was already removed from: %s\n", u.Gate, strings.Join(u.Ungated, ", "))
			}
		default:
			fmt.Fprintf(o.Out, "Gate %s removed from %d member(s)", u.Gate, len(u.Ungated))
			if len(u.Untouched) > 0 {
				fmt.Fprintf(o.Out, "; %d did not have it", len(u.Untouched))
			}
			fmt.Fprintln(o.Out)
		}
	}
	return nil
}
