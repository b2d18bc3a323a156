package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
)

const capacityShapes = "../../examples/capacity-shapes.yaml"

// TestCapacityGolden pins capacity's screens on the example cluster. The
// counts, by hand: the schedulable A100 nodes have 8 GPUs free on 1 node
// of us-east-1a and 7 of us-east-1b (the others have 4, 3, 2 or none).
// A 2 x 8-GPU shard takes two 8-free nodes a copy: 4 copies on 8 nodes;
// confined to one zone, us-east-1a holds none and us-east-1b 3 (one node
// left over). A 4 x 4-GPU finetune takes four 4-GPU slots: the 8-free
// nodes give 16, us-east-1a's two 4-free nodes 2 more: 4 copies, 2 slots
// left; in one zone, us-east-1a has 4 slots (1 copy), us-east-1b 14 (3).
func TestCapacityGolden(t *testing.T) {
	snap := []string{"--snapshot", exampleSnapshot}
	tests := []struct {
		name   string
		args   []string
		code   int
		golden string
	}{
		{"two shapes in one file, and the chart", []string{"capacity", "-f", capacityShapes}, ExitOK, "capacity-shapes.golden"},
		{"in one zone, wide", []string{"capacity", "-f", capacityShapes, "--topology-key", "topology.kubernetes.io/zone", "-o", "wide", "--holes=false"}, ExitOK, "capacity-shapes-zone-wide.golden"},
		{"json with --max", []string{"capacity", "-f", capacityShapes, "--topology-key", "topology.kubernetes.io/zone", "--max", "2", "-o", "json"}, ExitOK, "capacity-shapes-json.golden"},
		{"the chart alone", []string{"capacity"}, ExitOK, "capacity-chart.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, "", append(tt.args, snap...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, stderr)
			}
			testutil.Golden(t, filepath.Join("testdata", tt.golden), []byte(out))
		})
	}
}

// TestCapacityCounts checks the counts and the exit codes scripts read:
// a shape that fits no copy (a 16-GPU pod: no node has 16), a quota that
// refuses the first copy, several -f, and --max.
func TestCapacityCounts(t *testing.T) {
	snap := []string{"--snapshot", exampleSnapshot}
	count := func(args ...string) (int, *v1alpha1.Capacity) {
		t.Helper()
		code, out, stderr := run(t, "", append(append([]string{"capacity", "-o", "json"}, args...), snap...)...)
		var c v1alpha1.Capacity
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatalf("capacity %v: exit %d, %v; stderr %q", args, code, err, stderr)
		}
		return code, &c
	}
	code, c := count("-f", capacityShapes)
	if code != ExitOK || len(c.Items) != 2 || c.Items[0].Copies != 4 || c.Items[1].Copies != 4 || !c.Items[0].Verified {
		t.Errorf("two shapes: exit %d, items %+v", code, c.Items)
	}
	if !strings.Contains(c.Items[1].StoppedBy, "Insufficient nvidia.com/gpu") {
		t.Errorf("the shard's 5th copy is stopped by %q, want Insufficient nvidia.com/gpu", c.Items[1].StoppedBy)
	}
	// A shape that fits nothing: exit 3, whatever the others do.
	code, c = count("-n", "ml-research", "-f", "../../examples/eval-16gpu.yaml", "-f", "../../examples/finetune-job.yaml")
	if code != ExitNo || len(c.Items) != 2 || c.Items[0].Copies != 0 || c.Items[0].Verified {
		t.Errorf("a 16-GPU pod: exit %d, items %+v", code, c.Items)
	}
	// ml-research's quota has 5 GPUs left: the finetune Job's 16 are refused.
	if c.Items[1].Copies != 0 || !strings.Contains(c.Items[1].StoppedBy, "exceeded quota: research-compute") {
		t.Errorf("the quota: %+v", c.Items[1])
	}
	code, c = count("-f", capacityShapes, "--max", "3", "--holes=false")
	if code != ExitOK || !c.Items[0].AtLeast || c.Items[0].Copies != 3 || c.Holes != nil {
		t.Errorf("--max 3: exit %d, %+v", code, c)
	}
	// DRA: one pod claiming 8 devices; 4 nodes have 8 free (the chart
	// says so), each copy's claim is its own and holds its devices.
	manifest, err := os.ReadFile("../../examples/dra-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	one := strings.NewReplacer("parallelism: 5", "parallelism: 1", "completions: 5", "completions: 1").Replace(string(manifest))
	code, out, stderr := run(t, one, "capacity", "-f", "-", "-o", "json", "--snapshot", "../../examples/dra-cluster.yaml")
	var dra v1alpha1.Capacity
	if err := json.Unmarshal([]byte(out), &dra); err != nil || code != ExitOK || dra.Items[0].Copies != 4 {
		t.Errorf("DRA: exit %d, %s %v %s", code, out, err, stderr)
	} else if h := dra.Holes.Resources[0]; h.Resource != "gpu.nvidia.com devices" || h.Domains[0].Holes[0] != (v1alpha1.HoleCount{Free: 8, Nodes: 4}) {
		t.Errorf("DRA chart: %+v", h)
	}
	for _, bad := range [][]string{{"--max", "0"}, {"-f", "-", "-f", "-"}, {"-f", "nope.yaml"}, {"jobset/x"}} {
		code, _, stderr := run(t, "", append(append([]string{"capacity"}, bad...), snap...)...)
		if code != ExitUsage || strings.Count(stderr, "\n") != 1 {
			t.Errorf("capacity %v: exit %d, stderr %q; want exit 2 and one line", bad, code, stderr)
		}
	}
}
