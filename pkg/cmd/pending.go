package cmd

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"k8s.io/klog/v2"

	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
	"github.com/kubectl-gang/kubectl-gang/pkg/describe"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/explain"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
)

// listing says whether explain was given no subject: it then lists what
// is pending, in the namespace or (-A) in every namespace.
// With -A, -l filters the list (a gang of one selector cannot span
// namespaces, so -A -l has no other meaning).
func (o *ExplainOptions) listing(args []string) bool {
	return len(args) == 0 && o.Subject.Filename == "" && (o.Subject.Selector == "" || o.AllNamespaces)
}

// completeListing checks the flags of a listing and resolves its namespace.
func (o *ExplainOptions) completeListing() error {
	switch {
	case o.Subject.MinMember > 0:
		return usageErrorf("--min-member applies to -l and -f input, not to the list of what is pending")
	case o.Scheduler.TopologyKey != "" || o.Scheduler.PreferTopologyKey != "":
		return usageErrorf("--topology-key and --prefer-topology-key apply to one gang; name it to use them")
	}
	if o.Subject.Selector != "" {
		sel, err := labels.Parse(o.Subject.Selector)
		if err != nil {
			return usageErrorf("invalid selector %q: %v", o.Subject.Selector, err)
		}
		o.listSelector = sel
	}
	if !o.AllNamespaces {
		ns, err := o.Snapshot.Namespace()
		if err != nil {
			return err
		}
		o.namespace = ns
		o.Snapshot.Namespaces = []string{ns}
	}
	if err := o.completeVolcano(); err != nil {
		return err
	}
	return o.Scheduler.Complete()
}

// runListing prints one line per gang with a pending member and per
// pending pod of no gang. It is a "yes" (exit 0) whatever it finds: it
// answers "what is pending?", not "does it fit?".
func (o *ExplainOptions) runListing(ctx context.Context) error {
	snap, err := o.Snapshot.LoadForPlacement(ctx, o.IOStreams)
	if err != nil {
		return err
	}
	o.applyVolcanoConfig(snap)
	q, note, served := o.Scheduler.queueOptions(snap)
	if o.listSelector != nil {
		q.Selector = func(pod *corev1.Pod) bool { return o.listSelector.Matches(labels.Set(pod.Labels)) }
	}
	stop := o.working(nil, "simulating the queue", "")
	lines, err := explain.ListPending(ctx, snap, o.namespace, q)
	stop()
	if err != nil {
		return err
	}
	if served && slices.ContainsFunc(lines, func(l explain.Pending) bool { return l.Gang != nil && l.Gang.Source == volcano.Source }) {
		// Logged once (-v 1), when a Volcano gang is listed.
		klog.V(1).Info(note)
	}
	if err := sortPending(lines, o.SortBy); err != nil {
		return err
	}
	return o.printResult(output{kind: v1alpha1.KindPendingList, namespace: o.namespace,
		object: func() any { return v1alpha1.FromPending(lines) },
		human:  func(d describe.Options) error { return describe.Pending(o.Out, lines, o.AllNamespaces, d) },
		names: func() []string {
			out := make([]string, len(lines))
			for i := range lines {
				out[i] = lines[i].Name()
			}
			return out
		}})
}

