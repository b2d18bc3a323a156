package gang

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// launcherGang is the MPI and PyTorch-elastic shape: workers with a
// required pod affinity to the zone of the launcher, and the launcher.
func launcherGang(source Source, min int32, launcher string, workers ...string) *Gang {
	var members []*corev1.Pod
	for _, name := range workers {
		members = append(members, testutil.MakePod().Namespace("ml").Name(name).Label("role", "worker").
			Req(testutil.Res{"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "8"}).
			RequiredPodAffinity(testutil.MakePodAffinityTerm(zoneKey).MatchLabel("role", "launcher")).Obj())
	}
	members = append(members, testutil.MakePod().Namespace("ml").Name(launcher).Label("role", "launcher").
		Req(testutil.Res{"cpu": "1", "memory": "1Gi"}).Obj())
	// Created together, they queue in name order.
	slices.SortFunc(members, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return &Gang{Source: source, Namespace: "ml", Name: "mpi", MinMember: min, Members: members}
}

func TestMembersThatNeedEachOther(t *testing.T) {
	nodes := append(testutil.GPUNodes("zone-a", 2), testutil.GPUNodes("zone-b", 2)...)
	for _, tt := range []struct {
		name        string
		gang        *Gang
		wantVerdict Verdict
		wantLater   []string
		wantMessage string
	}{{
		// The workers come first in queue order and fit only once the
		// launcher is placed: coscheduling tries them again then (its
		// Permit activates the siblings), and so does the plan.
		name:        "coscheduling, workers queued first",
		gang:        launcherGang(testCoscheduling, 3, "b-launcher", "a-worker-0", "a-worker-1"),
		wantVerdict: VerdictPlaced,
		wantLater:   []string{"a-worker-0", "a-worker-1"},
	}, {
		name:        "coscheduling, launcher queued first",
		gang:        launcherGang(testCoscheduling, 3, "0-launcher", "a-worker-0", "a-worker-1"),
		wantVerdict: VerdictPlaced,
	}, {
		// kube-scheduler v1.37 tries a native PodGroup's members once each
		// in one cycle, in an order nothing in the API sets: whatever the
		// names, the answer is that the gang may never start.
		name:        "native, workers queued first",
		gang:        launcherGang(SourceNative, 3, "b-launcher", "a-worker-0", "a-worker-1"),
		wantVerdict: VerdictUnschedulable,
		wantLater:   []string{"a-worker-0", "a-worker-1"},
		wantMessage: "gang ml/mpi is not placed reliably: kube-scheduler v1.37 tries the members of a PodGroup once each, in its queue's order (priority, attempts, the time each entered the queue), in one cycle for the whole group; ml/a-worker-0, ml/a-worker-1 fit only once other members are placed, and when the cycle takes them first, at most 1 of minimum 3 member(s) run or fit (ml/a-worker-0: 0/4 nodes are available: 4 node(s) didn't match pod affinity rules.",
	}, {
		name:        "native, launcher queued first",
		gang:        launcherGang(SourceNative, 3, "0-launcher", "a-worker-0", "a-worker-1"),
		wantVerdict: VerdictUnschedulable,
		wantMessage: "gang ml/mpi is not placed reliably",
	}, {
		// The launcher alone is the minimum: whatever the order, it runs.
		name:        "native, the members that need others are not needed for the minimum",
		gang:        launcherGang(SourceNative, 1, "b-launcher", "a-worker-0", "a-worker-1"),
		wantVerdict: VerdictPlaced,
		wantLater:   []string{"a-worker-0", "a-worker-1"},
	}, {
		name:        "volcano, workers queued first",
		gang:        launcherGang(testVolcano, 3, "b-launcher", "a-worker-0", "a-worker-1"),
		wantVerdict: VerdictUnschedulable,
		wantLater:   []string{"a-worker-0", "a-worker-1"},
		wantMessage: "Volcano's allocate action tries a job's tasks once each per session, in task order",
	}} {
		t.Run(tt.name, func(t *testing.T) {
			p, _, err := placeMembers(context.Background(), mustScheduler(t, &schedule.Snapshot{Nodes: nodes}), tt.gang, PlaceOptions{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if p.Verdict != tt.wantVerdict || !strings.Contains(p.Message, tt.wantMessage) {
				t.Errorf("verdict %s, message %q; want %s, %q", p.Verdict, p.Message, tt.wantVerdict, tt.wantMessage)
			}
			var later []string
			for _, pod := range p.PlacedLater {
				later = append(later, pod.Name)
			}
			if fmt.Sprint(later) != fmt.Sprint(tt.wantLater) {
				t.Errorf("placed later %v, want %v", later, tt.wantLater)
			}
			// bind writes every Binding itself: the queue's order plays no part.
			b := p.Bindable()
			if p.QueueOrder != nil && (b.Verdict != VerdictPlaced || len(b.Assignments) != len(p.BestAttempt) || !strings.Contains(b.Message, "bind writes each member's Binding itself")) {
				t.Errorf("bindable: %s, %d assignments (%s); want the plan of the good order, %d members", b.Verdict, len(b.Assignments), b.Message, len(p.BestAttempt))
			}
			if p.QueueOrder == nil && b != p {
				t.Errorf("bindable changed a placement without a queue-order risk")
			}
			// Every planned worker is in the launcher's zone.
			zoneOf := map[string]string{}
			for _, n := range nodes {
				zoneOf[n.Name] = n.Labels[zoneKey]
			}
			var launcherZone string
			for _, a := range p.Planned() {
				if a.Pod.Labels["role"] == "launcher" {
					launcherZone = zoneOf[a.Node]
				}
			}
			for _, a := range p.Planned() {
				if a.Pod.Labels["role"] == "worker" && zoneOf[a.Node] != launcherZone {
					t.Errorf("worker %s on %s, outside the launcher's zone %s", a.Pod.Name, a.Node, launcherZone)
				}
			}
		})
	}
}

func mustScheduler(t *testing.T, snap *schedule.Snapshot) *schedule.Scheduler {
	t.Helper()
	s, err := schedule.NewScheduler(snap, schedule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestVerdictDoesNotDependOnMemberOrder places random gangs whose members
// need each other (required pod affinity and anti-affinity among members,
// spread constraints among members) in several orders of their members,
// as different names would queue them: the verdict and the number placed
// never change, for a source that tries members again and for one that
// tries each once.
func TestVerdictDoesNotDependOnMemberOrder(t *testing.T) {
	seen := map[string]int{}
	for seed := uint64(1); seed <= 150; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x0dde))
		ne := testutil.MakeNeedEachOther(r, "ml", "")
		nodes, members, min := ne.Nodes, ne.Members, ne.Min
		snap := &schedule.Snapshot{Nodes: nodes}
		base := mustScheduler(t, snap)
		for _, source := range []Source{testCoscheduling, SourceNative} {
			var first *Placement
			for range 6 {
				order := append([]*corev1.Pod(nil), members...)
				r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				g := &Gang{Source: source, Namespace: "ml", Name: "g", MinMember: min, Members: order}
				p, _, err := placeMembers(context.Background(), base, g, PlaceOptions{}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if first == nil {
					first = p
					seen[fmt.Sprintf("%s %s later=%v order=%v", source, p.Verdict, len(p.PlacedLater) > 0, p.QueueOrder != nil)]++
					continue
				}
				if p.Verdict != first.Verdict || len(p.Planned()) != len(first.Planned()) {
					t.Errorf("seed %d, %s: order %v gives %s with %d planned (%s); the first order gave %s with %d planned (%s)",
						seed, source, podList(order), p.Verdict, len(p.Planned()), p.Message, first.Verdict, len(first.Planned()), first.Message)
				}
			}
		}
	}
	t.Logf("outcomes: %v", seen)
	for _, want := range []string{"scheduling.x-k8s.io Placed later=true order=false", "scheduling.k8s.io Unschedulable later=false order=true", "scheduling.k8s.io Placed later=false order=false"} {
		if seen[want] == 0 {
			t.Errorf("no scenario gave %q: the generator does not cover it (%v)", want, seen)
		}
	}
}

func podList(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}
