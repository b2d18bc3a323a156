package bind

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// The three ways reread reads the members (all), the target nodes and the
// pods on them: a GET per object for a small gang (readEach); for a large
// one, the versions of every pod and node first (readByVersions), then only
// what changed since the snapshot; and, when much changed, one LIST of the
// pods and one of the nodes (readByLists). Each fills members and reads
// with the same facts (docs/design.md#binding-a-gang).

// Version identifies one stored state of an object: a different UID is
// another object, a different resource version another state of it.
type Version struct {
	Namespace, Name string
	UID             types.UID
	ResourceVersion string
}

func (v Version) key() string { return v.Namespace + "/" + v.Name }

// readEach GETs every member, every target node and the pods on it.
func readEach(ctx context.Context, c Client, all []*corev1.Pod, nodes []string, members []memberRead, reads []nodeRead, workers int) {
	forEach(workers, len(all), nil, func(i int) {
		members[i].pod, members[i].err = c.GetPod(ctx, all[i].Namespace, all[i].Name)
	})
	forEach(workers, len(nodes), nil, func(i int) {
		r := &reads[i]
		if r.node, r.err = c.GetNode(ctx, nodes[i]); r.err == nil {
			r.pods, r.err = c.PodsOnNode(ctx, nodes[i])
		}
	})
}

// readByLists reads with one consistent LIST of the pods and one of the
// nodes: the same facts as a GET per member and per node, in two round
// trips.
func readByLists(ctx context.Context, c Client, all []*corev1.Pod, nodes []string, members []memberRead, reads []nodeRead) error {
	var listed []*corev1.Pod
	var nodeList []*corev1.Node
	var podsErr, nodesErr error
	var wg sync.WaitGroup
	wg.Go(func() { listed, podsErr = c.ListPods(ctx, metav1.NamespaceAll) })
	wg.Go(func() { nodeList, nodesErr = c.ListNodes(ctx) })
	wg.Wait()
	if podsErr != nil {
		return fmt.Errorf("listing pods: %w", podsErr)
	}
	if nodesErr != nil {
		return fmt.Errorf("listing nodes: %w", nodesErr)
	}
	byKey := indexPods(listed)
	for i, pod := range all {
		if got, ok := byKey[podKey(pod)]; ok {
			members[i].pod, members[i].err = got, nil
		} else {
			members[i].pod, members[i].err = nil, apierrors.NewNotFound(corev1.Resource("pods"), pod.Name)
		}
	}
	byNode := map[string]int{}
	for i, n := range nodes {
		byNode[n] = i
		reads[i] = nodeRead{err: apierrors.NewNotFound(corev1.Resource("nodes"), n)}
	}
	for _, n := range nodeList {
		if i, ok := byNode[n.Name]; ok {
			reads[i].node, reads[i].err = n, nil
		}
	}
	for _, pod := range listed {
		if i, ok := byNode[pod.Spec.NodeName]; ok {
			reads[i].pods = append(reads[i].pods, pod)
		}
	}
	return nil
}

