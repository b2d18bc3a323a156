package noderesources_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
)

const benchNodes = 5000

// gpuCluster is n GPU nodes (32 cores, 128Gi, 8 GPUs), each
// running one pod of varying size.
func gpuCluster(n int) []*framework.NodeInfo {
	out := make([]*framework.NodeInfo, 0, n)
	for i := range n {
		name := fmt.Sprintf("node-%04d", i)
		n := testutil.MakeNode().Name(name).Capacity(res{
			corev1.ResourceCPU: "32", corev1.ResourceMemory: "128Gi", corev1.ResourcePods: "110", gpu: "8",
		}).Obj()
		p := testutil.MakePod().Name("running-" + name).Req(res{
			corev1.ResourceCPU: fmt.Sprint(1 + i%16), corev1.ResourceMemory: fmt.Sprintf("%dGi", 1+i%64), gpu: fmt.Sprint(i % 8),
		}).Node(name).Obj()
		out = append(out, framework.NewNodeInfo(n, framework.NewPodInfo(p)))
	}
	return out
}

// filterPods are pods that fit everywhere, and pods that fit nowhere for
// one reason or several.
var filterPods = []struct {
	name string
	pod  *corev1.Pod
}{
	{"fits", testutil.MakePod().Req(res{corev1.ResourceCPU: "1", corev1.ResourceMemory: "1Gi"}).Obj()},
	{"fits with gpu", testutil.MakePod().Req(res{corev1.ResourceCPU: "1", corev1.ResourceMemory: "1Gi", gpu: "1"}).Obj()},
	{"short of cpu", testutil.MakePod().Req(res{corev1.ResourceCPU: "40"}).Obj()},
	{"short of cpu and memory", testutil.MakePod().Req(res{corev1.ResourceCPU: "40", corev1.ResourceMemory: "200Gi"}).Obj()},
	{"short of gpu", testutil.MakePod().Req(res{gpu: "9"}).Obj()},
	{"short of cpu and gpu", testutil.MakePod().Req(res{corev1.ResourceCPU: "40", gpu: "9"}).Obj()},
	{"short of gpu and fpga", testutil.MakePod().Req(res{gpu: "9", "example.com/fpga": "1"}).Obj()},
}

// BenchmarkFilter runs Filter on every one of 5,000 nodes per op, as one
// scheduling cycle does; ns/node is the cost per node.
func BenchmarkFilter(b *testing.B) {
	nodes := gpuCluster(benchNodes)
	pl := newPlugin[*noderesources.Fit](b, noderesources.New, nil)
	ctx := context.Background()
	for _, tc := range filterPods {
		b.Run(tc.name, func(b *testing.B) {
			state := framework.NewCycleState()
			pl.PreFilter(ctx, state, tc.pod, nodes)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				for _, ni := range nodes {
					pl.Filter(ctx, state, tc.pod, ni)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchNodes), "ns/node")
		})
	}
}

