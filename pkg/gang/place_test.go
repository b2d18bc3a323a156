package gang

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

const zoneKey = corev1.LabelTopologyZone

func gangOf(min int32, members []*corev1.Pod) *Gang {
	return &Gang{Source: SourceNative, Namespace: "ml", Name: "train", MinMember: min, Members: members}
}

func assignments(p *Placement) []string {
	var out []string
	for _, a := range p.Assignments {
		out = append(out, a.Pod.Name+"->"+a.Node)
	}
	return out
}

func TestPlace(t *testing.T) {
	// A busy node in zone-a holds 4 GPUs; zone-b is idle.
	busy := testutil.MakePod().Namespace("other").Name("busy").Node("zone-a-0").Req(testutil.Res{"nvidia.com/gpu": "4"}).Obj()
	antiAffinity := func(pods []*corev1.Pod) []*corev1.Pod {
		for _, p := range pods {
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "train"}},
					TopologyKey:   corev1.LabelHostname,
				}},
			}}
		}
		return pods
	}
	running := testutil.GPUWorkers(3, "8")
	running[0].Spec.NodeName, running[0].Status.Phase = "zone-b-0", corev1.PodRunning

	tests := []struct {
		name            string
		nodes           []*corev1.Node
		pods            []*corev1.Pod
		gang            *Gang
		opts            PlaceOptions
		wantVerdict     Verdict
		wantAssignments []string
		wantMax         int32
		wantDomain      string
		wantMessage     string // substring
	}{
		{
			// zone-a-0 has only 4 free GPUs, so 8-GPU members need the other nodes.
			name:  "fits: members compete with each other for the GPUs",
			nodes: append(testutil.GPUNodes("zone-a", 2), testutil.GPUNodes("zone-b", 2)...), pods: []*corev1.Pod{busy},
			gang:            gangOf(3, testutil.GPUWorkers(3, "8")),
			wantVerdict:     VerdictPlaced,
			wantAssignments: []string{"w-0->zone-a-1", "w-1->zone-b-0", "w-2->zone-b-1"},
			wantMax:         3,
		},
		{
			name:  "one member short: nothing is placed, the blocker says why",
			nodes: append(testutil.GPUNodes("zone-a", 2), testutil.GPUNodes("zone-b", 2)...), pods: []*corev1.Pod{busy},
			gang:        gangOf(4, testutil.GPUWorkers(4, "8")),
			wantVerdict: VerdictUnschedulable,
			wantMax:     3,
			wantMessage: "at most 3 of minimum 4 member(s) run or fit at once; ml/w-3: 0/4 nodes are available: 4 Insufficient nvidia.com/gpu.",
		},
		{
			name:  "required zone: only zone-b holds all three",
			nodes: append(testutil.GPUNodes("zone-a", 2), testutil.GPUNodes("zone-b", 3)...), pods: []*corev1.Pod{busy},
			gang:            gangOf(3, testutil.GPUWorkers(3, "8")),
			opts:            PlaceOptions{TopologyKey: zoneKey},
			wantVerdict:     VerdictPlaced,
			wantAssignments: []string{"w-0->zone-b-0", "w-1->zone-b-1", "w-2->zone-b-2"},
			wantMax:         3,
			wantDomain:      "zone-b",
		},
		{
			name:        "required zone: no zone holds the gang, though the cluster would",
			nodes:       append(testutil.GPUNodes("zone-a", 2), testutil.GPUNodes("zone-b", 2)...),
			gang:        gangOf(3, testutil.GPUWorkers(3, "8")),
			opts:        PlaceOptions{TopologyKey: zoneKey},
			wantVerdict: VerdictUnschedulable,
			wantMax:     2,
			wantMessage: "at most 2 of minimum 3 member(s) run or fit at once in one topology.kubernetes.io/zone (best: zone-a)",
		},
		{
			name:            "preferred zone falls back to the whole cluster",
			nodes:           append(testutil.GPUNodes("zone-a", 2), testutil.GPUNodes("zone-b", 2)...),
			gang:            gangOf(3, testutil.GPUWorkers(3, "8")),
			opts:            PlaceOptions{PreferredTopologyKey: zoneKey},
			wantVerdict:     VerdictPlaced,
			wantAssignments: []string{"w-0->zone-a-0", "w-1->zone-a-1", "w-2->zone-b-0"},
			wantMax:         3,
			wantMessage:     "; no one topology.kubernetes.io/zone holds the minimum 3 (the most is 2, in zone-a), so the members spread over the cluster",
		},
		{
			name:            "preferred zone met: all in one zone, no note",
			nodes:           append(testutil.GPUNodes("zone-a", 2), testutil.GPUNodes("zone-b", 3)...),
			gang:            gangOf(3, testutil.GPUWorkers(3, "8")),
			opts:            PlaceOptions{PreferredTopologyKey: zoneKey},
			wantVerdict:     VerdictPlaced,
			wantAssignments: []string{"w-0->zone-b-0", "w-1->zone-b-1", "w-2->zone-b-2"},
			wantMax:         3,
			wantDomain:      "zone-b",
			wantMessage:     "gang ml/train placed: 0 running and 3 to place, minimum 3, all in topology.kubernetes.io/zone=zone-b",
		},
		{
			name:        "preferred zone not met and the cluster too small: the whole cluster was tried",
			nodes:       append(testutil.GPUNodes("zone-a", 1), testutil.GPUNodes("zone-b", 1)...),
			gang:        gangOf(3, testutil.GPUWorkers(3, "8")),
			opts:        PlaceOptions{PreferredTopologyKey: zoneKey},
			wantVerdict: VerdictUnschedulable,
			wantMax:     2,
			wantMessage: "at most 2 of minimum 3 member(s) run or fit at once; no one topology.kubernetes.io/zone holds the minimum 3 (the most is 1, in zone-a), so the whole cluster was tried; ml/w-2",
		},
		{
			name:            "tightest fit: the zone left with less free room wins",
			nodes:           append(testutil.GPUNodes("zone-a", 2), testutil.GPUNodes("zone-b", 4)...),
			gang:            gangOf(2, testutil.GPUWorkers(2, "8")),
			opts:            PlaceOptions{TopologyKey: zoneKey},
			wantVerdict:     VerdictPlaced,
			wantAssignments: []string{"w-0->zone-a-0", "w-1->zone-a-1"},
			wantMax:         2,
			wantDomain:      "zone-a",
		},
		{
			name:            "anti-affinity between workers: each on its own node",
			nodes:           testutil.GPUNodes("zone-a", 3),
			gang:            gangOf(3, antiAffinity(testutil.GPUWorkers(3, "1"))),
			wantVerdict:     VerdictPlaced,
			wantAssignments: []string{"w-0->zone-a-0", "w-1->zone-a-1", "w-2->zone-a-2"},
			wantMax:         3,
		},
		{
			name:        "anti-affinity between workers: a fourth has no node of its own",
			nodes:       testutil.GPUNodes("zone-a", 3),
			gang:        gangOf(4, antiAffinity(testutil.GPUWorkers(4, "1"))),
			wantVerdict: VerdictUnschedulable,
			wantMax:     3,
			wantMessage: "ml/w-3: 0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.",
		},
		{
			name:            "running members count toward the minimum",
			nodes:           testutil.GPUNodes("zone-b", 3),
			pods:            []*corev1.Pod{running[0]},
			gang:            gangOf(3, running),
			wantVerdict:     VerdictPlaced,
			wantAssignments: []string{"w-1->zone-b-1", "w-2->zone-b-2"},
			wantMax:         3,
			wantMessage:     "gang ml/train placed: 1 running and 2 to place, minimum 3",
		},
		{
			name:        "a running member holds its node: one short",
			nodes:       testutil.GPUNodes("zone-b", 2),
			pods:        []*corev1.Pod{running[0]},
			gang:        gangOf(3, running),
			wantVerdict: VerdictUnschedulable,
			wantMax:     2,
			wantMessage: "at most 2 of minimum 3 member(s) run or fit at once",
		},
		{
			name:            "above the minimum, every member that fits is placed",
			nodes:           testutil.GPUNodes("zone-a", 2),
			gang:            gangOf(1, testutil.GPUWorkers(3, "8")),
			wantVerdict:     VerdictPlaced,
			wantAssignments: []string{"w-0->zone-a-0", "w-1->zone-a-1"},
			wantMax:         2,
			wantMessage:     "; 1 more member(s) do not fit",
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := &schedule.Snapshot{Nodes: tt.nodes, Pods: tt.pods}
			p, err := Place(context.Background(), snap, tt.gang, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if p.Verdict != tt.wantVerdict {
				t.Errorf("verdict %s, want %s (%s)", p.Verdict, tt.wantVerdict, p.Message)
			}
			if diff := cmp.Diff(tt.wantAssignments, assignments(p)); diff != "" {
				t.Errorf("assignments (-want +got):\n%s", diff)
			}
			if p.MaxPlaceable != tt.wantMax {
				t.Errorf("max placeable %d, want %d", p.MaxPlaceable, tt.wantMax)
			}
			if p.Domain != tt.wantDomain && tt.wantVerdict == VerdictPlaced {
				t.Errorf("domain %q, want %q", p.Domain, tt.wantDomain)
			}
			if !strings.Contains(p.Message, tt.wantMessage) {
				t.Errorf("message %q\nwant it to contain %q", p.Message, tt.wantMessage)
			}
			if key := tt.opts.PreferredTopologyKey; p.PreferredTopologyKey != key || p.PreferredMet != (key != "" && tt.wantDomain != "") {
				t.Errorf("preferred %q met %v, want %q met %v", p.PreferredTopologyKey, p.PreferredMet, key, key != "" && tt.wantDomain != "")
			}
		})
	}
}

