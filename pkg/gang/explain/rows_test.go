package explain

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/coscheduling"
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

// Issue #41: a node that has just registered reports capacity but no
// allocatable yet. It is no device plugin fault (and explain crashed on it
// restoring a nil map): the repair is not suggested for it.
func TestExplainNodeWithoutAllocatableIsNoDevicePluginFault(t *testing.T) {
	snap, pod := rowsDevicePlugin()
	snap.Nodes[2].Status.Allocatable = nil
	e, err := Pod(context.Background(), snap, pod, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(kinds(e.Suggestions), SuggestRepairDevicePlugin) {
		t.Errorf("suggestions %v: want no device plugin repair for a node with no allocatable", kinds(e.Suggestions))
	}
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

// rowsFragmented: the 5,000-node row scaled down: 40 nodes of 8 GPUs, each
// half taken by a 4-GPU pod of priority low (10) a ReplicaSet owns, and a
// 10 x 8-GPU gang of priority high (1000): 160 GPUs free, all in 4-GPU
// holes.
func rowsFragmented() (*schedule.Snapshot, *gang.Gang) {
	nodes := testutil.GPUNodes("zone-a", 40)
	var pods []*corev1.Pod
	for i, n := range nodes {
		pod := testutil.MakePod().Namespace("serving").Name(fmt.Sprintf("infer-%02d", i)).Label("app", "infer").Node(n.Name).
			Priority("low", 10).Req(testutil.Res{"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "4"}).Obj()
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "infer-7d9", UID: "rs", Controller: ptrTo(true)}}
		pods = append(pods, pod)
	}
	members := testutil.GPUWorkers(10, "8")
	for _, m := range members {
		m.Spec.SchedulingGates = nil
		m.Spec.PriorityClassName, m.Spec.Priority = "high", ptrTo(int32(1000))
	}
	g := &gang.Gang{Source: gang.SourceFile, Namespace: "ml", Name: "train", MinMember: 10, Members: members}
	return &schedule.Snapshot{Nodes: nodes, Pods: pods}, g
}

// Issue #27, 16,000 GPUs free in 4-GPU holes (scaled down): the first
// suggestion is the move of the cheapest lower-priority pods that makes
// whole nodes, naming pods and nodes, proven by placing the gang without
// them and the moved pods again after it.
func TestExplainLeadsWithMoveOnFragmentation(t *testing.T) {
	snap, g := rowsFragmented()
	e, err := Gang(context.Background(), snap, g, Options{})
	s := firstSuggestion(t, e, err)
	wantWords(t, s, SuggestMove, true, "moving 10 lower-priority pod(s) would free 10 whole node(s) for the members", "10 of priority 10",
		"first serving/infer-00 from zone-a-0 to zone-a-18,", "then 10 member(s) fit at once")
	if want := "the cluster has the room (160 nvidia.com/gpu free), only in holes of 4 nvidia.com/gpu; moved pods keep running, where preemption evicts them"; s.Why != want {
		t.Errorf("why first %q, want %q", s.Why, want)
	}
	if len(s.Moves) != 10 {
		t.Fatalf("%d moves, want 10: %s", len(s.Moves), s.Message)
	}
	from, to := map[string]bool{}, map[string]int{}
	for _, m := range s.Moves {
		if m.To == "" || m.To == m.From || m.NoController {
			t.Errorf("move %s/%s from %q to %q (no controller %v): want another node, a controller", m.Pod.Namespace, m.Pod.Name, m.From, m.To, m.NoController)
		}
		from[m.From] = true
		to[m.To]++
	}
	for n, k := range to {
		if from[n] || k > 1 {
			t.Errorf("%d pod(s) moved to %s, a node cleared or taken twice", k, n)
		}
	}
	if i := slices.IndexFunc(e.Suggestions, func(s Suggestion) bool { return s.Kind == SuggestShortfall }); i != 1 || !strings.HasPrefix(e.Suggestions[i].Message, "fragmented:") {
		t.Errorf("suggestions %v: want the fragmented shortfall right after the move", kinds(e.Suggestions))
	}
}

// No move is offered when the only pods to move are of the gang's
// priority or higher, DaemonSet pods or mirror pods.
func TestExplainMovesNoHigherPriorityPods(t *testing.T) {
	for name, change := range map[string]func(*corev1.Pod){
		"higher":    func(p *corev1.Pod) { p.Spec.PriorityClassName, p.Spec.Priority = "critical", ptrTo(int32(2000)) },
		"equal":     func(p *corev1.Pod) { p.Spec.Priority = ptrTo(int32(1000)) },
		"daemonset": func(p *corev1.Pod) { p.OwnerReferences[0].Kind = "DaemonSet" },
		"mirror":    func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} },
	} {
		t.Run(name, func(t *testing.T) {
			snap, g := rowsFragmented()
			for _, p := range snap.Pods {
				change(p)
			}
			e, err := Gang(context.Background(), snap, g, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if s := find(e.Suggestions, SuggestMove); s != nil {
				t.Errorf("move offered: %s", s.Message)
			}
		})
	}
}

// Issue #27, near misses beyond a toleration's value: a toleration whose
// effect differs, one whose key differs only by case (operator Exists), and
// a node selector or required node affinity value that differs only by
// case from the label nodes carry: each is named and corrected, proven,
// first.
func TestExplainLeadsWithNearMisses(t *testing.T) {
	gpuPod := func() *corev1.Pod {
		return testutil.MakePod().Namespace("ml").Name("trainer").Req(testutil.Res{"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "8"}).Obj()
	}
	tainted, _ := rowsNearMiss()
	labelled := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 2)}
	for _, n := range labelled.Nodes {
		n.Labels["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-80GB"
	}
	product := corev1.NodeSelectorRequirement{Key: "nvidia.com/gpu.product", Operator: corev1.NodeSelectorOpIn, Values: []string{"nvidia-a100-sxm4-80gb"}}
	for _, tc := range []struct {
		name  string
		snap  *schedule.Snapshot
		pod   func(*corev1.Pod)
		kind  SuggestionKind
		words []string
	}{
		{"a toleration of another effect", tainted, func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "present", Effect: corev1.TaintEffectNoExecute}}
		}, SuggestTolerate, []string{`the pod's toleration {key: gpu, operator: Equal, value: "present", effect: NoExecute} is a near miss of taint gpu=present:NoSchedule: the effect differs (NoExecute vs NoSchedule): set effect: NoSchedule`, "it fits on zone-a-0"}},
		{"an Exists toleration whose key differs by case", tainted, func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "GPU", Operator: corev1.TolerationOpExists}}
		}, SuggestTolerate, []string{`the pod's toleration {key: GPU, operator: Exists} is a near miss of taint gpu=present:NoSchedule: the key differs only by case ("GPU" vs "gpu"): set key: gpu`}},
		{"a node selector value of another case", labelled, func(p *corev1.Pod) {
			p.Spec.NodeSelector = map[string]string{"nvidia.com/gpu.product": "nvidia-a100-sxm4-80gb"}
		}, SuggestSelector, []string{"nodeSelector nvidia.com/gpu.product=nvidia-a100-sxm4-80gb: no node carries it; the nearest label nodes carry is nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB (2 node(s)), which differs only by case", "it fits on zone-a-0"}},
		{"a required node affinity value of another case", labelled, func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{product}}}}}}
		}, SuggestSelector, []string{"nodeAffinity nvidia.com/gpu.product=nvidia-a100-sxm4-80gb: no node carries it", "which differs only by case", "it fits on zone-a-0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := gpuPod()
			tc.pod(pod)
			e, err := Pod(context.Background(), tc.snap, pod, Options{})
			s := firstSuggestion(t, e, err)
			wantWords(t, s, tc.kind, true, tc.words...)
			if tc.kind == SuggestTolerate && !s.NearMiss {
				t.Errorf("not a near miss: %s", s.Message)
			}
		})
	}
}

