// Package bind binds every member of a gang to its planned node, or none,
// as far as the API allows: the protocol of docs/design.md#binding-a-gang.
// Gang runs it; check.go holds the steps before the commit (permissions, the
// fresh read and the re-check of the plan), commit.go what settles each
// Binding after it. It talks to the API server only through Client, which
// pkg/gang/kube implements.
package bind

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Client is what the bind protocol needs from the API server; package
// pkg/gang/kube implements it with client-go. Reads must be consistent (quorum)
// reads, never served from a watch cache at resourceVersion 0.
type Client interface {
	// Allowed asks the server with a SelfSubjectAccessReview whether the
	// user may do what attr says.
	Allowed(ctx context.Context, attr authorizationv1.ResourceAttributes) (bool, error)
	// GetPod and GetNode read one object.
	GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	GetNode(ctx context.Context, name string) (*corev1.Node, error)
	// PodsOnNode lists the pods bound to a node that are not terminated.
	PodsOnNode(ctx context.Context, node string) ([]*corev1.Pod, error)
	// ListPods lists the pods in namespace ("" for every namespace) that
	// are not terminated, and ListNodes every node: one round trip (a
	// page or a few) where a GET per object would take one each.
	ListPods(ctx context.Context, namespace string) ([]*corev1.Pod, error)
	ListNodes(ctx context.Context) ([]*corev1.Node, error)
	// PodVersions lists, in every namespace, the pods that are not
	// terminated, and NodeVersions every node, as their versions only
	// (metadata: a fraction of the objects' bytes).
	PodVersions(ctx context.Context) ([]Version, error)
	NodeVersions(ctx context.Context) ([]Version, error)
	// Bind creates the Binding (pods/binding); dryRun sends dryRun=All.
	// Transient failures (429, 5xx, a lost connection) are retried inside.
	Bind(ctx context.Context, binding *corev1.Binding, dryRun bool) error
	// DeletePod deletes a pod with its UID as a precondition.
	DeletePod(ctx context.Context, namespace, name string, uid types.UID) error
	// Scheduled records the event kube-scheduler records after a binding.
	Scheduled(pod *corev1.Pod, node string)
	// SetScheduled sets the native PodGroup's PodGroupInitiallyScheduled
	// condition, as kube-scheduler does when a gang is scheduled.
	SetScheduled(ctx context.Context, podGroup *unstructured.Unstructured, message string) error
	// Flush waits until the recorded events are written (or given up) and
	// reports how many could not be written.
	Flush(ctx context.Context) (lost int)
}

// DryRun says how far bind goes.
type DryRun string

// The dry-run strategies, as kubectl's --dry-run names them.
const (
	// DryRunNone commits the Bindings.
	DryRunNone DryRun = "none"
	// DryRunClient plans and re-checks the cluster, writing nothing.
	DryRunClient DryRun = "client"
	// DryRunServer also sends every Binding with dryRun=All.
	DryRunServer DryRun = "server"
)

// OnPartial says what to do when fewer than the minimum end up bound.
type OnPartial string

// The --on-partial policies.
const (
	// OnPartialReport leaves the bound members and reports them.
	OnPartialReport OnPartial = "report"
	// OnPartialDelete deletes the members this run bound (UID
	// precondition), so that their controller recreates them unbound.
	OnPartialDelete OnPartial = "delete"
)

// Options tune Gang.
type Options struct {
	Place     gang.PlaceOptions
	DryRun    DryRun
	OnPartial OnPartial
	// Parallelism bounds the requests in flight; 0 means DefaultParallelism.
	Parallelism int
	// BulkReads is how many members and target nodes a gang has at most for
	// the re-read and the read-back to GET each object; beyond it, one
	// consistent LIST of the pods (and one of the nodes) serves them all.
	// 0 means DefaultBulkReads; -1 always lists.
	BulkReads int
	// Interrupted is closed when the user interrupts (SIGINT). Before the
	// commit it stops the run with nothing written; during the commit no
	// new Binding is sent, the ones in flight finish, and the members are
	// verified and reported.
	Interrupted <-chan struct{}
	// Progress, if set, is told how many Bindings of the commit are done.
	Progress func(done, total int)
}

// Verdict is the outcome of a bind.
type Verdict string

// Bind verdicts and their exit codes.
const (
	// VerdictBound: every planned member is bound (exit 0).
	VerdictBound Verdict = "Bound"
	// VerdictDryRun: every check passed and nothing was written (exit 0).
	VerdictDryRun Verdict = "DryRun"
	// VerdictNotBound: nothing was bound, because the gang does not fit or the
	// cluster moved since the snapshot (exit 3).
	VerdictNotBound Verdict = "NotBound"
	// VerdictPartiallyBound: some members were bound and some not (exit 4).
	VerdictPartiallyBound Verdict = "PartiallyBound"
)

