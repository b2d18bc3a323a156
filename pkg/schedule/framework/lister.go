package framework

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// SnapshotHandle is the Handle over one snapshot: its NodeInfos, namespace
// labels and storage objects. Build it with NewSnapshotHandle; plugins only read it.
type SnapshotHandle struct {
	nodes []*NodeInfo
	// index is each node's position in nodes, by name; never changed, and
	// shared by the handles of a snapshot's working copies.
	index            map[string]int
	withAffinity     []*NodeInfo
	withAntiAffinity []*NodeInfo
	// listsStale says withAffinity and withAntiAffinity need rebuilding
	// after ReplaceNode.
	listsStale bool
	// changes are the positions ReplaceNode wrote, in order (a node may
	// be there more than once); epoch counts SetNodes, which starts them
	// again (Mark, ChangedSince).
	changes       []int32
	epoch         int
	namespaces    map[string]labels.Set
	storage       *storageIndex
	pdbs          []*policyv1.PodDisruptionBudget
	unreadStorage func(namespace string) []string
	podGroups     map[string]NativePodGroup
	workloads     Workloads
	dra           *DRA
	parallelizer  Parallelizer
}

var _ Handle = &SnapshotHandle{}

// SnapshotObjects are the objects besides nodes and pods a handle serves.
type SnapshotObjects struct {
	Namespaces             []*corev1.Namespace
	PersistentVolumeClaims []*corev1.PersistentVolumeClaim
	PersistentVolumes      []*corev1.PersistentVolume
	StorageClasses         []*storagev1.StorageClass
	PodDisruptionBudgets   []*policyv1.PodDisruptionBudget
	// Workloads give default topology spread constraints their selector.
	Workloads Workloads
	// UnreadableStorage, when set, names the storage kinds a live read
	// could not list for a namespace (schedule.Snapshot.UnreadableIn).
	UnreadableStorage func(namespace string) []string
	// NativePodGroups are the scheduling.k8s.io PodGroups by
	// namespace/name, as preemption reads them.
	NativePodGroups map[string]NativePodGroup
}

// NativePodGroup is what kube-scheduler's preemption reads of a
// scheduling.k8s.io PodGroup whose pods may be victims (GenericWorkload on).
type NativePodGroup struct {
	// Priority is the group's spec.priority, 0 when unset
	// (util.PodGroupPriority): its pods are victims at this priority.
	Priority int32
	// DisruptAll: spec.disruptionMode is All; preemption evicts every
	// scheduled pod of the group together or none.
	DisruptAll bool
}

// NewSnapshotHandle indexes nodes (already holding their pods) and objects.
func NewSnapshotHandle(nodes []*NodeInfo, objects SnapshotObjects, parallelism int) *SnapshotHandle {
	index := make(map[string]int, len(nodes))
	for i, n := range nodes {
		index[n.Name()] = i
	}
	return NewIndexedSnapshotHandle(nodes, index, objects, parallelism)
}

// NewIndexedSnapshotHandle is NewSnapshotHandle with the nodes' positions
// by name given (kept, never changed).
func NewIndexedSnapshotHandle(nodes []*NodeInfo, index map[string]int, objects SnapshotObjects, parallelism int) *SnapshotHandle {
	h := &SnapshotHandle{
		index:         index,
		namespaces:    make(map[string]labels.Set, len(objects.Namespaces)),
		storage:       newStorageIndex(objects),
		pdbs:          objects.PodDisruptionBudgets,
		unreadStorage: objects.UnreadableStorage,
		podGroups:     objects.NativePodGroups,
		workloads:     objects.Workloads,
		parallelizer:  NewParallelizer(parallelism),
	}
	for _, ns := range objects.Namespaces {
		// A namespace without labels still exists: keep a non-nil set, so
		// nil means "not in the snapshot".
		l := labels.Set(ns.Labels)
		if l == nil {
			l = labels.Set{}
		}
		h.namespaces[ns.Name] = l
	}
	h.nodes, h.listsStale = nodes, true
	return h
}

// Fork returns a handle over nodes, a working copy's own slice of the same
// nodes in the same order, that shares this handle's indexes of the
// nodes' names and of the other objects (never changed) and has a DRA
// state of its own (SetDRA). The handle keeps the slice: ReplaceNode
// writes into it.
func (h *SnapshotHandle) Fork(nodes []*NodeInfo, parallelism int) *SnapshotHandle {
	return &SnapshotHandle{nodes: nodes, index: h.index, listsStale: true, namespaces: h.namespaces, storage: h.storage,
		pdbs: h.pdbs, unreadStorage: h.unreadStorage, podGroups: h.podGroups, workloads: h.workloads,
		parallelizer: NewParallelizer(parallelism)}
}

