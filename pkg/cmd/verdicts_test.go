package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// verdictSnapshot is a small hand-made cluster with one gang per check of
// docs/design.md#one-verdict-per-question: two nodes of 8 cpu, and in
// namespace ml gangs that fit, do not fit, wait behind scheduling gates,
// miss a Volcano task, exceed a coscheduling minResources, use a claim the
// snapshot cannot evaluate; namespace quota has a ResourceQuota with 1 cpu
// left.
const verdictSnapshot = `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: node-1}, status: {allocatable: {cpu: "8", memory: 32Gi, pods: "20"}}}
- {apiVersion: v1, kind: Node, metadata: {name: node-2}, status: {allocatable: {cpu: "8", memory: 32Gi, pods: "20"}}}
- {apiVersion: v1, kind: ResourceQuota, metadata: {name: compute, namespace: quota}, spec: {hard: {requests.cpu: "4"}}, status: {hard: {requests.cpu: "4"}, used: {requests.cpu: "3"}}}
- {apiVersion: scheduling.k8s.io/v1beta1, kind: PodGroup, metadata: {name: fits, namespace: ml}, spec: {schedulingPolicy: {gang: {minCount: 2}}}}
- {apiVersion: v1, kind: Pod, metadata: {name: fits-0, namespace: ml}, spec: {schedulingGroup: {podGroupName: fits}, containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: fits-1, namespace: ml}, spec: {schedulingGroup: {podGroupName: fits}, containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]}}
- {apiVersion: scheduling.k8s.io/v1beta1, kind: PodGroup, metadata: {name: big, namespace: ml}, spec: {schedulingPolicy: {gang: {minCount: 2}}}}
- {apiVersion: v1, kind: Pod, metadata: {name: big-0, namespace: ml}, spec: {schedulingGroup: {podGroupName: big}, containers: [{name: c, image: x, resources: {requests: {cpu: "6"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: big-1, namespace: ml}, spec: {schedulingGroup: {podGroupName: big}, containers: [{name: c, image: x, resources: {requests: {cpu: "6"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: big-2, namespace: ml}, spec: {schedulingGroup: {podGroupName: big}, containers: [{name: c, image: x, resources: {requests: {cpu: "6"}}}]}}
- {apiVersion: scheduling.k8s.io/v1beta1, kind: PodGroup, metadata: {name: big3, namespace: ml}, spec: {schedulingPolicy: {gang: {minCount: 3}}}}
- {apiVersion: v1, kind: Pod, metadata: {name: big3-0, namespace: ml}, spec: {schedulingGroup: {podGroupName: big3}, containers: [{name: c, image: x, resources: {requests: {cpu: "6"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: big3-1, namespace: ml}, spec: {schedulingGroup: {podGroupName: big3}, containers: [{name: c, image: x, resources: {requests: {cpu: "6"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: big3-2, namespace: ml}, spec: {schedulingGroup: {podGroupName: big3}, containers: [{name: c, image: x, resources: {requests: {cpu: "6"}}}]}}
- {apiVersion: scheduling.k8s.io/v1beta1, kind: PodGroup, metadata: {name: gated, namespace: ml}, spec: {schedulingPolicy: {gang: {minCount: 2}}}}
- {apiVersion: v1, kind: Pod, metadata: {name: gated-0, namespace: ml}, spec: {schedulingGroup: {podGroupName: gated}, schedulingGates: [{name: example.com/hold}], containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: gated-1, namespace: ml}, spec: {schedulingGroup: {podGroupName: gated}, schedulingGates: [{name: example.com/hold}], containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: tasks, namespace: ml}, spec: {minMember: 2, minTaskMember: {ps: 1, worker: 1}}}
- {apiVersion: v1, kind: Pod, metadata: {name: tasks-worker-0, namespace: ml, annotations: {scheduling.k8s.io/group-name: tasks, volcano.sh/task-spec: worker}}, spec: {schedulerName: volcano, containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: tasks-worker-1, namespace: ml, annotations: {scheduling.k8s.io/group-name: tasks, volcano.sh/task-spec: worker}}, spec: {schedulerName: volcano, containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}}
- {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {name: minres, namespace: ml}, spec: {minMember: 2, minResources: {cpu: "20"}}}
- {apiVersion: v1, kind: Pod, metadata: {name: minres-0, namespace: ml, labels: {scheduling.x-k8s.io/pod-group: minres}}, spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: minres-1, namespace: ml, labels: {scheduling.x-k8s.io/pod-group: minres}}, spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: mpi-0, namespace: ml, labels: {app: mpi}}, spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: mpi-1, namespace: ml, labels: {app: mpi}}, spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: claim-0, namespace: ml, labels: {app: claim}}, spec: {resourceClaims: [{name: gpu, resourceClaimName: gpu-claim}], containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]}}
`

