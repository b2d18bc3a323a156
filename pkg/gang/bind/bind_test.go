package bind

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// bindCase is one run of Gang on a fake cluster: what the cluster does
// (setup, faults), what the report says and what was written.
type bindCase struct {
	name string
	// snap is cluster(3, 3, members(3)...) when nil: three nodes, and three
	// members that each need one, all of them needed.
	snap  *schedule.Snapshot
	opts  Options
	setup func(f *fakeClient)
	// gang, if set, changes the gang once resolved.
	gang func(g *gang.Gang)
	want outcome
	// writes are the Bindings the store took, the deletes, events and
	// PodGroup conditions.
	writes writes
	// sent are the real (not dry-run) Bindings sent; nil means those of
	// writes: bind sends each once, the Client retries transient failures.
	sent []string
	// calls, if set, are counts of Client calls to check (the others are
	// not checked).
	calls map[string]int
}

func (tc bindCase) run(t *testing.T) *fakeClient {
	t.Helper()
	snap := tc.snap
	if snap == nil {
		snap = cluster(3, 3, members(3)...)
	}
	f := newFakeClient(snap)
	if tc.setup != nil {
		tc.setup(f)
	}
	g, err := gang.ResolvePodGroup(snap, gang.Ref{Namespace: ns, Name: "trio"})
	if err != nil {
		t.Fatal(err)
	}
	if tc.gang != nil {
		tc.gang(g)
	}
	r, err := Gang(context.Background(), snap, g, f, tc.opts)
	if err != nil {
		t.Fatalf("Gang: %v", err)
	}
	if diff := cmp.Diff(tc.want, outcomeOf(r)); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tc.writes, f.writes(), testutil.SemanticOptions); diff != "" {
		t.Errorf("written (-want +got):\n%s", diff)
	}
	sent := tc.sent
	if sent == nil {
		sent = tc.writes.Bindings
	}
	if diff := cmp.Diff(sent, slices.Sorted(slices.Values(f.sent)), testutil.SemanticOptions); diff != "" {
		t.Errorf("Bindings sent (-want +got):\n%s", diff)
	}
	for method, want := range tc.calls {
		if got := f.calls[method]; got != want {
			t.Errorf("%d calls of %s, want %d", got, method, want)
		}
	}
	return f
}

// planned are the three members of the default gang on their nodes, each
// with result.
func planned(result Outcome) []memberOutcome {
	return []memberOutcome{m(0, "n-0", result, ""), m(1, "n-1", result, ""), m(2, "n-2", result, "")}
}

// boundAll is what binding the default gang writes.
var boundAll = writes{
	Bindings:   []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
	Events:     []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
	Conditions: []string{"ml/trio: 3 of minimum 3 members bound by kubectl-gang"},
}

var wantBound = outcome{Verdict: VerdictBound, Message: "bound 3 members; 3 of minimum 3 are bound",
	Members: planned(OutcomeBound), BoundMembers: 3, MinMember: 3}

// notBound is a report of the default gang that bound nothing.
func notBound(reason Reason, message string) outcome {
	return outcome{Verdict: VerdictNotBound, Reason: reason, Message: message, Members: planned(OutcomeNotBound), MinMember: 3}
}