// SetNodes replaces the node list and indexes it again.
func (h *SnapshotHandle) SetNodes(nodes []*NodeInfo) {
	h.nodes, h.listsStale = nodes, true
	h.changes, h.epoch = nil, h.epoch+1
	h.index = make(map[string]int, len(nodes))
	for i, n := range nodes {
		h.index[n.Name()] = i
	}
}

// ReplaceNode puts ni at position i of the node list (the same node, changed
// by a reservation) in O(1); the affinity lists are rebuilt when next read.
func (h *SnapshotHandle) ReplaceNode(i int, ni *NodeInfo) {
	h.nodes[i] = ni
	h.listsStale = true
	h.changes = append(h.changes, int32(i))
}

// NodeMark is a moment in a handle's node changes (Mark).
type NodeMark struct {
	h            *SnapshotHandle
	epoch, count int
}

// Mark returns the moment now, for ChangedSince.
func (h *SnapshotHandle) Mark() NodeMark {
	return NodeMark{h: h, epoch: h.epoch, count: len(h.changes)}
}

// ChangedSince returns the positions of the nodes ReplaceNode wrote since
// m, in increasing order, each once, in the time of those changes, not of
// every node: what a cycle after an equal pod's need look at again on a
// cluster of 65,000 nodes. False when m is another handle's (a fork has
// its own), or the list was replaced since (SetNodes): the caller then
// compares every node (docs/design.md#pipeline).
func (h *SnapshotHandle) ChangedSince(m NodeMark) ([]int, bool) {
	if m.h != h || m.epoch != h.epoch || m.count > len(h.changes) {
		return nil, false
	}
	since := h.changes[m.count:]
	if len(since) == 0 {
		return nil, true
	}
	out := make([]int, len(since))
	for k, i := range since {
		out[k] = int(i)
	}
	slices.Sort(out)
	return slices.Compact(out), true
}

func (h *SnapshotHandle) rebuildLists() {
	if !h.listsStale {
		return
	}
	h.withAffinity, h.withAntiAffinity = h.withAffinity[:0:0], h.withAntiAffinity[:0:0]
	for _, n := range h.nodes {
		if len(n.PodsWithAffinity) > 0 {
			h.withAffinity = append(h.withAffinity, n)
		}
		if len(n.PodsWithRequiredAntiAffinity) > 0 {
			h.withAntiAffinity = append(h.withAntiAffinity, n)
		}
	}
	h.listsStale = false
}

// NodeInfos returns the handle itself as the lister.
func (h *SnapshotHandle) NodeInfos() NodeInfoLister { return h }

// List returns every node.
func (h *SnapshotHandle) List() []*NodeInfo { return h.nodes }

// HavePodsWithAffinityList returns nodes with pods that have (anti-)affinity.
func (h *SnapshotHandle) HavePodsWithAffinityList() []*NodeInfo {
	h.rebuildLists()
	return h.withAffinity
}

// HavePodsWithRequiredAntiAffinityList returns nodes with pods that have required anti-affinity.
func (h *SnapshotHandle) HavePodsWithRequiredAntiAffinityList() []*NodeInfo {
	h.rebuildLists()
	return h.withAntiAffinity
}

// Get returns a node by name.
func (h *SnapshotHandle) Get(name string) (*NodeInfo, error) {
	if i, ok := h.index[name]; ok {
		return h.nodes[i], nil
	}
	return nil, fmt.Errorf("node %q not found in the snapshot", name)
}

// NamespaceLabels returns a namespace's labels: nil when the namespace is not
// in the snapshot, an empty set when it has none.
func (h *SnapshotHandle) NamespaceLabels(namespace string) labels.Set { return h.namespaces[namespace] }

// Storage returns the storage objects.
func (h *SnapshotHandle) Storage() StorageLister { return h.storage }

// PodDisruptionBudgets returns the budgets.
func (h *SnapshotHandle) PodDisruptionBudgets() []*policyv1.PodDisruptionBudget { return h.pdbs }

// NativePodGroupOf returns the scheduling.k8s.io PodGroup pod names in
// spec.schedulingGroup, when the snapshot holds it.
func (h *SnapshotHandle) NativePodGroupOf(pod *corev1.Pod) (NativePodGroup, bool) {
	sg := pod.Spec.SchedulingGroup
	if sg == nil || sg.PodGroupName == nil || h.podGroups == nil {
		return NativePodGroup{}, false
	}
	g, ok := h.podGroups[pod.Namespace+"/"+*sg.PodGroupName]
	return g, ok
}

