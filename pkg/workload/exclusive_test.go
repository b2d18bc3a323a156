package workload_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// zoneJobSet is an exclusive JobSet (one key: topology.kubernetes.io/zone)
// of jobs child Jobs of pods pods each, every pod asking for gpus GPUs and
// the cpu given.
func zoneJobSet(jobs, pods, gpus int, cpu string) string {
	return fmt.Sprintf(`apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: topology.kubernetes.io/zone}}
spec:
  replicatedJobs:
  - name: w
    replicas: %d
    template:
      spec:
        parallelism: %d
        completions: %d
        template:
          spec:
            containers: [{name: c, image: c, resources: {requests: {cpu: "%s"}, limits: {nvidia.com/gpu: "%d"}}}]
`, jobs, pods, pods, cpu, gpus)
}

// zoneNode is an 8-GPU node of 96 cpus (or the cpus given) in a zone.
func zoneNode(name, zone string, cpus ...string) *corev1.Node {
	cpu := "96"
	if len(cpus) > 0 {
		cpu = cpus[0]
	}
	return testutil.MakeNode().Name(name).Label(corev1.LabelTopologyZone, zone).
		Capacity(testutil.Res{"cpu": cpu, "memory": "1Ti", "nvidia.com/gpu": "8"}).Obj()
}

// gpuPod is a running pod holding gpus GPUs (and nothing else) on node.
func gpuPod(name, node string, gpus int) *corev1.Pod {
	return testutil.MakePod().Name(name).Namespace("other").UID(name).Req(testutil.Res{"nvidia.com/gpu": fmt.Sprint(gpus)}).Node(node).Obj()
}