// Each step can stop the run before the commit, with nothing written
// (docs/design.md#binding-a-gang): the dry runs stop after steps 2 and 3.
func TestGangStopsBeforeTheCommit(t *testing.T) {
	interrupted := make(chan struct{})
	close(interrupted)
	wouldBind := outcome{Verdict: VerdictDryRun, Members: planned(OutcomeWouldBind), MinMember: 3}
	clientDone, serverDone := wouldBind, wouldBind
	clientDone.Message = "plan re-checked against the cluster; nothing was written (--dry-run=client)"
	serverDone.Message = "every Binding passed the server's dry run; nothing was written (--dry-run=server)"
	refused := apierrors.NewForbidden(corev1.Resource("pods/binding"), "m-1", errors.New("denied by a webhook"))
	runningMembers := []*corev1.Pod{member(0).Node("n-0").Obj(), member(1).Node("n-1").Obj(), member(2).Node("n-2").Obj()}

	for _, tc := range []bindCase{{
		name:   "every member bound",
		want:   wantBound,
		writes: boundAll,
		calls:  map[string]int{"Bind": 6, "Flush": 1},
	}, {
		name:  "--dry-run=client sends no Binding",
		opts:  Options{DryRun: DryRunClient},
		want:  clientDone,
		calls: map[string]int{"Bind": 0, "GetPod": 3, "GetNode": 3, "PodsOnNode": 3},
	}, {
		name:  "--dry-run=server sends every Binding as a dry run only",
		opts:  Options{DryRun: DryRunServer},
		want:  serverDone,
		calls: map[string]int{"Bind": 3},
	}, {
		name:  "a dry-run refusal writes nothing",
		setup: func(f *fakeClient) { f.refuse["ml/m-1"] = refused },
		want: notBound(ReasonRejected, "the server's dry run refused a Binding, nothing was bound: "+
			`ml/m-1 to n-1: pods/binding "m-1" is forbidden: denied by a webhook`),
		calls: map[string]int{"Bind": 3, "Flush": 0},
	}, {
		name:  "--dry-run=server with a refusal is not a dry run that passed",
		opts:  Options{DryRun: DryRunServer},
		setup: func(f *fakeClient) { f.refuse["ml/m-1"] = refused },
		want: notBound(ReasonRejected, "the server's dry run refused a Binding, nothing was bound: "+
			`ml/m-1 to n-1: pods/binding "m-1" is forbidden: denied by a webhook`),
	}, {
		// The dry run refuses a Binding of a member recreated since, and
		// the re-read says why: the change counts, the refusal does not.
		name: "a refusal counts only once nothing changed",
		setup: func(f *fakeClient) {
			f.recreatePod("ml/m-1")
			f.refuse["ml/m-1"] = refused
		},
		want: notBound(ReasonChanged, "the cluster changed since the snapshot, nothing was bound: ml/m-1 was recreated (new UID)"),
	}, {
		name:  "interrupted before the commit",
		opts:  Options{Interrupted: interrupted},
		want:  notBound(ReasonInterrupted, "interrupted before binding: nothing was written"),
		calls: map[string]int{"Bind": 3},
	}, {
		name: "interrupted, --dry-run=client",
		opts: Options{DryRun: DryRunClient, Interrupted: interrupted},
		want: notBound(ReasonInterrupted, "interrupted before binding: nothing was written"),
	}, {
		name: "the gang does not fit the snapshot",
		snap: cluster(2, 3, members(3)...),
		want: outcome{Verdict: VerdictNotBound, Reason: ReasonUnschedulable,
			Message: "gang ml/trio cannot be placed: at most 2 of minimum 3 member(s) run or fit at once; " +
				"ml/m-2: 0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
			MinMember: 3},
		calls: map[string]int{"Allowed": 0, "GetPod": 0, "Bind": 0},
	}, {
		// kube-scheduler refuses the pod group (validatePodGroup): a
		// SchedulerError is never a yes, so nothing is bound.
		name: "members whose priority is not the PodGroup's",
		snap: cluster(3, 3, member(0).Priority("high", 1500).Obj(), member(1).Priority("high", 1500).Obj(), member(2).Priority("high", 1500).Obj()),
		want: outcome{Verdict: VerdictNotBound, Reason: ReasonUnschedulable,
			Message: "gang ml/trio is held back by PodGroupValidation (PriorityMismatch): kube-scheduler fails every cycle of the group with SchedulerError (at pod m-0): " +
				"all pods in a single pod group should have the same priority as the pod group's priority, got 1500 and 0; " +
				`to fix: set the PodGroup's spec.priorityClassName to "high" (priority 1500), the members' class: the field is immutable, so recreate the PodGroup; ` +
				"or give the members the PodGroup's class (none, priority 0)",
			MinMember: 3},
		calls: map[string]int{"Allowed": 0, "GetPod": 0, "Bind": 0},
	}, {
		name: "every member is bound already",
		snap: cluster(3, 3, runningMembers...),
		want: outcome{Verdict: VerdictBound, Message: "every member is bound already", MinMember: 3, BoundMembers: 3,
			Members: []memberOutcome{m(0, "n-0", OutcomeAlreadyBound, ""), m(1, "n-1", OutcomeAlreadyBound, ""), m(2, "n-2", OutcomeAlreadyBound, "")}},
		calls: map[string]int{"Allowed": 0, "GetPod": 0, "Bind": 0},
	}, {
		name: "the plan depends on what was not evaluated",
		gang: func(g *gang.Gang) {
			g.NotEvaluatedFields = append(g.NotEvaluatedFields, gang.NotEvaluatedField{Field: "spec.x", Value: "y", Reason: "not supported"})
		},
		want:  notBound(ReasonNotEvaluated, "not bound: the plan depends on what was not evaluated: spec.x (y): not supported"),
		calls: map[string]int{"Allowed": 0, "GetPod": 0, "Bind": 0},
	}, {
		name: "members use ResourceClaims",
		snap: withClaims(4),
		want: outcome{Verdict: VerdictNotBound, Reason: ReasonResourceClaims, MinMember: 4,
			Message: "not bound: 4 member(s) use ResourceClaims (ml/m-0, ml/m-1, ml/m-2), whose allocation bind does not write; kube-scheduler allocates and binds them",
			Members: append(planned(OutcomeNotBound), m(3, "n-3", OutcomeNotBound, ""))},
		calls: map[string]int{"Allowed": 0, "GetPod": 0, "Bind": 0},
	}, {
		// The API never moves a bound pod; a member that reads back bound
		// elsewhere is another object, and the plan counted it where it was.
		name:  "a member bound before reads back on another node",
		snap:  cluster(4, 4, append(members(3), member(3).Node("n-3").Obj())...),
		setup: func(f *fakeClient) { f.updatePod("ml/m-3", func(p *corev1.Pod) { p.Spec.NodeName = "n-0" }) },
		want: outcome{Verdict: VerdictNotBound, Reason: ReasonChanged, MinMember: 4, BoundMembers: 1,
			Message: `the cluster changed since the snapshot, nothing was bound: ml/m-3 moved from n-3 to "n-0"`,
			Members: append(planned(OutcomeNotBound), m(3, "n-3", OutcomeAlreadyBound, ""))},
	}} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t) })
	}
}

