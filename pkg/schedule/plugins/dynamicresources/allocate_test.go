package dynamicresources_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

const driver = "gpu.example.com"

// draCluster is three nodes: a with 4 A100s, b with 2 A100s, c with 4 H100s.
func draCluster() *schedule.Snapshot {
	snap := &schedule.Snapshot{Namespaces: []*corev1.Namespace{testutil.MakeNamespace("default")}}
	for _, n := range []string{"a", "b", "c"} {
		snap.Nodes = append(snap.Nodes, testutil.MakeNode().Name(n).Capacity(testutil.Res{"cpu": "8", "memory": "32Gi", "pods": "110"}).Obj())
	}
	a100 := map[string]string{driver + "/model": "a100"}
	snap.ResourceSlices = []*resourcev1.ResourceSlice{
		testutil.MakeNodeSlice("a", driver, testutil.Devices("gpu", 4, a100)...),
		testutil.MakeNodeSlice("b", driver, testutil.Devices("gpu", 2, a100)...),
		testutil.MakeNodeSlice("c", driver, testutil.Devices("gpu", 4, map[string]string{driver + "/model": "h100"})...),
	}
	snap.DeviceClasses = []*resourcev1.DeviceClass{testutil.MakeDeviceClass("gpu", driver)}
	return snap
}

func schedulePod(t *testing.T, s *schedule.Scheduler, pod *corev1.Pod) *schedule.Result {
	t.Helper()
	res, err := s.Schedule(context.Background(), pod)
	if err != nil {
		t.Fatalf("Schedule: %v", err)
	}
	return res
}

func feasible(res *schedule.Result) []string {
	var out []string
	for _, n := range res.Nodes {
		if n.Feasible {
			out = append(out, n.Name)
		}
	}
	return out
}

