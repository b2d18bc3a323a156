package schedule

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
)

// benchCluster is 5,000 nodes in 4 zones with one running pod each, some
// tainted, the size the benchmark targets name.
func benchCluster(nodes int) *Snapshot {
	snap := &Snapshot{Namespaces: []*corev1.Namespace{testutil.MakeNamespace("default"), testutil.MakeNamespace("ml")}}
	for i := range nodes {
		name := fmt.Sprintf("node-%05d", i)
		n := testutil.MakeNode().Name(name).Label(corev1.LabelTopologyZone, fmt.Sprintf("zone-%d", i%4)).
			Capacity(testutil.Res{"cpu": "32", "memory": "128Gi", "pods": "110", "nvidia.com/gpu": "8"})
		if i%10 == 0 {
			n.Taint("dedicated", "infra", corev1.TaintEffectNoSchedule)
		}
		snap.Nodes = append(snap.Nodes, n.Obj())
		p := testutil.MakePod().Namespace("ml").Name(fmt.Sprintf("run-%05d", i)).Node(name).
			Label("app", fmt.Sprintf("svc-%d", i%50)).Req(testutil.Res{"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "2"})
		if i%10 == 1 {
			p.Obj().Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": fmt.Sprintf("svc-%d", i%50)}},
					TopologyKey:   corev1.LabelHostname,
				}},
			}}
		}
		snap.Pods = append(snap.Pods, p.Obj())
	}
	return snap
}

func benchSchedule(b *testing.B, pod *corev1.Pod) {
	s, err := NewScheduler(benchCluster(5000), Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := s.Schedule(ctx, pod)
		if err != nil {
			b.Fatal(err)
		}
		if res.Verdict != VerdictScheduled {
			b.Fatalf("verdict %s: %s", res.Verdict, res.Message)
		}
	}
}

// BenchmarkScheduleDefaultProfile is one pod through the default profile on
// 5,000 nodes with 5,000 running pods (target: well under 10 ms).
func BenchmarkScheduleDefaultProfile(b *testing.B) {
	pod := testutil.MakePod().Namespace("ml").Name("p").Req(testutil.Res{"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"}).Obj()
	pod.Spec.NodeSelector = map[string]string{corev1.LabelTopologyZone: "zone-1"}
	benchSchedule(b, pod)
}

// BenchmarkScheduleTopologySpread adds hard zone spread and soft hostname
// spread (target: under 50 ms).
func BenchmarkScheduleTopologySpread(b *testing.B) {
	pod := testutil.MakePod().Namespace("ml").Name("p").Label("app", "svc-7").Req(testutil.Res{"cpu": "2"}).Obj()
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "svc-7"}}
	pod.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{
		{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel},
		{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: sel},
	}
	benchSchedule(b, pod)
}

// BenchmarkScheduleInterPodAffinity adds required anti-affinity and
// preferred affinity (target: under 50 ms).
func BenchmarkScheduleInterPodAffinity(b *testing.B) {
	pod := testutil.MakePod().Namespace("ml").Name("p").Label("app", "svc-3").Req(testutil.Res{"cpu": "2"}).Obj()
	pod.Spec.Affinity = &corev1.Affinity{
		PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "svc-3"}}, TopologyKey: corev1.LabelHostname,
		}}},
		PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 10, PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "svc-4"}}, TopologyKey: corev1.LabelTopologyZone,
			},
		}}},
	}
	benchSchedule(b, pod)
}