// withClaims is a cluster of n nodes with a device each, and n members
// that each claim one device with a ResourceClaim of its own.
func withClaims(n int) *schedule.Snapshot {
	var pods []*corev1.Pod
	for i := range n {
		pods = append(pods, member(i).Claim("gpu", fmt.Sprintf("gpu-%d", i)).Obj())
	}
	snap := cluster(n, int64(n), pods...)
	snap.DeviceClasses = append(snap.DeviceClasses, testutil.MakeDeviceClass("gpu", "gpu.example.com"))
	for i, node := range snap.Nodes {
		snap.ResourceSlices = append(snap.ResourceSlices, testutil.MakeNodeSlice(node.Name, "gpu.example.com", testutil.Devices("gpu", 1, nil)...))
		snap.ResourceClaims = append(snap.ResourceClaims, testutil.MakeClaim(ns, fmt.Sprintf("gpu-%d", i), testutil.ExactRequest("gpu", "gpu", 1)))
	}
	return snap
}

// readModes are the three ways the re-read reads the cluster: a GET per
// object (a small gang), the versions of every pod and node then a GET of
// what changed (a large one, forced with BulkReads -1), and, when more than
// 32 changed, one LIST of the pods and one of the nodes.
var readModes = []struct {
	name  string
	opts  Options
	setup func(f *fakeClient)
	// calls must have been made.
	calls []string
}{
	{"GET each", Options{}, nil, []string{"GetPod", "GetNode", "PodsOnNode"}},
	{"versions", Options{BulkReads: -1}, nil, []string{"PodVersions", "NodeVersions"}},
	{"lists", Options{BulkReads: -1}, func(f *fakeClient) {
		for i := range DefaultBulkReads + 1 {
			f.addPod(testutil.MakePod().Namespace("other").Name(fmt.Sprintf("new-%02d", i)).Obj())
		}
	}, []string{"PodVersions", "NodeVersions", "ListPods", "ListNodes"}},
}

// Any drift between the snapshot and the re-read stops the run with
// nothing written (step 2), whichever way the cluster is read.
func TestGangClusterChanged(t *testing.T) {
	changed := func(what string) outcome {
		return notBound(ReasonChanged, "the cluster changed since the snapshot, nothing was bound: "+what)
	}
	for _, tc := range []struct {
		name   string
		change func(f *fakeClient)
		want   outcome
	}{{
		name:   "member gone",
		change: func(f *fakeClient) { delete(f.pods, "ml/m-1") },
		want:   changed("ml/m-1 was deleted"),
	}, {
		name:   "member recreated with another UID",
		change: func(f *fakeClient) { f.recreatePod("ml/m-1") },
		want:   changed("ml/m-1 was recreated (new UID)"),
	}, {
		name:   "member bound elsewhere",
		change: func(f *fakeClient) { f.updatePod("ml/m-2", func(p *corev1.Pod) { p.Spec.NodeName = "n-0" }) },
		want:   changed("ml/m-2 is bound to n-0 already"),
	}, {
		name: "member gated",
		change: func(f *fakeClient) {
			f.updatePod("ml/m-0", func(p *corev1.Pod) {
				p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}, {Name: "example.com/quota"}}
			})
		},
		want: changed("ml/m-0 has scheduling gates (example.com/quota, example.com/wait); release them first (kubectl gang admit --ungate)"),
	}, {
		name: "member being deleted",
		change: func(f *fakeClient) {
			f.updatePod("ml/m-0", func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: created} })
		},
		want: changed("ml/m-0 is being deleted"),
	}, {
		name:   "several members",
		change: func(f *fakeClient) { delete(f.pods, "ml/m-0"); f.recreatePod("ml/m-2") },
		want:   changed("ml/m-0 was deleted; ml/m-2 was recreated (new UID)"),
	}, {
		name:   "target node gone",
		change: func(f *fakeClient) { delete(f.nodes, "n-1") },
		want:   changed("node n-1 was deleted"),
	}, {
		name: "target node taken",
		change: func(f *fakeClient) {
			f.addPod(testutil.MakePod().Name("squatter").Req(testutil.Res{"cpu": "2"}).Node("n-1").Obj())
		},
		want: changed("node n-1 no longer fits ml/m-1: Insufficient cpu"),
	}, {
		name:   "target node cordoned",
		change: func(f *fakeClient) { f.updateNode("n-2", func(n *corev1.Node) { n.Spec.Unschedulable = true }) },
		want:   changed("node n-2 no longer fits ml/m-2: node(s) were unschedulable"),
	}} {
		for _, mode := range readModes {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				f := bindCase{
					opts: mode.opts,
					setup: func(f *fakeClient) {
						if mode.setup != nil {
							mode.setup(f)
						}
						tc.change(f)
					},
					want: tc.want,
				}.run(t)
				for _, method := range mode.calls {
					if f.calls[method] == 0 {
						t.Errorf("no call of %s: the re-read did not read %s", method, mode.name)
					}
				}
			})
		}
	}
}

