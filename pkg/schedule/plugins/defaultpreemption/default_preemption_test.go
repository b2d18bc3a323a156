package defaultpreemption_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/defaultpreemption"
)

// The priorities and sizes of kube-scheduler's default_preemption_test.go.
const (
	negPriority      int32 = -100
	lowPriority      int32 = 0
	midPriority      int32 = 100
	highPriority     int32 = 1000
	veryHighPriority int32 = 10000
)

var (
	onePodRes    = testutil.Res{corev1.ResourcePods: "1"}
	nodeRes      = testutil.Res{corev1.ResourceCPU: "200m", corev1.ResourceMemory: "400"}
	smallRes     = testutil.Res{corev1.ResourceCPU: "100m", corev1.ResourceMemory: "100"}
	mediumRes    = testutil.Res{corev1.ResourceCPU: "200m", corev1.ResourceMemory: "200"}
	largeRes     = testutil.Res{corev1.ResourceCPU: "300m", corev1.ResourceMemory: "300"}
	veryLargeRes = testutil.Res{corev1.ResourceCPU: "500m", corev1.ResourceMemory: "500"}

	epoch = time.Unix(0, 0)
)

func epochPlus(ns int) time.Time { return epoch.Add(time.Duration(ns)) }

// pod is a pending pod with a priority; prio nil leaves Spec.Priority unset (0).
func pod(name string, prio *int32) *testutil.PodWrapper {
	w := testutil.MakePod().Name(name).UID(name)
	if prio != nil {
		w.Priority(fmt.Sprintf("p%d", *prio), *prio)
	}
	return w
}

func prio(p int32) *int32 { return &p }

// onNode is a running pod with a priority and requests.
func onNode(name, node string, p int32, req testutil.Res) *corev1.Pod {
	w := pod(name, &p).Node(node)
	if req != nil {
		w.Req(req)
	}
	return w.Obj()
}

func node(name string, r testutil.Res) *corev1.Node {
	return testutil.MakeNode().Name(name).Capacity(r).Obj()
}

func nodes(r testutil.Res, names ...string) []*corev1.Node {
	out := make([]*corev1.Node, len(names))
	for i, n := range names {
		out[i] = node(n, r)
	}
	return out
}

func newPlugin(t testing.TB, args runtime.Object, h framework.Handle) *defaultpreemption.DefaultPreemption {
	t.Helper()
	p, err := defaultpreemption.New(args, h)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p.(*defaultpreemption.DefaultPreemption)
}

func int32p(v int32) *int32 { return &v }

func TestNew(t *testing.T) {
	h := newFakeRunner(nil, nil, nil)
	tests := []struct {
		name    string
		args    runtime.Object
		handle  framework.Handle
		wantErr string
	}{
		{name: "nil args take the defaults", args: nil, handle: h},
		{name: "empty args take the defaults", args: &configv1.DefaultPreemptionArgs{}, handle: h},
		{name: "typed nil args take the defaults", args: (*configv1.DefaultPreemptionArgs)(nil), handle: h},
		{name: "explicit valid args", args: &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: int32p(0), MinCandidateNodesAbsolute: int32p(5)}, handle: h},
		{
			name:    "percentage above 100",
			args:    &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: int32p(101)},
			handle:  h,
			wantErr: "minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]",
		},
		{
			name:    "negative percentage",
			args:    &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: int32p(-1)},
			handle:  h,
			wantErr: "minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]",
		},
		{
			name:    "negative absolute",
			args:    &configv1.DefaultPreemptionArgs{MinCandidateNodesAbsolute: int32p(-1)},
			handle:  h,
			wantErr: "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
		},
		{
			name:   "both zero",
			args:   &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: int32p(0), MinCandidateNodesAbsolute: int32p(0)},
			handle: h,
			wantErr: "[minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute, " +
				"minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage]",
		},
		{
			name:    "wrong args type",
			args:    &configv1.NodeResourcesFitArgs{},
			handle:  h,
			wantErr: "got args of type *v1.NodeResourcesFitArgs, want *DefaultPreemptionArgs",
		},
		{
			name:    "handle that cannot run plugins",
			handle:  h.SnapshotHandle,
			wantErr: "DefaultPreemption: handle *framework.SnapshotHandle does not implement framework.PluginsRunner",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := defaultpreemption.New(tt.args, tt.handle)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err == nil && p.Name() != defaultpreemption.Name {
				t.Errorf("Name() = %q, want %q", p.Name(), defaultpreemption.Name)
			}
		})
	}
}