// quotaJob is a what-if in namespace quota: two pods of 1 cpu, where the
// ResourceQuota has 1 cpu left, so the API server would create one.
const quotaJob = `apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: quota}
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: x
        resources: {requests: {cpu: "1"}}
`

// TestOneVerdictPerQuestion runs place, explain and admit through the
// command layer on the same inputs and checks that they give the same
// answer with the same exit code, or the documented difference
// (docs/design.md#one-verdict-per-question). bind cannot run offline; the
// integration test TestGangOneVerdictLive runs it on the same checks.
func TestOneVerdictPerQuestion(t *testing.T) {
	dir := t.TempDir()
	snapshot := filepath.Join(dir, "cluster.yaml")
	job := filepath.Join(dir, "job.yaml")
	smallJob := filepath.Join(dir, "small.yaml")
	for path, content := range map[string]string{
		snapshot: verdictSnapshot,
		job:      quotaJob,
		smallJob: strings.Replace(quotaJob, "parallelism: 2\n  completions: 2", "parallelism: 1\n  completions: 1", 1),
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type answer struct {
		code    int
		verdict string
	}
	tests := []struct {
		name    string
		subject []string
		place   answer
		explain answer
		admit   answer
		// why names what the three say, for the failure message.
		why string
	}{
		{"fits", []string{"podgroup/fits", "-n", "ml"},
			answer{ExitOK, "Placed"}, answer{ExitOK, "Schedulable"}, answer{ExitOK, "Admitted"}, "yes"},
		{"does not fit", []string{"podgroup/big3", "-n", "ml"},
			answer{ExitNo, "Unschedulable"}, answer{ExitNo, "Unschedulable"}, answer{ExitNo, "Rejected"}, "no"},
		{"fits beyond its minimum", []string{"podgroup/big", "-n", "ml"},
			answer{ExitOK, "Placed"}, answer{ExitOK, "Schedulable"}, answer{ExitOK, "Admitted"}, "yes: two of three fit, the minimum is two"},
		{"quota refuses new members", []string{"-f", job, "-n", "quota"},
			answer{ExitNo, "Unschedulable"}, answer{ExitNo, "Unschedulable"}, answer{ExitNo, "Rejected"}, "no: the quota would create one of two pods"},
		{"quota takes new members", []string{"-f", smallJob, "-n", "quota"},
			answer{ExitOK, "Placed"}, answer{ExitOK, "Schedulable"}, answer{ExitOK, "Admitted"}, "yes"},
		{"scheduling gates", []string{"podgroup/gated", "-n", "ml"},
			answer{ExitNo, "Gated"}, answer{ExitNo, "Gated"}, answer{ExitOK, "Admitted"}, "no until released; admit decides the release"},
		{"a task below its minTaskMember", []string{"podgroups.scheduling.volcano.sh/tasks", "-n", "ml"},
			answer{ExitNo, "Unschedulable"}, answer{ExitNo, "Unschedulable"}, answer{ExitNo, "Rejected"}, "no: Volcano does not schedule an invalid job"},
		{"source gate", []string{"podgroups.scheduling.x-k8s.io/minres", "-n", "ml"},
			answer{ExitNo, "Unschedulable"}, answer{ExitNo, "Unschedulable"}, answer{ExitNo, "Rejected"}, "no: coscheduling's PreFilter"},
		{"members not created", []string{"-l", "app=mpi", "--min-member", "3", "-n", "ml"},
			answer{ExitNo, "Unschedulable"}, answer{ExitNo, "Unschedulable"}, answer{ExitNo, "Rejected"}, "no: one member does not exist"},
		{"not evaluated", []string{"-l", "app=claim", "--min-member", "1", "-n", "ml"},
			answer{ExitNo, "Placed"}, answer{ExitNo, "Unverified"}, answer{ExitNo, "Unverified"}, "not a yes: the claim is not evaluated"},
		{"missing PodGroup", []string{"podgroup/none", "-n", "ml"},
			answer{ExitUsage, ""}, answer{ExitUsage, ""}, answer{ExitUsage, ""}, "bad input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range []struct {
				verb string
				want answer
			}{{"place", tt.place}, {"explain", tt.explain}, {"admit", tt.admit}} {
				args := append(append([]string{v.verb}, tt.subject...), "--snapshot", snapshot, "-o", "jsonpath={.verdict}")
				code, out, stderr := run(t, "", args...)
				if code != v.want.code || out != v.want.verdict {
					t.Errorf("%s: exit %d, verdict %q (stderr %q); want %d, %q (%s)", v.verb, code, out, stderr, v.want.code, v.want.verdict, tt.why)
				}
			}
		})
	}
}

