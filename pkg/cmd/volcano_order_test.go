package cmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
)

// volcanoPackingSnapshot: two nodes of 32 cpu, 128Gi and 8 GPUs; node-a
// runs a pod of 16 cpu, 64Gi and 2 GPUs, node-b nothing. The Volcano gang
// train has a small member (2 cpu, 8Gi, 2 GPUs; first by name) and a big
// one (8 cpu, 32Gi, 8 GPUs) that fits only on an empty node.
const volcanoPackingSnapshot = `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: node-a}, status: {allocatable: {cpu: "32", memory: 128Gi, pods: "110", nvidia.com/gpu: "8"}}}
- {apiVersion: v1, kind: Node, metadata: {name: node-b}, status: {allocatable: {cpu: "32", memory: 128Gi, pods: "110", nvidia.com/gpu: "8"}}}
- {apiVersion: v1, kind: Pod, metadata: {name: used, namespace: other}, spec: {nodeName: node-a, containers: [{name: c, image: x, resources: {requests: {cpu: "16", memory: 64Gi, nvidia.com/gpu: "2"}, limits: {nvidia.com/gpu: "2"}}}]}, status: {phase: Running}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: default}, spec: {weight: 1}, status: {state: Open}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: train, namespace: ml}, spec: {minMember: 2, queue: default}}
- {apiVersion: v1, kind: Pod, metadata: {name: train-0-small, namespace: ml, annotations: {scheduling.k8s.io/group-name: train}}, spec: {schedulerName: volcano, containers: [{name: c, image: x, resources: {requests: {cpu: "2", memory: 8Gi, nvidia.com/gpu: "2"}, limits: {nvidia.com/gpu: "2"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: train-1-big, namespace: ml, annotations: {scheduling.k8s.io/group-name: train}}, spec: {schedulerName: volcano, containers: [{name: c, image: x, resources: {requests: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "8"}, limits: {nvidia.com/gpu: "8"}}}]}}
`

// TestVolcanoGangPackedAsVolcanoPacksIt: where the small member lands
// decides whether the big one fits, and Volcano's node order and
// kube-scheduler's default profile choose differently.
//
// Volcano, chart default (allocate's prioritizeNodes over both nodes,
// util.PrioritizeNodes' sum), for the small member:
//   - binpack.BinPackingScore (cpu, memory): node-a ((2+16)/32 +
//     (8+64)/128)/2 x 100 = 56.25; node-b (2/32 + 8/128)/2 x 100 = 6.25;
//   - nodeorder's NodeResourcesFit LeastAllocated (cpu, memory):
//     node-a 43 (43.75 floored per resource), node-b 93;
//   - nodeorder's BalancedAllocation over cpu, memory and nvidia.com/gpu:
//     node-a 0.5625, 0.5625, 0.5 with the pod (std 0.0295: 97) against
//     0.5, 0.5, 0.25 without (88): 50 + (50 + 97 - 88)/2 = 79; node-b
//     0.0625, 0.0625, 0.25 (91) against 0, 0, 0 (100): 70;
//   - TaintToleration 100 x 3 on both; the rest skip or score 0.
//
// node-a 478.25, node-b 469.25: the small member packs onto node-a, and
// the big one takes the only node left with 8 GPUs (one candidate,
// unscored). kube-scheduler's default profile weighs no GPU: LeastAllocated
// 43 against 93, BalancedAllocation over cpu and memory 75 on both, so the
// small member spreads onto node-b and the big one fits nowhere.
func TestVolcanoGangPackedAsVolcanoPacksIt(t *testing.T) {
	type member struct {
		Pod    string `json:"pod"`
		Node   string `json:"node"`
		Status string `json:"status"`
	}
	var plan struct {
		Verdict string   `json:"verdict"`
		Members []member `json:"members"`
	}
	args := []string{"place", "podgroups.scheduling.volcano.sh/train", "-n", "ml", "--snapshot", "-", "-o", "json"}

	code, out, stderr := run(t, volcanoPackingSnapshot, args...)
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("exit %d, stderr %q: %v\n%s", code, stderr, err, out)
	}
	// The node order is logged at -v 1 only: the output names the
	// configuration once, and a Volcano gang's schedulerName is no cause
	// for a warning.
	if code != ExitOK || plan.Verdict != "Placed" || stderr != "" {
		t.Errorf("Volcano's node order: exit %d, verdict %q, stderr %q; want 0, Placed, nothing on stderr", code, plan.Verdict, stderr)
	}
	o := &SchedulerFlags{}
	if _, note, ok := o.volcanoPlaceOptions(&schedule.Snapshot{}, volcano.Source); !ok || !strings.Contains(note,
		"NodeResourcesFit_LeastAllocated x1, NodeResourcesBalancedAllocation x1, NodeAffinity x2, InterPodAffinity x2, TaintToleration x3, PodTopologySpread x2, ImageLocality x1, binpack x1 (cpu:1 memory:1)") {
		t.Errorf("the -v note: %q", note)
	}
	want := map[string]string{"ml/train-0-small": "node-a", "ml/train-1-big": "node-b"}
	if len(plan.Members) != len(want) {
		t.Errorf("%d members in the plan, want %d", len(plan.Members), len(want))
	}
	for _, m := range plan.Members {
		if want[m.Pod] != m.Node {
			t.Errorf("%s on %q, want %q", m.Pod, m.Node, want[m.Pod])
		}
	}

	// --profile chooses kube-scheduler's default profile: the small member
	// spreads onto the empty node.
	code, out, stderr = run(t, volcanoPackingSnapshot, append(args, "--profile", "default-scheduler")...)
	plan.Verdict, plan.Members = "", nil
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("exit %d, stderr %q: %v\n%s", code, stderr, err, out)
	}
	if code != ExitNo || plan.Verdict != "Unschedulable" || stderr != "" {
		t.Errorf("kube-scheduler's profile: exit %d, verdict %q, stderr %q; want 3, Unschedulable, none", code, plan.Verdict, stderr)
	}
}

