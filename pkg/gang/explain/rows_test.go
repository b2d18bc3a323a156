package explain

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// rowsDevicePlugin: g0 and g1 full of running 8-GPU pods, g2 with a device
// plugin that reports 0 allocatable of its 8 GPUs; one 8-GPU pod pending.
func rowsDevicePlugin() (*schedule.Snapshot, *corev1.Pod) {
	nodes := []*corev1.Node{
		testutil.MakeNode().Name("g0").Capacity(testutil.Res{"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": "8"}).Obj(),
		testutil.MakeNode().Name("g1").Capacity(testutil.Res{"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": "8"}).Obj(),
		testutil.MakeNode().Name("g2").Capacity(testutil.Res{"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": "8"}).Obj(),
	}
	nodes[2].Status.Allocatable["nvidia.com/gpu"] = resource.MustParse("0")
	busy := func(name, node string) *corev1.Pod {
		return testutil.MakePod().Namespace("ml").Name(name).Node(node).Req(testutil.Res{"nvidia.com/gpu": "8"}).Obj()
	}
	pod := testutil.MakePod().Namespace("ml").Name("trainer").Req(testutil.Res{"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "8"}).Obj()
	return &schedule.Snapshot{Nodes: nodes, Pods: []*corev1.Pod{busy("a", "g0"), busy("b", "g1")}}, pod
}

// rowsNearMiss: GPU nodes tainted gpu=present:NoSchedule; the pod tolerates
// gpu=true.
func rowsNearMiss() (*schedule.Snapshot, *corev1.Pod) {
	nodes := testutil.GPUNodes("zone-a", 2)
	for _, n := range nodes {
		n.Spec.Taints = []corev1.Taint{{Key: "gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}
	}
	pod := testutil.MakePod().Namespace("ml").Name("trainer").Req(testutil.Res{"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "8"}).
		Toleration("gpu", "true", corev1.TaintEffectNoSchedule).Obj()
	return &schedule.Snapshot{Nodes: nodes}, pod
}

// rowsInit: 32-cpu nodes; the pod's init container prepare asks 40 cpu,
// its main container 4.
func rowsInit() (*schedule.Snapshot, *corev1.Pod) {
	nodes := []*corev1.Node{
		testutil.MakeNode().Name("c0").Capacity(testutil.Res{"cpu": "32", "memory": "128Gi"}).Obj(),
		testutil.MakeNode().Name("c1").Capacity(testutil.Res{"cpu": "32", "memory": "128Gi"}).Obj(),
	}
	pod := testutil.MakePod().Namespace("ml").Name("trainer").Req(testutil.Res{"cpu": "4", "memory": "8Gi"}).Obj()
	pod.Spec.InitContainers = []corev1.Container{{Name: "prepare", Image: "busybox",
		Resources: corev1.ResourceRequirements{Requests: testutil.Res{"cpu": "40"}.List()}}}
	return &schedule.Snapshot{Nodes: nodes}, pod
}

// rowsMissingClaim: the pod mounts PVC ckpt, which does not exist.
func rowsMissingClaim() (*schedule.Snapshot, *corev1.Pod) {
	nodes := testutil.GPUNodes("zone-a", 2)
	pod := testutil.MakePod().Namespace("ml").Name("trainer").Req(testutil.Res{"cpu": "8", "memory": "64Gi"}).Obj()
	pod.Spec.Volumes = []corev1.Volume{{Name: "checkpoints", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "ckpt"}}}}
	return &schedule.Snapshot{Nodes: nodes}, pod
}

// rowsQuota: a what-if 6 x 8-GPU Job on 4 free 8-GPU nodes, in a namespace
// whose quota allows 32 GPUs.
func rowsQuota() (*schedule.Snapshot, *gang.Gang) {
	nodes := testutil.GPUNodes("zone-a", 4)
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "gpus"},
		Spec:       corev1.ResourceQuotaSpec{Hard: testutil.Res{"requests.nvidia.com/gpu": "32"}.List()},
		Status:     corev1.ResourceQuotaStatus{Hard: testutil.Res{"requests.nvidia.com/gpu": "32"}.List(), Used: testutil.Res{"requests.nvidia.com/gpu": "0"}.List()},
	}
	members := testutil.GPUWorkers(6, "8")
	for _, p := range members {
		p.Spec.SchedulingGates = nil
	}
	g := &gang.Gang{Source: gang.SourceFile, Namespace: "ml", Name: "train", MinMember: 6, Members: members}
	return &schedule.Snapshot{Nodes: nodes, ResourceQuotas: []*corev1.ResourceQuota{quota}}, g
}

// first runs explain on a lone pod (or, given, a gang) and returns the
// first suggestion.
func firstSuggestion(t *testing.T, e *Explanation, err error) Suggestion {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if e.Verdict != VerdictUnschedulable || len(e.Suggestions) == 0 {
		t.Fatalf("verdict %s with %d suggestion(s), want Unschedulable with suggestions: %s", e.Verdict, len(e.Suggestions), e.Message)
	}
	return e.Suggestions[0]
}

func wantWords(t *testing.T, s Suggestion, kind SuggestionKind, verified bool, words ...string) {
	t.Helper()
	if s.Kind != kind || s.Verified != verified {
		t.Errorf("first suggestion %s (verified %v), want %s (verified %v): %s", s.Kind, s.Verified, kind, verified, s.Message)
	}
	for _, w := range words {
		if !strings.Contains(s.Message, w) {
			t.Errorf("first suggestion %q\nlacks %q", s.Message, w)
		}
	}
}

// Issue #27, a node with capacity 8 GPUs and allocatable 0: the device
// plugin on g2 stopped reporting; repairing that node (allocatable restored
// to capacity on a copy, placed again) leads, before any node to add.
func TestExplainLeadsWithDevicePluginRepair(t *testing.T) {
	snap, pod := rowsDevicePlugin()
	e, err := Pod(context.Background(), snap, pod, Options{})
	s := firstSuggestion(t, e, err)
	wantWords(t, s, "RepairDevicePlugin", true,
		"the device plugin on g2 reports 0 allocatable of 8 nvidia.com/gpu: repair that node", "then it fits on g2")
}

// Issue #27, toleration value "true" against taint gpu=present: the near
// miss is named and the corrected toleration, proven by placing again, leads.
func TestExplainLeadsWithTolerationNearMiss(t *testing.T) {
	snap, pod := rowsNearMiss()
	e, err := Pod(context.Background(), snap, pod, Options{})
	s := firstSuggestion(t, e, err)
	wantWords(t, s, SuggestTolerate, true,
		`the pod's toleration {key: gpu, operator: Equal, value: "true", effect: NoSchedule} is a near miss of taint gpu=present:NoSchedule`,
		`the value differs ("true" vs "present"): set value: "present"`, "it fits on zone-a-0")
	if len(e.Suggestions) != 1 {
		t.Errorf("%d suggestion(s) (%v): want one, the near miss", len(e.Suggestions), kinds(e.Suggestions))
	}
}

// Issue #27, an init container asking 40 cpu beside a main container of 4:
// the init container is named as what sets the pod's request
// (k8s.io/component-helpers/resource PodRequests).
func TestExplainNamesTheInitContainerThatSetsTheRequest(t *testing.T) {
	snap, pod := rowsInit()
	e, err := Pod(context.Background(), snap, pod, Options{})
	s := firstSuggestion(t, e, err)
	wantWords(t, s, SuggestNodesTooSmall, false,
		"init container prepare asks 40 cpu, which sets the pod's request (the largest init container or the sum of the containers, here 4 cpu)",
		"lower that init container's request")
}

// Issue #27, a PersistentVolumeClaim that does not exist: creating it leads
// (no "nothing tried was enough").
func TestExplainLeadsWithMissingClaim(t *testing.T) {
	snap, pod := rowsMissingClaim()
	e, err := Pod(context.Background(), snap, pod, Options{})
	s := firstSuggestion(t, e, err)
	wantWords(t, s, "CreateClaim", false, "create PersistentVolumeClaim ml/ckpt (volume checkpoints of the pod)")
	// A snapshot that could not read claims there does not claim it is missing.
	snap.Unreadable = []string{schedule.KindPersistentVolumeClaims}
	e, err = Pod(context.Background(), snap, pod, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if find(e.Suggestions, "CreateClaim") != nil {
		t.Errorf("claims unreadable, yet %v", kinds(e.Suggestions))
	}
}

// Issue #27, a what-if 6 x 8-GPU Job over its namespace's quota (48 of 32
// GPUs) that does not fit either: the quota's refusal leads, and the node
// change placing proves is not offered as if it would start the gang.
func TestExplainQuotaBesideCapacity(t *testing.T) {
	snap, g := rowsQuota()
	e, err := Gang(context.Background(), snap, g, Options{})
	s := firstSuggestion(t, e, err)
	wantWords(t, s, SuggestQuota, false, "ResourceQuota would refuse the new members", "limited: requests.nvidia.com/gpu=32")
	add := find(e.Suggestions, SuggestAddNodes)
	if add == nil || add.Verified || !strings.Contains(add.Message, "the quota would still refuse the new members") {
		t.Errorf("add nodes %+v, want it, not verified, saying the quota would still refuse", add)
	}
}
