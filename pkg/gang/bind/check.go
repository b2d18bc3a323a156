package bind

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

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

// memberRead is a member as read again, or the error reading it.
type memberRead struct {
	pod *corev1.Pod
	err error
}

// nodeRead is a target node as read again with the pods on it, or the
// error reading it.
type nodeRead struct {
	node *corev1.Node
	pods []*corev1.Pod
	err  error
}

// reread reads every member and every target node again, and the pods on
// those nodes, and returns the snapshot with them in place of what was read
// before, or what changed in a way that stops the bind.
func reread(ctx context.Context, c Client, snap *schedule.Snapshot, p *gang.Placement, opts Options) (*schedule.Snapshot, []string, bool, error) {
	members := make([]memberRead, len(p.Assignments)+len(p.Running))
	all := make([]*corev1.Pod, 0, len(members))
	for _, a := range p.Assignments {
		all = append(all, a.Pod)
	}
	all = append(all, p.Running...)
	var nodes []string
	for _, a := range p.Assignments {
		if !slices.Contains(nodes, a.Node) {
			nodes = append(nodes, a.Node)
		}
	}
	sort.Strings(nodes)
	reads := make([]nodeRead, len(nodes))

	var err error
	switch {
	case !bulk(opts, len(all)+len(nodes)):
		readEach(ctx, c, all, nodes, members, reads, opts.Parallelism)
	default:
		var read bool
		if read, err = readByVersions(ctx, c, snap, all, nodes, members, reads, opts); err == nil && !read {
			err = readByLists(ctx, c, all, nodes, members, reads)
		}
	}
	if err != nil {
		return nil, nil, false, err
	}

	var changed []string
	for i, m := range members {
		want := all[i]
		key := podKey(want)
		switch {
		case apierrors.IsNotFound(m.err):
			changed = append(changed, key+" was deleted")
		case m.err != nil:
			return nil, nil, false, fmt.Errorf("reading pod %s: %w", key, m.err)
		case m.pod.UID != want.UID:
			changed = append(changed, key+" was recreated (new UID)")
		case m.pod.DeletionTimestamp != nil:
			changed = append(changed, key+" is being deleted")
		case i >= len(p.Assignments):
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
	if len(changed) > 0 {
		return nil, changed, false, nil
	}

	fresh := *snap
	fresh.Nodes = slices.Clone(snap.Nodes)
	index := map[string]int{}
	for i, n := range fresh.Nodes {
		index[n.Name] = i
	}
	target := map[string]bool{}
	for i, r := range reads {
		switch {
		case apierrors.IsNotFound(r.err):
			changed = append(changed, "node "+nodes[i]+" was deleted")
			continue
		case r.err != nil:
			return nil, nil, false, fmt.Errorf("reading node %s: %w", nodes[i], r.err)
		}
		target[nodes[i]] = true
		if j, ok := index[nodes[i]]; ok {
			fresh.Nodes[j] = r.node
		} else {
			fresh.Nodes = append(fresh.Nodes, r.node)
		}
	}
	if len(changed) > 0 {
		return nil, changed, false, nil
	}
	// The pods on the target nodes as read now replace the snapshot's,
	// including any the snapshot had pending (a preemptor bound since).
	reread := map[types.NamespacedName]bool{}
	for _, r := range reads {
		for _, pod := range r.pods {
			reread[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}] = true
		}
	}
	fresh.Pods = nil
	for _, pod := range snap.Pods {
		if !target[pod.Spec.NodeName] && !reread[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}] {
			fresh.Pods = append(fresh.Pods, pod)
		}
	}
	for _, r := range reads {
		fresh.Pods = append(fresh.Pods, r.pods...)
	}
	return &fresh, nil, sameObjects(snap, &fresh, target), nil
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
