// Package volumerestrictions is kube-scheduler's VolumeRestrictions plugin:
// some in-tree volumes (GCE PD, AWS EBS, RBD, iSCSI) cannot be mounted by two
// pods on one node, and a ReadWriteOncePod claim cannot be used by a second
// pod anywhere in the cluster.
package volumerestrictions

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const (
	// Name is VolumeRestrictions' name in profiles.
	Name = "VolumeRestrictions"
	// ErrReasonDiskConflict is the Filter reason for an in-tree volume
	// another pod on the node already mounts.
	ErrReasonDiskConflict = "node(s) had no available disk"
	// ErrReasonReadWriteOncePodConflict is the Filter reason for a
	// ReadWriteOncePod claim another pod already uses.
	ErrReasonReadWriteOncePodConflict = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"

	preFilterStateKey framework.StateKey = "PreFilter" + Name
)

var (
	_ framework.PreFilterPlugin     = &VolumeRestrictions{}
	_ framework.FilterPlugin        = &VolumeRestrictions{}
	_ framework.PreFilterExtensions = &VolumeRestrictions{}
)

var (
	errReasonsDisk = []string{ErrReasonDiskConflict}
	errReasonsRWOP = []string{ErrReasonReadWriteOncePodConflict}
)

// VolumeRestrictions checks volume conflicts between pods.
type VolumeRestrictions struct {
	handle framework.Handle
}

// New returns the plugin; it takes no arguments and reads claims and the
// pods of every node through the handle.
func New(_ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &VolumeRestrictions{handle: h}, nil
}

// Name returns the plugin's name.
func (pl *VolumeRestrictions) Name() string { return Name }

// preFilterState holds the pod's ReadWriteOncePod claims and how many of
// them pods of the snapshot already use.
type preFilterState struct {
	readWriteOncePodPVCs   sets.Set[string]
	conflictingPVCRefCount int
}

// Clone copies the count; the claim names are never changed.
func (s *preFilterState) Clone() framework.StateData {
	if s == nil {
		return nil
	}
	return &preFilterState{readWriteOncePodPVCs: s.readWriteOncePodPVCs, conflictingPVCRefCount: s.conflictingPVCRefCount}
}

func (s *preFilterState) updateWithPod(pod *corev1.Pod, multiplier int) {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && s.readWriteOncePodPVCs.Has(v.PersistentVolumeClaim.ClaimName) {
			s.conflictingPVCRefCount += multiplier
		}
	}
}

// PreFilter looks up every claim of the pod (a claim missing from the
// snapshot rejects the pod with the API's NotFound message), counts its
// ReadWriteOncePod claims already in use, and skips the plugin when there is
// neither such a conflict nor an in-tree volume to check.
func (pl *VolumeRestrictions) PreFilter(_ context.Context, cycleState *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	needsCheck := slices.ContainsFunc(pod.Spec.Volumes, needsRestrictionsCheck)
	pvcs := sets.New[string]()
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		name := v.PersistentVolumeClaim.ClaimName
		pvc, ok := pl.handle.Storage().PersistentVolumeClaim(pod.Namespace, name)
		if !ok {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable,
				apierrors.NewNotFound(corev1.Resource("persistentvolumeclaim"), name).Error())
		}
		if slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteOncePod) {
			pvcs.Insert(pvc.Name)
		}
	}
	s := &preFilterState{readWriteOncePodPVCs: pvcs}
	for name := range pvcs {
		if pl.isPVCUsedByPods(pod.Namespace + "/" + name) {
			s.conflictingPVCRefCount++
		}
	}
	if !needsCheck && s.conflictingPVCRefCount == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	cycleState.Write(preFilterStateKey, s)
	return nil, nil
}

// isPVCUsedByPods reports whether a pod on any node of the snapshot uses the
// claim, "namespace/name".
func (pl *VolumeRestrictions) isPVCUsedByPods(key string) bool {
	for _, ni := range pl.handle.NodeInfos().List() {
		if ni.PVCRefCounts[key] > 0 {
			return true
		}
	}
	return false
}