// A change that leaves room for the plan binds the gang: the plan is run
// again on what the target nodes hold now (recheck), or not at all when
// they hold the snapshot's very objects.
func TestGangClusterChangedButFits(t *testing.T) {
	small := testutil.Res{"cpu": "1"}
	// smallOn is a pod on n-i that leaves room for a member: one on each
	// node keeps the plan the same.
	smallOn := func(i int) *corev1.Pod {
		return testutil.MakePod().Name(fmt.Sprintf("small-%d", i)).UID(fmt.Sprintf("uid-small-%d", i)).Req(small).Node(fmt.Sprintf("n-%d", i)).Obj()
	}
	for _, tc := range []struct {
		name   string
		snap   *schedule.Snapshot
		change func(f *fakeClient)
	}{
		{"nothing changed", nil, func(*fakeClient) {}},
		{"a target node relabelled", nil, func(f *fakeClient) {
			f.updateNode("n-0", func(n *corev1.Node) { n.Labels["team"] = "ml" })
		}},
		{"a small pod came to a target node", nil, func(f *fakeClient) {
			f.addPod(testutil.MakePod().Name("small").Req(small).Node("n-1").Obj())
		}},
		{"a pod left a target node", cluster(3, 3, append(members(3), smallOn(0), smallOn(1), smallOn(2))...),
			func(f *fakeClient) { delete(f.pods, "default/small-1") }},
		{"a pod on another node changed", cluster(4, 3, append(members(3), testutil.MakePod().Name("web").UID("uid-web").Req(testutil.Res{"cpu": "2"}).Node("n-3").Obj())...),
			func(f *fakeClient) {
				f.updatePod("default/web", func(p *corev1.Pod) { p.Labels = map[string]string{"v": "2"} })
			}},
		{"a pending pod was bound to a target node, leaving room", cluster(3, 3, append(members(3), testutil.MakePod().Name("pending").UID("uid-pending").Req(small).Obj())...),
			func(f *fakeClient) { f.updatePod("default/pending", func(p *corev1.Pod) { p.Spec.NodeName = "n-2" }) }},
		{"another pod was created pending", nil, func(f *fakeClient) {
			f.addPod(testutil.MakePod().Name("later").Req(small).Obj())
		}},
	} {
		for _, mode := range readModes {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				bindCase{
					snap: tc.snap,
					opts: mode.opts,
					setup: func(f *fakeClient) {
						if mode.setup != nil {
							mode.setup(f)
						}
						tc.change(f)
					},
					want:   wantBound,
					writes: boundAll,
				}.run(t)
			})
		}
	}
}

