package explain

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
)

// lowPod is a running pod of priority 10 taking all 8 GPUs of a node.
func lowPod(name, node string) *corev1.Pod {
	return testutil.MakePod().Namespace("batch").Name(name).Label("app", name).Node(node).
		Priority("low", 10).Req(testutil.Res{"nvidia.com/gpu": "8"}).Obj()
}

// highWorkers are pending 8-GPU members of priority 1000.
func highWorkers(n int) []*corev1.Pod {
	pods := testutil.GPUWorkers(n, "8")
	for _, p := range pods {
		p.Spec.PriorityClassName, p.Spec.Priority = "high", ptrTo(int32(1000))
	}
	return pods
}

func ptrTo[T any](v T) *T { return &v }

// summary is the part of a node row the tests compare.
type summary struct {
	Name          string
	Feasible      bool
	Placed, Fits  int
	Plugin        string
	OutsideDomain bool
	Taint         string
}

func summarize(nodes []Node) []summary {
	var out []summary
	for _, n := range nodes {
		s := summary{Name: n.Name, Feasible: n.Feasible, Placed: n.Placed, Fits: n.Fits, Plugin: n.Plugin, OutsideDomain: n.OutsideDomain}
		if n.Taint != nil {
			s.Taint = gang.FormatTaint(n.Taint)
		}
		out = append(out, s)
	}
	return out
}

func kinds(ss []Suggestion) []SuggestionKind {
	var out []SuggestionKind
	for _, s := range ss {
		out = append(out, s.Kind)
	}
	return out
}

func find(ss []Suggestion, kind SuggestionKind) *Suggestion {
	for i := range ss {
		if ss[i].Kind == kind {
			return &ss[i]
		}
	}
	return nil
}

