package dynamicresources_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/dynamicresources"
)

const gpuResource = "example.com/gpu"

// extendedCluster is draCluster (a: 4 DRA GPUs, b: 2, c: 4 H100s) plus d,
// whose device plugin advertises 8 example.com/gpu, with the class "gpu"
// backing example.com/gpu.
func extendedCluster() *schedule.Snapshot {
	snap := draCluster()
	snap.Nodes = append(snap.Nodes, testutil.MakeNode().Name("d").Capacity(testutil.Res{"cpu": "8", "memory": "32Gi", "pods": "110", gpuResource: "8"}).Obj())
	snap.DeviceClasses[0].Spec.ExtendedResourceName = ptr.To(gpuResource)
	return snap
}

func gpuPod(name string, n string) *corev1.Pod {
	return testutil.MakePod().Name(name).UID(name).Req(testutil.Res{gpuResource: n}).Obj()
}

// A pod's example.com/gpu is allocated as devices of the class that backs it
// where no device plugin advertises it (kube-scheduler v1.37's
// DRAExtendedResource), and checked against allocatable where one does; the
// devices a member got are held for the next.
func TestExtendedResourceBackedByDRA(t *testing.T) {
	s := newScheduler(t, extendedCluster())
	p0 := gpuPod("p0", "3")
	res := schedulePod(t, s, p0)
	if diff := cmp.Diff([]string{"a", "c", "d"}, feasible(res)); diff != "" {
		t.Errorf("feasible (-want +got):\n%s", diff)
	}
	if len(res.NotEvaluated) > 0 {
		t.Errorf("not evaluated: %v", res.NotEvaluated)
	}
	for _, n := range res.Nodes {
		if n.Name == "b" && !strings.Contains(n.Status.Message(), "cannot allocate all claims") {
			t.Errorf("b: %q, want DynamicResources' cannot allocate all claims", n.Status.Message())
		}
	}
	if err := s.Reserve(p0, "a"); err != nil {
		t.Fatal(err)
	}
	claims := s.Claims(p0)
	if len(claims) != 1 {
		t.Fatalf("claims after Reserve = %d, want the extended-resource claim", len(claims))
	}
	c := claims[0]
	if c.Name != "p0-extended-resources" || c.Annotations[resourcev1.ExtendedResourceClaimAnnotation] != "true" || metav1.GetControllerOf(c).Name != "p0" {
		t.Errorf("claim %s %v owner %v, want p0-extended-resources annotated and owned by p0", c.Name, c.Annotations, c.OwnerReferences)
	}
	wantReq := []resourcev1.DeviceRequest{{Name: "container-0-request-0", Exactly: &resourcev1.ExactDeviceRequest{
		DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 3}}}
	if diff := cmp.Diff(wantReq, c.Spec.Devices.Requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if c.Status.Allocation == nil || len(c.Status.Allocation.Devices.Results) != 3 || c.Status.Allocation.Devices.Results[0].Pool != "a" {
		t.Fatalf("allocation = %+v, want 3 devices of a", c.Status.Allocation)
	}
	// a has 1 device left: a second 3-GPU pod fits c (DRA) and d (device plugin).
	res = schedulePod(t, s, gpuPod("p1", "3"))
	if diff := cmp.Diff([]string{"c", "d"}, feasible(res)); diff != "" {
		t.Errorf("second pod feasible (-want +got):\n%s", diff)
	}
	// On d the device plugin provides them: no claim is made.
	p2 := gpuPod("p2", "8")
	res = schedulePod(t, s, p2)
	if diff := cmp.Diff([]string{"d"}, feasible(res)); diff != "" {
		t.Errorf("8-GPU pod feasible (-want +got):\n%s", diff)
	}
	if err := s.Reserve(p2, "d"); err != nil {
		t.Fatal(err)
	}
	if got := s.Claims(p2); len(got) != 0 {
		t.Errorf("claims of a pod the device plugin serves = %d, want none", len(got))
	}
	if !s.DRA().UsesDevices(p2) {
		t.Error("UsesDevices = false for a pod requesting a DRA-backed resource")
	}
}

// Without a class backing it, example.com/gpu is NodeResourcesFit's alone:
// the DRA nodes advertise none.
func TestExtendedResourceNotBacked(t *testing.T) {
	snap := extendedCluster()
	snap.DeviceClasses[0].Spec.ExtendedResourceName = nil
	s := newScheduler(t, snap)
	res := schedulePod(t, s, gpuPod("p", "3"))
	if diff := cmp.Diff([]string{"d"}, feasible(res)); diff != "" {
		t.Errorf("feasible (-want +got):\n%s", diff)
	}
	for _, n := range res.Nodes {
		if n.Name != "d" && n.Status.Message() != "Insufficient example.com/gpu" {
			t.Errorf("%s: %q, want Insufficient example.com/gpu", n.Name, n.Status.Message())
		}
	}
	// The implicit name of the class is always backed.
	pod := testutil.MakePod().Name("q").UID("q").Req(testutil.Res{"deviceclass.resource.kubernetes.io/gpu": "2"}).Obj()
	res = schedulePod(t, s, pod)
	if diff := cmp.Diff([]string{"a", "b", "c"}, feasible(res)); diff != "" {
		t.Errorf("implicit name feasible (-want +got):\n%s", diff)
	}
}

// kube-scheduler's requests per container: a run-to-completion init
// container that needs 4 reuses the 2+1 the sidecar and the main container
// after it hold and asks for 1 more. The claim holds 1+2+1.
func TestExtendedResourceRequestsPerContainer(t *testing.T) {
	s := newScheduler(t, extendedCluster())
	pod := testutil.MakePod().Name("p").UID("p").Containers(testutil.Res{gpuResource: "1", "cpu": "1"}).
		InitReq(testutil.Res{gpuResource: "4"}).SidecarReq(testutil.Res{gpuResource: "2"}).Obj()
	res := schedulePod(t, s, pod)
	if diff := cmp.Diff([]string{"a", "c", "d"}, feasible(res)); diff != "" {
		t.Errorf("feasible (-want +got):\n%s", diff)
	}
	if err := s.Reserve(pod, "a"); err != nil {
		t.Fatal(err)
	}
	claims := s.Claims(pod)
	if len(claims) != 1 {
		t.Fatalf("claims = %d", len(claims))
	}
	var got []string
	for _, r := range claims[0].Spec.Devices.Requests {
		got = append(got, r.Name+"="+string(rune('0'+r.Exactly.Count)))
	}
	// init0 is container 0 (reuses 3, asks 1 more), sidecar1 is 1, c0 is 2
	// and its example.com/gpu sorts after cpu: request 1.
	want := []string{"container-0-request-0=1", "container-1-request-0=2", "container-2-request-1=1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if n := len(claims[0].Status.Allocation.Devices.Results); n != 4 {
		t.Errorf("allocated %d devices, want 4", n)
	}
}

// A claim kube-scheduler made for the pod in an earlier cycle keeps it off
// every node until deleted, and PostFilter says it deletes it.
func TestStaleExtendedResourceClaim(t *testing.T) {
	snap := extendedCluster()
	pod := gpuPod("p", "2")
	stale := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "p-extended-resources-x7k2q", Namespace: "default",
			Annotations:     map[string]string{resourcev1.ExtendedResourceClaimAnnotation: "true"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: pod.UID, Controller: ptr.To(true)}}},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "container-0-request-0",
			Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 2}}}}},
	}
	snap.ResourceClaims = append(snap.ResourceClaims, stale)
	s := newScheduler(t, snap)
	res := schedulePod(t, s, pod)
	if got := feasible(res); len(got) != 0 {
		t.Errorf("feasible = %v, want none", got)
	}
	if !strings.Contains(res.Message, "4 cannot schedule extended resource claim. deletion of ResourceClaim completed, preemption:") {
		t.Errorf("message = %q", res.Message)
	}
}

