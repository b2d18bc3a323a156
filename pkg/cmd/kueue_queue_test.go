package cmd

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
)

// pendingWorkloads are four Workloads Kueue holds with no pods yet (their
// Jobs suspended), appended to the README's Kueue example: a and b in
// ClusterQueue research, whose A100 quota the pretraining Workload holds
// and which may borrow 8 H100 GPUs from cohort ai; c in a LocalQueue that
// does not exist; d in prod, whose H100 quota has 8 GPUs free.
const pendingWorkloads = `
- apiVersion: kueue.x-k8s.io/v1beta2
  kind: Workload
  metadata: {name: job-a-1, namespace: ml-research, uid: wl-a, creationTimestamp: '2026-12-07T01:00:00Z',
    ownerReferences: [{apiVersion: batch/v1, kind: Job, name: a, uid: job-a, controller: true}]}
  spec:
    queueName: research
    priority: 0
    podSets:
    - name: main
      count: A_COUNT
      template:
        spec:
          restartPolicy: Never
          containers: [{name: t, image: x, resources: {requests: {cpu: '4', memory: 16Gi, nvidia.com/gpu: '4'}, limits: {nvidia.com/gpu: '4'}}}]
- apiVersion: kueue.x-k8s.io/v1beta2
  kind: Workload
  metadata: {name: job-b-2, namespace: ml-research, uid: wl-b, creationTimestamp: '2026-12-07T02:00:00Z',
    ownerReferences: [{apiVersion: batch/v1, kind: Job, name: b, uid: job-b, controller: true}]}
  spec:
    queueName: research
    priority: 0
    podSets:
    - name: main
      count: 1
      template:
        spec:
          restartPolicy: Never
          containers: [{name: t, image: x, resources: {requests: {cpu: '4', memory: 16Gi, nvidia.com/gpu: '4'}, limits: {nvidia.com/gpu: '4'}}}]
- apiVersion: kueue.x-k8s.io/v1beta2
  kind: Workload
  metadata: {name: job-c-3, namespace: ml-research, uid: wl-c, creationTimestamp: '2026-12-07T03:00:00Z',
    ownerReferences: [{apiVersion: batch/v1, kind: Job, name: c, uid: job-c, controller: true}]}
  spec:
    queueName: nosuch
    podSets:
    - name: main
      count: 1
      template:
        spec:
          restartPolicy: Never
          containers: [{name: t, image: x, resources: {requests: {cpu: '1'}}}]
- apiVersion: kueue.x-k8s.io/v1beta2
  kind: Workload
  metadata: {name: job-d-4, namespace: ml-prod, uid: wl-d, creationTimestamp: '2026-12-07T04:00:00Z',
    ownerReferences: [{apiVersion: batch/v1, kind: Job, name: d, uid: job-d, controller: true}]}
  spec:
    queueName: prod
    priority: 0
    podSets:
    - name: main
      count: 1
      template:
        spec:
          restartPolicy: Never
          containers: [{name: t, image: x, resources: {requests: {cpu: '4', memory: 16Gi, nvidia.com/gpu: '8'}, limits: {nvidia.com/gpu: '8'}}}]
`

