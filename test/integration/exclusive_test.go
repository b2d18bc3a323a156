package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
	"github.com/kubectl-gang/kubectl-gang/test/testbed"
)

// exclusiveBed is a test bed of its own that runs what runs a JobSet: the
// real JobSet controller v0.10.1 with its webhooks, kube-controller-manager's
// Job controller and kube-scheduler (the webhooks admit every pod, so the
// package's shared bed is not used).
type exclusiveBed struct {
	t   *testing.T
	bed *testbed.Env
	dyn dynamic.Interface
	ns  string
}

// round creates the nodes of one round (each name and zone prefixed with
// the round, the previous round's nodes deleted, so that a round's pods
// never see another's), with pods bound to them holding GPUs as given.
func (b *exclusiveBed) round(r int, nodes []*corev1.Node, usedGPUs map[string]int) {
	b.t.Helper()
	ctx, cs := b.t.Context(), b.bed.Clientset()
	old, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		b.t.Fatal(err)
	}
	for _, n := range old.Items {
		if err := cs.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil {
			b.t.Fatal(err)
		}
	}
	for _, n := range nodes {
		n = n.DeepCopy()
		n.Name = fmt.Sprintf("r%d-%s", r, n.Name)
		n.Labels[corev1.LabelHostname] = n.Name
		n.Labels[corev1.LabelTopologyZone] = fmt.Sprintf("r%d-%s", r, n.Labels[corev1.LabelTopologyZone])
		if err := b.bed.CreateNode(ctx, n); err != nil {
			b.t.Fatal(err)
		}
	}
	for node, gpus := range usedGPUs {
		node = fmt.Sprintf("r%d-%s", r, node)
		pod := testutil.MakePod().Name("used-" + node).Namespace(b.ns + "-used").Req(testutil.Res{"nvidia.com/gpu": fmt.Sprint(gpus)}).Obj()
		pod.Spec.NodeName = node
		if _, err := cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			b.t.Fatal(err)
		}
	}
}

// place runs `place -f` on the JobSet's manifest against the live bed.
func (b *exclusiveBed) place(manifest string) (int, placementJSON, []string) {
	b.t.Helper()
	path := filepath.Join(b.t.TempDir(), "js.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		b.t.Fatal(err)
	}
	code, out, stderr := runCLI(b.t, "", "place", "-f", path, "-n", b.ns, "--kubeconfig", b.bed.Kubeconfig, "-o", "json")
	var p placementJSON
	decodeVerdict(b.t, code, out, stderr, &p)
	var extra struct {
		NotEvaluated []string `json:"notEvaluated"`
	}
	if err := json.Unmarshal([]byte(out), &extra); err != nil {
		b.t.Fatal(err)
	}
	return code, p, extra.NotEvaluated
}

