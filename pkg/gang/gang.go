// Package gang is the gang core: it resolves gangs (PodGroups of every
// source, ad hoc selectors, what-if manifests), decides their validity as
// Volcano's gang plugin does, knows each member's state and each source's
// own gate, and places gangs all or nothing on a snapshot. It is pure:
// objects in, decisions out. The verbs built on it are its subpackages
// explain, admit and bind; kube is their client-go side (docs/design.md#layout).
package gang

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// Source says where a gang's definition comes from.
type Source string

// The gang sources (docs/design.md#gangs).
const (
	// SourceNative is a scheduling.k8s.io PodGroup; members set spec.schedulingGroup.podGroupName.
	SourceNative Source = "scheduling.k8s.io"
	// SourceVolcano is a scheduling.volcano.sh PodGroup; members carry the
	// annotation scheduling.k8s.io/group-name.
	SourceVolcano Source = "scheduling.volcano.sh"
	// SourceCoscheduling is a scheduling.x-k8s.io PodGroup; members carry the
	// label scheduling.x-k8s.io/pod-group.
	SourceCoscheduling Source = "scheduling.x-k8s.io"
	// SourceKueue is a Kueue plain pod group: no PodGroup object; members
	// carry the label kueue.x-k8s.io/pod-group-name (KueuePodGroupLabel).
	SourceKueue Source = "kueue.x-k8s.io"
	// SourceSelector is an ad hoc gang: the pods a label selector picks.
	SourceSelector Source = "selector"
	// SourceFile is a what-if gang from manifests given with -f.
	SourceFile Source = "file"
)

// Membership keys of the gang sources.
const (
	VolcanoGroupAnnotation = "scheduling.k8s.io/group-name"
	VolcanoTaskAnnotation  = "volcano.sh/task-spec"
	CoschedulingLabel      = "scheduling.x-k8s.io/pod-group"
)

// Gang is a resolved group of pods that must be scheduled all or nothing.
type Gang struct {
	Source    Source
	Namespace string
	// Name is the PodGroup's name; for a selector, the selector.
	Name string
	// PodGroup is the group object as read; nil for selectors.
	PodGroup *unstructured.Unstructured
	// MinMember is how many members must run at once: native minCount,
	// Volcano and coscheduling minMember, --min-member, or every member.
	MinMember int32
	// MinTaskMember is Volcano's per-task minimum (task name -> minimum);
	// members name their task in the volcano.sh/task-spec annotation.
	MinTaskMember map[string]int32
	// MinResources is the resources the whole gang needs (Volcano,
	// coscheduling); nil when the source has none.
	MinResources corev1.ResourceList
	// Queue is the Volcano queue.
	Queue string
	// TopologyKey is a required topology: every member in one value of this
	// node label (native schedulingConstraints.topology, Volcano hard
	// networkTopology, or --topology-key).
	TopologyKey string
	// PreferredTopologyKey is tried first, falling back to the whole cluster.
	PreferredTopologyKey string
	// SubGroups is set when sub-groups of members are placed as units (a
	// JobSet's exclusive Jobs, a LeaderWorkerSet's groups).
	SubGroups *SubGroups
	// Unevaluated lists parts of the group's definition this build cannot
	// honour (such as a Volcano networkTopology, which needs HyperNodes), so
	// that output can report them as "not evaluated" instead of passing them
	// silently.
	Unevaluated []Unevaluated
	// ClaimTemplates and Claims are the ResourceClaimTemplates and
	// ResourceClaims manifests from -f bring along with their workload
	// (what-ifs: not in the cluster yet); WithObjects adds them to a
	// snapshot so that the members' claims find them.
	ClaimTemplates []*resourcev1.ResourceClaimTemplate
	Claims         []*resourcev1.ResourceClaim
	// Members are the gang's pods in the order kube-scheduler's queue would
	// take them: priority, then creation time, then namespace/name.
	Members []*corev1.Pod
	// Succeeded are members that finished successfully (metadata only).
	// Volcano counts them toward the minimum, in validity and in placement.
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
