package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"
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
	Snapshot   *SnapshotFlags
	Subject    SubjectFlags
	PrintFlags *genericclioptions.PrintFlags
	// Ungate is the scheduling gate removed from every member once admitted.
	Ungate string

	subject *Subject
	genericiooptions.IOStreams
}

// NewAdmitOptions returns AdmitOptions with defaults.
func NewAdmitOptions(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *AdmitOptions {
	return &AdmitOptions{Snapshot: snapshot, PrintFlags: genericclioptions.NewPrintFlags(""), IOStreams: streams}
}

// NewCmdAdmit returns the admit verb.
func NewCmdAdmit(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewAdmitOptions(snapshot, streams)
	cmd := &cobra.Command{
		Use:                   "admit (podgroup/NAME | -l SELECTOR) [--ungate GATE]",
		DisableFlagsInUseLine: true,
		Short:                 "Decide whether a whole gang may start, and optionally release it",
		Long:                  admitLong,
		Example:               admitExample,
		RunE: func(c *cobra.Command, args []string) error {
			return classify(runVerb(o, args))
		},
	}
	o.Subject.AddFlags(cmd.Flags(), "to admit")
	o.PrintFlags.AddFlags(cmd)
	cmd.Flags().StringVar(&o.Ungate, "ungate", o.Ungate, "Once admitted, remove this scheduling gate from every member of the gang.")
	return cmd
}

// Complete resolves the gang from the arguments.
func (o *AdmitOptions) Complete(args []string) error {
	s, err := parseSubject(args, &o.Subject, false, true)
	if err != nil {
		return err
	}
	o.subject = s
	return nil
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

// Run decides admission. It builds on gang placement, which follows the
// pipeline; until then the verb says so instead of pretending.
func (o *AdmitOptions) Run() error {
	return fmt.Errorf("admit: %w", errNotImplemented)
}