// A snapshot that could not list DeviceClasses cannot say whether
// example.com/gpu is backed where no device plugin advertises it (a, b, c):
// those nodes are not evaluated, never feasible. Node d advertises it, so
// kube-scheduler's NodeResourcesFit alone judges the pod there
// (shouldDelegateResourceToDRA): a pod that fits d is placed there with
// nothing left unevaluated; one that fits no node it can judge is a "no" that
// says what was not evaluated, and where.
func TestExtendedResourceClassesUnreadable(t *testing.T) {
	snap := extendedCluster()
	snap.DeviceClasses = nil
	snap.Unreadable = []string{"deviceclasses.resource.k8s.io"}
	s := newScheduler(t, snap)
	res := schedulePod(t, s, gpuPod("p", "3"))
	if diff := cmp.Diff([]string{"d"}, feasible(res)); diff != "" {
		t.Errorf("feasible (-want +got):\n%s", diff)
	}
	if res.Verdict != schedule.VerdictScheduled || res.SelectedNode != "d" || len(res.NotEvaluated) != 0 {
		t.Errorf("verdict %s on %q, not evaluated %v; want Scheduled on d, everything evaluated", res.Verdict, res.SelectedNode, res.NotEvaluated)
	}
	for _, n := range res.Nodes {
		if n.Name != "d" && (!n.Status.IsNotEvaluated() || !strings.Contains(n.Status.Message(), "example.com/gpu")) {
			t.Errorf("%s: %v, want not evaluated for example.com/gpu", n.Name, n.Status)
		}
	}
	// 9 GPUs: more than d has; a, b and c might have them through a class.
	res = schedulePod(t, s, gpuPod("p", "9"))
	if res.Verdict != schedule.VerdictUnschedulable || len(res.NotEvaluated) != 1 ||
		res.NotEvaluated[0] != "DynamicResources: DynamicResources not evaluated: node(s) did not advertise example.com/gpu, which a DeviceClass may back there; DeviceClasses could not be listed (3 node(s))" {
		t.Errorf("verdict %s, not evaluated %v; want Unschedulable with example.com/gpu not evaluated on 3 nodes", res.Verdict, res.NotEvaluated)
	}
	// A snapshot that lists classes, none backing it, evaluates it.
	snap = extendedCluster()
	snap.DeviceClasses[0].Spec.ExtendedResourceName = nil
	res = schedulePod(t, newScheduler(t, snap), gpuPod("p", "3"))
	if len(res.NotEvaluated) != 0 {
		t.Errorf("not evaluated = %v, want none", res.NotEvaluated)
	}
}

