package testutil

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AnnBindCompleted is the annotation the PV controller puts on a claim it
// has bound; kube-scheduler only treats a claim carrying it as bound.
const AnnBindCompleted = "pv.kubernetes.io/bind-completed"

// PVC adds a volume named after the claim that mounts the claim.
func (w *PodWrapper) PVC(claimName string) *PodWrapper {
	return w.Volume(corev1.Volume{Name: claimName, VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName},
	}})
}

// EphemeralVolume adds a generic ephemeral volume; its claim is named
// <pod>-<volume>.
func (w *PodWrapper) EphemeralVolume(volumeName string) *PodWrapper {
	return w.Volume(corev1.Volume{Name: volumeName, VolumeSource: corev1.VolumeSource{
		Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{}},
	}})
}

// Volume adds a volume.
func (w *PodWrapper) Volume(v corev1.Volume) *PodWrapper {
	w.Spec.Volumes = append(w.Spec.Volumes, v)
	return w
}

// PVCWrapper builds a PersistentVolumeClaim.
type PVCWrapper struct{ corev1.PersistentVolumeClaim }

// MakePVC starts a pending claim.
func MakePVC(namespace, name string) *PVCWrapper {
	w := &PVCWrapper{}
	w.Namespace, w.Name = namespace, name
	w.Status.Phase = corev1.ClaimPending
	return w
}

// StorageClass sets spec.storageClassName.
func (w *PVCWrapper) StorageClass(name string) *PVCWrapper {
	w.Spec.StorageClassName = &name
	return w
}

// AccessModes sets the access modes.
func (w *PVCWrapper) AccessModes(modes ...corev1.PersistentVolumeAccessMode) *PVCWrapper {
	w.Spec.AccessModes = modes
	return w
}

// BoundTo binds the claim to a volume as the PV controller does: volume
// name, bind-completed annotation, phase Bound.
func (w *PVCWrapper) BoundTo(pvName string) *PVCWrapper {
	w.Spec.VolumeName = pvName
	w.Status.Phase = corev1.ClaimBound
	return w.Annotation(AnnBindCompleted, "yes")
}

// VolumeName sets spec.volumeName alone: a claim pre-bound by its author.
func (w *PVCWrapper) VolumeName(pvName string) *PVCWrapper {
	w.Spec.VolumeName = pvName
	return w
}

// Phase sets the phase.
func (w *PVCWrapper) Phase(p corev1.PersistentVolumeClaimPhase) *PVCWrapper {
	w.Status.Phase = p
	return w
}

// Annotation adds an annotation.
func (w *PVCWrapper) Annotation(k, v string) *PVCWrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[k] = v
	return w
}

// OwnedBy makes the pod the claim's controller, as for a generic ephemeral volume.
func (w *PVCWrapper) OwnedBy(pod *corev1.Pod) *PVCWrapper {
	controller := true
	w.OwnerReferences = append(w.OwnerReferences, metav1.OwnerReference{
		APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: &controller,
	})
	return w
}

// Deleting marks the claim as being deleted.
func (w *PVCWrapper) Deleting() *PVCWrapper {
	now := metav1.Now()
	w.DeletionTimestamp = &now
	return w
}

// Obj returns the claim.
func (w *PVCWrapper) Obj() *corev1.PersistentVolumeClaim { return &w.PersistentVolumeClaim }

// PVWrapper builds a PersistentVolume.
type PVWrapper struct{ corev1.PersistentVolume }

// MakePV starts an available volume.
func MakePV(name string) *PVWrapper {
	w := &PVWrapper{}
	w.Name = name
	w.Status.Phase = corev1.VolumeAvailable
	return w
}

// Label adds a label.
func (w *PVWrapper) Label(k, v string) *PVWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[k] = v
	return w
}

// NodeAffinityIn adds a required node affinity term "key In values".
func (w *PVWrapper) NodeAffinityIn(key string, values ...string) *PVWrapper {
	if w.Spec.NodeAffinity == nil {
		w.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{}}
	}
	w.Spec.NodeAffinity.Required.NodeSelectorTerms = append(w.Spec.NodeAffinity.Required.NodeSelectorTerms, corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}},
	})
	return w
}

// StorageClass sets spec.storageClassName.
func (w *PVWrapper) StorageClass(name string) *PVWrapper {
	w.Spec.StorageClassName = name
	return w
}

// CSI makes the volume a CSI volume of a driver.
func (w *PVWrapper) CSI(driver, handle string) *PVWrapper {
	w.Spec.CSI = &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: handle}
	return w
}

// Obj returns the volume.
func (w *PVWrapper) Obj() *corev1.PersistentVolume { return &w.PersistentVolume }

// MakeStorageClass returns a StorageClass with a binding mode; an empty mode
// leaves volumeBindingMode unset.
func MakeStorageClass(name string, mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "csi.example.com"}
	if mode != "" {
		sc.VolumeBindingMode = &mode
	}
	return sc
}
