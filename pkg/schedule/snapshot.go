package schedule

import (
	"cmp"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// NativeGroup is the Kubernetes scheduling.k8s.io group (PodGroup in
// v1beta1 from v1.37, alpha before): kube-scheduler's own gangs. The gang
// systems' groups are their wings' (ObjectKind).
const NativeGroup = "scheduling.k8s.io"

// PodGroupKind is the kind every supported gang source calls its group object.
const PodGroupKind = "PodGroup"

// The namespaced kinds a live read falls back to listing namespace by
// namespace when the cluster-wide list is refused, named as Unreadable and
// ReadIn name them (as a user names them to kubectl).
const (
	KindResourceQuotas         = "resourcequotas"
	KindPodDisruptionBudgets   = "poddisruptionbudgets.policy"
	KindPersistentVolumeClaims = "persistentvolumeclaims"
	KindServices               = "services"
	KindReplicationControllers = "replicationcontrollers"
	KindReplicaSets            = "replicasets.apps"
	KindStatefulSets           = "statefulsets.apps"
)

// SelectorKinds are the kinds PodTopologySpread's default constraints take
// a pod's selector from (kube-scheduler's helper.DefaultSelector).
var SelectorKinds = []string{KindServices, KindReplicationControllers, KindReplicaSets, KindStatefulSets}

// Snapshot is everything the pipeline reads about a cluster, taken once. Every
// slice is sorted by namespace and name (see Sort), so two snapshots of the same
// objects compare equal whatever order they were read in.
type Snapshot struct {
	Nodes []*corev1.Node
	Pods  []*corev1.Pod // non-terminal pods only: Succeeded and Failed pods hold no resources
	// SucceededPods are the pods that finished successfully, kept only for
	// gang validity (Volcano counts Succeeded members, which it finds by
	// annotation, toward the minimum): metadata and the phase. They are on
	// no node and hold nothing.
	SucceededPods        []*corev1.Pod
	PriorityClasses      []*schedulingv1.PriorityClass
	Namespaces           []*corev1.Namespace
	ResourceQuotas       []*corev1.ResourceQuota
	PodDisruptionBudgets []*policyv1.PodDisruptionBudget
	// The storage objects volume plugins read.
	PersistentVolumeClaims []*corev1.PersistentVolumeClaim
	PersistentVolumes      []*corev1.PersistentVolume
	StorageClasses         []*storagev1.StorageClass
	// The Dynamic Resource Allocation objects (resource.k8s.io/v1) the
	// DynamicResources plugin reads: drivers' ResourceSlices, DeviceClasses,
	// ResourceClaims (with their allocations, which hold devices) and the
	// ResourceClaimTemplates pods' claims are made from
	// (docs/design.md#dynamic-resource-allocation).
	ResourceSlices         []*resourcev1.ResourceSlice
	DeviceClasses          []*resourcev1.DeviceClass
	ResourceClaims         []*resourcev1.ResourceClaim
	ResourceClaimTemplates []*resourcev1.ResourceClaimTemplate
	// DeviceTaintRules taint devices of the slices they select, as
	// kube-scheduler's ListWithDeviceTaintRules applies them (GA in v1.37).
	DeviceTaintRules []*resourcev1.DeviceTaintRule
	// The workloads whose selectors PodTopologySpread's default constraints
	// use, as kube-scheduler derives them (only metadata and selectors are
	// kept).
	Services               []*corev1.Service
	ReplicationControllers []*corev1.ReplicationController
	ReplicaSets            []*appsv1.ReplicaSet
	StatefulSets           []*appsv1.StatefulSet
	// PodGroups holds the PodGroups of every gang system as read, told
	// apart by their GroupVersionKind (ObjectKind). They stay unstructured
	// so that versions and fields this build does not know survive a round
	// trip through a snapshot file.
	PodGroups []*unstructured.Unstructured
	// Objects holds the gang systems' other objects (a scheduler's queues:
	// ObjectKind), as read, told apart by their GroupVersionKind.
	Objects []*unstructured.Unstructured
	// Systems holds what the gang systems' wings read besides objects (a
	// scheduler's parsed configuration), by a key of the system's own;
	// pkg/schedule reads none of it (docs/design.md#gang-systems). Set a
	// key on a new map: copies of a snapshot share it.
	Systems map[string]any
	// VolcanoConfigMap is the scheduler's ConfigMap as the live read found
	// it (or a stand-in that records why it could not be read), kept so that
	// a snapshot file carries it; nothing in the pipeline reads it.
	VolcanoConfigMap *corev1.ConfigMap
	// Unreadable names the optional kinds a live read was not allowed to
	// list ("resourcequotas", "queues.scheduling.volcano.sh", ...): their
	// absence means "unknown", not "none". Not written to snapshot files.
	Unreadable []string
	// ReadIn names, for a namespaced kind of Unreadable, the namespaces a
	// live read could list it in one by one after the cluster-wide list was
	// refused (a user with Roles per namespace): there its absence means
	// "none" again. Not written to snapshot files.
	ReadIn map[string][]string
	// Partial, set by the file loader when pods are bound to nodes the
	// snapshot lacks (FindMissingNodes), is what every scheduling cycle on it
	// reports as not evaluated: a file missing nodes is not the cluster. A
	// live read leaves it empty: its node list is the cluster's, and pods on
	// a deleted node are orphans kube-scheduler ignores too. Not written to
	// snapshot files.
	Partial string
}

// IsUnreadable reports whether the live read could not list resource.
func (s *Snapshot) IsUnreadable(resource string) bool { return slices.Contains(s.Unreadable, resource) }

// CanRead reports whether the snapshot holds every object of resource (a
// namespaced kind, named as in Unreadable) in namespace: the cluster-wide
// list was allowed, or the list in that namespace was
// (docs/design.md#snapshot).
func (s *Snapshot) CanRead(resource, namespace string) bool {
	return !s.IsUnreadable(resource) || slices.Contains(s.ReadIn[resource], namespace)
}

// UnreadableIn returns those of resources the snapshot could not read in
// namespace (CanRead), in the order given.
func (s *Snapshot) UnreadableIn(namespace string, resources ...string) []string {
	var out []string
	for _, r := range resources {
		if !s.CanRead(r, namespace) {
			out = append(out, r)
		}
	}
	return out
}

// Sort orders every slice by namespace, then name (PodGroups by group first),
// which makes output and comparisons deterministic.
func (s *Snapshot) Sort() {
	slices.SortFunc(s.Nodes, func(a, b *corev1.Node) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(s.Pods, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	sortNamespaced(s.SucceededPods)
	slices.SortFunc(s.PriorityClasses, func(a, b *schedulingv1.PriorityClass) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(s.Namespaces, func(a, b *corev1.Namespace) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(s.ResourceQuotas, func(a, b *corev1.ResourceQuota) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	slices.SortFunc(s.PodDisruptionBudgets, func(a, b *policyv1.PodDisruptionBudget) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	slices.SortFunc(s.PersistentVolumeClaims, func(a, b *corev1.PersistentVolumeClaim) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	slices.SortFunc(s.PersistentVolumes, func(a, b *corev1.PersistentVolume) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(s.StorageClasses, func(a, b *storagev1.StorageClass) int { return cmp.Compare(a.Name, b.Name) })
	sortNamespaced(s.ResourceSlices)
	sortNamespaced(s.DeviceClasses)
	sortNamespaced(s.ResourceClaims)
	sortNamespaced(s.ResourceClaimTemplates)
	sortNamespaced(s.DeviceTaintRules)
	sortNamespaced(s.Services)
	sortNamespaced(s.ReplicationControllers)
	sortNamespaced(s.ReplicaSets)
	sortNamespaced(s.StatefulSets)
	slices.SortFunc(s.PodGroups, CompareGroupObjects)
	slices.SortFunc(s.Objects, CompareGroupObjects)
}

// CompareGroupObjects is the order Sort keeps PodGroups and Objects in:
// API group, kind, namespace, name, then version.
func CompareGroupObjects(a, b *unstructured.Unstructured) int {
	ga, gb := a.GroupVersionKind(), b.GroupVersionKind()
	return cmp.Or(cmp.Compare(ga.Group, gb.Group), cmp.Compare(ga.Kind, gb.Kind), cmp.Compare(a.GetNamespace(), b.GetNamespace()),
		cmp.Compare(a.GetName(), b.GetName()), cmp.Compare(ga.Version, gb.Version))
}

// ObjectsOf are the snapshot's Objects of a group and kind.
func (s *Snapshot) ObjectsOf(group, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range s.Objects {
		if gvk := u.GroupVersionKind(); gvk.Group == group && gvk.Kind == kind {
			out = append(out, u)
		}
	}
	return out
}

// sortNamespaced orders objects by namespace, then name.
func sortNamespaced[T metav1.Object](objs []T) {
	slices.SortFunc(objs, func(a, b T) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
}

// IsTerminal reports whether a pod has finished for good; such pods hold no
// node resources, so kube-scheduler ignores them and so does the snapshot.
func IsTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}
