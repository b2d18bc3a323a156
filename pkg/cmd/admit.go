package cmd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
	"github.com/kubectl-gang/kubectl-gang/pkg/describe"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/admit"
)

var admitLong = templates.LongDesc(`
	Decide whether a gang may be admitted: it is valid (enough members), its
	minResources fit the free capacity, its namespace's ResourceQuota has room,
	its Volcano Queue's capability allows it, and the whole gang can be placed.
	Each check is reported with its figures.

	With --ungate GATE, once admitted, that scheduling gate is removed from every
	member (with resourceVersion preconditions) so the scheduler takes them.` + workloadHelp + `

	Admission is the decision to release a gang, so admit does not count the
	scheduling gates it removes against it (explain says Gated, place Gated
	and bind refuses gated members until they are released). --ungate GATE
	that removes GATE from no member (no member carries it: a misspelt gate,
	or a gang released already) warns and exits 3.

	The verdict is Admitted, Rejected (a check failed) or Unverified (none
	failed, but one could not be evaluated: unknown is neither a pass nor a
	refusal). Exit code 0 when admitted (and, with --ungate, released), 3 when
	rejected, unverified, or when --ungate released nothing.`)

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
	// Lock makes --ungate take turns with bind and other ungates: the
	// decision is made on what the cluster holds once the run holds it.
	Lock LockFlags
	// WaitBound is how long --ungate holds the lock for the scheduler to
	// bind the released members.
	WaitBound time.Duration
}

// NewAdmitOptions returns AdmitOptions with defaults.
func NewAdmitOptions(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *AdmitOptions {
	return &AdmitOptions{GangVerbOptions: newGangVerbOptions(snapshot, streams)}
}

// NewCmdAdmit returns the admit verb.
func NewCmdAdmit(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewAdmitOptions(snapshot, streams)
	cmd := &cobra.Command{
		Use:                   "admit (podgroup/NAME | WORKLOAD/NAME | -l SELECTOR | -f FILE) [--ungate GATE]",
		DisableFlagsInUseLine: true,
		Short:                 "Decide whether a whole gang may start, and optionally release it",
		Long:                  admitLong,
		Example:               admitExample,
		RunE:                  runE(o),
		ValidArgsFunction:     completeSubject(snapshot, false, true),
	}
	o.addFlags(cmd, "to admit")
	cmd.Flags().StringVar(&o.Ungate, "ungate", o.Ungate, "Once admitted, remove this scheduling gate from every member of the gang.")
	o.Lock.AddFlags(cmd.Flags())
	cmd.Flags().DurationVar(&o.WaitBound, "wait-bound", time.Minute, "With --ungate, keep the lock until the scheduler has bound the released members, at most this long, so that the next bind or ungate sees their room taken (0: do not wait).")
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
		if o.subject.Kind == SubjectWorkload || o.subject.Kind == SubjectWaiting {
			return usageErrorf("--ungate needs pods that exist; a workload's members may not yet: give its pods with -l")
		}
		if o.Snapshot.Offline() {
			return usageErrorf("--ungate writes to the cluster; it cannot be used with --snapshot")
		}
	}
	return validateOutput(o.PrintFlags, "wide")
}

// Run decides admission, prints every check, and with --ungate releases the
// members; a rejection ends with exit code 3.
func (o *AdmitOptions) Run(ctx context.Context) error {
	if o.Ungate != "" {
		// Two runs releasing gangs onto the same free room take turns, and
		// each decides on what the cluster holds once it is its turn.
		return o.Lock.hold(ctx, &o.GangVerbOptions, "admit --ungate", o.run)
	}
	return o.run(ctx)
}

