package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/kube"
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
	formats := append([]string{"wide"}, o.PrintFlags.AllowedFormats()...)
	cmd.Flags().Lookup("output").Usage = fmt.Sprintf("Output format. One of: (%s). Without it, or with wide, for people.", strings.Join(formats, ", "))
	_ = cmd.RegisterFlagCompletionFunc("output", completeFormats(formats))
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
	o.Snapshot.Namespaces = []string{o.namespace}
	if s.Kind == SubjectFile && s.Filename == "-" && o.Snapshot.Path == "-" {
		return usageErrorf("-f - and --snapshot - cannot both read standard input")
	}
	if s.Kind == SubjectFile && s.Filename == "-" && o.Scheduler.VolcanoConfigFile == "-" {
		return usageErrorf("-f - and --volcano-config - cannot both read standard input")
	}
	if s.Kind == SubjectWorkload && o.Snapshot.Offline() {
		// A snapshot holds no workloads: its decoder reads the kinds
		// the pipeline reads, and drops the others.
		return usageErrorf("%s is read from the cluster; offline, give its manifest with -f", s.Arg)
	}
	if err := o.completeVolcano(); err != nil {
		return err
	}
	return o.Scheduler.Complete()
}

// loadSnapshot reads what the subject's gang is made from (readSubject:
// first, so that a bad manifest or a workload that is not there is
// reported before the whole cluster is read), then the snapshot.
func (o *GangVerbOptions) loadSnapshot(ctx context.Context) (*schedule.Snapshot, error) {
	if err := o.readSubject(ctx); err != nil {
		return nil, err
	}
	snap, err := o.Snapshot.LoadForPlacement(ctx, o.IOStreams)
	if err != nil {
		return nil, err
	}
	o.applyVolcanoConfig(snap)
	return snap, nil
}

// loadGang reads the snapshot and resolves the gang on it; the snapshot
// returned is the one the verb works on (subjectGang).
func (o *GangVerbOptions) loadGang(ctx context.Context) (*schedule.Snapshot, *gang.Gang, error) {
	snap, err := o.loadSnapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	return o.subjectGang(snap)
}

// subjectGang resolves the (non-pod) subject into its gang and refuses flags
// that would change the group's own rules. The snapshot it returns is the
// one the verb works on: snap itself, or, for -f manifests that bring
// ResourceClaimTemplates and ResourceClaims, a copy with them added, as if
// applied with the workload (snap is not changed).
func (o *GangVerbOptions) subjectGang(snap *schedule.Snapshot) (*schedule.Snapshot, *gang.Gang, error) {
	g, err := resolveGang(snap, o.subject, o.namespace, o.Subject.MinMember)
	if err != nil {
		return nil, nil, err
	}
	if err := refuseUncountable(g.Members...); err != nil {
		return nil, nil, err
	}
	if o.subject.Kind == SubjectFile {
		if err := namespacesHeld(snap, g, manifestSource(o.subject.Filename)); err != nil {
			return nil, nil, err
		}
	}
	return g.WithObjects(snap), g, o.checkOverrides(g)
}

// namespacesHeld refuses -f manifests in a namespace the snapshot does not
// hold, as the API server refuses to create them there ("namespaces "X" not
// found"). A snapshot with no Namespace at all (a hand-made file) did not
// record them: nothing is refused there (docs/design.md#snapshot).
func namespacesHeld(snap *schedule.Snapshot, g *gang.Gang, source string) error {
	if len(snap.Namespaces) == 0 {
		return nil
	}
	held := make(map[string]bool, len(snap.Namespaces))
	for _, ns := range snap.Namespaces {
		held[ns.Name] = true
	}
	for _, p := range g.Members {
		if !held[p.Namespace] {
			return usageErrorf("%s: namespaces %q not found", source, p.Namespace)
		}
	}
	return nil
}

// refuseUncountable refuses a pending pod whose quantities kube-scheduler
// cannot count (schedule.ValidateRange). Pods no API server has seen were
// checked when read; a stored pod (the API server accepts such quantities)
// is checked here, once it is to be placed: kube-scheduler's sums would
// wrap, so any verdict on it would be noise (docs/design.md#snapshot).
func refuseUncountable(pods ...*corev1.Pod) error {
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			continue
		}
		if errs := schedule.ValidateRange(p); len(errs) > 0 {
			return usageErrorf("pod %s/%s: %v", p.Namespace, p.Name, errs.ToAggregate())
		}
	}
	return nil
}

