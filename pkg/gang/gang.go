// Package gang is the gang core: it resolves gangs from their sources (the
// gang systems, each a wing of its own behind System and registered with
// Register, docs/design.md#gang-systems; and the core's keyless sources),
// decides their validity, knows each member's state, asks each system for
// its gate or session, and places gangs all or nothing on a snapshot. It is
// pure: objects in, decisions out. Workloads are expanded into what-if
// gangs by pkg/workload; the verbs built on the core are its subpackages
// explain, admit, bind and capacity; kube is their client-go side
// (docs/design.md#layout).
package gang

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// Gang is a resolved group of pods that must be scheduled all or nothing.
type Gang struct {
	Source    Source
	Namespace string
	// Name is the PodGroup's name; for a selector, the selector.
	Name string
	// PodGroup is the group object as read; nil for selectors.
	PodGroup *unstructured.Unstructured
	// MinMember is how many members must run at once, as the source sets
	// it (Rules.MinimumField), or every member.
	MinMember int32
	// MinTaskMember is a per-task minimum (task name -> minimum); members
	// name their task as TaskOf reads it.
	MinTaskMember map[string]int32
	// MinResources is the resources the whole gang needs; nil when the
	// source has none.
	MinResources corev1.ResourceList
	// Queue is the queue the group names, for sources that have queues.
	Queue string
	// PodGroupPriority is a native PodGroup's spec.priority (the Priority
	// admission plugin resolves it from spec.priorityClassName, else from
	// the global default class): kube-scheduler requires every member's
	// priority to equal it and preempts by it. Nil when the group carries
	// none, which kube-scheduler counts as 0 (util.PodGroupPriority).
	PodGroupPriority *int32
	// PodGroupPriorityClassName is a native PodGroup's spec.priorityClassName.
	PodGroupPriorityClassName string
	// TopologyKey is a required topology: every member in one value of this
	// node label (the group's own, or --topology-key).
	TopologyKey string
	// PreferredTopologyKey is tried first, falling back to the whole cluster.
	PreferredTopologyKey string
	// SubGroups is set when sub-groups of members are placed as units (a
	// JobSet's exclusive Jobs, a LeaderWorkerSet's groups).
	SubGroups *SubGroups
	// NotEvaluatedFields lists parts of the group's definition this build cannot
	// honour (such as a topology placed on objects the snapshot lacks), so
	// that output can report them as "not evaluated" instead of passing them
	// silently.
	NotEvaluatedFields []NotEvaluatedField
	// ClaimTemplates and Claims are the ResourceClaimTemplates and
	// ResourceClaims manifests from -f bring along with their workload
	// (what-ifs: not in the cluster yet); WithObjects adds them to a
	// snapshot so that the members' claims find them.
	ClaimTemplates []*resourcev1.ResourceClaimTemplate
	Claims         []*resourcev1.ResourceClaim
	// Members are the gang's pods in the order kube-scheduler's queue would
	// take them: priority, then creation time, then namespace/name.
	Members []*corev1.Pod
	// Succeeded are members that finished successfully (metadata only),
	// kept for sources that count them toward the minimum
	// (Rules.CountsSucceeded), in validity and in placement.
	Succeeded []*corev1.Pod
	// Finished counts the members of a live workload that finished and
	// will not run again (DropFinished), for messages.
	Finished int
	// Refill names the members expanded from a Job that has more indexes
	// (or completions) left than it runs at once: one that finished is
	// followed by another, so DropFinished keeps it.
	Refill map[string]bool
	// Read names the objects a what-if gang was expanded from, each as
	// "Kind name (group/version)", so that output says what was read.
	Read []string
	// Subject is how the verbs name a gang no PodGroup names and no pod
	// stands for (a queueing layer's workload whose pods do not exist
	// yet, as RESOURCE.GROUP/NAME); "" for the others.
	Subject string
	// Queued are the gang's workloads that wait for a queueing layer's
	// admission (Admitter): PlaceOn asks the layer first.
	Queued []QueuedWorkload
	// Elasticity is what the workloads the gang was expanded from say of
	// running with fewer members (elastic.go); nil when it was not expanded
	// from a workload (a PodGroup or pods read from the cluster).
	Elasticity *Elasticity
}

// Key is namespace/name.
func (g *Gang) Key() string {
	if g.Namespace == "" {
		return g.Name
	}
	return g.Namespace + "/" + g.Name
}

// WithObjects returns snap with the gang's own ResourceClaimTemplates and
// ResourceClaims (from -f) added, each replacing an object of the same
// namespace and name: the cluster as it would be once the manifests are
// applied. snap itself is not changed; without such objects it is returned
// as it is.
func (g *Gang) WithObjects(snap *schedule.Snapshot) *schedule.Snapshot {
	if len(g.ClaimTemplates) == 0 && len(g.Claims) == 0 {
		return snap
	}
	out := *snap
	out.ResourceClaimTemplates = replaceNamespaced(snap.ResourceClaimTemplates, g.ClaimTemplates)
	out.ResourceClaims = replaceNamespaced(snap.ResourceClaims, g.Claims)
	out.Sort()
	return &out
}

func replaceNamespaced[T metav1.Object](have, add []T) []T {
	out := slices.DeleteFunc(slices.Clone(have), func(o T) bool {
		return slices.ContainsFunc(add, func(a T) bool { return a.GetNamespace() == o.GetNamespace() && a.GetName() == o.GetName() })
	})
	return append(out, add...)
}
