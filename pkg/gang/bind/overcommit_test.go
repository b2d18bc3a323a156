package bind

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
)

// What bind says once the Bindings are written and the outcome is not the
// verified yes it planned (docs/design.md#binding-a-gang): a node others
// filled meanwhile, a state that could not be read back, pods no
// controller would recreate, members behind scheduling gates.
func TestGangAfterTheCommit(t *testing.T) {
	injected := apierrors.NewInternalError(errors.New("injected"))
	// intruder is a pod another scheduler binds to n-1 while bind commits:
	// with m-1's 3 cpus, n-1's 4 hold 5.
	intruder := func(f *fakeClient, key string) {
		if key == "ml/m-2" && f.pods["other/intruder"] == nil {
			pod := testutil.MakePod().Namespace("other").Name("intruder").UID("uid-intruder").Req(testutil.Res{"cpu": "2"}).Node("n-1").Obj()
			f.addPod(pod)
		}
	}
	over := "bound, but 1 node(s) now hold more than they have: others bound pods there since the re-check " +
		"(the kubelet will reject what does not fit): node n-1 holds cpu 5 of 4; arrived since the snapshot: other/intruder"
	bare := func() []*corev1.Pod {
		pods := members(3)
		for _, pod := range pods {
			pod.OwnerReferences = nil
		}
		return pods
	}
	for _, tc := range []bindCase{{
		name:  "another scheduler fills a target node during the commit",
		setup: func(f *fakeClient) { f.beforeBind = intruder },
		want: outcome{Verdict: VerdictOvercommitted, MinMember: 3, BoundMembers: 3,
			Message: over + "; this run's members were left bound (--on-partial=report)",
			Members: []memberOutcome{m(0, "n-0", OutcomeBound, ""), m(1, "n-1", OutcomeBound, ""), m(2, "n-2", OutcomeBound, "")}},
		writes: boundAll,
	}, {
		name:  "the same, read back with one LIST",
		opts:  Options{BulkReads: -1},
		setup: func(f *fakeClient) { f.beforeBind = intruder },
		want: outcome{Verdict: VerdictOvercommitted, MinMember: 3, BoundMembers: 3,
			Message: over + "; this run's members were left bound (--on-partial=report)",
			Members: []memberOutcome{m(0, "n-0", OutcomeBound, ""), m(1, "n-1", OutcomeBound, ""), m(2, "n-2", OutcomeBound, "")}},
		writes: boundAll,
		calls:  map[string]int{"ListPods": 1, "PodsOnNode": 0},
	}, {
		name:  "--on-partial=delete takes the members back from an overcommitted cluster",
		opts:  Options{OnPartial: OnPartialDelete},
		setup: func(f *fakeClient) { f.beforeBind = intruder },
		want: outcome{Verdict: VerdictOvercommitted, MinMember: 3,
			Message: over + "; deleted the 3 pods this run bound so their controllers recreate them (--on-partial=delete)",
			Members: []memberOutcome{m(0, "n-0", OutcomeDeleted, "bound, then deleted so its controller recreates it (--on-partial=delete)"),
				m(1, "n-1", OutcomeDeleted, "bound, then deleted so its controller recreates it (--on-partial=delete)"),
				m(2, "n-2", OutcomeDeleted, "bound, then deleted so its controller recreates it (--on-partial=delete)")}},
		writes: writes{Bindings: boundAll.Bindings, Events: boundAll.Events,
			Deletes: []string{"ml/m-0 uid-m-0", "ml/m-1 uid-m-1", "ml/m-2 uid-m-2"}},
	}, {
		name:  "a node that cannot be read after the commit leaves the outcome unverified",
		setup: func(f *fakeClient) { f.beforeBind = func(f *fakeClient, _ string) { f.fail["PodsOnNode"] = injected } },
		want: outcome{Verdict: VerdictUnverified, MinMember: 3, BoundMembers: 3,
			Message: "the outcome is not verified: 3 Binding(s) succeeded (ml/m-0, ml/m-1, ml/m-2); could not read what the target nodes hold: " +
				"node n-0: Internal error occurred: injected; node n-1: Internal error occurred: injected; node n-2: Internal error occurred: injected; " +
				"read the pods again (kubectl get pods -o wide) before acting",
			Members: []memberOutcome{m(0, "n-0", OutcomeBound, ""), m(1, "n-1", OutcomeBound, ""), m(2, "n-2", OutcomeBound, "")}},
		writes: writes{Bindings: boundAll.Bindings, Events: boundAll.Events, Conditions: boundAll.Conditions},
	}, {
		name: "a lost answer and a failed read: the member may or may not be bound",
		setup: func(f *fakeClient) {
			f.faults["ml/m-2"] = requestLost
			f.getPodFault = func(f *fakeClient, key string) error {
				if key == "ml/m-2" && f.written > 0 {
					return injected
				}
				return nil
			}
		},
		want: outcome{Verdict: VerdictUnverified, MinMember: 3, BoundMembers: 2,
			Message: "the outcome is not verified: 2 Binding(s) succeeded (ml/m-0, ml/m-1); 1 may or may not be bound (ml/m-2); " +
				"read the pods again (kubectl get pods -o wide) before acting",
			Members: []memberOutcome{m(0, "n-0", OutcomeBound, ""), m(1, "n-1", OutcomeBound, ""),
				m(2, "n-2", OutcomeUnknown, "the Binding answered post binding: unexpected EOF and the pod could not be read back (Internal error occurred: injected): it may or may not be bound")}},
		writes: writes{Bindings: []string{"ml/m-0 n-0", "ml/m-1 n-1"}, Events: []string{"ml/m-0 n-0", "ml/m-1 n-1"}},
		sent:   []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
	}, {
		name:  "--on-partial=delete never deletes a pod no controller owns",
		snap:  cluster(3, 3, bare()...),
		opts:  Options{OnPartial: OnPartialDelete},
		setup: func(f *fakeClient) { f.faults["ml/m-2"] = bindFails },
		want: outcome{Verdict: VerdictPartiallyBound, Reason: ReasonBindFailed, MinMember: 3, BoundMembers: 2,
			Message: "only 2 of minimum 3 members are bound; deleted none of the pods this run bound; " +
				"2 stay bound (no controller owns them, or deleting failed: see each)",
			Members: []memberOutcome{
				m(0, "n-0", OutcomeBound, "bound, and left bound: no controller owns it, so deleting it would lose it (--on-partial=delete deletes only pods a controller recreates)"),
				m(1, "n-1", OutcomeBound, "bound, and left bound: no controller owns it, so deleting it would lose it (--on-partial=delete deletes only pods a controller recreates)"),
				m(2, "n-2", OutcomeNotBound, "Internal error occurred: injected")}},
		writes: writes{Bindings: []string{"ml/m-0 n-0", "ml/m-1 n-1"}, Events: []string{"ml/m-0 n-0", "ml/m-1 n-1"}},
		sent:   []string{"ml/m-0 n-0", "ml/m-1 n-1", "ml/m-2 n-2"},
	}, {
		name: "members behind scheduling gates are not bound, and the gate is the reason",
		snap: cluster(3, 3, member(0).Obj(), member(1).Obj(), member(2).SchedulingGate("example.com/quota").Obj()),
		want: outcome{Verdict: VerdictNotBound, Reason: ReasonSchedulingGated, MinMember: 3,
			Message: "not bound: 1 member(s) carry scheduling gates (example.com/quota); release them first (kubectl gang admit --ungate example.com/quota)",
			Members: []memberOutcome{m(0, "n-0", OutcomeNotBound, ""), m(1, "n-1", OutcomeNotBound, ""), m(2, "n-2", OutcomeNotBound, "")}},
		calls: map[string]int{"Allowed": 0, "Bind": 0},
	}} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t) })
	}
}
