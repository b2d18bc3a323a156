package volcano

import (
	"context"
	"fmt"
	"testing"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// benchPlaceOn is pkg/gang's: Place of g on snap, which must place it.
func benchPlaceOn(b *testing.B, snap *schedule.Snapshot, g *gang.Gang, opts gang.PlaceOptions) {
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p, err := gang.Place(context.Background(), snap, g, opts)
		if err != nil {
			b.Fatal(err)
		}
		if p.Verdict != gang.VerdictPlaced {
			b.Fatalf("not placed: %s", p.Message)
		}
	}
}

// volcanoBench is the 5,120-node cluster with 1,000 members of 2 GPUs as a
// Volcano gang in the default queue, and 200 other Volcano groups of 8
// running members (1,600 pods) in 20 queues, so the session has queues to
// divide and jobs to read.
func volcanoBench(n int) (*schedule.Snapshot, *gang.Gang) {
	nodes, pods := testutil.BlockCluster()
	snap := &schedule.Snapshot{Nodes: nodes, Pods: pods}
	snap.Objects = append(snap.Objects, testutil.MakeVolcanoQueue("default").Obj())
	for q := range 20 {
		snap.Objects = append(snap.Objects, testutil.MakeVolcanoQueue(fmt.Sprintf("q%d", q)).Obj())
	}
	for j := range 200 {
		name := fmt.Sprintf("job-%d", j)
		snap.PodGroups = append(snap.PodGroups, testutil.MakeVolcanoPodGroup("ml", name, 8).Queue(fmt.Sprintf("q%d", j%20)).Phase("Running").Obj())
		for i := range 8 {
			node := snap.Nodes[(j*8+i)%len(snap.Nodes)]
			snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("ml").Name(fmt.Sprintf("%s-%d", name, i)).VolcanoGroup(name).
				Req(testutil.Res{"cpu": "1"}).Node(node.Name).Obj())
		}
	}
	members := testutil.GPUWorkers(n, "2")
	for _, m := range members {
		m.Annotations = map[string]string{"scheduling.k8s.io/group-name": "train"}
		m.Spec.SchedulingGroup = nil
	}
	pg := testutil.MakeVolcanoPodGroup("ml", "train", int64(n)).Obj()
	snap.PodGroups = append(snap.PodGroups, pg)
	g := &gang.Gang{Source: Source, Namespace: "ml", Name: "train", PodGroup: pg, Queue: "default", MinMember: int32(n), Members: members}
	g.SortMembers()
	return snap, g
}

// BenchmarkPlace1000Volcano is BenchmarkPlace1000 as a Volcano gang judged
// by Volcano's session (enqueue, the queue check per member, readiness)
// with kube-scheduler's profile: the session's cost beside the placement's.
func BenchmarkPlace1000Volcano(b *testing.B) {
	snap, g := volcanoBench(1000)
	benchPlaceOn(b, snap, g, gang.PlaceOptions{})
}

// BenchmarkPlace1000VolcanoNodeOrder is BenchmarkPlace1000Volcano with
// Volcano's node order (Profile, the chart's default): a
// full cycle per member.
func BenchmarkPlace1000VolcanoNodeOrder(b *testing.B) {
	snap, g := volcanoBench(1000)
	cfg, _ := ConfigOf(snap)
	benchPlaceOn(b, snap, g, gang.PlaceOptions{Profile: Profile(cfg)})
}