// run admits the gang and, with --ungate, releases it.
func (o *AdmitOptions) run(ctx context.Context) error {
	snap, g, err := o.loadGang(ctx)
	if err != nil {
		return err
	}
	stop := o.working(g, "admitting", "checking validity, gates, quota and placement")
	a, err := admit.Gang(ctx, snap, g, o.placeOptions(snap, g, nil))
	stop()
	if err != nil {
		return err
	}
	carried := o.gateCarried(g)
	var ungated *admit.UngateReport
	if a.Admitted() && o.Ungate != "" {
		client, err := o.client()
		if err != nil {
			return err
		}
		if ungated, err = admit.Ungate(ctx, client, g, o.Ungate); err != nil {
			return err
		}
		if len(ungated.Ungated) > 0 && o.WaitBound > 0 && !o.Lock.NoLock {
			if err := admit.WaitBound(ctx, client, g, ungated, 250*time.Millisecond, o.WaitBound); err != nil {
				return err
			}
			if n := len(ungated.NotBoundYet); n > 0 {
				o.warn([]string{fmt.Sprintf("%d released member(s) were not bound by their scheduler within %s (--wait-bound); a bind or ungate after this one may plan onto their room",
					n, o.WaitBound)})
			}
		}
	}
	// --ungate GATE that releases nothing is not what the user asked for:
	// a misspelt gate, or a gang released already. The decision still
	// prints, with a warning, and the exit code is 3, as for a bind that
	// binds nothing (docs/design.md#one-verdict-per-question).
	releasedNothing := o.Ungate != "" && (ungated == nil && !carried || ungated != nil && len(ungated.Ungated) == 0 && len(ungated.Changed) == 0)
	if releasedNothing {
		o.warn([]string{o.noGateWarning(g)})
	}
	if ungated != nil {
		if others := gang.GateNames(stillGated(g, o.Ungate, ungated)); len(others) > 0 {
			o.warn([]string{fmt.Sprintf("released members still carry the scheduling gate(s) %s, which this run does not remove: their scheduler does not try them until those are removed too",
				strings.Join(others, ", "))})
		}
	}
	vc := o.volcanoConfiguration(snap, g)
	err = o.printResult(output{kind: v1alpha1.KindAdmission, namespace: g.Namespace, name: g.Name,
		object: func() any {
			obj := v1alpha1.FromAdmission(a, ungated)
			obj.VolcanoConfiguration = vc
			return obj
		},
		human: func(d describe.Options) error {
			d.Configuration = volcanoLine(vc)
			return describe.Admission(o.Out, a, ungated, d)
		},
		names: func() []string { return gangNames(g) }})
	return exitNoUnless(err, a.Admitted() && (ungated == nil || len(ungated.Changed) == 0) && !releasedNothing)
}

// gateCarried reports whether a pending member of g carries the gate
// --ungate removes, in the snapshot.
func (o *AdmitOptions) gateCarried(g *gang.Gang) bool {
	for _, pod := range g.Pending() {
		for _, sg := range pod.Spec.SchedulingGates {
			if sg.Name == o.Ungate {
				return true
			}
		}
	}
	return false
}

// noGateWarning says that --ungate released nothing, and which gates the
// members do carry, so a misspelt gate shows.
func (o *AdmitOptions) noGateWarning(g *gang.Gang) string {
	carry := "no pending member carries any scheduling gate"
	if gates := gang.GateNames(g.Pending()); len(gates) > 0 {
		carry = "the pending members carry " + strings.Join(gates, ", ")
	}
	return fmt.Sprintf("no member of gang %s carries the scheduling gate %q, so --ungate released nothing (%s)", g.Key(), o.Ungate, carry)
}

// stillGated are the pending members --ungate released that carry other
// gates too (as the snapshot read them).
func stillGated(g *gang.Gang, removed string, r *admit.UngateReport) []*corev1.Pod {
	released := map[string]bool{}
	for _, key := range r.Ungated {
		released[key] = true
	}
	var out []*corev1.Pod
	for _, pod := range g.Pending() {
		if !released[pod.Namespace+"/"+pod.Name] {
			continue
		}
		c := pod.DeepCopy()
		c.Spec.SchedulingGates = slices.DeleteFunc(c.Spec.SchedulingGates, func(sg corev1.PodSchedulingGate) bool { return sg.Name == removed })
		out = append(out, c)
	}
	return out
}
