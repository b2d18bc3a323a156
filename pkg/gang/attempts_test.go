package gang

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// Placing the same members again through the attempts kept from a first
// placement on the same scheduler (explain's lower minimum) gives what a
// placement from scratch gives, for every minimum, with a required or a
// preferred topology key or none, with gated members, and makes no attempt
// of its own; members that are other objects (a what-if that changed them)
// make their own.
func TestAttemptsShareAPlacement(t *testing.T) {
	// zone-a has 3 free GPU nodes, zone-b 2, zone-c 1 (its other node busy):
	// 8 members of 8 GPUs fit 6 at most, 3 in one zone.
	nodes := append(append(testutil.GPUNodes("zone-a", 3), testutil.GPUNodes("zone-b", 2)...), testutil.GPUNodes("zone-c", 2)...)
	busy := testutil.MakePod().Namespace("other").Name("busy").Node(nodes[len(nodes)-1].Name).Req(testutil.Res{"nvidia.com/gpu": "8"}).Obj()
	snap := &schedule.Snapshot{Nodes: nodes, Pods: []*corev1.Pod{busy}}
	base, err := schedule.NewScheduler(snap, schedule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	members := testutil.GPUWorkers(8, "8")
	members[2].Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/hold"}}
	ctx := context.Background()
	compare := cmp.Options{cmpopts.IgnoreUnexported(schedule.Result{}), cmpopts.EquateEmpty()}
	for _, opts := range []PlaceOptions{{}, {TopologyKey: zoneKey}, {PreferredTopologyKey: zoneKey}} {
		for _, first := range []int32{8, 5} {
			for lower := int32(1); lower <= 8; lower++ {
				t.Run(fmt.Sprintf("key %q preferred %q min %d then %d", opts.TopologyKey, opts.PreferredTopologyKey, first, lower), func(t *testing.T) {
					shared := opts
					shared.Attempts = NewAttempts(base)
					if _, err := PlaceOn(ctx, snap, base, gangOf(first, members), shared); err != nil {
						t.Fatal(err)
					}
					made := shared.Attempts.count()
					got, err := PlaceOn(ctx, snap, base, gangOf(lower, members), shared)
					if err != nil {
						t.Fatal(err)
					}
					want, err := PlaceOn(ctx, snap, base, gangOf(lower, members), opts)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(want, got, compare); diff != "" {
						t.Errorf("placement through the kept attempts differs (-fresh +shared):\n%s", diff)
					}
					// Domains the first placement skipped (too little room
					// for its minimum) may be tried for the lower one.
					if extra := shared.Attempts.count() - made; extra > 0 && opts.TopologyKey == "" && opts.PreferredTopologyKey == "" {
						t.Errorf("the second placement made %d attempt(s) of its own", extra)
					}
				})
			}
		}
	}

	// Other member objects (equal, not the same) are placed afresh.
	shared := PlaceOptions{Attempts: NewAttempts(base)}
	if _, err := PlaceOn(ctx, snap, base, gangOf(8, members), shared); err != nil {
		t.Fatal(err)
	}
	made := shared.Attempts.count()
	if _, err := PlaceOn(ctx, snap, base, gangOf(8, testutil.GPUWorkers(8, "8")), shared); err != nil {
		t.Fatal(err)
	}
	if shared.Attempts.count() != made+1 {
		t.Errorf("attempts %d after placing other member objects, want %d", shared.Attempts.count(), made+1)
	}
}

// count is how many attempts are kept.
func (c *Attempts) count() int {
	n := 0
	for _, m := range c.made {
		n += len(m)
	}
	return n
}