// A domain without room is skipped, with the figure of the resource that
// binds on the nodes the members may use: zone-a's tainted control-plane
// node has cpu to spare but takes no worker, so it neither counts nor
// hides the GPUs the zone lacks.
func TestPlaceSkipsDomainsWithoutRoom(t *testing.T) {
	controlPlane := testutil.MakeNode().Name("control-plane").Label(zoneKey, "zone-a").Capacity(testutil.Res{"cpu": "512", "memory": "4Ti"}).
		Taint("node-role.kubernetes.io/control-plane", "", corev1.TaintEffectNoSchedule).Obj()
	nodes := append(testutil.GPUNodes("zone-a", 1), controlPlane)
	snap := &schedule.Snapshot{Nodes: append(nodes, testutil.GPUNodes("zone-b", 3)...)}
	p, err := Place(context.Background(), snap, gangOf(3, testutil.GPUWorkers(3, "8")), PlaceOptions{TopologyKey: zoneKey})
	if err != nil {
		t.Fatal(err)
	}
	want := []DomainResult{
		{Value: "zone-a", Nodes: 2, Skipped: "needs at least 24 nvidia.com/gpu, has 8 free on the 1 node(s) the members may use",
			Usable: 1, Resource: "nvidia.com/gpu", Free: 8, Allocatable: 8},
		{Value: "zone-b", Nodes: 3, Placed: 3, Complete: true, FreeFraction: p.Domains[1].FreeFraction, ScoreSum: p.Domains[1].ScoreSum,
			Usable: 3, Resource: "nvidia.com/gpu", Free: 24, Allocatable: 24},
	}
	if diff := cmp.Diff(want, p.Domains); diff != "" {
		t.Errorf("domains (-want +got):\n%s", diff)
	}
	if p.Verdict != VerdictPlaced || p.Domain != "zone-b" {
		t.Errorf("verdict %s in %q", p.Verdict, p.Domain)
	}
}

