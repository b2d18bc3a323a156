package explain

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-gang/kubectl-gang/internal/clustergen"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/snapshot"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

// scaleCluster is clustergen's default cluster (5,000 nodes, 4,000 of
// them with 8 GPUs, 4 in use, half by low-priority sweeps; 20,000 running
// pods) as a snapshot.
func scaleCluster(tb testing.TB) *schedule.Snapshot { return scaleClusterOf(clustergen.Default) }

// scaleClusterOf is a clustergen cluster as a snapshot.
func scaleClusterOf(o clustergen.Options) *schedule.Snapshot {
	snap := &schedule.Snapshot{}
	for _, obj := range clustergen.Cluster(o) {
		switch o := obj.(type) {
		case *corev1.Node:
			snap.Nodes = append(snap.Nodes, o)
		case *corev1.Pod:
			snap.Pods = append(snap.Pods, o)
		case *corev1.Namespace:
			snap.Namespaces = append(snap.Namespaces, o)
		case *schedulingv1.PriorityClass:
			snap.PriorityClasses = append(snap.PriorityClasses, o)
		}
	}
	return snap
}

// jobGang expands a clustergen Job as -f does.
func jobGang(tb testing.TB, snap *schedule.Snapshot, o clustergen.JobOptions) *gang.Gang {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(clustergen.Job(o))
	if err != nil {
		tb.Fatal(err)
	}
	g, err := workload.FromManifests([]*unstructured.Unstructured{{Object: m}}, o.Namespace, 0)
	if err != nil {
		tb.Fatal(err)
	}
	if err := workload.ApplyPriorities(g.Members, snap.PriorityClasses); err != nil {
		tb.Fatal(err)
	}
	g.SortMembers()
	return g
}

// BenchmarkExplain1000IndexedDoesNotFit explains an Indexed Job of 1,000
// 8-GPU pods on the 5,000-node cluster, where no node has 8 GPUs free: the
// node table, the shortfall, preemption of the low-priority sweeps, added
// nodes and a lower minimum. Target: at most 3x loading the snapshot.
func BenchmarkExplain1000IndexedDoesNotFit(b *testing.B) {
	snap := scaleCluster(b)
	g := jobGang(b, snap, clustergen.JobOptions{Name: "big", Namespace: "ml-research", Parallelism: 1000, GPUs: 8, Indexed: true})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e, err := Gang(context.Background(), snap, g, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if e.Verdict != VerdictUnschedulable {
			b.Fatalf("%s: %s", e.Verdict, e.Message)
		}
	}
}

// BenchmarkQueue200Gangs simulates the queue of 200 pending gangs and pods
// of mixed shapes and priorities (clustergen.PendingGangs) on a 5,000-node
// cluster of 8-GPU nodes with 4 GPUs in use. Target (issue #28): at most 3x
// loading the snapshot (whole commands: README "Performance"). Entries of a
// shape placed before take its class from the state's ClassStore.
func BenchmarkQueue200Gangs(b *testing.B) {
	o := clustergen.Default
	o.GPUNodes = o.Nodes
	snap := scaleClusterOf(o)
	for _, obj := range clustergen.PendingGangs(o, 200) {
		switch v := obj.(type) {
		case *corev1.Pod:
			snap.Pods = append(snap.Pods, v)
		case map[string]any:
			snap.PodGroups = append(snap.PodGroups, &unstructured.Unstructured{Object: v})
		}
	}
	snap.Sort()
	p, err := schedule.DefaultProfile()
	if err != nil {
		b.Fatal(err)
	}
	q := QueueOptions{PlaceFor: func(gang.Source, []*corev1.Pod) (gang.PlaceOptions, string) { return gang.PlaceOptions{Profile: p}, "" }}
	b.ResetTimer()
	for b.Loop() {
		lines, err := ListPending(context.Background(), snap, "", q)
		if err != nil {
			b.Fatal(err)
		}
		if len(lines) != 200 {
			b.Fatalf("%d lines, want 200", len(lines))
		}
	}
}

// BenchmarkQueueKueue500 simulates the queue of issue #39's Kueue shape
// (clustergen.KueueQueue: 5,000 GPU nodes, 50 ClusterQueues in cohorts of
// ten, 5,000 admitted Workloads) with 500 Workloads Kueue holds with no
// pods, 1-8 pods of 1-8 GPUs, most waiting for quota: each decided by
// Kueue on what those ahead left, the admitted ones placed. Target (issue
// #39): the whole command at most 3x loading the snapshot.
func BenchmarkQueueKueue500(b *testing.B) {
	o := clustergen.Default
	o.GPUNodes = o.Nodes
	var buf bytes.Buffer
	if err := clustergen.WriteList(&buf, append(clustergen.Cluster(o), clustergen.KueueQueue(o, 50, 5000, 500)...)); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "kueue500.json")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	snap, _, err := snapshot.LoadFiles(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	p, err := schedule.DefaultProfile()
	if err != nil {
		b.Fatal(err)
	}
	q := QueueOptions{PlaceFor: func(gang.Source, []*corev1.Pod) (gang.PlaceOptions, string) { return gang.PlaceOptions{Profile: p}, "" }}
	b.ResetTimer()
	for b.Loop() {
		lines, err := ListPending(context.Background(), snap, "", q)
		if err != nil {
			b.Fatal(err)
		}
		if len(lines) != 500 {
			b.Fatalf("%d lines, want 500", len(lines))
		}
	}
}