// queueOptions place each entry of the queue simulation as its scheduler
// would: a Volcano gang with Volcano's node order (note says which, and
// volcano whether it applies), any other with the profile of its pods'
// schedulerName, without a warning per line; a name no profile serves and
// nothing in the snapshot shows served holds them (issue #27).
func (f *SchedulerFlags) queueOptions(snap *schedule.Snapshot) (q explain.QueueOptions, note string, served bool) {
	vopts, note, served := f.volcanoPlaceOptions(snap, volcano.Source)
	// A scheduler the configuration has no profile for, but which the
	// snapshot shows running, is stood in for by a profile: its entries
	// are not a plain yes (one profile per name, so that the simulation
	// keeps one working copy of it).
	standIns := map[string]*schedule.Profile{}
	q.PlaceFor = func(source gang.Source, pods []*corev1.Pod) (gang.PlaceOptions, string) {
		if source == volcano.Source && served {
			return vopts, ""
		}
		opts, _, standIn := f.profileFor(pods)
		if standIn == "" {
			return opts, ""
		}
		if !servedName(snap, standIn) {
			return opts, fmt.Sprintf("no scheduler serves schedulerName %q: no profile names it and no pod on a node was scheduled by it (a misspelt schedulerName?)", standIn)
		}
		p := standIns[standIn]
		if p == nil {
			p = opts.Profile.WithNotEvaluated(fmt.Sprintf("schedulerName %q: no profile of the configuration is that scheduler's; profile %q stands in for it", standIn, opts.Profile.Name))
			standIns[standIn] = p
		}
		opts.Profile = p
		return opts, ""
	}
	return q, note, served
}

// queuePlace is where the explained subject stands in the queue: its line
// of the simulation (explain.Position), when it is pending in the snapshot
// (not a what-if).
func (o *ExplainOptions) queuePlace(ctx context.Context, snap *schedule.Snapshot, g *gang.Gang, pod *corev1.Pod) (*explain.QueuePlace, error) {
	if o.Subject.Filename != "" {
		return nil, nil
	}
	q, _, _ := o.Scheduler.queueOptions(snap)
	return explain.Position(ctx, snap, q, func(l *explain.Pending) bool {
		if g != nil {
			return l.Gang != nil && l.Gang.Source == g.Source && l.Gang.Namespace == g.Namespace && l.Gang.Name == g.Name ||
				l.Gang != nil && gang.SameQueued(l.Gang, g)
		}
		return l.Gang == nil && l.Pod != nil && l.Pod.Namespace == pod.Namespace && l.Pod.Name == pod.Name
	})
}

// sortPending orders the list by --sort-by: a field of the list's items
// (kubectl's JSONPath spelling accepted), ascending as kubectl sorts, the
// verdicts from Starts to NeverFits; ties kept in queue order.
func sortPending(lines []explain.Pending, by string) error {
	key := strings.TrimPrefix(strings.Trim(strings.TrimSpace(by), "{}"), ".")
	var cmpf func(a, b *explain.Pending) int
	switch key {
	case "", "position":
		return nil
	case "namespace", "metadata.namespace":
		cmpf = func(a, b *explain.Pending) int { return strings.Compare(a.Namespace, b.Namespace) }
	case "name", "metadata.name":
		cmpf = func(a, b *explain.Pending) int { return describe.CompareNatural(a.Name(), b.Name()) }
	case "scheduler":
		cmpf = func(a, b *explain.Pending) int { return strings.Compare(a.Scheduler, b.Scheduler) }
	case "queue":
		cmpf = func(a, b *explain.Pending) int { return strings.Compare(a.Queue, b.Queue) }
	case "priority":
		cmpf = func(a, b *explain.Pending) int { return cmp.Compare(a.Priority, b.Priority) }
	case "age", "since", "metadata.creationTimestamp":
		cmpf = func(a, b *explain.Pending) int { return a.Since.Compare(b.Since) }
	case "members":
		cmpf = func(a, b *explain.Pending) int { return cmp.Compare(a.Members, b.Members) }
	case "verdict":
		// From the surest start to the surest no.
		rank := []explain.Outcome{explain.OutcomeStarts, explain.OutcomeUnverified, explain.OutcomeWaits, explain.OutcomeBlocked, explain.OutcomeHeld, explain.OutcomeNeverFits}
		cmpf = func(a, b *explain.Pending) int {
			return cmp.Compare(slices.Index(rank, a.Outcome), slices.Index(rank, b.Outcome))
		}
	default:
		return usageErrorf("--sort-by %q: the list sorts by position, namespace, name, scheduler, queue, priority, age, members or verdict", by)
	}
	slices.SortStableFunc(lines, func(a, b explain.Pending) int { return cmpf(&a, &b) })
	return nil
}
