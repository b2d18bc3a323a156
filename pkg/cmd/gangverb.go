package cmd

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// GangVerbOptions are what explain, place and admit share: where the
// cluster comes from, how the gang is named, which profile and topology
// apply, and how the result is printed.
type GangVerbOptions struct {
	Snapshot   *SnapshotFlags
	Subject    SubjectFlags
	Scheduler  SchedulerFlags
	PrintFlags *genericclioptions.PrintFlags
	NoHeaders  bool

	subject   *Subject
	namespace string
	genericiooptions.IOStreams
}

func newGangVerbOptions(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) GangVerbOptions {
	return GangVerbOptions{Snapshot: snapshot, PrintFlags: genericclioptions.NewPrintFlags(""), IOStreams: streams}
}

// addFlags adds the shared flags; what completes "-l ... as an ad hoc gang <what>".
func (o *GangVerbOptions) addFlags(cmd *cobra.Command, what string) {
	o.Subject.AddFlags(cmd.Flags(), what)
	o.Scheduler.AddFlags(cmd.Flags())
	o.PrintFlags.AddFlags(cmd)
	cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", o.NoHeaders, "Do not print the tables' headers.")
}

// complete resolves the subject, the namespace and the scheduling profile.
func (o *GangVerbOptions) complete(args []string, allowPod, allowFile bool) error {
	s, err := parseSubject(args, &o.Subject, allowPod, allowFile)
	if err != nil {
		return err
	}
	o.subject = s
	if o.namespace, err = o.Snapshot.Namespace(); err != nil {
		return err
	}
	if s.Kind == SubjectFile {
		if s.Filename == "-" && o.Snapshot.Path == "-" {
			return usageErrorf("-f - and --snapshot - cannot both read standard input")
		}
		if s.manifest, err = readManifests(s.Filename, o.namespace, o.Subject.MinMember, o.In); err != nil {
			return asInputError(err)
		}
	}
	return o.Scheduler.Complete()
}

// loadGang reads the snapshot and resolves the gang on it.
func (o *GangVerbOptions) loadGang(ctx context.Context) (*schedule.Snapshot, *gang.Gang, error) {
	snap, err := o.Snapshot.Load(ctx, o.IOStreams)
	if err != nil {
		return nil, nil, err
	}
	g, err := resolveGang(snap, o.subject, o.namespace, o.Subject.MinMember)
	if err != nil {
		return nil, nil, err
	}
	return snap, g, nil
}

// ctxVerb is the Options pattern with a context for Run.
type ctxVerb interface {
	Complete(args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runE runs a verb's Complete, Validate and Run, giving every error its exit code.
func runE(o ctxVerb) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if err := o.Complete(args); err != nil {
			return classify(err)
		}
		if err := o.Validate(); err != nil {
			return classify(err)
		}
		return classify(o.Run(c.Context()))
	}
}

// printObject prints a verb's result as a kind object when -o asks for a
// machine format (json, yaml, name, jsonpath, ...) and reports whether it
// did; the human output (no -o, or -o wide) is the verb's own. out builds
// the object only when it is needed.
func (o *GangVerbOptions) printObject(kind, namespace, name string, out func() any) (bool, error) {
	if format := ptr.Deref(o.PrintFlags.OutputFormat, ""); format == "" || format == "wide" {
		return false, nil
	}
	obj, err := toObject(kind, namespace, name, out())
	if err != nil {
		return true, err
	}
	printer, err := o.PrintFlags.ToPrinter()
	if err != nil {
		return true, err
	}
	return true, printer.PrintObj(obj, o.Out)
}
