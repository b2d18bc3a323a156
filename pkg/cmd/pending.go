package cmd

import (
	"context"
	"slices"

	"k8s.io/klog/v2"

	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
	"github.com/kubectl-gang/kubectl-gang/pkg/describe"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/explain"
)

// listing says whether explain was given no subject: it then lists what
// is pending, in the namespace or (-A) in every namespace.
func (o *ExplainOptions) listing(args []string) bool {
	return len(args) == 0 && o.Subject.Selector == "" && o.Subject.Filename == ""
}

// completeListing checks the flags of a listing and resolves its namespace.
func (o *ExplainOptions) completeListing() error {
	switch {
	case o.Subject.MinMember > 0:
		return usageErrorf("--min-member applies to -l and -f input, not to the list of what is pending")
	case o.Scheduler.TopologyKey != "" || o.Scheduler.PreferTopologyKey != "":
		return usageErrorf("--topology-key and --prefer-topology-key apply to one gang; name it to use them")
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
	opts, warnings := o.Scheduler.placeOptions(nil, nil)
	o.warn(warnings)
	var bySource []explain.SourceOptions
	vopts, note, volcano := o.Scheduler.volcanoPlaceOptions(snap, gang.SourceVolcano)
	if volcano {
		bySource = append(bySource, explain.SourceOptions{Source: gang.SourceVolcano, Options: vopts})
	}
	stop := o.working(nil, "finding what is pending", "")
	lines, err := explain.ListPending(ctx, snap, o.namespace, opts, bySource...)
	stop()
	if err != nil {
		return err
	}
	if volcano && slices.ContainsFunc(lines, func(l explain.Pending) bool { return l.Gang != nil && l.Gang.Source == gang.SourceVolcano }) {
		// Logged once (-v 1), when a Volcano gang is listed.
		klog.V(1).Info(note)
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