// Issue #42: the pod's PodGroup kind could not be listed (a user who may
// list pods but not PodGroups): whether the group exists is unknown, so the
// answer is not evaluated, never "create it"; where the list was allowed in
// the pod's namespace, a missing group is missing again.
func TestExplainPodOfUnreadPodGroup(t *testing.T) {
	pod := testutil.MakePod().Namespace("ml").Name("g3-0").Req(testutil.Res{"cpu": "1"}).PodGroup("g3").Obj()
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 1), Pods: []*corev1.Pod{pod},
		Unreadable: []string{"podgroups.scheduling.k8s.io"}}
	e, err := Pod(context.Background(), snap, pod, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const unread = "its PodGroup podgroups.scheduling.k8s.io/g3 in namespace ml could not be read (the list of podgroups.scheduling.k8s.io was refused)"
	if e.Verdict != VerdictUnverified || len(e.NotEvaluated) != 1 || !strings.HasPrefix(e.NotEvaluated[0], unread) || len(e.Suggestions) > 0 {
		t.Errorf("verdict %s, not evaluated %q, suggestions %v; want Unverified, %q, none", e.Verdict, e.NotEvaluated, kinds(e.Suggestions), unread)
	}
	snap.ReadIn = map[string][]string{"podgroups.scheduling.k8s.io": {"ml"}}
	e, err = Pod(context.Background(), snap, pod, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Verdict != VerdictUnschedulable || !slices.Contains(kinds(e.Suggestions), SuggestCreatePodGroup) {
		t.Errorf("read in ml: verdict %s, suggestions %v; want Unschedulable, CreatePodGroup", e.Verdict, kinds(e.Suggestions))
	}
}

// A pod that names two groups, the first missing but readable, the second
// of a kind that could not be read: the second may exist and own it, so the
// answer is not evaluated (review of issue #42's fix).
func TestExplainPodOfTwoGroupsOneUnread(t *testing.T) {
	pod := testutil.MakePod().Namespace("ml").Name("g3-0").Req(testutil.Res{"cpu": "1"}).PodGroup("g3").Obj()
	pod.Labels = map[string]string{coscheduling.Label: "g3"}
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 1), Pods: []*corev1.Pod{pod},
		Unreadable: []string{"podgroups.scheduling.x-k8s.io"}}
	e, err := Pod(context.Background(), snap, pod, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Verdict != VerdictUnverified || len(e.NotEvaluated) != 1 || !strings.Contains(e.NotEvaluated[0], "podgroups.scheduling.x-k8s.io/g3") {
		t.Errorf("verdict %s, not evaluated %q; want Unverified naming the coscheduling group", e.Verdict, e.NotEvaluated)
	}
}
