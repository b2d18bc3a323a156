package gang_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
	volcanomodel "github.com/kubectl-gang/kubectl-gang/pkg/volcano"
)

// volcanoPlace places the Volcano gang ml/train of snap under the
// configuration conf ("" for the chart's default).
func volcanoPlace(t *testing.T, snap *schedule.Snapshot, conf string) *gang.Placement {
	t.Helper()
	s := *snap
	if conf != "" {
		c, err := volcanomodel.Parse([]byte(conf), "test")
		if err != nil {
			t.Fatal(err)
		}
		volcano.SetConfig(&s, c)
	}
	g, err := gang.ResolvePodGroup(&s, gang.Ref{Namespace: "ml", Name: "train", Group: "scheduling.volcano.sh"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := gang.Place(context.Background(), &s, g, gang.PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func volcanoMembers(group string, n int, r testutil.Res) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range n {
		out = append(out, testutil.MakePod().Namespace("ml").Name(fmt.Sprintf("%s-%d", group, i)).Req(r).VolcanoGroup(group).Obj())
	}
	return out
}

// What the configuration changes, each derived from Volcano's code:
// capacity in place of proportion (capacity.go: allocatable against the
// queue's real capability, not a share divided among queues by weight),
// the overcommit factor (overcommit.go, argument overcommit-factor), the
// enqueue action left out (allocate.go buildAllocateContext takes Pending
// jobs as Inqueue), and a gang plugin without JobReady (allocate commits
// every task it places: never a plain yes here).
func TestVolcanoConfiguration(t *testing.T) {
	nodes := []*corev1.Node{
		testutil.MakeNode().Name("n1").Capacity(testutil.Res{"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "16"}).Obj(),
		testutil.MakeNode().Name("n2").Capacity(testutil.Res{"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "16"}).Obj(),
	}
	queues := []*unstructured.Unstructured{testutil.MakeVolcanoQueue("a").Obj(), testutil.MakeVolcanoQueue("b").Obj()}
	// Queue a: the gang, 6 x 2 CPUs, minimum 6; queue b: a Pending group
	// asking 16 CPUs. Proportion gives each queue 8 CPUs (weights 1:1):
	// 4 of 6 members get in. Capacity lets a task in up to the queue's
	// real capability (the cluster's 16): all 6 fit the nodes.
	shares := &schedule.Snapshot{Nodes: nodes, Objects: queues, PodGroups: []*unstructured.Unstructured{
		testutil.MakeVolcanoPodGroup("ml", "train", 6).Queue("a").Obj(),
		testutil.MakeVolcanoPodGroup("ml", "wide", 2).Queue("b").Obj(),
	}, Pods: append(volcanoMembers("train", 6, testutil.Res{"cpu": "2"}), volcanoMembers("wide", 2, testutil.Res{"cpu": "8"})...)}
	// 28 GPUs of minResources on 32 with 8 in use by a pod of no gang:
	// 32 x 1.2 - 8 = 30.4 takes it, 32 x 1.0 - 8 = 24 does not (proportion
	// takes it either way: 28 <= the queue's real capability 32).
	other := testutil.MakePod().Namespace("web").Name("inference").Req(testutil.Res{"nvidia.com/gpu": "8"}).Node("n1").Obj()
	overcommit := &schedule.Snapshot{Nodes: nodes, Objects: queues, PodGroups: []*unstructured.Unstructured{
		testutil.MakeVolcanoPodGroup("ml", "train", 2).Queue("a").MinResources(testutil.Res{"nvidia.com/gpu": "28"}).Obj(),
	}, Pods: append(volcanoMembers("train", 2, testutil.Res{"nvidia.com/gpu": "8"}), other)}
	const capacity = `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: predicates
  - name: capacity
  - name: nodeorder
`
	for _, tc := range []struct {
		name    string
		snap    *schedule.Snapshot
		conf    string
		verdict gang.Verdict
		gate    string
		checked bool // a plain answer, everything evaluated
	}{
		{"proportion divides the cluster between queues", shares, "", gang.VerdictUnschedulable, volcano.GateAllocate, true},
		{"capacity lets the queue up to its capability", shares, capacity, gang.VerdictPlaced, "", true},
		{"overcommit-factor 1.2 (default)", overcommit, "", gang.VerdictPlaced, "", true},
		{"overcommit-factor 1.0", overcommit, strings.Replace(volcanomodel.ChartDefault, "  - name: overcommit\n", "  - name: overcommit\n    arguments:\n      overcommit-factor: 1.0\n", 1),
			gang.VerdictUnschedulable, volcano.GateEnqueue, true},
		{"without the enqueue action", overcommit, strings.Replace(strings.Replace(volcanomodel.ChartDefault, "enqueue, ", "", 1), "  - name: overcommit\n", "  - name: overcommit\n    arguments:\n      overcommit-factor: 1.0\n", 1),
			gang.VerdictPlaced, "", true},
		{"a gang plugin without JobReady", overcommit, strings.Replace(volcanomodel.ChartDefault, "  - name: gang\n", "  - name: gang\n    enableJobReady: false\n", 1),
			gang.VerdictPlaced, "", false},
		{"an enqueue plugin this build does not run", overcommit, strings.Replace(volcanomodel.ChartDefault, "  - name: overcommit\n", "  - name: overcommit\n  - name: resourcequota\n", 1),
			gang.VerdictPlaced, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := volcanoPlace(t, tc.snap, tc.conf)
			gate := ""
			if p.Gate != nil {
				gate = p.Gate.Gate
			}
			if checked := len(p.AllNotEvaluated()) == 0; p.Verdict != tc.verdict || gate != tc.gate || checked != tc.checked {
				t.Errorf("%s, gate %q, evaluated %v (%s; not evaluated %v); want %s, gate %q, evaluated %v",
					p.Verdict, gate, checked, p.Message, p.AllNotEvaluated(), tc.verdict, tc.gate, tc.checked)
			}
		})
	}
}

// A queue's guarantee (proportion.go OnSessionOpen): queue a's gang of 4 x
// 8 GPUs, minimum 4, beside queue b's Pending group of 4 x 8 GPUs, weights
// 1:3, on 32 GPUs. Without a guarantee a deserves 32/4 = 8 GPUs, one
// member; with a guarantee of 32 GPUs a deserves 32 (raised to it) and b's
// real capability is the cluster less the guarantees, 0: a is placed.
func TestVolcanoGuarantee(t *testing.T) {
	qb := testutil.MakeVolcanoQueue("b").Obj()
	_ = unstructured.SetNestedField(qb.Object, int64(3), "spec", "weight")
	snap := func(qa *unstructured.Unstructured) *schedule.Snapshot {
		return &schedule.Snapshot{Nodes: testutil.GPUNodes("z", 4), Objects: []*unstructured.Unstructured{qa, qb}, PodGroups: []*unstructured.Unstructured{
			testutil.MakeVolcanoPodGroup("ml", "train", 4).Queue("a").Obj(),
			testutil.MakeVolcanoPodGroup("ml", "wide", 4).Queue("b").Obj(),
		}, Pods: append(volcanoMembers("train", 4, testutil.Res{"nvidia.com/gpu": "8"}), volcanoMembers("wide", 4, testutil.Res{"nvidia.com/gpu": "8"})...)}
	}
	p := volcanoPlace(t, snap(testutil.MakeVolcanoQueue("a").Obj()), "")
	if p.Verdict != gang.VerdictUnschedulable || p.Gate == nil || p.Gate.Gate != volcano.GateAllocate || p.Gate.Figures["queueDeserved"] != "nvidia.com/gpu=8, pods=4" {
		t.Errorf("without guarantee: %s (%s), figures %v; want held by VolcanoAllocate, deserved 8 GPUs", p.Verdict, p.Message, p.Gate)
	}
	p = volcanoPlace(t, snap(testutil.MakeVolcanoQueue("a").Guarantee(testutil.Res{"nvidia.com/gpu": "32"}).Obj()), "")
	if p.Verdict != gang.VerdictPlaced || len(p.Assignments) != 4 {
		t.Errorf("with guarantee: %s, %d placed (%s); want Placed, 4", p.Verdict, len(p.Assignments), p.Message)
	}
}

// A group no API server stored (a what-if: no creation time) is the newest
// in Volcano's job order (creation time, then UID): an older Pending group
// of its queue is enqueued first and reserves its minResources. Queue q
// has capability cpu=4: the older group asks 3, ours 2, so ours waits.
func TestVolcanoWhatIfIsNewest(t *testing.T) {
	older := testutil.MakeVolcanoPodGroup("ml", "older", 1).Queue("q").MinResources(testutil.Res{"cpu": "3"}).Obj()
	older.SetCreationTimestamp(metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	ours := testutil.MakeVolcanoPodGroup("ml", "train", 1).Queue("q").MinResources(testutil.Res{"cpu": "2"}).Obj()
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("z", 1),
		Objects:   []*unstructured.Unstructured{testutil.MakeVolcanoQueue("q").Capability(testutil.Res{"cpu": "4"}).Obj()},
		PodGroups: []*unstructured.Unstructured{older, ours},
		Pods:      append(volcanoMembers("train", 1, testutil.Res{"cpu": "2"}), volcanoMembers("older", 1, testutil.Res{"cpu": "3"})...)}
	p := volcanoPlace(t, snap, "")
	if p.Verdict != gang.VerdictUnschedulable || p.Gate == nil || p.Gate.Reason != volcano.ReasonQueueInsufficient || !strings.Contains(p.Gate.Detail, "ml/older") {
		t.Errorf("%s (%s), gate %+v; want held: ml/older is enqueued first", p.Verdict, p.Message, p.Gate)
	}
}
