package snapshot

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// ToList turns a snapshot into one v1 List with apiVersion and kind set on
// every item, the format LoadFiles reads back and any cli-runtime printer
// prints. Items come kind by kind (cluster-scoped kinds first) and in the
// snapshot's order within a kind, so the same snapshot always writes the same
// bytes.
func ToList(s *schedule.Snapshot) (*unstructured.UnstructuredList, error) {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	list.SetResourceVersion("")
	add := func(gvk schema.GroupVersionKind, obj runtime.Object) error {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return fmt.Errorf("encoding %s: %w", gvk.Kind, err)
		}
		u := unstructured.Unstructured{Object: m}
		u.SetGroupVersionKind(gvk)
		list.Items = append(list.Items, u)
		return nil
	}
	for _, o := range s.Namespaces {
		if err := add(namespaceGVK, o); err != nil {
			return nil, err
		}
	}
	for _, o := range s.PriorityClasses {
		if err := add(priorityClassGVK, o); err != nil {
			return nil, err
		}
	}
	for _, o := range s.Nodes {
		if err := add(nodeGVK, o); err != nil {
			return nil, err
		}
	}
	for _, o := range s.StorageClasses {
		if err := add(storageClassGVK, o); err != nil {
			return nil, err
		}
	}
	for _, o := range s.PersistentVolumes {
		if err := add(pvGVK, o); err != nil {
			return nil, err
		}
	}
	for _, o := range s.Queues {
		list.Items = append(list.Items, *o.DeepCopy())
	}
	for _, o := range s.ResourceQuotas {
		if err := add(resourceQuotaGVK, o); err != nil {
			return nil, err
		}
	}
	for _, o := range s.PodDisruptionBudgets {
		if err := add(pdbGVK, o); err != nil {
			return nil, err
		}
	}
	for _, o := range s.PersistentVolumeClaims {
		if err := add(pvcGVK, o); err != nil {
			return nil, err
		}
	}
	for _, o := range s.Services {
		if err := add(serviceGVK, o); err != nil {
			return nil, err
		}
	}
	for _, o := range s.ReplicationControllers {
		if err := add(rcGVK, o); err != nil {
			return nil, err
		}
	}
	for _, o := range s.ReplicaSets {
		if err := add(replicaSetGVK, o); err != nil {
			return nil, err
		}
	}
	for _, o := range s.StatefulSets {
		if err := add(statefulSetGVK, o); err != nil {
			return nil, err
		}
	}
	for _, o := range s.PodGroups {
		list.Items = append(list.Items, *o.DeepCopy())
	}
	for _, o := range s.Pods {
		if err := add(podGVK, o); err != nil {
			return nil, err
		}
	}
	for _, o := range s.SucceededPods {
		if err := add(podGVK, o); err != nil {
			return nil, err
		}
	}
	return list, nil
}
