package admit

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// UngateClient is what Ungate needs from the API server; package
// pkg/gang/kube implements it with client-go.
type UngateClient interface {
	// GetPod reads a pod consistently (never from a watch cache at
	// resourceVersion 0).
	GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	// UpdatePod writes the pod; its resourceVersion is the precondition, so
	// a pod that changed since it was read gives a conflict.
	UpdatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
}

// UngateReport says what Ungate did.
type UngateReport struct {
	Gate string
	// Ungated are the members the gate was removed from.
	Ungated []string
	// Untouched are the members that did not have the gate.
	Untouched []string
	// Changed are the members that changed since the snapshot (or were
	// deleted): once one is found, nothing more is written.
	Changed []string
}

// Ungate removes the scheduling gate from every member of an admitted gang
// that has it, each update carrying the resourceVersion the decision was
// made on. Every member is checked before anything is written, so a gang
// that moved is left alone; a member that changes between the check and its
// update stops the rest (docs/design.md#commands).
func Ungate(ctx context.Context, c UngateClient, g *gang.Gang, gate string) (*UngateReport, error) {
	r := &UngateReport{Gate: gate}
	hasGate := func(sg corev1.PodSchedulingGate) bool { return sg.Name == gate }
	var todo []*corev1.Pod
	for _, pod := range g.Members {
		key := pod.Namespace + "/" + pod.Name
		current, err := c.GetPod(ctx, pod.Namespace, pod.Name)
		if err != nil {
			if apierrors.IsNotFound(err) {
				r.Changed = append(r.Changed, key+" (deleted)")
				continue
			}
			return nil, fmt.Errorf("reading pod %s: %w", key, err)
		}
		if current.UID != pod.UID || current.ResourceVersion != pod.ResourceVersion {
			r.Changed = append(r.Changed, key)
			continue
		}
		if !slices.ContainsFunc(current.Spec.SchedulingGates, hasGate) {
			r.Untouched = append(r.Untouched, key)
			continue
		}
		todo = append(todo, current)
	}
	if len(r.Changed) > 0 {
		return r, nil
	}
	for _, pod := range todo {
		key := pod.Namespace + "/" + pod.Name
		pod.Spec.SchedulingGates = slices.DeleteFunc(pod.Spec.SchedulingGates, hasGate)
		if _, err := c.UpdatePod(ctx, pod); err != nil {
			if apierrors.IsConflict(err) {
				r.Changed = append(r.Changed, key)
				return r, nil
			}
			return r, fmt.Errorf("removing gate %q from %s: %w", gate, key, err)
		}
		r.Ungated = append(r.Ungated, key)
	}
	return r, nil
}
