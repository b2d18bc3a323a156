package snapshot

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// The built-in kinds a snapshot holds, at the versions it reads and writes.
var (
	nodeGVK          = corev1.SchemeGroupVersion.WithKind("Node")
	podGVK           = corev1.SchemeGroupVersion.WithKind("Pod")
	namespaceGVK     = corev1.SchemeGroupVersion.WithKind("Namespace")
	resourceQuotaGVK = corev1.SchemeGroupVersion.WithKind("ResourceQuota")
	priorityClassGVK = schedulingv1.SchemeGroupVersion.WithKind("PriorityClass")
	pdbGVK           = policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget")
	pvcGVK           = corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim")
	pvGVK            = corev1.SchemeGroupVersion.WithKind("PersistentVolume")
	storageClassGVK  = storagev1.SchemeGroupVersion.WithKind("StorageClass")
	resourceSliceGVK = resourcev1.SchemeGroupVersion.WithKind("ResourceSlice")
	deviceClassGVK   = resourcev1.SchemeGroupVersion.WithKind("DeviceClass")
	claimGVK         = resourcev1.SchemeGroupVersion.WithKind("ResourceClaim")
	claimTemplateGVK = resourcev1.SchemeGroupVersion.WithKind("ResourceClaimTemplate")
	taintRuleGVK     = resourcev1.SchemeGroupVersion.WithKind("DeviceTaintRule")
	serviceGVK       = corev1.SchemeGroupVersion.WithKind("Service")
	rcGVK            = corev1.SchemeGroupVersion.WithKind("ReplicationController")
	replicaSetGVK    = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	statefulSetGVK   = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
)

// objectKey identifies an object across sources so a duplicate can be found.
type objectKey struct {
	group, kind, namespace, name string
}

// String names the object as kubectl does: kind/name or kind ns/name.
func (k objectKey) String() string {
	if k.namespace != "" {
		return k.kind + " " + k.namespace + "/" + k.name
	}
	return k.kind + " " + k.name
}

// maxNamed bounds the objects a warning names.
const maxNamed = 3

