package bind

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// The three ways a reread reads the members, the target nodes and the pods
// on them: a GET per object for a small gang (readEach); for a large one,
// the versions of every pod and node first (readByVersions), then only what
// changed since the snapshot; and, when much changed, one LIST of the pods
// and one of the nodes (readByLists). Each fills memberReads and nodeReads
// with the same facts (docs/design.md#binding-a-gang).

// Version identifies one stored state of an object: a different UID is
// another object, a different resource version another state of it.
type Version struct {
	Namespace, Name string
	UID             types.UID
	ResourceVersion string
}

func (v Version) key() string { return v.Namespace + "/" + v.Name }

// reread is one fresh read of a plan's members and target nodes, and of
// the pods on those nodes (step 2 of docs/design.md#binding-a-gang).
type reread struct {
	c    Client
	snap *schedule.Snapshot
	opts Options
	// all are the members: the planned ones (the first planned), then the
	// ones bound before.
	all     []*corev1.Pod
	planned int
	// nodes are the target nodes, in name order.
	nodes []string
	// members and targets find a member's index in all by namespace/name,
	// and a target node's in nodes by name.
	members map[string]int
	targets map[string]int
	// memberReads and nodeReads are what was read: one per member, one per
	// target node.
	memberReads []memberRead
	nodeReads   []nodeRead
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

func newReread(c Client, snap *schedule.Snapshot, p *gang.Placement, opts Options) *reread {
	rr := &reread{c: c, snap: snap, opts: opts, planned: len(p.Assignments)}
	for _, a := range p.Assignments {
		rr.all = append(rr.all, a.Pod)
		if !slices.Contains(rr.nodes, a.Node) {
			rr.nodes = append(rr.nodes, a.Node)
		}
	}
	rr.all = append(rr.all, p.Running...)
	sort.Strings(rr.nodes)
	rr.members = make(map[string]int, len(rr.all))
	for i, pod := range rr.all {
		rr.members[podKey(pod)] = i
	}
	rr.targets = make(map[string]int, len(rr.nodes))
	for i, n := range rr.nodes {
		rr.targets[n] = i
	}
	rr.memberReads = make([]memberRead, len(rr.all))
	rr.nodeReads = make([]nodeRead, len(rr.nodes))
	return rr
}

// targetSet is the target nodes as a set.
func (rr *reread) targetSet() map[string]bool {
	out := make(map[string]bool, len(rr.nodes))
	for _, n := range rr.nodes {
		out[n] = true
	}
	return out
}

// read reads in the way that suits the gang's size and how much changed.
func (rr *reread) read(ctx context.Context) error {
	if !bulk(rr.opts, len(rr.all)+len(rr.nodes)) {
		rr.readEach(ctx)
		return nil
	}
	read, err := rr.readByVersions(ctx)
	if err != nil || read {
		return err
	}
	return rr.readByLists(ctx)
}

// readEach GETs every member, every target node and the pods on it.
func (rr *reread) readEach(ctx context.Context) {
	forEach(rr.opts.Parallelism, len(rr.all), nil, func(i int) {
		m := &rr.memberReads[i]
		m.pod, m.err = rr.c.GetPod(ctx, rr.all[i].Namespace, rr.all[i].Name)
	})
	forEach(rr.opts.Parallelism, len(rr.nodes), nil, func(i int) {
		r := &rr.nodeReads[i]
		if r.node, r.err = rr.c.GetNode(ctx, rr.nodes[i]); r.err == nil {
			r.pods, r.err = rr.c.PodsOnNode(ctx, rr.nodes[i])
		}
	})
}

// readByLists reads with one consistent LIST of the pods and one of the
// nodes: the same facts as a GET per member and per node, in two round
// trips.
func (rr *reread) readByLists(ctx context.Context) error {
	var listed []*corev1.Pod
	var nodeList []*corev1.Node
	var podsErr, nodesErr error
	var wg sync.WaitGroup
	wg.Go(func() { listed, podsErr = rr.c.ListPods(ctx, metav1.NamespaceAll) })
	wg.Go(func() { nodeList, nodesErr = rr.c.ListNodes(ctx) })
	wg.Wait()
	if podsErr != nil {
		return fmt.Errorf("listing pods: %w", podsErr)
	}
	if nodesErr != nil {
		return fmt.Errorf("listing nodes: %w", nodesErr)
	}
	byKey := indexPods(listed)
	for i, pod := range rr.all {
		if got, ok := byKey[podKey(pod)]; ok {
			rr.memberReads[i] = memberRead{pod: got}
		} else {
			rr.memberReads[i] = memberRead{err: apierrors.NewNotFound(corev1.Resource("pods"), pod.Name)}
		}
	}
	for i, n := range rr.nodes {
		rr.nodeReads[i] = nodeRead{err: apierrors.NewNotFound(corev1.Resource("nodes"), n)}
	}
	for _, n := range nodeList {
		if i, ok := rr.targets[n.Name]; ok {
			rr.nodeReads[i].node, rr.nodeReads[i].err = n, nil
		}
	}
	for _, pod := range listed {
		if i, ok := rr.targets[pod.Spec.NodeName]; ok {
			rr.nodeReads[i].pods = append(rr.nodeReads[i].pods, pod)
		}
	}
	return nil
}

// readByVersions lists only the versions of the pods that have not
// terminated and of the nodes (metadata: a fraction of the bytes the
// objects take to send and decode), and GETs what is not the snapshot's
// object (readChanged). It returns false, having filled nothing, when more
// objects changed than are worth a GET each: readByLists reads them all
// then.
func (rr *reread) readByVersions(ctx context.Context) (bool, error) {
	var podVersions, nodeVersions []Version
	var podsErr, nodesErr error
	var wg sync.WaitGroup
	wg.Go(func() { podVersions, podsErr = rr.c.PodVersions(ctx) })
	wg.Go(func() { nodeVersions, nodesErr = rr.c.NodeVersions(ctx) })
	wg.Wait()
	if podsErr != nil {
		return false, fmt.Errorf("listing pods: %w", podsErr)
	}
	if nodesErr != nil {
		return false, fmt.Errorf("listing nodes: %w", nodesErr)
	}
	unchanged, changed := rr.podsSince(podVersions)
	nodeReads, changedNodes := rr.nodesSince(nodeVersions)
	if limit := max(rr.opts.BulkReads, DefaultBulkReads); len(changed)+len(changedNodes) > limit {
		return false, nil
	}
	copy(rr.nodeReads, nodeReads)
	return true, rr.readChanged(ctx, unchanged, changed, changedNodes)
}

// sameVersion reports whether v is the state of the object with uid at
// resourceVersion (an object without a resource version is never the
// same).
func sameVersion(v Version, uid types.UID, resourceVersion string) bool {
	return v.UID == uid && resourceVersion != "" && v.ResourceVersion == resourceVersion
}

// podsSince sorts the pods listed now into the snapshot's objects that are
// unchanged and the versions to read again: a member, a pod on a target
// node or that was pending (it may be bound since), or one the snapshot
// does not have (it may be anywhere). A pod bound to another node before
// cannot be on a target now (spec.nodeName is never changed once set), so
// it is in neither.
func (rr *reread) podsSince(podVersions []Version) (unchanged []*corev1.Pod, changed []Version) {
	before := indexPods(rr.snap.Pods)
	for _, v := range podVersions {
		old := before[v.key()]
		if old == nil {
			changed = append(changed, v) // new: it may be anywhere
			continue
		}
		_, isMember := rr.members[v.key()]
		_, onTarget := rr.targets[old.Spec.NodeName]
		switch {
		case !isMember && !onTarget && old.Spec.NodeName != "" && old.UID == v.UID:
			// Bound to another node before, and it stays there.
		case sameVersion(v, old.UID, old.ResourceVersion):
			unchanged = append(unchanged, old)
		default:
			changed = append(changed, v)
		}
	}
	return unchanged, changed
}

// nodesSince returns the target nodes as far as their versions tell (the
// snapshot's object, or not found), and the indexes of those to read
// again.
func (rr *reread) nodesSince(nodeVersions []Version) ([]nodeRead, []int) {
	nodeNow := make(map[string]Version, len(nodeVersions))
	for _, v := range nodeVersions {
		nodeNow[v.Name] = v
	}
	nodeBefore := make(map[string]*corev1.Node, len(rr.nodes))
	for _, n := range rr.snap.Nodes {
		if _, ok := rr.targets[n.Name]; ok {
			nodeBefore[n.Name] = n
		}
	}
	reads := make([]nodeRead, len(rr.nodes))
	var changed []int
	for i, name := range rr.nodes {
		v, ok := nodeNow[name]
		old := nodeBefore[name]
		switch {
		case !ok:
			reads[i].err = apierrors.NewNotFound(corev1.Resource("nodes"), name)
		case old != nil && sameVersion(v, old.UID, old.ResourceVersion):
			reads[i].node = old
		default:
			changed = append(changed, i)
		}
	}
	return reads, changed
}

// readChanged GETs the pods and target nodes that changed, and fills the
// members and the pods on the target nodes with them and the unchanged
// pods.
func (rr *reread) readChanged(ctx context.Context, unchanged []*corev1.Pod, changed []Version, changedNodes []int) error {
	fresh := make([]*corev1.Pod, len(changed))
	errs := make([]error, len(changed))
	forEach(rr.opts.Parallelism, len(changed), nil, func(k int) {
		fresh[k], errs[k] = rr.c.GetPod(ctx, changed[k].Namespace, changed[k].Name)
	})
	forEach(rr.opts.Parallelism, len(changedNodes), nil, func(k int) {
		r := &rr.nodeReads[changedNodes[k]]
		r.node, r.err = rr.c.GetNode(ctx, rr.nodes[changedNodes[k]])
	})

	// Members start as not found; what was listed replaces that.
	for i, pod := range rr.all {
		rr.memberReads[i] = memberRead{err: apierrors.NewNotFound(corev1.Resource("pods"), pod.Name)}
	}
	for _, pod := range unchanged {
		rr.place(pod)
	}
	for k, pod := range fresh {
		switch err := errs[k]; {
		case apierrors.IsNotFound(err):
			// Gone since it was listed.
		case err != nil:
			if i, ok := rr.members[changed[k].key()]; ok {
				rr.memberReads[i] = memberRead{err: err}
				continue
			}
			return fmt.Errorf("reading pod %s: %w", changed[k].key(), err)
		case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
			// Terminated since it was listed: as the lists, left out.
		default:
			rr.place(pod)
		}
	}
	return nil
}

// place puts a pod read now where it belongs: a member's read, the pods of
// a target node, or both.
func (rr *reread) place(pod *corev1.Pod) {
	if i, ok := rr.members[podKey(pod)]; ok {
		rr.memberReads[i] = memberRead{pod: pod}
	}
	if i, ok := rr.targets[pod.Spec.NodeName]; ok {
		rr.nodeReads[i].pods = append(rr.nodeReads[i].pods, pod)
	}
}