func TestPlaceIsDeterministic(t *testing.T) {
	snap := &schedule.Snapshot{Nodes: append(testutil.GPUNodes("zone-a", 4), testutil.GPUNodes("zone-b", 4)...)}
	first, err := Place(context.Background(), snap, gangOf(6, testutil.GPUWorkers(6, "4")), PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		again, err := Place(context.Background(), snap, gangOf(6, testutil.GPUWorkers(6, "4")), PlaceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(assignments(first), assignments(again)); diff != "" {
			t.Fatalf("plans differ (-first +again):\n%s", diff)
		}
	}
}

// TestPlacementMembers: every member once, with what placement did with
// it. A pending member being deleted is Terminating, not "Does not fit":
// placement never tried it. A gated member is placed as if released and
// matched by name (the plan holds its ungated copy).
func TestPlacementMembers(t *testing.T) {
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 2)}
	running := testutil.MakePod().Namespace("ml").Name("r-0").Node("zone-a-0").Label("app", "train").
		Req(testutil.Res{"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "4"}).PodGroup("train").Obj()
	snap.Pods = append(snap.Pods, running)
	w := testutil.GPUWorkers(4, "4")
	w[0].Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/gate"}}
	deleting := testutil.MakePod().Namespace("ml").Name("w-9").Label("app", "train").
		Req(testutil.Res{"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "4"}).PodGroup("train").Terminating().Obj()
	members := append([]*corev1.Pod{running}, append(w, deleting)...)

	summary := func(p *Placement) []string {
		var out []string
		for _, m := range p.Members() {
			out = append(out, fmt.Sprintf("%s %v %s", m.Pod.Name, m.Node != "", m.Status))
		}
		return out
	}
	placed, err := Place(context.Background(), snap, gangOf(3, members), PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// zone-a-0 has 4 GPUs left, zone-a-1 all 8: three of the four workers fit.
	want := []string{"r-0 true Running", "w-0 true Placed", "w-1 true Placed", "w-2 true Placed", "w-3 false Does not fit", "w-9 false Terminating"}
	if diff := cmp.Diff(want, summary(placed)); diff != "" {
		t.Errorf("placed gang (-want +got):\n%s", diff)
	}

	notPlaced, err := Place(context.Background(), snap, gangOf(5, members), PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"r-0 true Running", "w-0 true Fits (gang not placed)", "w-1 true Fits (gang not placed)", "w-2 true Fits (gang not placed)", "w-3 false Does not fit", "w-9 false Terminating"}
	if diff := cmp.Diff(want, summary(notPlaced)); diff != "" {
		t.Errorf("gang that does not fit (-want +got):\n%s", diff)
	}
}

// A member running in a topology domain counts toward the minimum there
// only: with members running in zone-b, the gang is pinned to zone-b even
// though zone-a has room for the rest, and with members running in two
// zones no zone can hold it.
func TestPlaceCountsRunningMembersInTheirDomain(t *testing.T) {
	nodes := append(testutil.GPUNodes("zone-a", 4), testutil.GPUNodes("zone-b", 2)...)
	run := func(name, node string) *corev1.Pod {
		return testutil.MakePod().Namespace("ml").Name(name).Node(node).Label("app", "train").
			Req(testutil.Res{"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "8"}).PodGroup("train").Obj()
	}
	pending := testutil.GPUWorkers(4, "8")

	// Two members run in zone-b, which has no room left; zone-a holds all
	// four pending ones, but the six would then span two zones.
	inB := []*corev1.Pod{run("r-0", "zone-b-0"), run("r-1", "zone-b-1")}
	snap := &schedule.Snapshot{Nodes: nodes, Pods: inB}
	g := gangOf(6, append(slices.Clone(inB), pending...))
	g.TopologyKey = zoneKey
	p, err := Place(context.Background(), snap, g, PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	domains := map[string]DomainResult{}
	for _, d := range p.Domains {
		domains[d.Value] = d
	}
	if p.Verdict != VerdictUnschedulable || p.MaxPlaceable != 2 || domains["zone-a"].Complete ||
		domains["zone-a"].Skipped != "members already run in topology.kubernetes.io/zone=zone-b" || domains["zone-b"].Running != 2 {
		t.Errorf("verdict %s, max %d, domains %+v: want Unschedulable, 2, zone-a skipped for where members run", p.Verdict, p.MaxPlaceable, p.Domains)
	}

	// Members running in both zones: no zone can hold the gang.
	split := []*corev1.Pod{run("r-0", "zone-a-0"), run("r-1", "zone-b-0")}
	snap = &schedule.Snapshot{Nodes: nodes, Pods: split}
	g = gangOf(3, append(slices.Clone(split), pending[:1]...))
	g.TopologyKey = zoneKey
	if p, err = Place(context.Background(), snap, g, PlaceOptions{}); err != nil {
		t.Fatal(err)
	}
	if p.Verdict != VerdictUnschedulable || !strings.Contains(p.Message, "members already run in 2 values of topology.kubernetes.io/zone (zone-a, zone-b)") {
		t.Errorf("verdict %s: %s; want Unschedulable for members in two zones", p.Verdict, p.Message)
	}

	// Running members in the zone that has room: they count there.
	inA := []*corev1.Pod{run("r-0", "zone-a-0"), run("r-1", "zone-a-1")}
	snap = &schedule.Snapshot{Nodes: nodes, Pods: inA}
	g = gangOf(4, append(slices.Clone(inA), pending[:2]...))
	g.TopologyKey = zoneKey
	if p, err = Place(context.Background(), snap, g, PlaceOptions{}); err != nil {
		t.Fatal(err)
	}
	if p.Verdict != VerdictPlaced || p.Domain != "zone-a" || p.MaxPlaceable != 4 {
		t.Errorf("verdict %s in %q, max %d: want Placed in zone-a with 4", p.Verdict, p.Domain, p.MaxPlaceable)
	}
}
