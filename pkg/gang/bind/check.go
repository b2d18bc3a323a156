package bind

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// checkPermissions asks the server whether the user may do everything the
// run may need, before anything is written.
func checkPermissions(ctx context.Context, c Client, g *gang.Gang, opts Options) error {
	need := []authorizationv1.ResourceAttributes{
		{Namespace: g.Namespace, Verb: "create", Resource: "pods", Subresource: "binding"},
		{Namespace: g.Namespace, Verb: "get", Resource: "pods"},
		{Namespace: g.Namespace, Verb: "create", Group: "events.k8s.io", Resource: "events"},
	}
	if opts.OnPartial == OnPartialDelete {
		need = append(need, authorizationv1.ResourceAttributes{Namespace: g.Namespace, Verb: "delete", Resource: "pods"})
	}
	if g.Source == gang.SourceNative && g.PodGroup != nil {
		need = append(need, authorizationv1.ResourceAttributes{Namespace: g.Namespace, Verb: "update",
			Group: "scheduling.k8s.io", Resource: "podgroups", Subresource: "status", Name: g.Name})
	}
	// One review per permission, all at once.
	allowed := make([]bool, len(need))
	errs := make([]error, len(need))
	forEach(len(need), len(need), nil, func(i int) { allowed[i], errs[i] = c.Allowed(ctx, need[i]) })
	var missing []string
	for i, attr := range need {
		if errs[i] != nil {
			return fmt.Errorf("checking permissions: %w", errs[i])
		}
		if !allowed[i] {
			missing = append(missing, describeAttr(attr))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: nothing was bound: you may not %s", ErrForbidden, strings.Join(missing, ", "))
	}
	return nil
}

func describeAttr(a authorizationv1.ResourceAttributes) string {
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	if a.Group != "" {
		res += "." + a.Group
	}
	return fmt.Sprintf("%s %s in namespace %s", a.Verb, res, a.Namespace)
}

// check runs steps 2 and 3 (docs/design.md#binding-a-gang): the fresh read
// and the re-check of the plan, with the server's dry run of every Binding
// alongside. It reports whether the run stops before the commit; the
// report then says why.
func (b *binder) check(ctx context.Context, snap *schedule.Snapshot) (bool, error) {
	// The server's dry run (admission, the UID precondition) writes
	// nothing, so it runs while the cluster is read again and the plan
	// re-checked; its answers count only once those found nothing changed.
	var rejected []string
	var dry sync.WaitGroup
	if b.opts.DryRun != DryRunClient {
		dry.Go(func() { rejected = serverDryRun(ctx, b.c, b.p, b.opts.Parallelism) })
	}
	changed, err := b.recheckCluster(ctx, snap)
	dry.Wait()
	if err != nil {
		return false, err
	}
	return b.stopBeforeCommit(changed, rejected), nil
}

// recheckCluster reads every member and target node again, and the pods on
// those nodes, and returns what changed in a way that stops the bind:
// a member gone, recreated, bound or gated, a node gone, or a node that no
// longer fits its members.
func (b *binder) recheckCluster(ctx context.Context, snap *schedule.Snapshot) ([]string, error) {
	rr := newReread(b.c, snap, b.p, b.opts)
	if err := rr.read(ctx); err != nil {
		return nil, err
	}
	if changed, err := rr.changedMembers(); err != nil || len(changed) > 0 {
		return changed, err
	}
	fresh, changed, err := rr.freshSnapshot()
	if err != nil || len(changed) > 0 {
		return changed, err
	}
	// The nodes as read now are what the check after the commit weighs
	// their pods against.
	b.fresh = fresh
	if sameObjects(snap, fresh, rr.targetSet()) {
		// The placement ran these very cycles.
		return nil, nil
	}
	// Something on the target nodes changed since the snapshot: the plan
	// is run again on what they hold now.
	return recheck(ctx, fresh, b.p, b.opts.Place)
}

// stopBeforeCommit decides, in this order, whether the run stops before
// the commit: the cluster changed, the user interrupted, --dry-run=client
// is done, the server's dry run refused a Binding, --dry-run=server is
// done, or the user interrupted meanwhile.
func (b *binder) stopBeforeCommit(changed, rejected []string) bool {
	r := b.r
	switch {
	case len(changed) > 0:
		r.Reason = ReasonChanged
		r.Message = "the cluster changed since the snapshot, nothing was bound: " + strings.Join(changed, "; ")
	case interrupted(b.opts.Interrupted):
		r.Reason, r.Message = ReasonInterrupted, "interrupted before binding: nothing was written"
	case b.opts.DryRun == DryRunClient:
		dryRunDone(r, "plan re-checked against the cluster; nothing was written (--dry-run=client)")
	case len(rejected) > 0:
		r.Reason = ReasonRejected
		r.Message = "the server's dry run refused a Binding, nothing was bound: " + strings.Join(rejected, "; ")
	case b.opts.DryRun == DryRunServer:
		dryRunDone(r, "every Binding passed the server's dry run; nothing was written (--dry-run=server)")
	case interrupted(b.opts.Interrupted):
		r.Reason, r.Message = ReasonInterrupted, "interrupted before binding: nothing was written"
	default:
		return false
	}
	return true
}

// serverDryRun sends every planned Binding with dryRun=All and returns the
// refusals.
func serverDryRun(ctx context.Context, c Client, p *gang.Placement, workers int) []string {
	rejected := make([]string, len(p.Assignments))
	forEach(workers, len(p.Assignments), nil, func(i int) {
		a := p.Assignments[i]
		if err := c.Bind(ctx, binding(a), true); err != nil {
			rejected[i] = fmt.Sprintf("%s to %s: %v", podKey(a.Pod), a.Node, err)
		}
	})
	return slices.DeleteFunc(rejected, func(s string) bool { return s == "" })
}

// changedMembers says how the members read again differ from the plan's:
// gone, recreated, being deleted, bound (a planned one) or moved (one bound
// before), or gated.
func (rr *reread) changedMembers() ([]string, error) {
	var changed []string
	for i, m := range rr.memberReads {
		want := rr.all[i]
		key := podKey(want)
		switch {
		case apierrors.IsNotFound(m.err):
			changed = append(changed, key+" was deleted")
		case m.err != nil:
			return nil, fmt.Errorf("reading pod %s: %w", key, m.err)
		case m.pod.UID != want.UID:
			changed = append(changed, key+" was recreated (new UID)")
		case m.pod.DeletionTimestamp != nil:
			changed = append(changed, key+" is being deleted")
		case i >= rr.planned:
			if m.pod.Spec.NodeName != want.Spec.NodeName {
				changed = append(changed, fmt.Sprintf("%s moved from %s to %q", key, want.Spec.NodeName, m.pod.Spec.NodeName))
			}
		case m.pod.Spec.NodeName != "":
			changed = append(changed, fmt.Sprintf("%s is bound to %s already", key, m.pod.Spec.NodeName))
		case len(m.pod.Spec.SchedulingGates) > 0:
			changed = append(changed, fmt.Sprintf("%s has scheduling gates (%s); release them first (kubectl gang admit --ungate)",
				key, strings.Join(gang.GateNames([]*corev1.Pod{m.pod}), ", ")))
		}
	}
	return changed, nil
}

// freshSnapshot returns the snapshot with the target nodes as read again
// and the pods on them as read now in place of the snapshot's, or which
// target nodes are gone.
func (rr *reread) freshSnapshot() (*schedule.Snapshot, []string, error) {
	fresh := *rr.snap
	fresh.Nodes = slices.Clone(rr.snap.Nodes)
	index := map[string]int{}
	for i, n := range fresh.Nodes {
		index[n.Name] = i
	}
	var gone []string
	for i, r := range rr.nodeReads {
		switch {
		case apierrors.IsNotFound(r.err):
			gone = append(gone, "node "+rr.nodes[i]+" was deleted")
			continue
		case r.err != nil:
			return nil, nil, fmt.Errorf("reading node %s: %w", rr.nodes[i], r.err)
		}
		if j, ok := index[rr.nodes[i]]; ok {
			fresh.Nodes[j] = r.node
		} else {
			fresh.Nodes = append(fresh.Nodes, r.node)
		}
	}
	if len(gone) > 0 {
		return nil, gone, nil
	}
	// The pods on the target nodes as read now replace the snapshot's,
	// including any the snapshot had pending (a preemptor bound since).
	reread := map[types.NamespacedName]bool{}
	for _, r := range rr.nodeReads {
		for _, pod := range r.pods {
			reread[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}] = true
		}
	}
	fresh.Pods = nil
	for _, pod := range rr.snap.Pods {
		if _, onTarget := rr.targets[pod.Spec.NodeName]; !onTarget && !reread[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}] {
			fresh.Pods = append(fresh.Pods, pod)
		}
	}
	for _, r := range rr.nodeReads {
		fresh.Pods = append(fresh.Pods, r.pods...)
	}
	return &fresh, nil, nil
}

