package cmd

import (
	"context"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
	"github.com/kubectl-gang/kubectl-gang/pkg/describe"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

var placeLong = templates.LongDesc(`
	Place a whole gang on the snapshot, all or nothing, and print the plan:
	every member and the node it goes to, with the node's score.

	Members are ordered as kube-scheduler's queue orders them, placed one by one,
	each reserved before the next, so the gang competes with itself for room.
	Ties between equal scores break by node name, so every run prints the same
	plan (kube-scheduler breaks them at random).` + workloadHelp + `

	The verdict is the one explain, admit and bind give for the same gang: a
	ResourceQuota that would refuse members not created yet, or members that
	carry scheduling gates, keep it from being Placed (the plan stays, as
	where the members would go); a plan that depends on something not
	evaluated is "Placed (not verified)".

	Exit code 0 when the gang is placed, 3 when it cannot be, is held back,
	or is not verified.`)

var placeExample = templates.Examples(`
	# The plan for a PodGroup, as a table
	kubectl gang place podgroup/llm-pretrain -n ml-research

	# The plan as JSON for a script; the exit code says whether it fits
	kubectl gang place podgroups.scheduling.volcano.sh/mpi-job -o json

	# Where would the rest of a running JobSet go?
	kubectl gang place jobset/pretrain -n ml-research

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
		Use:                   "place (podgroup/NAME | WORKLOAD/NAME | -l SELECTOR | -f FILE)",
		DisableFlagsInUseLine: true,
		Short:                 "Print where every member of a gang would go, all or nothing",
		Long:                  placeLong,
		Example:               placeExample,
		RunE:                  runE(o),
		ValidArgsFunction:     completeSubject(snapshot, false, true),
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
	stop := o.working(g, "placing", "each member in queue order, each domain in turn")
	p, err := gang.Place(ctx, snap, g, o.placeOptions(snap, g, nil))
	stop()
	if err != nil {
		return err
	}
	// The checks besides placement, as explain, admit and bind apply them
	// (docs/design.md#one-verdict-per-question): a quota that refuses the
	// members not created yet holds the gang back, one that could not be
	// read leaves the plan not verified, and gated members wait.
	q := gang.Quota(snap, g)
	if q.Outcome == gang.QuotaExceeded && p.Verdict != gang.VerdictPlaced {
		// Something else holds the gang back already: the verdict says
		// that, and the quota would too.
		o.warn([]string{gang.QuotaRefusal(q)})
	}
	p.ApplyQuota(q)
	p.HoldGated()
	vc := o.volcanoConfiguration(snap, g)
	err = o.printResult(output{kind: v1alpha1.KindPlacement, namespace: g.Namespace, name: g.Name,
		object: func() any {
			obj := v1alpha1.FromPlacement(p)
			obj.VolcanoConfiguration = vc
			return obj
		},
		human: func(d describe.Options) error {
			d.Configuration = volcanoLine(vc)
			return describe.Placement(o.Out, p, d)
		},
		names: func() []string {
			var pods []*corev1.Pod
			for _, a := range p.Assignments {
				pods = append(pods, a.Pod)
			}
			return podNames(pods)
		}})
	return exitNoUnless(err, p.Verified())
}
