package gang

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

const blockKey = testutil.BlockKey

// benchCluster is 5,120 nodes in 4 zones and 4 blocks with one running pod each.
func benchCluster() *schedule.Snapshot {
	nodes, pods := testutil.BlockCluster()
	return &schedule.Snapshot{Nodes: nodes, Pods: pods}
}

func benchGang(n int, gpus string) *Gang {
	return gangOf(int32(n), testutil.GPUWorkers(n, gpus))
}

func benchPlace(b *testing.B, g *Gang, opts PlaceOptions) { benchPlaceOn(b, benchCluster(), g, opts) }

func benchPlaceOn(b *testing.B, snap *schedule.Snapshot, g *Gang, opts PlaceOptions) {
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p, err := Place(context.Background(), snap, g, opts)
		if err != nil {
			b.Fatal(err)
		}
		if p.Verdict != VerdictPlaced {
			b.Fatalf("not placed: %s", p.Message)
		}
	}
}

// BenchmarkPlace1000 is a 1,000-pod gang with no constraints on 5,120 nodes
// (target: under 100 ms).
func BenchmarkPlace1000(b *testing.B) { benchPlace(b, benchGang(1000, "2"), PlaceOptions{}) }

// BenchmarkPlace1000Indexed is BenchmarkPlace1000 as an Indexed Job: every
// member differs by its index (label, annotation, hostname, environment),
// which no selector reads. Target: at most 1.2x BenchmarkPlace1000.
func BenchmarkPlace1000Indexed(b *testing.B) {
	benchPlace(b, gangOf(1000, testutil.Indexed("train", testutil.GPUWorkers(1000, "2"))), PlaceOptions{})
}

// BenchmarkPlace1000IndexedZoneSpread adds a hard zone spread over the
// job's pods (not their index): an Indexed Job in a shape training
// operators submit.
func BenchmarkPlace1000IndexedZoneSpread(b *testing.B) {
	members := testutil.Indexed("train", testutil.GPUWorkers(1000, "2"))
	for _, m := range members {
		m.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: zoneKey,
			WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/job-name": "train"}}}}
	}
	benchPlace(b, gangOf(1000, members), PlaceOptions{})
}

// BenchmarkPlace300DoesNotFit is a 300-pod gang whose members fit on no
// node (8 GPUs each, 6 free per node): what explain and place see for a
// Pending gang. Every member's cycle must say why (no target in the issue).
func BenchmarkPlace300DoesNotFit(b *testing.B) {
	g, snap := benchGang(300, "8"), benchCluster()
	b.ReportAllocs()
	for b.Loop() {
		p, err := Place(context.Background(), snap, g, PlaceOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if p.Verdict != VerdictUnschedulable || len(p.BestAttempt) != 0 {
			b.Fatalf("%s with %d placed, want Unschedulable with none", p.Verdict, len(p.BestAttempt))
		}
	}
}

// BenchmarkPlace2000ZoneSpread is a 2,000-pod gang spread over zones with
// maxSkew 1 (target: under 300 ms).
func BenchmarkPlace2000ZoneSpread(b *testing.B) {
	g := benchGang(2000, "1")
	for _, p := range g.Members {
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: zoneKey, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "train"}},
		}}
	}
	benchPlace(b, g, PlaceOptions{})
}

// BenchmarkPlace1000HeadlessService is BenchmarkPlace1000 with a headless
// Service selecting the workers, as training jobs have: kube-scheduler's
// system default spreading then scores them (no target in the issue).
func BenchmarkPlace1000HeadlessService(b *testing.B) {
	g := benchGang(1000, "2")
	snap := benchCluster()
	snap.Services = append(snap.Services, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train"},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "train"}},
	})
	benchPlaceOn(b, snap, g, PlaceOptions{})
}

// BenchmarkPlace2000HostSpread is a 2,000-pod gang spread over nodes with
// maxSkew 1 (no target in the issue; thousands of domains instead of four).
func BenchmarkPlace2000HostSpread(b *testing.B) {
	g := benchGang(2000, "1")
	for _, p := range g.Members {
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "train"}},
		}}
	}
	benchPlace(b, g, PlaceOptions{})
}

// BenchmarkPlace1000OnePerNode is a 1,000-pod gang whose workers keep off
// each other's nodes with required pod anti-affinity (no target in the
// issue; it measures the InterPodAffinity path of the incremental cycles).
func BenchmarkPlace1000OnePerNode(b *testing.B) {
	g := benchGang(1000, "2")
	for _, p := range g.Members {
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey:   corev1.LabelHostname,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "train"}},
			}},
		}}
	}
	benchPlace(b, g, PlaceOptions{})
}

// BenchmarkPlace1000PreferTogether is a 1,000-pod gang whose workers
// prefer the zone of the others (preferred pod affinity; no target in the
// issue).
func BenchmarkPlace1000PreferTogether(b *testing.B) {
	g := benchGang(1000, "2")
	for _, p := range g.Members {
		p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
				TopologyKey:   zoneKey,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "train"}},
			}}},
		}}
	}
	benchPlace(b, g, PlaceOptions{})
}

// BenchmarkPlace512Blocks is a 512-pod gang confined to one of 4 blocks of
// 1,280 nodes (target: under 200 ms).
func BenchmarkPlace512Blocks(b *testing.B) {
	benchPlace(b, benchGang(512, "6"), PlaceOptions{TopologyKey: blockKey})
}

// BenchmarkSnapshotToScheduler is the part of every Place that builds node
// infos from the snapshot (5,120 nodes and pods), once per command.
func BenchmarkSnapshotToScheduler(b *testing.B) {
	snap := benchCluster()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := schedule.NewScheduler(snap, schedule.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
