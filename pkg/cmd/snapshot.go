package cmd

import (
	"fmt"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/snapshot"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
)

var snapshotLong = templates.LongDesc(`
	Write every object the pipeline reads (Nodes, non-terminal Pods,
	PriorityClasses, Namespaces, ResourceQuotas, PodDisruptionBudgets,
	PersistentVolumeClaims, PersistentVolumes, StorageClasses, the Dynamic
	Resource Allocation ResourceSlices, DeviceClasses, ResourceClaims and
	ResourceClaimTemplates, the workloads default spreading reads, and the
	native, Volcano and coscheduling PodGroups and Volcano Queues that exist, and
	Volcano's scheduler ConfigMap, --volcano-config-map) as one v1 List, for
	offline use with --snapshot and for bug reports.

	The live read is paginated, consistent (never a stale cache), in parallel,
	in protobuf for built-in kinds. --summary prints what was read instead.

	A snapshot is of every namespace: -A (--all-namespaces) is accepted, as
	kubectl get takes it, and changes nothing; -n is refused.

	-o protobuf writes a binary snapshot: the same objects in the API server's
	protobuf encoding, which --snapshot reads several times faster than JSON
	(it knows the file by its first bytes). It is for this tool, not for
	people or kubectl.`)

var snapshotExample = templates.Examples(`
	# Save the cluster for offline use
	kubectl gang snapshot > cluster.yaml

	# Then work on it without a cluster
	kubectl gang explain podgroup/llm-pretrain -n ml-research --snapshot cluster.yaml

	# What does a snapshot hold?
	kubectl gang snapshot --snapshot examples/gpu-cluster.yaml --summary

	# A binary snapshot of a large cluster, loaded fast by every verb
	kubectl gang snapshot -o protobuf > cluster.pb
	kubectl gang explain -f job.yaml --snapshot cluster.pb`)

// SnapshotOptions are the inputs of `kubectl gang snapshot`.
type SnapshotOptions struct {
	Snapshot   *SnapshotFlags
	PrintFlags *genericclioptions.PrintFlags
	// Summary prints a table of what the snapshot holds instead of the objects.
	Summary   bool
	NoHeaders bool
	// AllNamespaces is -A, kubectl's habit: a snapshot reads every
	// namespace anyway, so it changes nothing.
	AllNamespaces bool

	printer printers.ResourcePrinter
	genericiooptions.IOStreams
}

// NewSnapshotOptions returns SnapshotOptions writing YAML by default.
func NewSnapshotOptions(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *SnapshotOptions {
	return &SnapshotOptions{
		Snapshot:   snapshot,
		PrintFlags: genericclioptions.NewPrintFlags("").WithDefaultOutput("yaml"),
		IOStreams:  streams,
	}
}

// NewCmdSnapshot returns the snapshot verb.
func NewCmdSnapshot(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewSnapshotOptions(snapshot, streams)
	cmd := &cobra.Command{
		Use:                   "snapshot [-o yaml|json|protobuf] [--summary]",
		DisableFlagsInUseLine: true,
		Short:                 "Save the objects the scheduler reads as one List, for offline use",
		Long:                  snapshotLong,
		Example:               snapshotExample,
		Args:                  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Validate(); err != nil {
				return classify(err)
			}
			return classify(o.Run(c))
		},
	}
	o.PrintFlags.AddFlags(cmd)
	if f := cmd.Flags().Lookup("output"); f != nil {
		f.Usage = strings.Replace(f.Usage, ").", ", "+outputProtobuf+").", 1)
	}
	_ = cmd.RegisterFlagCompletionFunc("output", completeFormats(append(o.PrintFlags.AllowedFormats(), outputProtobuf)))
	cmd.Flags().BoolVar(&o.Summary, "summary", o.Summary, "Print a table of what the snapshot holds instead of the objects.")
	cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", o.NoHeaders, "With --summary, do not print headers.")
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", o.AllNamespaces, "Accepted as with kubectl get: a snapshot reads every namespace anyway.")
	return cmd
}

// Validate checks the flags without I/O and builds the printer.
func (o *SnapshotOptions) Validate() error {
	if err := o.Snapshot.Validate(); err != nil {
		return err
	}
	if ns := o.Snapshot.ConfigFlags.Namespace; ns != nil && *ns != "" {
		return usageErrorf("snapshot reads every namespace (placement needs every pod: they fill the nodes and other gangs' spreading and affinity see them); -n does not apply")
	}
	if o.Summary {
		if o.PrintFlags.OutputFlagSpecified() {
			return usageErrorf("--summary prints a table; it cannot be combined with -o")
		}
		o.printer = printers.NewTablePrinter(printers.PrintOptions{NoHeaders: o.NoHeaders})
		return nil
	}
	if ptr.Deref(o.PrintFlags.OutputFormat, "") == outputProtobuf {
		return nil // written by stream
	}
	p, err := o.PrintFlags.ToPrinter()
	if err != nil {
		msg := oneLine(err.Error())
		if strings.Contains(msg, "allowed formats are: ") {
			msg += "," + outputProtobuf
		}
		return usageErrorf("%s", msg)
	}
	o.printer = p
	return nil
}

// outputProtobuf is the -o of a binary snapshot file
// (docs/design.md#the-snapshot-file).
const outputProtobuf = "protobuf"

// Run reads the snapshot and prints it.
func (o *SnapshotOptions) Run(c *cobra.Command) error {
	snap, err := o.Snapshot.Load(c.Context(), o.IOStreams)
	if err != nil {
		return err
	}
	if _, why := volcano.ConfigOf(snap); why != "" {
		// The file records it too (docs/design.md#volcanos-configuration).
		fmt.Fprintf(o.ErrOut, "Warning: %s\n", why)
	}
	var obj runtime.Object
	if o.Summary {
		obj = summaryTable(snap)
	} else if done, err := o.stream(snap); done {
		return err
	} else if obj, err = snapshot.ToList(snap); err != nil {
		return err
	}
	w, flush := blockWriter(o.Out)
	err = o.printer.PrintObj(obj, w)
	if ferr := flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("printing the snapshot: %w", err)
	}
	return nil
}

// stream writes the snapshot as JSON or YAML one object at a time, in the
// bytes the printer would write for the whole List (so memory stays at
// about what loading the snapshot takes), and reports whether it did: the
// other formats print the List.
func (o *SnapshotOptions) stream(snap *schedule.Snapshot) (bool, error) {
	showManaged := o.PrintFlags.JSONYamlPrintFlags != nil && o.PrintFlags.JSONYamlPrintFlags.ShowManagedFields
	var err error
	switch ptr.Deref(o.PrintFlags.OutputFormat, "") {
	case "json":
		err = snapshot.WriteJSON(o.Out, snap, showManaged)
	case "yaml":
		err = snapshot.WriteYAML(o.Out, snap, showManaged)
	case outputProtobuf:
		err = snapshot.WriteBinary(o.Out, snap)
	default:
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("printing the snapshot: %w", err)
	}
	return true, nil
}
