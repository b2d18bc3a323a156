package cmd

import (
	"context"

	"k8s.io/apimachinery/pkg/labels"

	corev1 "k8s.io/api/core/v1"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
	"github.com/kubectl-gang/kubectl-gang/pkg/describe"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/explain"
)

var explainLong = templates.LongDesc(`
	Explain why a pod or a whole gang is Pending and what would make it fit.

	The answer comes first: the verdict, the summary line, the member that
	blocks a gang and the constraint, then the suggestions, each proven by
	placing on a changed copy of the snapshot: the shortfall per resource, the
	lower-priority pods a preemption would evict (nothing is evicted), the
	tolerations or the label a selector misspells, a node shape the cluster
	has and how many, nodes to uncordon or repair, a smaller minimum.

	Details follow: the gang's validity and how many members fit at once and
	where, how many members each topology domain holds with the free capacity
	of the resource that binds, the nodes grouped by verdict with example
	names, and a table of the most telling nodes (those that got members, the
	best feasible, the nearest misses): --max-rows=N shows N rows (0: all),
	-o wide shows every node with a column per filter plugin. Lines fit 120
	columns; long text wraps.

	The summary line of a pod that belongs to no gang is, in -o json's
	"message", byte for byte the message kube-scheduler writes in the pod's
	PodScheduled condition ("0/N nodes are available: ..."), preemption part
	included; on screen it wraps. For a gang it is the blocked member's message
	in the state after the members before it are placed; with a topology
	constraint it counts nodes outside the domain with our own reason "node(s)
	were outside the gang's topology domain", which kube-scheduler does not
	write.

	Without a subject, explain simulates the queue: every gang with a pending
	member and every pending pod of no gang, in every namespace, taken in the
	order their schedulers take them (priority, then the time they entered the
	queue) and placed all or nothing on the state the ones before left. It
	lists those of the namespace (-A: every namespace; with -A, -l keeps those
	with a pending pod the selector matches) in queue order: scheduler, queue,
	priority, age, members, and the verdict: Starts (where), Waits (behind the
	named gangs that take its room), Blocked (by its own constraint, the
	reason explain gives), NeverFits (not even on an empty cluster), Held
	(gates, members not created, no scheduler by its schedulerName), or
	Unverified. -o name prints the names to explain next.

	-v=6 logs every request to the API server, as kubectl does.` + workloadHelp + `

	Exit code 0 when the subject is schedulable, 3 when it is not; 0 for a
	list.`)

var explainExample = templates.Examples(`
	# What is pending in every namespace, and why, one line each
	kubectl gang explain -A

	# Explain a pending gang
	kubectl gang explain podgroup/llm-pretrain -n ml-research

	# Explain one pod (and its gang, if it belongs to one)
	kubectl gang explain pod/llm-pretrain-worker-0 -n ml-research

	# Every filter plugin's verdict on every node
	kubectl gang explain podgroup/llm-pretrain -n ml-research -o wide

	# Explain a JobSet: the pods its controllers created and the ones to come
	kubectl gang explain jobset/pretrain -n ml-research

	# Explain the pods a selector picks, as a gang of at least 4
	kubectl gang explain -l app=mpi-job --min-member 4

	# What if these manifests were applied?
	kubectl gang explain -f job.yaml`)

// ExplainOptions are the inputs of `kubectl gang explain`.
type ExplainOptions struct {
	GangVerbOptions
	NoColor bool
	// MaxRows caps the node and domain tables (--max-rows).
	MaxRows int
	// AllNamespaces lists what is pending in every namespace (-A).
	AllNamespaces bool
	// SortBy orders the list (--sort-by); queue order when empty.
	SortBy string

	list bool
	// listSelector filters the list (-A -l).
	listSelector labels.Selector
}

// defaultMaxRows keeps explain on one screen on a cluster of thousands of
// nodes: the node histogram says where the rest stand.
const defaultMaxRows = 10

