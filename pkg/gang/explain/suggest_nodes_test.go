package explain

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// TestAddNodesCountAddsUp: for a gang of equal members that must all fit
// and need nothing of each other, the least count of added nodes is the
// members left over divided by an empty node's room, rounded up, and the
// suggestion takes it without proving that one node fewer does not fit
// (roomAddsUp). Checked against that count worked out here from the free
// GPUs alone, on random clusters: 8-GPU nodes partly used by other pods,
// members of 1, 2, 4 or 8 GPUs.
func TestAddNodesCountAddsUp(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 29))
		nodes := testutil.GPUNodes("zone-a", 2+rng.IntN(6))
		snap := &schedule.Snapshot{Nodes: nodes}
		gpus := []int{1, 2, 4, 8}[rng.IntN(4)]
		free := 0
		for i, n := range nodes {
			used := rng.IntN(9)
			if used > 0 {
				snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("other").Name(fmt.Sprintf("busy-%d", i)).
					Req(testutil.Res{"nvidia.com/gpu": fmt.Sprint(used)}).Node(n.Name).Phase(corev1.PodRunning).Obj())
			}
			free += (8 - used) / gpus
		}
		members := free + 1 + rng.IntN(20)
		g := gangOf(int32(members), testutil.GPUWorkers(members, fmt.Sprint(gpus)))
		x, err := newExplainer(snap, Options{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := x.placeOn(context.Background(), x.plain, snap, g)
		if err != nil {
			t.Fatal(err)
		}
		if !x.roomAddsUp(context.Background(), g, p) {
			t.Fatalf("seed %d: the room of %d equal members does not add up", seed, members)
		}
		e, err := Gang(context.Background(), snap, g, Options{})
		if err != nil {
			t.Fatal(err)
		}
		room := 8 / gpus
		want := (members - free + room - 1) / room
		add := find(e.Suggestions, SuggestAddNodes)
		if add == nil || add.NewNodes.Count != want || !add.Verified {
			t.Errorf("seed %d: %d members of %d GPUs, %d fit now: add %+v, want %d node(s)", seed, members, gpus, free, add, want)
		}
	}
	// A spread constraint that refuses makes members need each other: the
	// count is proven the long way.
	g := gangOf(3, testutil.GPUWorkers(3, "8"))
	for _, m := range g.Members {
		m.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule}}
	}
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 1)}
	x, err := newExplainer(snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := x.placeOn(context.Background(), x.plain, snap, g)
	if err != nil {
		t.Fatal(err)
	}
	if x.roomAddsUp(context.Background(), g, p) {
		t.Errorf("members with a DoNotSchedule spread constraint: the room is taken to add up")
	}

	// Nor when the profile spreads them by default (PodTopologySpread's
	// defaultConstraints, DoNotSchedule) over a Service that selects them:
	// the room of a node then depends on the others.
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - maxSkew: 1
        topologyKey: kubernetes.io/hostname
        whenUnsatisfiable: DoNotSchedule
`), 0o600); err != nil {
		t.Fatal(err)
	}
	profiles, err := schedule.LoadProfiles(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g = gangOf(3, testutil.GPUWorkers(3, "8"))
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train"}, Spec: corev1.ServiceSpec{Selector: g.Members[0].Labels}}
	if len(svc.Spec.Selector) == 0 {
		t.Fatal("the members have no labels for a Service to select")
	}
	snap = &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 1), Services: []*corev1.Service{svc}}
	if x, err = newExplainer(snap, Options{PlaceOptions: gang.PlaceOptions{Profile: profiles[0]}}); err != nil {
		t.Fatal(err)
	}
	if p, err = x.placeOn(context.Background(), x.plain, snap, g); err != nil {
		t.Fatal(err)
	}
	if x.roomAddsUp(context.Background(), g, p) {
		t.Errorf("members a default DoNotSchedule spread constraint selects: the room is taken to add up")
	}
}