// kueueQueueSnapshot is the Kueue example with pendingWorkloads (a asking
// for aCount pods of 4 GPUs), research's queueing strategy as given.
func kueueQueueSnapshot(t *testing.T, aCount, strategy string) string {
	t.Helper()
	data, err := os.ReadFile("../../examples/kueue-cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	snap := strings.Replace(string(data), "    name: research\n    uid: cq-research\n    creationTimestamp: '2026-11-01T00:00:00Z'\n  spec:\n    cohortName: ai\n    namespaceSelector: {}\n    queueingStrategy: BestEffortFIFO",
		"    name: research\n    uid: cq-research\n    creationTimestamp: '2026-11-01T00:00:00Z'\n  spec:\n    cohortName: ai\n    namespaceSelector: {}\n    queueingStrategy: "+strategy, 1)
	if !strings.Contains(snap, "queueingStrategy: "+strategy) {
		t.Fatal("research's queueingStrategy not found in the example")
	}
	path := t.TempDir() + "/snap.yaml"
	if err := os.WriteFile(path, []byte(strings.TrimRight(snap, "\n")+strings.Replace(pendingWorkloads, "A_COUNT", aCount, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// queueLines runs explain -A -o json and returns its lines by name.
func queueLines(t *testing.T, snap string) map[string]v1alpha1.PendingItem {
	t.Helper()
	code, out, stderr := run(t, "", "explain", "-A", "--snapshot", snap, "-o", "json")
	var list v1alpha1.PendingList
	if err := json.Unmarshal([]byte(out), &list); err != nil || code != ExitOK {
		t.Fatalf("explain -A: exit %d, %v: %s %s", code, err, out, stderr)
	}
	lines := map[string]v1alpha1.PendingItem{}
	for _, l := range list.Items {
		lines[strings.TrimPrefix(l.Name, "workloads.kueue.x-k8s.io/")] = l
	}
	return lines
}

// The queue view lists the Workloads Kueue holds with no pods (suspended
// Jobs), decided by Kueue first, each on what those ahead of it left, then
// placed on the nodes (issue #39). a fits research only by borrowing 8
// H100 GPUs of cohort ai, which d, behind it, needs from prod's own quota:
// Kueue tries the head that borrows less first (makeClassicalIterator) and
// reclaims within the cohort (reclaimWithinCohort: Any), so a's admission
// is no plain yes; b would be admitted on the quota as it is, but a ahead
// of it takes it; c names no LocalQueue that exists (Held, Kueue's words);
// d is admitted in prod, evicting a if a was admitted, and starts on the
// H100 node a would have used.
func TestKueueQueueView(t *testing.T) {
	lines := queueLines(t, kueueQueueSnapshot(t, "2", "BestEffortFIFO"))
	a, b, c, d := lines["job-a-1"], lines["job-b-2"], lines["job-c-3"], lines["job-d-4"]
	if len(lines) != 4 {
		t.Fatalf("%d lines, want the 4 Workloads: %v", len(lines), lines)
	}
	if a.Verdict != "Unverified" || a.Kueue == nil || !a.Kueue.Admitted || !strings.Contains(a.Reason, "not verified: it borrows from its cohort") ||
		strings.Join(a.Kueue.NotEvaluated, "\n") != "it borrows from its cohort, and Kueue tries the Workloads that borrow less first, whatever their order: one queued after it may take that quota: not evaluated\n"+
			"Workload ml-prod/job-d-4, queued after it, is admitted by evicting it, and Kueue may try that one first: not evaluated" {
		t.Errorf("a: %s %+v %q", a.Verdict, a.Kueue, a.Reason)
	}
	// Every verb says the same of it: Kueue's decision carries what one
	// pass cannot tell, so place is not a plain yes either.
	code, out, _ := run(t, "", "place", "wl/job-a-1", "-n", "ml-research", "--snapshot", kueueQueueSnapshot(t, "2", "BestEffortFIFO"), "-o", "jsonpath={.verdict}")
	if code != ExitNo || out != "Placed" {
		t.Errorf("place wl/job-a-1: exit %d %q; want 3, Placed (not verified)", code, out)
	}
	if b.Verdict != "Waits" || len(b.Behind) != 1 || b.Behind[0] != "workloads.kueue.x-k8s.io/job-a-1" || b.Kueue == nil || b.Kueue.Admitted ||
		!strings.HasPrefix(b.Reason, "Kueue: couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor a100, 4 more needed") {
		t.Errorf("b: %s %v %+v %q", b.Verdict, b.Behind, b.Kueue, b.Reason)
	}
	if c.Verdict != "Held" || c.Reason != "Kueue: LocalQueue nosuch doesn't exist" {
		t.Errorf("c: %s %q", c.Verdict, c.Reason)
	}
	if d.Verdict != "Starts" || d.Kueue == nil || !d.Kueue.Admitted || d.Kueue.ClusterQueue != "prod" || strings.Join(d.Kueue.Preempts, ",") != "ml-research/job-a-1" ||
		strings.Join(d.Nodes, ",") != "h100-1" {
		t.Errorf("d: %s %+v %v %q", d.Verdict, d.Kueue, d.Nodes, d.Reason)
	}
	if a.Position != 1 || b.Position != 2 || c.Position != 3 || d.Position != 4 {
		t.Errorf("positions %d %d %d %d, want Kueue's order (priority, then creation)", a.Position, b.Position, c.Position, d.Position)
	}
	// The Workload is a subject of its own, offline: explain finds its
	// line in the queue; place and admit judge it as the line does.
	code, out, _ = run(t, "", "explain", "workloads.kueue.x-k8s.io/job-b-2", "-n", "ml-research", "--snapshot", kueueQueueSnapshot(t, "2", "BestEffortFIFO"))
	if code != ExitNo || !strings.Contains(out, "Queue: position 2 of 4") || !strings.Contains(out, "is held back by Kueue (Pending)") ||
		!strings.Contains(strings.Join(strings.Fields(out), " "), "ml-research/job-a-1 (8 nvidia.com/gpu in flavor h100, admitted ahead of it in Kueue's queue)") {
		t.Errorf("explain workloads.kueue.x-k8s.io/job-b-2: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "", "admit", "wl/job-c-3", "-n", "ml-research", "--snapshot", kueueQueueSnapshot(t, "2", "BestEffortFIFO"), "-o", "jsonpath={.verdict} {.kueue.message}")
	if code != ExitNo || out != "Rejected LocalQueue nosuch doesn't exist" {
		t.Errorf("admit wl/job-c-3: exit %d %q", code, out)
	}
	for _, tt := range []struct{ args, want string }{
		{"wl/job-x -n ml-research", "error: wl/job-x: the snapshot holds no such object in namespace ml-research"},
		{"wl/job-a-1 -n ml-prod", "error: wl/job-a-1 is not in namespace ml-prod; it is in ml-research (give -n)"},
		{"wl/job-pretrain-7b-4f2a1 -n ml-research", "error: wl/job-pretrain-7b-4f2a1 in namespace ml-research does not wait in a queue with no pods: Kueue admitted it already (it holds quota in ClusterQueue research)"},
	} {
		code, _, stderr := run(t, "", append([]string{"place"}, append(strings.Fields(tt.args), "--snapshot", kueueQueueSnapshot(t, "2", "BestEffortFIFO"))...)...)
		if code != ExitUsage || !strings.HasPrefix(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("place %s: exit %d %q, want 2 and one line %q", tt.args, code, stderr, tt.want)
		}
	}
}

// In a StrictFIFO ClusterQueue the head that does not fit holds every
// Workload behind it (Kueue pops it every cycle): a, asking for 16 GPUs,
// fits neither flavor; b, which would fit the H100 borrowing alone, waits
// behind it in Kueue's words, taking no quota.
func TestKueueQueueViewStrictFIFO(t *testing.T) {
	lines := queueLines(t, kueueQueueSnapshot(t, "4", "StrictFIFO"))
	a, b := lines["job-a-1"], lines["job-b-2"]
	if a.Verdict != "Blocked" || a.Kueue == nil || a.Kueue.Admitted || !strings.HasPrefix(a.Reason, "Kueue: couldn't assign flavors to pod set main") {
		t.Errorf("a: %s %+v %q", a.Verdict, a.Kueue, a.Reason)
	}
	if b.Verdict != "Waits" || strings.Join(b.Behind, ",") != "workloads.kueue.x-k8s.io/job-a-1" ||
		b.Reason != "Kueue: waiting behind Workload ml-research/job-a-1 at the head of StrictFIFO ClusterQueue research" {
		t.Errorf("b: %s %v %q", b.Verdict, b.Behind, b.Reason)
	}
	if d := lines["job-d-4"]; d.Verdict != "Starts" || d.Kueue == nil || len(d.Kueue.Preempts) != 0 {
		t.Errorf("d: %s %+v %q", d.Verdict, d.Kueue, d.Reason)
	}
}

// The README's queue view of Kueue: examples/kueue-waiting.yaml read
// after examples/kueue-cluster.yaml, the lines and verdicts it shows.
func TestKueueWaitingExample(t *testing.T) {
	var data []byte
	for _, f := range []string{"../../examples/kueue-cluster.yaml", "../../examples/kueue-waiting.yaml"} {
		d, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, d...)
	}
	code, out, stderr := run(t, string(data), "explain", "-A", "--snapshot", "-", "-o", `jsonpath={range .items[*]}{.position} {.name} {.verdict}: {.reason}{"\n"}{end}`)
	// The README's lines, word for word.
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(readme), "1 workloads.kueue.x-k8s.io/job-lr-sweep-7f3c1 ")
	j := strings.Index(string(readme)[max(i, 0):], "```")
	if i < 0 || j < 0 {
		t.Fatal("the README's Kueue queue view not found")
	}
	want := string(readme)[i : i+j]
	if code != ExitOK || out != want {
		t.Errorf("exit %d (%s):\n%s\nwant\n%s", code, stderr, out, want)
	}
}

// A Kueue pod group whose Workload waits for quota: its pods exist,
// gated by Kueue's admission gate, which is Kueue's decision and is asked
// first, not a hold to remove by hand. With 2 GPUs a pod, research admits
// it by borrowing H100 quota, and the pods start on the H100 node (exit
// 0; the gate is Kueue's to remove); with 4 GPUs a pod, Kueue does not
// admit it, in its words, and explain proves a quota fix. Without Kueue's
// objects in the snapshot, the gated pods are held, as before.
func TestKueuePodGroup(t *testing.T) {
	cluster := exampleFile(t, "kueue-cluster.yaml")
	group := func(gpus string) string {
		d, err := os.ReadFile("testdata/kueue-podgroup-" + gpus + "gpu.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return string(cluster) + string(d)
	}
	code, out, stderr := run(t, group("2"), "explain", "-A", "--snapshot", "-", "-o", `jsonpath={range .items[*]}{.name} {.verdict} {.kueue.admitted} {.nodes}{"\n"}{end}`)
	if code != ExitOK || out != "pod/pg-eval-0 Starts true [\"h100-1\",\"h100-1\",\"h100-1\"]\n" {
		t.Errorf("queue, 2 GPUs: exit %d %q %s", code, out, stderr)
	}
	code, out, _ = run(t, group("2"), "explain", "pod/pg-eval-1", "-n", "ml-research", "--snapshot", "-", "-o", "jsonpath={.verdict} {.kueue.admitted} {.kueue.flavors}")
	if code != ExitOK || out != `Schedulable true {"b1e2f3a4":{"cpu":"h100","memory":"h100","nvidia.com/gpu":"h100"}}` {
		t.Errorf("explain pod/pg-eval-1, 2 GPUs: exit %d %q", code, out)
	}
	want := "couldn't assign flavors to pod set b1e2f3a4: insufficient quota for nvidia.com/gpu in flavor h100, previously considered podsets requests (0) + current podset request (12) > maximum capacity (8), insufficient unused quota for nvidia.com/gpu in flavor a100, 12 more needed"
	code, out, _ = run(t, group("4"), "explain", "-A", "--snapshot", "-", "-o", `jsonpath={range .items[*]}{.verdict}: {.reason}{end}`)
	if code != ExitOK || out != "Blocked: Kueue: "+want {
		t.Errorf("queue, 4 GPUs: exit %d %q", code, out)
	}
	code, out, _ = run(t, group("4"), "explain", "pod/pg-eval-0", "-n", "ml-research", "--snapshot", "-")
	flat := strings.Join(strings.Fields(out), " ")
	if code != ExitNo || !strings.Contains(flat, "is held back by Kueue (Pending)") || !strings.Contains(flat, "raising ClusterQueue research's nominalQuota in flavor a100: nvidia.com/gpu from 16 to 28") ||
		strings.Contains(flat, "--ungate") {
		t.Errorf("explain pod/pg-eval-0, 4 GPUs: exit %d\n%s", code, out)
	}
	// A pod short of the total count: Kueue's admission (its gates off)
	// does not lower the minimum, and the group waits for its pod.
	short := group("2")
	i := strings.Index(short, "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: pg-eval-2\n")
	j := strings.Index(short[max(i, 0):], "- apiVersion: kueue.x-k8s.io/v1beta2\n  kind: Workload")
	if i < 0 || j < 0 {
		t.Fatal("pg-eval-2 not found in the test data")
	}
	short = short[:i] + short[i+j:]
	code, out, _ = run(t, short, "explain", "pod/pg-eval-0", "-n", "ml-research", "--snapshot", "-", "-o", "jsonpath={.verdict}: {.message}")
	if code != ExitNo || !strings.HasPrefix(out, "Unschedulable: 1 member(s) do not exist: 2 of minimum 3 exist") {
		t.Errorf("a pod group short of a pod: exit %d %q", code, out)
	}
	// Without Kueue's objects, nothing decides: the pods wait for the gate.
	d, err := os.ReadFile("testdata/kueue-podgroup-2gpu.yaml")
	if err != nil {
		t.Fatal(err)
	}
	noKueue := strings.Replace(string(d), "- apiVersion: kueue.x-k8s.io/v1beta2\n  kind: Workload", "- apiVersion: v1\n  kind: ConfigMap", 1)
	code, out, _ = run(t, exampleClusterYAML(t)+noKueue, "explain", "-A", "--snapshot", "-", "-o", `jsonpath={range .items[?(@.name=="pod/pg-eval-0")]}{.verdict}: {.reason}{end}`)
	if code != ExitOK || !strings.HasPrefix(out, "Held: 3 pending member(s) waiting for scheduling gates: [kueue.x-k8s.io/admission]") {
		t.Errorf("queue without Kueue's Workload: exit %d %q", code, out)
	}
}

// exampleClusterYAML is the README's main example snapshot.
func exampleClusterYAML(t *testing.T) string {
	t.Helper()
	d, err := os.ReadFile(exampleSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	return string(d)
}

// Where a ClusterQueue's borrowingLimit, not its cohort, keeps the quota
// out, explain's first fix raises the limit by what is missing, proven by
// placing again: research may borrow only 4 H100 GPUs of the 8 its cohort
// has free, and lr-sweep asks 8.
func TestKueueBorrowingLimitFix(t *testing.T) {
	cluster, waiting := exampleFile(t, "kueue-cluster.yaml"), exampleFile(t, "kueue-waiting.yaml")
	const limit = "        - name: nvidia.com/gpu\n          nominalQuota: 0\n          borrowingLimit: 8"
	if !strings.Contains(string(cluster), limit) {
		t.Fatal("research's H100 borrowingLimit not found in the example")
	}
	// lr-sweep alone waits (others behind it would leave its borrowing
	// not verified: Kueue tries the queues that borrow less first).
	first := string(waiting)
	if i := strings.Index(first, "- apiVersion: kueue.x-k8s.io/v1beta2\n  kind: Workload\n  metadata:\n    name: job-eval"); i > 0 {
		first = first[:i]
	} else {
		t.Fatal("the second Workload of kueue-waiting.yaml not found")
	}
	snap := strings.Replace(string(cluster), limit, strings.Replace(limit, "borrowingLimit: 8", "borrowingLimit: 4", 1), 1) + first
	code, out, stderr := run(t, snap, "explain", "wl/job-lr-sweep-7f3c1", "-n", "ml-research", "--snapshot", "-", "-o", "jsonpath={.suggestions[0].kind} {.suggestions[0].verified} {.suggestions[0].message}")
	if code != ExitNo || !strings.HasPrefix(out, "Admission true raising ClusterQueue research's borrowingLimit in flavor h100 (its cohort has the quota free): nvidia.com/gpu from 4 to 8 (by 4): then Kueue admits it") {
		t.Errorf("exit %d %q %s", code, out, stderr)
	}
	// With the limit at 8 the cohort's 8 free GPUs are what it may take:
	// no borrowingLimit fix when the cohort lacks them too (pg-eval asks 12).
	group, err := os.ReadFile("testdata/kueue-podgroup-4gpu.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, out, _ = run(t, string(cluster)+string(group), "explain", "pod/pg-eval-0", "-n", "ml-research", "--snapshot", "-")
	if strings.Contains(out, "borrowingLimit") {
		t.Errorf("a borrowingLimit fix where the cohort has not the quota:\n%s", out)
	}
}

// A one-pod Job for a LocalQueue is Kueue's to admit first, as any other:
// explain took one pod from a file or a workload for a pod alone and said
// Schedulable (exit 0) where Kueue keeps the Job suspended (research may
// borrow only 4 H100 GPUs here, and the A100 quota is held).
func TestKueueOnePodJobIsNoPlainPod(t *testing.T) {
	cluster := exampleFile(t, "kueue-cluster.yaml")
	const limit = "          nominalQuota: 0\n          borrowingLimit: 8"
	snap := strings.Replace(string(cluster), limit, strings.Replace(limit, ": 8", ": 4", 1), 1)
	path := t.TempDir() + "/snap.yaml"
	if err := os.WriteFile(path, []byte(snap), 0o644); err != nil {
		t.Fatal(err)
	}
	job, err := os.ReadFile("../../examples/kueue-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	one := strings.NewReplacer("parallelism: 2", "parallelism: 1", "completions: 2", "completions: 1").Replace(string(job))
	if one == string(job) {
		t.Fatal("the example Job's parallelism not found")
	}
	for _, verb := range []string{"explain", "place", "admit"} {
		code, out, stderr := run(t, one, verb, "-f", "-", "--snapshot", path, "-o", "jsonpath={.kueue.admitted} {.kueue.message}")
		if code != ExitNo || !strings.HasPrefix(out, "false couldn't assign flavors to pod set main") {
			t.Errorf("%s -f of a one-pod Kueue Job: exit %d %q %s", verb, code, out, stderr)
		}
	}
}

// A pending Workload whose pod sets make no pod (count 0) has nothing to
// start: it is no line of the queue.
func TestKueueWorkloadOfNoPods(t *testing.T) {
	cluster, waiting := exampleFile(t, "kueue-cluster.yaml"), exampleFile(t, "kueue-waiting.yaml")
	none := strings.Replace(string(waiting), "      count: 2\n", "      count: 0\n", 1)
	code, out, _ := run(t, string(cluster)+none, "explain", "-A", "--snapshot", "-", "-o", "name")
	if code != ExitOK || strings.Contains(out, "lr-sweep") || strings.Count(out, "\n") != 3 {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// What the review of the queue view found: a Workload that names no
// LocalQueue is Kueue's to hold for ever (no plain Starts); one a JobSet
// owns is made from Kueue's templates, which lack what the JobSet's
// controller adds to its pods (exclusive placement): never a plain yes;
// capacity refuses a Workload as its shape (copies would be Workloads of
// no job).
func TestKueueWaitingEdges(t *testing.T) {
	cluster, waiting := exampleFile(t, "kueue-cluster.yaml"), exampleFile(t, "kueue-waiting.yaml")
	line := func(snap, name string) (int, string) {
		code, out, stderr := run(t, snap, "explain", "-A", "--snapshot", "-", "-o", `jsonpath={range .items[?(@.name=="workloads.kueue.x-k8s.io/`+name+`")]}{.verdict}: {.reason}{end}`)
		if stderr != "" {
			t.Errorf("stderr %s", stderr)
		}
		return code, out
	}
	noQueue := strings.Replace(string(waiting), "    queueName: prod\n", "    queueName: ''\n", 1)
	if code, out := line(string(cluster)+noQueue, "job-distill-8x-c41f2"); code != ExitOK || out != "Held: Kueue: the Workload names no LocalQueue (spec.queueName is empty)" {
		t.Errorf("no queue name: exit %d %q", code, out)
	}
	jobSet := strings.Replace(string(waiting), "{apiVersion: batch/v1, kind: Job, name: distill-8x,", "{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: distill-8x,", 1)
	if code, out := line(string(cluster)+jobSet, "job-distill-8x-c41f2"); code != ExitOK || !strings.HasPrefix(out, "Unverified: admitted by Kueue (prod); would start on h100-1; not verified: metadata.ownerReferences") {
		t.Errorf("JobSet's Workload: exit %d %q", code, out)
	}
	code, _, stderr := run(t, string(cluster)+string(waiting), "capacity", "wl/job-lr-sweep-7f3c1", "-n", "ml-research", "--snapshot", "-")
	if code != ExitUsage || !strings.HasPrefix(stderr, "error: capacity counts copies of a job Kueue would admit") {
		t.Errorf("capacity wl/: exit %d %q", code, stderr)
	}
}

// A job decided alone (-f) is no plain yes where the snapshot is not
// settled: Workloads pending in cohort ai that Kueue would admit (lr-sweep,
// distill-8x) may take the quota first; the what-if (of a
// priority above research's pending Workloads) that borrows the cohort's
// H100 quota is Placed (not verified), exit 3.
// Without the waiting Workloads, the same what-if is a plain yes.
func TestKueueWhatIfOnAnUnsettledCohort(t *testing.T) {
	const job = `apiVersion: batch/v1
kind: Job
metadata:
  name: small-eval
  namespace: ml-research
  labels: {kueue.x-k8s.io/queue-name: research, kueue.x-k8s.io/priority-class: research-low}
spec:
  parallelism: 1
  completions: 1
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: eval
        image: ghcr.io/example/eval:1.9
        resources: {requests: {cpu: "4", memory: 16Gi, nvidia.com/gpu: "4"}, limits: {nvidia.com/gpu: "4"}}
`
	dir := t.TempDir()
	var snap []byte
	for _, f := range []string{"../../examples/kueue-cluster.yaml", "../../examples/kueue-waiting.yaml"} {
		d, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		snap = append(snap, d...)
	}
	if err := os.WriteFile(dir+"/snap.yaml", snap, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := run(t, job, "place", "-f", "-", "--snapshot", dir+"/snap.yaml", "-o", "jsonpath={.verdict} {.kueue.admitted} {.notEvaluated}")
	if code != ExitNo || !strings.HasPrefix(out, "Placed true") || !strings.Contains(out, ", pending in the same cohort, would be admitted as well (the snapshot is not settled)") {
		t.Errorf("on the unsettled snapshot: exit %d %q", code, out)
	}
	code, out, _ = run(t, job, "place", "-f", "-", "--snapshot", "../../examples/kueue-cluster.yaml", "-o", "jsonpath={.verdict} {.kueue.admitted}")
	if code != ExitOK || out != "Placed true" {
		t.Errorf("on the settled example: exit %d %q", code, out)
	}
}

// A single plain pod Kueue holds (its own Workload, owned by it; the pod
// gated) is Kueue's to decide first, as a gang of one: 4 GPUs fit
// research's H100 borrowing and it starts (exit 0); 16 do not fit any
// quota, in Kueue's words (exit 3). explain pod/NAME says the same.
func TestKueueSinglePod(t *testing.T) {
	cluster := exampleFile(t, "kueue-cluster.yaml")
	for _, tt := range []struct {
		gpus, line string
		exit       int
		verdict    string
	}{
		{"4", "pod/notebook-gpu Starts: admitted by Kueue (research); starts on h100-1", ExitOK, "Schedulable true"},
		{"16", "pod/notebook-gpu Blocked: Kueue: couldn't assign flavors to pod set main", ExitNo, "Unschedulable false"},
	} {
		d, err := os.ReadFile("testdata/kueue-pod-" + tt.gpus + "gpu.yaml")
		if err != nil {
			t.Fatal(err)
		}
		snap := string(cluster) + string(d)
		_, out, stderr := run(t, snap, "explain", "-A", "--snapshot", "-", "-o", `jsonpath={range .items[*]}{.name} {.verdict}: {.reason}{"\n"}{end}`)
		if !strings.HasPrefix(out, tt.line) || strings.Count(out, "\n") != 1 {
			t.Errorf("%s GPUs, queue: %q %s", tt.gpus, out, stderr)
		}
		code, out, _ := run(t, snap, "explain", "pod/notebook-gpu", "-n", "ml-research", "--snapshot", "-", "-o", "jsonpath={.verdict} {.kueue.admitted}")
		if code != tt.exit || out != tt.verdict {
			t.Errorf("%s GPUs, explain pod/notebook-gpu: exit %d %q, want %d %q", tt.gpus, code, out, tt.exit, tt.verdict)
		}
	}
}

// exampleFile is examples/NAME's content.
func exampleFile(t *testing.T, name string) []byte {
	t.Helper()
	d, err := os.ReadFile("../../examples/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
