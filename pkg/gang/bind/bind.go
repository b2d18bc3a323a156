// Package bind binds every member of a gang to its planned node, or none,
// as far as the API allows: the protocol of docs/design.md#binding-a-gang.
// Gang runs its steps in order; check.go holds those before the commit
// (permissions, the re-check of the plan, the server's dry run), reread.go
// the fresh read of the cluster the re-check runs on, and commit.go the
// commit and what follows it (verify, events, --on-partial). It talks to
// the API server only through Client, which pkg/gang/kube implements.
package bind

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
	// VerdictOvercommitted: the members are bound, but a target node now
	// holds more than it has: others bound pods there since the re-check
	// (exit 5).
	VerdictOvercommitted Verdict = "Overcommitted"
	// VerdictUnverified: Bindings were written, but what the server holds
	// could not be read back, so the outcome is not known for every member
	// (exit 5).
	VerdictUnverified Verdict = "Unverified"
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
	// OutcomeUnknown: its Binding was sent and neither its answer nor a
	// read of the pod says whether it is bound.
	OutcomeUnknown Outcome = "Unknown"
)

// MemberResult is what bind did with one member.
type MemberResult struct {
	Pod    *corev1.Pod
	Node   string
	Result Outcome
	// Message says why a member was not bound or what else happened.
	Message string
	// Unverified: the server answered its Binding with success (a Binding
	// answered 201 is bound), but the pod could not be read back.
	Unverified bool
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
	// Overcommitted lists the target nodes that hold more than they have
	// after the commit, each with the figures and the pods that arrived
	// since the snapshot (VerdictOvercommitted).
	Overcommitted []string
	// unreadNodes are the target nodes whose pods could not be read after
	// the commit.
	unreadNodes []string
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
	// ReasonSchedulingGated: members carry scheduling gates, which keep
	// every scheduler, and the API server's Bindings, off them.
	ReasonSchedulingGated Reason = "SchedulingGated"
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
	opts = opts.withDefaults()
	p, err := gang.Place(ctx, snap, g, opts.Place)
	if err != nil {
		return nil, err
	}
	p = p.Bindable()
	b := &binder{c: c, g: g, p: p, opts: opts, r: newReport(g, p)}
	if !b.bindable() {
		return b.r, nil
	}
	// The numbered steps of docs/design.md#binding-a-gang.
	// 1. Permissions, before anything is read again or written.
	if err := checkPermissions(ctx, c, g, opts); err != nil {
		return nil, err
	}
	// 2. The fresh read and the re-check of the plan, and 3. the server's
	// dry run alongside; either may stop the run with nothing written, as
	// may --dry-run.
	stop, err := b.check(ctx, snap)
	if err != nil {
		return nil, err
	}
	if stop {
		return b.r, nil
	}
	// From here the requests must not die with the user's context: an
	// interrupt stops new Bindings, the ones in flight finish.
	commitCtx := context.WithoutCancel(ctx)
	// 4. Commit.
	sent, answers := b.commit(commitCtx)
	// 5. Verify: every member is read back, and so is what the target
	// nodes hold now.
	bound, onTargets := b.verify(commitCtx, sent, answers)
	// 6. Events, once the Bindings are done: written alongside them, they
	// slow the Bindings more than they cost on their own.
	b.recordScheduled(bound)
	// 5, continued: the verdict, and --on-partial when fewer than the
	// minimum are bound.
	b.conclude(commitCtx, bound)
	// 5, continued: a node others filled past its allocatable since the
	// re-check (kube-scheduler, a tool without the lock) is reported, and
	// with --on-partial=delete this run's members are taken back.
	b.checkNodes(commitCtx, snap, bound, onTargets)
	b.unverified()
	// 6, continued: the native PodGroup's condition, and the events flushed.
	b.setPodGroupScheduled(commitCtx, len(bound))
	b.r.LostEvents = c.Flush(commitCtx)
	return b.r, nil
}

// binder is one run of the protocol: what it binds, how, and the report it
// fills step by step.
type binder struct {
	c    Client
	g    *gang.Gang
	p    *gang.Placement
	opts Options
	r    *Report
	// fresh is the snapshot with the target nodes as step 2 read them.
	fresh *schedule.Snapshot
}

func (o Options) withDefaults() Options {
	if o.Parallelism <= 0 {
		o.Parallelism = DefaultParallelism
	}
	if o.BulkReads == 0 {
		o.BulkReads = DefaultBulkReads
	}
	return o
}

// newReport starts the report of binding p: nothing bound yet, and the
// members bound before (and those that succeeded) counted.
func newReport(g *gang.Gang, p *gang.Placement) *Report {
	r := &Report{Gang: g, Placement: p, MinMember: g.MinMember, Verdict: VerdictNotBound}
	for _, a := range p.Assignments {
		r.Members = append(r.Members, MemberResult{Pod: a.Pod, Node: a.Node, Result: OutcomeNotBound})
	}
	for _, pod := range p.Running {
		r.Members = append(r.Members, MemberResult{Pod: pod, Node: pod.Spec.NodeName, Result: OutcomeAlreadyBound})
	}
	r.BoundMembers = int32(len(p.Running) + p.Succeeded)
	return r
}

// bindable reports whether the plan is one bind may write; if not, the
// report says why (or that every member is bound already).
func (b *binder) bindable() bool {
	p, r := b.p, b.r
	if p.Verdict != gang.VerdictPlaced {
		r.Reason, r.Message = ReasonUnschedulable, p.Message
		return false
	}
	if len(p.Assignments) == 0 {
		r.Verdict, r.Message = VerdictBound, "every member is bound already"
		return false
	}
	if gated := gang.GateNames(b.g.Pending()); len(gated) > 0 {
		// The plan places gated members as if released; the API server
		// refuses a Binding of a pod with gates.
		r.Reason = ReasonSchedulingGated
		r.Message = fmt.Sprintf("not bound: %d member(s) carry scheduling gates (%s); release them first (kubectl gang admit --ungate %s)",
			b.g.GatedCount(), strings.Join(gated, ", "), gated[0])
		return false
	}
	if !p.Verified() {
		r.Reason = ReasonNotEvaluated
		r.Message = "not bound: the plan depends on what was not evaluated: " + strings.Join(p.AllNotEvaluated(), "; ")
		return false
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
		return false
	}
	return true
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

// BoundByAnnotation marks the pods bind bound. A Binding's annotations are
// merged into its pod by the API server (BindingREST.setPodNodeAndMetadata),
// so the pod carries it from the moment it is bound; bind reads it to tell
// the pods it bound from another scheduler's of the same schedulerName
// (docs/design.md#binding-a-gang).
const BoundByAnnotation = "kubectl-gang.github.io/bound-by"

// BoundByValue is BoundByAnnotation's value.
const BoundByValue = "kubectl-gang"

// binding is what kube-scheduler's DefaultBinder sends: the pod's UID is a
// precondition, so a pod recreated under the same name is never bound. It
// also marks the pod as bound by this tool (BoundByAnnotation).
func binding(a gang.Assignment) *corev1.Binding {
	return &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: a.Pod.Namespace, Name: a.Pod.Name, UID: a.Pod.UID,
			Annotations: map[string]string{BoundByAnnotation: BoundByValue}},
		Target: corev1.ObjectReference{Kind: "Node", Name: a.Node},
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
