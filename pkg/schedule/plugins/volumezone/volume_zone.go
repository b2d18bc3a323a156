// Package volumezone is kube-scheduler's VolumeZone plugin: a pod whose
// bound PersistentVolumes carry zone or region labels only fits nodes in
// those zones and regions.
package volumezone

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const (
	// Name is VolumeZone's name in profiles.
	Name = "VolumeZone"
	// ErrReasonConflict is the Filter reason, as kube-scheduler words it.
	ErrReasonConflict = "node(s) had no available volume zone"

	preFilterStateKey framework.StateKey = "PreFilter" + Name
)

// The PreFilter reasons for claims kube-scheduler cannot place; a claim,
// volume or class missing from the snapshot gets the API's NotFound message
// instead, such as `persistentvolumeclaim "data" not found`.
const (
	ErrReasonPVCNoName              = "PersistentVolumeClaim had no name"
	ErrReasonPVCNoPVNorStorageClass = "PersistentVolumeClaim had no pv name and storageClass name"
	ErrReasonPVNoName               = "PersistentVolume had no name"
)

// labelMultiZoneDelimiter separates the zones of a multi-zone label value
// ("zone-a__zone-b"), as k8s.io/cloud-provider defines it.
const labelMultiZoneDelimiter = "__"

var (
	_ framework.PreFilterPlugin = &VolumeZone{}
	_ framework.FilterPlugin    = &VolumeZone{}
)

// topologyLabels are the PV labels VolumeZone honours, beta ones included.
var topologyLabels = []string{
	corev1.LabelFailureDomainBetaZone,
	corev1.LabelFailureDomainBetaRegion,
	corev1.LabelTopologyZone,
	corev1.LabelTopologyRegion,
}

var errReasonsConflict = []string{ErrReasonConflict}

// VolumeZone checks the zone and region labels of a pod's volumes against
// the node's.
type VolumeZone struct {
	storage framework.StorageLister
}

// New returns the plugin; it takes no arguments and reads claims, volumes
// and classes through the handle.
func New(_ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &VolumeZone{storage: h.Storage()}, nil
}

// Name returns the plugin's name.
func (pl *VolumeZone) Name() string { return Name }

// pvTopology is one topology label of a bound volume: the label and the
// zones (or regions) its value lists.
type pvTopology struct {
	pvName string
	key    string
	values sets.Set[string]
}

type stateData struct {
	podPVTopologies []pvTopology
}

// Clone returns the state itself: it is never changed after PreFilter.
func (d *stateData) Clone() framework.StateData { return d }

// PreFilter collects the topology labels of the pod's bound volumes. It
// skips the plugin when there are none (no claims, or only claims waiting
// for their first consumer) and rejects the pod when a claim cannot be
// placed at all.
func (pl *VolumeZone) PreFilter(_ context.Context, cycleState *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	topologies, status := pl.podPVTopologies(pod)
	if !status.IsSuccess() {
		return nil, status
	}
	if len(topologies) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	cycleState.Write(preFilterStateKey, &stateData{podPVTopologies: topologies})
	return nil, nil
}

func (pl *VolumeZone) podPVTopologies(pod *corev1.Pod) ([]pvTopology, *framework.Status) {
	topologies := make([]pvTopology, 0)
	for i := range pod.Spec.Volumes {
		source := pod.Spec.Volumes[i].PersistentVolumeClaim
		if source == nil {
			continue
		}
		if source.ClaimName == "" {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPVCNoName)
		}
		pvc, ok := pl.storage.PersistentVolumeClaim(pod.Namespace, source.ClaimName)
		if !ok {
			return nil, notFound(corev1.Resource("persistentvolumeclaim"), source.ClaimName)
		}
		pvName := pvc.Spec.VolumeName
		if pvName == "" {
			className := persistentVolumeClaimClass(pvc)
			if className == "" {
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPVCNoPVNorStorageClass)
			}
			class, ok := pl.storage.StorageClass(className)
			if !ok {
				return nil, notFound(storagev1.Resource("storageclass"), className)
			}
			if class.VolumeBindingMode == nil {
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("VolumeBindingMode not set for StorageClass %q", className))
			}
			if *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
				// VolumeBinding places the volume; nothing to check here.
				continue
			}
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPVNoName)
		}
		pv, ok := pl.storage.PersistentVolume(pvName)
		if !ok {
			return nil, notFound(corev1.Resource("persistentvolume"), pvName)
		}
		topologies = append(topologies, pvTopologies(pv)...)
	}
	return topologies, nil
}

