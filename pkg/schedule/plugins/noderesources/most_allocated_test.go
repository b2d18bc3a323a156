package noderesources_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
)

// TestMostAllocatedScoringStrategy recreates kube-scheduler's test of the
// same name: (requested * 100 / allocatable) per resource, requested capped
// at allocatable, weighted mean truncated.
func TestMostAllocatedScoringStrategy(t *testing.T) {
	twoRequests := func() *corev1.Pod {
		return bare().Containers(cores("1000", "2000"), cores("2000", "3000")).Obj()
	}
	runFitScoreCases(t, configv1.MostAllocated, []scoreCase{
		{
			name:  "nothing scheduled, nothing requested",
			pod:   bare().Obj(),
			nodes: []*corev1.Node{node("node1", cores("4000", "10000")), node("node2", cores("4000", "10000"))},
			want:  scores(0, 0),
		},
		{
			// node1: cpu 3000*100/4000 = 75, memory 5000*100/10000 = 50: 62.
			// node2: cpu 3000*100/6000 = 50, memory 50: 50.
			name:  "nothing scheduled, resources requested, differently sized nodes",
			pod:   twoRequests(),
			nodes: []*corev1.Node{node("node1", cores("4000", "10000")), node("node2", cores("6000", "10000"))},
			want:  scores(62, 50),
		},
		{
			// node1: cpu 6000*100/10000 = 60, memory 0: 30.
			// node2: cpu 60, memory 5000*100/20000 = 25: 42.
			name:  "no resources requested, pods scheduled with resources",
			pod:   bare().Obj(),
			nodes: []*corev1.Node{node("node1", cores("10000", "20000")), node("node2", cores("10000", "20000"))},
			existing: append(
				onNode("node1", bare().Containers(cores("3000", "0")), bare().Containers(cores("3000", "0"))),
				onNode("node2", bare().Containers(cores("3000", "0")), bare().Containers(cores("3000", "5000")))...),
			want: scores(30, 42),
		},
		{
			// node1: cpu 60, memory 25: 42. node2: cpu 60, memory 10000*100/20000 = 50: 55.
			name:     "resources requested, pods scheduled with resources",
			pod:      twoRequests(),
			nodes:    []*corev1.Node{node("node1", cores("10000", "20000")), node("node2", cores("10000", "20000"))},
			existing: append(onNode("node1", bare().Containers(cores("3000", "0"))), onNode("node2", bare().Containers(cores("3000", "5000")))...),
			want:     scores(42, 55),
		},
		{
			// node1: cpu 5000/5000 = 100, memory 9000*100/10000 = 90: 95.
			// node2: cpu 5000*100/10000 = 50, memory 9000/9000 = 100: 75.
			name:  "resources requested equal node capacity",
			pod:   bare().Containers(cores("2000", "4000"), cores("3000", "5000")).Obj(),
			nodes: []*corev1.Node{node("node1", cores("5000", "10000")), node("node2", cores("10000", "9000"))},
			want:  scores(95, 75),
		},
		{
			// node1: (75*1 + 50*2) / 3 = 58. node2: (50*1 + 50*2) / 3 = 50.
			name:      "nothing scheduled, resources requested, differently sized nodes, weighted",
			pod:       twoRequests(),
			nodes:     []*corev1.Node{node("node1", cores("4000", "10000")), node("node2", cores("6000", "10000"))},
			resources: []configv1.ResourceSpec{{Name: "memory", Weight: 2}, {Name: "cpu", Weight: 1}},
			want:      scores(58, 50),
		},
		{
			// Every container requests nothing, so each counts 100m and 200Mi.
			// node1: cpu 300m of 250m caps at 100, memory 600Mi/1000Mi = 60: 80.
			// node2: cpu 100m/250m = 40, memory 200Mi/1000Mi = 20: 30.
			name: "no resources requested, pods scheduled, nonzero request for resource",
			pod:  testutil.MakePod().Obj(),
			nodes: []*corev1.Node{
				node("node1", res{corev1.ResourceCPU: "250m", corev1.ResourceMemory: "1000Mi"}),
				node("node2", res{corev1.ResourceCPU: "250m", corev1.ResourceMemory: "1000Mi"}),
			},
			existing: onNode("node1", testutil.MakePod().Name("a"), testutil.MakePod().Name("b")),
			want:     scores(80, 30),
		},
		{
			name:      "bypass extended resource if the pod does not request",
			pod:       twoRequests(),
			nodes:     []*corev1.Node{node("node1", cores("6000", "10000")), node("node2", with(cores("6000", "10000"), extendedRes, "4"))},
			resources: extendedResourceSet,
			want:      scores(50, 50),
		},
		{
			// cpu and memory 50; xyz 2*100/4 = 50 on node1, 2*100/10 = 20 on
			// node2: 50 and 40.
			name: "honor extended resource if the pod requests",
			pod:  bare().Containers(with(cores("3000", "5000"), extendedRes, "2")).Obj(),
			nodes: []*corev1.Node{
				node("node1", with(cores("6000", "10000"), extendedRes, "4")),
				node("node2", with(cores("6000", "10000"), extendedRes, "10")),
			},
			resources: extendedResourceSet,
			want:      scores(50, 40),
		},
		{
			// (50 + 40) / 2 = 45 on both: xyz is not requested.
			name:  "if the node doesn't have a resource",
			pod:   bare().Containers(cores("3000", "4000")).Obj(),
			nodes: []*corev1.Node{node("node1", cores("6000", "10000")), node("node2", with(cores("6000", "10000"), extendedRes, "4"))},
			resources: []configv1.ResourceSpec{
				{Name: string(extendedRes), Weight: 2}, {Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1},
			},
			want: scores(45, 45),
		},
	})
}