// TestPendingListPlacesVolcanoGangsAsVolcano: explain without a subject
// judges a Volcano gang with Volcano's node order too, and says so once.
func TestPendingListPlacesVolcanoGangsAsVolcano(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		verdict string
	}{
		{"Volcano's node order", nil, "Starts"},
		{"kube-scheduler's profile", []string{"--profile", "default-scheduler"}, "Blocked"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, volcanoPackingSnapshot, append([]string{"explain", "-n", "ml", "--snapshot", "-"}, tt.args...)...)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if code != ExitOK || len(lines) != 2 || strings.Fields(lines[1])[6] != tt.verdict {
				t.Errorf("exit %d, output:\n%s\nwant 0 and podgroup/train %s", code, out, tt.verdict)
			}
			if stderr != "" {
				t.Errorf("stderr %q, want nothing", stderr)
			}
		})
	}
}

// Two Volcano jobs that each fit the cluster as it is, but not both: in
// Volcano's session the older (Session.JobOrderFn: priority, then
// creation) is allocated first, so explaining the newer is no plain yes,
// and the list says it waits behind the older.
func TestVolcanoJobAheadInTheSessionTakesTheRoom(t *testing.T) {
	snap := `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: node-a}, status: {allocatable: {cpu: "32", memory: 128Gi, pods: "110", nvidia.com/gpu: "8"}}}
- {apiVersion: v1, kind: Node, metadata: {name: node-b}, status: {allocatable: {cpu: "32", memory: 128Gi, pods: "110", nvidia.com/gpu: "8"}}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: default}, spec: {weight: 1}, status: {state: Open}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: older, namespace: ml, creationTimestamp: "2026-11-26T08:00:00Z"}, spec: {minMember: 2, queue: default}, status: {phase: Inqueue}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: newer, namespace: ml, creationTimestamp: "2026-11-26T09:00:00Z"}, spec: {minMember: 2, queue: default}, status: {phase: Inqueue}}
`
	for _, g := range []string{"older", "newer"} {
		for i := range 2 {
			snap += fmt.Sprintf("- {apiVersion: v1, kind: Pod, metadata: {name: %s-%d, namespace: ml, creationTimestamp: \"2026-11-26T09:00:00Z\", annotations: {scheduling.k8s.io/group-name: %s}}, spec: {schedulerName: volcano, containers: [{name: c, image: x, resources: {requests: {cpu: \"2\", memory: 8Gi, nvidia.com/gpu: \"8\"}, limits: {nvidia.com/gpu: \"8\"}}}]}}\n", g, i, g)
		}
	}
	code, out, stderr := run(t, snap, "explain", "podgroup/newer", "-n", "ml", "--snapshot", "-", "-o", "jsonpath={.verdict} {.queue.position}/{.queue.of} {.queue.verdict} {.notEvaluated}")
	if code != ExitNo || !strings.HasPrefix(out, "Unverified 2/2 Waits ") || !strings.Contains(out, "podgroup/older take(s) the room") {
		t.Errorf("explain podgroup/newer: exit %d, %q (stderr %q); want exit 3, Unverified, waiting behind podgroup/older", code, out, stderr)
	}
	if code, out, _ = run(t, snap, "explain", "podgroup/older", "-n", "ml", "--snapshot", "-", "-o", "jsonpath={.verdict} {.queue.verdict}"); code != ExitOK || out != "Schedulable Starts" {
		t.Errorf("explain podgroup/older: exit %d, %q; want Schedulable Starts", code, out)
	}
}