func newScheduler(t *testing.T, snap *schedule.Snapshot) *schedule.Scheduler {
	t.Helper()
	s, err := schedule.NewScheduler(snap, schedule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A claim from a template whose claim does not exist yet is allocated as the
// claim the template would produce: 3 GPUs fit on a and c, not on b.
func TestTemplateClaimWhatIf(t *testing.T) {
	snap := draCluster()
	snap.ResourceClaimTemplates = []*resourcev1.ResourceClaimTemplate{testutil.MakeClaimTemplate("default", "three", testutil.ExactRequest("gpus", "gpu", 3))}
	s := newScheduler(t, snap)
	pod := testutil.MakePod().Name("p").UID("p").ClaimTemplate("gpus", "three").Obj()
	res := schedulePod(t, s, pod)
	if diff := cmp.Diff([]string{"a", "c"}, feasible(res)); diff != "" {
		t.Errorf("feasible (-want +got):\n%s", diff)
	}
	if len(res.NotEvaluated) > 0 {
		t.Errorf("not evaluated: %v", res.NotEvaluated)
	}
	if err := s.Reserve(pod, res.SelectedNode); err != nil {
		t.Fatal(err)
	}
	claims := s.Claims(pod)
	if len(claims) != 1 || claims[0].Name != "p-gpus" || claims[0].Status.Allocation == nil || len(claims[0].Status.Allocation.Devices.Results) != 3 {
		t.Fatalf("claims after Reserve = %+v, want p-gpus with 3 devices", claims)
	}
	for _, r := range claims[0].Status.Allocation.Devices.Results {
		if r.Pool != res.SelectedNode || r.Driver != driver {
			t.Errorf("device %s/%s/%s is not on the selected node %s", r.Driver, r.Pool, r.Device, res.SelectedNode)
		}
	}
}

// Members of a gang compete for devices: after two 2-GPU pods on a, a has
// none left; after a third on b (2), only c remains.
func TestReservedDevicesAreHeld(t *testing.T) {
	snap := draCluster()
	snap.ResourceClaimTemplates = []*resourcev1.ResourceClaimTemplate{testutil.MakeClaimTemplate("default", "two", testutil.ExactRequest("gpus", "gpu", 2))}
	s := newScheduler(t, snap)
	var got [][]string
	for _, name := range []string{"p0", "p1", "p2", "p3", "p4", "p5"} {
		pod := testutil.MakePod().Name(name).UID(name).ClaimTemplate("gpus", "two").Obj()
		res := schedulePod(t, s, pod)
		got = append(got, feasible(res))
		if res.Verdict != schedule.VerdictScheduled {
			if !strings.Contains(res.Message, "3 cannot allocate all claims") {
				t.Errorf("message = %q, want 3 nodes that cannot allocate", res.Message)
			}
			continue
		}
		// Reserve on the first feasible node, to control the order.
		if err := s.Reserve(pod, feasible(res)[0]); err != nil {
			t.Fatal(err)
		}
	}
	want := [][]string{{"a", "b", "c"}, {"a", "b", "c"}, {"b", "c"}, {"c"}, {"c"}, nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("feasible nodes per pod (-want +got):\n%s", diff)
	}
}

// A fork does not see the devices its parent reserves afterwards, nor the
// parent the fork's.
func TestForkKeepsItsOwnAllocations(t *testing.T) {
	snap := draCluster()
	snap.ResourceClaimTemplates = []*resourcev1.ResourceClaimTemplate{testutil.MakeClaimTemplate("default", "four", testutil.ExactRequest("gpus", "gpu", 4))}
	s := newScheduler(t, snap)
	fork, err := s.Fork()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reserve(testutil.MakePod().Name("p0").UID("p0").ClaimTemplate("gpus", "four").Obj(), "a"); err != nil {
		t.Fatal(err)
	}
	probe := testutil.MakePod().Name("probe").UID("probe").ClaimTemplate("gpus", "four").Obj()
	if diff := cmp.Diff([]string{"c"}, feasible(schedulePod(t, s, probe))); diff != "" {
		t.Errorf("parent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "c"}, feasible(schedulePod(t, fork, probe))); diff != "" {
		t.Errorf("fork (-want +got):\n%s", diff)
	}
	if err := fork.Reserve(testutil.MakePod().Name("q0").UID("q0").ClaimTemplate("gpus", "four").Obj(), "c"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"c"}, feasible(schedulePod(t, s, probe))); diff != "" {
		t.Errorf("parent after the fork reserved (-want +got):\n%s", diff)
	}
}

// CEL selectors of the request, allocation mode All, devices held by
// allocated claims in the snapshot, and a class that does not exist.
func TestSelectorsModesAndHeldDevices(t *testing.T) {
	snap := draCluster()
	held := testutil.MakeClaim("default", "held", testutil.ExactRequest("gpus", "gpu", 1))
	held.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "gpus", Driver: driver, Pool: "a", Device: "gpu0"},
	}}}
	held.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "other", UID: "other"}}
	snap.ResourceClaims = []*resourcev1.ResourceClaim{held}
	all := testutil.ExactRequest("gpus", "gpu", 0, `device.attributes["`+driver+`"].model == "a100"`)
	all.Exactly.AllocationMode = resourcev1.DeviceAllocationModeAll
	all.Exactly.Count = 0
	snap.ResourceClaimTemplates = []*resourcev1.ResourceClaimTemplate{
		testutil.MakeClaimTemplate("default", "a100x4", testutil.ExactRequest("gpus", "gpu", 4, `device.attributes["`+driver+`"].model == "a100"`)),
		testutil.MakeClaimTemplate("default", "all-a100", all),
		testutil.MakeClaimTemplate("default", "no-class", testutil.ExactRequest("gpus", "tpu", 1)),
	}
	s := newScheduler(t, snap)
	tests := []struct {
		template string
		feasible []string
		message  string
	}{
		// a has 3 free A100s (gpu0 is held), b 2, c none.
		{"a100x4", nil, "0/3 nodes are available: 3 cannot allocate all claims."},
		// All needs every matching device free: b's two, not a's.
		{"all-a100", []string{"b"}, ""},
		{"no-class", nil, "0/3 nodes are available: request gpus: device class tpu does not exist."},
	}
	for _, tt := range tests {
		t.Run(tt.template, func(t *testing.T) {
			res := schedulePod(t, s, testutil.MakePod().Name("p").UID("p").ClaimTemplate("gpus", tt.template).Obj())
			if diff := cmp.Diff(tt.feasible, feasible(res)); diff != "" {
				t.Errorf("feasible (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(res.Message, tt.message) {
				t.Errorf("message = %q, want %q", res.Message, tt.message)
			}
		})
	}
}