// DRA returns the resource.k8s.io state of this working copy.
func (h *SnapshotHandle) DRA() *DRA { return h.dra }

// SetDRA gives the handle its working copy's resource.k8s.io state.
func (h *SnapshotHandle) SetDRA(d *DRA) { h.dra = d }

// Parallelizer returns the parallelizer.
func (h *SnapshotHandle) Parallelizer() Parallelizer { return h.parallelizer }

type storageIndex struct {
	pvcs    map[string]*corev1.PersistentVolumeClaim
	pvs     map[string]*corev1.PersistentVolume
	classes map[string]*storagev1.StorageClass
}

func newStorageIndex(o SnapshotObjects) *storageIndex {
	s := &storageIndex{pvcs: map[string]*corev1.PersistentVolumeClaim{}, pvs: map[string]*corev1.PersistentVolume{}, classes: map[string]*storagev1.StorageClass{}}
	for _, c := range o.PersistentVolumeClaims {
		s.pvcs[c.Namespace+"/"+c.Name] = c
	}
	for _, v := range o.PersistentVolumes {
		s.pvs[v.Name] = v
	}
	for _, c := range o.StorageClasses {
		s.classes[c.Name] = c
	}
	return s
}

func (s *storageIndex) PersistentVolumeClaim(namespace, name string) (*corev1.PersistentVolumeClaim, bool) {
	c, ok := s.pvcs[namespace+"/"+name]
	return c, ok
}

func (s *storageIndex) PersistentVolume(name string) (*corev1.PersistentVolume, bool) {
	v, ok := s.pvs[name]
	return v, ok
}

func (s *storageIndex) StorageClass(name string) (*storagev1.StorageClass, bool) {
	c, ok := s.classes[name]
	return c, ok
}

// BuildNodeInfos puts each pod on its node (pods bound to nodes that are not
// in the list are left out, as kube-scheduler's cache does) and fills in image
// states as its cache does: per image name, the number of distinct nodes that
// have it, and the size first seen for it (nodes in the given order).
func BuildNodeInfos(nodes []*corev1.Node, pods []*corev1.Pod) []*NodeInfo {
	// Each bound pod's node (the last of a name, as a map by name keeps
	// it), then the pods of each node in their order: the nodes are built
	// on every core, each with its own pods, computing their requests
	// (component-helpers) there, which is most of the cost.
	index := make(map[string]int32, len(nodes))
	for i, n := range nodes {
		index[n.Name] = int32(i)
	}
	at := make([]int32, len(pods))
	start := make([]int32, len(nodes)+1)
	for i, p := range pods {
		at[i] = -1
		if j, ok := index[p.Spec.NodeName]; ok && p.Spec.NodeName != "" {
			at[i] = j
			start[j+1]++
		}
	}
	for j := range nodes {
		start[j+1] += start[j]
	}
	order := make([]int32, start[len(nodes)])
	next := slices.Clone(start[:len(nodes)])
	for i, j := range at {
		if j >= 0 {
			order[next[j]] = int32(i)
			next[j]++
		}
	}
	// Nodes in runs of buildRun, each run with its own table of the
	// requests computed for a pod's containers (podRequests).
	infos := make([]*NodeInfo, len(nodes))
	NewParallelizer(runtime.GOMAXPROCS(0)).Until(context.Background(), (len(nodes)+buildRun-1)/buildRun, func(run int) {
		requests := podRequests{}
		for j := run * buildRun; j < min((run+1)*buildRun, len(nodes)); j++ {
			ni := NewNodeInfo(nodes[j])
			if index[nodes[j].Name] == int32(j) {
				own := order[start[j]:start[j+1]]
				ni.Pods = make([]*PodInfo, 0, len(own))
				podInfos := make([]PodInfo, len(own))
				for k, i := range own {
					podInfos[k].initWith(pods[i], requests.of(pods[i]))
					ni.AddPodInfo(&podInfos[k])
				}
			}
			infos[j] = ni
		}
	})
	// One summary per image, shared by the nodes that have it (only
	// AddNodeInfos changes one after, once each): its size and how many
	// nodes (distinct names) have it.
	type imageState struct {
		summary *ImageStateSummary
		last    int32
		names   map[string]struct{} // when node names repeat
	}
	images := map[string]*imageState{}
	unique := len(index) == len(nodes)
	for j, n := range nodes {
		for _, img := range n.Status.Images {
			for _, name := range img.Names {
				st, ok := images[name]
				if !ok {
					st = &imageState{summary: &ImageStateSummary{Size: img.SizeBytes}, last: -1}
					if !unique {
						st.names = map[string]struct{}{}
					}
					images[name] = st
				}
				switch {
				case unique:
					// A node lists an image's name once, or again with
					// another of its images: count the node once.
					if st.last != int32(j) {
						st.last = int32(j)
						st.summary.NumNodes++
					}
				default:
					st.names[n.Name] = struct{}{}
					st.summary.NumNodes = len(st.names)
				}
			}
		}
	}
	for _, ni := range infos {
		for _, img := range ni.node.Status.Images {
			for _, name := range img.Names {
				ni.ImageStates[name] = images[name].summary
			}
		}
	}
	return infos
}