// PreFilterExtensions returns the plugin itself: adding or removing a pod
// that uses one of the pod's ReadWriteOncePod claims changes the verdict.
func (pl *VolumeRestrictions) PreFilterExtensions() framework.PreFilterExtensions { return pl }

// AddPod counts the added pod's uses of the pod's ReadWriteOncePod claims.
func (pl *VolumeRestrictions) AddPod(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, podInfoToAdd *framework.PodInfo, _ *framework.NodeInfo) *framework.Status {
	s, err := readState(cycleState)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(podInfoToAdd.Pod, 1)
	return nil
}

// RemovePod discounts the removed pod's uses of the pod's ReadWriteOncePod claims.
func (pl *VolumeRestrictions) RemovePod(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, podInfoToRemove *framework.PodInfo, _ *framework.NodeInfo) *framework.Status {
	s, err := readState(cycleState)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.updateWithPod(podInfoToRemove.Pod, -1)
	return nil
}

func readState(cycleState *framework.CycleState) (*preFilterState, error) {
	return framework.ReadState[*preFilterState](cycleState, preFilterStateKey)
}

// Filter rejects a node where another pod mounts one of the pod's in-tree
// volumes in a conflicting way, then every node while one of the pod's
// ReadWriteOncePod claims is in use. Both rejections are Unschedulable:
// preemption can remove the other pod.
func (pl *VolumeRestrictions) Filter(_ context.Context, cycleState *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if !satisfyVolumeConflicts(pod, nodeInfo) {
		return framework.NewStatus(framework.Unschedulable, errReasonsDisk...)
	}
	s, err := readState(cycleState)
	if err != nil {
		return framework.AsStatus(err)
	}
	if s != nil && s.conflictingPVCRefCount > 0 {
		return framework.NewStatus(framework.Unschedulable, errReasonsRWOP...)
	}
	return nil
}

func needsRestrictionsCheck(v corev1.Volume) bool {
	return v.GCEPersistentDisk != nil || v.AWSElasticBlockStore != nil || v.RBD != nil || v.ISCSI != nil
}

func satisfyVolumeConflicts(pod *corev1.Pod, nodeInfo *framework.NodeInfo) bool {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if !needsRestrictionsCheck(*v) {
			continue
		}
		for _, existing := range nodeInfo.Pods {
			if isVolumeConflict(v, existing.Pod) {
				return false
			}
		}
	}
	return true
}

// isVolumeConflict reports whether the volume clashes with one of the
// pod's: the same GCE PD or iSCSI IQN unless both are read-only, the same
// EBS volume, or the same RBD image on an overlapping monitor unless both are
// read-only.
func isVolumeConflict(volume *corev1.Volume, pod *corev1.Pod) bool {
	for _, existing := range pod.Spec.Volumes {
		if volume.GCEPersistentDisk != nil && existing.GCEPersistentDisk != nil {
			disk, existingDisk := volume.GCEPersistentDisk, existing.GCEPersistentDisk
			if disk.PDName == existingDisk.PDName && !(disk.ReadOnly && existingDisk.ReadOnly) {
				return true
			}
		}
		if volume.AWSElasticBlockStore != nil && existing.AWSElasticBlockStore != nil {
			if volume.AWSElasticBlockStore.VolumeID == existing.AWSElasticBlockStore.VolumeID {
				return true
			}
		}
		if volume.ISCSI != nil && existing.ISCSI != nil {
			if volume.ISCSI.IQN == existing.ISCSI.IQN && !(volume.ISCSI.ReadOnly && existing.ISCSI.ReadOnly) {
				return true
			}
		}
		if volume.RBD != nil && existing.RBD != nil {
			r, e := volume.RBD, existing.RBD
			if haveOverlap(r.CephMonitors, e.CephMonitors) && r.RBDPool == e.RBDPool && r.RBDImage == e.RBDImage && !(r.ReadOnly && e.ReadOnly) {
				return true
			}
		}
	}
	return false
}

func haveOverlap(a1, a2 []string) bool {
	if len(a1) > len(a2) {
		a1, a2 = a2, a1
	}
	m := sets.New(a1...)
	for _, v := range a2 {
		if m.Has(v) {
			return true
		}
	}
	return false
}