// The commit and what settles each Binding (steps 4 to 6): a lost reply or
// a 409 is settled by reading the pod, a failure that the Client's retries
// did not get past leaves the member unbound, and fewer than the minimum
// bound is reported, or undone with --on-partial=delete. Every member the
// server holds bound gets one event, and no other.
func TestGangCommit(t *testing.T) {
	conflict := `Operation cannot be fulfilled on pods/binding "m-1": pod m-1 is already assigned to node "n-1"`
	partial := func(bound int32, members ...memberOutcome) outcome {
		return outcome{Verdict: VerdictPartiallyBound, Reason: ReasonBindFailed,
			Message: fmt.Sprintf("only %d of minimum 3 members are bound; the bound members were left bound (--on-partial=report)", bound),
			Members: members, BoundMembers: bound, MinMember: 3}
	}
	// twoBound is what binding m-0 and m-1 but not m-2 writes.
	twoBound := writes{Bindings: []string{"ml/m-0 n-0", "ml/m-1 n-1"}, Events: []string{"ml/m-0 n-0", "ml/m-1 n-1"}}
	fail := func(pod string, fault bindFault) func(f *fakeClient) {
		return func(f *fakeClient) { f.faults[pod] = fault }
	}
	// before runs change once, just before the Binding of pod is handled.
	before := func(pod string, change func(f *fakeClient)) func(f *fakeClient) {
		return func(f *fakeClient) {
			f.beforeBind = func(f *fakeClient, key string) {
				if key == pod {
					change(f)
				}
			}
		}
	}
	deleted := "bound, then deleted so its controller recreates it (--on-partial=delete)"
	injected := apierrors.NewInternalError(errors.New("injected"))
	withRunning := cluster(4, 4, append(members(3), member(3).Node("n-3").Obj())...)

	for _, tc := range []bindCase{{
		name:  "lost reply, the server bound the pod",
		setup: fail("ml/m-0", replyLost),
		want: outcome{Verdict: VerdictBound, Message: "bound 3 members; 3 of minimum 3 are bound", BoundMembers: 3, MinMember: 3,
			Members: []memberOutcome{m(0, "n-0", OutcomeBound, "bound (the Binding answered: post binding: unexpected EOF)"),
				m(1, "n-1", OutcomeBound, ""), m(2, "n-2", OutcomeBound, "")}},
		writes: boundAll,
	}, {
		name:  "lost reply, read back with one LIST",
		opts:  Options{BulkReads: -1},
		setup: fail("ml/m-0", replyLost),
		want: outcome{Verdict: VerdictBound, Message: "bound 3 members; 3 of minimum 3 are bound", BoundMembers: 3, MinMember: 3,
			Members: []memberOutcome{m(0, "n-0", OutcomeBound, "bound (the Binding answered: post binding: unexpected EOF)"),
				m(1, "n-1", OutcomeBound, ""), m(2, "n-2", OutcomeBound, "")}},
		writes: boundAll,
		calls:  map[string]int{"ListPods": 1, "GetPod": 0},
	}, {
		name: "read back with a GET each when the LIST fails",
		opts: Options{BulkReads: -1},
		setup: func(f *fakeClient) {
			f.faults["ml/m-0"] = replyLost
			f.fail["ListPods"] = injected
		},
		want: outcome{Verdict: VerdictBound, Message: "bound 3 members; 3 of minimum 3 are bound", BoundMembers: 3, MinMember: 3,
			Members: []memberOutcome{m(0, "n-0", OutcomeBound, "bound (the Binding answered: post binding: unexpected EOF)"),
				m(1, "n-1", OutcomeBound, ""), m(2, "n-2", OutcomeBound, "")}},
		writes: boundAll,
		calls:  map[string]int{"ListPods": 1, "GetPod": 3},
	}, {
		name:  "a member deleted during the commit, read back with one LIST",
		opts:  Options{BulkReads: -1},
		setup: before("ml/m-2", func(f *fakeClient) { delete(f.pods, "ml/m-2") }),
		want: partial(2, m(0, "n-0", OutcomeBound, ""), m(1, "n-1", OutcomeBound, ""),
			m(2, "n-2", OutcomeNotBound, "the pod was deleted")),
		writes: twoBound,
		sent:   []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
		calls:  map[string]int{"ListPods": 1, "GetPod": 1},
	}, {
		name:  "lost reply, the server never saw the Binding",
		setup: fail("ml/m-2", requestLost),
		want: partial(2, m(0, "n-0", OutcomeBound, ""), m(1, "n-1", OutcomeBound, ""),
			m(2, "n-2", OutcomeNotBound, "post binding: unexpected EOF")),
		writes: twoBound,
		sent:   []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
	}, {
		name:  "409 on a retry of a Binding that succeeded",
		setup: fail("ml/m-1", conflictAfterRetry),
		want: outcome{Verdict: VerdictBound, Message: "bound 3 members; 3 of minimum 3 are bound", BoundMembers: 3, MinMember: 3,
			Members: []memberOutcome{m(0, "n-0", OutcomeBound, ""),
				m(1, "n-1", OutcomeBound, "bound (the Binding answered: "+conflict+")"), m(2, "n-2", OutcomeBound, "")}},
		writes: boundAll,
	}, {
		name: "409, someone else bound the member first",
		setup: before("ml/m-2", func(f *fakeClient) {
			f.updatePod("ml/m-2", func(p *corev1.Pod) { p.Spec.NodeName = "n-9" })
		}),
		want: partial(2, m(0, "n-0", OutcomeBound, ""), m(1, "n-1", OutcomeBound, ""),
			m(2, "n-2", OutcomeNotBound, "bound to n-9 by someone else")),
		writes: twoBound,
		sent:   []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
	}, {
		name:  "409, the member was recreated under its name",
		setup: before("ml/m-2", func(f *fakeClient) { f.recreatePod("ml/m-2") }),
		want: partial(2, m(0, "n-0", OutcomeBound, ""), m(1, "n-1", OutcomeBound, ""),
			m(2, "n-2", OutcomeNotBound, "the pod was recreated (new UID)")),
		writes: twoBound,
		sent:   []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
	}, {
		name:  "the member was deleted",
		setup: before("ml/m-2", func(f *fakeClient) { delete(f.pods, "ml/m-2") }),
		want: partial(2, m(0, "n-0", OutcomeBound, ""), m(1, "n-1", OutcomeBound, ""),
			m(2, "n-2", OutcomeNotBound, "the pod was deleted")),
		writes: twoBound,
		sent:   []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
	}, {
		name:  "a 5xx the Client's retries did not get past",
		setup: fail("ml/m-2", bindFails),
		want: partial(2, m(0, "n-0", OutcomeBound, ""), m(1, "n-1", OutcomeBound, ""),
			m(2, "n-2", OutcomeNotBound, "Internal error occurred: injected")),
		writes: twoBound,
		sent:   []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
	}, {
		name:  "success answered, the pod reads back unbound",
		setup: fail("ml/m-2", answersButUnbound),
		want: partial(2, m(0, "n-0", OutcomeBound, ""), m(1, "n-1", OutcomeBound, ""),
			m(2, "n-2", OutcomeNotBound, "the Binding succeeded but the pod reads back unbound")),
		writes: twoBound,
		sent:   []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
	}, {
		// The server holds m-2 bound, but bind cannot tell: it counts it
		// unbound and records no event for it.
		name: "the read-back fails",
		setup: func(f *fakeClient) {
			f.getPodFault = func(f *fakeClient, key string) error {
				if key == "ml/m-2" && f.written > 0 {
					return injected
				}
				return nil
			}
		},
		// A Binding answered 201 is bound: the member counts, gets its
		// event, and the report says the state is not verified.
		want: outcome{Verdict: VerdictUnverified, MinMember: 3, BoundMembers: 3,
			Message: "the outcome is not verified: 3 Binding(s) succeeded (ml/m-0, ml/m-1, ml/m-2); read the pods again (kubectl get pods -o wide) before acting",
			Members: []memberOutcome{m(0, "n-0", OutcomeBound, ""), m(1, "n-1", OutcomeBound, ""),
				m(2, "n-2", OutcomeBound, "bound (the Binding succeeded), but reading it back failed: Internal error occurred: injected")}},
		writes: writes{Bindings: []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"}, Events: []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
			Conditions: []string{"ml/trio: 3 of minimum 3 members bound by kubectl-gang"}},
	}, {
		name: "every Binding fails",
		setup: func(f *fakeClient) {
			for i := range 3 {
				f.faults[fmt.Sprintf("ml/m-%d", i)] = bindFails
			}
		},
		want: outcome{Verdict: VerdictNotBound, Reason: ReasonBindFailed, Message: "no Binding succeeded, nothing was bound", MinMember: 3,
			Members: []memberOutcome{m(0, "n-0", OutcomeNotBound, "Internal error occurred: injected"),
				m(1, "n-1", OutcomeNotBound, "Internal error occurred: injected"), m(2, "n-2", OutcomeNotBound, "Internal error occurred: injected")}},
		sent: []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
	}, {
		name:  "partial, --on-partial=delete deletes what this run bound",
		opts:  Options{OnPartial: OnPartialDelete},
		setup: fail("ml/m-2", bindFails),
		want: outcome{Verdict: VerdictPartiallyBound, Reason: ReasonBindFailed, MinMember: 3,
			Message: "only 2 of minimum 3 members are bound; deleted the 2 pods this run bound so their controllers recreate them",
			Members: []memberOutcome{m(0, "n-0", OutcomeDeleted, deleted), m(1, "n-1", OutcomeDeleted, deleted),
				m(2, "n-2", OutcomeNotBound, "Internal error occurred: injected")}},
		writes: writes{Bindings: twoBound.Bindings, Events: twoBound.Events, Deletes: []string{"ml/m-0 uid-m-0", "ml/m-1 uid-m-1"}},
		sent:   []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
	}, {
		name:  "--on-partial=delete leaves the members bound before",
		snap:  withRunning,
		opts:  Options{OnPartial: OnPartialDelete},
		setup: fail("ml/m-2", bindFails),
		want: outcome{Verdict: VerdictPartiallyBound, Reason: ReasonBindFailed, MinMember: 4, BoundMembers: 1,
			Message: "only 3 of minimum 4 members are bound; deleted the 2 pods this run bound so their controllers recreate them",
			Members: []memberOutcome{m(0, "n-0", OutcomeDeleted, deleted), m(1, "n-1", OutcomeDeleted, deleted),
				m(2, "n-2", OutcomeNotBound, "Internal error occurred: injected"), m(3, "n-3", OutcomeAlreadyBound, "")}},
		writes: writes{Bindings: twoBound.Bindings, Events: twoBound.Events, Deletes: []string{"ml/m-0 uid-m-0", "ml/m-1 uid-m-1"}},
		sent:   []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
	}, {
		name: "--on-partial=delete when the deletes fail",
		opts: Options{OnPartial: OnPartialDelete},
		setup: func(f *fakeClient) {
			f.faults["ml/m-2"] = bindFails
			f.fail["DeletePod"] = injected
		},
		want: outcome{Verdict: VerdictPartiallyBound, Reason: ReasonBindFailed, MinMember: 3, BoundMembers: 2,
			Message: "only 2 of minimum 3 members are bound; deleted none of the pods this run bound; 2 stay bound (no controller owns them, or deleting failed: see each)",
			Members: []memberOutcome{m(0, "n-0", OutcomeBound, "bound; deleting it failed: Internal error occurred: injected"),
				m(1, "n-1", OutcomeBound, "bound; deleting it failed: Internal error occurred: injected"),
				m(2, "n-2", OutcomeNotBound, "Internal error occurred: injected")}},
		writes: twoBound,
		sent:   []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
	}, {
		name: "--on-partial=delete of pods gone already",
		opts: Options{OnPartial: OnPartialDelete},
		setup: func(f *fakeClient) {
			f.faults["ml/m-2"] = bindFails
			f.fail["DeletePod"] = apierrors.NewNotFound(corev1.Resource("pods"), "m-0")
		},
		want: outcome{Verdict: VerdictPartiallyBound, Reason: ReasonBindFailed, MinMember: 3,
			Message: "only 2 of minimum 3 members are bound; deleted the 2 pods this run bound so their controllers recreate them",
			Members: []memberOutcome{m(0, "n-0", OutcomeDeleted, deleted), m(1, "n-1", OutcomeDeleted, deleted),
				m(2, "n-2", OutcomeNotBound, "Internal error occurred: injected")}},
		writes: twoBound,
		sent:   []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
	}, {
		name:  "the minimum bound, not every member",
		snap:  cluster(3, 2, members(3)...),
		opts:  Options{OnPartial: OnPartialDelete},
		setup: fail("ml/m-2", bindFails),
		want: outcome{Verdict: VerdictPartiallyBound, Reason: ReasonBindFailed, MinMember: 2, BoundMembers: 2,
			Message: "bound 2 of 3 planned members; the gang has its minimum (2 of 2 bound), the rest were left unbound",
			Members: []memberOutcome{m(0, "n-0", OutcomeBound, ""), m(1, "n-1", OutcomeBound, ""),
				m(2, "n-2", OutcomeNotBound, "Internal error occurred: injected")}},
		writes: writes{Bindings: twoBound.Bindings, Events: twoBound.Events, Conditions: []string{"ml/trio: 2 of minimum 2 members bound by kubectl-gang"}},
		sent:   []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
	}} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t) })
	}
}

