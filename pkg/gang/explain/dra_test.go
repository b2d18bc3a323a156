package explain

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// draGang is two nodes of 4 GPUs published through DRA (gpu-1 has one held
// by another claim) and a gang of members that each claim 2 GPUs from a
// template.
func draGang(members int, min int32) (*schedule.Snapshot, *gang.Gang) {
	const driver = "gpu.example.com"
	snap := &schedule.Snapshot{Namespaces: []*corev1.Namespace{testutil.MakeNamespace("ml")}}
	for _, n := range []string{"gpu-0", "gpu-1"} {
		snap.Nodes = append(snap.Nodes, testutil.MakeNode().Name(n).Capacity(testutil.Res{"cpu": "64", "memory": "256Gi", "pods": "110"}).Obj())
		snap.ResourceSlices = append(snap.ResourceSlices, testutil.MakeNodeSlice(n, driver, testutil.Devices("gpu", 4, nil)...))
	}
	snap.DeviceClasses = []*resourcev1.DeviceClass{testutil.MakeDeviceClass("gpu", driver)}
	snap.ResourceClaimTemplates = []*resourcev1.ResourceClaimTemplate{testutil.MakeClaimTemplate("ml", "two-gpus", testutil.ExactRequest("gpus", "gpu", 2))}
	held := testutil.MakeClaim("other", "held", testutil.ExactRequest("gpus", "gpu", 1))
	held.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "gpus", Driver: driver, Pool: "gpu-1", Device: "gpu3"},
	}}}
	snap.ResourceClaims = []*resourcev1.ResourceClaim{held}
	var pods []*corev1.Pod
	for i := range members {
		name := fmt.Sprintf("w-%d", i)
		pods = append(pods, testutil.MakePod().Namespace("ml").Name(name).UID(name).ClaimTemplate("gpus", "two-gpus").Obj())
	}
	snap.Pods = pods
	return snap, &gang.Gang{Source: gang.SourceNative, Namespace: "ml", Name: "train", MinMember: min, Members: pods}
}

// Members compete for devices: 7 free GPUs hold three 2-GPU members, each
// on devices of its own.
func TestPlaceAllocatesDevicesPerMember(t *testing.T) {
	snap, g := draGang(3, 3)
	p, err := gang.Place(context.Background(), snap, g, gang.PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Verified() {
		t.Fatalf("placement %s, not evaluated %v: want placed and verified", p.Message, p.AllNotEvaluated())
	}
	var got []string
	seen := map[string]bool{}
	for _, a := range p.Assignments {
		got = append(got, a.Pod.Name+"->"+a.Node+" "+gang.FormatDevices(a.Claims))
		for _, c := range a.Claims {
			for _, r := range c.Status.Allocation.Devices.Results {
				id := r.Pool + "/" + r.Device
				if seen[id] || id == "gpu-1/gpu3" {
					t.Errorf("device %s given twice", id)
				}
				seen[id] = true
			}
		}
	}
	want := []string{
		"w-0->gpu-0 gpu.example.com/gpu-0: gpu0,gpu1",
		"w-1->gpu-0 gpu.example.com/gpu-0: gpu2,gpu3",
		"w-2->gpu-1 gpu.example.com/gpu-1: gpu0,gpu1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("assignments (-want +got):\n%s", diff)
	}
}

// A fourth member does not fit: the blocker's node table says, per node,
// how many devices of the class match and how many are free.
func TestExplainNamesTheShortDevices(t *testing.T) {
	snap, g := draGang(4, 4)
	e, err := Gang(context.Background(), snap, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Verdict != VerdictUnschedulable {
		t.Fatalf("verdict %s: %s", e.Verdict, e.Message)
	}
	if !strings.Contains(e.Message, "0/2 nodes are available: 2 cannot allocate all claims.") {
		t.Errorf("message = %q", e.Message)
	}
	got := map[string]string{}
	for _, n := range e.Nodes {
		got[n.Name] = n.Detail()
	}
	want := map[string]string{
		"gpu-0": "DynamicResources: cannot allocate all claims (gpus: 2 gpu wanted, 0 of 4 free)",
		"gpu-1": "DynamicResources: cannot allocate all claims (gpus: 2 gpu wanted, 1 of 4 free)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("node details (-want +got):\n%s", diff)
	}
}

// Without any resource.k8s.io object in the snapshot a member's claims are
// not evaluated, and the verdict is not a yes.
func TestClaimsNotEvaluatedAreNeverAYes(t *testing.T) {
	snap, g := draGang(2, 2)
	snap.ResourceSlices, snap.DeviceClasses, snap.ResourceClaims, snap.ResourceClaimTemplates = nil, nil, nil, nil
	e, err := Gang(context.Background(), snap, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Verdict != VerdictUnverified || len(e.NotEvaluated) == 0 {
		t.Errorf("verdict %s, not evaluated %q: want Unverified with the reason", e.Verdict, e.NotEvaluated)
	}
	p, err := gang.Place(context.Background(), snap, g, gang.PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Verdict != gang.VerdictPlaced || p.Verified() {
		t.Errorf("placement %s verified=%v: want placed, not verified", p.Verdict, p.Verified())
	}
}

// The shortfall is in devices: 5 members of 2 GPUs on 7 free GPUs (4 on
// gpu-0, 3 on gpu-1) fit three; the two left need 4 more, with 1 free.
func TestShortfallInDevices(t *testing.T) {
	snap, g := draGang(5, 5)
	e, err := Gang(context.Background(), snap, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var s *Suggestion
	for i := range e.Suggestions {
		if e.Suggestions[i].Kind == SuggestShortfall {
			s = &e.Suggestions[i]
		}
	}
	if s == nil {
		t.Fatalf("no shortfall among %+v", e.Suggestions)
	}
	want := []ResourceShortfall{{Name: "gpus", DeviceClass: "gpu", Short: 4, Need: 4, Usable: 0, Free: 1, MostFree: 1, MostFreeNode: "gpu-1"}}
	if diff := cmp.Diff(want, s.Shortfall); diff != "" {
		t.Errorf("shortfall (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(s.Message, "short 4 gpu device(s) for request gpus in the cluster: it holds 3 of minimum 5 member(s) at once; the 2 left need 2 gpu device(s) each on one node, and the most free on any node it may run on is 1 (gpu-1)") {
		t.Errorf("message = %q", s.Message)
	}
}

// Extended resources a DeviceClass backs are devices: a gang whose members
// request example.com/gpu on DRA nodes is short of devices of the class,
// named by the resource, and no "short example.com/gpu" against allocatable.
func TestShortfallInDevicesForExtendedResources(t *testing.T) {
	snap, g := draGang(5, 5)
	snap.ResourceClaimTemplates = nil
	snap.DeviceClasses[0].Spec.ExtendedResourceName = ptrTo("example.com/gpu")
	for i, pod := range g.Members {
		p := testutil.MakePod().Namespace("ml").Name(pod.Name).UID(pod.Name).Req(testutil.Res{"example.com/gpu": "2"}).Obj()
		g.Members[i], snap.Pods[i] = p, p
	}
	e, err := Gang(context.Background(), snap, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []ResourceShortfall
	for _, s := range e.Suggestions {
		if s.Kind == SuggestShortfall {
			got = s.Shortfall
		}
	}
	want := []ResourceShortfall{{Name: "example.com/gpu", DeviceClass: "gpu", Short: 4, Need: 4, Usable: 0, Free: 1, MostFree: 1, MostFreeNode: "gpu-1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shortfall (-want +got):\n%s", diff)
	}
}
