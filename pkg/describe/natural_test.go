package describe

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

func TestCompareNatural(t *testing.T) {
	got := []string{"train-10", "train-2", "train-1", "a", "train-01", "train-b", "train", "w-10-x", "w-9-y", "w-9-x", "ml/p-100", "ml/p-20"}
	slices.SortFunc(got, CompareNatural)
	want := []string{"a", "ml/p-20", "ml/p-100", "train", "train-1", "train-01", "train-2", "train-10", "train-b", "w-9-x", "w-9-y", "w-10-x"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("natural order (-want +got):\n%s", diff)
	}
	for _, p := range [][2]string{{"x1", "x01"}, {"", "a"}, {"a", "a0"}} {
		if CompareNatural(p[0], p[1]) >= 0 || CompareNatural(p[1], p[0]) <= 0 {
			t.Errorf("%q and %q: not a strict order", p[0], p[1])
		}
	}
}

// TestPlacementNaturalOrder: the plan lists members w-2 before w-10 (queue
// order, with equal creation times, takes w-10 first, by name), running
// ones first; the placement itself keeps the queue order.
func TestPlacementNaturalOrder(t *testing.T) {
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 12)}
	var members []*corev1.Pod
	for _, i := range []int{10, 2, 1, 11} {
		members = append(members, testutil.MakePod().Namespace("ml").Name(fmt.Sprintf("w-%d", i)).
			Req(testutil.Res{"nvidia.com/gpu": "8"}).Obj())
	}
	members[3].Spec.NodeName, members[3].Status.Phase = "zone-a-11", corev1.PodRunning
	g := &gang.Gang{Source: gang.SourceFile, Namespace: "ml", Name: "w", MinMember: 4, Members: members}
	g.SortMembers()
	p, err := gang.Place(context.Background(), snap, g, gang.PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Assignments[0].Pod.Name; got != "w-1" || p.Assignments[1].Pod.Name != "w-10" {
		t.Fatalf("placed %s, %s first; want queue order w-1, w-10", got, p.Assignments[1].Pod.Name)
	}
	var out bytes.Buffer
	if err := Placement(&out, p, Options{NoHeaders: true}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(out.String(), "\n")[1:] {
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	if diff := cmp.Diff([]string{"ml/w-11", "ml/w-1", "ml/w-2", "ml/w-10"}, names); diff != "" {
		t.Errorf("rows (-want +got):\n%s\n%s", diff, out.String())
	}
}
