package kueue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	v1alpha1 "github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
)

// run runs kubectl gang in-process against the test bed.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cmd.Main(append(args, "--kubeconfig", env.Kubeconfig), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

// bed makes a namespace and the objects given (YAML documents) for one
// test, with a prefix of its own for cluster-scoped names.
func bed(t *testing.T, ns string, docs ...string) dynamic.Interface {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(env.Config)
	if _, err := env.Clientset().CoreV1().Namespaces().Create(t.Context(), nsObj(ns), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if _, err := create(t, dyn, d); err != nil {
			t.Fatalf("%v\n%s", err, d)
		}
	}
	return dyn
}

func writeFile(t *testing.T, data string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func gpuJob(ns, name, queue string, pods, gpus int, nodeSelector string) string {
	sel := ""
	if nodeSelector != "" {
		sel = "nodeSelector: {" + nodeSelector + "}, "
	}
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: %s, namespace: %s, labels: {kueue.x-k8s.io/queue-name: %s}}
spec:
  parallelism: %d
  completions: %d
  template:
    spec: {%srestartPolicy: Never, containers: [{name: c, image: c, resources: {requests: {cpu: "1", nvidia.com/gpu: "%d"}, limits: {nvidia.com/gpu: "%d"}}}]}
`, name, ns, queue, pods, pods, sel, gpus, gpus)
}

func queues(prefix, ns, flavorLabels string, gpuQuota int) []string {
	return []string{
		fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: %s-a100}\nspec: {nodeLabels: {%s}}\n", prefix, flavorLabels),
		fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %s-research}
spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [cpu, nvidia.com/gpu], flavors: [{name: %s-a100, resources: [{name: cpu, nominalQuota: 64}, {name: nvidia.com/gpu, nominalQuota: %d}]}]}]}
`, prefix, prefix, gpuQuota),
		fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: team, namespace: %s}\nspec: {clusterQueue: %s-research}\n", ns, prefix),
	}
}