// Outcome is what happened to one member.
type Outcome string

// The member outcomes.
const (
	// OutcomeBound: this run bound the member.
	OutcomeBound Outcome = "Bound"
	// OutcomeWouldBind: a dry run found nothing against binding it.
	OutcomeWouldBind Outcome = "WouldBind"
	// OutcomeNotBound: the member is not bound; the message says why.
	OutcomeNotBound Outcome = "NotBound"
	// OutcomeDeleted: this run bound the member, then deleted it
	// (--on-partial=delete) so its controller recreates it unbound.
	OutcomeDeleted Outcome = "Deleted"
	// OutcomeAlreadyBound: the member was bound before this run.
	OutcomeAlreadyBound Outcome = "AlreadyBound"
)

// MemberResult is what bind did with one member.
type MemberResult struct {
	Pod    *corev1.Pod
	Node   string
	Result Outcome
	// Message says why a member was not bound or what else happened.
	Message string
}

// Report is the outcome of Gang.
type Report struct {
	Gang      *gang.Gang
	Placement *gang.Placement
	Verdict   Verdict
	// Reason is the step that stopped a NotBound or PartiallyBound run:
	// Unschedulable, Changed (the cluster moved), Rejected (the server's
	// dry run refused a Binding), Interrupted, or BindFailed.
	Reason  Reason
	Message string
	// Members are the planned members, in queue order, then the members
	// that were bound before.
	Members []MemberResult
	// BoundMembers counts the members bound at the end, those bound before
	// included; MinMember is the gang's minimum.
	BoundMembers int32
	MinMember    int32
	// LostEvents is how many events could not be written.
	LostEvents int
}

// Reason is the step that stopped a bind short of VerdictBound.
type Reason string

// The bind reasons.
const (
	// ReasonUnschedulable: the gang does not fit the snapshot.
	ReasonUnschedulable Reason = "Unschedulable"
	// ReasonChanged: the cluster moved since the snapshot.
	ReasonChanged Reason = "Changed"
	// ReasonRejected: the server's dry run refused a Binding.
	ReasonRejected Reason = "Rejected"
	// ReasonInterrupted: the user interrupted the commit.
	ReasonInterrupted Reason = "Interrupted"
	// ReasonBindFailed: Bindings failed and fewer than the minimum are bound.
	ReasonBindFailed Reason = "BindFailed"
	// ReasonNotEvaluated: the plan depends on something the pipeline did
	// not evaluate, so it is not bound.
	ReasonNotEvaluated Reason = "NotEvaluated"
	// ReasonResourceClaims: members use ResourceClaims (their own, or the
	// claim kube-scheduler makes for extended resources DRA provides), whose
	// allocation and reservation bind does not write.
	ReasonResourceClaims Reason = "ResourceClaims"
)

// DefaultParallelism is how many requests bind has in flight: enough to
// keep an API server busy; API Priority and Fairness queues what it cannot
// take at once, shares it fairly with other clients, and refuses the rest
// (429), which bind retries.
const DefaultParallelism = 64

// DefaultBulkReads is Options.BulkReads' default.
const DefaultBulkReads = 32

// serverDryRun sends every planned Binding with dryRun=All and returns the
// refusals.
func serverDryRun(ctx context.Context, c Client, p *gang.Placement, workers int) []string {
	rejected := make([]string, len(p.Assignments))
	forEach(workers, len(p.Assignments), nil, func(i int) {
		a := p.Assignments[i]
		if err := c.Bind(ctx, binding(a), true); err != nil {
			rejected[i] = fmt.Sprintf("%s to %s: %v", podKey(a.Pod), a.Node, err)
		}
	})
	return slices.DeleteFunc(rejected, func(s string) bool { return s == "" })
}

// ErrForbidden wraps a missing permission found before anything is written.
var ErrForbidden = errors.New("forbidden")

