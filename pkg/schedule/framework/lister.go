package framework

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// SnapshotHandle is the Handle over one snapshot: its NodeInfos, namespace
// labels and storage objects. Build it with NewSnapshotHandle; plugins only read it.
type SnapshotHandle struct {
	nodes            []*NodeInfo
	byName           map[string]*NodeInfo
	withAffinity     []*NodeInfo
	withAntiAffinity []*NodeInfo
	namespaces       map[string]labels.Set
	storage          *storageIndex
	parallelizer     Parallelizer
}

var _ Handle = &SnapshotHandle{}

// SnapshotObjects are the objects besides nodes and pods a handle serves.
type SnapshotObjects struct {
	Namespaces             []*corev1.Namespace
	PersistentVolumeClaims []*corev1.PersistentVolumeClaim
	PersistentVolumes      []*corev1.PersistentVolume
	StorageClasses         []*storagev1.StorageClass
}

// NewSnapshotHandle indexes nodes (already holding their pods) and objects.
func NewSnapshotHandle(nodes []*NodeInfo, objects SnapshotObjects, parallelism int) *SnapshotHandle {
	h := &SnapshotHandle{
		byName:       make(map[string]*NodeInfo, len(nodes)),
		namespaces:   make(map[string]labels.Set, len(objects.Namespaces)),
		storage:      newStorageIndex(objects),
		parallelizer: NewParallelizer(parallelism),
	}
	for _, ns := range objects.Namespaces {
		h.namespaces[ns.Name] = labels.Set(ns.Labels)
	}
	h.SetNodes(nodes)
	return h
}

// SetNodes replaces the node list, for a working copy of the snapshot.
func (h *SnapshotHandle) SetNodes(nodes []*NodeInfo) {
	h.nodes = nodes
	clear(h.byName)
	h.withAffinity, h.withAntiAffinity = nil, nil
	for _, n := range nodes {
		h.byName[n.Name()] = n
		if len(n.PodsWithAffinity) > 0 {
			h.withAffinity = append(h.withAffinity, n)
		}
		if len(n.PodsWithRequiredAntiAffinity) > 0 {
			h.withAntiAffinity = append(h.withAntiAffinity, n)
		}
	}
}

// NodeInfos returns the handle itself as the lister.
func (h *SnapshotHandle) NodeInfos() NodeInfoLister { return h }

// List returns every node.
func (h *SnapshotHandle) List() []*NodeInfo { return h.nodes }

// HavePodsWithAffinityList returns nodes with pods that have (anti-)affinity.
func (h *SnapshotHandle) HavePodsWithAffinityList() []*NodeInfo { return h.withAffinity }

// HavePodsWithRequiredAntiAffinityList returns nodes with pods that have required anti-affinity.
func (h *SnapshotHandle) HavePodsWithRequiredAntiAffinityList() []*NodeInfo {
	return h.withAntiAffinity
}

// Get returns a node by name.
func (h *SnapshotHandle) Get(name string) (*NodeInfo, error) {
	if n, ok := h.byName[name]; ok {
		return n, nil
	}
	return nil, fmt.Errorf("node %q not found in the snapshot", name)
}

// NamespaceLabels returns a namespace's labels.
func (h *SnapshotHandle) NamespaceLabels(namespace string) labels.Set { return h.namespaces[namespace] }

// Storage returns the storage objects.
func (h *SnapshotHandle) Storage() StorageLister { return h.storage }

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
// states with how many nodes hold each image.
func BuildNodeInfos(nodes []*corev1.Node, pods []*corev1.Pod) []*NodeInfo {
	infos := make([]*NodeInfo, len(nodes))
	byName := make(map[string]*NodeInfo, len(nodes))
	imageNodes := map[string]int{}
	for i, n := range nodes {
		ni := NewNodeInfo(n)
		infos[i] = ni
		byName[n.Name] = ni
		for _, img := range n.Status.Images {
			for _, name := range img.Names {
				imageNodes[name]++
			}
		}
	}
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			continue
		}
		if ni, ok := byName[p.Spec.NodeName]; ok {
			ni.AddPodInfo(NewPodInfo(p))
		}
	}
	for _, ni := range infos {
		for _, img := range ni.node.Status.Images {
			for _, name := range img.Names {
				ni.ImageStates[name] = &ImageStateSummary{Size: img.SizeBytes, NumNodes: imageNodes[name]}
			}
		}
	}
	return infos
}