// BenchmarkScore runs Score on every one of 5,000 nodes per op, for each
// NodeResourcesFit strategy and for NodeResourcesBalancedAllocation.
func BenchmarkScore(b *testing.B) {
	nodes := gpuCluster(benchNodes)
	pod := testutil.MakePod().Req(res{corev1.ResourceCPU: "2", corev1.ResourceMemory: "4Gi", gpu: "1"}).Obj()
	withGPU := []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: string(gpu), Weight: 3}}
	fit := func(typ configv1.ScoringStrategyType) runtime.Object {
		args := &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: typ, Resources: withGPU}}
		if typ == configv1.RequestedToCapacityRatio {
			args.ScoringStrategy.RequestedToCapacityRatio = &configv1.RequestedToCapacityRatioParam{
				Shape: []configv1.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 50, Score: 8}, {Utilization: 100, Score: 10}},
			}
		}
		return args
	}
	plugins := []struct {
		name  string
		newFn func(runtime.Object, framework.Handle) (framework.Plugin, error)
		args  runtime.Object
	}{
		{"LeastAllocated", noderesources.New, nil},
		{"LeastAllocated with gpu", noderesources.New, fit(configv1.LeastAllocated)},
		{"MostAllocated with gpu", noderesources.New, fit(configv1.MostAllocated)},
		{"RequestedToCapacityRatio with gpu", noderesources.New, fit(configv1.RequestedToCapacityRatio)},
		{"BalancedAllocation", noderesources.NewBalancedAllocation, nil},
		{"BalancedAllocation with gpu", noderesources.NewBalancedAllocation, &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{
			{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: string(gpu), Weight: 1},
		}}},
	}
	ctx := context.Background()
	for _, tc := range plugins {
		b.Run(tc.name, func(b *testing.B) {
			pl := newPlugin[scorePlugin](b, tc.newFn, tc.args)
			state := framework.NewCycleState()
			if status := pl.PreScore(ctx, state, pod, nodes); !status.IsSuccess() {
				b.Fatalf("PreScore: %v", status)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				for _, ni := range nodes {
					pl.Score(ctx, state, pod, ni)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchNodes), "ns/node")
		})
	}
}

// TestHotPathAllocations holds Filter and Score to their allocation budget:
// nothing for a node that fits and for scoring, nothing for a node short of
// native resources, of a single scalar, or of both (shared statuses), and
// the Status with its reasons for rarer mixes (two scalars).
func TestHotPathAllocations(t *testing.T) {
	nodes := gpuCluster(64)
	ctx := context.Background()
	fit := newPlugin[*noderesources.Fit](t, noderesources.New, nil)
	want := map[string]float64{
		"fits": 0, "fits with gpu": 0, "short of cpu": 0, "short of cpu and memory": 0, "short of gpu": 0, "short of cpu and gpu": 0,
		"short of gpu and fpga": 2,
	}
	for _, tc := range filterPods {
		state := framework.NewCycleState()
		fit.PreFilter(ctx, state, tc.pod, nodes)
		got := testing.AllocsPerRun(10, func() {
			for _, ni := range nodes {
				fit.Filter(ctx, state, tc.pod, ni)
			}
		}) / float64(len(nodes))
		if got != want[tc.name] {
			t.Errorf("Filter %s: %v allocations per node, want %v", tc.name, got, want[tc.name])
		}
	}

	pod := testutil.MakePod().Req(res{corev1.ResourceCPU: "2", corev1.ResourceMemory: "4Gi"}).Obj()
	for _, pl := range []scorePlugin{fit, newPlugin[*noderesources.BalancedAllocation](t, noderesources.NewBalancedAllocation, nil)} {
		state := framework.NewCycleState()
		pl.PreScore(ctx, state, pod, nodes)
		got := testing.AllocsPerRun(10, func() {
			for _, ni := range nodes {
				pl.Score(ctx, state, pod, ni)
			}
		})
		if got != 0 {
			t.Errorf("%s Score: %v allocations per run, want 0", pl.Name(), got)
		}
	}
}

// TestFilterConcurrent runs Filter on many goroutines against one cycle
// state, and marks the statuses as the runner does (WithPlugin): no status
// or reason list may be shared in a way the race detector objects to.
func TestFilterConcurrent(t *testing.T) {
	nodes := gpuCluster(64)
	pl := newPlugin[*noderesources.Fit](t, noderesources.New, nil)
	ctx := context.Background()
	for _, tc := range filterPods {
		state := framework.NewCycleState()
		pl.PreFilter(ctx, state, tc.pod, nodes)
		done := make(chan struct{})
		for range 4 {
			go func() {
				defer func() { done <- struct{}{} }()
				for _, ni := range nodes {
					pl.Filter(ctx, state, tc.pod, ni).WithPlugin(noderesources.Name)
				}
			}()
		}
		for range 4 {
			<-done
		}
	}
}
