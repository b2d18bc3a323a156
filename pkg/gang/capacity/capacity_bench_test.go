package capacity

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// BenchmarkCapacity64 counts the copies of a 64-member gang of 6 GPUs each
// on the benchmarks' 5,120 nodes (6 GPUs free each): 80 copies, the 81st
// stopped. Target (issue #28): the whole command at most 2x loading the
// snapshot; here, the count alone: a full cycle for the first copy, the
// class store's incremental cycles for the others.
func BenchmarkCapacity64(b *testing.B) {
	snap := benchCluster()
	g := benchGang(64, "6")
	s, err := schedule.NewScheduler(snap, schedule.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		c, err := Count(context.Background(), snap, s, g, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if c.Copies != 80 {
			b.Fatalf("%d copies, want 80: %s", c.Copies, c.Reason)
		}
	}
}

func benchCluster() *schedule.Snapshot {
	nodes, pods := testutil.BlockCluster()
	return &schedule.Snapshot{Nodes: nodes, Pods: pods}
}

func benchGang(n int, gpus string) *gang.Gang {
	return gangOf(int32(n), testutil.GPUWorkers(n, gpus))
}

func gangOf(min int32, members []*corev1.Pod) *gang.Gang {
	return &gang.Gang{Source: gang.SourceNative, Namespace: "ml", Name: "train", MinMember: min, Members: members}
}

const zoneKey = corev1.LabelTopologyZone
