package explain

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

// Issue #27's torchrun row: 8 free 8-GPU nodes and a job of 9 8-GPU pods.
// Lowering the minimum is a plain fix only when the workload itself says it
// runs with fewer (its elasticity, read from the workload), and never below
// its elastic minimum; else it is marked as a change to the job itself.
func TestLowerMinimumFollowsTheWorkload(t *testing.T) {
	const (
		worker = "      template: {spec: {containers: [{name: pytorch, image: i, resources: {requests: {nvidia.com/gpu: 8}, limits: {nvidia.com/gpu: 8}}}]}}\n"
		torch  = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: t}\nspec:\n  pytorchReplicaSpecs:\n    Worker:\n      replicas: 9\n" + worker
		ray    = "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: r}\nspec:\n%s  headGroupSpec:\n    rayStartParams: {}\n" +
			"    template: {spec: {containers: [{name: h, image: i, resources: {requests: {nvidia.com/gpu: 8}, limits: {nvidia.com/gpu: 8}}}]}}\n" +
			"  workerGroupSpecs:\n  - groupName: g\n    replicas: 8\n    minReplicas: %s\n    maxReplicas: 8\n" +
			"    template: {spec: {containers: [{name: w, image: i, resources: {requests: {nvidia.com/gpu: 8}, limits: {nvidia.com/gpu: 8}}}]}}\n"
		volcano = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: v}\nspec:\n%s  tasks:\n  - name: w\n    replicas: 9\n" +
			"    template: {spec: {containers: [{name: c, image: i, resources: {requests: {nvidia.com/gpu: 8}, limits: {nvidia.com/gpu: 8}}}]}}\n"
		jobset = "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js}\nspec:\n  replicatedJobs:\n  - name: w\n    replicas: 1\n" +
			"    template: {spec: {parallelism: 9, completions: 9, template: {spec: {restartPolicy: Never, containers: [{name: c, image: i, resources: {requests: {nvidia.com/gpu: 8}, limits: {nvidia.com/gpu: 8}}}]}}}}\n"
	)
	tests := []struct {
		name, yaml string
		plain      bool
		words      string
	}{
		{"torchrun of fixed size", torch, false, `the job has a fixed size: PyTorchJob "t" has no spec.elasticPolicy: torchrun's world size is its 9 worker(s), and hangs with fewer, so the job itself must change to run with 8`},
		{"elastic torchrun", torch + "  elasticPolicy: {minReplicas: 4, maxReplicas: 9}\n", true, `the job is elastic down to 4 member(s): PyTorchJob "t" is elastic: spec.elasticPolicy.minReplicas 4 of its 9 worker(s)`},
		{"elastic torchrun above what fits", torch + "  elasticPolicy: {minReplicas: 9}\n", false, "has spec.elasticPolicy.minReplicas 9, every one of its 9 worker(s)"},
		{"Ray autoscaling", fmt.Sprintf(ray, "  enableInTreeAutoscaling: true\n", "2"), true, "the job is elastic down to 3 member(s)"},
		{"Ray without autoscaling", fmt.Sprintf(ray, "", "2"), false, "keeps every worker group's replicas"},
		{"Volcano Job of fewer by design", fmt.Sprintf(volcano, "  minAvailable: 4\n"), true, "runs with 4 of its 9 pod(s) by design (spec.minAvailable)"},
		{"JobSet", jobset, false, "runs every pod of every Job it replicates (9)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 8), Objects: []*unstructured.Unstructured{testutil.MakeVolcanoQueue("default").Obj()}}
			g, err := workload.WhatIf([]byte(tt.yaml), "job.yaml", snap, workload.Options{Namespace: "ml"})
			if err != nil {
				t.Fatal(err)
			}
			// The question is a minimum of every pod (9) when 8 fit; a
			// workload whose own minimum is lower asks with 9 too.
			g.MinMember = 9
			e, err := Gang(context.Background(), snap, g, Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := find(e.Suggestions, SuggestLowerMinMember)
			if s == nil {
				t.Fatalf("no lower minimum: %v", kinds(e.Suggestions))
			}
			plain := !strings.Contains(s.Message, "the job itself must change")
			if plain != tt.plain || !strings.Contains(s.Message, tt.words) {
				t.Errorf("lower minimum %q\nwant plain %v, with %q", s.Message, tt.plain, tt.words)
			}
		})
	}
}
