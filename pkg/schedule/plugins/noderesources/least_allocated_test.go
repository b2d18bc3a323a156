package noderesources_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
)

// TestLeastAllocatedScoringStrategy recreates kube-scheduler's test of the
// same name: ((allocatable - requested) * 100 / allocatable) per resource,
// weighted mean truncated.
func TestLeastAllocatedScoringStrategy(t *testing.T) {
	twoRequests := func() *corev1.Pod {
		return bare().Containers(cores("1000", "2000"), cores("2000", "3000")).Obj()
	}
	runFitScoreCases(t, configv1.LeastAllocated, []scoreCase{
		{
			name:  "nothing scheduled, nothing requested",
			pod:   bare().Obj(),
			nodes: []*corev1.Node{node("node1", cores("4000", "10000")), node("node2", cores("4000", "10000"))},
			want:  scores(100, 100),
		},
		{
			// node1: cpu (4000-3000)*100/4000 = 25, memory (10000-5000)*100/10000 = 50: 37.
			// node2: cpu (6000-3000)*100/6000 = 50, memory 50: 50.
			name:  "nothing scheduled, resources requested, differently sized nodes",
			pod:   twoRequests(),
			nodes: []*corev1.Node{node("node1", cores("4000", "10000")), node("node2", cores("6000", "10000"))},
			want:  scores(37, 50),
		},
		{
			name:     "no resources requested, pods scheduled",
			pod:      bare().Obj(),
			nodes:    []*corev1.Node{node("node1", cores("4000", "10000")), node("node2", cores("4000", "10000"))},
			existing: append(onNode("node1", bare(), bare()), onNode("node2", bare(), bare())...),
			want:     scores(100, 100),
		},
		{
			// node1: cpu (10000-6000)*100/10000 = 40, memory 100: 70.
			// node2: cpu 40, memory (20000-5000)*100/20000 = 75: 57.
			name:  "no resources requested, pods scheduled with resources",
			pod:   bare().Obj(),
			nodes: []*corev1.Node{node("node1", cores("10000", "20000")), node("node2", cores("10000", "20000"))},
			existing: append(
				onNode("node1", bare().Containers(cores("3000", "0")), bare().Containers(cores("3000", "0"))),
				onNode("node2", bare().Containers(cores("3000", "0")), bare().Containers(cores("3000", "5000")))...),
			want: scores(70, 57),
		},
		{
			// node1: cpu 40, memory (20000-5000)*100/20000 = 75: 57.
			// node2: cpu 40, memory (20000-10000)*100/20000 = 50: 45.
			name:     "resources requested, pods scheduled with resources",
			pod:      twoRequests(),
			nodes:    []*corev1.Node{node("node1", cores("10000", "20000")), node("node2", cores("10000", "20000"))},
			existing: append(onNode("node1", bare().Containers(cores("3000", "0"))), onNode("node2", bare().Containers(cores("3000", "5000")))...),
			want:     scores(57, 45),
		},
		{
			// node2: cpu 40, memory (50000-10000)*100/50000 = 80: 60.
			name:     "resources requested, pods scheduled with resources, differently sized nodes",
			pod:      twoRequests(),
			nodes:    []*corev1.Node{node("node1", cores("10000", "20000")), node("node2", cores("10000", "50000"))},
			existing: append(onNode("node1", bare().Containers(cores("3000", "0"))), onNode("node2", bare().Containers(cores("3000", "5000")))...),
			want:     scores(57, 60),
		},
		{
			// cpu 6000 > 4000 scores 0 on both. node1: memory 100: 50. node2: memory 50: 25.
			name:     "requested resources exceed node capacity",
			pod:      bare().Containers(cores("3000", "0")).Obj(),
			nodes:    []*corev1.Node{node("node1", cores("4000", "10000")), node("node2", cores("4000", "10000"))},
			existing: append(onNode("node1", bare().Containers(cores("3000", "0"))), onNode("node2", bare().Containers(cores("3000", "5000")))...),
			want:     scores(50, 25),
		},
		{
			name:     "zero node resources, pods scheduled with resources",
			pod:      bare().Obj(),
			nodes:    []*corev1.Node{testutil.MakeNode().Name("node1").Obj(), testutil.MakeNode().Name("node2").Obj()},
			existing: append(onNode("node1", bare().Containers(cores("3000", "0"))), onNode("node2", bare().Containers(cores("3000", "5000")))...),
			want:     scores(0, 0),
		},
		{
			// node1: (25*1 + 50*2) / 3 = 41. node2: (50*1 + 50*2) / 3 = 50.
			name:      "nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
			pod:       twoRequests(),
			nodes:     []*corev1.Node{node("node1", cores("4000", "10000")), node("node2", cores("6000", "10000"))},
			resources: []configv1.ResourceSpec{{Name: "memory", Weight: 2}, {Name: "cpu", Weight: 1}},
			want:      scores(41, 50),
		},
		{
			// A weight of 0 defaults to 1 in kubescheduler.config.k8s.io/v1
			// (kube-scheduler's internal-config test rejects it; its v1
			// defaulting never lets a 0 through). node1: 37, node2: 50.
			name:      "resource with zero weight is defaulted to 1",
			pod:       twoRequests(),
			nodes:     []*corev1.Node{node("node1", cores("4000", "10000")), node("node2", cores("6000", "10000"))},
			resources: []configv1.ResourceSpec{{Name: "memory", Weight: 1}, {Name: "cpu", Weight: 0}},
			want:      scores(37, 50),
		},
		{
			// The pod does not request abc.com/xyz, so it is left out: 50 on both.
			name:      "bypass extended resource if the pod does not request",
			pod:       twoRequests(),
			nodes:     []*corev1.Node{node("node1", cores("6000", "10000")), node("node2", with(cores("6000", "10000"), extendedRes, "4"))},
			resources: extendedResourceSet,
			want:      scores(50, 50),
		},
		{
			// cpu and memory 50 on both; xyz (4-2)*100/4 = 50 on node1 and
			// (10-2)*100/10 = 80 on node2: 50 and 60.
			name: "honor extended resource if the pod requests",
			pod:  bare().Containers(with(cores("3000", "5000"), extendedRes, "2")).Obj(),
			nodes: []*corev1.Node{
				node("node1", with(cores("6000", "10000"), extendedRes, "4")),
				node("node2", with(cores("6000", "10000"), extendedRes, "10")),
			},
			resources: extendedResourceSet,
			want:      scores(50, 60),
		},
		{
			// The pod does not request xyz, so its weight 2 never counts:
			// (50 + 60) / 2 = 55 on both.
			name:  "if the node doesn't have a resource",
			pod:   bare().Containers(cores("3000", "4000")).Obj(),
			nodes: []*corev1.Node{node("node1", cores("6000", "10000")), node("node2", with(cores("6000", "10000"), extendedRes, "4"))},
			resources: []configv1.ResourceSpec{
				{Name: string(extendedRes), Weight: 2}, {Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1},
			},
			want: scores(55, 55),
		},
		{
			// A requested scalar the node lacks is left out too: node1 scores
			// cpu and memory only (50, 50), node2 adds xyz (4-2)*100/4 = 50.
			name:      "requested extended resource the node does not have",
			pod:       bare().Containers(with(cores("3000", "5000"), extendedRes, "2")).Obj(),
			nodes:     []*corev1.Node{node("node1", cores("6000", "10000")), node("node2", with(cores("6000", "10000"), extendedRes, "4"))},
			resources: extendedResourceSet,
			want:      scores(50, 50),
		},
		{
			// ephemeral-storage scores like cpu and memory, without non-zero
			// defaults: node1 (100-40)*100/100 = 60, node2 (200-40)*100/200 = 80.
			name: "ephemeral storage",
			pod:  bare().Containers(res{corev1.ResourceEphemeralStorage: "30"}).Obj(),
			nodes: []*corev1.Node{
				node("node1", res{corev1.ResourceEphemeralStorage: "100"}),
				node("node2", res{corev1.ResourceEphemeralStorage: "200"}),
			},
			existing:  append(onNode("node1", bare().Containers(res{corev1.ResourceEphemeralStorage: "10"})), onNode("node2", bare().Containers(res{corev1.ResourceEphemeralStorage: "10"}))...),
			resources: []configv1.ResourceSpec{{Name: string(corev1.ResourceEphemeralStorage), Weight: 1}},
			want:      scores(60, 80),
		},
		{
			// "pods" is not looked up as the node's pod count: kube-scheduler
			// finds no scalar of that name and leaves it out.
			name:      "pods is not a scored resource",
			pod:       bare().Containers(cores("1000", "0")).Obj(),
			nodes:     []*corev1.Node{node("node1", cores("4000", "10000")), node("node2", cores("2000", "10000"))},
			resources: []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: string(corev1.ResourcePods), Weight: 1}},
			want:      scores(75, 50),
		},
	})
}