func TestParseArgsDefaults(t *testing.T) {
	tests := []struct {
		name string
		args runtime.Object
		want defaultpreemption.Args
	}{
		{name: "nil", want: defaultpreemption.Args{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}},
		{
			name: "only percentage set",
			args: &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: int32p(40)},
			want: defaultpreemption.Args{MinCandidateNodesPercentage: 40, MinCandidateNodesAbsolute: 100},
		},
		{
			name: "only absolute set",
			args: &configv1.DefaultPreemptionArgs{MinCandidateNodesAbsolute: int32p(0)},
			want: defaultpreemption.Args{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := defaultpreemption.ParseArgs(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
	in := &configv1.DefaultPreemptionArgs{}
	if _, err := defaultpreemption.ParseArgs(in); err != nil || in.MinCandidateNodesPercentage != nil {
		t.Errorf("ParseArgs changed its input or failed: %v, %+v", err, in)
	}
}

// TestPostFilter recreates kube-scheduler's TestPostFilter (cases that do not
// need extenders or workload-aware preemption) and adds the eligibility and
// message-formatting cases.
func TestPostFilter(t *testing.T) {
	tests := []struct {
		name       string
		pod        *corev1.Pod
		pods       []*corev1.Pod
		pdbs       []*policyv1.PodDisruptionBudget
		nodes      []*corev1.Node
		statuses   framework.NodeToStatus // nil: run the fake filter on every node
		wantResult *framework.PostFilterResult
		wantStatus *framework.Status
	}{
		{
			name:       "pod with higher priority can be made schedulable",
			pod:        pod("p", prio(highPriority)).Obj(),
			pods:       []*corev1.Pod{pod("p1", nil).Node("node1").Obj()},
			nodes:      []*corev1.Node{node("node1", onePodRes)},
			statuses:   unschedulable("node1"),
			wantResult: &framework.PostFilterResult{NominatedNodeName: "node1"},
			wantStatus: framework.NewStatus(framework.Success, "preemption: found a potential placement for pod on node node1, preempting 1 victims"),
		},
		{
			name:       "pod with tied priority is still unschedulable",
			pod:        pod("p", nil).Obj(),
			pods:       []*corev1.Pod{pod("p1", nil).Node("node1").Obj()},
			nodes:      []*corev1.Node{node("node1", onePodRes)},
			statuses:   unschedulable("node1"),
			wantStatus: framework.NewStatus(framework.Unschedulable, "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."),
		},
		{
			name:  "preemption should respect filteredNodesStatuses",
			pod:   pod("p", prio(highPriority)).Obj(),
			pods:  []*corev1.Pod{pod("p1", nil).Node("node1").Obj()},
			nodes: []*corev1.Node{node("node1", onePodRes)},
			statuses: statusMap{
				"node1": framework.NewStatus(framework.UnschedulableAndUnresolvable),
			},
			wantStatus: framework.NewStatus(framework.Unschedulable, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
		},
		{
			name:       "preemption should respect absent NodeToStatus entry meaning UnschedulableAndUnresolvable",
			pod:        pod("p", prio(highPriority)).Obj(),
			pods:       []*corev1.Pod{pod("p1", nil).Node("node1").Obj()},
			nodes:      []*corev1.Node{node("node1", onePodRes)},
			statuses:   statusMap{},
			wantStatus: framework.NewStatus(framework.Unschedulable, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
		},
		{
			name: "pod can be made schedulable on one node",
			pod:  pod("p", prio(midPriority)).Obj(),
			pods: []*corev1.Pod{
				pod("p1", prio(highPriority)).Node("node1").Obj(),
				pod("p2", prio(lowPriority)).Node("node2").Obj(),
			},
			nodes:      nodes(onePodRes, "node1", "node2"),
			statuses:   unschedulable("node1", "node2"),
			wantResult: &framework.PostFilterResult{NominatedNodeName: "node2"},
			wantStatus: framework.NewStatus(framework.Success, "preemption: found a potential placement for pod on node node2, preempting 1 victims"),
		},
		{
			name: "pod can be made schedulable on minHighestPriority node",
			pod:  pod("p", prio(veryHighPriority)).Obj(),
			pods: []*corev1.Pod{
				pod("p1", prio(highPriority)).Label("pdb", "non-violating").Node("node1").Obj(),
				pod("p2", prio(lowPriority)).Label("pdb", "violating").Node("node1").Obj(),
				pod("p3", prio(midPriority)).Label("pdb", "violating").Node("node2").Obj(),
			},
			pdbs: []*policyv1.PodDisruptionBudget{
				makePDB("violating-pdb", map[string]string{"pdb": "violating"}, 0),
				makePDB("non-violating-pdb", map[string]string{"pdb": "non-violating"}, math.MaxInt32),
			},
			nodes:      nodes(onePodRes, "node1", "node2"),
			statuses:   unschedulable("node1", "node2"),
			wantResult: &framework.PostFilterResult{NominatedNodeName: "node2"},
			wantStatus: framework.NewStatus(framework.Success, "preemption: found a potential placement for pod on node node2, preempting 1 victims"),
		},
		{
			name: "no candidate nodes found, no enough resource after removing low priority pods",
			pod:  pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				pod("p1", nil).Node("node1").Obj(),
				pod("p2", nil).Node("node2").Obj(),
			},
			nodes:      nodes(nodeRes, "node1", "node2"),
			statuses:   unschedulable("node1", "node2"),
			wantStatus: framework.NewStatus(framework.Unschedulable, "preemption: 0/2 nodes are available: 2 Insufficient cpu."),
		},
		{
			name: "no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
			pod:  pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				pod("p1", prio(highPriority)).Node("node1").Obj(),
				pod("p2", nil).Node("node2").Obj(),
				pod("p3", prio(highPriority)).Node("node3").Obj(),
			},
			nodes:      []*corev1.Node{node("node1", onePodRes), node("node2", nodeRes), node("node3", onePodRes)},
			statuses:   unschedulable("node1", "node2", "node3"),
			wantStatus: framework.NewStatus(framework.Unschedulable, "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod."),
		},
		{
			name: "no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don't have enough CPU resource",
			pod:  pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				pod("p1", nil).Node("node1").Obj(),
				pod("p2", nil).Node("node2").Obj(),
			},
			nodes: nodes(nodeRes, "node1", "node2", "node3", "node4"),
			statuses: statusMap{
				"node1": framework.NewStatus(framework.Unschedulable),
				"node2": framework.NewStatus(framework.Unschedulable),
				"node4": framework.NewStatus(framework.UnschedulableAndUnresolvable),
			},
			wantStatus: framework.NewStatus(framework.Unschedulable, "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling."),
		},
		{
			name:       "only one node but failed with TestPlugin",
			pod:        pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods:       []*corev1.Pod{pod("p1", nil).Node("node1").Obj()},
			nodes:      []*corev1.Node{testutil.MakeNode().Name("node1").Capacity(largeRes).Label("error", "true").Obj()},
			statuses:   unschedulable("node1"),
			wantStatus: framework.NewStatus(framework.Error, `preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p`),
		},
		{
			name: "one failed with TestPlugin and the other pass",
			pod:  pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				pod("p1", nil).Node("node1").Obj(),
				pod("p2", nil).Node("node2").Req(mediumRes).Obj(),
			},
			nodes: []*corev1.Node{
				testutil.MakeNode().Name("node1").Capacity(largeRes).Label("error", "true").Obj(),
				testutil.MakeNode().Name("node2").Capacity(largeRes).Obj(),
			},
			statuses:   unschedulable("node1", "node2"),
			wantResult: &framework.PostFilterResult{NominatedNodeName: "node2"},
			wantStatus: framework.NewStatus(framework.Success, "preemption: found a potential placement for pod on node node2, preempting 1 victims"),
		},
		{
			name: "errors on several nodes are joined, deduplicated, as apimachinery's aggregate does",
			pod:  pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				pod("p1", nil).Node("node1").Obj(),
				pod("p2", nil).Node("node2").Obj(),
				pod("p3", nil).Node("node3").Obj(),
			},
			nodes: []*corev1.Node{
				testutil.MakeNode().Name("node1").Capacity(largeRes).Label("error", "true").Obj(),
				testutil.MakeNode().Name("node2").Capacity(largeRes).Label("error", "true").Obj(),
				// The pod fits here beside p3: no victim, which is an error too.
				testutil.MakeNode().Name("node3").Capacity(largeRes).Obj(),
			},
			statuses: unschedulable("node1", "node2", "node3"),
			wantStatus: framework.NewStatus(framework.Error,
				`preemption: [running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p, expected at least one victim pod on node "node3"]`),
		},
		{
			name:       "preemptionPolicy Never is not eligible",
			pod:        preemptNever(pod("p", prio(highPriority)).Obj()),
			pods:       []*corev1.Pod{pod("p1", nil).Node("node1").Obj()},
			nodes:      []*corev1.Node{node("node1", onePodRes)},
			statuses:   unschedulable("node1"),
			wantStatus: framework.NewStatus(framework.Unschedulable, "preemption: not eligible due to preemptionPolicy=Never."),
		},
		{
			name:       "a lower-priority pod terminating by preemption on the nominated node makes the pod wait",
			pod:        nominated(pod("p", prio(highPriority)).Obj(), "node1"),
			pods:       []*corev1.Pod{terminating(pod("p1", prio(lowPriority)).Node("node1").Obj(), true)},
			nodes:      []*corev1.Node{node("node1", onePodRes)},
			statuses:   unschedulable("node1"),
			wantStatus: framework.NewStatus(framework.Unschedulable, "preemption: not eligible due to a terminating pod on the nominated node."),
		},
		{
			name:       "a pod terminating for another reason on the nominated node does not",
			pod:        nominated(pod("p", prio(highPriority)).Obj(), "node1"),
			pods:       []*corev1.Pod{terminating(pod("p1", prio(lowPriority)).Node("node1").Obj(), false)},
			nodes:      []*corev1.Node{node("node1", onePodRes)},
			statuses:   unschedulable("node1"),
			wantResult: &framework.PostFilterResult{NominatedNodeName: "node1"},
			wantStatus: framework.NewStatus(framework.Success, "preemption: found a potential placement for pod on node node1, preempting 1 victims"),
		},
		{
			name:       "a nominated node now UnschedulableAndUnresolvable lets the pod preempt again",
			pod:        nominated(pod("p", prio(highPriority)).Obj(), "node1"),
			pods:       []*corev1.Pod{terminating(pod("p1", prio(lowPriority)).Node("node1").Obj(), true), pod("p2", nil).Node("node2").Obj()},
			nodes:      nodes(onePodRes, "node1", "node2"),
			statuses:   statusMap{"node1": framework.NewStatus(framework.UnschedulableAndUnresolvable), "node2": framework.NewStatus(framework.Unschedulable)},
			wantResult: &framework.PostFilterResult{NominatedNodeName: "node2"},
			wantStatus: framework.NewStatus(framework.Success, "preemption: found a potential placement for pod on node node2, preempting 1 victims"),
		},
		{
			name:       "a terminating pod of equal priority on the nominated node is no earlier victim",
			pod:        nominated(pod("p", prio(highPriority)).Obj(), "node1"),
			pods:       []*corev1.Pod{terminating(pod("p1", prio(highPriority)).Node("node1").Obj(), true)},
			nodes:      []*corev1.Node{node("node1", onePodRes)},
			statuses:   unschedulable("node1"),
			wantStatus: framework.NewStatus(framework.Unschedulable, "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."),
		},
		{
			name:       "every node unresolvable: preemption is not helpful anywhere",
			pod:        pod("p", prio(highPriority)).Obj(),
			pods:       []*corev1.Pod{pod("p1", nil).Node("node01").Obj()},
			nodes:      nodesLabelled(13, "filter", "unresolvable"),
			wantStatus: framework.NewStatus(framework.Unschedulable, "preemption: 0/13 nodes are available: 13 Preemption is not helpful for scheduling."),
		},
		{
			name: "one node without victims, two nodes unresolvable",
			pod:  pod("p", prio(highPriority)).Obj(),
			pods: []*corev1.Pod{pod("p1", prio(highPriority)).Node("node1").Obj()},
			nodes: []*corev1.Node{
				node("node1", onePodRes),
				testutil.MakeNode().Name("node2").Label("filter", "unresolvable").Obj(),
				testutil.MakeNode().Name("node3").Label("filter", "unresolvable").Obj(),
			},
			wantStatus: framework.NewStatus(framework.Unschedulable, "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."),
		},
		{
			name:  "the histogram sorts as strings: 10 before 2",
			pod:   pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods:  podPerNode(12),
			nodes: append(nodes(onePodRes, numbered(1, 10)...), nodes(nodeRes, numbered(11, 12)...)...),
			wantStatus: framework.NewStatus(framework.Unschedulable,
				"preemption: 0/12 nodes are available: 10 No preemption victims found for incoming pod, 2 Insufficient cpu."),
		},
		{
			name:  "every reason of a node counts",
			pod:   pod("p", prio(highPriority)).Req(veryLargeRes).Obj(),
			pods:  []*corev1.Pod{pod("p1", nil).Node("node01").Obj()},
			nodes: []*corev1.Node{node("node01", nodeRes)},
			wantStatus: framework.NewStatus(framework.Unschedulable,
				"preemption: 0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory."),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeRunner(tt.nodes, tt.pods, tt.pdbs)
			statuses := tt.statuses
			if statuses == nil {
				statuses = h.filterAll(tt.pod)
			}
			pl := newPlugin(t, nil, h)
			gotResult, gotStatus := pl.PostFilter(context.Background(), newFakeCycleState(), tt.pod, statuses)
			if diff := cmp.Diff(tt.wantStatus.String(), gotStatus.String()); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			// The victims travel in the result too; which ones is asserted
			// by the Evaluate tests, so only the nomination is compared here.
			if gotResult != nil {
				if len(gotResult.Victims) == 0 {
					t.Errorf("result nominates %s with no victims", gotResult.NominatedNodeName)
				}
				gotResult = &framework.PostFilterResult{NominatedNodeName: gotResult.NominatedNodeName}
			}
			if diff := cmp.Diff(tt.wantResult, gotResult); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func numbered(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("node%02d", i))
	}
	return out
}

func nodesLabelled(n int, k, v string) []*corev1.Node {
	var out []*corev1.Node
	for _, name := range numbered(1, n) {
		out = append(out, testutil.MakeNode().Name(name).Capacity(onePodRes).Label(k, v).Obj())
	}
	return out
}

// podPerNode puts a high-priority pod on node01..node10 and a low-priority
// one on the nodes after, up to node<last>.
func podPerNode(last int) []*corev1.Pod {
	var out []*corev1.Pod
	for i, name := range numbered(1, last) {
		p := highPriority
		if i >= 10 {
			p = lowPriority
		}
		out = append(out, pod("p-"+name, &p).Node(name).Obj())
	}
	return out
}

// candidate is a Candidate by names, for comparing.
type candidate struct {
	Node             string
	Victims          []string
	NumPDBViolations int
}

func summarize(cs []*defaultpreemption.Candidate) []candidate {
	var out []candidate
	for _, c := range cs {
		s := candidate{Node: c.NodeName, NumPDBViolations: c.NumPDBViolations}
		for _, v := range c.Victims {
			s.Victims = append(s.Victims, v.Name)
		}
		out = append(out, s)
	}
	return out
}

// TestEvaluateCandidates recreates kube-scheduler's TestDryRunPreemption and
// TestSelectVictimsOnNode cases on a resource-fit filter. Victims are listed
// in the order kube-scheduler returns them (most important first), where its
// test sorts them by name; candidates come non-violating first, each group in
// node-name order.
func TestEvaluateCandidates(t *testing.T) {
	tests := []struct {
		name           string
		args           *configv1.DefaultPreemptionArgs
		nodeNames      []string
		nodeRes        testutil.Res // veryLargeRes when nil
		pod            *corev1.Pod
		pods           []*corev1.Pod
		pdbs           []*policyv1.PodDisruptionBudget
		wantCandidates []candidate
		wantBest       string
		wantMessage    string
		// wantFilterCalls counts the filter runs of the dry run; the
		// reference figures are kube-scheduler's expectedNumFilterCalled.
		wantFilterCalls int64
	}{
		{
			name:      "a pod that fits on both nodes when lower priority pods are preempted",
			nodeNames: []string{"node1", "node2"},
			pod:       pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				onNode("p1", "node1", midPriority, largeRes),
				onNode("p2", "node2", midPriority, largeRes),
			},
			wantCandidates: []candidate{
				{Node: "node1", Victims: []string{"p1"}},
				{Node: "node2", Victims: []string{"p2"}},
			},
			wantBest:        "node1",
			wantMessage:     "found a potential placement for pod on node node1, preempting 1 victims",
			wantFilterCalls: 4,
		},
		{
			name:      "a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen",
			nodeNames: []string{"node1", "node2"},
			pod:       pod("p", prio(lowPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				onNode("p1", "node1", midPriority, largeRes),
				onNode("p2", "node2", midPriority, largeRes),
			},
			wantMessage:     "0/2 nodes are available: 2 No preemption victims found for incoming pod.",
			wantFilterCalls: 0,
		},
		{
			name:      "medium priority pod is preempted, but lower priority one stays as it is small",
			nodeNames: []string{"node1", "node2"},
			pod:       pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				onNode("p1.1", "node1", lowPriority, smallRes),
				onNode("p1.2", "node1", midPriority, largeRes),
				onNode("p2", "node2", midPriority, largeRes),
			},
			wantCandidates: []candidate{
				{Node: "node1", Victims: []string{"p1.2"}},
				{Node: "node2", Victims: []string{"p2"}},
			},
			wantBest:        "node1",
			wantMessage:     "found a potential placement for pod on node node1, preempting 1 victims",
			wantFilterCalls: 5,
		},
		{
			name:      "mixed priority pods are preempted",
			nodeNames: []string{"node1", "node2"},
			pod:       pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				onNode("p1.1", "node1", midPriority, smallRes),
				onNode("p1.2", "node1", lowPriority, smallRes),
				onNode("p1.3", "node1", midPriority, mediumRes),
				onNode("p1.4", "node1", highPriority, smallRes),
				onNode("p2", "node2", highPriority, largeRes),
			},
			wantCandidates:  []candidate{{Node: "node1", Victims: []string{"p1.3", "p1.2"}}},
			wantBest:        "node1",
			wantMessage:     "found a potential placement for pod on node node1, preempting 2 victims",
			wantFilterCalls: 4,
		},
		{
			name:      "mixed priority pods are preempted, pick later StartTime one when priorities are equal",
			nodeNames: []string{"node1", "node2"},
			pod:       pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				started(onNode("p1.1", "node1", lowPriority, smallRes), epochPlus(5)),
				started(onNode("p1.2", "node1", lowPriority, smallRes), epochPlus(4)),
				started(onNode("p1.3", "node1", midPriority, mediumRes), epochPlus(3)),
				started(onNode("p1.4", "node1", highPriority, smallRes), epochPlus(2)),
				started(onNode("p2", "node2", highPriority, largeRes), epochPlus(1)),
			},
			wantCandidates:  []candidate{{Node: "node1", Victims: []string{"p1.3", "p1.1"}}},
			wantBest:        "node1",
			wantMessage:     "found a potential placement for pod on node node1, preempting 2 victims",
			wantFilterCalls: 4,
		},
		{
			name:      "preemption with violation of same pdb",
			nodeNames: []string{"node1"},
			pod:       pod("p", prio(highPriority)).Req(veryLargeRes).Obj(),
			pods: []*corev1.Pod{
				pod("p1.1", prio(midPriority)).Label("app", "foo").Node("node1").Req(mediumRes).Obj(),
				pod("p1.2", prio(midPriority)).Label("app", "foo").Node("node1").Req(mediumRes).Obj(),
			},
			pdbs:            []*policyv1.PodDisruptionBudget{makePDB("pdb", map[string]string{"app": "foo"}, 1)},
			wantCandidates:  []candidate{{Node: "node1", Victims: []string{"p1.1", "p1.2"}, NumPDBViolations: 1}},
			wantBest:        "node1",
			wantMessage:     "found a potential placement for pod on node node1, preempting 2 victims",
			wantFilterCalls: 3,
		},
		{
			name:      "preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't belong to DisruptedPods",
			nodeNames: []string{"node1"},
			pod:       pod("p", prio(highPriority)).Req(veryLargeRes).Obj(),
			pods: []*corev1.Pod{
				pod("p1.1", prio(midPriority)).Label("app", "foo").Node("node1").Req(mediumRes).Obj(),
				pod("p1.2", prio(midPriority)).Label("app", "foo").Node("node1").Req(mediumRes).Obj(),
			},
			pdbs:            []*policyv1.PodDisruptionBudget{makePDB("pdb", map[string]string{"app": "foo"}, 1, "p2")},
			wantCandidates:  []candidate{{Node: "node1", Victims: []string{"p1.1", "p1.2"}, NumPDBViolations: 1}},
			wantBest:        "node1",
			wantMessage:     "found a potential placement for pod on node node1, preempting 2 victims",
			wantFilterCalls: 3,
		},
		{
			name:      "preemption with violation of the pdb with pod whose eviction was processed, the victim belongs to DisruptedPods",
			nodeNames: []string{"node1"},
			pod:       pod("p", prio(highPriority)).Req(veryLargeRes).Obj(),
			pods: []*corev1.Pod{
				pod("p1.1", prio(midPriority)).Label("app", "foo").Node("node1").Req(mediumRes).Obj(),
				pod("p1.2", prio(midPriority)).Label("app", "foo").Node("node1").Req(mediumRes).Obj(),
			},
			pdbs:            []*policyv1.PodDisruptionBudget{makePDB("pdb", map[string]string{"app": "foo"}, 1, "p1.2")},
			wantCandidates:  []candidate{{Node: "node1", Victims: []string{"p1.1", "p1.2"}}},
			wantBest:        "node1",
			wantMessage:     "found a potential placement for pod on node node1, preempting 2 victims",
			wantFilterCalls: 3,
		},
		{
			name:      "preemption with violation of the pdb with pod whose eviction was processed, the victim which belongs to DisruptedPods is treated as 'nonViolating'",
			nodeNames: []string{"node1"},
			pod:       pod("p", prio(highPriority)).Req(veryLargeRes).Obj(),
			pods: []*corev1.Pod{
				pod("p1.1", prio(midPriority)).Label("app", "foo").Node("node1").Req(mediumRes).Obj(),
				pod("p1.2", prio(midPriority)).Label("app", "foo").Node("node1").Req(mediumRes).Obj(),
				pod("p1.3", prio(midPriority)).Label("app", "foo").Node("node1").Req(mediumRes).Obj(),
			},
			pdbs:            []*policyv1.PodDisruptionBudget{makePDB("pdb", map[string]string{"app": "foo"}, 1, "p1.3")},
			wantCandidates:  []candidate{{Node: "node1", Victims: []string{"p1.1", "p1.2", "p1.3"}, NumPDBViolations: 1}},
			wantBest:        "node1",
			wantMessage:     "found a potential placement for pod on node node1, preempting 3 victims",
			wantFilterCalls: 4,
		},
		{
			name:      "PDB: prefer a non-violating victim of higher priority over a violating victim of lower priority",
			nodeNames: []string{"node1"},
			pod:       pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				pod("victim-pdb", prio(lowPriority)).Label("app", "foo").Node("node1").Req(mediumRes).Obj(),
				pod("victim-no-pdb", prio(midPriority)).Node("node1").Req(mediumRes).Obj(),
			},
			pdbs:            []*policyv1.PodDisruptionBudget{makePDB("pdb", map[string]string{"app": "foo"}, 0)},
			wantCandidates:  []candidate{{Node: "node1", Victims: []string{"victim-no-pdb"}}},
			wantBest:        "node1",
			wantMessage:     "found a potential placement for pod on node node1, preempting 1 victims",
			wantFilterCalls: 3,
		},
		{
			name:      "PDB: prefer the lower priority pod when preemption without a violation is not possible",
			nodeNames: []string{"node1"},
			pod:       pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				pod("v1", prio(lowPriority)).Label("app", "foo").Node("node1").Req(mediumRes).Obj(),
				pod("v2", prio(midPriority)).Label("app", "foo").Node("node1").Req(mediumRes).Obj(),
			},
			pdbs:            []*policyv1.PodDisruptionBudget{makePDB("pdb", map[string]string{"app": "foo"}, 0)},
			wantCandidates:  []candidate{{Node: "node1", Victims: []string{"v1"}, NumPDBViolations: 1}},
			wantBest:        "node1",
			wantMessage:     "found a potential placement for pod on node node1, preempting 1 victims",
			wantFilterCalls: 3,
		},
		{
			name:      "a PDB in another namespace or with an empty selector protects nothing",
			nodeNames: []string{"node1"},
			pod:       pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				pod("v1", prio(lowPriority)).Label("app", "foo").Node("node1").Req(largeRes).Obj(),
			},
			pdbs: []*policyv1.PodDisruptionBudget{
				func() *policyv1.PodDisruptionBudget {
					p := makePDB("other-ns", map[string]string{"app": "foo"}, 0)
					p.Namespace = "other"
					return p
				}(),
				makePDB("empty", nil, 0),
			},
			wantCandidates:  []candidate{{Node: "node1", Victims: []string{"v1"}}},
			wantBest:        "node1",
			wantMessage:     "found a potential placement for pod on node node1, preempting 1 victims",
			wantFilterCalls: 2,
		},
		{
			// The node was reported Unschedulable, yet the pod fits without
			// evicting anything: kube-scheduler calls that an error.
			name:            "a node that needs no victim is an error",
			nodeNames:       []string{"node1"},
			pod:             pod("p", prio(highPriority)).Req(smallRes).Obj(),
			pods:            []*corev1.Pod{onNode("v1", "node1", lowPriority, smallRes)},
			wantMessage:     `expected at least one victim pod on node "node1"`,
			wantFilterCalls: 2,
		},
		{
			// kube-scheduler starts at a random offset (node5 in its test);
			// we start at node1.
			name:      "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
			args:      &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: int32p(40), MinCandidateNodesAbsolute: int32p(1)},
			nodeNames: []string{"node1", "node2", "node3", "node4", "node5"},
			pod:       pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				onNode("p1", "node1", midPriority, largeRes),
				onNode("p2", "node2", midPriority, largeRes),
				onNode("p3", "node3", midPriority, largeRes),
				onNode("p4", "node4", midPriority, largeRes),
				onNode("p5", "node5", midPriority, largeRes),
			},
			wantCandidates: []candidate{
				{Node: "node1", Victims: []string{"p1"}},
				{Node: "node2", Victims: []string{"p2"}},
			},
			wantBest:    "node1",
			wantMessage: "found a potential placement for pod on node node1, preempting 1 victims",
			// Nodes of the batch after the second candidate are tried and
			// their outcome dropped.
			wantFilterCalls: 10,
		},
		{
			name:      "some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
			args:      &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: int32p(40), MinCandidateNodesAbsolute: int32p(1)},
			nodeNames: []string{"node1", "node2", "node3", "node4", "node5"},
			pod:       pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				onNode("p1", "node1", midPriority, largeRes),
				onNode("p2", "node2", veryHighPriority, largeRes),
				onNode("p3", "node3", midPriority, largeRes),
				onNode("p4", "node4", midPriority, largeRes),
				onNode("p5", "node5", veryHighPriority, largeRes),
			},
			wantCandidates: []candidate{
				{Node: "node1", Victims: []string{"p1"}},
				{Node: "node3", Victims: []string{"p3"}},
			},
			wantBest:        "node1",
			wantMessage:     "found a potential placement for pod on node node1, preempting 1 victims",
			wantFilterCalls: 6,
		},
		{
			name:      "preemption looks past numCandidates until a non-PDB violating node is found",
			args:      &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: int32p(40), MinCandidateNodesAbsolute: int32p(2)},
			nodeNames: []string{"node1", "node2", "node3", "node4", "node5"},
			pod:       pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				pod("p1", prio(midPriority)).Label("app", "foo").Node("node1").Req(largeRes).Obj(),
				pod("p2", prio(midPriority)).Label("app", "foo").Node("node2").Req(largeRes).Obj(),
				onNode("p3", "node3", midPriority, largeRes),
				onNode("p4", "node4", midPriority, largeRes),
				pod("p5", prio(midPriority)).Label("app", "foo").Node("node5").Req(largeRes).Obj(),
			},
			pdbs: []*policyv1.PodDisruptionBudget{makePDB("pdb", map[string]string{"app": "foo"}, 0)},
			// node1 and node2 violate the budget and fill the violating list;
			// node3 is the first non-violating candidate, and the dry run stops.
			wantCandidates: []candidate{
				{Node: "node3", Victims: []string{"p3"}},
				{Node: "node1", Victims: []string{"p1"}, NumPDBViolations: 1},
				{Node: "node2", Victims: []string{"p2"}, NumPDBViolations: 1},
			},
			wantBest:        "node3",
			wantMessage:     "found a potential placement for pod on node node3, preempting 1 victims",
			wantFilterCalls: 10,
		},
		{
			name:      "zero candidates wanted: every candidate is dropped, as kube-scheduler's full lists drop them",
			args:      &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: int32p(1), MinCandidateNodesAbsolute: int32p(0)},
			nodeNames: []string{"node1", "node2"},
			pod:       pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				onNode("p1", "node1", midPriority, largeRes),
				onNode("p2", "node2", midPriority, largeRes),
			},
			wantMessage:     "0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
			wantFilterCalls: 4,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.nodeRes
			if r == nil {
				r = veryLargeRes
			}
			h := newFakeRunner(nodes(r, tt.nodeNames...), tt.pods, tt.pdbs)
			var args runtime.Object
			if tt.args != nil {
				args = tt.args
			}
			pl := newPlugin(t, args, h)
			best, candidates, status := pl.Evaluate(context.Background(), newFakeCycleState(), tt.pod, unschedulable(tt.nodeNames...))
			if diff := cmp.Diff(tt.wantCandidates, summarize(candidates)); diff != "" {
				t.Errorf("candidates (-want +got):\n%s", diff)
			}
			gotBest := ""
			if best != nil {
				gotBest = best.NodeName
			}
			if gotBest != tt.wantBest {
				t.Errorf("best = %q, want %q", gotBest, tt.wantBest)
			}
			if diff := cmp.Diff(tt.wantMessage, status.Message()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if got := h.filterCalls.Load(); got != tt.wantFilterCalls {
				t.Errorf("filter calls = %d, want %d", got, tt.wantFilterCalls)
			}
		})
	}
}