// Gang places the gang on snap and binds every planned member, all or
// nothing as far as the API allows (docs/design.md#binding-a-gang): it checks the
// user's permissions, re-reads every member and target node and re-checks
// the plan on them, has the server dry-run every Binding, commits them,
// reads every member back, and, when fewer than the minimum ended up bound,
// reports them or deletes them (opts.OnPartial). An error means the run
// could not decide (an API failure before the commit, or a permission
// missing); a report is returned whenever anything was written.
func Gang(ctx context.Context, snap *schedule.Snapshot, g *gang.Gang, c Client, opts Options) (*Report, error) {
	if opts.Parallelism <= 0 {
		opts.Parallelism = DefaultParallelism
	}
	if opts.BulkReads == 0 {
		opts.BulkReads = DefaultBulkReads
	}
	p, err := gang.Place(ctx, snap, g, opts.Place)
	if err != nil {
		return nil, err
	}
	r := &Report{Gang: g, Placement: p, MinMember: g.MinMember, Verdict: VerdictNotBound}
	for _, a := range p.Assignments {
		r.Members = append(r.Members, MemberResult{Pod: a.Pod, Node: a.Node, Result: OutcomeNotBound})
	}
	for _, pod := range p.Running {
		r.Members = append(r.Members, MemberResult{Pod: pod, Node: pod.Spec.NodeName, Result: OutcomeAlreadyBound})
	}
	r.BoundMembers = int32(len(p.Running) + p.Succeeded)
	if p.Verdict != gang.VerdictPlaced {
		r.Reason, r.Message = ReasonUnschedulable, p.Message
		return r, nil
	}
	if len(p.Assignments) == 0 {
		r.Verdict, r.Message = VerdictBound, "every member is bound already"
		return r, nil
	}
	if !p.Verified() {
		r.Reason = ReasonNotEvaluated
		r.Message = "not bound: the plan depends on what was not evaluated: " + strings.Join(p.AllNotEvaluated(), "; ")
		return r, nil
	}
	// kube-scheduler writes a claim's allocation and reservation (PreBind)
	// before it binds the pod, and the kubelet runs no pod whose claims do
	// not list it; bind writes Bindings only (docs/design.md#binding-a-gang).
	// A member whose extended resources DRA provides on its node has such a
	// claim too (kube-scheduler creates it in PreBind).
	var withClaims []string
	for _, a := range p.Assignments {
		if len(a.Pod.Spec.ResourceClaims) > 0 || len(a.Claims) > 0 {
			withClaims = append(withClaims, podKey(a.Pod))
		}
	}
	if len(withClaims) > 0 {
		r.Reason = ReasonResourceClaims
		r.Message = fmt.Sprintf("not bound: %d member(s) use ResourceClaims (%s), whose allocation bind does not write; kube-scheduler allocates and binds them",
			len(withClaims), strings.Join(withClaims[:min(3, len(withClaims))], ", "))
		return r, nil
	}
	if err := checkPermissions(ctx, c, g, opts); err != nil {
		return nil, err
	}
	// The server's dry run of every Binding (admission, the UID
	// precondition) writes nothing, so it runs while the cluster is read
	// again and the plan re-checked; its answers count only once those
	// found nothing changed.
	var rejected []string
	var dry sync.WaitGroup
	if opts.DryRun != DryRunClient {
		dry.Go(func() { rejected = serverDryRun(ctx, c, p, opts.Parallelism) })
	}
	fresh, changed, same, err := reread(ctx, c, snap, p, opts)
	if err == nil && len(changed) == 0 && !same {
		// Something on the target nodes changed since the snapshot: the
		// plan is run again on what they hold now. (Unchanged, the
		// placement ran these very cycles.)
		changed, err = recheck(ctx, fresh, p, opts.Place)
	}
	dry.Wait()
	if err != nil {
		return nil, err
	}
	if len(changed) > 0 {
		r.Reason = ReasonChanged
		r.Message = "the cluster changed since the snapshot, nothing was bound: " + strings.Join(changed, "; ")
		return r, nil
	}
	if interrupted(opts.Interrupted) {
		r.Reason, r.Message = ReasonInterrupted, "interrupted before binding: nothing was written"
		return r, nil
	}
	if opts.DryRun == DryRunClient {
		return dryRunDone(r, "plan re-checked against the cluster; nothing was written (--dry-run=client)"), nil
	}
	if len(rejected) > 0 {
		r.Reason = ReasonRejected
		r.Message = "the server's dry run refused a Binding, nothing was bound: " + strings.Join(rejected, "; ")
		return r, nil
	}
	if opts.DryRun == DryRunServer {
		return dryRunDone(r, "every Binding passed the server's dry run; nothing was written (--dry-run=server)"), nil
	}
	if interrupted(opts.Interrupted) {
		r.Reason, r.Message = ReasonInterrupted, "interrupted before binding: nothing was written"
		return r, nil
	}

	// Commit. The requests must not die with the user's context: an
	// interrupt stops new ones, the ones in flight finish. The events come
	// after the Bindings: written alongside them, they slow the Bindings
	// more than they cost on their own (docs/design.md#binding-a-gang).
	commitCtx := context.WithoutCancel(ctx)
	sent := make([]bool, len(p.Assignments))
	failures := make([]error, len(p.Assignments))
	var mu sync.Mutex
	done := 0
	forEach(opts.Parallelism, len(p.Assignments), opts.Interrupted, func(i int) {
		sent[i] = true
		a := p.Assignments[i]
		failures[i] = c.Bind(commitCtx, binding(a), false)
		if opts.Progress != nil {
			mu.Lock()
			done++
			opts.Progress(done, len(p.Assignments))
			mu.Unlock()
		}
	})

	// Verify: every member is read back; an answer that was lost or an
	// error is decided by what the server holds.
	readBack := readBackFunc(commitCtx, c, p, opts)
	var boundNow []int
	forEach(opts.Parallelism, len(p.Assignments), nil, func(i int) {
		m := &r.Members[i]
		if !sent[i] {
			m.Message = "not sent: interrupted"
			return
		}
		pod, err := readBack(p.Assignments[i].Pod)
		m.Result, m.Message = verify(pod, err, p.Assignments[i], failures[i])
	})
	// Every member the server holds bound gets kube-scheduler's event,
	// those whose answer was lost included.
	for i := range p.Assignments {
		if r.Members[i].Result == OutcomeBound {
			boundNow = append(boundNow, i)
			c.Scheduled(p.Assignments[i].Pod, p.Assignments[i].Node)
		}
	}
	r.BoundMembers += int32(len(boundNow))

	switch {
	case len(boundNow) == len(p.Assignments):
		r.Verdict, r.Reason = VerdictBound, ""
		r.Message = fmt.Sprintf("bound %d members; %d of minimum %d are bound", len(boundNow), r.BoundMembers, r.MinMember)
	case r.BoundMembers >= r.MinMember:
		r.Verdict, r.Reason = VerdictPartiallyBound, ReasonBindFailed
		r.Message = fmt.Sprintf("bound %d of %d planned members; the gang has its minimum (%d of %d bound), the rest were left unbound",
			len(boundNow), len(p.Assignments), r.BoundMembers, r.MinMember)
	case len(boundNow) == 0:
		r.Verdict, r.Reason = VerdictNotBound, ReasonBindFailed
		r.Message = "no Binding succeeded, nothing was bound"
		if interrupted(opts.Interrupted) {
			r.Reason = ReasonInterrupted
		}
	default:
		r.Verdict, r.Reason = VerdictPartiallyBound, ReasonBindFailed
		if interrupted(opts.Interrupted) {
			r.Reason = ReasonInterrupted
		}
		r.Message = fmt.Sprintf("only %d of minimum %d members are bound", r.BoundMembers, r.MinMember)
		if opts.OnPartial == OnPartialDelete {
			deleted := undo(commitCtx, c, r, boundNow, opts.Parallelism)
			r.BoundMembers -= int32(deleted)
			r.Message += fmt.Sprintf("; deleted the %d pods this run bound so their controllers recreate them", deleted)
		} else {
			r.Message += "; the bound members were left bound (--on-partial=report)"
		}
	}
	if r.BoundMembers >= r.MinMember && len(boundNow) > 0 && g.Source == gang.SourceNative && g.PodGroup != nil {
		msg := fmt.Sprintf("%d of minimum %d members bound by kubectl-gang", r.BoundMembers, r.MinMember)
		if err := c.SetScheduled(commitCtx, g.PodGroup, msg); err != nil {
			r.Message += fmt.Sprintf("; could not set the PodGroup's condition: %v", err)
		}
	}
	r.LostEvents = c.Flush(commitCtx)
	return r, nil
}

func dryRunDone(r *Report, msg string) *Report {
	r.Verdict, r.Reason, r.Message = VerdictDryRun, "", msg
	for i := range r.Members {
		if r.Members[i].Result == OutcomeNotBound {
			r.Members[i].Result = OutcomeWouldBind
		}
	}
	return r
}

func interrupted(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func podKey(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }

// binding is what kube-scheduler's DefaultBinder sends: the pod's UID is a
// precondition, so a pod recreated under the same name is never bound.
func binding(a gang.Assignment) *corev1.Binding {
	return &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: a.Pod.Namespace, Name: a.Pod.Name, UID: a.Pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: a.Node},
	}
}

// forEach runs f(0..n-1) on at most workers goroutines (the pipeline's
// parallelizer), always to the end: a cancelled context shows in f's own
// requests. Once stop is closed, f is no longer called.
func forEach(workers, n int, stop <-chan struct{}, f func(int)) {
	framework.NewParallelizer(workers).Until(context.Background(), n, func(i int) {
		if !interrupted(stop) {
			f(i)
		}
	})
}