// named lists names, saying how many more of total there are.
func named(names []string, total int) string {
	s := strings.Join(names, ", ")
	if more := total - len(names); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// builder collects objects into a snapshot, whatever they were read from. It
// normalises them so that a live read and a file read of the same objects give
// equal snapshots: type metadata and managed fields are dropped, terminal pods
// are skipped, and a later copy of an object replaces an earlier one.
type builder struct {
	snap schedule.Snapshot
	// objects counts the objects read, of any kind.
	objects    int
	index      map[objectKey]int // position in the slice of its kind
	ignored    map[string]int    // kind -> count of objects the pipeline does not read
	duplicates int
	// duplicated names the first objects seen twice, for the warning.
	duplicated []string
	// configMaps are a file's ConfigMaps that may be Volcano's scheduler's
	// (pickVolcanoConfig chooses).
	configMaps []*corev1.ConfigMap
	// terminal counts the Succeeded and Failed pods left out: they hold no
	// resources, as kube-scheduler's cache knows. Saved `kubectl get pods`
	// output has plenty, so they are not worth a warning.
	terminal int
}

func newBuilder() *builder {
	return &builder{index: map[objectKey]int{}, ignored: map[string]int{}}
}

// expect sizes the builder's index for about n more objects, as a binary
// snapshot's end record tells (growing it as they come would allocate it
// several times over).
func (b *builder) expect(n int) {
	if len(b.index) == 0 && n > 0 {
		b.index = make(map[objectKey]int, n)
	}
}

// place returns where an object goes in a slice of length n: its earlier
// position if it was seen before, else n (append).
func (b *builder) place(key objectKey, n int) int {
	if i, ok := b.index[key]; ok {
		b.duplicates++
		if len(b.duplicated) < maxNamed {
			b.duplicated = append(b.duplicated, key.String())
		}
		return i
	}
	b.index[key] = n
	return n
}

// put stores obj in *list at the position place chooses.
func put[T any](b *builder, list *[]T, key objectKey, obj T) {
	i := b.place(key, len(*list))
	if i == len(*list) {
		*list = append(*list, obj)
		return
	}
	(*list)[i] = obj
}

func normalize(meta *metav1.ObjectMeta, typ *metav1.TypeMeta) {
	*typ = metav1.TypeMeta{}
	meta.ManagedFields = nil
	// kubectl apply's copy of the whole object: often the largest field,
	// read by nothing here.
	if _, ok := meta.Annotations[corev1.LastAppliedConfigAnnotation]; ok {
		meta.Annotations = maps.Clone(meta.Annotations)
		delete(meta.Annotations, corev1.LastAppliedConfigAnnotation)
	}
}

func (b *builder) addNode(n *corev1.Node) {
	normalize(&n.ObjectMeta, &n.TypeMeta)
	put(b, &b.snap.Nodes, objectKey{kind: "Node", name: n.Name}, n)
}

func (b *builder) addPod(p *corev1.Pod) {
	if p.Status.Phase == corev1.PodSucceeded {
		b.addSucceededPod(p.ObjectMeta)
		return
	}
	if schedule.IsTerminal(p) {
		b.terminal++
		return
	}
	normalize(&p.ObjectMeta, &p.TypeMeta)
	put(b, &b.snap.Pods, objectKey{kind: "Pod", namespace: p.Namespace, name: p.Name}, p)
}

// addSucceededPod keeps a Succeeded pod's metadata (a live read lists only
// that) for gang validity.
func (b *builder) addSucceededPod(meta metav1.ObjectMeta) {
	var tm metav1.TypeMeta
	normalize(&meta, &tm)
	kept := &corev1.Pod{ObjectMeta: meta, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}
	put(b, &b.snap.SucceededPods, objectKey{kind: "Pod", namespace: meta.Namespace, name: meta.Name}, kept)
}

func (b *builder) addNamespace(n *corev1.Namespace) {
	normalize(&n.ObjectMeta, &n.TypeMeta)
	put(b, &b.snap.Namespaces, objectKey{kind: "Namespace", name: n.Name}, n)
}

func (b *builder) addResourceQuota(q *corev1.ResourceQuota) {
	normalize(&q.ObjectMeta, &q.TypeMeta)
	put(b, &b.snap.ResourceQuotas, objectKey{kind: "ResourceQuota", namespace: q.Namespace, name: q.Name}, q)
}

func (b *builder) addPriorityClass(pc *schedulingv1.PriorityClass) {
	normalize(&pc.ObjectMeta, &pc.TypeMeta)
	put(b, &b.snap.PriorityClasses, objectKey{group: "scheduling.k8s.io", kind: "PriorityClass", name: pc.Name}, pc)
}

func (b *builder) addPDB(pdb *policyv1.PodDisruptionBudget) {
	normalize(&pdb.ObjectMeta, &pdb.TypeMeta)
	put(b, &b.snap.PodDisruptionBudgets, objectKey{group: "policy", kind: "PodDisruptionBudget", namespace: pdb.Namespace, name: pdb.Name}, pdb)
}

func (b *builder) addPVC(c *corev1.PersistentVolumeClaim) {
	normalize(&c.ObjectMeta, &c.TypeMeta)
	put(b, &b.snap.PersistentVolumeClaims, objectKey{kind: "PersistentVolumeClaim", namespace: c.Namespace, name: c.Name}, c)
}

func (b *builder) addPV(v *corev1.PersistentVolume) {
	normalize(&v.ObjectMeta, &v.TypeMeta)
	put(b, &b.snap.PersistentVolumes, objectKey{kind: "PersistentVolume", name: v.Name}, v)
}

func (b *builder) addStorageClass(c *storagev1.StorageClass) {
	normalize(&c.ObjectMeta, &c.TypeMeta)
	put(b, &b.snap.StorageClasses, objectKey{group: "storage.k8s.io", kind: "StorageClass", name: c.Name}, c)
}

// The Dynamic Resource Allocation objects are kept whole: the scheduler reads
// most of each, and a claim's status (allocation, reservedFor) says which
// devices are taken.

func (b *builder) addResourceSlice(s *resourcev1.ResourceSlice) {
	normalize(&s.ObjectMeta, &s.TypeMeta)
	put(b, &b.snap.ResourceSlices, objectKey{group: resourcev1.GroupName, kind: "ResourceSlice", name: s.Name}, s)
}

func (b *builder) addDeviceClass(c *resourcev1.DeviceClass) {
	normalize(&c.ObjectMeta, &c.TypeMeta)
	put(b, &b.snap.DeviceClasses, objectKey{group: resourcev1.GroupName, kind: "DeviceClass", name: c.Name}, c)
}

func (b *builder) addResourceClaim(c *resourcev1.ResourceClaim) {
	normalize(&c.ObjectMeta, &c.TypeMeta)
	put(b, &b.snap.ResourceClaims, objectKey{group: resourcev1.GroupName, kind: "ResourceClaim", namespace: c.Namespace, name: c.Name}, c)
}

func (b *builder) addResourceClaimTemplate(t *resourcev1.ResourceClaimTemplate) {
	normalize(&t.ObjectMeta, &t.TypeMeta)
	put(b, &b.snap.ResourceClaimTemplates, objectKey{group: resourcev1.GroupName, kind: "ResourceClaimTemplate", namespace: t.Namespace, name: t.Name}, t)
}

func (b *builder) addDeviceTaintRule(r *resourcev1.DeviceTaintRule) {
	normalize(&r.ObjectMeta, &r.TypeMeta)
	put(b, &b.snap.DeviceTaintRules, objectKey{group: resourcev1.GroupName, kind: "DeviceTaintRule", name: r.Name}, r)
}

// The workloads keep only what default topology spreading reads: metadata
// (for the owner references of pods) and selectors. A ReplicaSet's pod
// template would otherwise cost as much as a pod.

func (b *builder) addService(svc *corev1.Service) {
	normalize(&svc.ObjectMeta, &svc.TypeMeta)
	kept := &corev1.Service{ObjectMeta: svc.ObjectMeta, Spec: corev1.ServiceSpec{Selector: svc.Spec.Selector}}
	put(b, &b.snap.Services, objectKey{kind: "Service", namespace: svc.Namespace, name: svc.Name}, kept)
}

func (b *builder) addReplicationController(rc *corev1.ReplicationController) {
	normalize(&rc.ObjectMeta, &rc.TypeMeta)
	kept := &corev1.ReplicationController{ObjectMeta: rc.ObjectMeta, Spec: corev1.ReplicationControllerSpec{Selector: rc.Spec.Selector}}
	put(b, &b.snap.ReplicationControllers, objectKey{kind: "ReplicationController", namespace: rc.Namespace, name: rc.Name}, kept)
}

func (b *builder) addReplicaSet(rs *appsv1.ReplicaSet) {
	normalize(&rs.ObjectMeta, &rs.TypeMeta)
	kept := &appsv1.ReplicaSet{ObjectMeta: rs.ObjectMeta, Spec: appsv1.ReplicaSetSpec{Selector: rs.Spec.Selector}}
	put(b, &b.snap.ReplicaSets, objectKey{group: "apps", kind: "ReplicaSet", namespace: rs.Namespace, name: rs.Name}, kept)
}

func (b *builder) addStatefulSet(ss *appsv1.StatefulSet) {
	normalize(&ss.ObjectMeta, &ss.TypeMeta)
	kept := &appsv1.StatefulSet{ObjectMeta: ss.ObjectMeta, Spec: appsv1.StatefulSetSpec{Selector: ss.Spec.Selector}}
	put(b, &b.snap.StatefulSets, objectKey{group: "apps", kind: "StatefulSet", namespace: ss.Namespace, name: ss.Name}, kept)
}

// addUnstructured adds a PodGroup or another gang system's object
// (schedule.ObjectKind); they keep their apiVersion and kind, which is what
// tells the gang systems apart.
func (b *builder) addUnstructured(u *unstructured.Unstructured) {
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	gvk := u.GroupVersionKind()
	key := objectKey{group: gvk.Group, kind: gvk.Kind, namespace: u.GetNamespace(), name: u.GetName()}
	if schedule.IsSystemObject(gvk) {
		put(b, &b.snap.Objects, key, u)
		return
	}
	put(b, &b.snap.PodGroups, key, u)
}

func (b *builder) ignore(gvk schema.GroupVersionKind) {
	b.ignored[gvk.Kind]++
}

// snapshot returns the collected snapshot, sorted.
func (b *builder) snapshot() *schedule.Snapshot {
	s := b.snap
	slices.Sort(s.Unreadable)
	s.Sort()
	return &s
}

// warnings says what was read but left out, so a user is never surprised by a
// missing object.
func (b *builder) warnings() []string {
	var out []string
	if len(b.ignored) > 0 {
		kinds := slices.Sorted(maps.Keys(b.ignored))
		parts := make([]string, len(kinds))
		total := 0
		for i, k := range kinds {
			parts[i] = fmt.Sprintf("%d %s", b.ignored[k], k)
			total += b.ignored[k]
		}
		out = append(out, fmt.Sprintf("ignored %d object(s) of kinds the scheduler does not read: %s", total, strings.Join(parts, ", ")))
	}
	if b.duplicates > 0 {
		out = append(out, fmt.Sprintf("%d object(s) appeared more than once (%s); the last copy read was kept",
			b.duplicates, named(b.duplicated, b.duplicates)))
	}
	var noAllocatable []string
	for _, n := range b.snap.Nodes {
		if len(n.Status.Allocatable) == 0 {
			noAllocatable = append(noAllocatable, n.Name)
		}
	}
	if n := len(noAllocatable); n > 0 {
		out = append(out, fmt.Sprintf("%d node(s) have no status.allocatable (%s): no pod fits them, as kube-scheduler sees it",
			n, named(noAllocatable[:min(n, maxNamed)], n)))
	}
	return out
}

// partialWarnings name what a snapshot file lacks, and mark it Partial when
// pods are bound to nodes it does not hold (docs/design.md#snapshot). Only
// files get them: a live read's lists are the cluster.
func (b *builder) partialWarnings(snap *schedule.Snapshot) []string {
	var out []string
	if m := schedule.FindMissingNodes(snap); len(m.Nodes) > 0 {
		pods := make([]string, 0, maxNamed)
		for _, p := range m.Pods[:min(len(m.Pods), maxNamed)] {
			pods = append(pods, p.Namespace+"/"+p.Name)
		}
		snap.Partial = m.String()
		out = append(out, fmt.Sprintf("%d pod(s) are bound to %d node(s) the snapshot does not hold (%s; pods %s): the snapshot is partial, and no answer on it is fully evaluated",
			len(m.Pods), len(m.Nodes), named(m.Nodes[:min(len(m.Nodes), maxNamed)], len(m.Nodes)), named(pods, len(m.Pods))))
	}
	if w := b.absentNamespaces(); w != "" {
		out = append(out, w)
	}
	return out
}

// absentNamespaces names the objects in namespaces the snapshot does not
// hold. A snapshot with no Namespace at all (a hand-made file) has not
// recorded them, and gets no warning: namespaces are unknown there, not
// missing (docs/design.md#snapshot).
func (b *builder) absentNamespaces() string {
	if len(b.snap.Namespaces) == 0 {
		return ""
	}
	held := make(map[string]bool, len(b.snap.Namespaces))
	for _, ns := range b.snap.Namespaces {
		held[ns.Name] = true
	}
	absent := map[string]bool{}
	var objects []string
	count := func(kind string, meta metav1.Object) {
		if ns := meta.GetNamespace(); ns != "" && !held[ns] {
			absent[ns] = true
			objects = append(objects, kind+" "+ns+"/"+meta.GetName())
		}
	}
	s := &b.snap
	for _, o := range s.Pods {
		count("Pod", o)
	}
	for _, o := range s.PodGroups {
		count(o.GetKind(), o)
	}
	for _, o := range s.Objects {
		count(o.GetKind(), o)
	}
	for _, o := range s.ResourceQuotas {
		count("ResourceQuota", o)
	}
	for _, o := range s.PodDisruptionBudgets {
		count("PodDisruptionBudget", o)
	}
	for _, o := range s.PersistentVolumeClaims {
		count("PersistentVolumeClaim", o)
	}
	for _, o := range s.ResourceClaims {
		count("ResourceClaim", o)
	}
	for _, o := range s.ResourceClaimTemplates {
		count("ResourceClaimTemplate", o)
	}
	if len(objects) == 0 {
		return ""
	}
	slices.Sort(objects)
	names := slices.Sorted(maps.Keys(absent))
	return fmt.Sprintf("%d object(s) are in %d namespace(s) the snapshot does not hold (%s; %s): the snapshot is partial, or was edited by hand",
		len(objects), len(names), named(names[:min(len(names), maxNamed)], len(names)), named(objects[:min(len(objects), maxNamed)], len(objects)))
}
