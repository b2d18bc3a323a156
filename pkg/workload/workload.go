// Package workload expands workloads (Jobs, JobSets, LeaderWorkerSets,
// Kubeflow, Ray and Volcano jobs, TrainJobs, ...) into the gangs of pods
// their controllers would create, with the names, labels, annotations and
// hostnames those give (docs/design.md#gangs), one table of kinds (kinds.go)
// driving it. Two entry points run the whole sequence: WhatIf for manifests
// given with -f, Live for a workload read from the cluster, merged with the
// pods its controllers already made. It is pure: objects in, gangs out.
package workload

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// Options say how manifests are expanded.
type Options struct {
	// Namespace is where objects that name none live.
	Namespace string
	// MinMember, when above 0, is the minimum of a gang without a PodGroup.
	MinMember int32
	// Runtimes looks TrainJobs' runtimes up in the cluster when they are
	// not given with the manifests; nil offline.
	Runtimes TrainingRuntimes
}

// WhatIf is the whole sequence for manifests that need not exist yet:
// decode (Decode), expand (FromManifestsWith), then Create on snap.
func WhatIf(data []byte, source string, snap *schedule.Snapshot, opts Options) (*gang.Gang, error) {
	objs, err := Decode(data, source)
	if err != nil {
		return nil, err
	}
	g, err := FromManifestsWith(objs, opts.Namespace, opts.MinMember, opts.Runtimes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return Create(g, snap)
}

// Create gives an expanded gang's members what creating them would: the
// Priority admission plugin's priorities from the snapshot's
// PriorityClasses (a native PodGroup's too), then the workloads' pod webhooks, in the API server's
// order; the members are then put in queue order. It changes g's members
// and returns g.
func Create(g *gang.Gang, snap *schedule.Snapshot) (*gang.Gang, error) {
	if err := ApplyPriorities(g.Members, snap.PriorityClasses); err != nil {
		return nil, err
	}
	if err := gang.ResolvePodGroupPriority(g, snap.PriorityClasses); err != nil {
		return nil, err
	}
	ApplyWebhooks(g.Members)
	g.SortMembers()
	return g, nil
}

// Live is the whole sequence for a workload read from the cluster (obj, at
// the version its Kind reads): expanded exactly as -f expands its manifest,
// created (Create), then the pods its controllers already made, from snap,
// put in the place of the members they stand for: by name or identity
// (MergeLive, then DropFinished for members that finished), or by the
// workload's selector for kinds whose pods have random names (Kind.Selected,
// MergeLiveSelected).
func Live(obj *unstructured.Unstructured, snap *schedule.Snapshot, opts Options) (*gang.Gang, error) {
	g, err := FromManifestsWith([]*unstructured.Unstructured{obj}, opts.Namespace, 0, opts.Runtimes)
	if err != nil {
		return nil, err
	}
	if g, err = Create(g, snap); err != nil {
		return nil, err
	}
	if k := kindOf(obj.GroupVersionKind()); k != nil && k.Selected {
		raw, _, _ := unstructured.NestedMap(obj.Object, "spec", "selector")
		var ls metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
			return nil, fmt.Errorf("%s %s: spec.selector: %w", k.Kind, obj.GetName(), err)
		}
		sel, err := metav1.LabelSelectorAsSelector(&ls)
		if err != nil {
			return nil, fmt.Errorf("%s %s: spec.selector: %w", k.Kind, obj.GetName(), err)
		}
		return MergeLiveSelected(g, snap.Pods, sel), nil
	}
	return DropFinished(MergeLive(g, snap.Pods), snap.Pods, snap.SucceededPods), nil
}
