package capacity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// TestHoles: zone-a's 3 nodes have 8, 4 and 0 GPUs free (pods hold 4 and
// 8); zone-b's cordoned node and its NotReady node are left out, its
// third, which has no Ready condition (a hand-made file), has 8 free. A DRA driver's node-local slice of 4 devices, one
// allocated, leaves 3.
func TestHoles(t *testing.T) {
	nodes := append(testutil.GPUNodes("zone-a", 3), testutil.GPUNodes("zone-b", 3)...)
	nodes[3].Spec.Unschedulable = true
	nodes[4].Status.Conditions[0].Status = corev1.ConditionFalse
	// A node with no Ready condition at all (a hand-made snapshot) counts.
	nodes[5].Status.Conditions = nil
	pods := []*corev1.Pod{
		testutil.MakePod().Namespace("x").Name("p1").Node("zone-a-1").Req(testutil.Res{"nvidia.com/gpu": "4"}).Obj(),
		testutil.MakePod().Namespace("x").Name("p2").Node("zone-a-2").Req(testutil.Res{"nvidia.com/gpu": "8"}).Obj(),
	}
	claim := testutil.MakeClaim("x", "c", testutil.ExactRequest("r", "gpu", 1))
	claim.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "r", Driver: "gpu.example.com", Pool: "zone-a-0", Device: "gpu-1"}}}}
	snap := &schedule.Snapshot{Nodes: nodes, Pods: pods,
		ResourceSlices: []*resourcev1.ResourceSlice{testutil.MakeNodeSlice("zone-a-0", "gpu.example.com", testutil.Devices("gpu-", 4, nil)...)},
		ResourceClaims: []*resourcev1.ResourceClaim{claim}}
	s, err := schedule.NewScheduler(snap, schedule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := Holes(snap, s.NodeInfos(), zoneKey, nil)
	want := &HoleChart{TopologyKey: zoneKey, Unschedulable: 2, Resources: []HoleResource{
		{Resource: "gpu.example.com devices", Devices: true, Largest: 3, Domains: []HoleDomain{{Value: "zone-a", Nodes: 1, Free: 3, Holes: []int{0, 0, 0, 1}}}},
		{Resource: "nvidia.com/gpu", Largest: 8, Domains: []HoleDomain{
			{Value: "zone-a", Nodes: 3, Free: 12, Holes: []int{1, 0, 0, 0, 1, 0, 0, 0, 1}},
			{Value: "zone-b", Nodes: 1, Free: 8, Holes: []int{0, 0, 0, 0, 0, 0, 0, 0, 1}},
		}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chart (-want +got):\n%s", diff)
	}
	// A key no node has: the whole cluster is one domain.
	if got := Holes(snap, s.NodeInfos(), "example.com/rack", []string{"nvidia.com/gpu"}); got.TopologyKey != "" || len(got.Resources) != 1 || got.Resources[0].Domains[0].Nodes != 4 {
		t.Errorf("without the key: %+v", got)
	}
}
