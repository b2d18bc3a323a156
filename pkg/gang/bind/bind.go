package bind

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	// Parallelism bounds the requests in flight; 0 means 16.
	Parallelism int
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
)

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
		opts.Parallelism = 16
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
	if err := checkPermissions(ctx, c, g, opts); err != nil {
		return nil, err
	}
	fresh, changed, err := reread(ctx, c, snap, p, opts.Parallelism)
	if err != nil {
		return nil, err
	}
	if len(changed) == 0 {
		changed, err = recheck(ctx, fresh, p, opts.Place)
		if err != nil {
			return nil, err
		}
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

	// The server checks every Binding (admission, UID precondition) without
	// writing it.
	rejected := make([]string, len(p.Assignments))
	forEach(opts.Parallelism, len(p.Assignments), nil, func(i int) {
		a := p.Assignments[i]
		if err := c.Bind(ctx, binding(a), true); err != nil {
			rejected[i] = fmt.Sprintf("%s to %s: %v", podKey(a.Pod), a.Node, err)
		}
	})
	if rejected = slices.DeleteFunc(rejected, func(s string) bool { return s == "" }); len(rejected) > 0 {
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
	// interrupt stops new ones, the ones in flight finish.
	commitCtx := context.WithoutCancel(ctx)
	sent := make([]bool, len(p.Assignments))
	failures := make([]error, len(p.Assignments))
	var mu sync.Mutex
	done := 0
	forEach(opts.Parallelism, len(p.Assignments), opts.Interrupted, func(i int) {
		sent[i] = true
		failures[i] = c.Bind(commitCtx, binding(p.Assignments[i]), false)
		if opts.Progress != nil {
			mu.Lock()
			done++
			opts.Progress(done, len(p.Assignments))
			mu.Unlock()
		}
	})

	// Verify: every member is read back; an answer that was lost or an
	// error is decided by what the server holds.
	var boundNow []int
	forEach(opts.Parallelism, len(p.Assignments), nil, func(i int) {
		m := &r.Members[i]
		if !sent[i] {
			m.Message = "not sent: interrupted"
			return
		}
		m.Result, m.Message = verify(commitCtx, c, p.Assignments[i], failures[i])
	})
	for i := range p.Assignments {
		if r.Members[i].Result == OutcomeBound {
			boundNow = append(boundNow, i)
		}
	}
	r.BoundMembers += int32(len(boundNow))
	for _, i := range boundNow {
		c.Scheduled(p.Assignments[i].Pod, p.Assignments[i].Node)
	}

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

// checkPermissions asks the server whether the user may do everything the
// run may need, before anything is written.
func checkPermissions(ctx context.Context, c Client, g *gang.Gang, opts Options) error {
	need := []authorizationv1.ResourceAttributes{
		{Namespace: g.Namespace, Verb: "create", Resource: "pods", Subresource: "binding"},
		{Namespace: g.Namespace, Verb: "get", Resource: "pods"},
		{Namespace: g.Namespace, Verb: "create", Group: "events.k8s.io", Resource: "events"},
	}
	if opts.OnPartial == OnPartialDelete {
		need = append(need, authorizationv1.ResourceAttributes{Namespace: g.Namespace, Verb: "delete", Resource: "pods"})
	}
	if g.Source == gang.SourceNative && g.PodGroup != nil {
		need = append(need, authorizationv1.ResourceAttributes{Namespace: g.Namespace, Verb: "update",
			Group: "scheduling.k8s.io", Resource: "podgroups", Subresource: "status", Name: g.Name})
	}
	var missing []string
	for _, attr := range need {
		ok, err := c.Allowed(ctx, attr)
		if err != nil {
			return fmt.Errorf("checking permissions: %w", err)
		}
		if !ok {
			missing = append(missing, describeAttr(attr))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: nothing was bound: you may not %s", ErrForbidden, strings.Join(missing, ", "))
	}
	return nil
}

func describeAttr(a authorizationv1.ResourceAttributes) string {
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	if a.Group != "" {
		res += "." + a.Group
	}
	return fmt.Sprintf("%s %s in namespace %s", a.Verb, res, a.Namespace)
}

// reread reads every member and every target node again, and the pods on
// those nodes, and returns the snapshot with them in place of what was read
// before, or what changed in a way that stops the bind.
func reread(ctx context.Context, c Client, snap *schedule.Snapshot, p *gang.Placement, workers int) (*schedule.Snapshot, []string, error) {
	type memberRead struct {
		pod *corev1.Pod
		err error
	}
	members := make([]memberRead, len(p.Assignments)+len(p.Running))
	all := make([]*corev1.Pod, 0, len(members))
	for _, a := range p.Assignments {
		all = append(all, a.Pod)
	}
	all = append(all, p.Running...)
	forEach(workers, len(all), nil, func(i int) {
		members[i].pod, members[i].err = c.GetPod(ctx, all[i].Namespace, all[i].Name)
	})
	var changed []string
	for i, m := range members {
		want := all[i]
		key := podKey(want)
		switch {
		case apierrors.IsNotFound(m.err):
			changed = append(changed, key+" was deleted")
		case m.err != nil:
			return nil, nil, fmt.Errorf("reading pod %s: %w", key, m.err)
		case m.pod.UID != want.UID:
			changed = append(changed, key+" was recreated (new UID)")
		case m.pod.DeletionTimestamp != nil:
			changed = append(changed, key+" is being deleted")
		case i >= len(p.Assignments):
			if m.pod.Spec.NodeName != want.Spec.NodeName {
				changed = append(changed, fmt.Sprintf("%s moved from %s to %q", key, want.Spec.NodeName, m.pod.Spec.NodeName))
			}
		case m.pod.Spec.NodeName != "":
			changed = append(changed, fmt.Sprintf("%s is bound to %s already", key, m.pod.Spec.NodeName))
		case len(m.pod.Spec.SchedulingGates) > 0:
			changed = append(changed, fmt.Sprintf("%s has scheduling gates (%s); release them first (kubectl gang admit --ungate)",
				key, strings.Join(gang.GateNames([]*corev1.Pod{m.pod}), ", ")))
		}
	}
	if len(changed) > 0 {
		return nil, changed, nil
	}

	var nodes []string
	for _, a := range p.Assignments {
		if !slices.Contains(nodes, a.Node) {
			nodes = append(nodes, a.Node)
		}
	}
	sort.Strings(nodes)
	type nodeRead struct {
		node *corev1.Node
		pods []*corev1.Pod
		err  error
	}
	reads := make([]nodeRead, len(nodes))
	forEach(workers, len(nodes), nil, func(i int) {
		r := &reads[i]
		if r.node, r.err = c.GetNode(ctx, nodes[i]); r.err == nil {
			r.pods, r.err = c.PodsOnNode(ctx, nodes[i])
		}
	})
	fresh := *snap
	fresh.Nodes = slices.Clone(snap.Nodes)
	index := map[string]int{}
	for i, n := range fresh.Nodes {
		index[n.Name] = i
	}
	target := map[string]bool{}
	for i, r := range reads {
		switch {
		case apierrors.IsNotFound(r.err):
			changed = append(changed, "node "+nodes[i]+" was deleted")
			continue
		case r.err != nil:
			return nil, nil, fmt.Errorf("reading node %s: %w", nodes[i], r.err)
		}
		target[nodes[i]] = true
		if j, ok := index[nodes[i]]; ok {
			fresh.Nodes[j] = r.node
		} else {
			fresh.Nodes = append(fresh.Nodes, r.node)
		}
	}
	if len(changed) > 0 {
		return nil, changed, nil
	}
	// The pods on the target nodes as read now replace the snapshot's,
	// including any the snapshot had pending (a preemptor bound since).
	reread := map[types.NamespacedName]bool{}
	for _, r := range reads {
		for _, pod := range r.pods {
			reread[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}] = true
		}
	}
	fresh.Pods = nil
	for _, pod := range snap.Pods {
		if !target[pod.Spec.NodeName] && !reread[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}] {
			fresh.Pods = append(fresh.Pods, pod)
		}
	}
	for _, r := range reads {
		fresh.Pods = append(fresh.Pods, r.pods...)
	}
	return &fresh, nil, nil
}

// recheck runs every planned member through a full cycle confined to its
// planned node, in plan order, each reserved before the next, on the fresh
// snapshot: what the target nodes hold now must still take the plan.
func recheck(ctx context.Context, fresh *schedule.Snapshot, p *gang.Placement, opts gang.PlaceOptions) ([]string, error) {
	s, err := schedule.NewScheduler(fresh, schedule.Options{Profile: opts.Profile, Parallelism: opts.Parallelism})
	if err != nil {
		return nil, err
	}
	for _, a := range p.Assignments {
		s.Confine([]string{a.Node})
		res, err := s.Schedule(ctx, a.Pod)
		if err != nil {
			return nil, err
		}
		if res.Verdict != schedule.VerdictScheduled {
			msg := res.Message
			if st := res.Nodes; len(st) > 0 {
				for _, n := range st {
					if n.Name == a.Node && n.Status != nil {
						msg = n.Status.Message()
					}
				}
			}
			return []string{fmt.Sprintf("node %s no longer fits %s: %s", a.Node, podKey(a.Pod), msg)}, nil
		}
		if err := s.Reserve(a.Pod, a.Node); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

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
