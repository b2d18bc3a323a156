package gang

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// draBenchCluster is nodes nodes of 8 GPUs each, published as one
// ResourceSlice per node, with a DeviceClass and a template for 8 GPUs of
// one model; members Indexed-Job pods claim from it.
func draBenchCluster(nodes, members int) (*schedule.Snapshot, *Gang) {
	const driver = "gpu.example.com"
	snap := &schedule.Snapshot{Namespaces: []*corev1.Namespace{testutil.MakeNamespace("ml")}}
	h100 := map[string]string{driver + "/model": "h100"}
	for i := range nodes {
		name := fmt.Sprintf("gpu-%04d", i)
		snap.Nodes = append(snap.Nodes, testutil.MakeNode().Name(name).Capacity(testutil.Res{"cpu": "96", "memory": "1Ti", "pods": "110"}).Obj())
		snap.ResourceSlices = append(snap.ResourceSlices, testutil.MakeNodeSlice(name, driver, testutil.Devices("gpu", 8, h100)...))
	}
	snap.DeviceClasses = []*resourcev1.DeviceClass{testutil.MakeDeviceClass("gpu", driver)}
	snap.ResourceClaimTemplates = []*resourcev1.ResourceClaimTemplate{testutil.MakeClaimTemplate("ml", "eight",
		testutil.ExactRequest("gpus", "gpu", 8, `device.attributes["`+driver+`"].model == "h100"`))}
	var pods []*corev1.Pod
	for i := range members {
		name := fmt.Sprintf("train-%d", i)
		pods = append(pods, testutil.MakePod().Namespace("ml").Name(name).UID(name).
			Label("batch.kubernetes.io/job-completion-index", fmt.Sprint(i)).Req(testutil.Res{"cpu": "8"}).ClaimTemplate("gpus", "eight").Obj())
	}
	return snap, gangOf(int32(members), pods)
}

// BenchmarkPlace1000DRA is the DRA benchmark: a 1,000-member gang,
// each member with one claim for 8 devices, on 1,000 nodes of 8 devices:
// every member takes a node's devices whole.
func BenchmarkPlace1000DRA(b *testing.B) {
	snap, g := draBenchCluster(1000, 1000)
	benchPlaceOn(b, snap, g, PlaceOptions{})
}

// BenchmarkPlace1001DRADoesNotFit is one member more than there are nodes:
// the last member finds no devices anywhere.
func BenchmarkPlace1001DRADoesNotFit(b *testing.B) {
	snap, g := draBenchCluster(1000, 1001)
	b.ReportAllocs()
	for b.Loop() {
		p, err := Place(context.Background(), snap, g, PlaceOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if p.Verdict != VerdictUnschedulable || p.MaxPlaceable != 1000 {
			b.Fatalf("%s", p.Message)
		}
	}
}

// BenchmarkPlace1000DRAExtended is BenchmarkPlace1000DRA with the GPUs asked
// for as a plain nvidia.com/gpu: 8 that a DeviceClass backs
// (DRAExtendedResource): each member gets kube-scheduler's own claim.
func BenchmarkPlace1000DRAExtended(b *testing.B) {
	snap, g := draBenchCluster(1000, 1000)
	snap.ResourceClaimTemplates = nil
	snap.DeviceClasses[0].Spec.ExtendedResourceName = new(string)
	*snap.DeviceClasses[0].Spec.ExtendedResourceName = "nvidia.com/gpu"
	for i, pod := range g.Members {
		p := testutil.MakePod().Namespace("ml").Name(pod.Name).UID(pod.Name).Label("batch.kubernetes.io/job-completion-index", pod.Labels["batch.kubernetes.io/job-completion-index"]).
			Req(testutil.Res{"cpu": "8", "nvidia.com/gpu": "8"}).Obj()
		g.Members[i] = p
	}
	if p, err := Place(context.Background(), snap, g, PlaceOptions{}); err != nil || !p.Verified() || len(p.Assignments[999].Claims) != 1 {
		b.Fatalf("placement %v: want verified, a claim per member", err)
	}
	benchPlaceOn(b, snap, g, PlaceOptions{})
}
