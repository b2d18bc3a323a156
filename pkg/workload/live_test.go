package workload_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

// livePod is a pod the controllers created: a UID, a creation time and the
// labels given.
func livePod(name string, labels ...string) *testutil.PodWrapper {
	w := testutil.MakePod().Namespace("ml").Name(name).UID("uid-" + name).Req(testutil.Res{"cpu": "1"}).
		Created(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	for i := 0; i+1 < len(labels); i += 2 {
		w.Label(labels[i], labels[i+1])
	}
	return w
}

// merged describes each member of a merged gang: name, and for a real pod
// its UID and node ("-" when pending), for a what-if one "what-if".
func merged(g *gang.Gang) []string {
	var out []string
	for _, p := range g.Members {
		switch {
		case p.UID == "":
			out = append(out, p.Name+" what-if")
		case p.Spec.NodeName == "":
			out = append(out, fmt.Sprintf("%s %s -", p.Name, p.UID))
		default:
			out = append(out, fmt.Sprintf("%s %s %s", p.Name, p.UID, p.Spec.NodeName))
		}
	}
	return out
}

const liveJobSet = `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain, namespace: ml}
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 2
        completions: 2
        template:
          spec:
            containers:
            - {name: train, image: x, resources: {requests: {cpu: "1"}}}
`

func TestMergeLiveJobSet(t *testing.T) {
	expanded := whatIf(t, []byte(liveJobSet), "jobset.yaml", nil)
	job0 := "pretrain-workers-0"
	job1 := "pretrain-workers-1"
	deleting := metav1.NewTime(time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC))
	pods := []*corev1.Pod{
		// The name the expansion gives.
		livePod(job0+"-0", "batch.kubernetes.io/job-name", job0, "batch.kubernetes.io/job-completion-index", "0").Node("n1").Obj(),
		// The name the Job controller gives: <job>-<index>-<random>.
		livePod(job0+"-1-x7k2p", "batch.kubernetes.io/job-name", job0, "batch.kubernetes.io/job-completion-index", "1").Node("n2").Obj(),
		// Index 1 of the second Job, pending and gated.
		livePod(job1+"-1-q9z8w", "batch.kubernetes.io/job-name", job1, "batch.kubernetes.io/job-completion-index", "1").SchedulingGate("example.com/gate").
			Created(time.Date(2025, 1, 1, 0, 5, 0, 0, time.UTC)).Obj(),
		// Being deleted: the controller replaces it; the member stays what-if.
		func() *corev1.Pod {
			p := livePod(job1+"-0-dead1", "batch.kubernetes.io/job-name", job1, "batch.kubernetes.io/job-completion-index", "0").Node("n3").Obj()
			p.DeletionTimestamp = &deleting
			return p
		}(),
		// Finished, another namespace, another Job: none stands for a member.
		livePod(job1+"-0-done1", "batch.kubernetes.io/job-name", job1, "batch.kubernetes.io/job-completion-index", "0").Phase(corev1.PodSucceeded).Obj(),
		livePod(job1+"-0-other", "batch.kubernetes.io/job-name", job1, "batch.kubernetes.io/job-completion-index", "0").Namespace("other").Obj(),
		livePod("pretrain-other-0-0-abcde", "batch.kubernetes.io/job-name", "pretrain-other-0", "batch.kubernetes.io/job-completion-index", "0").Obj(),
	}
	before := merged(expanded)
	g := workload.MergeLive(expanded, pods)
	want := []string{
		job0 + "-0 uid-" + job0 + "-0 n1",
		job0 + "-1-x7k2p uid-" + job0 + "-1-x7k2p n2",
		job1 + "-1-q9z8w uid-" + job1 + "-1-q9z8w -",
		// Created after the newest real member, it queues last.
		job1 + "-0 what-if",
	}
	if diff := cmp.Diff(want, merged(g)); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if g.MinMember != 4 || g.Source != gang.SourceFile || len(g.Read) != 1 || g.Read[0] != "JobSet pretrain (jobset.x-k8s.io/v1alpha2)" {
		t.Errorf("gang %s min %d source %s read %v, want the expansion's", g.Key(), g.MinMember, g.Source, g.Read)
	}
	if n := len(g.Running()); n != 2 {
		t.Errorf("%d running, want 2", n)
	}
	if c := g.Members[3].CreationTimestamp.Time; !c.Equal(time.Date(2025, 1, 1, 0, 5, 1, 0, time.UTC)) {
		t.Errorf("the what-if member was created at %v, want a second after the newest real one", c)
	}
	if len(g.Members[2].Spec.SchedulingGates) != 1 {
		t.Errorf("the real pod's gates were not kept: %v", g.Members[2].Spec.SchedulingGates)
	}
	if diff := cmp.Diff(before, merged(expanded)); diff != "" {
		t.Errorf("MergeLive changed its input (-before +after):\n%s", diff)
	}
}