// TestExplainGang is the whole diagnosis of a gang confined to one zone:
// zone-a is too small; zone-b holds one member, has two nodes full of
// low-priority pods (one protected by a PodDisruptionBudget) and a cordoned
// node.
func TestExplainGang(t *testing.T) {
	nodes := []*corev1.Node{
		testutil.MakeNode().Name("zone-a-0").Label(zoneKey, "zone-a").Capacity(testutil.Res{"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": "4"}).Obj(),
	}
	nodes = append(nodes, testutil.GPUNodes("zone-b", 4)...)
	nodes[4].Spec.Unschedulable = true
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "l1"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "l1"}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0},
	}
	snap := &schedule.Snapshot{
		Nodes:                nodes,
		Pods:                 []*corev1.Pod{lowPod("l1", "zone-b-1"), lowPod("l2", "zone-b-2")},
		PodDisruptionBudgets: []*policyv1.PodDisruptionBudget{pdb},
	}
	g := gangOf(3, highWorkers(3))
	g.TopologyKey = zoneKey
	g.NotEvaluatedFields = []gang.NotEvaluatedField{{Field: "spec.subGroupPolicy", Value: "2 sub-groups", Reason: volcano.NotEvaluatedSubGroupPolicy}}

	e, err := Gang(context.Background(), snap, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Verdict != VerdictUnschedulable {
		t.Errorf("verdict %s, want Unschedulable", e.Verdict)
	}
	const wantMessage = "0/5 nodes are available: 1 node(s) were outside the gang's topology domain, 1 node(s) were unschedulable, " +
		"3 Insufficient nvidia.com/gpu. preemption: found a potential placement for pod on node zone-b-2, preempting 1 victims"
	if e.Message != wantMessage {
		t.Errorf("message\n got %q\nwant %q", e.Message, wantMessage)
	}
	if e.Pod.Name != "w-1" || !e.Blocked || len(e.PlacedBefore) != 1 || e.Domain != "zone-b" {
		t.Errorf("table is about %s (blocked %v, %d placed before, domain %q), want w-1 blocked after 1 in zone-b",
			e.Pod.Name, e.Blocked, len(e.PlacedBefore), e.Domain)
	}
	wantNodes := []summary{
		{Name: "zone-a-0", Plugin: "NodeResourcesFit", OutsideDomain: true},
		{Name: "zone-b-0", Placed: 1, Plugin: "NodeResourcesFit"},
		{Name: "zone-b-1", Plugin: "NodeResourcesFit"},
		{Name: "zone-b-2", Plugin: "NodeResourcesFit"},
		{Name: "zone-b-3", Plugin: "NodeUnschedulable", Taint: ""},
	}
	if diff := cmp.Diff(wantNodes, summarize(e.Nodes)); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	if got := e.Nodes[1].Insufficient; len(got) != 1 || got[0].ResourceName != "nvidia.com/gpu" || got[0].Short() != 8 {
		t.Errorf("zone-b-0 insufficient %+v, want 8 nvidia.com/gpu short", got)
	}
	wantBlocking := []PluginCount{
		{Plugin: "NodeResourcesFit", Nodes: 3, Reasons: []string{"Insufficient nvidia.com/gpu"}},
		{Plugin: "", Nodes: 1, Reasons: []string{schedule.NotInDomainReason}},
		{Plugin: "NodeUnschedulable", Nodes: 1, Reasons: []string{"node(s) were unschedulable"}},
	}
	if diff := cmp.Diff(wantBlocking, e.Blocking); diff != "" {
		t.Errorf("blocking (-want +got):\n%s", diff)
	}
	wantDomains := []DomainHold{
		{Value: "zone-a", Nodes: 1, Holds: 0, Skipped: "needs at least 24 nvidia.com/gpu, has 4 free on the 1 node(s) the members may use",
			Usable: 1, Resource: "nvidia.com/gpu", Free: 4, Allocatable: 4},
		{Value: "zone-b", Nodes: 4, Holds: 1, Skipped: "needs at least 24 nvidia.com/gpu, has 8 free on the 3 node(s) the members may use",
			Usable: 3, Resource: "nvidia.com/gpu", Free: 8, Allocatable: 24},
	}
	if diff := cmp.Diff(wantDomains, e.Domains); diff != "" {
		t.Errorf("domains (-want +got):\n%s", diff)
	}
	if !e.Validity.Valid || e.Placement.MaxPlaceable != 1 {
		t.Errorf("validity %+v, max placeable %d", e.Validity, e.Placement.MaxPlaceable)
	}
	if want := []string{"spec.subGroupPolicy (2 sub-groups): " + volcano.NotEvaluatedSubGroupPolicy}; !cmp.Equal(want, e.NotEvaluated) {
		t.Errorf("not evaluated %q, want %q", e.NotEvaluated, want)
	}

	if diff := cmp.Diff([]SuggestionKind{SuggestShortfall, SuggestPreempt, SuggestAddNodes, SuggestLowerMinMember}, kinds(e.Suggestions)); diff != "" {
		t.Fatalf("suggestions (-want +got):\n%s\n%+v", diff, e.Suggestions)
	}

	// Two members are left; the nodes of zone-b that could take them (all
	// but the cordoned one) have no GPU free after w-0: short 16. cpu and
	// memory are plentiful.
	short := find(e.Suggestions, SuggestShortfall)
	wantShort := []ResourceShortfall{{Name: "nvidia.com/gpu", Short: 16, Need: 16, MostFreeNode: "zone-b-0"}}
	if diff := cmp.Diff(wantShort, short.Shortfall); diff != "" {
		t.Errorf("shortfall (-want +got):\n%s", diff)
	}
	if want := "short 16 nvidia.com/gpu in topology.kubernetes.io/zone=zone-b: it holds 1 of minimum 3 member(s) at once; the 2 left need 8 nvidia.com/gpu each on one node, and the most free on any node it may run on is 0 (zone-b-0)"; short.Message != want {
		t.Errorf("shortfall message\n got %q\nwant %q", short.Message, want)
	}

	// Preemption first takes l2 (its eviction violates no budget), then,
	// for the last member, l1 despite its budget: there is no other way.
	pre := find(e.Suggestions, SuggestPreempt)
	var victims []string
	for _, v := range pre.Victims {
		victims = append(victims, fmt.Sprintf("%s/%s@%s:%d", v.Pod.Namespace, v.Pod.Name, v.Node, v.Priority))
	}
	if diff := cmp.Diff([]string{"batch/l2@zone-b-2:10", "batch/l1@zone-b-1:10"}, victims); diff != "" {
		t.Errorf("victims (-want +got):\n%s", diff)
	}
	if !pre.Verified || pre.PDBViolations != 1 {
		t.Errorf("preemption verified %v with %d budget violations, want verified with 1", pre.Verified, pre.PDBViolations)
	}

	// Two more nodes like zone-b-0 are needed; one is not enough.
	add := find(e.Suggestions, SuggestAddNodes)
	if add.NewNodes.Like != "zone-b-0" || add.NewNodes.Count != 2 || !add.Verified || add.NewNodes.Domain != "zone-b" {
		t.Errorf("add nodes %+v verified %v, want 2 like zone-b-0 in zone-b", add.NewNodes, add.Verified)
	}
	// Uncordoning zone-b-3 alone leaves the gang one short: no repair.
	if lower := find(e.Suggestions, SuggestLowerMinMember); lower.MinMember != 1 || !lower.Verified {
		t.Errorf("lower min member %+v", lower)
	}

	// Nothing in the snapshot was changed by the what-ifs.
	if len(snap.Pods) != 2 || len(snap.Nodes) != 5 || !snap.Nodes[4].Spec.Unschedulable {
		t.Errorf("the snapshot was changed: %d pods, %d nodes", len(snap.Pods), len(snap.Nodes))
	}
}