// The Job of issue #39's first paragraph: labelled for a LocalQueue whose
// ClusterQueue has no GPU quota left while the nodes have free GPUs. place
// -f says it is not placed (exit 3), Kueue's message leading; the real Kueue,
// given the Job, keeps it suspended with that very message; explain and
// admit of the stored Job (read live, its Workload Kueue's) say the same.
func TestJobWithoutQuotaIsNotPlaced(t *testing.T) {
	ctx := t.Context()
	ns := "noquota"
	dyn := bed(t, ns, queues("nq", ns, "pool: nq", 8)...)
	for i := range 2 {
		node := testutil.MakeNode().Name(fmt.Sprintf("nq-%d", i)).Label("pool", "nq").
			Capacity(testutil.Res{"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "8", "pods": "110"}).Obj()
		if err := env.CreateNode(ctx, node); err != nil {
			t.Fatal(err)
		}
	}
	// The quota is used: one Job of 8 GPUs admitted (nothing runs its pods
	// here, and Kueue counts the admission, not the pods).
	first, err := create(t, dyn, gpuJob(ns, "first", "team", 1, 8, ""))
	if err != nil {
		t.Fatal(err)
	}
	sc := &scenario{ns: ns}
	if o, err := sc.settle(t, dyn, first); err != nil || !o.admitted {
		t.Fatalf("the first Job: %v %v", o, err)
	}
	file := writeFile(t, gpuJob(ns, "train", "team", 2, 4, ""))
	code, out, errOut := run(t, "place", "-f", file)
	want := "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor nq-a100, 8 more needed"
	if code != 3 || !strings.HasPrefix(out, "Unschedulable: gang noquota/train is held back by Kueue (Pending): Kueue does not admit Job train in LocalQueue team (ClusterQueue nq-research): "+want) {
		t.Errorf("place exit %d:\n%s%s", code, out, errOut)
	}
	job, err := create(t, dyn, gpuJob(ns, "train", "team", 2, 4, ""))
	if err != nil {
		t.Fatal(err)
	}
	real, err := sc.settle(t, dyn, job)
	if err != nil {
		t.Fatal(err)
	}
	if real.admitted || real.message != want {
		t.Errorf("Kueue: %v; want %q", real, want)
	}
	// The stored, suspended Job: its Workload is Kueue's.
	code, out, errOut = run(t, "admit", "job/train", "-n", ns, "-o", "json")
	var a v1alpha1.Admission
	if err := json.Unmarshal([]byte(out), &a); err != nil || code != 3 || a.Kueue == nil || a.Kueue.Admitted || a.Kueue.Message != want || a.Kueue.ClusterQueue != "nq-research" {
		t.Errorf("admit job/train exit %d (%v): %s%s", code, err, out, errOut)
	}
	// explain leads with the fix in Kueue's terms, proven by placing
	// again, and names the Workload that holds the quota; made on the real
	// ClusterQueue, the fix lets Kueue admit the Job.
	code, out, _ = run(t, "explain", "job/train", "-n", ns)
	flat := strings.Join(strings.Fields(out), " ")
	fix := "raising ClusterQueue nq-research's nominalQuota in flavor nq-a100: nvidia.com/gpu from 8 to 16 (by 8): then Kueue admits it in ClusterQueue nq-research"
	if code != 3 || !strings.Contains(flat, want) || !strings.Contains(flat, fix) || !strings.Contains(flat, "(verified)") ||
		!strings.Contains(flat, "ClusterQueue nq-research's quota is held by noquota/job-first-") {
		t.Errorf("explain job/train exit %d:\n%s", code, out)
	}
	cq, err := dyn.Resource(kueueGVR("clusterqueues")).Get(ctx, "nq-research", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	groups, _, _ := unstructured.NestedSlice(cq.Object, "spec", "resourceGroups")
	res := groups[0].(map[string]any)["flavors"].([]any)[0].(map[string]any)["resources"].([]any)
	res[1].(map[string]any)["nominalQuota"] = "16"
	_ = unstructured.SetNestedSlice(cq.Object, groups, "spec", "resourceGroups")
	if _, err := dyn.Resource(kueueGVR("clusterqueues")).Update(ctx, cq, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !admittedWithin(t, dyn, ns, job, 30*time.Second) {
		t.Fatal("with the quota raised as explain says, Kueue did not admit the Job in 30s")
	}
}

// admittedWithin reports whether Kueue reserves quota for job's Workload
// within d.
func admittedWithin(t *testing.T, dyn dynamic.Interface, ns string, job *unstructured.Unstructured, d time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		list, err := dyn.Resource(gvrWorkload).Namespace(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "kueue.x-k8s.io/job-uid=" + string(job.GetUID())})
		if err == nil && len(list.Items) == 1 {
			if c := condition(&list.Items[0], "QuotaReserved"); c != nil && c.Status == metav1.ConditionTrue {
				return true
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}

// Quota says yes, the nodes say no: Kueue admits the Job in flavor a100,
// whose nodes (pool=qn-a) have 4 GPUs free each, and each pod needs 8; the
// pool-b node has 8 free, but Kueue puts the flavor's node labels on the
// pods. place says Unschedulable (exit 3) with Kueue's admission in its
// JSON; the real Kueue admits the Job.
func TestAdmittedButNoNodeHoldsIt(t *testing.T) {
	ctx := t.Context()
	ns := "quotayes"
	dyn := bed(t, ns, queues("qn", ns, "pool: qn-a", 16)...)
	for _, n := range []struct{ name, pool, gpus string }{{"qn-a-0", "qn-a", "4"}, {"qn-a-1", "qn-a", "4"}, {"qn-b-0", "qn-b", "8"}} {
		node := testutil.MakeNode().Name(n.name).Label("pool", n.pool).
			Capacity(testutil.Res{"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": n.gpus, "pods": "110"}).Obj()
		if err := env.CreateNode(ctx, node); err != nil {
			t.Fatal(err)
		}
	}
	file := writeFile(t, gpuJob(ns, "big", "team", 1, 8, ""))
	code, out, errOut := run(t, "place", "-f", file, "-o", "json")
	var p v1alpha1.Placement
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("place exit %d: %v\n%s%s", code, err, out, errOut)
	}
	if code != 3 || p.Verdict != "Unschedulable" || p.Kueue == nil || !p.Kueue.Admitted || p.Kueue.Flavors["main"]["nvidia.com/gpu"] != "qn-a100" {
		t.Errorf("place exit %d: verdict %s, kueue %+v\n%s", code, p.Verdict, p.Kueue, out)
	}
	for _, m := range p.Members {
		if m.Node == "qn-b-0" {
			t.Errorf("member %s planned on qn-b-0, outside the flavor's nodes", m.Pod)
		}
	}
	// Without Kueue's flavor the pod would fit (on qn-b-0, or another
	// test's node): the same Job without the queue label is placed.
	file = writeFile(t, strings.Replace(gpuJob(ns, "big", "team", 1, 8, ""), "labels: {kueue.x-k8s.io/queue-name: team}", "labels: {}", 1))
	if code, out, _ := run(t, "place", "-f", file); code != 0 || strings.Contains(out, "qn-a-") {
		t.Errorf("without the queue: exit %d\n%s", code, out)
	}
	job, err := create(t, dyn, gpuJob(ns, "big", "team", 1, 8, ""))
	if err != nil {
		t.Fatal(err)
	}
	sc := &scenario{ns: ns}
	real, err := sc.settle(t, dyn, job)
	if err != nil || !real.admitted {
		t.Errorf("Kueue: %v %v; want admitted", real, err)
	}
	// Kueue resumed the Job with the flavor's node labels on its pods.
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := dyn.Resource(gvrJob).Namespace(ns).Get(ctx, "big", metav1.GetOptions{})
		if err == nil {
			if sel, _, _ := unstructuredString(got.Object, "spec", "template", "spec", "nodeSelector", "pool"); sel == "qn-a" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Kueue did not put the flavor's node labels on the Job's pods")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	return unstructured.NestedString(obj, fields...)
}
