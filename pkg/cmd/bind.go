package cmd

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
	"github.com/kubectl-gang/kubectl-gang/pkg/describe"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/bind"
)

var bindLong = templates.LongDesc(`
	Place a gang and bind every member to its node through the pods/binding
	subresource, all or nothing, for clusters with no gang scheduler.

	The API has no multi-object transaction and no unbind, so "all or nothing"
	means: check your permissions (SelfSubjectAccessReview), re-read every member
	and target node and re-check the plan on them, have the server dry-run every
	Binding, commit them, then read every member back and report honestly. Each
	Binding carries the pod's UID, so a pod recreated under the same name is never
	bound. A Binding whose answer is lost is settled by reading the pod.

	bind is the scheduler of the pods it binds: pods whose schedulerName no
	profile names (the usual way to hand a gang to an external binder) are
	placed with the profile place stands in with, and a note says which. A pod
	on a node that names the same scheduler but was not bound by kubectl-gang
	(bound pods carry kubectl-gang.github.io/bound-by) shows another scheduler
	may serve the name: a warning says so, and the bind goes on.

	Runs of bind (and admit --ungate) on one cluster take turns: each holds a
	coordination.k8s.io Lease (--lock-namespace and --lock-name; by default
	kube-system/kubectl-gang-bind) from before it reads the cluster until it has
	verified what it bound, so a run that waited plans on what the one before it
	left. A holder that died is taken over once its Lease expires (15s).

	After the commit, bind reads the target nodes again: a node that others
	(kube-scheduler, a tool without the lock) have filled past its allocatable
	since is reported, and the verdict is Overcommitted (exit 5), never Bound.

	When fewer than the minimum end up bound, --on-partial=report (the default)
	leaves them and reports them; --on-partial=delete deletes the pods this run
	bound so their controller recreates them unbound (a pod no controller owns is
	never deleted: it is left bound and named).

	Bound pods get kube-scheduler's "Scheduled" event, and a native PodGroup the
	PodGroupInitiallyScheduled condition. Ctrl-C before the commit writes nothing;
	during it, the Bindings in flight finish, and the members are read back and
	reported.

	Exit code 0 when all are bound (or a dry run passed), 3 when nothing was bound
	(the gang does not fit, or the cluster moved since the snapshot), 4 when some
	were bound and some not, 5 when Bindings were written but the outcome is not
	a verified yes (a node is overcommitted by others, or what the server holds
	could not be read back).`)

var bindExample = templates.Examples(`
	# Bind a whole PodGroup
	kubectl gang bind podgroup/llm-pretrain -n ml-research

	# Check everything, including server-side admission, but write nothing
	kubectl gang bind podgroup/llm-pretrain -n ml-research --dry-run=server

	# Bind the pods of a label selector, at least 4 of them, as JSON
	kubectl gang bind -l job=sim --min-member 4 -o json`)

// Values of --dry-run, as kubectl names them.
const (
	dryRunNone   = string(bind.DryRunNone)
	dryRunClient = string(bind.DryRunClient)
	dryRunServer = string(bind.DryRunServer)
)

// BindOptions are the inputs of `kubectl gang bind`.
type BindOptions struct {
	GangVerbOptions
	DryRun    string
	OnPartial string
	// BulkReads is bind.Options.BulkReads (a hidden flag, for tests of
	// both ways of reading).
	BulkReads int
	Lock      LockFlags
}

