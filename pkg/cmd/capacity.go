package cmd

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
	"github.com/kubectl-gang/kubectl-gang/pkg/describe"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/capacity"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

var capacityLong = templates.LongDesc(`
	Count how many copies of a gang fit at once: copy 1 is placed all or
	nothing as place places it, then taken as running, copy 2 is placed on
	what copy 1 left, and so on, until a copy does not fit (the line says
	what stops it) or --max copies fit ("at least N"). A copy is the gang
	submitted again under another name: its members, its group and the
	labels that tie members to their own workload are renamed, so copies do
	not satisfy each other's affinity or count in each other's spread.
	The namespace's ResourceQuota stops the count too. Give several shapes
	at once (arguments, several -f, or a file with several workloads) for
	one line each.` + workloadHelp + `

	Below the count, a chart of the free accelerator capacity by hole size
	(how many schedulable nodes have 8, 7, ... 1 free) per zone, or per
	value of --topology-key, for the resources the shapes ask for; without
	a shape, the chart alone, for every extended resource and DRA driver.
	Only schedulable nodes count: not cordoned, and Ready.

	Exit code 0 when at least one copy of every shape fits, verified; 3
	when a shape fits no copy, or a count depends on something not
	evaluated; 2 for bad input.`)

var capacityExample = templates.Examples(`
	# How many more of this Job fit now, and what stops the next one?
	kubectl gang capacity -f train.yaml

	# Several shapes for a cron check, as JSON; the exit code says whether each fits once
	kubectl gang capacity -f small.yaml -f large.yaml -o json

	# Copies of a running gang
	kubectl gang capacity podgroup/llm-pretrain -n ml-research

	# The free GPUs by hole size per rack, from a saved snapshot
	kubectl gang capacity --topology-key example.com/rack --snapshot cluster.yaml`)

// CapacityOptions are the inputs of `kubectl gang capacity`.
type CapacityOptions struct {
	GangVerbOptions
	// Files are -f's manifests, one shape (or a list of workloads) each.
	Files []string
	// Max is the most copies tried per shape.
	Max int
	// Holes prints the hole chart below the counts.
	Holes bool

	shapes []*Subject
}

