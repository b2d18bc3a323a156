package workload

import (
	"cmp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
)

// The labels that tell which of a workload's pods a real pod is, where the
// controllers name pods at random (generateName): a Job's pods
// (<job>-<index>-<random> for an Indexed Job, <job>-<random> otherwise),
// so a JobSet's, a RayJob's submitter and an MPIJob's launcher; KubeRay's
// head and workers. Each family is a coarse identity (the pod's group:
// its Job, its Ray node group, its Kubeflow replica type) and a fine one
// (its index within the group).
var liveIdentities = []struct {
	present      string   // the label that selects the family
	coarse, fine []string // label keys compared
}{
	{rayClusterKey, []string{rayClusterKey, rayNodeTypeKey, rayGroupKey}, []string{rayReplicaIndexKey, rayHostIndexKey}},
	{kubeflowJobNameKey, []string{kubeflowOperatorNameKey, kubeflowJobNameKey, kubeflowReplicaTypeKey, kubeflowJobRoleKey}, []string{kubeflowReplicaIndexKey}},
	{jobNameLabel, []string{jobNameLabel}, []string{jobCompletionIndex}},
}

// identityKeys are the label keys that identify an expanded pod among real
// ones (only those it carries), fine adding its index; nil when its pods'
// names are predictable and only the name identifies it.
func identityKeys(pod *corev1.Pod, fine bool) []string {
	for _, id := range liveIdentities {
		if _, ok := pod.Labels[id.present]; !ok {
			continue
		}
		keys := id.coarse
		if fine {
			keys = append(slices.Clone(keys), id.fine...)
		}
		return slices.DeleteFunc(slices.Clone(keys), func(k string) bool {
			_, ok := pod.Labels[k]
			return !ok
		})
	}
	return nil
}

// MergeLive turns a gang expanded from a workload read from the cluster
// (FromManifests on the live object, priorities and webhooks applied) into
// the gang as it stands: the pods its controllers created plus the ones
// still to come. Each expanded member that a pod of the snapshot (pods)
// stands for is replaced by that pod, with its real state, node, gates, UID
// and labels, so bound members count as running; the others stay what-if
// members. A real pod stands for a member when it has the member's
// namespace and name (StatefulSet-made pods: a LeaderWorkerSet's; the
// Training Operator's and mpi-operator's workers), else when it carries
// the member's identity labels (identityKeys): the same Job and completion
// index, the same Ray cluster, node type, group and replica index, the same
// Kubeflow job, replica type, role and index; else the same labels without
// the index (another index of the same Job, a worker of the same Ray
// group). Each real pod stands for one member at most, bound pods first.
// Pods being deleted or finished stand for none: the controller replaces
// them, and the replacement is a what-if member (a pod being deleted still
// holds its node in the snapshot). Real pods beyond the expansion are left
// out. The members still to come get a creation time a second after the
// newest real member's (they will be created after it), so that they queue
// after the pending ones that exist. The result is a new gang in queue
// order; g and its pods are not changed.
func MergeLive(g *gang.Gang, pods []*corev1.Pod) *gang.Gang {
	out := *g
	out.Members = slices.Clone(g.Members)
	var candidates []*corev1.Pod
	byName := map[string]*corev1.Pod{}
	for _, p := range pods {
		if !mayStandIn(p, g.Namespace) {
			continue
		}
		candidates = append(candidates, p)
		byName[p.Name] = p
	}
	slices.SortFunc(candidates, standInOrder)
	used := map[*corev1.Pod]bool{}
	replaced := make([]bool, len(out.Members))
	for i, m := range out.Members {
		if p := byName[m.Name]; p != nil {
			out.Members[i], replaced[i], used[p] = p, true, true
		}
	}
	for _, fine := range []bool{true, false} {
		// Candidates by the values of a set of keys, per set of keys.
		index := map[string]map[string][]*corev1.Pod{}
		for i, m := range out.Members {
			if replaced[i] {
				continue
			}
			keys := identityKeys(m, fine)
			if len(keys) == 0 {
				continue
			}
			schemaKey := strings.Join(keys, "\x00")
			byValues, ok := index[schemaKey]
			if !ok {
				byValues = map[string][]*corev1.Pod{}
				for _, p := range candidates {
					if v, ok := labelValues(p, keys); ok && !used[p] {
						byValues[v] = append(byValues[v], p)
					}
				}
				index[schemaKey] = byValues
			}
			v, _ := labelValues(m, keys)
			list := byValues[v]
			for len(list) > 0 && used[list[0]] {
				list = list[1:]
			}
			if len(list) > 0 {
				out.Members[i], replaced[i], used[list[0]] = list[0], true, true
				list = list[1:]
			}
			byValues[v] = list
		}
	}
	queueAfterReal(out.Members, replaced)
	out.SortMembers()
	return &out
}

