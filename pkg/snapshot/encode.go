package snapshot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// ToList turns a snapshot into one v1 List with apiVersion and kind set on
// every item, the format LoadFiles reads back and any cli-runtime printer
// prints. Items come kind by kind (cluster-scoped kinds first) and in the
// snapshot's order within a kind, so the same snapshot always writes the same
// bytes.
func ToList(s *schedule.Snapshot) (*unstructured.UnstructuredList, error) {
	list := newList()
	err := eachItem(s, func(u *unstructured.Unstructured) error {
		list.Items = append(list.Items, *u)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return list, nil
}

func newList() *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	list.SetResourceVersion("")
	return list
}

// eachItem calls f with every item of ToList's List, in its order, each
// converted only when f is called: a writer that streams keeps one at a
// time.
func eachItem(s *schedule.Snapshot, f func(*unstructured.Unstructured) error) error {
	return eachObject(s, func(gvk schema.GroupVersionKind, obj runtime.Object) error {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			return f(u.DeepCopy())
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return fmt.Errorf("encoding %s: %w", gvk.Kind, err)
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetGroupVersionKind(gvk)
		return f(u)
	})
}

// eachObject calls add with every object of a snapshot file, in the order
// of ToList's List: kind by kind (cluster-scoped kinds first), in the
// snapshot's order within a kind. PodGroups and Objects are the snapshot's
// own *unstructured.Unstructured, not to be changed.
func eachObject(s *schedule.Snapshot, add func(schema.GroupVersionKind, runtime.Object) error) error {
	if err := eachClusterObject(s, add); err != nil {
		return err
	}
	return eachNamespacedObject(s, add)
}

// WriteJSON writes the snapshot as ToList's List, byte for byte as
// cli-runtime's JSON printer writes it, but one item at a time, so that the
// output never exists twice in memory. Managed fields are left out unless
// showManagedFields is set, as kubectl's printers leave them out.
func WriteJSON(w io.Writer, s *schedule.Snapshot, showManagedFields bool) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString("{\n    \"apiVersion\": \"v1\",\n    \"items\": [")
	n := 0
	err := eachItem(s, func(u *unstructured.Unstructured) error {
		if !showManagedFields {
			u.SetManagedFields(nil)
		}
		data, err := json.MarshalIndent(u.Object, "        ", "    ")
		if err != nil {
			return err
		}
		if n > 0 {
			bw.WriteByte(',')
		}
		n++
		bw.WriteString("\n        ")
		_, err = bw.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	if n > 0 {
		bw.WriteString("\n    ")
	}
	bw.WriteString("],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n")
	return bw.Flush()
}

// WriteYAML is WriteJSON for cli-runtime's YAML printer.
func WriteYAML(w io.Writer, s *schedule.Snapshot, showManagedFields bool) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString("apiVersion: v1\nitems:")
	n := 0
	err := eachItem(s, func(u *unstructured.Unstructured) error {
		if !showManagedFields {
			u.SetManagedFields(nil)
		}
		// Marshalled where the List nests it (an item of the top-level
		// "items"), so that long strings fold at the same columns.
		data, err := yaml.Marshal(map[string]any{"items": []any{u.Object}})
		if err != nil {
			return err
		}
		if n == 0 {
			bw.WriteByte('\n')
		}
		n++
		bw.Write(bytes.TrimPrefix(data, []byte("items:\n")))
		return nil
	})
	if err != nil {
		return err
	}
	if n == 0 {
		bw.WriteString(" []\n")
	}
	bw.WriteString("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	return bw.Flush()
}

// eachSystemObject calls add with the snapshot's Objects that are
// namespaced (or cluster-scoped), in the snapshot's order. An object of a
// kind nobody registered (a hand-built snapshot) counts as namespaced when
// it has a namespace.
func eachSystemObject(s *schedule.Snapshot, namespaced bool, add func(schema.GroupVersionKind, runtime.Object) error) error {
	for _, o := range s.Objects {
		gvk := o.GroupVersionKind()
		k, ok := schedule.ObjectKindOf(gvk)
		if !ok {
			k.Namespaced = o.GetNamespace() != ""
		}
		if k.Namespaced != namespaced {
			continue
		}
		if err := add(gvk, o); err != nil {
			return err
		}
	}
	return nil
}

// eachClusterObject is eachObject's cluster-scoped kinds.
func eachClusterObject(s *schedule.Snapshot, add func(schema.GroupVersionKind, runtime.Object) error) error {
	for _, o := range s.Namespaces {
		if err := add(namespaceGVK, o); err != nil {
			return err
		}
	}
	for _, o := range s.PriorityClasses {
		if err := add(priorityClassGVK, o); err != nil {
			return err
		}
	}
	for _, o := range s.Nodes {
		if err := add(nodeGVK, o); err != nil {
			return err
		}
	}
	for _, o := range s.StorageClasses {
		if err := add(storageClassGVK, o); err != nil {
			return err
		}
	}
	for _, o := range s.PersistentVolumes {
		if err := add(pvGVK, o); err != nil {
			return err
		}
	}
	for _, o := range s.DeviceClasses {
		if err := add(deviceClassGVK, o); err != nil {
			return err
		}
	}
	for _, o := range s.ResourceSlices {
		if err := add(resourceSliceGVK, o); err != nil {
			return err
		}
	}
	for _, o := range s.DeviceTaintRules {
		if err := add(taintRuleGVK, o); err != nil {
			return err
		}
	}
	// The gang systems' cluster-scoped objects (a scheduler's queues).
	if err := eachSystemObject(s, false, add); err != nil {
		return err
	}
	if s.VolcanoConfigMap != nil {
		// Volcano's scheduler's ConfigMap, or the stand-in that says it
		// could not be read (docs/design.md#volcanos-configuration).
		if err := add(configMapGVK, s.VolcanoConfigMap); err != nil {
			return err
		}
	}
	return nil
}

// eachNamespacedObject is eachObject's namespaced kinds, pods last.
func eachNamespacedObject(s *schedule.Snapshot, add func(schema.GroupVersionKind, runtime.Object) error) error {
	for _, o := range s.ResourceQuotas {
		if err := add(resourceQuotaGVK, o); err != nil {
			return err
		}
	}
	for _, o := range s.PodDisruptionBudgets {
		if err := add(pdbGVK, o); err != nil {
			return err
		}
	}
	for _, o := range s.PersistentVolumeClaims {
		if err := add(pvcGVK, o); err != nil {
			return err
		}
	}
	for _, o := range s.ResourceClaimTemplates {
		if err := add(claimTemplateGVK, o); err != nil {
			return err
		}
	}
	for _, o := range s.ResourceClaims {
		if err := add(claimGVK, o); err != nil {
			return err
		}
	}
	for _, o := range s.Services {
		if err := add(serviceGVK, o); err != nil {
			return err
		}
	}
	for _, o := range s.ReplicationControllers {
		if err := add(rcGVK, o); err != nil {
			return err
		}
	}
	for _, o := range s.ReplicaSets {
		if err := add(replicaSetGVK, o); err != nil {
			return err
		}
	}
	for _, o := range s.StatefulSets {
		if err := add(statefulSetGVK, o); err != nil {
			return err
		}
	}
	if err := eachSystemObject(s, true, add); err != nil {
		return err
	}
	for _, o := range s.PodGroups {
		if err := add(o.GroupVersionKind(), o); err != nil {
			return err
		}
	}
	for _, o := range s.Pods {
		if err := add(podGVK, o); err != nil {
			return err
		}
	}
	for _, o := range s.SucceededPods {
		if err := add(podGVK, o); err != nil {
			return err
		}
	}
	return nil
}
