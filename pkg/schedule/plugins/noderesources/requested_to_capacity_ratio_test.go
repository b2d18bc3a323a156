package noderesources_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// TestRequestedToCapacityRatioScoringStrategy recreates kube-scheduler's
// test of the same name with the shape {0: 10, 100: 0}: utilization 0%
// scores 100, full scores 0, linear between.
func TestRequestedToCapacityRatioScoringStrategy(t *testing.T) {
	shape := []configv1.UtilizationShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}
	runFitScoreCases(t, configv1.RequestedToCapacityRatio, []scoreCase{
		{
			name:     "nothing scheduled, nothing requested (default - least requested nodes have priority)",
			pod:      bare().Obj(),
			nodes:    []*corev1.Node{node("node1", cores("4000", "10000")), node("node2", cores("4000", "10000"))},
			existing: onNode("node1", bare(), bare()),
			shape:    shape,
			want:     scores(100, 100),
		},
		{
			// node1: cpu 3000/4000 = 75% -> 25, memory 50% -> 50: round(37.5) = 38.
			// node2: cpu 50% -> 50, memory 50: 50.
			name:     "nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have priority)",
			pod:      bare().Containers(cores("1000", "2000"), cores("2000", "3000")).Obj(),
			nodes:    []*corev1.Node{node("node1", cores("4000", "10000")), node("node2", cores("6000", "10000"))},
			existing: onNode("node1", bare(), bare()),
			shape:    shape,
			want:     scores(38, 50),
		},
		{
			name:     "no resources requested, pods scheduled with resources (default - least requested nodes have priority)",
			pod:      bare().Obj(),
			nodes:    []*corev1.Node{node("node1", cores("4000", "10000")), node("node2", cores("6000", "10000"))},
			existing: append(onNode("node1", bare().Containers(cores("3000", "5000"))), onNode("node2", bare().Containers(cores("3000", "5000")))...),
			shape:    shape,
			want:     scores(38, 50),
		},
	})
}

// TestResourceBinPackingSingleExtended recreates kube-scheduler's test: bin
// packing on intel.com/foo with the shape {0: 0, 100: 1}, so scores run 0-10.
func TestResourceBinPackingSingleExtended(t *testing.T) {
	const foo corev1.ResourceName = "intel.com/foo"
	nodes := func() []*corev1.Node {
		return []*corev1.Node{
			node("node1", res{corev1.ResourceCPU: "4", corev1.ResourceMemory: "10000Mi", foo: "8"}),
			node("node2", res{corev1.ResourceCPU: "4", corev1.ResourceMemory: "10000Mi", foo: "4"}),
		}
	}
	shape := []configv1.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 1}}
	resources := []configv1.ResourceSpec{{Name: string(foo), Weight: 1}}
	runFitScoreCases(t, configv1.RequestedToCapacityRatio, []scoreCase{
		{
			// The pod does not request intel.com/foo: no resource takes part.
			name: "nothing scheduled, nothing requested", pod: bare().Obj(),
			nodes: nodes(), shape: shape, resources: resources, want: scores(0, 0),
		},
		{
			// node1: 2/8 = 25% -> 10*25/100 = 2. node2: 2/4 = 50% -> 5.
			name: "resources requested, pods scheduled with less resources", pod: bare().Containers(res{foo: "2"}).Obj(),
			nodes: nodes(), existing: onNode("node1", bare()), shape: shape, resources: resources, want: scores(2, 5),
		},
		{
			// node2: (2+2)/4 = 100% -> 10.
			name: "resources requested, pods scheduled with resources, on node with existing pod running", pod: bare().Containers(res{foo: "2"}).Obj(),
			nodes: nodes(), existing: onNode("node2", bare().Containers(res{foo: "2"})), shape: shape, resources: resources, want: scores(2, 10),
		},
		{
			// node1: 4/8 = 50% -> 5. node2: 4/4 -> 10.
			name: "resources requested, pods scheduled with more resources", pod: bare().Containers(res{foo: "4"}).Obj(),
			nodes: nodes(), existing: onNode("node1", bare()), shape: shape, resources: resources, want: scores(5, 10),
		},
	})
}

// TestResourceBinPackingMultipleExtended recreates kube-scheduler's test:
// intel.com/foo weighted 3 and intel.com/bar weighted 5, rounded mean.
func TestResourceBinPackingMultipleExtended(t *testing.T) {
	const foo, bar corev1.ResourceName = "intel.com/foo", "intel.com/bar"
	nodes := func() []*corev1.Node {
		return []*corev1.Node{
			node("node1", res{corev1.ResourceCPU: "4", corev1.ResourceMemory: "10000Mi", foo: "8", bar: "4"}),
			node("node2", res{corev1.ResourceCPU: "4", corev1.ResourceMemory: "10000Mi", foo: "4", bar: "8"}),
		}
	}
	shape := []configv1.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 1}}
	resources := []configv1.ResourceSpec{{Name: string(foo), Weight: 3}, {Name: string(bar), Weight: 5}}
	runFitScoreCases(t, configv1.RequestedToCapacityRatio, []scoreCase{
		{
			name: "nothing scheduled, nothing requested", pod: bare().Obj(),
			nodes: nodes(), shape: shape, resources: resources, want: scores(0, 0),
		},
		{
			// node1: foo 2/8 -> 2, bar 2/4 -> 5: round((2*3 + 5*5) / 8) = round(3.875) = 4.
			// node2: foo 2/4 -> 5, bar 2/8 -> 2: round((5*3 + 2*5) / 8) = round(3.125) = 3.
			name: "resources requested, pods scheduled with less resources", pod: bare().Containers(res{foo: "2", bar: "2"}).Obj(),
			nodes: nodes(), existing: onNode("node1", bare()), shape: shape, resources: resources, want: scores(4, 3),
		},
		{
			// node2: foo (4+2)/4 is past capacity -> 10, bar (2+2)/8 -> 5:
			// round((10*3 + 5*5) / 8) = round(6.875) = 7.
			name: "resources requested, pods scheduled with resources, on node with existing pod running", pod: bare().Containers(res{foo: "2", bar: "2"}).Obj(),
			nodes: nodes(), existing: onNode("node2", bare().Containers(res{foo: "4", bar: "2"})), shape: shape, resources: resources, want: scores(4, 7),
		},
		{
			// node1: foo 4/8 -> 5, bar 2/4 -> 5: 5. node2: foo 4/4 -> 10,
			// bar 2/8 -> 2: round((30 + 10) / 8) = 5.
			name: "resources requested, pods scheduled with more resources", pod: bare().Containers(res{foo: "4", bar: "2"}).Obj(),
			nodes: nodes(), existing: onNode("node1", bare()), shape: shape, resources: resources, want: scores(5, 5),
		},
	})
}
