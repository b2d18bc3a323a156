package workload_test

import (
	"strings"
	"testing"

	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

const (
	elasticRayHead  = "  headGroupSpec:\n    rayStartParams: {}\n    template: {spec: {containers: [{name: ray-head, image: i}]}}\n"
	elasticRayGroup = "  workerGroupSpecs:\n  - groupName: gpu\n    replicas: 4\n    minReplicas: 1\n    maxReplicas: 4\n    template: {spec: {containers: [{name: w, image: i}]}}\n"
	vcTasks         = "  tasks:\n  - name: worker\n    replicas: 4\n    template: {spec: {containers: [{name: c, image: i}]}}\n"
	jobsetYML       = `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  replicatedJobs:
  - name: w
    replicas: 2
    template: {spec: {parallelism: 2, completions: 2, template: {spec: {restartPolicy: Never, containers: [{name: c, image: i}]}}}}
`
	lwsYML = `apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: l}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 2
    workerTemplate: {spec: {containers: [{name: c, image: i}]}}
`
)

// What each workload says of running with fewer members (issue #27's
// torchrun row): the gang's Elasticity, read from the workload itself.
func TestElasticity(t *testing.T) {
	tests := []struct {
		name, yaml string
		// want: nil elasticity (unknown), else elastic and the fewest pods.
		unknown bool
		elastic bool
		min     int32
		why     string
	}{
		{name: "PyTorchJob without an elastic policy", yaml: pytorchJob("    Master:\n" + kfContainer + "    Worker:\n      replicas: 8\n" + kfContainer),
			min: 9, why: `PyTorchJob "t" has no spec.elasticPolicy: torchrun's world size is its 8 worker(s)`},
		{name: "PyTorchJob with minAvailable but no elastic policy", yaml: pytorchJob("    Worker:\n      replicas: 8\n"+kfContainer) +
			"  runPolicy: {schedulingPolicy: {minAvailable: 4}}\n", min: 8, why: "has no spec.elasticPolicy"},
		{name: "elastic PyTorchJob", yaml: pytorchJob("    Worker:\n      replicas: 8\n"+kfContainer) + "  elasticPolicy: {minReplicas: 2, maxReplicas: 8}\n",
			elastic: true, min: 2, why: `PyTorchJob "t" is elastic: spec.elasticPolicy.minReplicas 2 of its 8 worker(s)`},
		{name: "PyTorchJob whose elastic policy gives only maxReplicas", yaml: pytorchJob("    Worker:\n      replicas: 8\n"+kfContainer) +
			"  elasticPolicy: {maxReplicas: 8}\n", min: 8, why: "spec.elasticPolicy.minReplicas 8, every one of its 8 worker(s)"},
		{name: "PyTorchJob with an empty elastic policy", yaml: pytorchJob("    Worker:\n      replicas: 3\n"+kfContainer) + "  elasticPolicy: {}\n",
			min: 3, why: "minReplicas 3, every one"},
		{name: "TFJob with minAvailable below its pods", yaml: "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: tf}\nspec:\n  runPolicy: {schedulingPolicy: {minAvailable: 3}}\n  tfReplicaSpecs:\n    Worker:\n      replicas: 4\n      template: {spec: {containers: [{name: tensorflow, image: i}]}}\n",
			elastic: true, min: 3, why: `TFJob "tf" runs with 3 of its 4 pod(s) by design (spec.runPolicy.schedulingPolicy.minAvailable)`},
		{name: "MPIJob", yaml: mpiJobManifest("v2beta1", "  mpiReplicaSpecs:\n"+mpiLauncher+"    Worker:\n      replicas: 2\n      template: {spec: {containers: [{name: w, image: i}]}}\n"),
			min: 3, why: "is an MPI job"},
		{name: "RayCluster with in-tree autoscaling", yaml: "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: r}\nspec:\n  enableInTreeAutoscaling: true\n" + elasticRayHead + elasticRayGroup,
			elastic: true, min: 2, why: `RayCluster "r" autoscales (enableInTreeAutoscaling): it runs with 2 of its 5 pod(s)`},
		{name: "RayCluster without autoscaling", yaml: "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: r}\nspec:\n" + elasticRayHead + elasticRayGroup,
			min: 5, why: "keeps every worker group's replicas"},
		{name: "Volcano Job with minAvailable below its replicas", yaml: "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: v}\nspec:\n  minAvailable: 2\n" + vcTasks,
			elastic: true, min: 2, why: `Job "v" runs with 2 of its 4 pod(s) by design (spec.minAvailable)`},
		{name: "Volcano Job of every replica", yaml: "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: v}\nspec:\n" + vcTasks,
			min: 4, why: "sets no minimum below its 4 pod(s)"},
		{name: "JobSet", yaml: jobsetYML, min: 4, why: `JobSet "js" runs every pod of every Job it replicates (4)`},
		{name: "LeaderWorkerSet", yaml: lwsYML, min: 4, why: "has groups of a fixed size"},
		{name: "a batch Job says nothing", yaml: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: b}\nspec:\n  parallelism: 2\n  template: {spec: {restartPolicy: Never, containers: [{name: c, image: i}]}}\n",
			unknown: true},
		{name: "two workloads add up", yaml: pytorchJob("    Worker:\n      replicas: 8\n"+kfContainer) + "  elasticPolicy: {minReplicas: 2, maxReplicas: 8}\n---\n" + jobsetYML,
			elastic: true, min: 6, why: "; JobSet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := workload.Decode([]byte(tt.yaml), "w.yaml")
			if err != nil {
				t.Fatal(err)
			}
			g, err := workload.FromManifests(objs, "ml", 0)
			if err != nil {
				t.Fatal(err)
			}
			e := g.Elasticity
			if tt.unknown {
				if e != nil {
					t.Errorf("elasticity %+v, want none known", e)
				}
				return
			}
			if e == nil {
				t.Fatal("no elasticity")
			}
			if e.Elastic != tt.elastic || e.Min != tt.min || !strings.Contains(e.Reason(), tt.why) {
				t.Errorf("elastic %v, min %d, why %q; want %v, %d, %q", e.Elastic, e.Min, e.Reason(), tt.elastic, tt.min, tt.why)
			}
		})
	}
}
