package integration

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
)

// TestGangCapacityLive counts copies of live subjects read from the real
// API server: a native PodGroup of two whole-node members, one of them
// running, and a pending pod of no gang, on 6 nodes. The running member
// holds n0; the copies are new submissions, so 5 free nodes hold 2 copies
// of the gang (the third finds one node for two members) and, counted on
// the same cluster on their own, 5 copies of the pod.
func TestGangCapacityLive(t *testing.T) {
	f := newGangFixture(t, "capacity")
	n := f.nodes(6)
	f.nativePodGroup("train", 2)
	f.create(f.pod("train-0", wholeNode).PodGroup("train").Node(n[0]).Obj())
	f.create(f.pod("train-1", wholeNode).PodGroup("train").Obj())
	f.create(f.pod("solo", wholeNode).Obj())

	code, out, stderr := f.run("capacity", "podgroup/train", "pod/solo", "-o", "json")
	if code != cmd.ExitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var c v1alpha1.Capacity
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Items) != 2 {
		t.Fatalf("items %+v, want 2", c.Items)
	}
	train, solo := c.Items[0], c.Items[1]
	if train.Name != "podgroup/train" || train.Copies != 2 || !train.Verified || !strings.Contains(train.StoppedBy, "Insufficient nvidia.com/gpu") {
		t.Errorf("podgroup/train: %+v; want 2 copies, the third stopped by Insufficient nvidia.com/gpu", train)
	}
	if train.Gang == nil || train.Gang.Source != "scheduling.k8s.io" || train.Gang.Name != "train" {
		t.Errorf("podgroup/train's gang %+v", train.Gang)
	}
	if solo.Name != "pod/solo" || solo.Copies != 5 || !solo.Verified {
		t.Errorf("pod/solo: %+v; want 5 copies", solo)
	}
	// The chart counts the fixture's 6 nodes among the cluster's: 1 full, 5 with 8 free.
	if c.Holes == nil || len(c.Holes.Resources) == 0 || c.Holes.Resources[0].Resource != "nvidia.com/gpu" {
		t.Errorf("holes %+v, want nvidia.com/gpu charted", c.Holes)
	}
}
