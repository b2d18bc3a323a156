package binpack

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/volcano"
)

// TestNew follows binpack's calculateWeight: weights default to 1, a
// negative cpu, memory or resource weight is 1, a value that is not an int
// is ignored (Arguments.GetInt), binpack.resources lists the scalars.
func TestNew(t *testing.T) {
	b := New(volcano.Arguments{
		WeightArg: 10, CPUArg: -3, MemoryArg: 2.5,
		ResourcesArg: "nvidia.com/gpu, example.com/foo", "binpack.resources.nvidia.com/gpu": 2,
	})
	want := map[corev1.ResourceName]int{"cpu": 1, "memory": 1, "nvidia.com/gpu": 2, "example.com/foo": 1}
	if b.Weight != 10 {
		t.Errorf("weight %d, want 10", b.Weight)
	}
	if diff := cmp.Diff(want, b.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
}

// TestScore follows BinPackingScore and ResourceBinPackingScore, by hand.
func TestScore(t *testing.T) {
	node := testutil.MakeNode().Name("n").Capacity(testutil.Res{"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "8"}).Obj()
	used := testutil.MakePod().Name("used").Req(testutil.Res{"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "4"}).Node("n").Obj()
	ni := framework.BuildNodeInfos([]*corev1.Node{node}, []*corev1.Pod{used})[0]
	tests := []struct {
		name string
		args volcano.Arguments
		pod  testutil.Res
		want float64
	}{
		// cpu (2+2)/8 = 0.5, memory (8+8)/32 = 0.5: 0.5 x 100.
		{"cpu and memory", nil, testutil.Res{"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "2"}, 50},
		// GPUs weighed 2: (0.5 + 0.5 + 2 x 6/8) / 4 x 100 x 3 = 187.5.
		{"GPUs weighed, weight 3", volcano.Arguments{WeightArg: 3, ResourcesArg: "nvidia.com/gpu", "binpack.resources.nvidia.com/gpu": 2},
			testutil.Res{"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "2"}, 187.5},
		// A resource the pod does not request is not weighed: cpu alone.
		{"cpu only", nil, testutil.Res{"cpu": "6"}, 100},
		// More than is left of one resource: 0 for the node.
		{"overflow", nil, testutil.Res{"cpu": "7", "memory": "1Gi"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testutil.MakePod().Name("p").Req(tt.pod).Obj()
			if got := New(tt.args).Score(pod, ni); got != tt.want {
				t.Errorf("score %v, want %v", got, tt.want)
			}
		})
	}
}