// queueAfterReal gives the members still to come (not real) a creation time
// a second after the newest real member's: they will be created after
// those that exist, and queue after them.
func queueAfterReal(members []*corev1.Pod, real []bool) {
	var latest metav1.Time
	for i, m := range members {
		if real[i] && latest.Before(&m.CreationTimestamp) {
			latest = m.CreationTimestamp
		}
	}
	if latest.IsZero() {
		return
	}
	later := metav1.NewTime(latest.Add(time.Second))
	for i, m := range members {
		if !real[i] && m.CreationTimestamp.Before(&later) {
			c := m.DeepCopy()
			c.CreationTimestamp = later
			members[i] = c
		}
	}
}

// MergeLiveSelected is MergeLive for a workload whose controller names
// its pods at random and labels them with nothing but its template's labels
// (a Deployment's or ReplicaSet's pods): after MergeLive's matching, each
// member still to come is stood for by a real pod selector selects, bound
// pods first, as long as there are any.
func MergeLiveSelected(g *gang.Gang, pods []*corev1.Pod, selector labels.Selector) *gang.Gang {
	out := MergeLive(g, pods)
	if selector == nil || selector.Empty() {
		return out
	}
	used := map[*corev1.Pod]bool{}
	for _, m := range out.Members {
		used[m] = true
	}
	var candidates []*corev1.Pod
	for _, p := range pods {
		if mayStandIn(p, g.Namespace) && !used[p] && selector.Matches(labels.Set(p.Labels)) {
			candidates = append(candidates, p)
		}
	}
	slices.SortFunc(candidates, standInOrder)
	isReal := map[*corev1.Pod]bool{}
	for _, p := range pods {
		isReal[p] = true
	}
	real := make([]bool, len(out.Members))
	for i, m := range out.Members {
		if !isReal[m] && len(candidates) > 0 {
			out.Members[i], candidates = candidates[0], candidates[1:]
		}
		real[i] = isReal[out.Members[i]]
	}
	queueAfterReal(out.Members, real)
	out.SortMembers()
	return out
}

// DropFinished takes out of a merged live gang (MergeLive) the members
// still to come that have finished already: a Succeeded pod of the
// snapshot (succeeded, metadata only) has the member's name, or its
// identity with the index (the same Job and completion index, the same Ray
// group and replica index, the same Kubeflow replica type and index). The
// controller does not run those again: a Volcano gang keeps them as
// Succeeded members (Volcano counts them toward the minimum), any other
// gang's minimum drops by one for each. Members without an index (a
// non-Indexed Job's pods) are not matched, nor members that stand for any
// of several indexes still to run (gang.Gang.Refill): another index takes a
// finished one's place. (A Job read whole, with its status, is expanded
// without its finished indexes already.) live are the snapshot's
// unfinished pods, which MergeLive put in place.
func DropFinished(g *gang.Gang, live, succeeded []*corev1.Pod) *gang.Gang {
	if len(succeeded) == 0 {
		return g
	}
	isLive := map[*corev1.Pod]bool{}
	for _, p := range live {
		isLive[p] = true
	}
	byName := map[string]*corev1.Pod{}
	var candidates []*corev1.Pod
	for _, p := range succeeded {
		if p.Namespace == g.Namespace {
			byName[p.Name] = p
			candidates = append(candidates, p)
		}
	}
	used := map[*corev1.Pod]bool{}
	out := *g
	out.Members = nil
	out.Succeeded = slices.Clone(g.Succeeded)
	for _, m := range g.Members {
		var done *corev1.Pod
		if !isLive[m] && !g.Refill[m.Name] {
			if p := byName[m.Name]; p != nil && !used[p] {
				done = p
			} else if keys := identityKeys(m, true); len(keys) > len(identityKeys(m, false)) {
				want, _ := labelValues(m, keys)
				for _, p := range candidates {
					if v, ok := labelValues(p, keys); ok && v == want && !used[p] {
						done = p
						break
					}
				}
			}
		}
		if done == nil {
			out.Members = append(out.Members, m)
			continue
		}
		used[done] = true
		out.Finished++
		if g.Source == volcano.Source {
			out.Succeeded = append(out.Succeeded, done)
		} else if out.MinMember > 0 {
			out.MinMember--
		}
	}
	return &out
}

// mayStandIn reports whether a real pod may stand for a member in
// namespace: not being deleted, not finished.
func mayStandIn(p *corev1.Pod, namespace string) bool {
	return p.Namespace == namespace && p.DeletionTimestamp == nil &&
		p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// standInOrder is the order real pods are taken in when several could
// stand for one member: bound pods first, then the oldest, then by name.
func standInOrder(a, b *corev1.Pod) int {
	return cmp.Or(
		-cmp.Compare(boundRank(a), boundRank(b)),
		a.CreationTimestamp.Compare(b.CreationTimestamp.Time),
		strings.Compare(a.Name, b.Name))
}

// boundRank is 1 for a pod bound to a node, 0 otherwise.
func boundRank(p *corev1.Pod) int {
	if p.Spec.NodeName != "" {
		return 1
	}
	return 0
}

// labelValues joins pod's values of keys; ok is false when it lacks one.
func labelValues(pod *corev1.Pod, keys []string) (string, bool) {
	var b strings.Builder
	for _, k := range keys {
		v, ok := pod.Labels[k]
		if !ok {
			return "", false
		}
		b.WriteString(v)
		b.WriteByte(0)
	}
	return b.String(), true
}
