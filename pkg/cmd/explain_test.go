package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
)

// blockThreePod is a pending 8-GPU pod of no gang that only the nodes of
// zone b's third block (gpu-b-08..11) may take: one is full with a pod of
// equal priority, one has 2 GPUs free, one is NotReady, one cordoned.
const blockThreePod = `apiVersion: v1
kind: Pod
metadata:
  name: llm-eval-block3
  namespace: ml-research
  creationTimestamp: "2026-11-10T09:00:00Z"
spec:
  priorityClassName: training-high
  priority: 100000
  nodeSelector:
    network.topology.kubernetes.io/block: us-east-1b-block-3
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  containers:
  - name: eval
    image: nvcr.io/nvidia/pytorch:26.09-py3
    resources:
      requests: {cpu: "90", memory: 1000Gi, nvidia.com/gpu: "8"}
      limits: {nvidia.com/gpu: "8"}
status:
  phase: Pending
`

// exampleWithPod is a snapshot directory: the example plus extra manifests.
func exampleWithPod(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(exampleSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cluster.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "extra.yaml"), []byte(extra), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestExplainGolden runs explain on the example snapshot: the pending gang
// (every section of the output), the same as -o wide and -o json, a pod of
// no gang that does not fit, and the gated pod.
func TestExplainGolden(t *testing.T) {
	withPod := exampleWithPod(t, blockThreePod)
	tests := []struct {
		golden   string
		args     []string
		wantCode int
	}{
		{"explain-gang.golden", []string{"podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot}, ExitNo},
		{"explain-gang-wide.golden", []string{"podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot, "-o", "wide"}, ExitNo},
		{"explain-gang-json.golden", []string{"podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot, "-o", "json"}, ExitNo},
		{"explain-pod.golden", []string{"pod/llm-eval-block3", "-n", "ml-research", "--snapshot", withPod}, ExitNo},
		{"explain-pod-yaml.golden", []string{"pod/llm-eval-block3", "-n", "ml-research", "--snapshot", withPod, "-o", "yaml"}, ExitNo},
		{"explain-pod-gated.golden", []string{"pod/eval-llm-nightly-6qs4l", "-n", "ml-research", "--snapshot", exampleSnapshot}, ExitNo},
		{"explain-selector-running.golden", []string{"-l", "app=sweep-lr", "-n", "ml-research", "--snapshot", exampleSnapshot}, ExitOK},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.golden, ".golden"), func(t *testing.T) {
			code, out, stderr := run(t, "", append([]string{"explain"}, tt.args...)...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d; stderr %q", code, tt.wantCode, stderr)
			}
			if strings.Contains(stderr, "error") {
				t.Errorf("stderr: %s", stderr)
			}
			testutil.Golden(t, filepath.Join("testdata", tt.golden), []byte(out))
		})
	}
}

// TestExplainPodOfGang: pod/NAME of a gang member explains its gang.
func TestExplainPodOfGang(t *testing.T) {
	_, viaPod, _ := run(t, "", "explain", "pod/llm-pretrain-worker-3", "-n", "ml-research", "--snapshot", exampleSnapshot)
	_, viaGroup, _ := run(t, "", "explain", "podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot)
	// The member's screen is its gang's, after one line on how the member
	// does by itself: worker-3 alone would fit; it waits for its gang.
	verdict, rest, _ := strings.Cut(viaGroup, "\n")
	member := "Pod ml-research/llm-pretrain-worker-3 alone would fit (best node gpu-a-04, score 482): it waits for its gang, below."
	if want := verdict + "\n" + member + "\n" + rest; viaPod != want {
		t.Errorf("pod/llm-pretrain-worker-3 (-want +got):\n%s", cmp.Diff(want, viaPod))
	}
}

// TestExplainJSONCarriesTheFacts checks the fields tools rely on, and that
// the suggestions find what examples/README.md says makes the gang fit.
func TestExplainJSONCarriesTheFacts(t *testing.T) {
	code, out, stderr := run(t, "", "explain", "podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot, "-o", "json")
	if code != ExitNo {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var e struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		v1alpha1.Explanation
	}
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatal(err)
	}
	if e.APIVersion != v1alpha1.GroupVersion || e.Kind != "Explanation" || e.Verdict != "Unschedulable" {
		t.Errorf("apiVersion %q kind %q verdict %q", e.APIVersion, e.Kind, e.Verdict)
	}
	if !strings.HasPrefix(e.Message, "0/35 nodes are available: ") {
		t.Errorf("message %q", e.Message)
	}
	if len(e.Nodes) != 35 || e.Validity == nil || !e.Validity.Valid || *e.MinMember != 9 || *e.MaxPlaceable != 8 {
		t.Errorf("%d nodes, validity %+v, minMember %v, maxPlaceable %v", len(e.Nodes), e.Validity, e.MinMember, e.MaxPlaceable)
	}
	var raw map[string]any
	_ = json.Unmarshal([]byte(out), &raw)
	for _, key := range []string{"verdict", "message", "nodes", "validity", "maxPlaceable", "minMember", "suggestions"} {
		if _, ok := raw[key]; !ok {
			t.Errorf("the Explanation lacks %q", key)
		}
	}
	for _, key := range []string{"name", "feasible", "reasons"} {
		if _, ok := raw["nodes"].([]any)[0].(map[string]any)[key]; !ok {
			t.Errorf("a node lacks %q", key)
		}
	}
	// A score only where the node is feasible: an infeasible one has none
	// (not 0, which is a score).
	for _, n := range raw["nodes"].([]any) {
		node := n.(map[string]any)
		if _, scored := node["score"]; scored != node["feasible"].(bool) {
			t.Errorf("node %v: feasible %v, score present %v", node["name"], node["feasible"], scored)
		}
	}

	byKind := map[string]v1alpha1.Suggestion{}
	for _, s := range e.Suggestions {
		byKind[s.Kind] = s
	}
	// README: the gang misses zone b by one node.
	if s := byKind["Shortfall"]; len(s.Shortfall) == 0 || s.Shortfall[0].Resource != "nvidia.com/gpu" || s.Shortfall[0].Short != "8" {
		t.Errorf("shortfall %+v, want 8 nvidia.com/gpu first", s.Shortfall)
	}
	// README 1: preempt the two batch-low pods on gpu-b-07, and nothing else.
	var victims []string
	for _, v := range byKind["Preempt"].Victims {
		victims = append(victims, v.Pod+"@"+v.Node)
	}
	if diff := cmp.Diff([]string{"ml-research/sweep-lr-0@gpu-b-07", "ml-research/sweep-lr-1@gpu-b-07"}, victims); diff != "" || !byKind["Preempt"].Verified {
		t.Errorf("victims (-want +got):\n%s", diff)
	}
	// README 2: one more GPU node like the others, in zone b.
	if n := byKind["AddNodes"].NewNodes; n == nil || n.Count != 1 || n.Like != "gpu-b-00" || n.Domain != "us-east-1b" || n.Allocatable["nvidia.com/gpu"] != "8" {
		t.Errorf("new nodes %+v", n)
	}
	// README 3: uncordon gpu-b-11, or get gpu-b-10 Ready again.
	var repairs []string
	for _, r := range byKind["RepairNodes"].Repairs {
		repairs = append(repairs, r.Node)
	}
	if diff := cmp.Diff([]string{"gpu-b-10", "gpu-b-11"}, repairs); diff != "" || byKind["RepairNodes"].Together {
		t.Errorf("repairs (-want +got):\n%s", diff)
	}
	// README 4: lower minCount to 8.
	if byKind["LowerMinMember"].MinMember != 8 {
		t.Errorf("lower min member %+v", byKind["LowerMinMember"])
	}
}

func TestExplainNoHeaders(t *testing.T) {
	_, out, _ := run(t, "", "explain", "podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot, "--no-headers")
	for _, header := range []string{"NODE ", "DOMAIN ", "What would make it fit", "Gang:", "Nodes by verdict", "Members each", "Nodes for"} {
		if strings.Contains(out, header) {
			t.Errorf("--no-headers output has the header %q:\n%s", header, out)
		}
	}
	if !strings.Contains(out, "gpu-b-07") {
		t.Errorf("--no-headers lost the rows:\n%s", out)
	}
}

// TestExplainWhatIf explains manifests that do not exist yet.
func TestExplainWhatIf(t *testing.T) {
	job := func(gpus string) string {
		return `apiVersion: batch/v1
kind: Job
metadata: {name: small, namespace: ml-research}
spec:
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - name: c
        image: busybox
        resources: {requests: {nvidia.com/gpu: "` + gpus + `"}, limits: {nvidia.com/gpu: "` + gpus + `"}}
`
	}
	// 2 x 2 GPUs: the quota (91 of 96 used) takes them, and they fit.
	code, out, stderr := run(t, job("2"), "explain", "-f", "-", "--snapshot", exampleSnapshot)
	if code != ExitOK || !strings.HasPrefix(out, "Schedulable: gang ml-research/small from Job small (batch/v1) (what-if)\n") {
		t.Errorf("exit %d, stderr %q, output:\n%s", code, stderr, out)
	}
	// 2 x 4 GPUs would fit the nodes, but the namespace's quota would
	// refuse to create the pods: explain says so (exit 3), and so does place.
	code, out, _ = run(t, job("4"), "explain", "-f", "-", "--snapshot", exampleSnapshot)
	want := "Unschedulable: gang ml-research/small from Job small (batch/v1) (what-if)\nthe namespace's ResourceQuota would refuse the new members, so they would never exist: " +
		"exceeded quota: research-compute, requested: requests.nvidia.com/gpu=8, used: requests.nvidia.com/gpu=91, limited: requests.nvidia.com/gpu=96\n"
	// The screen wraps long lines at 120 columns.
	unwrapped := strings.Join(strings.Fields(out), " ")
	if code != ExitNo || !strings.HasPrefix(unwrapped, strings.Join(strings.Fields(want), " ")) || !strings.Contains(unwrapped, "raise the quota or free what it counts") {
		t.Errorf("quota: exit %d, output:\n%s", code, out)
	}
	code, out, stderr = run(t, job("4"), "place", "-f", "-", "--snapshot", exampleSnapshot)
	if code != ExitNo || !strings.HasPrefix(out, "Unschedulable: the namespace's ResourceQuota would refuse the new members, so they would never exist: exceeded quota: research-compute") {
		t.Errorf("place: exit %d, stderr %q, output %q; want 3 and the quota's refusal", code, stderr, out)
	}
}

// A single pod from -f is explained as a pod, not as a gang of one.
func TestExplainWhatIfSinglePod(t *testing.T) {
	pod := `apiVersion: v1
kind: Pod
metadata: {name: solo, namespace: ml-research}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
`
	code, out, stderr := run(t, pod, "explain", "-f", "-", "--snapshot", exampleSnapshot)
	if code != ExitOK || !strings.HasPrefix(out, "Schedulable: pod ml-research/solo\n") || strings.Contains(out, "Validity") {
		t.Errorf("exit %d, stderr %q, output:\n%s", code, stderr, out)
	}
	code, out, _ = run(t, pod, "explain", "-f", "-", "--snapshot", exampleSnapshot, "-o", "jsonpath={.pod} {.gang}")
	if code != ExitOK || out != "ml-research/solo " {
		t.Errorf("json: exit %d, pod and gang %q, want the pod and no gang", code, out)
	}
}

// A preferred topology no domain can hold: the members spread over the
// cluster, and every screen says so (summary, domain table, JSON).
func TestExplainPreferredTopologyNotMet(t *testing.T) {
	// 16 x 4 GPUs: zone a has 43 GPUs free where the members may go, zone
	// b 58, the cluster 101.
	job := `apiVersion: batch/v1
kind: Job
metadata: {name: wide, namespace: default}
spec:
  parallelism: 16
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - name: c
        image: busybox
        resources: {limits: {nvidia.com/gpu: "4"}}
`
	const zone = "topology.kubernetes.io/zone"
	code, out, stderr := run(t, job, "explain", "-f", "-", "--snapshot", exampleSnapshot, "--prefer-topology-key", zone)
	unwrapped := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"no one " + zone + " holds the minimum 16 (the most is 14, in us-east-1b), so the members spread over the cluster",
		"Members each " + zone + " (preferred, not met) holds at once (minimum 16):",
		"NODE PLACED ZONE SCORE FITS REASON",
	} {
		if !strings.Contains(unwrapped, want) {
			t.Errorf("exit %d, stderr %q: output lacks %q:\n%s", code, stderr, want, out)
		}
	}
	for _, verb := range []string{"explain", "place"} {
		_, out, _ = run(t, job, verb, "-f", "-", "--snapshot", exampleSnapshot, "--prefer-topology-key", zone, "-o", "jsonpath={.preferredTopology}")
		if out != `{"met":false,"topologyKey":"`+zone+`"}` {
			t.Errorf("%s: preferredTopology %s", verb, out)
		}
	}
	// 4 members fit in one zone: met.
	_, out, _ = run(t, strings.Replace(job, "parallelism: 16", "parallelism: 4", 1), "place", "-f", "-", "--snapshot", exampleSnapshot,
		"--prefer-topology-key", zone, "-o", "jsonpath={.preferredTopology.met} {.domain}")
	if out != "true us-east-1a" {
		t.Errorf("4 members: met and domain %q, want true us-east-1a", out)
	}
}

// A pod whose PodGroup does not exist is held pending by its scheduler:
// explain pod/NAME says so as a verdict (exit 3), in the words of
// kube-scheduler's GangScheduling, as explain without a subject lists it.
func TestExplainPodOfMissingPodGroup(t *testing.T) {
	snap := "apiVersion: v1\nkind: List\nitems:\n" +
		"- {apiVersion: v1, kind: Namespace, metadata: {name: ml}}\n" +
		"- {apiVersion: v1, kind: Node, metadata: {name: node-1}, status: {allocatable: {cpu: \"8\", pods: \"10\"}}}\n" +
		"- {apiVersion: v1, kind: Pod, metadata: {name: orphan-0, namespace: ml}, spec: {schedulingGroup: {podGroupName: missing-pg}, containers: [{name: c, image: x}]}}\n"
	const why = `waiting for pods's pod group "missing-pg" to appear in scheduling queue: its PodGroup podgroups.scheduling.k8s.io/missing-pg does not exist in namespace ml, and the pod stays pending until it is created`
	code, out, stderr := run(t, snap, "explain", "pod/orphan-0", "-n", "ml", "--snapshot", "-", "-o", "jsonpath={.verdict}: {.message}")
	if want := "Unschedulable: " + why; code != ExitNo || out != want {
		t.Errorf("explain pod/orphan-0: exit %d, output %q (stderr %q); want 3 and %q", code, out, stderr, want)
	}
	code, out, _ = run(t, snap, "explain", "pod/orphan-0", "-n", "ml", "--snapshot", "-", "-o", "jsonpath={.suggestions[*].kind}")
	if code != ExitNo || out != "CreatePodGroup" {
		t.Errorf("suggestions: exit %d, %q; want CreatePodGroup", code, out)
	}
	code, out, _ = run(t, snap, "explain", "-n", "ml", "--snapshot", "-", "-o", "wide")
	if code != ExitOK || !strings.Contains(out, "Held      -       "+why) {
		t.Errorf("explain: exit %d, output %q; want the same reason", code, out)
	}
}