// TestPickCandidate recreates kube-scheduler's TestSelectBestCandidate:
// pickOneNodeForPreemption's criteria in order.
func TestPickCandidate(t *testing.T) {
	tests := []struct {
		name      string
		nodeNames []string
		pod       *corev1.Pod
		pods      []*corev1.Pod
		pdbs      []*policyv1.PodDisruptionBudget
		want      string
	}{
		{
			// kube-scheduler picks either at random; we take the first by name.
			name:      "a tie on every criterion goes to the first node by name",
			nodeNames: []string{"node2", "node1"},
			pod:       pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				started(onNode("p1", "node1", midPriority, largeRes), epoch),
				started(onNode("p2", "node2", midPriority, largeRes), epoch),
			},
			want: "node1",
		},
		{
			name:      "fewest PDB violations wins over lower priority victims",
			nodeNames: []string{"node1", "node2"},
			pod:       pod("p", prio(highPriority)).Req(largeRes).Obj(),
			pods: []*corev1.Pod{
				pod("p1", prio(negPriority)).Label("app", "foo").Node("node1").Req(largeRes).Obj(),
				onNode("p2", "node2", midPriority, largeRes),
			},
			pdbs: []*policyv1.PodDisruptionBudget{makePDB("pdb", map[string]string{"app": "foo"}, 0)},
			want: "node2",
		},
		{
			name:      "node with min highest priority pod is picked",
			nodeNames: []string{"node1", "node2", "node3"},
			pod:       pod("p", prio(highPriority)).Req(veryLargeRes).Obj(),
			pods: []*corev1.Pod{
				started(onNode("p1.1", "node1", midPriority, mediumRes), epoch),
				started(onNode("p1.2", "node1", midPriority, largeRes), epoch),
				started(onNode("p2.1", "node2", midPriority, mediumRes), epoch),
				started(onNode("p2.2", "node2", lowPriority, mediumRes), epoch),
				started(onNode("p3.1", "node3", lowPriority, mediumRes), epoch),
				started(onNode("p3.2", "node3", lowPriority, mediumRes), epoch),
			},
			want: "node3",
		},
		{
			name:      "when highest priorities are the same, minimum sum of priorities is picked",
			nodeNames: []string{"node1", "node2", "node3"},
			pod:       pod("p", prio(highPriority)).Req(veryLargeRes).Obj(),
			pods: []*corev1.Pod{
				started(onNode("p1.1", "node1", midPriority, mediumRes), epoch),
				started(onNode("p1.2", "node1", midPriority, largeRes), epoch),
				started(onNode("p2.1", "node2", midPriority, largeRes), epoch),
				started(onNode("p2.2", "node2", lowPriority, mediumRes), epoch),
				started(onNode("p3.1", "node3", midPriority, mediumRes), epoch),
				started(onNode("p3.2", "node3", midPriority, mediumRes), epoch),
			},
			want: "node2",
		},
		{
			name:      "when highest priority and sum are the same, minimum number of pods is picked",
			nodeNames: []string{"node1", "node2", "node3"},
			pod:       pod("p", prio(highPriority)).Req(veryLargeRes).Obj(),
			pods: []*corev1.Pod{
				started(onNode("p1.1", "node1", midPriority, smallRes), epoch),
				started(onNode("p1.2", "node1", negPriority, smallRes), epoch),
				started(onNode("p1.3", "node1", midPriority, smallRes), epoch),
				started(onNode("p1.4", "node1", negPriority, smallRes), epoch),
				started(onNode("p2.1", "node2", midPriority, largeRes), epoch),
				started(onNode("p2.2", "node2", negPriority, mediumRes), epoch),
				started(onNode("p3.1", "node3", midPriority, mediumRes), epoch),
				started(onNode("p3.2", "node3", negPriority, smallRes), epoch),
				started(onNode("p3.3", "node3", lowPriority, smallRes), epoch),
			},
			want: "node2",
		},
		{
			name:      "sum of adjusted priorities is considered",
			nodeNames: []string{"node1", "node2", "node3"},
			pod:       pod("p", prio(highPriority)).Req(veryLargeRes).Obj(),
			pods: []*corev1.Pod{
				started(onNode("p1.1", "node1", midPriority, smallRes), epoch),
				started(onNode("p1.2", "node1", negPriority, smallRes), epoch),
				started(onNode("p1.3", "node1", negPriority, smallRes), epoch),
				started(onNode("p2.1", "node2", midPriority, largeRes), epoch),
				started(onNode("p2.2", "node2", negPriority, mediumRes), epoch),
				started(onNode("p3.1", "node3", midPriority, mediumRes), epoch),
				started(onNode("p3.2", "node3", negPriority, smallRes), epoch),
				started(onNode("p3.3", "node3", lowPriority, smallRes), epoch),
			},
			want: "node2",
		},
		{
			name:      "non-overlapping lowest high priority, sum priorities, and number of pods",
			nodeNames: []string{"node1", "node2", "node3", "node4"},
			pod:       pod("p", prio(veryHighPriority)).Req(veryLargeRes).Obj(),
			pods: []*corev1.Pod{
				started(onNode("p1.1", "node1", midPriority, smallRes), epoch),
				started(onNode("p1.2", "node1", lowPriority, smallRes), epoch),
				started(onNode("p1.3", "node1", lowPriority, smallRes), epoch),
				started(onNode("p2.1", "node2", highPriority, largeRes), epoch),
				started(onNode("p3.1", "node3", midPriority, mediumRes), epoch),
				started(onNode("p3.2", "node3", lowPriority, smallRes), epoch),
				started(onNode("p3.3", "node3", lowPriority, smallRes), epoch),
				started(onNode("p3.4", "node3", lowPriority, mediumRes), epoch),
				started(onNode("p4.1", "node4", midPriority, mediumRes), epoch),
				started(onNode("p4.2", "node4", midPriority, smallRes), epoch),
				started(onNode("p4.3", "node4", midPriority, smallRes), epoch),
				started(onNode("p4.4", "node4", negPriority, smallRes), epoch),
			},
			want: "node1",
		},
		{
			name:      "same priority, same number of victims, different start time for each node's pod",
			nodeNames: []string{"node1", "node2", "node3"},
			pod:       pod("p", prio(highPriority)).Req(veryLargeRes).Obj(),
			pods: []*corev1.Pod{
				started(onNode("p1.1", "node1", midPriority, mediumRes), epochPlus(2)),
				started(onNode("p1.2", "node1", midPriority, mediumRes), epochPlus(2)),
				started(onNode("p2.1", "node2", midPriority, mediumRes), epochPlus(3)),
				started(onNode("p2.2", "node2", midPriority, mediumRes), epochPlus(3)),
				started(onNode("p3.1", "node3", midPriority, mediumRes), epochPlus(1)),
				started(onNode("p3.2", "node3", midPriority, mediumRes), epochPlus(1)),
			},
			want: "node2",
		},
		{
			name:      "same priority, same number of victims, different start time for all pods",
			nodeNames: []string{"node1", "node2", "node3"},
			pod:       pod("p", prio(highPriority)).Req(veryLargeRes).Obj(),
			pods: []*corev1.Pod{
				started(onNode("p1.1", "node1", midPriority, mediumRes), epochPlus(4)),
				started(onNode("p1.2", "node1", midPriority, mediumRes), epochPlus(2)),
				started(onNode("p2.1", "node2", midPriority, mediumRes), epochPlus(5)),
				started(onNode("p2.2", "node2", midPriority, mediumRes), epochPlus(1)),
				started(onNode("p3.1", "node3", midPriority, mediumRes), epochPlus(3)),
				started(onNode("p3.2", "node3", midPriority, mediumRes), epochPlus(6)),
			},
			want: "node3",
		},
		{
			name:      "different priority, same number of victims, different start time for all pods",
			nodeNames: []string{"node1", "node2", "node3"},
			pod:       pod("p", prio(highPriority)).Req(veryLargeRes).Obj(),
			pods: []*corev1.Pod{
				started(onNode("p1.1", "node1", lowPriority, mediumRes), epochPlus(4)),
				started(onNode("p1.2", "node1", midPriority, mediumRes), epochPlus(2)),
				started(onNode("p2.1", "node2", midPriority, mediumRes), epochPlus(6)),
				started(onNode("p2.2", "node2", lowPriority, mediumRes), epochPlus(1)),
				started(onNode("p3.1", "node3", lowPriority, mediumRes), epochPlus(3)),
				started(onNode("p3.2", "node3", midPriority, mediumRes), epochPlus(5)),
			},
			want: "node2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeRunner(nodes(veryLargeRes, tt.nodeNames...), tt.pods, tt.pdbs)
			pl := newPlugin(t, nil, h)
			best, _, status := pl.Evaluate(context.Background(), newFakeCycleState(), tt.pod, unschedulable(tt.nodeNames...))
			if best == nil {
				t.Fatalf("no candidate: %v", status)
			}
			if best.NodeName != tt.want {
				t.Errorf("best = %q, want %q", best.NodeName, tt.want)
			}
		})
	}
}

