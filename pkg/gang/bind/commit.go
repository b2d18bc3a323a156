package bind

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// verify decides, from the server's copy of the pod, what became of a
// Binding whose answer was err.
func verify(ctx context.Context, c Client, a gang.Assignment, err error) (Outcome, string) {
	pod, getErr := c.GetPod(ctx, a.Pod.Namespace, a.Pod.Name)
	switch {
	case apierrors.IsNotFound(getErr):
		return OutcomeNotBound, "the pod was deleted"
	case getErr != nil:
		return OutcomeNotBound, fmt.Sprintf("could not read the pod back: %v (the Binding answered: %v)", getErr, err)
	case pod.UID != a.Pod.UID:
		return OutcomeNotBound, "the pod was recreated (new UID)"
	case pod.Spec.NodeName == a.Node:
		if err != nil {
			// A reply lost on the way, or a 409 for a retry of a Binding
			// that had succeeded: the server holds it.
			return OutcomeBound, fmt.Sprintf("bound (the Binding answered: %v)", err)
		}
		return OutcomeBound, ""
	case pod.Spec.NodeName != "":
		return OutcomeNotBound, fmt.Sprintf("bound to %s by someone else", pod.Spec.NodeName)
	case err != nil:
		return OutcomeNotBound, err.Error()
	default:
		return OutcomeNotBound, "the Binding succeeded but the pod reads back unbound"
	}
}

// undo deletes the pods this run bound, each with its UID as a
// precondition, and returns how many are gone.
func undo(ctx context.Context, c Client, r *Report, bound []int, workers int) int {
	var mu sync.Mutex
	deleted := 0
	forEach(workers, len(bound), nil, func(k int) {
		m := &r.Members[bound[k]]
		err := c.DeletePod(ctx, m.Pod.Namespace, m.Pod.Name, m.Pod.UID)
		if err != nil && !apierrors.IsNotFound(err) {
			m.Message = fmt.Sprintf("bound; deleting it failed: %v", err)
			return
		}
		m.Result, m.Message = OutcomeDeleted, "bound, then deleted so its controller recreates it (--on-partial=delete)"
		mu.Lock()
		deleted++
		mu.Unlock()
	})
	return deleted
}
