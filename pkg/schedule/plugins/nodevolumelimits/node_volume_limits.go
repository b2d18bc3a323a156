// Package nodevolumelimits is kube-scheduler's NodeVolumeLimits plugin (CSI
// attach limits) as far as a snapshot can take it. The limits live in
// CSINode objects and the volumes already attached in VolumeAttachments,
// neither of which the snapshot holds, so a pod that would attach a CSI
// volume is not evaluated: PreFilter returns framework.NotEvaluated with a
// reason that starts with NotEvaluatedReason, which the runner reports
// instead of letting the pod pass silently.
//
// What the snapshot does decide exactly as kube-scheduler does: a pod
// without claims or migratable in-tree volumes skips the plugin; a claim
// missing from the snapshot rejects every node with kube-scheduler's
// message; and a pod whose claims are all bound to volumes that are neither
// CSI nor migratable in-tree volumes (local, hostPath, NFS, ...) attaches
// nothing the plugin counts, so it fits every node.
package nodevolumelimits

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/ephemeral"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const (
	// Name is NodeVolumeLimits' name in profiles.
	Name = "NodeVolumeLimits"
	// ErrReasonMaxVolumeCountExceeded is kube-scheduler's Filter reason for a
	// node whose CSI attach limit the pod would exceed; this package cannot
	// give it (no CSINode in the snapshot).
	ErrReasonMaxVolumeCountExceeded = "node(s) exceed max volume count"
	// NotEvaluatedReason starts the reason of the not-evaluated status
	// PreFilter returns (framework.NotEvaluated, a Skip whose
	// IsNotEvaluated is true); the rest of the reason names the volumes.
	NotEvaluatedReason = "NodeVolumeLimits not evaluated"

	preFilterStateKey framework.StateKey = "PreFilter" + Name
)

var (
	_ framework.PreFilterPlugin = &NodeVolumeLimits{}
	_ framework.FilterPlugin    = &NodeVolumeLimits{}
)

// NodeVolumeLimits recognises pods whose volumes count against CSI attach limits.
type NodeVolumeLimits struct {
	storage framework.StorageLister
}

// New returns the plugin; it takes no arguments and reads claims and
// volumes through the handle.
func New(_ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &NodeVolumeLimits{storage: h.Storage()}, nil
}

// Name returns the plugin's name.
func (pl *NodeVolumeLimits) Name() string { return Name }

// preFilterState is the verdict kube-scheduler's Filter gives every node
// for a pod whose claims cannot be looked up.
type preFilterState struct {
	code    framework.Code
	message string
}

// Clone returns the state itself: it is never changed after PreFilter.
func (s *preFilterState) Clone() framework.StateData { return s }

// PreFilter skips a pod without claims or migratable in-tree volumes, keeps
// kube-scheduler's Filter verdict for a pod whose claims cannot be looked
// up, skips a pod that attaches nothing countable, and returns the
// not-evaluated status for the others.
func (pl *NodeVolumeLimits) PreFilter(_ context.Context, cycleState *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	relevant := false
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil || isInlineMigratable(v) {
			relevant = true
			break
		}
	}
	if !relevant {
		return nil, framework.NewStatus(framework.Skip)
	}
	counted, failure := pl.countedVolumes(pod)
	if failure != nil {
		cycleState.Write(preFilterStateKey, failure)
		return nil, nil
	}
	if len(counted) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	return nil, framework.NotEvaluated(fmt.Sprintf("%s: volume(s) %s count against CSI attach limits, which CSINode objects hold and the snapshot does not",
		NotEvaluatedReason, strings.Join(counted, ", ")))
}

// countedVolumes walks the pod's volumes in order, as kube-scheduler's
// Filter does for a new pod, and returns those that may count against an
// attach limit, or the verdict for the first volume that cannot be looked up.
func (pl *NodeVolumeLimits) countedVolumes(pod *corev1.Pod) ([]string, *preFilterState) {
	var counted []string
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		var claimName string
		isEphemeral := false
		switch {
		case v.PersistentVolumeClaim != nil:
			claimName = v.PersistentVolumeClaim.ClaimName
		case v.Ephemeral != nil:
			claimName = ephemeral.VolumeClaimName(pod, v)
			isEphemeral = true
		default:
			if isInlineMigratable(v) {
				counted = append(counted, fmt.Sprintf("%q", v.Name))
			}
			continue
		}
		if claimName == "" {
			return nil, &preFilterState{code: framework.Error, message: "PersistentVolumeClaim had no name"}
		}
		claim, ok := pl.storage.PersistentVolumeClaim(pod.Namespace, claimName)
		if !ok {
			err := apierrors.NewNotFound(corev1.Resource("persistentvolumeclaim"), claimName)
			return nil, &preFilterState{code: framework.UnschedulableAndUnresolvable,
				message: fmt.Sprintf("looking up PVC %s/%s: %v", pod.Namespace, claimName, err)}
		}
		if isEphemeral {
			if err := ephemeral.VolumeIsForPod(pod, claim); err != nil {
				return nil, &preFilterState{code: framework.Error, message: err.Error()}
			}
		}
		if pl.mayCount(claim) {
			counted = append(counted, fmt.Sprintf("%q", v.Name))
		}
	}
	return counted, nil
}

// mayCount reports whether kube-scheduler could count the claim's volume
// against a CSI driver's limit: unless the claim is bound to a volume of the
// snapshot that is neither CSI nor a migratable in-tree volume. An unbound
// claim (or one whose volume is missing) is counted by its class's
// provisioner, which the snapshot cannot tie to a limit either.
func (pl *NodeVolumeLimits) mayCount(claim *corev1.PersistentVolumeClaim) bool {
	if claim.Spec.VolumeName == "" {
		return true
	}
	pv, ok := pl.storage.PersistentVolume(claim.Spec.VolumeName)
	if !ok {
		return true
	}
	return pv.Spec.CSI != nil || isPVMigratable(pv)
}

// isPVMigratable reports the in-tree volume types csi-translation-lib can
// translate to CSI.
func isPVMigratable(pv *corev1.PersistentVolume) bool {
	s := &pv.Spec.PersistentVolumeSource
	return s.AWSElasticBlockStore != nil || s.AzureDisk != nil || s.AzureFile != nil || s.GCEPersistentDisk != nil ||
		s.Cinder != nil || s.PortworxVolume != nil || s.VsphereVolume != nil
}

// isInlineMigratable reports the inline volume types csi-translation-lib can
// translate to CSI.
func isInlineMigratable(v *corev1.Volume) bool {
	s := &v.VolumeSource
	return s.AWSElasticBlockStore != nil || s.AzureDisk != nil || s.AzureFile != nil || s.GCEPersistentDisk != nil ||
		s.Cinder != nil || s.PortworxVolume != nil || s.VsphereVolume != nil
}

// PreFilterExtensions returns nil: nothing is evaluated that other pods change.
func (pl *NodeVolumeLimits) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter gives every node the verdict PreFilter kept for a claim that cannot
// be looked up.
func (pl *NodeVolumeLimits) Filter(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, _ *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadState[*preFilterState](cycleState, preFilterStateKey)
	if errors.Is(err, framework.ErrNotFound) {
		return nil
	}
	if err != nil {
		return framework.AsStatus(err)
	}
	if s.code == framework.Error {
		return framework.AsStatus(errors.New(s.message))
	}
	return framework.NewStatus(s.code, s.message)
}