// TestExplainPod covers a lone pod: the summary line is the cycle's
// FailedScheduling message, the taint is named, and repairs are found.
func TestExplainPod(t *testing.T) {
	cordoned := testutil.MakeNode().Name("n-0").Capacity(testutil.Res{"cpu": "8", "memory": "32Gi"}).Unschedulable().
		Taint(corev1.TaintNodeUnschedulable, "", corev1.TaintEffectNoSchedule).Obj()
	notReady := testutil.MakeNode().Name("n-1").Capacity(testutil.Res{"cpu": "8", "memory": "32Gi"}).
		Taint(corev1.TaintNodeNotReady, "", corev1.TaintEffectNoSchedule).Obj()
	dedicated := testutil.MakeNode().Name("n-2").Capacity(testutil.Res{"cpu": "8", "memory": "32Gi"}).
		Taint("dedicated", "infra", corev1.TaintEffectNoSchedule).Obj()
	small := testutil.MakeNode().Name("n-3").Capacity(testutil.Res{"cpu": "2", "memory": "32Gi"}).Obj()
	pod := testutil.MakePod().Namespace("web").Name("api").Req(testutil.Res{"cpu": "4"}).Obj()
	snap := &schedule.Snapshot{Nodes: []*corev1.Node{cordoned, notReady, dedicated, small}, Pods: []*corev1.Pod{pod}}

	e, err := Pod(context.Background(), snap, pod, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const wantMessage = "0/4 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable, 2 node(s) had untolerated taint(s). " +
		"preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
	if e.Verdict != VerdictUnschedulable || e.Message != wantMessage {
		t.Errorf("%s: %q\nwant Unschedulable: %q", e.Verdict, e.Message, wantMessage)
	}
	wantNodes := []summary{
		{Name: "n-0", Plugin: "NodeUnschedulable", Taint: "node.kubernetes.io/unschedulable:NoSchedule"},
		{Name: "n-1", Plugin: "TaintToleration", Taint: "node.kubernetes.io/not-ready:NoSchedule"},
		{Name: "n-2", Plugin: "TaintToleration", Taint: "dedicated=infra:NoSchedule"},
		{Name: "n-3", Plugin: "NodeResourcesFit"},
	}
	if diff := cmp.Diff(wantNodes, summarize(e.Nodes)); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	// The toleration opens room the cluster has: it leads the shortfall
	// (rankOpeners).
	if diff := cmp.Diff([]SuggestionKind{SuggestTolerate, SuggestShortfall, SuggestAddNodes, SuggestRepairNodes}, kinds(e.Suggestions)); diff != "" {
		t.Fatalf("suggestions (-want +got):\n%s\n%+v", diff, e.Suggestions)
	}
	// n-2 takes the pod but for its dedicated taint: tolerate it. The
	// cordon and not-ready taints are for repairing nodes, not tolerating.
	tolerate := find(e.Suggestions, SuggestTolerate)
	if want := "the room exists behind taints: tolerating dedicated=infra:NoSchedule would let 1 node(s) take the pod that only these taints keep off " +
		"(add to the pod template's tolerations: {key: dedicated, operator: Equal, value: infra, effect: NoSchedule}); then it fits on n-2"; tolerate.Message != want || !tolerate.Verified {
		t.Errorf("tolerate message\n got %q\nwant %q", tolerate.Message, want)
	}
	repair := find(e.Suggestions, SuggestRepairNodes)
	want := []NodeRepair{
		{Node: "n-0", Uncordon: true, Taints: []corev1.Taint{{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}}},
		{Node: "n-1", Taints: []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}},
	}
	if diff := cmp.Diff(want, repair.Repairs); diff != "" || repair.Together || !repair.Verified {
		t.Errorf("repairs (-want +got):\n%s", diff)
	}
	if want := "uncordoning n-0, or getting n-1 Ready again (its taints node.kubernetes.io/not-ready:NoSchedule go): any one of them would make room; then it fits on n-0"; repair.Message != want {
		t.Errorf("repair message\n got %q\nwant %q", repair.Message, want)
	}
	// The smallest node shape that holds it: like the cordoned n-0 (8 cpu),
	// uncordoned, rather than the tainted n-2 it does not tolerate.
	if add := find(e.Suggestions, SuggestAddNodes); add.NewNodes.Like != "n-0" || add.NewNodes.Count != 1 {
		t.Errorf("add nodes %+v", add.NewNodes)
	}
}

