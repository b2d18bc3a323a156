package bind

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// verify decides, from the server's copy of the pod (or the error reading
// it), what became of a Binding whose answer was err.
func verify(pod *corev1.Pod, getErr error, a gang.Assignment, err error) (Outcome, string) {
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

// readBackFunc returns how to read a planned member back after the commit:
// a GET each for a small gang, else one consistent LIST of the namespace's
// pods read once (a GET each if that LIST fails).
func readBackFunc(ctx context.Context, c Client, p *gang.Placement, opts Options) func(*corev1.Pod) (*corev1.Pod, error) {
	get := func(pod *corev1.Pod) (*corev1.Pod, error) { return c.GetPod(ctx, pod.Namespace, pod.Name) }
	if !bulk(opts, len(p.Assignments)) {
		return get
	}
	namespace := p.Assignments[0].Pod.Namespace
	for _, a := range p.Assignments {
		if a.Pod.Namespace != namespace {
			namespace = metav1.NamespaceAll
		}
	}
	pods, err := c.ListPods(ctx, namespace)
	if err != nil {
		return get
	}
	byKey := indexPods(pods)
	return func(pod *corev1.Pod) (*corev1.Pod, error) {
		if got, ok := byKey[podKey(pod)]; ok {
			return got, nil
		}
		// Not listed: deleted, or terminated since.
		return get(pod)
	}
}

// bulk reports whether n reads are better served by one LIST.
func bulk(opts Options, n int) bool {
	return opts.BulkReads < 0 || n > opts.BulkReads
}

func indexPods(pods []*corev1.Pod) map[string]*corev1.Pod {
	out := make(map[string]*corev1.Pod, len(pods))
	for _, pod := range pods {
		out[podKey(pod)] = pod
	}
	return out
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