// NewBindOptions returns BindOptions with defaults.
func NewBindOptions(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *BindOptions {
	return &BindOptions{GangVerbOptions: newGangVerbOptions(snapshot, streams), DryRun: dryRunNone, OnPartial: string(bind.OnPartialReport)}
}

// NewCmdBind returns the bind verb.
func NewCmdBind(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewBindOptions(snapshot, streams)
	cmd := &cobra.Command{
		Use:                   "bind (podgroup/NAME | -l SELECTOR) [--dry-run=client|server]",
		DisableFlagsInUseLine: true,
		Short:                 "Bind every member of a gang to its node, or none",
		Long:                  bindLong,
		Example:               bindExample,
		RunE:                  runE(o),
		ValidArgsFunction:     completeSubject(snapshot, false, false),
	}
	o.addFlags(cmd, "to bind")
	// bind binds pods that exist: -f (what-if manifests) is refused, so
	// help does not offer it.
	_ = cmd.Flags().MarkHidden("filename")
	cmd.Flags().StringVar(&o.DryRun, "dry-run", o.DryRun, `Must be "none", "server", or "client". With client, re-check the plan against the cluster and write nothing; with server, also send every Binding with dryRun=All.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = dryRunClient
	cmd.Flags().IntVar(&o.BulkReads, "bulk-reads", bind.DefaultBulkReads, "Members and target nodes above which the re-read and the read-back list pods and nodes instead of reading each; -1 always lists.")
	_ = cmd.Flags().MarkHidden("bulk-reads")
	o.Lock.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&o.OnPartial, "on-partial", o.OnPartial, `What to do when fewer than the minimum end up bound: "report" leaves them and exits 4; "delete" deletes the pods this run bound so their controller recreates them, and exits 4.`)
	return cmd
}

// Complete resolves the gang from the arguments.
func (o *BindOptions) Complete(args []string) error {
	return o.complete(args, false, false)
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
	switch bind.OnPartial(o.OnPartial) {
	case bind.OnPartialReport, bind.OnPartialDelete:
	default:
		return usageErrorf(`invalid --on-partial %q: must be "report" or "delete"`, o.OnPartial)
	}
	if o.Snapshot.Offline() {
		return usageErrorf("bind reads and writes the cluster; it cannot run on --snapshot (use place for an offline plan)")
	}
	return validateOutput(o.PrintFlags, "wide")
}

// Run binds the gang and reports what happened to every member.
func (o *BindOptions) Run(ctx context.Context) error {
	if o.DryRun != dryRunNone {
		// A dry run writes nothing, so it need not wait its turn.
		return o.run(ctx)
	}
	return o.Lock.hold(ctx, &o.GangVerbOptions, "bind", o.run)
}

// run binds the gang, under the lock when it writes.
func (o *BindOptions) run(ctx context.Context) error {
	snap, g, err := o.loadGang(ctx)
	if err != nil {
		return interruptedOr(ctx, err)
	}
	// Not in the report (bind reports what it wrote), but a Volcano gang's
	// configuration that could not be read is said, as place says it.
	o.volcanoConfiguration(snap, g)
	client, err := o.client()
	if err != nil {
		return err
	}
	var done, total atomic.Int64
	stop := showProgress(o.ErrOut, func() string {
		if total.Load() == 0 {
			return "checking the plan against the cluster"
		}
		return fmt.Sprintf("binding: %d of %d done", done.Load(), total.Load())
	})
	r, err := bind.Gang(ctx, snap, g, client, bind.Options{
		Place:       o.bindPlaceOptions(snap, g),
		DryRun:      bind.DryRun(o.DryRun),
		OnPartial:   bind.OnPartial(o.OnPartial),
		BulkReads:   o.BulkReads,
		Interrupted: ctx.Done(),
		Progress:    func(d, t int) { done.Store(int64(d)); total.Store(int64(t)) },
	})
	stop()
	if err != nil {
		if errors.Is(err, bind.ErrForbidden) {
			return &exitError{code: ExitError, err: err}
		}
		return interruptedOr(ctx, err)
	}
	if err := o.printResult(output{kind: v1alpha1.KindBindReport, namespace: g.Namespace, name: g.Name,
		object: func() any { return v1alpha1.FromBindReport(r) },
		human:  func(d describe.Options) error { return describe.BindReport(o.Out, r, d) },
		names:  func() []string { return boundNames(r) }}); err != nil {
		return err
	}
	if r.LostEvents > 0 {
		fmt.Fprintf(o.ErrOut, "Warning: %d Scheduled events could not be recorded\n", r.LostEvents)
	}
	switch r.Verdict {
	case bind.VerdictBound, bind.VerdictDryRun:
		return nil
	case bind.VerdictPartiallyBound:
		return &exitError{code: ExitPartial}
	case bind.VerdictOvercommitted, bind.VerdictUnverified:
		return &exitError{code: ExitUnverified}
	default:
		return &exitError{code: ExitNo}
	}
}

// interruptedOr says "interrupted" for an error caused by Ctrl-C before
// anything was written.
func interruptedOr(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return errors.New("interrupted before binding: nothing was written")
	}
	return err
}

// boundNames are the pods a bind bound (or, with --dry-run, would bind).
func boundNames(r *bind.Report) []string {
	var pods []*corev1.Pod
	for _, m := range r.Members {
		if m.Result == bind.OutcomeBound || m.Result == bind.OutcomeWouldBind {
			pods = append(pods, m.Pod)
		}
	}
	return podNames(pods)
}
