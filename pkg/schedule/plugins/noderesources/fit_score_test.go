package noderesources_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
)

var (
	// extendedRes and extendedResourceSet are kube-scheduler's util_test.go ones.
	extendedRes         corev1.ResourceName = "abc.com/xyz"
	extendedResourceSet                     = []configv1.ResourceSpec{
		{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: string(extendedRes), Weight: 1},
	}
)

type scoreCase struct {
	name     string
	pod      *corev1.Pod
	nodes    []*corev1.Node
	existing []*corev1.Pod
	// resources are the scored resources; nil means the default set.
	resources []configv1.ResourceSpec
	// shape is the RequestedToCapacityRatio shape.
	shape []configv1.UtilizationShapePoint
	// noPreScore scores without running PreScore first.
	noPreScore bool
	want       framework.NodeScoreList
}

func runFitScoreCases(t *testing.T, strategy configv1.ScoringStrategyType, cases []scoreCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: strategy, Resources: tc.resources}}
			if strategy == configv1.RequestedToCapacityRatio {
				args.ScoringStrategy.RequestedToCapacityRatio = &configv1.RequestedToCapacityRatioParam{Shape: tc.shape}
			}
			pl := newPlugin[*noderesources.Fit](t, noderesources.New, args)
			status, got := scoreNodes(t, pl, tc.pod, nodeInfos(tc.nodes, tc.existing), !tc.noPreScore)
			if !status.IsSuccess() {
				t.Fatalf("PreScore = %v", status)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func scores(node1, node2 int64) framework.NodeScoreList {
	return framework.NodeScoreList{{Name: "node1", Score: node1}, {Name: "node2", Score: node2}}
}

// cores is a request of whole cores and bytes, as kube-scheduler's score
// tests write them ({"cpu": "1000", "memory": "2000"}).
func cores(cpu, memory string) res {
	return res{corev1.ResourceCPU: cpu, corev1.ResourceMemory: memory}
}

// TestFitScore recreates kube-scheduler's TestFitScore: each strategy on the
// same two nodes, with and without PreScore, and with a sidecar.
func TestFitScore(t *testing.T) {
	nodes := func() []*corev1.Node {
		return []*corev1.Node{node("node1", cores("4000", "10000")), node("node2", cores("6000", "10000"))}
	}
	existing := func() []*corev1.Pod {
		return append(onNode("node1", bare().Containers(cores("2000", "4000"))), onNode("node2", bare().Containers(cores("1000", "2000")))...)
	}
	decreasing := []configv1.UtilizationShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}
	increasing := []configv1.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}}
	for _, noPreScore := range []bool{false, true} {
		suffix := ""
		if noPreScore {
			suffix = " if PreScore is not called"
		}
		t.Run("RequestedToCapacityRatio", func(t *testing.T) {
			runFitScoreCases(t, configv1.RequestedToCapacityRatio, []scoreCase{
				{
					// node1: cpu 5000/4000 is past capacity, f(100) = 0, so
					// cpu carries no weight; memory 9000/10000 = 90%, f = 10.
					// node2: cpu 4000/6000 = 66%, f = 34; memory 70%, f = 30;
					// round((34 + 30) / 2) = 32.
					name:  "case1" + suffix,
					pod:   bare().Containers(cores("3000", "5000")).Obj(),
					nodes: nodes(), existing: existing(), shape: decreasing, noPreScore: noPreScore,
					want: scores(10, 32),
				},
				{
					// node1: cpu f(100) = 100, memory f(90) = 90: 95.
					// node2: cpu 66, memory 70: 68.
					name:  "case2" + suffix,
					pod:   bare().Containers(cores("3000", "5000")).Obj(),
					nodes: nodes(), existing: existing(), shape: increasing, noPreScore: noPreScore,
					want: scores(95, 68),
				},
			})
		})
		t.Run("MostAllocated", func(t *testing.T) {
			runFitScoreCases(t, configv1.MostAllocated, []scoreCase{{
				// node1: cpu 3000/4000 = 75, memory 6000/10000 = 60: 67.
				// node2: cpu 2000/6000 = 33, memory 4000/10000 = 40: 36.
				name: "two nodes" + suffix, pod: bare().Containers(cores("1000", "2000")).Obj(),
				nodes: nodes(), existing: existing(), noPreScore: noPreScore,
				want: scores(67, 36),
			}})
		})
		t.Run("LeastAllocated", func(t *testing.T) {
			runFitScoreCases(t, configv1.LeastAllocated, []scoreCase{{
				// node1: cpu 25, memory 40: 32. node2: cpu 66, memory 60: 63.
				name: "two nodes" + suffix, pod: bare().Containers(cores("1000", "2000")).Obj(),
				nodes: nodes(), existing: existing(), noPreScore: noPreScore,
				want: scores(32, 63),
			}})
		})
	}

	sidecarNodes := func() []*corev1.Node {
		return []*corev1.Node{node("node1", cores("4000", "10000")), node("node2", cores("4000", "10000"))}
	}
	sidecarPods := func() []*corev1.Pod {
		return append(
			onNode("node1", bare().Containers(cores("1000", "2000")).SidecarReq(cores("1000", "2000"))),
			onNode("node2", bare().Containers(cores("1000", "2000")))...)
	}
	t.Run("sidecar", func(t *testing.T) {
		// node1 runs 2000 cores and 4000 bytes (the sidecar counts), node2
		// half of that. MostAllocated: node1 75 and 60 -> 67; node2 50 and 40 -> 45.
		runFitScoreCases(t, configv1.MostAllocated, []scoreCase{{
			name: "MostAllocated with sidecar container", pod: bare().Containers(cores("1000", "2000")).Obj(),
			nodes: sidecarNodes(), existing: sidecarPods(), want: scores(67, 45),
		}})
		// LeastAllocated: node1 25 and 40 -> 32; node2 50 and 60 -> 55.
		runFitScoreCases(t, configv1.LeastAllocated, []scoreCase{{
			name: "LeastAllocated with sidecar container", pod: bare().Containers(cores("1000", "2000")).Obj(),
			nodes: sidecarNodes(), existing: sidecarPods(), want: scores(32, 55),
		}})
	})
}

// TestFitScoreDefaults checks that nil args score as LeastAllocated over cpu
// and memory, with the non-zero defaults for a pod that requests nothing.
func TestFitScoreDefaults(t *testing.T) {
	pl := newPlugin[*noderesources.Fit](t, noderesources.New, nil)
	nodes := nodeInfos([]*corev1.Node{
		node("node1", res{corev1.ResourceCPU: "1", corev1.ResourceMemory: "1000Mi"}),
		node("node2", res{corev1.ResourceCPU: "2", corev1.ResourceMemory: "1000Mi"}),
	}, nil)
	// The request-less container counts as 100m and 200Mi.
	// node1: cpu (1000-100)*100/1000 = 90, memory (1000-200)*100/1000 = 80: 85.
	// node2: cpu (2000-100)*100/2000 = 95, memory 80: 87.
	_, got := scoreNodes(t, pl, testutil.MakePod().Obj(), nodes, true)
	if diff := cmp.Diff(scores(85, 87), got); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
}
