package kueue_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/internal/clustergen"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/capacity"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/snapshot"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

// kueueCluster writes issue #39's benchmark shape: 5,000 GPU nodes (4 of 8
// GPUs in use), 20,000 running pods, 50 ClusterQueues in cohorts of ten
// and 5,000 admitted Workloads; and a 16-pod Job of 4-GPU pods for one of
// the LocalQueues, which Kueue admits and the nodes hold.
func kueueCluster(b *testing.B) (string, []*unstructured.Unstructured) {
	b.Helper()
	o := clustergen.Default
	o.GPUNodes = o.Nodes
	var buf bytes.Buffer
	if err := clustergen.WriteList(&buf, append(clustergen.Cluster(o), clustergen.KueueObjects(o, 50, 5000)...)); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "kueue.json")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	data, err := json.Marshal(clustergen.Job(clustergen.JobOptions{Name: "train", Namespace: "ml-research", Parallelism: 16, GPUs: 4, Queue: "lq-007"}))
	if err != nil {
		b.Fatal(err)
	}
	job := &unstructured.Unstructured{}
	if err := json.Unmarshal(data, &job.Object); err != nil {
		b.Fatal(err)
	}
	return path, []*unstructured.Unstructured{job}
}

// BenchmarkLoadKueueCluster is the yardstick: loading the snapshot.
func BenchmarkLoadKueueCluster(b *testing.B) {
	path, _ := kueueCluster(b)
	for b.Loop() {
		if _, _, err := snapshot.LoadFiles(path, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlaceKueueJob loads the snapshot and places the Job as place -f
// does: Kueue's admission (the model of 50 ClusterQueues and 5,000
// Workloads built once), then the 16 pods on 5,000 nodes. The issue's
// target: at most 1.3x BenchmarkLoadKueueCluster.
func BenchmarkPlaceKueueJob(b *testing.B) {
	path, objs := kueueCluster(b)
	for b.Loop() {
		snap, _, err := snapshot.LoadFiles(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		g, err := workload.FromManifests(objs, "", 0)
		if err != nil {
			b.Fatal(err)
		}
		if g, err = workload.Create(g, snap); err != nil {
			b.Fatal(err)
		}
		p, err := gang.Place(context.Background(), snap, g, gang.PlaceOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if p.Verdict != gang.VerdictPlaced || p.Admission == nil || !p.Admission.Admitted {
			b.Fatalf("%s: %s", p.Verdict, p.Message)
		}
	}
}

// BenchmarkCapacityKueueJob counts copies of a one-pod, one-GPU Job Kueue
// admits, up to 200, on the same cluster: each copy is admitted by Kueue
// against the copies before it (a committed Workload each), so the model
// is read again a copy.
func BenchmarkCapacityKueueJob(b *testing.B) {
	path, _ := kueueCluster(b)
	data, err := json.Marshal(clustergen.Job(clustergen.JobOptions{Name: "small", Namespace: "ml-research", Parallelism: 1, GPUs: 1, Queue: "lq-007"}))
	if err != nil {
		b.Fatal(err)
	}
	job := &unstructured.Unstructured{}
	if err := json.Unmarshal(data, &job.Object); err != nil {
		b.Fatal(err)
	}
	snap, _, err := snapshot.LoadFiles(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	g, err := workload.FromManifests([]*unstructured.Unstructured{job}, "", 0)
	if err != nil {
		b.Fatal(err)
	}
	if g, err = workload.Create(g, snap); err != nil {
		b.Fatal(err)
	}
	base, err := schedule.NewScheduler(snap, schedule.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r, err := capacity.Count(context.Background(), snap, base, g, capacity.Options{Max: 200})
		if err != nil {
			b.Fatal(err)
		}
		if r.Copies != 200 {
			b.Fatalf("%d copies: %s", r.Copies, r.Reason)
		}
	}
}