// TestExplainNodesTooSmall: when no node of the cluster could hold the pod
// even empty, explain says what the largest nodes offer and suggests no
// made-up node shape.
func TestExplainNodesTooSmall(t *testing.T) {
	var nodes []*corev1.Node
	for i := range 2 {
		nodes = append(nodes, testutil.MakeNode().Name(fmt.Sprintf("gpu-%d", i)).Label("pool", "gpu").Label(zoneKey, fmt.Sprintf("z-%d", i)).
			Capacity(testutil.Res{"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "4"}).Taint("nvidia.com/gpu", "present", corev1.TaintEffectNoSchedule).Obj())
	}
	nodes = append(nodes, testutil.MakeNode().Name("cpu-0").Capacity(testutil.Res{"cpu": "96", "memory": "128Gi"}).Obj())
	pod := testutil.MakePod().Namespace("ml").Name("big").Req(testutil.Res{"cpu": "40500m", "memory": "300Gi", "nvidia.com/gpu": "8"}).
		Toleration("nvidia.com/gpu", "", corev1.TaintEffectNoSchedule).Obj()
	pod.Spec.NodeSelector = map[string]string{"pool": "gpu"}
	snap := &schedule.Snapshot{Nodes: nodes, Pods: []*corev1.Pod{pod}}
	e, err := Pod(context.Background(), snap, pod, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if add := find(e.Suggestions, SuggestAddNodes); add != nil {
		t.Errorf("a node shape the cluster does not have was suggested: %s", add.Message)
	}
	if s := find(e.Suggestions, SuggestShortfall); s != nil {
		t.Errorf("a shortfall, where no node is large enough: %s", s.Message)
	}
	small := find(e.Suggestions, SuggestNodesTooSmall)
	if small == nil {
		t.Fatalf("no NodesTooSmall: %+v", kinds(e.Suggestions))
	}
	// cpu fits on cpu-0 (96): only GPUs and memory are beyond every node.
	want := []LargestNode{
		{Name: "nvidia.com/gpu", Request: 8, Allocatable: 4, Node: "gpu-0"},
		{Name: corev1.ResourceMemory, Request: 300 << 30, Allocatable: 256 << 30, Node: "gpu-0"},
	}
	if diff := testutil.Diff(want, small.Largest); diff != "" {
		t.Errorf("largest (-want +got):\n%s", diff)
	}
	if want := "no node of the cluster could hold ml/big even empty: it requests 8 nvidia.com/gpu, the most any node has allocatable is 4 (gpu-0); 300Gi memory, the most any node has allocatable is 256Gi (gpu-0); adding nodes of the shapes the cluster has would not help, so lower the request"; small.Message != want {
		t.Errorf("message\n got %q\nwant %q", small.Message, want)
	}
}

// TestExplainAddsShapeFromAnotherDomain: the only nodes that could hold a
// member of a gang confined to one zone are in another zone; the shape is
// added to the gang's zone with that zone's label.
func TestExplainAddsShapeFromAnotherDomain(t *testing.T) {
	nodes := []*corev1.Node{
		testutil.MakeNode().Name("small-a").Label(zoneKey, "a").Capacity(testutil.Res{"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "2"}).Obj(),
		testutil.MakeNode().Name("small-a2").Label(zoneKey, "a").Capacity(testutil.Res{"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "2"}).Obj(),
		testutil.MakeNode().Name("big-b").Label(zoneKey, "b").Capacity(testutil.Res{"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "8"}).Obj(),
	}
	// One member runs in zone a, which pins the gang there; the other
	// needs 8 GPUs, which only zone b's node has.
	members := testutil.GPUWorkers(1, "2")
	members[0].Spec.NodeName = "small-a"
	members[0].Status.Phase = corev1.PodRunning
	members = append(members, testutil.GPUWorkers(2, "8")[1])
	snap := &schedule.Snapshot{Nodes: nodes, Pods: members}
	e, err := Gang(context.Background(), snap, gangOf(2, members), Options{PlaceOptions: gang.PlaceOptions{TopologyKey: zoneKey}})
	if err != nil {
		t.Fatal(err)
	}
	if e.Verdict != VerdictUnschedulable {
		t.Fatalf("verdict %s: %s", e.Verdict, e.Message)
	}
	add := find(e.Suggestions, SuggestAddNodes)
	if add == nil {
		t.Fatalf("no node shape suggested: %+v", kinds(e.Suggestions))
	}
	if n := add.NewNodes; n.Like != "big-b" || n.Count != 1 || n.Labels[zoneKey] != "a" || n.Domain != "a" {
		t.Errorf("shape: like %s x%d, zone label %q, domain %q; want big-b x1 in zone a", n.Like, n.Count, n.Labels[zoneKey], n.Domain)
	}
}

// TestExplainSelectorTypo: a node selector or required node affinity that
// asks for a label no node carries gets the nearest label nodes do carry,
// with their count, proven by placing; no node with the typo is suggested.
func TestExplainSelectorTypo(t *testing.T) {
	const product = "nvidia.com/gpu.product"
	var nodes []*corev1.Node
	for i := range 3 {
		nodes = append(nodes, testutil.MakeNode().Name(fmt.Sprintf("a100-%d", i)).Label(product, "NVIDIA-A100-SXM4-80GB").
			Capacity(testutil.Res{"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "8"}).Obj())
	}
	nodes = append(nodes, testutil.MakeNode().Name("h100-0").Label(product, "NVIDIA-H100-80GB-HBM3").
		Capacity(testutil.Res{"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "8"}).Obj())
	pod := func() *corev1.Pod {
		return testutil.MakePod().Namespace("ml").Name("p").Req(testutil.Res{"nvidia.com/gpu": "8"}).Obj()
	}
	explainPod := func(p *corev1.Pod) *Explanation {
		t.Helper()
		e, err := Pod(context.Background(), &schedule.Snapshot{Nodes: nodes, Pods: []*corev1.Pod{p}}, p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if e.Verdict != VerdictUnschedulable {
			t.Fatalf("verdict %s", e.Verdict)
		}
		if add := find(e.Suggestions, SuggestAddNodes); add != nil {
			t.Errorf("a node was suggested: %s", add.Message)
		}
		if s := find(e.Suggestions, SuggestShortfall); s != nil {
			t.Errorf("a resource shortfall where no node could take the pod whatever it has free: %s", s.Message)
		}
		return e
	}

	t.Run("nodeSelector value", func(t *testing.T) {
		p := pod()
		p.Spec.NodeSelector = map[string]string{product: "NVIDIA-A100-SXM4-80G"}
		s := find(explainPod(p).Suggestions, SuggestSelector)
		if s == nil || !s.Verified {
			t.Fatalf("no verified Selector suggestion: %+v", s)
		}
		want := []SelectorFix{{Field: "nodeSelector", Key: product, Value: "NVIDIA-A100-SXM4-80G", NewKey: product, NewValue: "NVIDIA-A100-SXM4-80GB", Nodes: 3}}
		if diff := testutil.Diff(want, s.Selector); diff != "" {
			t.Errorf("fixes (-want +got):\n%s", diff)
		}
		if want := "nodeSelector nvidia.com/gpu.product=NVIDIA-A100-SXM4-80G: no node carries it; the nearest label nodes carry is nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB (3 node(s)); then it fits on a100-0"; s.Message != want {
			t.Errorf("message\n got %q\nwant %q", s.Message, want)
		}
	})
	t.Run("affinity key", func(t *testing.T) {
		p := pod()
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "nvidia.com/gpu.prodcut", Operator: corev1.NodeSelectorOpIn, Values: []string{"NVIDIA-H100-80GB-HBM3"}},
			}}},
		}}}
		s := find(explainPod(p).Suggestions, SuggestSelector)
		if s == nil || !s.Verified {
			t.Fatalf("no verified Selector suggestion: %+v", s)
		}
		want := []SelectorFix{{Field: "nodeAffinity", Key: "nvidia.com/gpu.prodcut", Value: "NVIDIA-H100-80GB-HBM3", NewKey: product, NewValue: "NVIDIA-H100-80GB-HBM3", Nodes: 1}}
		if diff := testutil.Diff(want, s.Selector); diff != "" {
			t.Errorf("fixes (-want +got):\n%s", diff)
		}
	})
	t.Run("nothing near", func(t *testing.T) {
		p := pod()
		p.Spec.NodeSelector = map[string]string{product: "TPU-v5"}
		s := find(explainPod(p).Suggestions, SuggestSelector)
		if s == nil || s.Verified || len(s.Selector) != 0 {
			t.Fatalf("want an unverified Selector diagnosis, got %+v", s)
		}
		if want := "no node carries nvidia.com/gpu.product=TPU-v5; nodes carry nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB (3), NVIDIA-H100-80GB-HBM3 (1)"; s.Message != want {
			t.Errorf("message\n got %q\nwant %q", s.Message, want)
		}
	})
	t.Run("labels carried, not together", func(t *testing.T) {
		p := pod()
		p.Spec.NodeSelector = map[string]string{product: "NVIDIA-H100-80GB-HBM3", corev1.LabelHostname: "a100-0"}
		// Both labels exist, on different nodes: no label is misspelt.
		if s := find(explainPod(p).Suggestions, SuggestSelector); s != nil {
			t.Errorf("a selector fix for labels nodes carry: %s", s.Message)
		}
	})
}

// TestExplainFits checks the FITS column: free resources divided by the
// requests, one for host ports, and cycle by cycle for pods whose fit
// depends on other pods.
func TestExplainFits(t *testing.T) {
	node := testutil.MakeNode().Name("n").Capacity(testutil.Res{"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "8", "pods": "6"}).Obj()
	busy := testutil.MakePod().Namespace("x").Name("busy").Node("n").Req(testutil.Res{"nvidia.com/gpu": "1"}).Obj()
	base := func() *testutil.PodWrapper {
		return testutil.MakePod().Namespace("ml").Name("p").Label("app", "p").Req(testutil.Res{"cpu": "8", "nvidia.com/gpu": "2"})
	}
	withPort := base().Obj()
	withPort.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
	antiAffine := base().Obj()
	antiAffine.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "p"}}, TopologyKey: corev1.LabelHostname,
		}},
	}}
	spread := base().Obj()
	spread.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname,
		WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "p"}}}}
	fewSlots := base().Req(testutil.Res{"cpu": "1"}).Obj()

	tests := []struct {
		name string
		pod  *corev1.Pod
		want int
	}{
		// 7 GPUs free / 2 = 3; 64 cpu / 8 = 8; 5 pod slots.
		{"free resources", base().Obj(), 3},
		{"host ports: one", withPort, 1},
		{"anti-affinity to itself: one, counted cycle by cycle", antiAffine, 1},
		// One node: spreading over one hostname never skews.
		{"spread over one node: as resources allow", spread, 3},
		{"pod slots", fewSlots, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := &schedule.Snapshot{Nodes: []*corev1.Node{node}, Pods: []*corev1.Pod{busy}}
			e, err := Pod(context.Background(), snap, tt.pod, Options{NoSuggestions: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Nodes[0]; got.Fits != tt.want || got.FitsAtMost {
				t.Errorf("fits %d (at most %v), want %d", got.Fits, got.FitsAtMost, tt.want)
			}
		})
	}
}

// TestExplainGated: a gated pod is Gated, and the suggestion to remove its
// gates is proven by placing it without them.
func TestExplainGated(t *testing.T) {
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 1)}
	pod := testutil.MakePod().Namespace("ml").Name("eval").Req(testutil.Res{"nvidia.com/gpu": "4"}).SchedulingGate("example.com/wait").Obj()
	e, err := Pod(context.Background(), snap, pod, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Verdict != VerdictGated || e.Message != "waiting for scheduling gates: [example.com/wait]" {
		t.Errorf("%s: %q", e.Verdict, e.Message)
	}
	if len(e.Nodes) != 1 || !e.Nodes[0].Feasible || e.Nodes[0].Fits != 2 {
		t.Errorf("nodes %+v, want zone-a-0 feasible for 2", e.Nodes)
	}
	want := []Suggestion{{Kind: SuggestUngate, Verified: true, Gates: []string{"example.com/wait"},
		Message: "removing the scheduling gate(s) example.com/wait would let kube-scheduler try it: then it fits on zone-a-0",
		Why:     "it fits: only its scheduling gates keep kube-scheduler from trying it"}}
	if diff := cmp.Diff(want, e.Suggestions); diff != "" {
		t.Errorf("suggestions (-want +got):\n%s", diff)
	}
}

// TestExplainSchedulableGang: the table is about the largest pending
// member on the snapshot as is, with the plan in the PLACED column.
func TestExplainSchedulableGang(t *testing.T) {
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 3)}
	members := testutil.GPUWorkers(2, "8")
	launcher := testutil.MakePod().Namespace("ml").Name("launcher").Req(testutil.Res{"cpu": "1"}).PodGroup("train").Obj()
	g := gangOf(3, append([]*corev1.Pod{launcher}, members...))
	e, err := Gang(context.Background(), snap, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Verdict != VerdictSchedulable || e.Message != "gang ml/train placed: 0 running and 3 to place, minimum 3" {
		t.Errorf("%s: %q", e.Verdict, e.Message)
	}
	if e.Pod.Name != "w-0" || e.Blocked || len(e.Suggestions) != 0 {
		t.Errorf("table about %s (blocked %v), suggestions %v", e.Pod.Name, e.Blocked, e.Suggestions)
	}
	var placed, fits []int
	for _, n := range e.Nodes {
		placed, fits = append(placed, n.Placed), append(fits, n.Fits)
	}
	if diff := cmp.Diff([]int{1, 1, 1}, placed); diff != "" {
		t.Errorf("placed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 1, 1}, fits); diff != "" {
		t.Errorf("fits (-want +got):\n%s", diff)
	}
}

func TestFormatTaint(t *testing.T) {
	for _, tt := range []struct {
		taint corev1.Taint
		want  string
	}{
		{corev1.Taint{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}, "nvidia.com/gpu=present:NoSchedule"},
		{corev1.Taint{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoExecute}, "node.kubernetes.io/not-ready:NoExecute"},
	} {
		if got := gang.FormatTaint(&tt.taint); got != tt.want {
			t.Errorf("FormatTaint = %q, want %q", got, tt.want)
		}
	}
}

// BenchmarkExplainBlocks explains a 1,300-pod gang confined to one of 4
// blocks of 1,280 nodes, 20 members short: the node table, the shortfall
// and every what-if (the node shape's count is found by placing again).
func BenchmarkExplainBlocks(b *testing.B) {
	nodes, pods := testutil.BlockCluster()
	snap := &schedule.Snapshot{Nodes: nodes, Pods: pods}
	g := gangOf(1300, testutil.GPUWorkers(1300, "6"))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e, err := Gang(context.Background(), snap, g, Options{PlaceOptions: gang.PlaceOptions{TopologyKey: testutil.BlockKey}})
		if err != nil {
			b.Fatal(err)
		}
		if e.Verdict != VerdictUnschedulable || find(e.Suggestions, SuggestAddNodes) == nil {
			b.Fatalf("%s: %s; %+v", e.Verdict, e.Message, kinds(e.Suggestions))
		}
	}
}

// A pending member being deleted will never run: explain neither places it
// nor counts it among the members left to fit, as placement does not.
func TestExplainIgnoresPendingMemberBeingDeleted(t *testing.T) {
	members := testutil.GPUWorkers(3, "8")
	members[0].DeletionTimestamp = &metav1.Time{}
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-b", 1)}
	e, err := Gang(context.Background(), snap, gangOf(2, members), Options{})
	if err != nil {
		t.Fatal(err)
	}
	short := find(e.Suggestions, SuggestShortfall)
	if short == nil || len(short.Shortfall) != 1 || short.Shortfall[0].Need != 8 {
		t.Errorf("shortfall %+v, want 8 nvidia.com/gpu needed (one member left)", short)
	}
	if lower := find(e.Suggestions, SuggestLowerMinMember); lower == nil || !strings.Contains(lower.Message, "1 wait(s)") {
		t.Errorf("lower minimum %+v, want 1 member waiting", lower)
	}
}

const zoneKey = corev1.LabelTopologyZone

// gangOf is a gang of no scheduler of its own (a -l selector's): its members
// are scheduled, and preempt, pod by pod. Native gangs have rules of their
// own (gang.NativeGate, the pod group preemption), tested apart.
func gangOf(min int32, members []*corev1.Pod) *gang.Gang {
	return &gang.Gang{Source: gang.SourceSelector, Namespace: "ml", Name: "train", MinMember: min, Members: members}
}

// When preemption ranks several nodes equally (kube-scheduler then picks at
// random), the suggestion says the choice is not unique and lists them.
func TestExplainPreemptionTies(t *testing.T) {
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 4)}
	for i := range 4 {
		snap.Pods = append(snap.Pods, lowPod(fmt.Sprintf("low-%d", i), fmt.Sprintf("zone-a-%d", i)))
	}
	pod := highWorkers(1)[0]
	// A pod alone: one naming a PodGroup the snapshot lacks waits for it.
	pod.Spec.SchedulingGroup = nil
	e, err := Pod(context.Background(), snap, pod, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := find(e.Suggestions, SuggestPreempt)
	if s == nil {
		t.Fatalf("no preemption suggestion: %+v", e.Suggestions)
	}
	want := []string{"zone-a-0", "zone-a-1", "zone-a-2", "zone-a-3"}
	if diff := cmp.Diff(want, s.EquallyGood); diff != "" || !strings.Contains(s.Message, "among 4 equally good ones (zone-a-0, zone-a-1, zone-a-2, zone-a-3)") {
		t.Errorf("equally good (-want +got):\n%s\nmessage: %s", diff, s.Message)
	}
}