// readByVersions lists only the versions of the pods that have not
// terminated and of the nodes (metadata: a fraction of the bytes the
// objects take to send and decode). An object whose UID and resource
// version are the snapshot's is the snapshot's object; what changed is read
// with a GET: a member, a target node, a pod now on one, a pod that was
// pending (it may be bound since) or that the snapshot does not have (it
// may be anywhere). A pod bound to another node before cannot be on a
// target now (spec.nodeName is never changed once set), so it is not read.
// It returns false, having filled nothing, when more objects changed than
// are worth a GET each: readByLists reads them all then.
func readByVersions(ctx context.Context, c Client, snap *schedule.Snapshot, all []*corev1.Pod, nodes []string, members []memberRead, reads []nodeRead, opts Options) (bool, error) {
	var podVersions, nodeVersions []Version
	var podsErr, nodesErr error
	var wg sync.WaitGroup
	wg.Go(func() { podVersions, podsErr = c.PodVersions(ctx) })
	wg.Go(func() { nodeVersions, nodesErr = c.NodeVersions(ctx) })
	wg.Wait()
	if podsErr != nil {
		return false, fmt.Errorf("listing pods: %w", podsErr)
	}
	if nodesErr != nil {
		return false, fmt.Errorf("listing nodes: %w", nodesErr)
	}
	same := func(v Version, uid types.UID, resourceVersion string) bool {
		return v.UID == uid && resourceVersion != "" && v.ResourceVersion == resourceVersion
	}

	target := make(map[string]int, len(nodes))
	for i, n := range nodes {
		target[n] = i
	}
	member := make(map[string]int, len(all))
	for i, pod := range all {
		member[podKey(pod)] = i
	}
	before := indexPods(snap.Pods)
	var unchanged []*corev1.Pod
	var changed []Version
	for _, v := range podVersions {
		old := before[v.key()]
		if old == nil {
			changed = append(changed, v) // new: it may be anywhere
			continue
		}
		_, isMember := member[v.key()]
		_, onTarget := target[old.Spec.NodeName]
		switch {
		case !isMember && !onTarget && old.Spec.NodeName != "" && old.UID == v.UID:
			// Bound to another node before, and it stays there.
		case same(v, old.UID, old.ResourceVersion):
			unchanged = append(unchanged, old)
		default:
			changed = append(changed, v)
		}
	}
	nodeNow := make(map[string]Version, len(nodeVersions))
	for _, v := range nodeVersions {
		nodeNow[v.Name] = v
	}
	nodeBefore := make(map[string]*corev1.Node, len(nodes))
	for _, n := range snap.Nodes {
		if _, ok := target[n.Name]; ok {
			nodeBefore[n.Name] = n
		}
	}
	nodeReads := make([]nodeRead, len(nodes))
	var changedNodes []int
	for i, name := range nodes {
		v, ok := nodeNow[name]
		old := nodeBefore[name]
		switch {
		case !ok:
			nodeReads[i].err = apierrors.NewNotFound(corev1.Resource("nodes"), name)
		case old != nil && same(v, old.UID, old.ResourceVersion):
			nodeReads[i].node = old
		default:
			changedNodes = append(changedNodes, i)
		}
	}
	if limit := max(opts.BulkReads, DefaultBulkReads); len(changed)+len(changedNodes) > limit {
		return false, nil
	}
	copy(reads, nodeReads)

	fresh := make([]*corev1.Pod, len(changed))
	errs := make([]error, len(changed))
	forEach(opts.Parallelism, len(changed), nil, func(k int) {
		fresh[k], errs[k] = c.GetPod(ctx, changed[k].Namespace, changed[k].Name)
	})
	forEach(opts.Parallelism, len(changedNodes), nil, func(k int) {
		i := changedNodes[k]
		reads[i].node, reads[i].err = c.GetNode(ctx, nodes[i])
	})

	// Members start as not found; what was listed replaces that.
	for i, pod := range all {
		members[i] = memberRead{err: apierrors.NewNotFound(corev1.Resource("pods"), pod.Name)}
	}
	place := func(pod *corev1.Pod) {
		if i, ok := member[podKey(pod)]; ok {
			members[i] = memberRead{pod: pod}
		}
		if i, ok := target[pod.Spec.NodeName]; ok {
			reads[i].pods = append(reads[i].pods, pod)
		}
	}
	for _, pod := range unchanged {
		place(pod)
	}
	for k, pod := range fresh {
		switch err := errs[k]; {
		case apierrors.IsNotFound(err):
			// Gone since it was listed.
		case err != nil:
			if i, ok := member[changed[k].key()]; ok {
				members[i] = memberRead{err: err}
				continue
			}
			return false, fmt.Errorf("reading pod %s: %w", changed[k].key(), err)
		case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
			// Terminated since it was listed: as the lists, left out.
		default:
			place(pod)
		}
	}
	return true, nil
}