// NewExplainOptions returns ExplainOptions with defaults.
func NewExplainOptions(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *ExplainOptions {
	return &ExplainOptions{GangVerbOptions: newGangVerbOptions(snapshot, streams), MaxRows: defaultMaxRows}
}

// NewCmdExplain returns the explain verb.
func NewCmdExplain(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewExplainOptions(snapshot, streams)
	cmd := &cobra.Command{
		Use:                   "explain [pod/NAME | podgroup/NAME | WORKLOAD/NAME | -l SELECTOR | -f FILE | -A]",
		DisableFlagsInUseLine: true,
		Short:                 "Explain why a pod or gang is Pending and what would make it fit",
		Long:                  explainLong,
		Example:               explainExample,
		RunE:                  runE(o),
		ValidArgsFunction:     completeSubject(snapshot, true, true),
	}
	o.addFlags(cmd, "to explain")
	cmd.Flags().BoolVar(&o.NoColor, "no-color", o.NoColor, "Never colour the output (it is coloured only on a terminal anyway).")
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", o.AllNamespaces, "Without a subject, list what is pending in every namespace instead of the current one.")
	cmd.Flags().StringVar(&o.SortBy, "sort-by", o.SortBy, "Without a subject, order the list by a field of its items instead of queue order: position, namespace, name, scheduler, queue, priority, age (oldest first, as kubectl's --sort-by=.metadata.creationTimestamp), members (ascending, as kubectl sorts), verdict (Starts, Unverified, Waits, Blocked, Held, NeverFits); kubectl's JSONPath spelling ('{.priority}', '.metadata.creationTimestamp') is accepted.")
	cmd.Flags().IntVar(&o.MaxRows, "max-rows", o.MaxRows, "Rows of the node and domain tables to show, the most telling first (0: all; -o wide shows all).")
	return cmd
}

// Complete resolves the subject, the namespace and the scheduling profile.
func (o *ExplainOptions) Complete(args []string) error {
	if o.list = o.listing(args); o.list {
		return o.completeListing()
	}
	if o.SortBy != "" {
		return usageErrorf("--sort-by orders the list of what is pending and takes no subject")
	}
	if o.AllNamespaces {
		return usageErrorf("-A lists what is pending in every namespace and takes no subject; to explain one, name it with -n NAMESPACE")
	}
	return o.complete(args, true, true)
}

// Validate checks the flags without I/O.
func (o *ExplainOptions) Validate() error {
	if err := o.Snapshot.Validate(); err != nil {
		return err
	}
	return validateOutput(o.PrintFlags, "wide")
}

// Run explains the subject and prints the explanation; a subject that is
// not schedulable ends with exit code 3 after it is printed.
func (o *ExplainOptions) Run(ctx context.Context) error {
	if o.list {
		return o.runListing(ctx)
	}
	snap, err := o.loadSnapshot(ctx)
	if err != nil {
		return err
	}
	snap, g, pod, err := o.resolveSubject(snap)
	if err != nil {
		return err
	}
	o.readGateManagers(ctx, g, pod)
	opts := explain.Options{PlaceOptions: o.placeOptions(snap, g, pod)}
	if g != nil && o.subject.Kind == SubjectPod {
		opts.Member = o.member(g)
	}
	stop := o.working(g, "explaining", "placing it and checking what would make it fit")
	var e *explain.Explanation
	if g != nil {
		e, err = explain.Gang(ctx, snap, g, opts)
	} else {
		e, err = explain.Pod(ctx, snap, pod, opts)
	}
	if err == nil {
		var q *explain.QueuePlace
		if q, err = o.queuePlace(ctx, snap, g, pod); err == nil {
			e.SetQueue(q)
		}
	}
	stop()
	if err != nil {
		return err
	}
	o.warn(e.Warnings)
	var ns, name string
	if e.Gang != nil {
		ns, name = e.Gang.Namespace, e.Gang.Name
	} else {
		ns, name = e.Pod.Namespace, e.Pod.Name
	}
	vc := o.volcanoConfiguration(snap, e.Gang)
	err = o.printResult(output{kind: v1alpha1.KindExplanation, namespace: ns, name: name,
		object: func() any {
			obj := v1alpha1.FromExplanation(e)
			obj.VolcanoConfiguration = vc
			return obj
		},
		human: func(d describe.Options) error {
			d.Color = !o.NoColor && printers.AllowsColorOutput(o.Out)
			d.MaxRows = o.MaxRows
			d.Configuration = volcanoLine(vc)
			return describe.Explanation(o.Out, e, d)
		},
		names: func() []string {
			switch {
			case o.subject.Kind == SubjectPod:
				return []string{"pod/" + o.subject.Name}
			case e.Gang == nil:
				return podNames([]*corev1.Pod{e.Pod})
			}
			return gangNames(e.Gang)
		}})
	return exitNoUnless(err, e.Verdict == explain.VerdictSchedulable)
}

// member finds the pod the user named among its gang's members.
func (o *ExplainOptions) member(g *gang.Gang) *corev1.Pod {
	for _, pod := range g.Members {
		if pod.Name == o.subject.Name && (o.namespace == "" || pod.Namespace == o.namespace) {
			return pod
		}
	}
	return nil
}