// buildRun is how many nodes BuildNodeInfos builds in one piece of work.
const buildRun = 256

// podRequests are the requests computed for pods whose requests are their
// one container's (oneContainerRequestsOnly), by that container: the pods
// of one template share their containers when a snapshot is read
// (docs/design.md#the-snapshot-file), so they share one computation and
// one Resource, which PodInfos never change.
type podRequests map[*corev1.Container]PodResource

// of is ComputePodResource(pod).
func (t podRequests) of(pod *corev1.Pod) PodResource {
	if !oneContainerRequestsOnly(pod) {
		return computePodResource(pod)
	}
	c := &pod.Spec.Containers[0]
	if r, ok := t[c]; ok {
		return r
	}
	r := containerRequests(c)
	t[c] = r
	return r
}

// AddNodeInfos returns existing (in name order) with NodeInfos for nodes
// and the pods bound to them added, in name order: what BuildNodeInfos
// would build for all the nodes, without building the existing ones again.
// Image counts are cluster-wide (ImageLocality spreads by them), so an
// existing node that has an image a new node has too gets a copy with the
// new count; the others are shared. A name already in existing, or given
// twice in nodes, is an error.
func AddNodeInfos(existing []*NodeInfo, nodes []*corev1.Node, pods []*corev1.Pod) ([]*NodeInfo, error) {
	added := BuildNodeInfos(nodes, pods)
	names := make(map[string]bool, len(existing))
	for _, ni := range existing {
		names[ni.Name()] = true
	}
	// Each image's count among the existing nodes (any node that has it
	// holds the cluster-wide count) and among the new ones.
	newCount := map[string]int{}
	given := make(map[string]bool, len(added))
	for _, ni := range added {
		if names[ni.Name()] {
			return nil, fmt.Errorf("node %s exists already", ni.Name())
		}
		if given[ni.Name()] {
			// Counts are by node; BuildNodeInfos's by name.
			return nil, fmt.Errorf("node %s is given twice", ni.Name())
		}
		given[ni.Name()] = true
		for name := range ni.ImageStates {
			newCount[name]++
		}
	}
	oldCount := map[string]int{}
	if len(newCount) > 0 {
		for _, ni := range existing {
			for name, st := range ni.ImageStates {
				if _, ok := newCount[name]; ok {
					oldCount[name] = st.NumNodes
				}
			}
		}
	}
	out := make([]*NodeInfo, 0, len(existing)+len(added))
	for _, ni := range existing {
		changed := false
		for name := range ni.ImageStates {
			if newCount[name] > 0 {
				changed = true
				break
			}
		}
		if changed {
			c := ni.Clone()
			c.ImageStates = make(map[string]*ImageStateSummary, len(ni.ImageStates))
			for name, st := range ni.ImageStates {
				c.ImageStates[name] = &ImageStateSummary{Size: st.Size, NumNodes: st.NumNodes + newCount[name]}
			}
			c.Generation++
			ni = c
		}
		out = append(out, ni)
	}
	// The new nodes share one summary per image (BuildNodeInfos): each is
	// counted up once.
	counted := map[*ImageStateSummary]bool{}
	for _, ni := range added {
		for name, st := range ni.ImageStates {
			if !counted[st] {
				counted[st] = true
				st.NumNodes += oldCount[name]
			}
		}
		out = append(out, ni)
	}
	slices.SortFunc(out, func(a, b *NodeInfo) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// UnreadableStorage names the storage kinds the snapshot could not list for
// namespace, which makes the Handle a volumebinding.StorageReader.
func (h *SnapshotHandle) UnreadableStorage(namespace string) []string {
	if h.unreadStorage == nil {
		return nil
	}
	return h.unreadStorage(namespace)
}