// An interrupt during the commit sends no new Binding; the one in flight
// finishes, and the members are verified and reported.
func TestGangInterruptedDuringCommit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault bindFault
		want  outcome
		write writes
	}{{
		name: "one bound",
		want: outcome{Verdict: VerdictPartiallyBound, Reason: ReasonInterrupted, MinMember: 3, BoundMembers: 1,
			Message: "only 1 of minimum 3 members are bound; the bound members were left bound (--on-partial=report)",
			Members: []memberOutcome{m(0, "n-0", OutcomeBound, ""), m(1, "n-1", OutcomeNotBound, "not sent: interrupted"),
				m(2, "n-2", OutcomeNotBound, "not sent: interrupted")}},
		write: writes{Bindings: []string{"ml/m-0 n-0"}, Events: []string{"ml/m-0 n-0"}},
	}, {
		name:  "none bound",
		fault: bindFails,
		want: outcome{Verdict: VerdictNotBound, Reason: ReasonInterrupted, MinMember: 3,
			Message: "no Binding succeeded, nothing was bound",
			Members: []memberOutcome{m(0, "n-0", OutcomeNotBound, "Internal error occurred: injected"),
				m(1, "n-1", OutcomeNotBound, "not sent: interrupted"), m(2, "n-2", OutcomeNotBound, "not sent: interrupted")}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			interrupt := make(chan struct{})
			bindCase{
				opts: Options{Parallelism: 1, Interrupted: interrupt},
				setup: func(f *fakeClient) {
					f.faults["ml/m-0"] = tc.fault
					f.beforeBind = func(*fakeClient, string) {
						select {
						case <-interrupt:
						default:
							close(interrupt)
						}
					}
				},
				want:   tc.want,
				writes: tc.write,
				sent:   []string{"ml/m-0 n-0"},
			}.run(t)
		})
	}
}

