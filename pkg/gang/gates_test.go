package gang_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/coscheduling"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
)

// nodeInfos puts each pod on the node its spec names.
func nodeInfos(nodes []*corev1.Node, pods ...*corev1.Pod) []*framework.NodeInfo {
	out := make([]*framework.NodeInfo, len(nodes))
	for i, n := range nodes {
		out[i] = framework.NewNodeInfo(n)
		for _, p := range pods {
			if p.Spec.NodeName == n.Name {
				out[i].AddPod(p)
			}
		}
	}
	return out
}

func TestCoschedulingGate(t *testing.T) {
	// The cluster of coscheduling's TestCheckClusterResource: two nodes of 3 CPUs.
	nodes := []*corev1.Node{
		testutil.MakeNode().Name("node-a").Capacity(testutil.Res{"cpu": "3"}).Obj(),
		testutil.MakeNode().Name("node-b").Capacity(testutil.Res{"cpu": "3"}).Obj(),
	}
	cpu := func(name, node, q string) *testutil.PodWrapper {
		return testutil.MakePod().Namespace("ns").Name(name).Node(node).Req(testutil.Res{"cpu": q})
	}
	pending := testutil.MakePod().Namespace("ns").Name("p0").CoschedulingGroup("pg1").Obj()
	cosched := func(minMember int32, minResources corev1.ResourceList, members ...*corev1.Pod) *gang.Gang {
		return &gang.Gang{Source: coscheduling.Source, Namespace: "ns", Name: "pg1", MinMember: minMember,
			MinResources: minResources, Members: members}
	}
	cpu4 := testutil.Res{"cpu": "4"}.List()
	tests := []struct {
		name  string
		gang  *gang.Gang
		nodes []*framework.NodeInfo
		want  *gang.GateResult
	}{
		{
			name:  "not a coscheduling gang",
			gang:  &gang.Gang{Source: volcano.Source, MinMember: 5},
			nodes: nodeInfos(nodes),
		},
		{
			name:  "fewer pods than minMember",
			gang:  cosched(3, nil, pending, testutil.MakePod().Namespace("ns").Name("p1").Node("node-a").Obj()),
			nodes: nodeInfos(nodes),
			want: &gang.GateResult{Gate: "CoschedulingPreFilter", Check: "MinResources", Reason: "NotEnoughSiblingPods",
				Message: "pre-filter pod p0 cannot find enough sibling pods, current pods number: 2, minMember of group: 3",
				Figures: map[string]string{"members": "2", "minMember": "3"}},
		},
		{
			name:  "no minResources",
			gang:  cosched(1, nil, pending),
			nodes: nodeInfos(nodes),
			want:  &gang.GateResult{Gate: "CoschedulingPreFilter", Check: "MinResources", Passed: true, Figures: map[string]string{"members": "1", "minMember": "1"}},
		},
		{
			name:  "cluster resource enough",
			gang:  cosched(1, cpu4, pending),
			nodes: nodeInfos(nodes, cpu("p1", "node-a", "2").Obj()),
			want: &gang.GateResult{Gate: "CoschedulingPreFilter", Check: "MinResources", Passed: true, Figures: map[string]string{
				"members": "1", "minMember": "1", "requested": "cpu=4, pods=1", "free": "cpu=4, pods=219"}},
		},
		{
			name:  "cluster resource not enough",
			gang:  cosched(1, cpu4, pending),
			nodes: nodeInfos(nodes, cpu("p1", "node-a", "2").Obj(), cpu("p2", "node-b", "1").Obj()),
			want: &gang.GateResult{Gate: "CoschedulingPreFilter", Check: "MinResources", Reason: "ResourceGap",
				Message:   "resource gap: map[cpu:{{1000 -3} {<nil>}  DecimalSI}]",
				Detail:    "minResources plus 1 member pod(s) exceed the free capacity of the nodes: cpu need 4, free 3, short 1; pods need 1, free 218",
				Shortfall: testutil.Res{"cpu": "1"}.List(),
				Figures:   map[string]string{"members": "1", "minMember": "1", "requested": "cpu=4, pods=1", "free": "cpu=3, pods=218"}},
		},
		{
			name:  "the group's own pods are left out",
			gang:  cosched(1, cpu4, pending),
			nodes: nodeInfos(nodes, cpu("p1", "node-a", "2").CoschedulingGroup("pg1").Obj(), cpu("p2", "node-b", "1").Obj()),
			want: &gang.GateResult{Gate: "CoschedulingPreFilter", Check: "MinResources", Passed: true, Figures: map[string]string{
				"members": "1", "minMember": "1", "requested": "cpu=4, pods=1", "free": "cpu=5, pods=219"}},
		},
		{
			name: "pod slots and a resource no node has",
			gang: cosched(3, testutil.Res{"nvidia.com/gpu": "1"}.List(), pending,
				testutil.MakePod().Namespace("ns").Name("p1").Obj(), testutil.MakePod().Namespace("ns").Name("p2").Obj()),
			nodes: nodeInfos([]*corev1.Node{testutil.MakeNode().Name("small").Capacity(testutil.Res{"cpu": "1", "pods": "2"}).Obj()}),
			want: &gang.GateResult{Gate: "CoschedulingPreFilter", Check: "MinResources", Reason: "ResourceGap",
				Message:   "resource gap: map[nvidia.com/gpu:{{1 0} {<nil>}  DecimalSI} pods:{{1 0} {<nil>}  DecimalSI}]",
				Detail:    "minResources plus 3 member pod(s) exceed the free capacity of the nodes: nvidia.com/gpu need 1, free 0, short 1; pods need 3, free 2, short 1",
				Shortfall: testutil.Res{"nvidia.com/gpu": "1", "pods": "1"}.List(),
				Figures: map[string]string{"members": "3", "minMember": "3", "requested": "nvidia.com/gpu=1, pods=3",
					"free": "pods=2"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := coscheduling.PreFilter(tt.gang, tt.nodes)
			if diff := testutil.Diff(tt.want, got); diff != "" {
				t.Errorf("CoschedulingGate (-want +got):\n%s", diff)
			}
		})
	}
}

// Place applies the gang's own gate as its scheduler would: a Volcano gang
// whose queue cannot take its minResources is not placed although every
// member fits, and says why; without Queues in the snapshot nothing holds
// it back, and nothing is verified either (issue #24: never a plain yes).
func TestPlaceAppliesTheSourceGate(t *testing.T) {
	nodes := []*corev1.Node{
		testutil.MakeNode().Name("n1").Capacity(testutil.Res{"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "8"}).Obj(),
		testutil.MakeNode().Name("n2").Capacity(testutil.Res{"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "8"}).Obj(),
	}
	pg := testutil.MakeVolcanoPodGroup("ml", "train", 2).Queue("q").MinResources(testutil.Res{"cpu": "4", "nvidia.com/gpu": "4"}).Obj()
	snap := &schedule.Snapshot{Nodes: nodes, PodGroups: []*unstructured.Unstructured{pg}}
	for i := range 2 {
		snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("ml").Name(fmt.Sprintf("w-%d", i)).
			Req(testutil.Res{"cpu": "2", "nvidia.com/gpu": "2"}).VolcanoGroup("train").Obj())
	}
	place := func(queues ...*unstructured.Unstructured) *gang.Placement {
		s := *snap
		s.Objects = queues
		g, err := gang.ResolvePodGroup(&s, gang.Ref{Namespace: "ml", Name: "train"})
		if err != nil {
			t.Fatal(err)
		}
		p, err := gang.Place(context.Background(), &s, g, gang.PlaceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := place(); p.Verdict != gang.VerdictPlaced || p.Gate != nil || p.Verified() {
		t.Errorf("no Objects: %s, gate %+v, verified %v; want Placed, not verified", p.Verdict, p.Gate, p.Verified())
	}
	small := testutil.MakeVolcanoQueue("q").State("").Capability(testutil.Res{"cpu": "2", "nvidia.com/gpu": "2"}).Obj()
	p := place(small)
	if p.Verdict != gang.VerdictUnschedulable || p.Gate == nil || p.Gate.Reason != volcano.ReasonQueueInsufficient ||
		len(p.BestAttempt) != 2 || !strings.Contains(p.Message, "held back by VolcanoEnqueue (QueueInsufficient)") {
		t.Errorf("small queue: %s, gate %+v, %d fit: %s; want Unschedulable, QueueInsufficient, the plan kept", p.Verdict, p.Gate, len(p.BestAttempt), p.Message)
	}
	if p := place(testutil.MakeVolcanoQueue("q").Obj()); p.Verdict != gang.VerdictPlaced {
		t.Errorf("open queue with room: %s: %s; want Placed", p.Verdict, p.Message)
	}
}

// TestNativeGate is kube-scheduler v1.37's validatePodGroup
// (schedule_one_podgroup.go): every member, queued or scheduled, must have
// the PodGroup's priority, the first queued member's scheduler and its
// preemption policy; the first that does not fails the group with
// kube-scheduler's words.
func TestNativeGate(t *testing.T) {
	member := func(name string) *testutil.PodWrapper {
		return testutil.MakePod().Namespace("ml").Name(name).PodGroup("train")
	}
	never := corev1.PreemptNever
	native := func(pgPriority *int32, members ...*corev1.Pod) *gang.Gang {
		return &gang.Gang{Source: gang.SourceNative, Namespace: "ml", Name: "train", MinMember: 1, PodGroupPriority: pgPriority, Members: members}
	}
	p1500 := int32(1500)
	tests := []struct {
		name       string
		gang       *gang.Gang
		wantReason string
		wantMsg    string
		wantFix    string
	}{
		{name: "not a native gang", gang: &gang.Gang{Source: volcano.Source}},
		{
			name: "members at the PodGroup's priority",
			gang: native(&p1500, member("a").Priority("high", 1500).Obj(), member("b").Priority("high", 1500).Obj()),
		},
		{
			// The case: the class is on the pod template only.
			name:       "members with a class, the PodGroup with none",
			gang:       native(nil, member("a").Priority("high", 1500).Obj(), member("b").Priority("high", 1500).Obj()),
			wantReason: gang.ReasonPriorityMismatch,
			wantMsg:    "all pods in a single pod group should have the same priority as the pod group's priority, got 1500 and 0",
			wantFix:    `set the PodGroup's spec.priorityClassName to "high" (priority 1500)`,
		},
		{
			name:       "a running member at another priority",
			gang:       native(&p1500, member("a").Priority("high", 1500).Obj(), member("b").Node("n1").Obj()),
			wantReason: gang.ReasonPriorityMismatch,
			wantMsg:    "all pods in a single pod group should have the same priority as the pod group's priority, got 0 and 1500",
			wantFix:    "every member must have the PodGroup's priority 1500",
		},
		{
			name:       "members naming two schedulers",
			gang:       native(nil, member("a").Obj(), func() *corev1.Pod { p := member("b").Obj(); p.Spec.SchedulerName = "other"; return p }()),
			wantReason: gang.ReasonSchedulerNameMismatch,
			wantMsg:    `all pods in a single pod group should have the same .spec.schedulerName set, got: "other" and ""`,
			wantFix:    "same spec.schedulerName",
		},
		{
			name:       "members with two preemption policies",
			gang:       native(nil, member("a").Obj(), func() *corev1.Pod { p := member("b").Obj(); p.Spec.PreemptionPolicy = &never; return p }()),
			wantReason: gang.ReasonPreemptionPolicyMismatch,
			wantMsg:    "all pods in a single pod group should have the same preemption policy, got Never and PreemptLowerPriority",
			wantFix:    "same preemptionPolicy",
		},
		{
			// Gated members are judged as they will be once released.
			name:       "gated members count",
			gang:       native(nil, member("a").Priority("high", 1500).SchedulingGate("hold").Obj()),
			wantReason: gang.ReasonPriorityMismatch,
			wantMsg:    "got 1500 and 0",
		},
		{
			// No member waits for a node: kube-scheduler runs no cycle.
			name: "every member running",
			gang: native(nil, member("a").Priority("high", 1500).Node("n1").Obj()),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := gang.NativeGate(tc.gang)
			if tc.gang.Source != gang.SourceNative {
				if r != nil {
					t.Fatalf("gate %+v for a %s gang, want none", r, tc.gang.Source)
				}
				return
			}
			if r.Gate != gang.GateNative || r.Check != gang.GateNative {
				t.Errorf("gate %q check %q, want %q", r.Gate, r.Check, gang.GateNative)
			}
			if tc.wantReason == "" {
				if !r.Passed {
					t.Errorf("refused: %s: %s", r.Reason, r.Message)
				}
				return
			}
			if r.Passed || r.Reason != tc.wantReason || !strings.Contains(r.Message, tc.wantMsg) || !strings.Contains(r.Fix, tc.wantFix) ||
				!strings.Contains(r.Detail, "SchedulerError") {
				t.Errorf("got passed=%v %s: %q (detail %q, fix %q), want %s: %q, fix %q", r.Passed, r.Reason, r.Message, r.Detail, r.Fix, tc.wantReason, tc.wantMsg, tc.wantFix)
			}
		})
	}
}

// A native gang kube-scheduler refuses is not placed, whatever fits: Place
// says no with kube-scheduler's words and the fix.
func TestPlaceNativePriorityMismatch(t *testing.T) {
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 2), PriorityClasses: []*schedulingv1.PriorityClass{testutil.MakePriorityClass("high", 1500)}}
	pg := testutil.MakeNativePodGroup("ml", "train", 2).Obj()
	snap.PodGroups = []*unstructured.Unstructured{pg}
	for _, w := range testutil.GPUWorkers(2, "8") {
		w.Spec.PriorityClassName, w.Spec.Priority = "high", ptr(int32(1500))
		snap.Pods = append(snap.Pods, w)
	}
	g, err := gang.ResolvePodGroup(snap, gang.Ref{Namespace: "ml", Name: "train"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := gang.Place(context.Background(), snap, g, gang.PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "gang ml/train is held back by PodGroupValidation (PriorityMismatch): kube-scheduler fails every cycle of the group with SchedulerError " +
		"(at pod w-0): all pods in a single pod group should have the same priority as the pod group's priority, got 1500 and 0; " +
		`to fix: set the PodGroup's spec.priorityClassName to "high" (priority 1500), the members' class`
	if p.Verdict != gang.VerdictUnschedulable || p.UngatedVerdict != gang.VerdictPlaced || !strings.HasPrefix(p.Message, want) {
		t.Errorf("verdict %s (ungated %s): %q\nwant Unschedulable: %q...", p.Verdict, p.UngatedVerdict, p.Message, want)
	}

	// The same group with the class: placed.
	snap.PodGroups = []*unstructured.Unstructured{testutil.MakeNativePodGroup("ml", "train", 2).Field("high", "priorityClassName").Obj()}
	if g, err = gang.ResolvePodGroup(snap, gang.Ref{Namespace: "ml", Name: "train"}); err != nil {
		t.Fatal(err)
	}
	if p, err = gang.Place(context.Background(), snap, g, gang.PlaceOptions{}); err != nil || p.Verdict != gang.VerdictPlaced {
		t.Errorf("with the class on the PodGroup: %v %v", p.Verdict, err)
	}
}

func ptr[T any](v T) *T { return &v }
