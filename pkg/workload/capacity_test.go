package workload_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang/capacity"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// TestCapacityExclusiveJobSet: copies of an exclusive JobSet (each child
// Job alone in its zone) are JobSets of their own: their job-key labels
// and the selectors on them are renamed together, so a copy keeps out of
// the zone another copy's Job holds. One zone of 4 empty 8-GPU nodes holds
// one copy of a Job of 2 x 8 GPUs, though the nodes would hold two; two
// zones of 2 nodes hold two.
func TestCapacityExclusiveJobSet(t *testing.T) {
	count := func(nodes ...*corev1.Node) *capacity.Result {
		t.Helper()
		snap := &schedule.Snapshot{Nodes: nodes}
		g := whatIf(t, []byte(zoneJobSet(1, 2, 8, "1")), "js.yaml", nil)
		s, err := schedule.NewScheduler(snap, schedule.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := capacity.Count(context.Background(), snap, s, g, capacity.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := count(zoneNode("a-0", "a"), zoneNode("a-1", "a"), zoneNode("a-2", "a"), zoneNode("a-3", "a")); c.Copies != 1 {
		t.Errorf("one zone: %d copies, want 1 (%s)", c.Copies, c.Reason)
	}
	if c := count(zoneNode("a-0", "a"), zoneNode("a-1", "a"), zoneNode("b-0", "b"), zoneNode("b-1", "b")); c.Copies != 2 {
		t.Errorf("two zones: %d copies, want 2 (%s)", c.Copies, c.Reason)
	}
	g := whatIf(t, []byte(zoneJobSet(1, 2, 8, "1")), "js.yaml", nil)
	const key = "jobset.sigs.k8s.io/job-key"
	m, c := g.Members[0], g.Copy(2).Members[0]
	if c.Labels[key] == m.Labels[key] || c.Labels["jobset.sigs.k8s.io/jobset-name"] != "js-copy2" || c.Name != "js-copy2-w-0-0" {
		t.Errorf("copy 2's member %s: labels %v", c.Name, c.Labels)
	}
	if got := c.Spec.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchExpressions[0].Values[0]; got != c.Labels[key] {
		t.Errorf("copy 2's affinity names job-key %s, its own is %s", got, c.Labels[key])
	}
}