// A native PodGroup gets kube-scheduler's PodGroupInitiallyScheduled
// condition once its minimum is bound; other sources have no such
// condition.
func TestGangPodGroupCondition(t *testing.T) {
	var cosched []*corev1.Pod
	for i := range 3 {
		pod := member(i).Obj()
		pod.Spec.SchedulingGroup = nil
		pod.Labels = map[string]string{"scheduling.x-k8s.io/pod-group": "trio"}
		cosched = append(cosched, pod)
	}
	coschedSnap := cluster(3, 3, cosched...)
	coschedSnap.PodGroups = append(coschedSnap.PodGroups[:0], testutil.MakeCoschedulingPodGroup(ns, "trio", 3).Obj())

	failed := wantBound
	failed.Message += "; could not set the PodGroup's condition: Internal error occurred: injected"
	for _, tc := range []bindCase{{
		name:   "native PodGroup",
		want:   wantBound,
		writes: boundAll,
	}, {
		name:   "the condition could not be set",
		setup:  func(f *fakeClient) { f.fail["SetScheduled"] = apierrors.NewInternalError(errors.New("injected")) },
		want:   failed,
		writes: writes{Bindings: boundAll.Bindings, Events: boundAll.Events},
	}, {
		name:   "coscheduling PodGroup",
		snap:   coschedSnap,
		want:   wantBound,
		writes: writes{Bindings: boundAll.Bindings, Events: boundAll.Events},
		calls:  map[string]int{"SetScheduled": 0, "Allowed": 3},
	}} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t) })
	}
}

// Every permission the run may need is asked for at once before anything
// is read or written (step 1).
func TestGangPermissions(t *testing.T) {
	always := []string{"create pods/binding in namespace ml", "get pods in namespace ml", "create events.events.k8s.io in namespace ml"}
	podGroup := "update podgroups/status.scheduling.k8s.io in namespace ml named trio"
	for _, tc := range []struct {
		name      string
		opts      Options
		denied    []string
		fail      error
		wantAsked []string
		wantErr   string
	}{{
		name:      "allowed",
		wantAsked: append(slices.Clone(always), podGroup),
	}, {
		name:      "allowed, with --on-partial=delete",
		opts:      Options{OnPartial: OnPartialDelete},
		wantAsked: append(slices.Clone(always), "delete pods in namespace ml", podGroup),
	}, {
		name:      "may not bind",
		denied:    []string{"create pods/binding"},
		wantAsked: append(slices.Clone(always), podGroup),
		wantErr:   "forbidden: nothing was bound: you may not create pods/binding in namespace ml",
	}, {
		name:      "may not delete, with --on-partial=delete",
		opts:      Options{OnPartial: OnPartialDelete},
		denied:    []string{"delete pods/", "update podgroups/status"},
		wantAsked: append(slices.Clone(always), "delete pods in namespace ml", podGroup),
		wantErr: "forbidden: nothing was bound: you may not delete pods in namespace ml, " +
			"update podgroups/status.scheduling.k8s.io in namespace ml",
	}, {
		name:      "the access review fails",
		fail:      apierrors.NewInternalError(errors.New("injected")),
		wantAsked: nil,
		wantErr:   "checking permissions: Internal error occurred: injected",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			snap := cluster(3, 3, members(3)...)
			f := newFakeClient(snap)
			for _, d := range tc.denied {
				f.denied[d] = true
			}
			if tc.fail != nil {
				f.fail["Allowed"] = tc.fail
			}
			r, err := bindTrio(t, snap, f, tc.opts)
			if diff := cmp.Diff(slices.Sorted(slices.Values(tc.wantAsked)), slices.Sorted(slices.Values(f.asked))); diff != "" {
				t.Errorf("access reviews (-want +got):\n%s", diff)
			}
			if tc.wantErr == "" {
				if err != nil || r.Verdict != VerdictBound {
					t.Fatalf("Gang: %v, want it bound", err)
				}
				return
			}
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("Gang: %v, want error %q", err, tc.wantErr)
			}
			if tc.fail == nil && !errors.Is(err, ErrForbidden) {
				t.Errorf("Gang: %v, want it to wrap ErrForbidden", err)
			}
			if diff := cmp.Diff(writes{}, f.writes(), testutil.SemanticOptions); diff != "" {
				t.Errorf("written (-want +got):\n%s", diff)
			}
			for _, method := range []string{"Bind", "GetPod", "PodVersions"} {
				if f.calls[method] != 0 {
					t.Errorf("%d calls of %s before the permissions were granted", f.calls[method], method)
				}
			}
		})
	}
}