// checkOverrides refuses topology flags that would silently change a
// PodGroup's own required topology (docs/design.md#gangs): --topology-key
// may add a required topology to a gang that has none, not replace one,
// and --prefer-topology-key cannot loosen one. (--min-member is checked
// where manifests are read.)
func (o *GangVerbOptions) checkOverrides(g *gang.Gang) error {
	required := g.TopologyKey
	if required == "" {
		return nil
	}
	group := g.Key()
	if g.PodGroup != nil {
		group = fmt.Sprintf("podgroups.%s/%s", g.Source, g.Name)
	}
	switch {
	case o.Scheduler.TopologyKey != "" && o.Scheduler.TopologyKey != required:
		return usageErrorf("--topology-key %s would replace the topology %s that %s requires; change it in the group",
			o.Scheduler.TopologyKey, required, group)
	case o.Scheduler.PreferTopologyKey != "":
		return usageErrorf("%s requires the topology %s; --prefer-topology-key cannot loosen it", group, required)
	}
	return nil
}

// resolveSubject turns the subject into what explain explains: a gang, or
// the pod alone (pod/NAME of a pod in no gang, or -f with a single pod and
// no PodGroup), with the snapshot to explain it on (subjectGang).
func (o *GangVerbOptions) resolveSubject(snap *schedule.Snapshot) (*schedule.Snapshot, *gang.Gang, *corev1.Pod, error) {
	if o.subject.Kind != SubjectPod {
		snap, g, err := o.subjectGang(snap)
		if err != nil {
			return nil, nil, nil, err
		}
		if (o.subject.Kind == SubjectFile || o.subject.Kind == SubjectWorkload) && g.PodGroup == nil && len(g.Members) == 1 && g.MinMember <= 1 && len(g.Queued) == 0 {
			// One pod from a file or a workload is a pod, not a gang of one
			// (but for a queueing layer, which admits the workload first).
			return snap, nil, g.Members[0], nil
		}
		return snap, g, nil, nil
	}
	g, pod, err := gang.ResolvePod(snap, o.namespace, o.subject.Name)
	if err != nil && pod != nil {
		if why, _, _ := gang.HeldForGroup(snap, pod); why != "" {
			// A pod whose PodGroup does not exist is held pending by its
			// scheduler: explain.Pod says so as a verdict.
			return snap, nil, pod, nil
		}
	}
	if err != nil {
		return nil, nil, nil, asInputError(err)
	}
	if err := refuseUncountable(pod); err != nil {
		return nil, nil, nil, err
	}
	if g != nil {
		if err := refuseUncountable(g.Members...); err != nil {
			return nil, nil, nil, err
		}
		if err := o.checkOverrides(g); err != nil {
			return nil, nil, nil, err
		}
	}
	return snap, g, pod, nil
}

// placeOptions are the placement options for the subject (a gang, or a
// pod alone); a warning about the profile goes to stderr. A Volcano gang
// is placed with Volcano's node choice (docs/design.md#volcanos-node-order)
// unless --scheduler-config or --profile says otherwise; -v 1 logs its node
// order and where its configuration came from.
func (o *GangVerbOptions) placeOptions(snap *schedule.Snapshot, g *gang.Gang, pod *corev1.Pod) gang.PlaceOptions {
	pods := []*corev1.Pod{pod}
	if g != nil {
		pods = g.Members
		if opts, ok := o.volcanoPlaceOptions(snap, g); ok {
			return opts
		}
	}
	opts, warnings := o.Scheduler.placeOptions(snap, pods)
	o.warn(warnings)
	return opts
}

// bindPlaceOptions are placeOptions for bind (SchedulerFlags.bindPlaceOptions):
// the note that says which profile stands in for the pods' schedulerName
// goes to stderr once, with any warning.
func (o *GangVerbOptions) bindPlaceOptions(snap *schedule.Snapshot, g *gang.Gang) gang.PlaceOptions {
	if opts, ok := o.volcanoPlaceOptions(snap, g); ok {
		return opts
	}
	opts, note, warnings := o.Scheduler.bindPlaceOptions(snap, g.Members)
	if note != "" {
		fmt.Fprintf(o.ErrOut, "Note: %s\n", note)
	}
	o.warn(warnings)
	return opts
}

// working shows a progress line on a terminal while a long verb works on
// the subject (a large gang), after a second: what it is doing and for how
// long. g is nil for a lone pod.
func (o *GangVerbOptions) working(g *gang.Gang, verb, doing string) (stop func()) {
	start := time.Now()
	return showProgress(o.ErrOut, func() string {
		if g == nil {
			return fmt.Sprintf("%s: %s", verb, time.Since(start).Round(time.Second))
		}
		return fmt.Sprintf("%s gang %s (%d members): %s, %s", verb, g.Key(), len(g.Members), doing, time.Since(start).Round(time.Second))
	})
}

// warn writes the result's warnings to stderr, as kubectl writes its own.
func (o *GangVerbOptions) warn(warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(o.ErrOut, "Warning: %s\n", w)
	}
}

// client is the API client of the verbs that write (admit --ungate, bind).
func (o *GangVerbOptions) client() (*kube.Client, error) {
	cfg, err := o.Snapshot.RESTConfig()
	if err != nil {
		return nil, err
	}
	return kube.New(cfg)
}