// NewCapacityOptions returns CapacityOptions with defaults.
func NewCapacityOptions(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *CapacityOptions {
	return &CapacityOptions{GangVerbOptions: newGangVerbOptions(snapshot, streams), Max: capacity.DefaultMax, Holes: true}
}

// NewCmdCapacity returns the capacity verb.
func NewCmdCapacity(snapshot *SnapshotFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewCapacityOptions(snapshot, streams)
	cmd := &cobra.Command{
		Use:                   "capacity [podgroup/NAME | pod/NAME | WORKLOAD/NAME ...] [-l SELECTOR] [-f FILE ...]",
		DisableFlagsInUseLine: true,
		Short:                 "Count how many copies of a gang fit at once, and chart the free accelerators by hole size",
		Long:                  capacityLong,
		Example:               capacityExample,
		RunE:                  runE(o),
		ValidArgsFunction:     completeSubject(snapshot, true, true),
	}
	flags := cmd.Flags()
	flags.StringVarP(&o.Subject.Selector, "selector", "l", "", "Count copies of the pods this label selector matches, as an ad hoc gang (supports '=', '==', '!=', 'in', 'notin').")
	flags.StringArrayVarP(&o.Files, "filename", "f", nil, "What-if: count copies of the gang these manifests make (as place -f reads them; several workloads in one file are a shape each); - for stdin; repeat for several shapes.")
	flags.Int32Var(&o.Subject.MinMember, "min-member", 0, "The gang's minimum for -l or -f input without a PodGroup; 0 means every pod.")
	flags.IntVar(&o.Max, "max", o.Max, "The most copies tried per shape; when that many fit, the count says \"at least\".")
	flags.BoolVar(&o.Holes, "holes", o.Holes, "Print the chart of free accelerators by hole size below the counts (--holes=false leaves it out).")
	o.Scheduler.AddFlags(flags)
	flags.Lookup("topology-key").Usage = "Confine each copy to one value of this node label (for example topology.kubernetes.io/zone); the chart's domains are its values (default: zones)."
	o.PrintFlags.AddFlags(cmd)
	formats := append([]string{"wide"}, o.PrintFlags.AllowedFormats()...)
	flags.Lookup("output").Usage = fmt.Sprintf("Output format. One of: (%s). Without it, or with wide, for people.", strings.Join(formats, ", "))
	_ = cmd.RegisterFlagCompletionFunc("output", completeFormats(formats))
	flags.BoolVar(&o.NoHeaders, "no-headers", o.NoHeaders, "Do not print the tables' headers.")
	return cmd
}

// Complete parses the shapes, the namespace and the scheduling profile.
func (o *CapacityOptions) Complete(args []string) error {
	if len(args) == 2 && !strings.Contains(args[0], "/") && !strings.Contains(args[1], "/") {
		args = []string{args[0] + "/" + args[1]} // kubectl's "TYPE NAME"
	}
	if o.Subject.MinMember < 0 {
		return usageErrorf("--min-member must not be negative, got %d", o.Subject.MinMember)
	}
	if o.Subject.MinMember > 0 && o.Subject.Selector == "" && len(o.Files) == 0 {
		return usageErrorf("--min-member applies to -l and -f input; a PodGroup or workload carries its own minimum")
	}
	for _, a := range args {
		s, err := parseSubject([]string{a}, &SubjectFlags{}, true, true)
		if err != nil {
			return err
		}
		o.shapes = append(o.shapes, s)
	}
	if o.Subject.Selector != "" {
		s, err := parseSubject(nil, &SubjectFlags{Selector: o.Subject.Selector}, true, true)
		if err != nil {
			return err
		}
		o.shapes = append(o.shapes, s)
	}
	stdin := 0
	for _, f := range o.Files {
		if f == "" {
			return usageErrorf("-f needs a file name, or - for stdin")
		}
		if f == "-" {
			stdin++
		}
		o.shapes = append(o.shapes, &Subject{Kind: SubjectFile, Filename: f})
	}
	switch {
	case stdin > 1:
		return usageErrorf("-f - may be given once: standard input is read once")
	case stdin > 0 && o.Snapshot.Path == "-":
		return usageErrorf("-f - and --snapshot - cannot both read standard input")
	case stdin > 0 && o.Scheduler.VolcanoConfigFile == "-":
		return usageErrorf("-f - and --volcano-config - cannot both read standard input")
	}
	var err error
	if o.namespace, err = o.Snapshot.Namespace(); err != nil {
		return err
	}
	o.Snapshot.Namespaces = []string{o.namespace}
	for _, s := range o.shapes {
		if s.Kind == SubjectWorkload && o.Snapshot.Offline() {
			return usageErrorf("%s is read from the cluster; offline, give its manifest with -f", s.Arg)
		}
		if s.Kind == SubjectWaiting {
			// Copies of a Workload would be new Workloads of no job.
			return usageErrorf("capacity counts copies of a job Kueue would admit, not of %s: give the job's manifest with -f", s.Arg)
		}
	}
	if err := o.completeVolcano(); err != nil {
		return err
	}
	return o.Scheduler.Complete()
}

// Validate checks the flags without I/O.
func (o *CapacityOptions) Validate() error {
	if err := o.Snapshot.Validate(); err != nil {
		return err
	}
	if o.Max < 1 {
		return usageErrorf("--max must be at least 1, got %d", o.Max)
	}
	if o.Scheduler.PreferTopologyKey != "" && len(o.shapes) == 0 {
		return usageErrorf("--prefer-topology-key applies to the copies of a shape; name one")
	}
	return validateOutput(o.PrintFlags, "wide")
}

// Run counts each shape's copies and prints the counts and the chart; a
// shape that fits no copy, or a count not verified, ends with exit code 3.
func (o *CapacityOptions) Run(ctx context.Context) error {
	if err := o.readShapes(ctx); err != nil {
		return err
	}
	snap, err := o.Snapshot.LoadForPlacement(ctx, o.IOStreams)
	if err != nil {
		return err
	}
	o.applyVolcanoConfig(snap)
	var results []describe.CapacityLine
	var nodes []*framework.NodeInfo
	var only []string
	chartKey := o.Scheduler.TopologyKey
	for _, s := range o.shapes {
		o.subject = s
		shapeSnap, g, err := o.shapeGang(snap)
		if err != nil {
			return err
		}
		opts := o.placeOptions(shapeSnap, g, nil)
		base, err := schedule.NewScheduler(shapeSnap, schedule.Options{Profile: opts.Profile, Parallelism: opts.Parallelism})
		if err != nil {
			return err
		}
		if nodes == nil {
			nodes = base.NodeInfos()
		}
		stop := o.working(g, "counting copies of", "each copy placed on what the ones before left")
		c, err := capacity.Count(ctx, shapeSnap, base, g, capacity.Options{Place: opts, Max: o.Max})
		stop()
		if err != nil {
			return err
		}
		if chartKey == "" && len(o.shapes) == 1 {
			chartKey = cmp.Or(g.TopologyKey, g.PreferredTopologyKey)
		}
		for _, r := range capacity.RequestedResources(shapeSnap, g) {
			if !slices.Contains(only, r) {
				only = append(only, r)
			}
		}
		results = append(results, describe.CapacityLine{Name: shapeName(s, g), Result: c})
	}
	var chart *capacity.HoleChart
	if o.Holes || len(o.shapes) == 0 {
		if nodes == nil {
			base, err := schedule.NewScheduler(snap, schedule.Options{})
			if err != nil {
				return err
			}
			nodes = base.NodeInfos()
		}
		chart = capacity.Holes(snap, nodes, cmp.Or(chartKey, corev1.LabelTopologyZone), only)
		if len(o.shapes) > 0 && len(only) == 0 {
			chart.Resources = nil // the shapes ask for no accelerator
		}
	}
	err = o.printResult(output{kind: v1alpha1.KindCapacity, namespace: o.namespace,
		object: func() any {
			names := make([]string, len(results))
			counts := make([]*capacity.Result, len(results))
			for i, r := range results {
				names[i], counts[i] = r.Name, r.Result
			}
			return v1alpha1.FromCapacity(names, counts, chart)
		},
		human: func(d describe.Options) error {
			return describe.Capacity(o.Out, results, chart, d)
		},
		names: func() []string {
			var out []string
			for _, r := range results {
				out = append(out, gangNames(r.Result.Gang)...)
			}
			return out
		}})
	yes := true
	for _, r := range results {
		yes = yes && r.Result.Verified()
	}
	return exitNoUnless(err, yes)
}