// A real pod of another index of the same Job stands for a member when no
// pod has the member's own index: a Job of more completions than
// parallelism runs any of its indexes.
func TestMergeLiveJobOtherIndex(t *testing.T) {
	expanded := whatIf(t, []byte(`apiVersion: batch/v1
kind: Job
metadata: {name: sim, namespace: ml}
spec:
  parallelism: 2
  completions: 8
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: x, resources: {requests: {cpu: "1"}}}
`), "job.yaml", nil)
	pods := []*corev1.Pod{
		livePod("sim-5-aaaaa", "batch.kubernetes.io/job-name", "sim", "batch.kubernetes.io/job-completion-index", "5").Node("n1").Obj(),
		livePod("sim-1-bbbbb", "batch.kubernetes.io/job-name", "sim", "batch.kubernetes.io/job-completion-index", "1").Obj(),
		// A third pod of the Job: beyond its parallelism, left out.
		livePod("sim-6-ccccc", "batch.kubernetes.io/job-name", "sim", "batch.kubernetes.io/job-completion-index", "6").Obj(),
	}
	got := merged(workload.MergeLive(expanded, pods))
	want := []string{"sim-1-bbbbb uid-sim-1-bbbbb -", "sim-5-aaaaa uid-sim-5-aaaaa n1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
}

// KubeRay names its pods at random: the head and the workers are matched
// by cluster, node type and group, one real pod for one member.
func TestMergeLiveRayCluster(t *testing.T) {
	expanded := whatIf(t, []byte(`apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: llm, namespace: ml}
spec:
  headGroupSpec:
    template:
      spec:
        containers:
        - {name: ray-head, image: ray, resources: {requests: {cpu: "1"}}}
  workerGroupSpecs:
  - groupName: cpu
    replicas: 2
    template:
      spec:
        containers:
        - {name: ray-worker, image: ray, resources: {requests: {cpu: "1"}}}
`), "ray.yaml", nil)
	ray := func(name, nodeType, group string) *testutil.PodWrapper {
		return livePod(name, "ray.io/cluster", "llm", "ray.io/node-type", nodeType, "ray.io/group", group, "ray.io/is-ray-node", "yes")
	}
	pods := []*corev1.Pod{
		ray("llm-head-x2v9d", "head", "headgroup").Node("n1").Obj(),
		ray("llm-cpu-worker-7hq4k", "worker", "cpu").Node("n2").Obj(),
		// Another cluster's worker of a group of the same name.
		livePod("other-cpu-worker-aaaaa", "ray.io/cluster", "other", "ray.io/node-type", "worker", "ray.io/group", "cpu").Obj(),
	}
	got := merged(workload.MergeLive(expanded, pods))
	want := []string{"llm-cpu-worker-7hq4k uid-llm-cpu-worker-7hq4k n2", "llm-head-x2v9d uid-llm-head-x2v9d n1", "llm-cpu-worker-1 what-if"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
}

// An MPIJob's workers have the names mpi-operator gives; its launcher is a
// Job's pod, matched by the job name and role.
func TestMergeLiveMPIJob(t *testing.T) {
	expanded := whatIf(t, []byte(`apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: mpi, namespace: ml}
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - {name: launcher, image: mpi, resources: {requests: {cpu: "1"}}}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - {name: worker, image: mpi, resources: {requests: {cpu: "1"}}}
`), "mpi.yaml", nil)
	mpi := func(name, role string) *testutil.PodWrapper {
		return livePod(name, "training.kubeflow.org/operator-name", "mpi-operator", "training.kubeflow.org/job-name", "mpi",
			"training.kubeflow.org/job-role", role)
	}
	pods := []*corev1.Pod{
		mpi("mpi-worker-0", "worker").Label("training.kubeflow.org/replica-index", "0").Node("n1").Obj(),
		mpi("mpi-worker-1", "worker").Label("training.kubeflow.org/replica-index", "1").Node("n2").Obj(),
		mpi("mpi-launcher-k2j4m", "launcher").Label("batch.kubernetes.io/job-name", "mpi-launcher").Obj(),
	}
	got := merged(workload.MergeLive(expanded, pods))
	want := []string{"mpi-launcher-k2j4m uid-mpi-launcher-k2j4m -", "mpi-worker-0 uid-mpi-worker-0 n1", "mpi-worker-1 uid-mpi-worker-1 n2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
}

// A LeaderWorkerSet's pods are StatefulSet pods: names alone match, and a
// pod of the name with other labels is still the member.
func TestMergeLiveByNameOnly(t *testing.T) {
	expanded := whatIf(t, []byte(`apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: serve, namespace: ml}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
        - {name: c, image: x, resources: {requests: {cpu: "1"}}}
`), "lws.yaml", nil)
	pods := []*corev1.Pod{livePod("serve-0", "app", "real").Node("n1").Obj(), livePod("serve-9").Obj()}
	g := workload.MergeLive(expanded, pods)
	want := []string{"serve-0 uid-serve-0 n1", "serve-0-1 what-if"}
	if diff := cmp.Diff(want, merged(g)); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if g.Members[0].Labels["app"] != "real" {
		t.Errorf("the real pod's labels were not kept: %v", g.Members[0].Labels)
	}
}

// Without real pods the gang is the expansion, what-if through and through.
func TestMergeLiveNothingCreated(t *testing.T) {
	expanded := whatIf(t, []byte(liveJobSet), "jobset.yaml", nil)
	g := workload.MergeLive(expanded, []*corev1.Pod{livePod("unrelated").Node("n1").Obj()})
	if diff := cmp.Diff(merged(expanded), merged(g)); diff != "" {
		t.Errorf("members (-expanded +merged):\n%s", diff)
	}
	for _, p := range g.Members {
		if !p.CreationTimestamp.IsZero() {
			t.Errorf("%s got a creation time %v", p.Name, p.CreationTimestamp)
		}
	}
}

// A Job read with its status runs what its controller would: an Indexed
// Job the lowest indexes not completed, a non-Indexed one no more pods than
// completions left. Members that stand for any of several indexes left are
// kept when they turn out finished (another index follows); the last
// indexes of a Job are dropped when finished.
func TestJobStatusAndFinishedMembers(t *testing.T) {
	job := func(mode string, completions, parallelism int, status string) []byte {
		return fmt.Appendf(nil, `apiVersion: batch/v1
kind: Job
metadata: {name: sim, namespace: ml}
spec:
  completions: %d
  parallelism: %d
  completionMode: %s
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: x, resources: {requests: {cpu: "1"}}}
status: %s
`, completions, parallelism, mode, status)
	}
	names := func(g *gang.Gang) []string {
		var out []string
		for _, p := range g.Members {
			out = append(out, p.Name)
		}
		return out
	}
	g := whatIf(t, job("Indexed", 6, 2, `{completedIndexes: "0,2-3", succeeded: 3}`), "job.yaml", nil)
	if diff := cmp.Diff([]string{"sim-1", "sim-4"}, names(g)); diff != "" {
		t.Errorf("indexed members (-want +got):\n%s", diff)
	}
	// sim-1 finished after the Job was read: index 5 takes its place.
	done := livePod("sim-1-zzzzz", "batch.kubernetes.io/job-name", "sim", "batch.kubernetes.io/job-completion-index", "1").Obj()
	if got := workload.DropFinished(g, nil, []*corev1.Pod{done}); len(got.Members) != 2 || got.Finished != 0 {
		t.Errorf("with indexes left: members %v, finished %d; want both kept", names(got), got.Finished)
	}
	// The last two indexes: a finished one is dropped, and the minimum too.
	g = whatIf(t, job("Indexed", 6, 2, `{completedIndexes: "0-3", succeeded: 4}`), "job.yaml", nil)
	done = livePod("sim-4-zzzzz", "batch.kubernetes.io/job-name", "sim", "batch.kubernetes.io/job-completion-index", "4").Obj()
	got := workload.DropFinished(g, nil, []*corev1.Pod{done})
	if diff := cmp.Diff([]string{"sim-5"}, names(got)); diff != "" || got.MinMember != 1 || got.Finished != 1 {
		t.Errorf("last indexes: members (-want +got):\n%s; minimum %d, finished %d, want 1 and 1", diff, got.MinMember, got.Finished)
	}
	g = whatIf(t, job("NonIndexed", 10, 4, `{succeeded: 8}`), "job.yaml", nil)
	if diff := cmp.Diff([]string{"sim-0", "sim-1"}, names(g)); diff != "" {
		t.Errorf("non-indexed members (-want +got):\n%s", diff)
	}
	if _, err := workload.FromManifests(mustDecode(t, job("Indexed", 6, 2, `{completedIndexes: "x"}`)), "ml", 0); err == nil ||
		err.Error() != `Job "sim": status.completedIndexes: "x" is not an index` {
		t.Errorf("bad completedIndexes: %v", err)
	}
}

func mustDecode(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := workload.Decode(data, "job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return objs
}