// sameObjects reports whether the target nodes and the pods on them (and
// the pods that were pending) are, in fresh, the very objects of snap: the
// same UIDs and resource versions (an object without a resource version is
// never the same). Then fresh is snap, and the placement already ran every
// cycle recheck would run.
func sameObjects(snap, fresh *schedule.Snapshot, target map[string]bool) bool {
	version := func(nodes []*corev1.Node, pods []*corev1.Pod) (map[string]string, bool) {
		out := map[string]string{}
		for _, n := range nodes {
			if target[n.Name] {
				if n.ResourceVersion == "" {
					return nil, false
				}
				out["node/"+n.Name] = string(n.UID) + "@" + n.ResourceVersion
			}
		}
		for _, pod := range pods {
			if target[pod.Spec.NodeName] || pod.Spec.NodeName == "" {
				if pod.ResourceVersion == "" {
					return nil, false
				}
				out[pod.Namespace+"/"+pod.Name] = string(pod.UID) + "@" + pod.ResourceVersion
			}
		}
		return out, true
	}
	a, okA := version(snap.Nodes, snap.Pods)
	b, okB := version(fresh.Nodes, fresh.Pods)
	return okA && okB && maps.Equal(a, b)
}

// recheck runs every planned member through a full cycle confined to its
// planned node, in plan order, each reserved before the next, on the fresh
// snapshot: what the target nodes hold now must still take the plan.
func recheck(ctx context.Context, fresh *schedule.Snapshot, p *gang.Placement, opts gang.PlaceOptions) ([]string, error) {
	s, err := schedule.NewScheduler(fresh, schedule.Options{Profile: opts.Profile, Parallelism: opts.Parallelism})
	if err != nil {
		return nil, err
	}
	for _, a := range p.Assignments {
		st, err := s.FilterOn(ctx, a.Pod, a.Node)
		if err != nil {
			return nil, err
		}
		if st != nil {
			return []string{fmt.Sprintf("node %s no longer fits %s: %s", a.Node, podKey(a.Pod), st.Message())}, nil
		}
		if err := s.Reserve(a.Pod, a.Node); err != nil {
			return nil, err
		}
	}
	return nil, nil
}
