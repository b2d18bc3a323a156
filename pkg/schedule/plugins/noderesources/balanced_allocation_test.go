package noderesources_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
)

// milli is a request or capacity of milli-CPU and bytes, as kube-scheduler's
// balanced allocation tests write them (makeNode("node1", 4000, 10000, nil)).
func milli(milliCPU, memory string) res {
	return res{corev1.ResourceCPU: milliCPU + "m", corev1.ResourceMemory: memory}
}

// TestNodeResourcesBalancedAllocation recreates kube-scheduler v1.37's test:
// score = 50 + (50 + balance with the pod - balance without it) / 2, where
// balance = (1 - std of the fractions) * 100, truncated.
func TestNodeResourcesBalancedAllocation(t *testing.T) {
	withGPU := func(r res, n string) res { return with(r, gpu, n) }
	threeResources := []configv1.ResourceSpec{
		{Name: string(corev1.ResourceCPU), Weight: 1},
		{Name: string(corev1.ResourceMemory), Weight: 1},
		{Name: string(gpu), Weight: 1},
	}
	tests := []struct {
		name       string
		pod        *corev1.Pod
		nodes      []*corev1.Node
		existing   []*corev1.Pod
		args       *configv1.NodeResourcesBalancedAllocationArgs
		noPreScore bool
		// wantSkip expects PreScore to return Skip.
		wantSkip bool
		want     framework.NodeScoreList
	}{
		{
			name:     "nothing scheduled, nothing requested, skip in PreScore",
			pod:      bare().Obj(),
			nodes:    []*corev1.Node{node("node1", milli("4000", "10000")), node("node2", milli("4000", "10000"))},
			wantSkip: true,
		},
		{
			// A container with no requests is best effort here: no non-zero defaults.
			name:     "request-less container, skip in PreScore",
			pod:      bare().Containers(res{}).Obj(),
			nodes:    []*corev1.Node{node("node1", milli("4000", "10000"))},
			wantSkip: true,
		},
		{
			// Requests of unscored resources only make the pod best effort for the plugin.
			name:     "requests only an unscored resource, skip in PreScore",
			pod:      bare().Containers(res{gpu: "1"}).Obj(),
			nodes:    []*corev1.Node{node("node1", withGPU(milli("4000", "10000"), "8"))},
			wantSkip: true,
		},
		{
			// node1: cpu 0 -> 75%, memory 0 -> 50%: with = (1 - 0.125) * 100 = 87,
			// without = 100: 50 + (50 + 87 - 100) / 2 = 68.
			// node2: 50% and 50%: 100 and 100: 75.
			name:  "nothing scheduled, resources requested, differently sized nodes",
			pod:   bare().Containers(milli("1000", "2000"), milli("2000", "3000")).Obj(),
			nodes: []*corev1.Node{node("node1", milli("4000", "10000")), node("node2", milli("6000", "10000"))},
			want:  scores(68, 75),
		},
		{
			// node1: cpu 30% -> 60%, memory 0 -> 25%: 82 vs 85: 73.
			// node2: cpu 30% -> 60%, memory 25% -> 50%: 95 vs 97: 74.
			name:  "resources requested, pods scheduled with resources",
			pod:   bare().Containers(milli("1000", "2000"), milli("2000", "3000")).Obj(),
			nodes: []*corev1.Node{node("node1", milli("10000", "20000")), node("node2", milli("10000", "20000"))},
			existing: append(
				onNode("node1", bare().Containers(milli("1000", "0"), milli("2000", "0"))),
				onNode("node2", bare().Containers(milli("1000", "2000"), milli("2000", "3000")))...),
			want: scores(73, 74),
		},
		{
			name:       "resources requested, pods scheduled with resources if PreScore not called",
			pod:        bare().Containers(milli("1000", "2000"), milli("2000", "3000")).Obj(),
			nodes:      []*corev1.Node{node("node1", milli("10000", "20000")), node("node2", milli("10000", "20000"))},
			noPreScore: true,
			existing: append(
				onNode("node1", bare().Containers(milli("1000", "0"), milli("2000", "0"))),
				onNode("node2", bare().Containers(milli("1000", "2000"), milli("2000", "3000")))...),
			want: scores(73, 74),
		},
		{
			// node2: cpu 30% -> 60%, memory 10% -> 20%: 80 vs 90: 70.
			name:  "resources requested, pods scheduled with resources, differently sized nodes",
			pod:   bare().Containers(milli("1000", "2000"), milli("2000", "3000")).Obj(),
			nodes: []*corev1.Node{node("node1", milli("10000", "20000")), node("node2", milli("10000", "50000"))},
			existing: append(
				onNode("node1", bare().Containers(milli("1000", "0"), milli("2000", "0"))),
				onNode("node2", bare().Containers(milli("1000", "2000"), milli("2000", "3000")))...),
			want: scores(73, 70),
		},
		{
			// node1: cpu 100% -> 100%, memory 0 -> 100%: 100 vs 50: 100.
			// node2: cpu 0 -> 0, memory 0 -> 100%: 50 vs 100: 50.
			name:     "resources requested, pods scheduled with resources, nodes to reach min/max score",
			pod:      bare().Containers(res{corev1.ResourceMemory: "2000"}, res{corev1.ResourceMemory: "3000"}).Obj(),
			nodes:    []*corev1.Node{node("node1", milli("3000", "5000")), node("node2", milli("3000", "5000"))},
			existing: onNode("node1", bare().Containers(milli("1000", "0"), milli("2000", "0"))),
			want:     scores(100, 50),
		},
		{
			// node1: cpu 50% -> 100%, memory 0 -> 0: 50 vs 75: 62.
			// node2: cpu 50% -> 100%, memory 50% -> 50%: 75 vs 100: 62.
			name:  "requested resources at node capacity",
			pod:   bare().Containers(res{corev1.ResourceCPU: "1000m"}, res{corev1.ResourceCPU: "2000m"}).Obj(),
			nodes: []*corev1.Node{node("node1", milli("6000", "10000")), node("node2", milli("6000", "10000"))},
			existing: append(
				onNode("node1", bare().Containers(milli("1000", "0"), milli("2000", "0"))),
				onNode("node2", bare().Containers(milli("1000", "2000"), milli("2000", "3000")))...),
			want: scores(62, 62),
		},
		{
			// Three fractions, population standard deviation.
			// node1: cpu 85.7%, memory 12.5%, gpu 37.5% -> 50%: 70 vs 69: 75.
			// node2: cpu 85.7%, memory 12.5%, gpu 0 -> 12.5%: 65 vs 62: 76.
			name: "scalar resource is included in the score computation if pod requests the scalar resource",
			pod:  bare().Containers(withGPU(milli("0", "0"), "1")).Obj(),
			nodes: []*corev1.Node{
				node("node1", withGPU(milli("3500", "40000"), "8")),
				node("node2", withGPU(milli("3500", "40000"), "8")),
			},
			existing: append(
				onNode("node1", bare().Containers(milli("1000", "2000"), withGPU(milli("2000", "3000"), "3"))),
				onNode("node2", bare().Containers(milli("1000", "2000"), milli("2000", "3000")))...),
			args: &configv1.NodeResourcesBalancedAllocationArgs{Resources: threeResources},
			want: scores(75, 76),
		},
		{
			// node1: cpu 0 -> 85.7%, memory 0 -> 12.5%, gpu left out: 63 vs 100: 56.
			name: "scalar resource is not included in the score computation if pod doesn't request the scalar resource",
			pod:  bare().Containers(milli("1000", "2000"), milli("2000", "3000")).Obj(),
			nodes: []*corev1.Node{
				node("node1", withGPU(milli("3500", "40000"), "8")),
				node("node2", milli("3500", "40000")),
			},
			args: &configv1.NodeResourcesBalancedAllocationArgs{Resources: threeResources},
			want: scores(56, 56),
		},
		{
			// kube-scheduler counts the devices of a DeviceClass naming this
			// resource (76 and 75 in its test). The snapshot has no
			// DeviceClasses and the nodes advertise none of it, so it is left
			// out: node1 cpu 85.7%, memory 0: 57 vs 57: 75. node2 cpu 85.7%,
			// memory 12.5%: 63 vs 63: 75.
			name:  "extended resource with no allocatable is left out",
			pod:   bare().Containers(res{extendedResourceDRA: "1"}).Obj(),
			nodes: []*corev1.Node{node("node1", milli("3500", "40000")), node("node2", milli("3500", "40000"))},
			existing: append(
				onNode("node1", bare().Containers(milli("1000", "0"), milli("2000", "0"))),
				onNode("node2", bare().Containers(milli("1000", "2000"), milli("2000", "3000")))...),
			args: &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{
				{Name: string(corev1.ResourceCPU), Weight: 1},
				{Name: string(corev1.ResourceMemory), Weight: 1},
				{Name: string(extendedResourceDRA), Weight: 1},
			}},
			want: scores(75, 75),
		},
		{
			// One resource: no deviation at all, 100 with and without: 75.
			name:  "a single resource always scores 75",
			pod:   bare().Containers(milli("1000", "0")).Obj(),
			nodes: []*corev1.Node{node("node1", milli("2000", "10")), node("node2", milli("8000", "10"))},
			args:  &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{{Name: "cpu"}}},
			want:  scores(75, 75),
		},
		{
			// Plain requests, not the non-zero defaults: node1 runs a
			// request-less pod that counts as nothing. cpu 0 -> 50%,
			// memory 0 -> 50%: 100 vs 100: 75.
			name:     "request-less pods on the node count as nothing",
			pod:      bare().Containers(milli("1000", "5000")).Obj(),
			nodes:    []*corev1.Node{node("node1", milli("2000", "10000")), node("node2", milli("2000", "10000"))},
			existing: onNode("node1", bare().Containers(res{})),
			want:     scores(75, 75),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var args runtime.Object
			if tc.args != nil {
				args = tc.args
			}
			pl := newPlugin[*noderesources.BalancedAllocation](t, noderesources.NewBalancedAllocation, args)
			status, got := scoreNodes(t, pl, tc.pod, nodeInfos(tc.nodes, tc.existing), !tc.noPreScore)
			if tc.wantSkip {
				if !status.IsSkip() {
					t.Fatalf("PreScore = %v, want Skip", status)
				}
				// Without PreScore, Score scores a best-effort pod 0.
				_, got := scoreNodes(t, pl, tc.pod, nodeInfos(tc.nodes, tc.existing), false)
				for _, s := range got {
					if s.Score != 0 {
						t.Errorf("Score on %s = %d without PreScore, want 0", s.Name, s.Score)
					}
				}
				return
			}
			if !status.IsSuccess() {
				t.Fatalf("PreScore = %v", status)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}