// A Job that names a Kueue LocalQueue, on a snapshot that holds none of
// Kueue's queues (the example cluster), is not a plain yes in any verb:
// where Kueue runs it decides first, and nothing of its quota can be read
// (issue #39). The same Job without the label is a yes.
func TestKueueWorkloadIsNoPlainYes(t *testing.T) {
	const job = `apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
  namespace: ml-research
  labels: {kueue.x-k8s.io/queue-name: team-a}
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - {name: c, image: x, resources: {requests: {cpu: "1", nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}}
`
	unlabelled := strings.Replace(job, "  labels: {kueue.x-k8s.io/queue-name: team-a}\n", "", 1)
	for _, tt := range []struct{ verb, jsonpath, want, plain string }{
		{"place", "{.verdict} {.notEvaluated[0]}", "Placed the workload names LocalQueue team-a, and the snapshot holds no ClusterQueue", "Placed "},
		{"explain", "{.verdict} {.notEvaluated[0]}", "Unverified the workload names LocalQueue team-a, and the snapshot holds no ClusterQueue", "Schedulable "},
		{"admit", "{.verdict}", "Unverified", "Admitted"},
	} {
		code, out, stderr := run(t, job, tt.verb, "-f", "-", "--snapshot", exampleSnapshot, "-o", "jsonpath="+tt.jsonpath)
		if code != ExitNo || !strings.HasPrefix(out, tt.want) {
			t.Errorf("%s: exit %d, %q (stderr %q); want 3 and %q", tt.verb, code, out, stderr, tt.want)
		}
		code, out, stderr = run(t, unlabelled, tt.verb, "-f", "-", "--snapshot", exampleSnapshot, "-o", "jsonpath="+tt.jsonpath)
		if code != ExitOK || out != tt.plain {
			t.Errorf("%s without the queue label: exit %d, %q (stderr %q); want 0 and %q", tt.verb, code, out, stderr, tt.plain)
		}
	}
}

// The Kueue example of the README (examples/kueue-cluster.yaml): the
// fine-tuning Job is not admitted, in Kueue's words; explain's first fix is
// the priority that lets Kueue preempt the pretraining Workload, proven;
// with it the Job is admitted after that eviction and its pods take the
// freed nodes (exit 0).
func TestKueueExample(t *testing.T) {
	const snap, job = "../../examples/kueue-cluster.yaml", "../../examples/kueue-job.yaml"
	code, out, stderr := run(t, "", "place", "-f", job, "--snapshot", snap, "-o", "jsonpath={.verdict} {.kueue.admitted} {.kueue.message}")
	want := "Unschedulable false couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor h100, previously considered podsets requests (0) + current podset request (16) > maximum capacity (8), insufficient unused quota for nvidia.com/gpu in flavor a100, 16 more needed"
	if code != ExitNo || out != want {
		t.Errorf("place: exit %d %q (%s)\nwant %q", code, out, stderr, want)
	}
	_, out, _ = run(t, "", "explain", "-f", job, "--snapshot", snap, "-o", "jsonpath={.suggestions[0].kind} {.suggestions[0].verified} {.suggestions[0].message}")
	if !strings.HasPrefix(out, "Admission true giving Job finetune-13b WorkloadPriorityClass research-high (value 1000;") ||
		!strings.Contains(out, "after evicting 1 Workload(s): ml-research/job-pretrain-7b-4f2a1") {
		t.Errorf("explain's first fix: %q", out)
	}
	data, err := os.ReadFile(job)
	if err != nil {
		t.Fatal(err)
	}
	high := strings.Replace(string(data), "kueue.x-k8s.io/queue-name: research", "kueue.x-k8s.io/queue-name: research\n    kueue.x-k8s.io/priority-class: research-high", 1)
	code, out, stderr = run(t, high, "place", "-f", "-", "--snapshot", snap, "-o", "jsonpath={.verdict} {.kueue.preempts} {.assignments[*].node}")
	if code != ExitOK || out != `Placed ["ml-research/job-pretrain-7b-4f2a1"] a100-0 a100-1` {
		t.Errorf("with research-high: exit %d %q (%s)", code, out, stderr)
	}
	// The README shows the kueue object of that placement as it is.
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const cmdLine = "$ kubectl gang place -f finetune-high.yaml --snapshot examples/kueue-cluster.yaml -o jsonpath='{.kueue}'\n"
	i := strings.Index(string(readme), cmdLine)
	if i < 0 {
		t.Fatal("the README's kueue object example not found")
	}
	shown, _, _ := strings.Cut(string(readme)[i+len(cmdLine):], "\n")
	if _, out, _ = run(t, high, "place", "-f", "-", "--snapshot", snap, "-o", "jsonpath={.kueue}"); out != shown {
		t.Errorf("README shows\n%s\nplace prints\n%s", shown, out)
	}
}

