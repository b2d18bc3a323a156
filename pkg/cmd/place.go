package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"
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
	Snapshot   *SnapshotFlags
	Subject    SubjectFlags
	PrintFlags *genericclioptions.PrintFlags

	subject *Subject
	genericiooptions.IOStreams
}

// NewPlaceOptions returns PlaceOptions with defaults.
func NewPlaceOptions(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *PlaceOptions {
	return &PlaceOptions{Snapshot: snapshot, PrintFlags: genericclioptions.NewPrintFlags(""), IOStreams: streams}
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
		RunE: func(c *cobra.Command, args []string) error {
			return classify(runVerb(o, args))
		},
	}
	o.Subject.AddFlags(cmd.Flags(), "to place")
	o.PrintFlags.AddFlags(cmd)
	return cmd
}

// Complete resolves the gang from the arguments.
func (o *PlaceOptions) Complete(args []string) error {
	s, err := parseSubject(args, &o.Subject, false, true)
	if err != nil {
		return err
	}
	o.subject = s
	return nil
}

// Validate checks the flags without I/O.
func (o *PlaceOptions) Validate() error {
	if err := o.Snapshot.Validate(); err != nil {
		return err
	}
	return validateOutput(o.PrintFlags, "wide")
}

// Run places the gang. Gang placement is the work that follows the pipeline;
// until it lands the verb says so instead of pretending.
func (o *PlaceOptions) Run() error {
	return fmt.Errorf("place: %w", errNotImplemented)
}