// TestEvaluateLeavesSnapshotAlone checks the what-if works on copies: the
// snapshot's nodes keep their pods and the cycle state its data.
func TestEvaluateLeavesSnapshotAlone(t *testing.T) {
	ns := nodes(veryLargeRes, "node1", "node2")
	pods := []*corev1.Pod{
		onNode("p1.1", "node1", lowPriority, smallRes),
		onNode("p1.2", "node1", midPriority, largeRes),
		onNode("p2", "node2", midPriority, largeRes),
	}
	h := newFakeRunner(ns, pods, nil)
	state := newFakeCycleState()
	preemptor := pod("p", prio(highPriority)).Req(largeRes).Obj()
	before := map[string][2]int64{}
	for _, ni := range h.List() {
		before[ni.Name()] = [2]int64{int64(len(ni.Pods)), ni.Requested.MilliCPU}
	}

	best, _, status := newPlugin(t, nil, h).Evaluate(context.Background(), state, preemptor, unschedulable("node1", "node2"))
	if best == nil {
		t.Fatalf("no candidate: %v", status)
	}
	for _, ni := range h.List() {
		if got := [2]int64{int64(len(ni.Pods)), ni.Requested.MilliCPU}; got != before[ni.Name()] {
			t.Errorf("node %s changed: pods and cpu %v, want %v", ni.Name(), got, before[ni.Name()])
		}
	}
	data, _ := state.Read(fakeStateKey)
	if diff := cmp.Diff(&fakeState{}, data, cmp.AllowUnexported(fakeState{})); diff != "" {
		t.Errorf("cycle state changed (-want +got):\n%s", diff)
	}
}

