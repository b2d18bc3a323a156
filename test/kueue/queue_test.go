package kueue

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	v1alpha1 "github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
)

// queueCase is a set of Jobs Kueue holds in a stopped LocalQueue, all at
// once, then lets go: which it admits, and in which flavors, is what
// explain -A must have said of the snapshot with the LocalQueue going.
type queueCase struct {
	name string
	// objects are the flavors and ClusterQueues; %[1]s is the case's
	// prefix, the LocalQueue "team" points at %[1]s-cq.
	objects []string
	// jobs are GPUs per pod x pods, created one after another (a second
	// apart: Kueue orders equal priorities by creation), with a
	// WorkloadPriorityClass where prio is set.
	jobs []queueJob
}

type queueJob struct {
	pods, gpus int
	prio       string
}

func flavor(name string) string {
	return fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: %s}\nspec: {nodeLabels: {qv: %s}}\n", name, name)
}

func clusterQueue(name, strategy, cohort string, flavors map[string]int) string {
	var fl []string
	for _, f := range slices.Sorted(maps.Keys(flavors)) {
		fl = append(fl, fmt.Sprintf("{name: %s, resources: [{name: cpu, nominalQuota: 64}, {name: nvidia.com/gpu, nominalQuota: %d}]}", f, flavors[f]))
	}
	c := ""
	if cohort != "" {
		c = "cohortName: " + cohort + ", "
	}
	return fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %s}
spec: {%snamespaceSelector: {}, queueingStrategy: %s, resourceGroups: [{coveredResources: [cpu, nvidia.com/gpu], flavors: [%s]}]}
`, name, c, strategy, strings.Join(fl, ", "))
}

// TestQueueViewAgreesWithKueue: Jobs wait in a LocalQueue with stopPolicy
// Hold (Kueue makes their Workloads and admits none); a live snapshot is
// taken and its LocalQueue set going in the file; explain -A of that file
// says which Workloads Kueue admits and where; then the real LocalQueue is
// set going and Kueue admits them all at once, cycle after cycle. Both
// must agree on every Workload: admitted or not, and the flavors. The
// cases are BestEffortFIFO passing over a Workload that does not fit
// (scheduler.go: an inadmissible head is parked and the next one popped),
// StrictFIFO holding the queue behind its head, flavors in order with the
// second taken when the first is full (flavorassigner), priorities before
// creation (queue ordering), and two ClusterQueues of a cohort borrowing.
func TestQueueViewAgreesWithKueue(t *testing.T) {
	cases := []queueCase{
		{name: "besteffort", objects: []string{flavor("%[1]s-a"), clusterQueue("%[1]s-cq", "BestEffortFIFO", "", map[string]int{"%[1]s-a": 8})},
			jobs: []queueJob{{1, 4, ""}, {1, 8, ""}, {1, 2, ""}, {2, 1, ""}, {1, 1, ""}}},
		{name: "strict", objects: []string{flavor("%[1]s-a"), clusterQueue("%[1]s-cq", "StrictFIFO", "", map[string]int{"%[1]s-a": 8})},
			jobs: []queueJob{{1, 4, ""}, {1, 8, ""}, {1, 2, ""}, {1, 1, ""}}},
		{name: "flavors", objects: []string{flavor("%[1]s-a"), flavor("%[1]s-b"), `apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %[1]s-cq}
spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [cpu, nvidia.com/gpu], flavors: [{name: %[1]s-a, resources: [{name: cpu, nominalQuota: 64}, {name: nvidia.com/gpu, nominalQuota: 4}]}, {name: %[1]s-b, resources: [{name: cpu, nominalQuota: 64}, {name: nvidia.com/gpu, nominalQuota: 8}]}]}]}
`},
			jobs: []queueJob{{1, 4, ""}, {1, 4, ""}, {1, 6, ""}, {2, 1, ""}, {1, 2, ""}}},
		{name: "priority", objects: []string{flavor("%[1]s-a"), clusterQueue("%[1]s-cq", "BestEffortFIFO", "", map[string]int{"%[1]s-a": 4}),
			"apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: %[1]s-high}\nvalue: 1000\n"},
			jobs: []queueJob{{1, 4, ""}, {1, 2, ""}, {1, 4, "high"}, {1, 2, ""}}},
		{name: "cohort", objects: []string{flavor("%[1]s-a"), clusterQueue("%[1]s-cq", "BestEffortFIFO", "%[1]s-co", map[string]int{"%[1]s-a": 4}),
			clusterQueue("%[1]s-other", "BestEffortFIFO", "%[1]s-co", map[string]int{"%[1]s-a": 4})},
			jobs: []queueJob{{1, 6, ""}, {1, 2, ""}, {1, 2, ""}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.check(t)
		})
	}
}

func (c queueCase) check(t *testing.T) {
	prefix := "qv-" + c.name
	ns := prefix
	dyn, sc := heldBed(t, prefix, 2, c.objects...)
	var jobs []*unstructured.Unstructured
	for i, j := range c.jobs {
		y := gpuJob(ns, fmt.Sprintf("j%d", i), "team", j.pods, j.gpus, "")
		if j.prio != "" {
			y = strings.Replace(y, "labels: {", "labels: {kueue.x-k8s.io/priority-class: "+prefix+"-"+j.prio+", ", 1)
		}
		job, err := create(t, dyn, y)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, job)
		time.Sleep(1100 * time.Millisecond)
	}
	workloads := waitWorkloads(t, dyn, ns, jobs)

	// kubectl-gang, on the snapshot with the LocalQueue going.
	said := map[string]*v1alpha1.Kueue{}
	for name, l := range linesGoing(t, ns) {
		said[strings.TrimPrefix(name, "workloads.kueue.x-k8s.io/")] = l.Kueue
	}

	// Kueue, with the LocalQueue going.
	releaseQueue(t, dyn, ns)
	for i, job := range jobs {
		real, err := sc.settle(t, dyn, job)
		if err != nil {
			t.Fatal(err)
		}
		name := workloads[job.GetUID()]
		k := said[name]
		t.Logf("Kueue: j%d (%s): %s", i, name, real)
		switch {
		case k == nil:
			t.Errorf("j%d: Workload %s is not in kubectl-gang's queue view", i, name)
		case k.Admitted != real.admitted:
			t.Errorf("j%d: admitted: kubectl-gang %v (%s), Kueue %v (%s)", i, k.Admitted, k.Message, real.admitted, real.message)
		case real.admitted && !equalFlavors(k.Flavors, real.flavors):
			t.Errorf("j%d: flavors: kubectl-gang %v, Kueue %v", i, k.Flavors, real.flavors)
		}
	}
}

// heldBed is the test bed of one held-queue test: namespace prefix, the
// objects given (%[1]s is the prefix), a LocalQueue team of ClusterQueue
// <prefix>-cq stopped (stopPolicy Hold) and nodes GPU nodes labelled for
// flavor <prefix>-a; it returns once Kueue has the ClusterQueue.
func heldBed(t *testing.T, prefix string, nodes int, objects ...string) (dynamic.Interface, *scenario) {
	t.Helper()
	var docs []string
	for _, o := range objects {
		docs = append(docs, fmt.Sprintf(o, prefix))
	}
	docs = append(docs, fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: team, namespace: %s}\nspec: {clusterQueue: %s-cq, stopPolicy: Hold}\n", prefix, prefix))
	dyn := bed(t, prefix, docs...)
	for i := range nodes {
		node := testutil.MakeNode().Name(fmt.Sprintf("%s-%d", prefix, i)).Label("qv", prefix+"-a").
			Capacity(testutil.Res{"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "8", "pods": "110"}).Obj()
		if err := env.CreateNode(t.Context(), node); err != nil {
			t.Fatal(err)
		}
	}
	sc := &scenario{ns: prefix, cqs: []string{prefix + "-cq"}}
	if err := sc.waitQueuesActive(t, dyn); err != nil {
		t.Fatal(err)
	}
	return dyn, sc
}

// linesGoing are explain's queue lines in namespace ns, by name, on a live
// snapshot with the LocalQueue team set going (snapshotGoing), each logged.
func linesGoing(t *testing.T, ns string) map[string]v1alpha1.PendingItem {
	t.Helper()
	file := snapshotGoing(t, ns)
	code, out, stderr := run(t, "explain", "-n", ns, "--snapshot", file, "-o", "json")
	var list v1alpha1.PendingList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("explain exit %d: %v\n%s%s", code, err, out, stderr)
	}
	said := map[string]v1alpha1.PendingItem{}
	for _, l := range list.Items {
		said[l.Name] = l
		t.Logf("kubectl-gang: %s %s: %s", l.Name, l.Verdict, l.Reason)
	}
	return said
}

// releaseQueue sets the real LocalQueue team of ns going.
func releaseQueue(t *testing.T, dyn dynamic.Interface, ns string) {
	t.Helper()
	if _, err := dyn.Resource(kueueGVR("localqueues")).Namespace(ns).Patch(t.Context(), "team", types.MergePatchType, []byte(`{"spec":{"stopPolicy":"None"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitWorkloads waits for Kueue's Workload of each Job and returns their
// names by the Job's UID.
func waitWorkloads(t *testing.T, dyn dynamic.Interface, ns string, jobs []*unstructured.Unstructured) map[types.UID]string {
	t.Helper()
	out := map[types.UID]string{}
	deadline := time.Now().Add(30 * time.Second)
	for len(out) < len(jobs) {
		if time.Now().After(deadline) {
			t.Fatalf("Kueue made %d of %d Workloads in 30s", len(out), len(jobs))
		}
		list, err := dyn.Resource(gvrWorkload).Namespace(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range list.Items {
			for _, o := range w.GetOwnerReferences() {
				out[o.UID] = w.GetName()
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return out
}

// snapshotGoing writes a live snapshot with namespace ns's LocalQueue
// "team" set going (its stopPolicy removed), as it will be.
func snapshotGoing(t *testing.T, ns string) string {
	t.Helper()
	code, out, stderr := run(t, "snapshot", "-o", "json")
	if code != 0 {
		t.Fatalf("snapshot: exit %d %s", code, stderr)
	}
	var list unstructured.UnstructuredList
	if err := list.UnmarshalJSON([]byte(out)); err != nil {
		t.Fatal(err)
	}
	found := false
	for i := range list.Items {
		u := &list.Items[i]
		if u.GetKind() == "LocalQueue" && u.GetNamespace() == ns && u.GetName() == "team" {
			unstructured.RemoveNestedField(u.Object, "spec", "stopPolicy")
			unstructured.RemoveNestedField(u.Object, "status")
			found = true
		}
	}
	if !found {
		t.Fatalf("the snapshot holds no LocalQueue %s/team", ns)
	}
	data, err := list.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "snapshot.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestBorrowingLimitFixLetsKueueAdmit: a ClusterQueue that may borrow 2
// GPUs of the 8 its cohort lends; a Job asking 4 waits. explain's first
// fix raises the borrowingLimit to 4; made on the real ClusterQueue, Kueue
// admits the Job.
func TestBorrowingLimitFixLetsKueueAdmit(t *testing.T) {
	ctx := t.Context()
	ns := "blfix"
	dyn := bed(t, ns, flavor("bl-a"), `apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bl-research}
spec: {cohortName: bl-co, namespaceSelector: {}, resourceGroups: [{coveredResources: [cpu, nvidia.com/gpu], flavors: [{name: bl-a, resources: [{name: cpu, nominalQuota: 64}, {name: nvidia.com/gpu, nominalQuota: 0, borrowingLimit: 2}]}]}]}
`, clusterQueue("bl-lender", "BestEffortFIFO", "bl-co", map[string]int{"bl-a": 8}),
		fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: team, namespace: %s}\nspec: {clusterQueue: bl-research}\n", ns))
	sc := &scenario{ns: ns, cqs: []string{"bl-research", "bl-lender"}}
	if err := sc.waitQueuesActive(t, dyn); err != nil {
		t.Fatal(err)
	}
	node := testutil.MakeNode().Name("bl-0").Label("qv", "bl-a").
		Capacity(testutil.Res{"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "8", "pods": "110"}).Obj()
	if err := env.CreateNode(ctx, node); err != nil {
		t.Fatal(err)
	}
	job, err := create(t, dyn, gpuJob(ns, "train", "team", 1, 4, ""))
	if err != nil {
		t.Fatal(err)
	}
	if o, err := sc.settle(t, dyn, job); err != nil || o.admitted {
		t.Fatalf("Kueue: %v %v; want the Job not admitted", o, err)
	}
	code, out, stderr := run(t, "explain", "job/train", "-n", ns, "-o", "jsonpath={.suggestions[0].verified} {.suggestions[0].message}")
	if want := "true raising ClusterQueue bl-research's borrowingLimit in flavor bl-a (its cohort has the quota free): nvidia.com/gpu from 2 to 4 (by 2): then Kueue admits it"; code != 3 || !strings.HasPrefix(out, want) {
		t.Fatalf("explain job/train: exit %d %q %s\nwant prefix %q", code, out, stderr, want)
	}
	if _, err := dyn.Resource(kueueGVR("clusterqueues")).Patch(ctx, "bl-research", types.JSONPatchType,
		[]byte(`[{"op": "replace", "path": "/spec/resourceGroups/0/flavors/0/resources/1/borrowingLimit", "value": "4"}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if !admittedWithin(t, dyn, ns, job, 30*time.Second) {
		t.Fatal("with the borrowingLimit raised as explain says, Kueue did not admit the Job in 30s")
	}
}
