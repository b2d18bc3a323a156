package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
)

var (
	crds    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	jobSets = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
)

// crdYAML is the least a CRD needs: the group, one version served and
// stored, and any content.
func crdYAML(group, version, kind, plural, scope string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[4]s.%[1]s}
spec:
  group: %[1]s
  names: {kind: %[3]s, listKind: %[3]sList, plural: %[4]s, singular: %[5]s}
  scope: %[6]s
  versions:
  - name: %[2]s
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, group, version, kind, plural, strings.ToLower(kind), scope)
}

// installJobSetCRD installs the JobSet CRD at the version the build reads.
func installJobSetCRD(t *testing.T, f *gangFixture) {
	t.Helper()
	installCRD(t, f, jobSets, "JobSet")
}

// installCRD installs a CRD serving gvr until the test ends and waits until
// discovery serves it.
func installCRD(t *testing.T, f *gangFixture, gvr schema.GroupVersionResource, kind string) {
	t.Helper()
	installCRDScope(t, f, gvr, kind, "Namespaced")
}

func installCRDScope(t *testing.T, f *gangFixture, gvr schema.GroupVersionResource, kind, scope string) {
	t.Helper()
	crd := &unstructured.Unstructured{}
	f.must(yaml.Unmarshal([]byte(crdYAML(gvr.Group, gvr.Version, kind, gvr.Resource, scope)), &crd.Object))
	if _, err := f.dyn.Resource(crds).Create(f.ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Gone before the next test installs it again.
		ctx := context.Background()
		if err := f.dyn.Resource(crds).Delete(ctx, crd.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting the CRD %s: %v", crd.GetName(), err)
		}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := f.dyn.Resource(crds).Get(ctx, crd.GetName(), metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Errorf("the CRD %s is never deleted: %v", crd.GetName(), err)
		}
	})
	disc := discovery.NewDiscoveryClientForConfigOrDie(env.Config)
	err := wait.PollUntilContextTimeout(f.ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := disc.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		if err != nil {
			return false, nil
		}
		for _, r := range list.APIResources {
			if r.Name == gvr.Resource {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the CRD %s is never served: %v", crd.GetName(), err)
	}
}

// jobSet is a JobSet of one replicated Job "workers": jobs child Jobs of
// pods pods each, every pod filling one of the fixture's nodes.
func (f *gangFixture) jobSet(name string, jobs, pods int) *unstructured.Unstructured {
	f.t.Helper()
	obj := &unstructured.Unstructured{}
	f.must(yaml.Unmarshal([]byte(fmt.Sprintf(`apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: %[1]s, namespace: %[4]s}
spec:
  replicatedJobs:
  - name: workers
    replicas: %[2]d
    template:
      spec:
        parallelism: %[3]d
        completions: %[3]d
        template:
          spec:
            nodeSelector: {%[5]s: %[4]s}
            tolerations:
            - {key: %[5]s, operator: Equal, value: %[4]s, effect: NoSchedule}
            containers:
            - name: train
              image: registry.k8s.io/pause:3.10
              resources: %[6]s
`, name, jobs, pods, f.ns, poolKey, wholeNodeYAML)), &obj.Object))
	f.createObject(jobSets, obj)
	return obj
}

// jobSetPod creates the pod the Job controller makes for completion index
// of child Job index of the JobSet's replicated Job "workers", with its
// labels and annotations, named name (the controller's own names end in a
// random suffix), on node when given.
func (f *gangFixture) jobSetPod(js *unstructured.Unstructured, name string, job, index, jobs int, node string) *corev1.Pod {
	f.t.Helper()
	jobName := fmt.Sprintf("%s-workers-%d", js.GetName(), job)
	w := f.pod(name, wholeNode)
	for k, v := range map[string]string{
		"batch.kubernetes.io/job-name":              jobName,
		"job-name":                                  jobName,
		"batch.kubernetes.io/job-completion-index":  fmt.Sprint(index),
		"jobset.sigs.k8s.io/jobset-name":            js.GetName(),
		"jobset.sigs.k8s.io/jobset-uid":             string(js.GetUID()),
		"jobset.sigs.k8s.io/replicatedjob-name":     "workers",
		"jobset.sigs.k8s.io/replicatedjob-replicas": fmt.Sprint(jobs),
		"jobset.sigs.k8s.io/job-index":              fmt.Sprint(job),
		"jobset.sigs.k8s.io/job-global-index":       fmt.Sprint(job),
		"jobset.sigs.k8s.io/restart-attempt":        "0",
		"jobset.sigs.k8s.io/group-name":             "default",
		"jobset.sigs.k8s.io/global-replicas":        fmt.Sprint(jobs),
		"jobset.sigs.k8s.io/group-replicas":         fmt.Sprint(jobs),
		"jobset.sigs.k8s.io/job-group-index":        fmt.Sprint(job),
		"controller-uid":                            "00000000-0000-0000-0000-00000000000" + fmt.Sprint(job),
		"batch.kubernetes.io/controller-uid":        "00000000-0000-0000-0000-00000000000" + fmt.Sprint(job),
	} {
		w.Label(k, v)
	}
	w.Annotation("batch.kubernetes.io/job-completion-index", fmt.Sprint(index))
	w.Spec.Hostname = fmt.Sprintf("%s-%d", jobName, index)
	w.Spec.Subdomain = js.GetName()
	w.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	if node != "" {
		w.Node(node)
	}
	return f.create(w.Obj())
}

// A JobSet read from the cluster is the pods its Jobs made plus those to
// come: the first child Job's two pods run, the second Job has none yet.
func TestWorkloadJobSetLive(t *testing.T) {
	f := newGangFixture(t, "jobset")
	installJobSetCRD(t, f)
	n := f.nodes(4)
	js := f.jobSet("pretrain", 2, 2)
	// One pod by the name the expansion gives, one by the Job
	// controller's own (<job>-<index>-<random>), found by its labels.
	f.jobSetPod(js, "pretrain-workers-0-0", 0, 0, 2, n[0])
	f.jobSetPod(js, "pretrain-workers-0-1-x7k2p", 0, 1, 2, n[1])

	code, out, stderr := f.run("place", "jobset/pretrain")
	t.Logf("place jobset/pretrain (exit %d):\n%s%s", code, out, stderr)
	if code != cmd.ExitOK {
		t.Errorf("place: exit %d, want 0", code)
	}
	code, p := f.placeJSON("jobset/pretrain")
	if code != cmd.ExitOK {
		t.Errorf("place -o json: exit %d, want 0", code)
	}
	wantPlacement(t, p, "Placed", 4, map[string]string{
		f.key("pretrain-workers-1-0"): n[2], f.key("pretrain-workers-1-1"): n[3],
	})
	running := map[string]string{}
	for _, r := range p.Running {
		running[r.Pod] = r.Node
	}
	if want := map[string]string{f.key("pretrain-workers-0-0"): n[0], f.key("pretrain-workers-0-1-x7k2p"): n[1]}; fmt.Sprint(running) != fmt.Sprint(want) {
		t.Errorf("running %v, want %v", running, want)
	}
	if p.Gang.Namespace != f.ns || p.Gang.Name != "pretrain" {
		t.Errorf("gang %+v, want %s/pretrain", p.Gang, f.ns)
	}
	// The fully qualified name is the same subject.
	if code, q := f.placeJSON("jobsets.jobset.x-k8s.io/pretrain"); code != cmd.ExitOK || fmt.Sprint(q) != fmt.Sprint(p) {
		t.Errorf("jobsets.jobset.x-k8s.io/pretrain: exit %d, placement %+v, want %+v", code, q, p)
	}

	code, out, stderr = f.run("explain", "jobset/pretrain")
	t.Logf("explain jobset/pretrain (exit %d):\n%s%s", code, out, stderr)
	if code != cmd.ExitOK {
		t.Errorf("explain: exit %d, want 0", code)
	}
	for _, want := range []string{
		fmt.Sprintf("gang %s/pretrain from JobSet pretrain (jobset.x-k8s.io/v1alpha2) (what-if: 2 of 4 members not created yet)", f.ns),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain lacks %q:\n%s", want, out)
		}
	}

	// admit takes it too: the members to come are charged to the quota.
	code, a := f.admitJSON("jobset/pretrain")
	if code != cmd.ExitOK || !a.Admitted || a.Place.Verdict != "Placed" {
		t.Errorf("admit jobset/pretrain: exit %d, admitted %v, placement %q", code, a.Admitted, a.Place.Verdict)
	}

	// Every member exists: no what-if.
	small := f.jobSet("small", 1, 2)
	f.jobSetPod(small, "small-workers-0-0-aaaaa", 0, 0, 1, "")
	f.jobSetPod(small, "small-workers-0-1-bbbbb", 0, 1, 1, "")
	code, out, stderr = f.run("explain", "jobset/small")
	if code != cmd.ExitOK || !strings.Contains(out, fmt.Sprintf("gang %s/small from JobSet small (jobset.x-k8s.io/v1alpha2)\n", f.ns)) ||
		strings.Contains(out, "what-if") {
		t.Errorf("explain jobset/small: exit %d, stderr %q, want no what-if:\n%s", code, stderr, out)
	}
	code, q := f.placeJSON("jobset/small")
	if code != cmd.ExitOK {
		t.Errorf("place jobset/small: exit %d, want 0", code)
	}
	wantPlacement(t, q, "Placed", 2, map[string]string{f.key("small-workers-0-0-aaaaa"): n[2], f.key("small-workers-0-1-bbbbb"): n[3]})

	// Completion offers the JobSets of the namespace.
	_, out, _ = runCLI(t, "", "__complete", "place", "--kubeconfig", env.Kubeconfig, "-n", f.ns, "jobset/")
	if !strings.HasPrefix(out, "jobset/pretrain\njobset/small\n:") {
		t.Errorf("completion of jobset/:\n%s", out)
	}

	// Offline, the workload is not in the snapshot.
	code, out, stderr = f.run("place", "jobset/pretrain", "--snapshot", f.file("empty.yaml", "apiVersion: v1\nkind: List\nitems: []\n"))
	wantOneErrorLine(t, code, out, stderr, "error: jobset/pretrain is read from the cluster; offline, give its manifest with -f")
}