// explain's device counts name the extended resource.
func TestExtendedResourceDeviceFit(t *testing.T) {
	s := newScheduler(t, extendedCluster())
	fits := s.DeviceFit(context.Background(), gpuPod("p", "3"), "b")
	if len(fits) != 1 {
		t.Fatalf("fits = %+v", fits)
	}
	if got, want := fits[0].String(), "example.com/gpu: 3 gpu wanted, 2 of 2 free"; got != want {
		t.Errorf("fit = %q, want %q", got, want)
	}
	if !fits[0].Short() || fits[0].Claim != dynamicresources.ExtendedClaimName(gpuPod("p", "3")) {
		t.Errorf("fit = %+v, want short, on the extended-resource claim", fits[0])
	}
	if fits := s.DeviceFit(context.Background(), gpuPod("p", "3"), "d"); len(fits) != 0 {
		t.Errorf("fits on the device-plugin node = %+v, want none", fits)
	}
}

// A profile that scores example.com/gpu (MostAllocated) counts, on nodes
// without allocatable of it, the devices the backing class selects and how
// many are held, as kube-scheduler's calculateDRAResourceTotals: after one
// GPU of a is held, a (1 of 4 held) outscores c (0 of 4).
func TestExtendedResourceScoredByDevices(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	config := `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: gpu-packing
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: example.com/gpu, weight: 1}]
`
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	profile, err := schedule.LoadProfile(path, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := schedule.NewScheduler(extendedCluster(), schedule.Options{Profile: profile})
	if err != nil {
		t.Fatal(err)
	}
	p0 := gpuPod("p0", "1")
	schedulePod(t, s, p0)
	if err := s.Reserve(p0, "a"); err != nil {
		t.Fatal(err)
	}
	res := schedulePod(t, s, gpuPod("p1", "1"))
	fit := map[string]int64{}
	for _, n := range res.Nodes {
		for _, sc := range n.Scores {
			if sc.Plugin == "NodeResourcesFit" {
				fit[n.Name] = sc.Score
			}
		}
	}
	// MostAllocated: (held + 1) * 100 / total: a 2/4, b 1/2, c 1/4, d 1/8.
	if diff := cmp.Diff(map[string]int64{"a": 50, "b": 50, "c": 25, "d": 12}, fit); diff != "" {
		t.Errorf("NodeResourcesFit scores (-want +got):\n%s", diff)
	}
}

// kube-scheduler v1.37.1 fails PreBind for a pod with claims of its own
// whose extended resource the chosen node's device plugin provides (its
// extended-resource claim has no requests there, so no request mappings):
// the pod is not bound, an error, not Scheduled.
func TestExtendedResourceWithClaimsOnDevicePluginNode(t *testing.T) {
	snap := extendedCluster()
	snap.Nodes = append(snap.Nodes, testutil.MakeNode().Name("e").Label("kubernetes.io/hostname", "e").
		Capacity(testutil.Res{"cpu": "8", "memory": "32Gi", "pods": "110", gpuResource: "8"}).Obj())
	snap.ResourceSlices = append(snap.ResourceSlices, testutil.MakeNodeSlice("e", driver, testutil.Devices("gpu", 2, nil)...))
	snap.ResourceClaimTemplates = []*resourcev1.ResourceClaimTemplate{testutil.MakeClaimTemplate("default", "one", testutil.ExactRequest("gpus", "gpu", 1))}
	s := newScheduler(t, snap)
	pod := testutil.MakePod().Name("p").UID("p").Req(testutil.Res{gpuResource: "1"}).ClaimTemplate("gpus", "one").Obj()
	pod.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "e"}
	res := schedulePod(t, s, pod)
	want := `running PreBind plugin "DynamicResources": nil or empty request mappings, no update of pod default/p ExtendedResourceClaimStatus`
	if res.Verdict != schedule.VerdictError || res.Message != want || res.SelectedNode != "e" {
		t.Errorf("verdict %s on %q, message %q; want Error on e, %q", res.Verdict, res.SelectedNode, res.Message, want)
	}
	// Through DRA (a node without the plugin) it binds.
	pod.Spec.NodeSelector = nil
	snap.Nodes = snap.Nodes[:3]
	if res := schedulePod(t, newScheduler(t, snap), pod); res.Verdict != schedule.VerdictScheduled {
		t.Errorf("on DRA nodes: %s %q", res.Verdict, res.Message)
	}
}

