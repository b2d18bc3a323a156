package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"
)

var explainLong = templates.LongDesc(`
	Explain why a pod or a whole gang is Pending, node by node and filter by
	filter, and what would make it fit.

	The summary line is byte for byte what kube-scheduler writes
	("0/N nodes are available: ..."); the node table shows, for every node,
	whether it is feasible, its score, how many members of the gang it can hold,
	and the first filter that rejects it. For a gang it adds validity, how many
	members fit at most, the constraint that stops the next one, and the
	shortfall per resource.

	Exit code 0 when the subject is schedulable, 3 when it is not.`)

var explainExample = templates.Examples(`
	# Explain a pending gang
	kubectl gang explain podgroup/llm-pretrain -n ml-research

	# Explain one pod (and its gang, if it belongs to one)
	kubectl gang explain pod/llm-pretrain-worker-0 -n ml-research

	# Explain the pods a selector picks, as a gang of at least 4
	kubectl gang explain -l app=mpi-job --min-member 4

	# What if these manifests were applied?
	kubectl gang explain -f job.yaml`)

// ExplainOptions are the inputs of `kubectl gang explain`.
type ExplainOptions struct {
	Snapshot   *SnapshotFlags
	Subject    SubjectFlags
	PrintFlags *genericclioptions.PrintFlags

	subject *Subject
	genericiooptions.IOStreams
}

// NewExplainOptions returns ExplainOptions with defaults.
func NewExplainOptions(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *ExplainOptions {
	return &ExplainOptions{
		Snapshot:   snapshot,
		PrintFlags: genericclioptions.NewPrintFlags(""),
		IOStreams:  streams,
	}
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
		RunE: func(c *cobra.Command, args []string) error {
			return classify(runVerb(o, args))
		},
	}
	o.Subject.AddFlags(cmd.Flags(), "to explain")
	o.PrintFlags.AddFlags(cmd)
	return cmd
}

// Complete resolves the subject from the arguments.
func (o *ExplainOptions) Complete(args []string) error {
	s, err := parseSubject(args, &o.Subject, true, true)
	if err != nil {
		return err
	}
	o.subject = s
	return nil
}

// Validate checks the flags without I/O.
func (o *ExplainOptions) Validate() error {
	if err := o.Snapshot.Validate(); err != nil {
		return err
	}
	return validateOutput(o.PrintFlags, "wide")
}

// Run explains the subject. The diagnosis is built by the pipeline work that
// follows the foundation; until then the verb says so instead of pretending.
func (o *ExplainOptions) Run() error {
	return fmt.Errorf("explain: %w", errNotImplemented)
}