// A workload that is not there, or whose kind the server does not serve,
// is one line and exit code 2, before the cluster is read.
func TestWorkloadNotThere(t *testing.T) {
	f := newGangFixture(t, "noworkload")
	installJobSetCRD(t, f)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"place", "leaderworkerset/x"}, "error: the server does not serve leaderworkersets.leaderworkerset.x-k8s.io (is LeaderWorkerSet installed?)"},
		{[]string{"explain", "lws", "x"}, "error: the server does not serve leaderworkersets.leaderworkerset.x-k8s.io (is LeaderWorkerSet installed?)"},
		{[]string{"place", "jobset/nope"}, fmt.Sprintf(`error: jobsets.jobset.x-k8s.io "nope" not found in namespace %q`, f.ns)},
		{[]string{"explain", "job/nope"}, fmt.Sprintf(`error: jobs.batch "nope" not found in namespace %q`, f.ns)},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, stderr := f.run(tc.args...)
			wantOneErrorLine(t, code, out, stderr, tc.want)
			// Said before the cluster is read: not even a warning of that read.
			if stderr != tc.want+"\n" {
				t.Errorf("stderr %q, want only %q", stderr, tc.want)
			}
			t.Logf("%s: exit %d, %s", strings.Join(tc.args, " "), code, strings.TrimSpace(stderr))
		})
	}
}