// A read that fails before the commit leaves the run undecided: an error,
// nothing written.
func TestGangReadFails(t *testing.T) {
	injected := apierrors.NewInternalError(errors.New("injected"))
	lists := readModes[2]
	for _, tc := range []struct {
		name    string
		opts    Options
		setup   func(f *fakeClient)
		wantErr string
	}{{
		name:    "GET of a member",
		setup:   func(f *fakeClient) { f.getPodFault = failGet("ml/m-1", injected) },
		wantErr: "reading pod ml/m-1: Internal error occurred: injected",
	}, {
		name:    "GET of a target node",
		setup:   func(f *fakeClient) { f.fail["GetNode"] = injected },
		wantErr: "reading node n-0: Internal error occurred: injected",
	}, {
		name:    "pods on a target node",
		setup:   func(f *fakeClient) { f.fail["PodsOnNode"] = injected },
		wantErr: "reading node n-0: Internal error occurred: injected",
	}, {
		name:    "pod versions",
		opts:    Options{BulkReads: -1},
		setup:   func(f *fakeClient) { f.fail["PodVersions"] = injected },
		wantErr: "listing pods: Internal error occurred: injected",
	}, {
		name:    "node versions",
		opts:    Options{BulkReads: -1},
		setup:   func(f *fakeClient) { f.fail["NodeVersions"] = injected },
		wantErr: "listing nodes: Internal error occurred: injected",
	}, {
		name: "GET of a changed member",
		opts: Options{BulkReads: -1},
		setup: func(f *fakeClient) {
			f.updatePod("ml/m-1", func(p *corev1.Pod) { p.Labels = map[string]string{"v": "2"} })
			f.getPodFault = failGet("ml/m-1", injected)
		},
		wantErr: "reading pod ml/m-1: Internal error occurred: injected",
	}, {
		name: "GET of a new pod",
		opts: Options{BulkReads: -1},
		setup: func(f *fakeClient) {
			f.addPod(testutil.MakePod().Name("new").Obj())
			f.getPodFault = failGet("default/new", injected)
		},
		wantErr: "reading pod default/new: Internal error occurred: injected",
	}, {
		name: "LIST of the pods",
		opts: lists.opts,
		setup: func(f *fakeClient) {
			lists.setup(f)
			f.fail["ListPods"] = injected
		},
		wantErr: "listing pods: Internal error occurred: injected",
	}, {
		name: "LIST of the nodes",
		opts: lists.opts,
		setup: func(f *fakeClient) {
			lists.setup(f)
			f.fail["ListNodes"] = injected
		},
		wantErr: "listing nodes: Internal error occurred: injected",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			snap := cluster(3, 3, members(3)...)
			f := newFakeClient(snap)
			tc.setup(f)
			_, err := bindTrio(t, snap, f, tc.opts)
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("Gang: %v, want error %q", err, tc.wantErr)
			}
			if !errors.Is(err, injected) {
				t.Errorf("Gang: %v, want it to wrap the Client's error", err)
			}
			if diff := cmp.Diff(writes{}, f.writes(), testutil.SemanticOptions); diff != "" {
				t.Errorf("written (-want +got):\n%s", diff)
			}
			if len(f.sent) > 0 {
				t.Errorf("Bindings sent: %v, want none", f.sent)
			}
		})
	}
}

// failGet fails every GetPod of key with err.
func failGet(key string, err error) func(*fakeClient, string) error {
	return func(_ *fakeClient, k string) error {
		if k == key {
			return err
		}
		return nil
	}
}

// The versions re-read GETs what changed; a pod gone or terminated since
// it was listed is left out, as the lists leave it out.
func TestGangVersionsReread(t *testing.T) {
	for _, tc := range []struct {
		name string
		gone func(f *fakeClient)
	}{
		{"deleted", func(f *fakeClient) { delete(f.pods, "default/big") }},
		{"terminated", func(f *fakeClient) {
			f.updatePod("default/big", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// big, bound to n-1 since the snapshot, leaves no room for m-1;
			// once it is gone, the node has room again.
			bindCase{
				opts: Options{BulkReads: -1},
				setup: func(f *fakeClient) {
					f.addPod(testutil.MakePod().Name("big").Req(testutil.Res{"cpu": "4"}).Node("n-1").Obj())
					f.getPodFault = func(f *fakeClient, key string) error {
						if key == "default/big" {
							tc.gone(f)
						}
						return nil
					}
				},
				want:   wantBound,
				writes: boundAll,
			}.run(t)
		})
	}
}

// Progress hears of every Binding done; events that could not be written
// are counted in the report.
func TestGangProgressAndLostEvents(t *testing.T) {
	var progress []string
	snap := cluster(3, 3, members(3)...)
	f := newFakeClient(snap)
	f.lostEvents = 2
	r, err := bindTrio(t, snap, f, Options{Parallelism: 1, Progress: func(done, total int) {
		progress = append(progress, fmt.Sprintf("%d/%d", done, total))
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := wantBound
	want.LostEvents = 2
	if diff := cmp.Diff(want, outcomeOf(r)); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1/3", "2/3", "3/3"}, progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}
