package admit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

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
	// Bound are the released members their scheduler bound while admit
	// waited (WaitBound); NotBoundYet those it had not when the wait ended,
	// after Waited.
	Bound, NotBoundYet []string
	Waited             time.Duration
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
		uid := pod.UID
		pod.Spec.SchedulingGates = slices.DeleteFunc(pod.Spec.SchedulingGates, hasGate)
		if _, err := c.UpdatePod(ctx, pod); err != nil {
			if apierrors.IsConflict(err) {
				r.Changed = append(r.Changed, key)
				return r, nil
			}
			// The answer may be lost with the write done (a dropped
			// connection, a garbled body): the pod says which, as bind
			// settles a Binding whose answer was lost.
			now, rerr := c.GetPod(ctx, pod.Namespace, pod.Name)
			switch {
			case rerr == nil && now.UID == uid && !slices.ContainsFunc(now.Spec.SchedulingGates, hasGate):
				r.Ungated = append(r.Ungated, key)
				continue
			case rerr == nil:
				err = fmt.Errorf("removing gate %q from %s: %w (it still carried the gate when read back; an update lost in flight may yet apply)", gate, key, err)
			default:
				err = fmt.Errorf("removing gate %q from %s: %w (whether it was removed is not known: reading it back: %v)", gate, key, err, rerr)
			}
			return r, r.partly(err)
		}
		r.Ungated = append(r.Ungated, key)
	}
	return r, nil
}

// partly adds to err, a failure in the middle of the release, which members
// the gate was removed from before it: an error line that said only what
// failed would hide a gang partly released.
func (r *UngateReport) partly(err error) error {
	if len(r.Ungated) == 0 {
		return err
	}
	return fmt.Errorf("%w; the gate was removed already from %d member(s): %s (run the same command again to release the rest)",
		err, len(r.Ungated), strings.Join(r.Ungated, ", "))
}

// WaitBound waits, at most timeout, for the scheduler to bind the members
// Ungate released, reading them every poll, and records in r which are
// bound and which not yet. admit --ungate holds the bind lock while it
// waits (docs/design.md#commands), so that the next run of bind or admit
// decides on a cluster where the released members hold their room, rather
// than on one where they still wait for it. A member deleted meanwhile, or
// still held by another gate, counts as neither.
func WaitBound(ctx context.Context, c UngateClient, g *gang.Gang, r *UngateReport, poll, timeout time.Duration) error {
	start := time.Now()
	waiting := map[string]bool{}
	for _, key := range r.Ungated {
		waiting[key] = true
	}
	defer func() { r.Waited = time.Since(start) }()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		for _, pod := range g.Members {
			key := pod.Namespace + "/" + pod.Name
			if !waiting[key] {
				continue
			}
			current, err := c.GetPod(ctx, pod.Namespace, pod.Name)
			switch {
			case apierrors.IsNotFound(err):
				delete(waiting, key)
			case err != nil:
				return fmt.Errorf("reading pod %s: %w", key, err)
			case current.Spec.NodeName != "":
				delete(waiting, key)
				r.Bound = append(r.Bound, key)
			case len(current.Spec.SchedulingGates) > 0:
				// Still held by another gate: no scheduler takes it yet.
				delete(waiting, key)
			}
		}
		if len(waiting) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
		case <-deadline.C:
		case <-time.After(poll):
			continue
		}
		for _, key := range r.Ungated {
			if waiting[key] {
				r.NotBoundYet = append(r.NotBoundYet, key)
			}
		}
		return nil
	}
}
