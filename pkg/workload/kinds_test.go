package workload_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

// Every workload a verb reads from the cluster is one -f expands, at the
// version its resource names; the kinds only -f carries are not listed.
func TestKindsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range workload.Kinds {
		if len(k.Names) == 0 || k.Resource.Resource == "" {
			t.Errorf("%s: a live kind needs names and a resource", k.Kind)
		}
		for _, n := range k.Names {
			if seen[n] {
				t.Errorf("%s: name %q is taken by another kind", k.Kind, n)
			}
			seen[n] = true
		}
		obj := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x"}}}
		obj.SetGroupVersionKind(k.Resource.GroupVersion().WithKind(k.Kind))
		_, err := workload.FromManifests([]*unstructured.Unstructured{obj}, "ml", 0)
		if err != nil && strings.Contains(err.Error(), "is not supported with -f") {
			t.Errorf("%s: the table lists it live, but -f refuses it: %v", k.Qualified(), err)
		}
	}
	for _, n := range []string{"pod", "podgroup", "trainingruntime", "resourceclaim"} {
		if seen[n] {
			t.Errorf("%s is listed as a live workload", n)
		}
	}
}

// An unknown kind is refused with the list of what -f takes, made from the
// table.
func TestUnsupportedKind(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"}}}
	_, err := workload.FromManifests([]*unstructured.Unstructured{obj}, "ml", 0)
	testutil.CheckErr(t, err, `Widget "w": kind Widget of example.com/v1 is not supported with -f; give Pods, a PodGroup, Jobs, `+
		`Deployments, ReplicaSets, StatefulSets, Volcano Jobs, JobSets, LeaderWorkerSets, Kubeflow training jobs (PyTorchJob, TFJob, `+
		`XGBoostJob, PaddleJob, JAXJob, MPIJob), RayClusters, RayJobs or Kubeflow Trainer TrainJobs (with their `+
		`ClusterTrainingRuntime or TrainingRuntime), and the ResourceClaimTemplates and ResourceClaims (resource.k8s.io/v1) they use`)
}

// Sub-groups of several workloads in one file follow one rule: the same
// kind of sub-group is shared, different kinds are refused (before, a
// JobSet's replaced a LeaderWorkerSet's, or not, by file order).
func TestSubGroupsOfSeveralWorkloads(t *testing.T) {
	jobset := func(name string) string {
		return `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: ` + name + `, annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: ` + block + `}}
spec:
  replicatedJobs:
  - name: w
    replicas: 2
    template:
      spec:
        parallelism: 2
        completions: 2
        template:
          spec: {containers: [{name: c, image: c}]}
`
	}
	g := whatIf(t, []byte(jobset("a")+"---\n"+jobset("b")), "two.yaml", nil)
	if g.SubGroups == nil || g.SubGroups.Unit != "child Job" || len(g.Members) != 8 {
		t.Fatalf("two exclusive JobSets: sub-groups %+v, %d members", g.SubGroups, len(g.Members))
	}
	lwsYAML := lws(1, 2, "", "")
	for _, order := range [][2]string{{jobset("a"), lwsYAML}, {lwsYAML, jobset("a")}} {
		objs, err := workload.Decode([]byte(order[0]+"---\n"+order[1]), "mixed.yaml")
		if err != nil {
			t.Fatal(err)
		}
		_, err = workload.FromManifests(objs, "ml", 0)
		if err == nil || !strings.Contains(err.Error(), "place their pods in sub-groups of different kinds") {
			t.Errorf("a JobSet and a LeaderWorkerSet: got %v, want a refusal whatever the order", err)
		}
	}
}
