package conformance

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
)

// TestCapacityAgainstKubeScheduler: capacity counts 2 copies of a native
// gang of two 3-cpu members on 5 nodes of 4 cpus (the third copy finds
// one node for two members). Then three such gangs are created and
// released together, and kube-scheduler (GenericWorkload on) starts
// exactly as many as the count said: two bound whole, the third bound
// not at all.
func TestCapacityAgainstKubeScheduler(t *testing.T) {
	var nodes []*corev1.Node
	for i := range 5 {
		nodes = append(nodes, testutil.MakeNode().Name(fmt.Sprintf("cap-%d", i)).Capacity(testutil.Res{"cpu": "4", "memory": "16Gi", "pods": "110"}).Obj())
	}
	b := newNativeBed(t, "capacity", nodes...)
	groups := []string{"c1", "c2", "c3"}
	for _, g := range groups {
		b.podGroup(g, 2, "", false)
		b.create(b.member(g+"-0", g, "3").Obj(), b.member(g+"-1", g, "3").Obj())
	}
	var c v1alpha1.Capacity
	if code := b.gangCLI(&c, "capacity", "podgroup/c1", "--holes=false"); code != cmd.ExitOK || len(c.Items) != 1 {
		t.Fatalf("capacity: exit %d, %+v", code, c)
	}
	count := c.Items[0]
	if count.Copies != 2 || !count.Verified {
		t.Fatalf("capacity podgroup/c1: %+v; want 2 copies", count)
	}

	b.release()
	started := 0
	for _, g := range groups {
		bound, failures := b.kubeOutcome(g, 2)
		switch bound {
		case 2:
			started++
		case 0:
		default:
			t.Errorf("kube-scheduler bound %d of gang %s's 2 members (%q)", bound, g, failures)
		}
	}
	if started != int(count.Copies) {
		t.Errorf("kube-scheduler started %d of the 3 gangs; capacity said %d copies fit", started, count.Copies)
	}
}