// notFound is the status kube-scheduler gives for an object its informer
// lister does not have: the API's NotFound message (the lister names the
// resource in the singular, e.g. `storageclass.storage.k8s.io "x" not found`),
// UnschedulableAndUnresolvable.
func notFound(resource schema.GroupResource, name string) *framework.Status {
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, apierrors.NewNotFound(resource, name).Error())
}

func pvTopologies(pv *corev1.PersistentVolume) []pvTopology {
	var out []pvTopology
	for _, key := range topologyLabels {
		value, ok := pv.Labels[key]
		if !ok {
			continue
		}
		zones, err := labelZonesToSet(value)
		if err != nil {
			continue
		}
		out = append(out, pvTopology{pvName: pv.Name, key: key, values: zones})
	}
	return out
}

// labelZonesToSet splits a multi-zone label value as k8s.io/cloud-provider's
// LabelZonesToSet does: trimmed parts, none of them empty.
func labelZonesToSet(value string) (sets.Set[string], error) {
	zones := sets.New[string]()
	for _, zone := range strings.Split(value, labelMultiZoneDelimiter) {
		zone = strings.TrimSpace(zone)
		if zone == "" {
			return nil, errors.New("empty zone")
		}
		zones.Insert(zone)
	}
	return zones, nil
}

// PreFilterExtensions returns nil: other pods do not matter.
func (pl *VolumeZone) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter rejects a node with a zone or region label whose value is not among
// a volume's. A node with none of the topology labels fits any volume; a
// beta label on the volume is also matched against the node's GA label.
func (pl *VolumeZone) Filter(_ context.Context, cycleState *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if len(pod.Spec.Volumes) == 0 {
		return nil
	}
	var topologies []pvTopology
	switch s, err := framework.ReadState[*stateData](cycleState, preFilterStateKey); {
	case err == nil:
		topologies = s.podPVTopologies
	case errors.Is(err, framework.ErrNotFound):
		// Without PreFilter, look the volumes up here.
		var status *framework.Status
		if topologies, status = pl.podPVTopologies(pod); !status.IsSuccess() {
			return status
		}
	default:
		return framework.AsStatus(err)
	}
	node := nodeInfo.Node()
	hasAnyNodeConstraint := false
	for _, key := range topologyLabels {
		if _, ok := node.Labels[key]; ok {
			hasAnyNodeConstraint = true
			break
		}
	}
	if !hasAnyNodeConstraint {
		return nil
	}
	for _, t := range topologies {
		v, ok := node.Labels[t.key]
		if !ok {
			v, ok = node.Labels[translateToGALabel(t.key)]
		}
		if !ok || !t.values.Has(v) {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, errReasonsConflict...)
		}
	}
	return nil
}

func translateToGALabel(label string) string {
	switch label {
	case corev1.LabelFailureDomainBetaRegion:
		return corev1.LabelTopologyRegion
	case corev1.LabelFailureDomainBetaZone:
		return corev1.LabelTopologyZone
	}
	return label
}

// persistentVolumeClaimClass is component-helpers' GetPersistentVolumeClaimClass
// (whose package needs client-go): the beta annotation wins over the field.
func persistentVolumeClaimClass(claim *corev1.PersistentVolumeClaim) string {
	if class, ok := claim.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return class
	}
	if claim.Spec.StorageClassName != nil {
		return *claim.Spec.StorageClassName
	}
	return ""
}