// A Sequence says what was not evaluated once, with the count as it is now,
// for every pod of a class that fits no node: the first pod's full cycle
// and the next pods' retries (which filter again only the node that
// changed) agree. The retries used to add the nodes' entry again to the
// full cycle's list, once more each time.
func TestSequenceNotEvaluatedOnceAfterRetries(t *testing.T) {
	snap := extendedCluster()
	snap.DeviceClasses = nil
	snap.Unreadable = []string{"deviceclasses.resource.k8s.io"}
	s := newScheduler(t, snap)
	seq := s.NewSequence()
	ctx := context.Background()
	want := []string{"DynamicResources: DynamicResources not evaluated: node(s) did not advertise example.com/gpu, which a DeviceClass may back there; DeviceClasses could not be listed (3 node(s))"}
	for i := range 4 {
		res, err := seq.Schedule(ctx, gpuPod(fmt.Sprintf("big-%d", i), "9"))
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != schedule.VerdictUnschedulable {
			t.Fatalf("big-%d: verdict %s, want Unschedulable", i, res.Verdict)
		}
		if diff := cmp.Diff(want, res.NotEvaluated); diff != "" {
			t.Errorf("big-%d: not evaluated (-want +got):\n%s", i, diff)
		}
		// A small pod on d changes d for the next retry.
		small := gpuPod(fmt.Sprintf("small-%d", i), "1")
		if err := seq.Reserve(ctx, small, "d"); err != nil {
			t.Fatal(err)
		}
	}
}