// capacity of a Kueue workload counts the copies Kueue admits one after
// another, each charged before the next: the example's research queue
// has no A100 quota left, so with research-high the first copy is admitted
// after the pretraining Workload is evicted (its nodes freed), and the
// second finds the quota held by the first.
func TestKueueCapacity(t *testing.T) {
	data, err := os.ReadFile("../../examples/kueue-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	high := strings.Replace(string(data), "kueue.x-k8s.io/queue-name: research", "kueue.x-k8s.io/queue-name: research\n    kueue.x-k8s.io/priority-class: research-high", 1)
	code, out, stderr := run(t, high, "capacity", "-f", "-", "--snapshot", "../../examples/kueue-cluster.yaml", "-o", "jsonpath={.items[0].copies} {.items[0].stoppedBy}")
	if code != ExitOK || !strings.HasPrefix(out, "1 gang ml-research/finetune-13b-copy2 is held back by Kueue (Pending)") {
		t.Errorf("capacity: exit %d %q (%s)", code, out, stderr)
	}
	// Without the priority, none.
	code, out, _ = run(t, string(data), "capacity", "-f", "-", "--snapshot", "../../examples/kueue-cluster.yaml", "-o", "jsonpath={.items[0].copies}")
	if code != ExitNo || out != "0" {
		t.Errorf("capacity without the priority: exit %d %q", code, out)
	}
}

// One verdict for a gang that waits in the queue (issue #42): gb fits the
// cluster alone, but ga, of a higher priority and so ahead of it for
// certain, takes the room: explain's first line and exit code answer
// "will it start now", no (exit 3), saying it waits behind ga; ga starts.
func TestExplainOfAGangThatWaits(t *testing.T) {
	snap := `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: node-1}, status: {allocatable: {cpu: "8", memory: 32Gi, pods: "20"}}}
- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 100}
- {apiVersion: scheduling.k8s.io/v1beta1, kind: PodGroup, metadata: {name: ga, namespace: ml, creationTimestamp: "2026-12-01T00:00:00Z"}, spec: {priority: 100, schedulingPolicy: {gang: {minCount: 2}}}}
- {apiVersion: v1, kind: Pod, metadata: {name: ga-0, namespace: ml, creationTimestamp: "2026-12-01T00:00:00Z"}, spec: {priority: 100, priorityClassName: high, schedulingGroup: {podGroupName: ga}, containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: ga-1, namespace: ml, creationTimestamp: "2026-12-01T00:00:00Z"}, spec: {priority: 100, priorityClassName: high, schedulingGroup: {podGroupName: ga}, containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]}}
- {apiVersion: scheduling.k8s.io/v1beta1, kind: PodGroup, metadata: {name: gb, namespace: ml, creationTimestamp: "2026-11-01T00:00:00Z"}, spec: {schedulingPolicy: {gang: {minCount: 2}}}}
- {apiVersion: v1, kind: Pod, metadata: {name: gb-0, namespace: ml, creationTimestamp: "2026-11-01T00:00:00Z"}, spec: {schedulingGroup: {podGroupName: gb}, containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: gb-1, namespace: ml, creationTimestamp: "2026-11-01T00:00:00Z"}, spec: {schedulingGroup: {podGroupName: gb}, containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]}}
`
	code, out, stderr := run(t, snap, "explain", "podgroup/gb", "-n", "ml", "--snapshot", "-", "-o", "jsonpath={.verdict} {.queue.verdict} {.queue.raced}|{.message}")
	if code != ExitNo || !strings.HasPrefix(out, "Unschedulable Waits |") || !strings.Contains(out, "; it waits: fits the cluster as it is, but podgroup/ga ahead of it take(s) the room") {
		t.Errorf("explain podgroup/gb: exit %d %q %s", code, out, stderr)
	}
	code, out, _ = run(t, snap, "explain", "podgroup/ga", "-n", "ml", "--snapshot", "-", "-o", "jsonpath={.verdict} {.queue.verdict}")
	if code != ExitOK || out != "Schedulable Starts" {
		t.Errorf("explain podgroup/ga: exit %d %q", code, out)
	}
	// place answers whether the gang fits the cluster as it is: it does.
	if code, out, _ := run(t, snap, "place", "podgroup/gb", "-n", "ml", "--snapshot", "-", "-o", "jsonpath={.verdict}"); code != ExitOK || out != "Placed" {
		t.Errorf("place podgroup/gb: exit %d %q", code, out)
	}
}