// A preemption with many victims is summarized on screen (counts per
// priority class, nodes, the first names); a few are named one by one.
func TestDescribeVictims(t *testing.T) {
	var victims []Victim
	for i := range 1000 {
		class, prio := "batch-low", int32(100)
		if i%4 == 0 {
			class, prio = "training-low", 1000
		}
		pod := testutil.MakePod().Namespace("ml").Name(fmt.Sprintf("v-%d", i)).Priority(class, prio).Obj()
		victims = append(victims, Victim{Pod: pod, Node: fmt.Sprintf("n-%d", i), Priority: prio})
	}
	want := "1000 lower-priority pod(s) on 1000 node(s) would make room: 250 of training-low (priority 1000), 750 of batch-low (priority 100); " +
		"first ml/v-0 on n-0, ml/v-1 on n-1, ml/v-2 on n-2, ... (-o json lists every victim)"
	if got := describeVictims(victims); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	want = "2 lower-priority pod(s) would make room: ml/v-0 (priority 1000, training-low) on n-0; ml/v-1 (priority 100, batch-low) on n-1"
	if got := describeVictims(victims[:2]); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// A gang's preemption what-if weighs every node, not the first tenth
// kube-scheduler stops at: here the first 120 nodes by name would each lose
// four 1-GPU pods to take a member, the 80 after them one 4-GPU pod. Ten
// members cost ten victims, not forty.
func TestExplainGangPreemptionFewestVictims(t *testing.T) {
	snap := &schedule.Snapshot{Nodes: append(testutil.GPUNodes("a", 120), testutil.GPUNodes("b", 80)...)}
	small := func(name, node string) *corev1.Pod {
		return testutil.MakePod().Namespace("batch").Name(name).Node(node).Priority("low", 10).Req(testutil.Res{"nvidia.com/gpu": "1"}).Obj()
	}
	for i := range 120 {
		for j := range 4 {
			snap.Pods = append(snap.Pods, small(fmt.Sprintf("small-%d-%d", i, j), fmt.Sprintf("a-%d", i)))
		}
	}
	for i := range 80 {
		snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("batch").Name(fmt.Sprintf("big-%d", i)).Node(fmt.Sprintf("b-%d", i)).
			Priority("low", 10).Req(testutil.Res{"nvidia.com/gpu": "4"}).Obj())
	}
	e, err := Gang(context.Background(), snap, gangOf(10, highWorkers(10)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := find(e.Suggestions, SuggestPreempt)
	if s == nil {
		t.Fatalf("no preemption suggestion: %+v", e.Suggestions)
	}
	nodes := map[string]bool{}
	for _, v := range s.Victims {
		if !strings.HasPrefix(v.Pod.Name, "big-") {
			t.Errorf("victim %s on %s: a node with four victims was chosen over one with one", v.Pod.Name, v.Node)
		}
		nodes[v.Node] = true
	}
	if len(s.Victims) != 10 || len(nodes) != 10 || !s.Verified {
		t.Errorf("%d victims on %d nodes (verified %v), want 10 on 10: %s", len(s.Victims), len(nodes), s.Verified, s.Message)
	}
	// The summary line is still kube-scheduler's own choice for the
	// blocked member, from its window of the first nodes by name.
	if !strings.Contains(e.Message, "preemption: found a potential placement for pod on node a-") {
		t.Errorf("summary %q, want kube-scheduler's pick among the first nodes", e.Message)
	}
}

// A native gang whose members' priority is not the PodGroup's is refused by
// kube-scheduler before any member is tried (validatePodGroup): explain says
// Unschedulable with its words, and the one suggestion is the fix, not a
// preemption or more nodes.
func TestExplainNativePriorityMismatch(t *testing.T) {
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 1)}
	members := highWorkers(2) // priority 1000, the PodGroup none
	g := &gang.Gang{Source: gang.SourceNative, Namespace: "ml", Name: "train", MinMember: 2, Members: members}
	e, err := Gang(context.Background(), snap, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Verdict != VerdictUnschedulable || !strings.Contains(e.Message, "all pods in a single pod group should have the same priority as the pod group's priority, got 1000 and 0") {
		t.Errorf("%s: %s", e.Verdict, e.Message)
	}
	if len(e.Suggestions) != 1 || e.Suggestions[0].Kind != SuggestSourceGate || !strings.Contains(e.Suggestions[0].Message, `spec.priorityClassName to "high"`) {
		t.Errorf("suggestions %+v, want only the fix", e.Suggestions)
	}
}