func placeSnapshot(t *testing.T, snap *schedule.Snapshot, manifest string) *gang.Placement {
	t.Helper()
	g := whatIf(t, []byte(manifest), "js.yaml", nil)
	p, err := gang.Place(context.Background(), snap, g, gang.PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The case of issue #26: zone a has one node with 4 of 8 GPUs free, b a
// node with 4 free and one with 8, c one node with 8. A Job of two 4-GPU
// pods: kube-scheduler's default scoring reads cpu and memory only, so the
// leader ties on all four nodes (kube-scheduler takes any of them), and on
// a-0 its follower has nowhere to go in zone a: a coin toss, never a plain
// yes. The plan is the first tie that works (b-0, the follower on b-1),
// and the risk names a-0 and says what removes it.
func TestExclusiveJobSetCoinToss(t *testing.T) {
	snap := &schedule.Snapshot{
		Nodes: []*corev1.Node{zoneNode("a-0", "a"), zoneNode("b-0", "b"), zoneNode("b-1", "b"), zoneNode("c-0", "c")},
		Pods:  []*corev1.Pod{gpuPod("used-a", "a-0", 4), gpuPod("used-b", "b-0", 4)},
	}
	p := placeSnapshot(t, snap, zoneJobSet(1, 2, 4, "1"))
	if p.Verdict != gang.VerdictPlaced || p.Verified() {
		t.Errorf("verdict %s, verified %v, want Placed and not verified: %s", p.Verdict, p.Verified(), p.Message)
	}
	want := []string{"js-w-0-0->b-0", "js-w-0-1->b-1"}
	if diff := cmp.Diff(want, placed(p)); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	risk := strings.Join(p.AllNotEvaluated(), "\n")
	for _, s := range []string{
		"a coin toss",
		"ml/js-w-0-0, the leader of its child Job, may land on a-0 (topology.kubernetes.io/zone=a), where the rest cannot follow",
		"a nodeSelector or node affinity on topology.kubernetes.io/zone: b, c",
	} {
		if !strings.Contains(risk, s) {
			t.Errorf("not evaluated lacks %q:\n%s", s, risk)
		}
	}
	if strings.Contains(risk, "b-0 (") || strings.Contains(risk, "c-0 (") {
		t.Errorf("a node that works is named as a risk:\n%s", risk)
	}

	// Pinned to the zones that hold it (the remedy), it is a plain yes.
	pinned := strings.Replace(zoneJobSet(1, 2, 4, "1"), "          spec:\n            containers",
		"          spec:\n            affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "+
			"[{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [b, c]}]}]}}}\n            containers", 1)
	if p := placeSnapshot(t, snap, pinned); !p.Verified() {
		t.Errorf("pinned to b and c: %s, verified %v: %s %v", p.Verdict, p.Verified(), p.Message, p.AllNotEvaluated())
	}
}

// Ties that all work are a plain yes: two zones of two empty 8-GPU nodes,
// a Job of two 8-GPU pods; wherever the leader lands, its follower has the
// other node of the zone. Two such Jobs take a zone each, whichever the
// first takes.
func TestExclusiveJobSetTiesThatAllWork(t *testing.T) {
	snap := &schedule.Snapshot{Nodes: []*corev1.Node{zoneNode("a-0", "a"), zoneNode("a-1", "a"), zoneNode("b-0", "b"), zoneNode("b-1", "b")}}
	p := placeSnapshot(t, snap, zoneJobSet(2, 2, 8, "1"))
	if !p.Verified() || len(p.AllNotEvaluated()) > 0 {
		t.Fatalf("%s, verified %v: %s %v", p.Verdict, p.Verified(), p.Message, p.AllNotEvaluated())
	}
	want := []string{"js-w-0-0->a-0", "js-w-0-1->a-1", "js-w-1-0->b-0", "js-w-1-1->b-1"}
	if diff := cmp.Diff(want, placed(p)); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}

// A leader whose single best node is in a zone that cannot hold its
// followers is a certain no: a-0 has twice the cpus, so LeastAllocated
// scores it above the 96-cpu nodes of zone b for a pod asking for 32 cpus,
// and zone a has no second node. Zone b would hold the Job, which is what
// the old search answered.
func TestExclusiveJobSetBestNodeInBadZone(t *testing.T) {
	snap := &schedule.Snapshot{Nodes: []*corev1.Node{zoneNode("a-0", "a", "192"), zoneNode("b-0", "b"), zoneNode("b-1", "b")}}
	p := placeSnapshot(t, snap, zoneJobSet(1, 2, 8, "32"))
	if p.Verdict != gang.VerdictUnschedulable {
		t.Fatalf("%s: %s", p.Verdict, p.Message)
	}
	for _, s := range []string{
		"ml/js-w-0-0, the leader of its child Job, goes to a-0 (topology.kubernetes.io/zone=a), the best-scored node, where the rest cannot follow",
		"ml/js-w-0-1: 0/3 nodes are available",
	} {
		if !strings.Contains(p.Message, s) {
			t.Errorf("message lacks %q:\n%s", s, p.Message)
		}
	}
	if p.Blocker == nil || p.Blocker.Pod.Name != "js-w-0-1" || len(p.BlockerAfter) != 1 || p.BlockerAfter[0].Node != "a-0" {
		t.Errorf("blocker %+v after %+v", p.Blocker, p.BlockerAfter)
	}
	// What would run: the leader on a-0, bound, and its follower Pending.
	if diff := cmp.Diff([]string{"js-w-0-0->a-0"}, placed(p)); diff != "" {
		t.Errorf("best attempt (-want +got):\n%s", diff)
	}
}

// When every node of the top score leaves the followers short, the Job is
// stuck whichever kube-scheduler picks: a certain no that names them all.
func TestExclusiveJobSetEveryTieBad(t *testing.T) {
	snap := &schedule.Snapshot{Nodes: []*corev1.Node{zoneNode("a-0", "a"), zoneNode("b-0", "b")}}
	p := placeSnapshot(t, snap, zoneJobSet(1, 2, 8, "1"))
	want := "ml/js-w-0-0, the leader of its child Job, goes to one of a-0 (topology.kubernetes.io/zone=a), b-0 (topology.kubernetes.io/zone=b) (equal top scores), and the rest can follow on none"
	if p.Verdict != gang.VerdictUnschedulable || !strings.Contains(p.Message, want) {
		t.Errorf("%s: %s\nwant it to say %q", p.Verdict, p.Message, want)
	}
}

// A LeaderWorkerSet's exclusive groups run the same way: the leader (a
// cpu pod) first, on any node of the top score, the workers pinned to its
// value. Block a has one 8-GPU node, b two: a group of a leader and two
// 8-GPU workers fits only in b, but its leader ties on a-0 too.
func TestExclusiveLWSCoinToss(t *testing.T) {
	nodes := blockNodes(1, 2)
	p := placeLWS(t, nodes, lws(1, 3, "leaderworkerset.sigs.k8s.io/exclusive-topology: "+block, ""), true)
	risk := strings.Join(p.AllNotEvaluated(), "\n")
	if p.Verdict != gang.VerdictPlaced || p.Verified() ||
		!strings.Contains(risk, "ml/infer-0, the leader of its LeaderWorkerSet group, may land on a-0 ("+block+"=a), where the rest cannot follow") {
		t.Errorf("%s, verified %v: %s\n%s", p.Verdict, p.Verified(), p.Message, risk)
	}
	want := []string{"infer-0->b-0", "infer-0-1->b-1", "infer-0-2->b-0"}
	if diff := cmp.Diff(want, placed(p)); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}
