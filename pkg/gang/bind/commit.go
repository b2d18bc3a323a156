package bind

import (
	"context"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// commit sends every planned Binding (step 4 of
// docs/design.md#binding-a-gang), opts.Parallelism in flight, until the
// user interrupts; it returns which were sent and what each answered.
func (b *binder) commit(ctx context.Context) (sent []bool, answers []error) {
	n := len(b.p.Assignments)
	sent, answers = make([]bool, n), make([]error, n)
	var mu sync.Mutex
	done := 0
	forEach(b.opts.Parallelism, n, b.opts.Interrupted, func(i int) {
		sent[i] = true
		answers[i] = b.c.Bind(ctx, binding(b.p.Assignments[i]), false)
		if b.opts.Progress != nil {
			mu.Lock()
			done++
			b.opts.Progress(done, n)
			mu.Unlock()
		}
	})
	return sent, answers
}

// verify reads every member back (step 5) and settles each Binding by
// what the server holds: an answer that was lost, or an error, does not
// decide it; a Binding answered with success is bound even when the pod
// cannot be read back (then it is unverified). It returns the planned
// members bound now, by index, and the pods on their target nodes as read
// after the commit (targetPods), for checkNodes.
func (b *binder) verify(ctx context.Context, sent []bool, answers []error) ([]int, targetPods) {
	readBack, onTargets := readBackFunc(ctx, b.c, b.p, b.opts)
	forEach(b.opts.Parallelism, len(b.p.Assignments), nil, func(i int) {
		m := &b.r.Members[i]
		if !sent[i] {
			m.Message = "not sent: interrupted"
			return
		}
		pod, err := readBack(b.p.Assignments[i].Pod)
		m.Result, m.Message, m.Unverified = settle(pod, err, b.p.Assignments[i], answers[i])
	})
	var bound []int
	for i := range b.p.Assignments {
		if b.r.Members[i].Result == OutcomeBound {
			bound = append(bound, i)
		}
	}
	b.r.BoundMembers += int32(len(bound))
	return bound, onTargets(bound)
}

// recordScheduled records kube-scheduler's event for every member the
// server holds bound (step 6), those whose answer was lost included.
func (b *binder) recordScheduled(bound []int) {
	for _, i := range bound {
		b.c.Scheduled(b.p.Assignments[i].Pod, b.p.Assignments[i].Node)
	}
}

// conclude gives the verdict; with fewer than the minimum bound, it
// leaves the members this run bound or deletes them (opts.OnPartial).
func (b *binder) conclude(ctx context.Context, bound []int) {
	r, planned := b.r, len(b.p.Assignments)
	switch {
	case len(bound) == planned:
		r.Verdict, r.Reason = VerdictBound, ""
		r.Message = fmt.Sprintf("bound %d members; %d of minimum %d are bound", len(bound), r.BoundMembers, r.MinMember)
	case r.BoundMembers >= r.MinMember:
		r.Verdict, r.Reason = VerdictPartiallyBound, ReasonBindFailed
		r.Message = fmt.Sprintf("bound %d of %d planned members; the gang has its minimum (%d of %d bound), the rest were left unbound",
			len(bound), planned, r.BoundMembers, r.MinMember)
	case len(bound) == 0:
		r.Verdict, r.Reason = VerdictNotBound, ReasonBindFailed
		r.Message = "no Binding succeeded, nothing was bound"
		if interrupted(b.opts.Interrupted) {
			r.Reason = ReasonInterrupted
		}
	default:
		r.Verdict, r.Reason = VerdictPartiallyBound, ReasonBindFailed
		if interrupted(b.opts.Interrupted) {
			r.Reason = ReasonInterrupted
		}
		r.Message = fmt.Sprintf("only %d of minimum %d members are bound", r.BoundMembers, r.MinMember)
		if b.opts.OnPartial == OnPartialDelete {
			deleted := undo(ctx, b.c, r, bound, b.opts.Parallelism)
			r.BoundMembers -= int32(deleted)
			r.Message += "; " + deletedWhat(deleted)
			if left := len(bound) - deleted; left > 0 {
				r.Message += fmt.Sprintf("; %d stay bound (no controller owns them, or deleting failed: see each)", left)
			}
		} else {
			r.Message += "; the bound members were left bound (--on-partial=report)"
		}
	}
}

// setPodGroupScheduled sets a native PodGroup's PodGroupInitiallyScheduled
// condition once this run has bound members and the minimum is bound, as
// kube-scheduler does.
func (b *binder) setPodGroupScheduled(ctx context.Context, boundNow int) {
	r, g := b.r, b.g
	if r.BoundMembers < r.MinMember || boundNow == 0 || g.Source != gang.SourceNative || g.PodGroup == nil {
		return
	}
	msg := fmt.Sprintf("%d of minimum %d members bound by kubectl-gang", r.BoundMembers, r.MinMember)
	if err := b.c.SetScheduled(ctx, g.PodGroup, msg); err != nil {
		r.Message += fmt.Sprintf("; could not set the PodGroup's condition: %v", err)
	}
}

// settle decides, from the server's copy of the pod (or the error reading
// it), what became of a Binding whose answer was err; unverified is a
// Binding the server accepted whose pod could not be read back.
func settle(pod *corev1.Pod, getErr error, a gang.Assignment, err error) (_ Outcome, _ string, unverified bool) {
	switch {
	case apierrors.IsNotFound(getErr):
		return OutcomeNotBound, "the pod was deleted", false
	case getErr != nil && err == nil:
		// The server answered 201: the pod is bound, whatever the read.
		return OutcomeBound, fmt.Sprintf("bound (the Binding succeeded), but reading it back failed: %v", getErr), true
	case getErr != nil:
		return OutcomeUnknown, fmt.Sprintf("the Binding answered %v and the pod could not be read back (%v): it may or may not be bound", err, getErr), false
	case pod.UID != a.Pod.UID:
		return OutcomeNotBound, "the pod was recreated (new UID)", false
	case pod.Spec.NodeName == a.Node:
		if err != nil {
			// A reply lost on the way, or a 409 for a retry of a Binding
			// that had succeeded: the server holds it.
			return OutcomeBound, fmt.Sprintf("bound (the Binding answered: %v)", err), false
		}
		return OutcomeBound, "", false
	case pod.Spec.NodeName != "":
		return OutcomeNotBound, fmt.Sprintf("bound to %s by someone else", pod.Spec.NodeName), false
	case err != nil:
		return OutcomeNotBound, err.Error(), false
	default:
		return OutcomeNotBound, "the Binding succeeded but the pod reads back unbound", false
	}
}

// targetPods are the pods on each target node of the bound members as
// read after the commit, or the error reading a node's.
type targetPods map[string]podsRead

type podsRead struct {
	pods []*corev1.Pod
	err  error
}

// readBackFunc returns how to read a planned member back after the commit,
// and how to read what the target nodes of the bound ones hold then: for a
// small gang a GET each and the pods of each target node; else one
// consistent LIST of every namespace's pods serves both (a GET each, and
// the pods of each node, if that LIST fails).
func readBackFunc(ctx context.Context, c Client, p *gang.Placement, opts Options) (func(*corev1.Pod) (*corev1.Pod, error), func(bound []int) targetPods) {
	get := func(pod *corev1.Pod) (*corev1.Pod, error) { return c.GetPod(ctx, pod.Namespace, pod.Name) }
	perNode := func(bound []int) targetPods {
		nodes := boundNodes(p, bound)
		reads := make([]podsRead, len(nodes))
		forEach(opts.Parallelism, len(nodes), nil, func(i int) {
			reads[i].pods, reads[i].err = c.PodsOnNode(ctx, nodes[i])
		})
		out := targetPods{}
		for i, n := range nodes {
			out[n] = reads[i]
		}
		return out
	}
	if !bulk(opts, len(p.Assignments)) {
		return get, perNode
	}
	// Every namespace: the target nodes hold other namespaces' pods too.
	pods, err := c.ListPods(ctx, metav1.NamespaceAll)
	if err != nil {
		return get, perNode
	}
	byKey := indexPods(pods)
	return func(pod *corev1.Pod) (*corev1.Pod, error) {
			if got, ok := byKey[podKey(pod)]; ok {
				return got, nil
			}
			// Not listed: deleted, or terminated since.
			return get(pod)
		}, func(bound []int) targetPods {
			out := targetPods{}
			for _, n := range boundNodes(p, bound) {
				out[n] = podsRead{}
			}
			for _, pod := range pods {
				if r, ok := out[pod.Spec.NodeName]; ok {
					r.pods = append(r.pods, pod)
					out[pod.Spec.NodeName] = r
				}
			}
			return out
		}
}

// boundNodes are the target nodes of the bound members, in name order.
func boundNodes(p *gang.Placement, bound []int) []string {
	var nodes []string
	for _, i := range bound {
		if n := p.Assignments[i].Node; !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
	}
	slices.Sort(nodes)
	return nodes
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
// precondition, and returns how many are gone. A pod no controller owns is
// left bound and named: nothing would recreate it.
func undo(ctx context.Context, c Client, r *Report, bound []int, workers int) int {
	var mu sync.Mutex
	deleted := 0
	forEach(workers, len(bound), nil, func(k int) {
		m := &r.Members[bound[k]]
		if metav1.GetControllerOf(m.Pod) == nil {
			m.Message = "bound, and left bound: no controller owns it, so deleting it would lose it (--on-partial=delete deletes only pods a controller recreates)"
			return
		}
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

// deletedWhat says how many of the pods this run bound --on-partial=delete
// deleted, in words that read right for none and one.
func deletedWhat(n int) string {
	switch n {
	case 0:
		return "deleted none of the pods this run bound"
	case 1:
		return "deleted the 1 pod this run bound so its controller recreates it"
	}
	return fmt.Sprintf("deleted the %d pods this run bound so their controllers recreate them", n)
}