// A claim allocated already (shared by several pods) keeps every pod that
// uses it where its devices are.
func TestSharedAllocatedClaim(t *testing.T) {
	snap := draCluster()
	shared := testutil.MakeClaim("default", "shared", testutil.ExactRequest("gpus", "gpu", 1))
	shared.Status.Allocation = &resourcev1.AllocationResult{
		Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{{Request: "gpus", Driver: driver, Pool: "b", Device: "gpu1"}}},
		NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"b"}},
		}}}},
	}
	full := shared.DeepCopy()
	full.Name, full.UID = "full", "full"
	for i := range resourcev1.ResourceClaimReservedForMaxSize {
		full.Status.ReservedFor = append(full.Status.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: "x", UID: types.UID(fmt.Sprint("x", i))})
	}
	snap.ResourceClaims = []*resourcev1.ResourceClaim{full, shared}
	s := newScheduler(t, snap)
	res := schedulePod(t, s, testutil.MakePod().Name("p").UID("p").Claim("gpu", "shared").Obj())
	if diff := cmp.Diff([]string{"b"}, feasible(res)); diff != "" {
		t.Errorf("feasible (-want +got):\n%s", diff)
	}
	if got := res.Nodes[0].Status.Message(); got != "resourceclaim not available on the node" {
		t.Errorf("node a: %q", got)
	}
	// v1.37 puts no limit on sharing (resourceclaim.CanBeReserved): a
	// claim reserved for 256 pods takes one more.
	res = schedulePod(t, s, testutil.MakePod().Name("p").UID("p").Claim("gpu", "full").Obj())
	if diff := cmp.Diff([]string{"b"}, feasible(res)); diff != "" {
		t.Errorf("feasible with a claim reserved 256 times (-want +got):\n%s", diff)
	}
	res = schedulePod(t, s, testutil.MakePod().Name("p").UID("p").Claim("gpu", "missing").Obj())
	if !strings.HasPrefix(res.Message, `0/3 nodes are available: resourceclaim.resource.k8s.io "missing" not found.`) {
		t.Errorf("message = %q", res.Message)
	}
}

// firstAvailable: the earlier alternative scores higher, so the pod goes
// where it gets an H100 rather than an A100.
func TestPrioritizedListScore(t *testing.T) {
	snap := draCluster()
	req := resourcev1.DeviceRequest{Name: "gpu", FirstAvailable: []resourcev1.DeviceSubRequest{
		{Name: "h100", DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1,
			Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.attributes["` + driver + `"].model == "h100"`}}}},
		{Name: "any", DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
	}}
	snap.ResourceClaimTemplates = []*resourcev1.ResourceClaimTemplate{testutil.MakeClaimTemplate("default", "pref", req)}
	s := newScheduler(t, snap)
	res := schedulePod(t, s, testutil.MakePod().Name("p").UID("p").ClaimTemplate("gpu", "pref").Obj())
	if res.SelectedNode != "c" {
		t.Errorf("selected %q, want c", res.SelectedNode)
	}
	scores := map[string]int64{}
	for _, n := range res.Nodes {
		for _, ps := range n.Scores {
			if ps.Plugin == "DynamicResources" {
				scores[n.Name] = ps.Score
			}
		}
	}
	// Raw 8 (c: first of 8 alternatives) and 7 (a, b: second); normalized
	// to 100 and 87, weight 2.
	if diff := cmp.Diff(map[string]int64{"a": 174, "b": 174, "c": 200}, scores); diff != "" {
		t.Errorf("DynamicResources scores (-want +got):\n%s", diff)
	}
}

// A snapshot that could not list claims does not evaluate them.
func TestUnreadableKindsAreNotEvaluated(t *testing.T) {
	snap := draCluster()
	snap.Unreadable = []string{"resourceclaims.resource.k8s.io"}
	s := newScheduler(t, snap)
	res := schedulePod(t, s, testutil.MakePod().Name("p").UID("p").Claim("gpu", "x").Obj())
	if len(res.NotEvaluated) != 1 || !strings.Contains(res.NotEvaluated[0], "could not list resourceclaims.resource.k8s.io") {
		t.Errorf("not evaluated = %q", res.NotEvaluated)
	}
}