// run creates the JobSet and waits until its first Job's follower is bound
// (every pod then is) or kube-scheduler reports it Unschedulable; it
// returns the leader's node and whether the follower is stuck.
func (b *exclusiveBed) run(manifest string) (leader string, stuck bool) {
	b.t.Helper()
	ctx := b.t.Context()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		b.t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
	if _, err := b.dyn.Resource(gvr).Namespace(b.ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		b.t.Fatal(err)
	}
	selector := "jobset.sigs.k8s.io/jobset-name=" + obj.GetName()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		pods, err := b.bed.Clientset().CoreV1().Pods(b.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			b.t.Fatal(err)
		}
		var follower *corev1.Pod
		for i := range pods.Items {
			pod := &pods.Items[i]
			switch pod.Labels["batch.kubernetes.io/job-completion-index"] {
			case "0":
				leader = pod.Spec.NodeName
			case "1":
				follower = pod
			}
		}
		if follower != nil {
			if follower.Spec.NodeName != "" {
				return leader, false
			}
			for _, c := range follower.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
					b.t.Logf("%s: leader on %s, follower %s (nodeSelector %v): %s", obj.GetName(), leader, follower.Name, follower.Spec.NodeSelector, c.Message)
					return leader, true
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.t.Fatalf("%s: neither bound nor stuck after 30s (leader on %q; logs in %s)", obj.GetName(), leader, b.bed.LogDir)
	return "", false
}

// zoneJobSet is an exclusive JobSet on the zone label: one child Job of two
// pods asking for gpus GPUs and cpu cpus; affinity, when set, is the pod
// template's.
func zoneJobSet(name string, gpus int, cpu, affinity string) string {
	return fmt.Sprintf(`apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: %s, annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: topology.kubernetes.io/zone}}
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        parallelism: 2
        completions: 2
        template:
          spec:
            %s
            containers: [{name: c, image: c, resources: {requests: {cpu: "%s"}, limits: {nvidia.com/gpu: "%d"}}}]
`, name, affinity, cpu, gpus)
}

func zoneNode(name, zone, cpu string) *corev1.Node {
	return testutil.MakeNode().Name(name).Label(corev1.LabelTopologyZone, zone).
		Capacity(testutil.Res{"cpu": cpu, "memory": "1Ti", "nvidia.com/gpu": "8", "pods": "110"}).Obj()
}

// With the real JobSet controller, Job controller and kube-scheduler, an
// exclusive JobSet whose leader ties between nodes with room for its
// follower and nodes without is a coin toss: place says so (exit 3) and
// names the nodes that strand the follower; the real controllers, round
// after round, leave the follower Pending exactly when the leader lands on
// one of those nodes, and bind it when the leader lands elsewhere, and the
// rounds show both. Pinned
// to the zone that holds it (the remedy the answer gives), place says
// Placed (exit 0) and the JobSet binds whole every time. A leader whose
// single best node is in a zone without room is a certain no, and the
// controllers strand its follower.
func TestExclusiveJobSetAsTheControllersRunIt(t *testing.T) {
	ctx := t.Context()
	dir, err := testbed.ResolveControllers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bed, err := testbed.Start(ctx, testbed.Options{Scheduler: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = bed.Stop()
		if !t.Failed() {
			_ = bed.RemoveLogs()
		} else {
			t.Logf("component logs: %s", bed.LogDir)
		}
	})
	if err := bed.StartJobSetControllers(ctx, dir); err != nil {
		t.Fatal(err)
	}
	b := &exclusiveBed{t: t, bed: bed, dyn: dynamic.NewForConfigOrDie(bed.Config), ns: "exclusive"}
	for _, ns := range []string{b.ns, b.ns + "-used"} {
		if _, err := bed.Clientset().CoreV1().Namespaces().Create(ctx, testutil.MakeNamespace(ns), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// Zones a, d and e: one node each with 4 of 8 GPUs free; c one node
	// with 8. A Job of two 4-GPU pods ties on all four (default scoring
	// reads cpu and memory only); only on c-0 can its follower follow.
	// kube-scheduler v1.37.1 takes the first of the tied nodes in the order
	// their filters finished (its tie-breaking Randomizer is set only when
	// extenders score), which follows the order the nodes were added, so
	// the rounds alternate it: the same verdict, both outcomes.
	coinNodes := []*corev1.Node{zoneNode("a-0", "a", "96"), zoneNode("d-0", "d", "96"), zoneNode("e-0", "e", "96"), zoneNode("c-0", "c", "96")}
	used := map[string]int{"a-0": 4, "d-0": 4, "e-0": 4}
	sawStuck, sawBound := false, false
	for r := 1; r <= 8 && !(sawStuck && sawBound); r++ {
		nodes := coinNodes
		if r%2 == 0 {
			nodes = slices.Clone(coinNodes)
			slices.Reverse(nodes)
		}
		b.round(r, nodes, used)
		name := fmt.Sprintf("coin-%d", r)
		code, p, notEvaluated := b.place(zoneJobSet(name, 4, "1", ""))
		risk := strings.Join(notEvaluated, "\n")
		var risky []string
		for _, n := range []string{"a-0", "d-0", "e-0", "c-0"} {
			node := fmt.Sprintf("r%d-%s", r, n)
			if strings.Contains(risk, node+" (topology.kubernetes.io/zone=") {
				risky = append(risky, node)
			}
		}
		wantRisky := []string{fmt.Sprintf("r%d-a-0", r), fmt.Sprintf("r%d-d-0", r), fmt.Sprintf("r%d-e-0", r)}
		if code != cmd.ExitNo || p.Verdict != "Placed" || !strings.Contains(risk, "a coin toss") || !slices.Equal(risky, wantRisky) {
			t.Fatalf("round %d: place exit %d, %s, risky nodes %v, want exit 3 and %v: %s\n%s", r, code, p.Verdict, risky, wantRisky, p.Message, risk)
		}
		leader, stuck := b.run(zoneJobSet(name, 4, "1", ""))
		t.Logf("round %d: the leader landed on %s, stuck %v", r, leader, stuck)
		if stuck != slices.Contains(risky, leader) {
			t.Errorf("round %d: the leader landed on %s and the follower stuck=%v; place named %v", r, leader, stuck, risky)
		}
		sawStuck, sawBound = sawStuck || stuck, sawBound || !stuck
	}
	if !sawStuck || !sawBound {
		t.Errorf("the rounds did not show both outcomes of the coin toss: stranded %v, bound %v", sawStuck, sawBound)
	}

	// Pinned to zone c, the same JobSet is Placed (exit 0) and binds whole.
	for r := 9; r <= 10; r++ {
		b.round(r, coinNodes, used)
		name := fmt.Sprintf("pinned-%d", r)
		pin := fmt.Sprintf("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "+
			"[{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [r%d-c]}]}]}}}", r)
		code, p, notEvaluated := b.place(zoneJobSet(name, 4, "1", pin))
		if code != cmd.ExitOK || p.Verdict != "Placed" || len(notEvaluated) > 0 {
			t.Fatalf("round %d: place exit %d, %s: %s %v", r, code, p.Verdict, p.Message, notEvaluated)
		}
		if leader, stuck := b.run(zoneJobSet(name, 4, "1", pin)); stuck || leader != fmt.Sprintf("r%d-c-0", r) {
			t.Errorf("round %d: pinned: leader on %s, stuck %v", r, leader, stuck)
		}
	}

	// A certain no: a-0 has twice the cpus, so it alone scores best for a
	// pod asking for 32; zone a has no room for the follower, b would.
	b.round(11, []*corev1.Node{zoneNode("a-0", "a", "192"), zoneNode("b-0", "b", "96"), zoneNode("b-1", "b", "96")}, nil)
	code, p, _ := b.place(zoneJobSet("no-11", 8, "32", ""))
	if code != cmd.ExitNo || p.Verdict != "Unschedulable" || !strings.Contains(p.Message, "goes to r11-a-0 (topology.kubernetes.io/zone=r11-a), the best-scored node, where the rest cannot follow") {
		t.Fatalf("certain no: place exit %d, %s: %s", code, p.Verdict, p.Message)
	}
	if leader, stuck := b.run(zoneJobSet("no-11", 8, "32", "")); !stuck || leader != "r11-a-0" {
		t.Errorf("certain no: leader on %s, stuck %v; want r11-a-0 and stuck", leader, stuck)
	}
}