// A workload kind served at another version than the build reads (the
// Training Operator v1's kubeflow.org/v1 MPIJob) says which it serves.
func TestWorkloadOtherVersion(t *testing.T) {
	f := newGangFixture(t, "otherversion")
	installCRD(t, f, schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "mpijobs"}, "MPIJob")
	code, out, stderr := f.run("place", "mpijob/x")
	want := "error: the server serves mpijobs.kubeflow.org at v1, not at v2beta1, the version this build reads"
	wantOneErrorLine(t, code, out, stderr, want)
	t.Logf("place mpijob/x: exit %d, %s", code, strings.TrimSpace(stderr))
}

// A Deployment read from the cluster is the pods its ReplicaSets made (found
// by its selector: their names are random) plus those to come.
func TestWorkloadDeploymentLive(t *testing.T) {
	f := newGangFixture(t, "deployment")
	n := f.nodes(3)
	obj := &unstructured.Unstructured{}
	f.must(yaml.Unmarshal([]byte(fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: serve, namespace: %[1]s}
spec:
  replicas: 3
  selector: {matchLabels: {app: serve}}
  template:
    metadata: {labels: {app: serve}}
    spec:
      nodeSelector: {%[2]s: %[1]s}
      tolerations:
      - {key: %[2]s, operator: Equal, value: %[1]s, effect: NoSchedule}
      containers:
      - name: serve
        image: registry.k8s.io/pause:3.10
        resources: %[3]s
`, f.ns, poolKey, wholeNodeYAML)), &obj.Object))
	f.createObject(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, obj)
	for i, name := range []string{"serve-7d4b9c-x2k8p", "serve-7d4b9c-q9z4m"} {
		f.create(f.pod(name, wholeNode).Label("app", "serve").Label("pod-template-hash", "7d4b9c").Node(n[i]).Obj())
	}
	// Another app's pod is not the Deployment's.
	f.create(f.pod("other-1", testutil.Res{"cpu": "1"}).Label("app", "other").Obj())

	code, p := f.placeJSON("deployment/serve")
	if code != cmd.ExitOK {
		t.Errorf("place deployment/serve: exit %d, want 0 (%s)", code, p.Message)
	}
	wantPlacement(t, p, "Placed", 3, map[string]string{f.key("serve-2"): n[2]})
	running := map[string]string{}
	for _, r := range p.Running {
		running[r.Pod] = r.Node
	}
	if want := map[string]string{f.key("serve-7d4b9c-x2k8p"): n[0], f.key("serve-7d4b9c-q9z4m"): n[1]}; fmt.Sprint(running) != fmt.Sprint(want) {
		t.Errorf("running %v, want %v", running, want)
	}
	// The short name is the same subject.
	if code, q := f.placeJSON("deploy/serve"); code != cmd.ExitOK || fmt.Sprint(q) != fmt.Sprint(p) {
		t.Errorf("deploy/serve: exit %d, placement %+v, want %+v", code, q, p)
	}
}

// A TrainJob read from the cluster is expanded with the runtime it names,
// read from the cluster too; -f with a TrainJob whose runtime is only in
// the cluster finds it there, and offline says where to get it.
func TestWorkloadTrainJobLive(t *testing.T) {
	f := newGangFixture(t, "trainjob")
	trainJobs := schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "trainjobs"}
	installCRD(t, f, trainJobs, "TrainJob")
	runtimes := schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "clustertrainingruntimes"}
	installClusterCRD(t, f, runtimes, "ClusterTrainingRuntime")
	n := f.nodes(3)
	runtimeYAML := fmt.Sprintf(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: %[1]s-torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                nodeSelector: {%[2]s: %[1]s}
                tolerations:
                - {key: %[2]s, operator: Equal, value: %[1]s, effect: NoSchedule}
                containers:
                - name: node
                  image: registry.k8s.io/pause:3.10
`, f.ns, poolKey)
	rt := &unstructured.Unstructured{}
	f.must(yaml.Unmarshal([]byte(runtimeYAML), &rt.Object))
	f.createObject(runtimes, rt)
	t.Cleanup(func() {
		_ = f.dyn.Resource(runtimes).Delete(context.Background(), rt.GetName(), metav1.DeleteOptions{})
	})
	jobYAML := fmt.Sprintf(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: llama, namespace: %[1]s}
spec:
  runtimeRef: {name: %[1]s-torch}
  trainer:
    numNodes: 3
    resourcesPerNode: %[2]s
`, f.ns, wholeNodeYAML)
	tj := &unstructured.Unstructured{}
	f.must(yaml.Unmarshal([]byte(jobYAML), &tj.Object))
	f.createObject(trainJobs, tj)

	code, p := f.placeJSON("trainjob/llama")
	if code != cmd.ExitOK {
		t.Errorf("place trainjob/llama: exit %d, want 0 (%s)", code, p.Message)
	}
	wantPlacement(t, p, "Placed", 3, map[string]string{
		f.key("llama-node-0-0"): n[0], f.key("llama-node-0-1"): n[1], f.key("llama-node-0-2"): n[2],
	})

	// -f without the runtime: found in the cluster.
	file := f.file("llama.yaml", jobYAML)
	code, q := f.placeJSON("-f", file)
	if code != cmd.ExitOK || fmt.Sprint(q.Assignments) != fmt.Sprint(p.Assignments) {
		t.Errorf("place -f (runtime in the cluster): exit %d, assignments %+v, want %+v", code, q.Assignments, p.Assignments)
	}
	// Offline the cluster is not there to look in.
	code, out, stderr := f.run("place", "-f", file, "--snapshot", f.file("empty.yaml", "apiVersion: v1\nkind: List\nitems: []\n"))
	wantOneErrorLine(t, code, out, stderr, fmt.Sprintf(`error: %s: TrainJob "llama": its runtime ClusterTrainingRuntime "%s-torch" is not in the manifests; give it with -f too (kubectl get clustertrainingruntime %s-torch -o yaml)`, file, f.ns, f.ns))
	// A runtime in neither.
	missing := f.file("missing.yaml", strings.Replace(jobYAML, f.ns+"-torch", "nope", 1))
	code, out, stderr = f.run("place", "-f", missing)
	wantOneErrorLine(t, code, out, stderr, fmt.Sprintf(`error: %s: TrainJob "llama": its runtime ClusterTrainingRuntime "nope" is neither in the manifests nor in the cluster`, missing))
}

// installClusterCRD is installCRD for a cluster-scoped kind.
func installClusterCRD(t *testing.T, f *gangFixture, gvr schema.GroupVersionResource, kind string) {
	t.Helper()
	installCRDScope(t, f, gvr, kind, "Cluster")
}

// An Indexed Job read from the cluster leaves out the indexes that
// finished: index 0 Succeeded, index 1 runs, index 2 is still to come, so
// the gang is the two that have not finished. Once every index finished,
// nothing is left to place.
func TestWorkloadJobLiveSkipsFinishedIndexes(t *testing.T) {
	f := newGangFixture(t, "indexedjob")
	n := f.nodes(2)
	job := &unstructured.Unstructured{}
	f.must(yaml.Unmarshal([]byte(fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: eval, namespace: %[1]s}
spec:
  completions: 3
  parallelism: 3
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {%[2]s: %[1]s}
      tolerations:
      - {key: %[2]s, operator: Equal, value: %[1]s, effect: NoSchedule}
      containers:
      - name: eval
        image: registry.k8s.io/pause:3.10
        resources: %[3]s
`, f.ns, poolKey, wholeNodeYAML)), &job.Object))
	f.createObject(schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, job)
	indexPod := func(name string, index int) *testutil.PodWrapper {
		return f.pod(name, wholeNode).Label("batch.kubernetes.io/job-name", "eval").Label("job-name", "eval").
			Label("batch.kubernetes.io/job-completion-index", fmt.Sprint(index)).
			Annotation("batch.kubernetes.io/job-completion-index", fmt.Sprint(index))
	}
	done := indexPod("eval-0-k2x9d", 0).Node(n[0]).Obj()
	done.Status.Phase = corev1.PodSucceeded
	f.create(done)
	f.create(indexPod("eval-1-p4m7q", 1).Node(n[1]).Obj())

	code, p := f.placeJSON("job/eval")
	if code != cmd.ExitOK {
		t.Errorf("place job/eval: exit %d, want 0 (%s)", code, p.Message)
	}
	// n[0] is free again: its pod finished.
	wantPlacement(t, p, "Placed", 2, map[string]string{f.key("eval-2"): n[0]})
	if !strings.HasSuffix(p.Message, "; 1 member(s) finished already") {
		t.Errorf("message %q, want the finished member counted", p.Message)
	}
	if len(p.Running) != 1 || p.Running[0].Pod != f.key("eval-1-p4m7q") {
		t.Errorf("running %+v, want eval-1-p4m7q alone", p.Running)
	}
	code, out, stderr := f.run("explain", "job/eval")
	if code != cmd.ExitOK || !strings.Contains(out, "(what-if: 1 of 2 members not created yet)") {
		t.Errorf("explain job/eval: exit %d, stderr %q:\n%s", code, stderr, out)
	}
}

// A Job whose every index finished has nothing left to place, and says so.
func TestWorkloadJobLiveAllFinished(t *testing.T) {
	f := newGangFixture(t, "finishedjob")
	f.nodes(1)
	job := &unstructured.Unstructured{}
	f.must(yaml.Unmarshal([]byte(fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: %[1]s}
spec:
  completionMode: Indexed
  completions: 1
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: once, image: registry.k8s.io/pause:3.10}
`, f.ns)), &job.Object))
	f.createObject(schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, job)
	done := f.pod("once-0-x", testutil.Res{"cpu": "1"}).Label("batch.kubernetes.io/job-name", "once").
		Label("batch.kubernetes.io/job-completion-index", "0").Obj()
	done.Status.Phase = corev1.PodSucceeded
	f.create(done)
	code, p := f.placeJSON("job/once")
	want := fmt.Sprintf("gang %s/once placed: 0 running and 0 to place, minimum 0; 1 member(s) finished already", f.ns)
	if code != cmd.ExitOK || p.Verdict != "Placed" || p.Message != want {
		t.Errorf("place job/once: exit %d, %s %q, want Placed %q", code, p.Verdict, p.Message, want)
	}
}