// TestEvaluateIsDeterministic runs the same what-if many times on many nodes
// (several dry-run batches in parallel) and expects one answer.
func TestEvaluateIsDeterministic(t *testing.T) {
	h, preemptor, statuses := preemptionCluster(300)
	pl := newPlugin(t, &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: int32p(0), MinCandidateNodesAbsolute: int32p(40)}, h)
	var first []candidate
	for i := range 20 {
		_, candidates, status := pl.Evaluate(context.Background(), newFakeCycleState(), preemptor, statuses)
		if !status.IsSuccess() {
			t.Fatalf("run %d: %v", i, status)
		}
		got := summarize(candidates)
		if i == 0 {
			first = got
			if len(got) != 40 || got[0].Node != "node-00000" {
				t.Fatalf("want 40 candidates from node-00000, got %d from %s", len(got), got[0].Node)
			}
			continue
		}
		if diff := cmp.Diff(first, got); diff != "" {
			t.Fatalf("run %d differs (-first +got):\n%s", i, diff)
		}
	}
}

// preemptionCluster is n nodes of 4 CPUs, each running one low-priority pod
// of 3 CPUs, and a high-priority pod of 2 CPUs that fits nowhere unless one
// of them is evicted.
func preemptionCluster(n int) (*fakeRunner, *corev1.Pod, statusMap) {
	ns := make([]*corev1.Node, n)
	pods := make([]*corev1.Pod, n)
	for i := range n {
		name := fmt.Sprintf("node-%05d", i)
		ns[i] = testutil.MakeNode().Name(name).Capacity(testutil.Res{corev1.ResourceCPU: "4", corev1.ResourceMemory: "16Gi"}).Obj()
		pods[i] = onNode("low-"+name, name, lowPriority, testutil.Res{corev1.ResourceCPU: "3", corev1.ResourceMemory: "1Gi"})
	}
	h := newFakeRunner(ns, pods, nil)
	preemptor := pod("p", prio(highPriority)).Req(testutil.Res{corev1.ResourceCPU: "2", corev1.ResourceMemory: "1Gi"}).Obj()
	return h, preemptor, h.filterAll(preemptor)
}

func BenchmarkPostFilter(b *testing.B) {
	h, preemptor, statuses := preemptionCluster(5000)
	pl := newPlugin(b, nil, h)
	state := newFakeCycleState()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, s := pl.PostFilter(context.Background(), state, preemptor, statuses); !s.IsSuccess() {
			b.Fatal(s)
		}
	}
}

// BenchmarkPostFilterNotHelpful is the worst case for the dry run: every node
// is tried and none has a victim.
func BenchmarkPostFilterNotHelpful(b *testing.B) {
	h, preemptor, statuses := preemptionCluster(5000)
	preemptor.Spec.Priority = prio(lowPriority)
	pl := newPlugin(b, nil, h)
	state := newFakeCycleState()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, s := pl.PostFilter(context.Background(), state, preemptor, statuses); !strings.HasSuffix(s.Message(), "5000 No preemption victims found for incoming pod.") {
			b.Fatal(s)
		}
	}
}
