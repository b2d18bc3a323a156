package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"
)

var bindLong = templates.LongDesc(`
	NOT IMPLEMENTED YET: this release checks the arguments and flags, then
	exits 1 with "not implemented yet". What follows is the contract.

	Place a gang and bind every member through the pods/binding subresource,
	all or nothing, for clusters with no gang scheduler.

	The API has no multi-object transaction, so "all or nothing" means: check
	permissions, re-read every member and target node, server dry-run every
	Binding, commit them, then read every member back and report honestly.

	Exit code 0 when all are bound, 3 when nothing was bound (the gang does not
	fit, or the cluster moved), 4 when some were bound (the report says which,
	and --on-partial says what was done about them).`)

var bindExample = templates.Examples(`
	# Bind a whole PodGroup
	kubectl gang bind podgroup/llm-pretrain -n ml-research

	# Check everything, including server-side admission, but write nothing
	kubectl gang bind podgroup/llm-pretrain -n ml-research --dry-run=server`)

// Values of --on-partial.
const (
	onPartialReport = "report"
	onPartialDelete = "delete"
)

// Values of --dry-run, as kubectl names them.
const (
	dryRunNone   = "none"
	dryRunClient = "client"
	dryRunServer = "server"
)

// BindOptions are the inputs of `kubectl gang bind`.
type BindOptions struct {
	Snapshot   *SnapshotFlags
	Subject    SubjectFlags
	PrintFlags *genericclioptions.PrintFlags
	DryRun     string
	OnPartial  string

	subject *Subject
	genericiooptions.IOStreams
}

// NewBindOptions returns BindOptions with defaults.
func NewBindOptions(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *BindOptions {
	return &BindOptions{
		Snapshot:   snapshot,
		PrintFlags: genericclioptions.NewPrintFlags("bound"),
		DryRun:     dryRunNone,
		OnPartial:  onPartialReport,
		IOStreams:  streams,
	}
}

// NewCmdBind returns the bind verb.
func NewCmdBind(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewBindOptions(snapshot, streams)
	cmd := &cobra.Command{
		Use:                   "bind (podgroup/NAME | -l SELECTOR) [--dry-run=client|server]",
		DisableFlagsInUseLine: true,
		Short:                 "Bind every member of a gang to its node, or none (not implemented yet)",
		Long:                  bindLong,
		Example:               bindExample,
		RunE: func(c *cobra.Command, args []string) error {
			return classify(runVerb(o, args))
		},
	}
	o.Subject.AddFlags(cmd.Flags(), "to bind")
	o.PrintFlags.AddFlags(cmd)
	cmd.Flags().StringVar(&o.DryRun, "dry-run", o.DryRun, `Must be "none", "server", or "client". With client, only print the plan; with server, also send every Binding with dryRun=All.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = dryRunClient
	cmd.Flags().StringVar(&o.OnPartial, "on-partial", o.OnPartial, `What to do when fewer than the minimum end up bound: "report" leaves them and exits 4; "delete" deletes the pods this run bound so their controller recreates them.`)
	return cmd
}

// Complete resolves the gang from the arguments.
func (o *BindOptions) Complete(args []string) error {
	s, err := parseSubject(args, &o.Subject, false, false)
	if err != nil {
		return err
	}
	o.subject = s
	return nil
}

// Validate checks the flags without I/O.
func (o *BindOptions) Validate() error {
	if err := o.Snapshot.Validate(); err != nil {
		return err
	}
	switch o.DryRun {
	case dryRunNone, dryRunClient, dryRunServer:
	default:
		return usageErrorf(`invalid --dry-run %q: must be "none", "server", or "client"`, o.DryRun)
	}
	switch o.OnPartial {
	case onPartialReport, onPartialDelete:
	default:
		return usageErrorf("invalid --on-partial %q: must be %s", o.OnPartial, strings.Join([]string{onPartialReport, onPartialDelete}, " or "))
	}
	if o.Snapshot.Offline() && o.DryRun != dryRunClient {
		return usageErrorf("bind writes to the cluster; with --snapshot only --dry-run=client is possible")
	}
	return validateOutput(o.PrintFlags)
}

// Run binds the gang. The bind protocol builds on gang placement; until it
// lands the verb says so instead of pretending.
func (o *BindOptions) Run() error {
	return fmt.Errorf("bind: %w", errNotImplemented)
}
