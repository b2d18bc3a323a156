package noderesources

import (
	"context"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const (
	// BalancedAllocationName is NodeResourcesBalancedAllocation's name in profiles.
	BalancedAllocationName = "NodeResourcesBalancedAllocation"

	balancedAllocationPreScoreStateKey framework.StateKey = "PreScore" + BalancedAllocationName
)

var (
	_ framework.PreScorePlugin = &BalancedAllocation{}
	_ framework.ScorePlugin    = &BalancedAllocation{}
)

// BalancedAllocation is NodeResourcesBalancedAllocation: it favours nodes
// whose resource fractions (requested / allocatable, cpu and memory by
// default) stay close to each other, and more so when the pod brings them
// closer than they were.
type BalancedAllocation struct {
	resourceAllocation
}

// NewBalancedAllocation returns NodeResourcesBalancedAllocation configured by
// args, a *configv1.NodeResourcesBalancedAllocationArgs, or nil for
// kube-scheduler's defaults (cpu and memory).
func NewBalancedAllocation(args runtime.Object, h framework.Handle) (framework.Plugin, error) {
	baArgs, err := balancedAllocationArgs(args)
	if err != nil {
		return nil, err
	}
	return &BalancedAllocation{resourceAllocation: resourceAllocation{
		resources:    newScoredResources(baArgs.Resources),
		useRequested: true,
		handle:       h,
	}}, nil
}

// Name returns BalancedAllocationName.
func (ba *BalancedAllocation) Name() string { return BalancedAllocationName }

// balancedAllocationPreScoreState holds the pod's request for each scored resource.
type balancedAllocationPreScoreState struct {
	podRequests []int64
}

// Clone implements framework.StateData; the state is never changed.
func (s *balancedAllocationPreScoreState) Clone() framework.StateData { return s }

// PreScore computes the pod's requests (without non-zero defaults) and
// skips the plugin for a pod that requests none of the scored resources:
// kube-scheduler does so that best-effort pods do not all land on the one
// node that looks most balanced (kubernetes/kubernetes#129138).
func (ba *BalancedAllocation) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	podRequests := ba.podRequests(pod)
	if isBestEffort(podRequests) {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(balancedAllocationPreScoreStateKey, &balancedAllocationPreScoreState{podRequests: podRequests})
	return nil
}

// Score is 50 + (50 + with - without) / 2, where with and without are the
// balance of the node with and without the pod: (1 - standard deviation of
// the fractions) * 100. A node the pod leaves as balanced as it was scores
// about 75; one it balances better, up to 100; one it unbalances, down to 50.
func (ba *BalancedAllocation) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	var podRequests []int64
	if s, err := framework.ReadState[*balancedAllocationPreScoreState](state, balancedAllocationPreScoreStateKey); err == nil {
		podRequests = s.podRequests
	}
	if podRequests == nil {
		// PreScore did not run: compute, and score a best-effort pod 0.
		podRequests = ba.podRequests(pod)
		if isBestEffort(podRequests) {
			return 0, nil
		}
	}
	if len(ba.resources) == 0 {
		return 0, framework.NewStatus(framework.Error, "resources not found")
	}

	// Fractions of the resources that take part on this node, with and
	// without the pod; inline room for the usual handful of resources.
	withPod := make([]float64, 0, 8)
	withoutPod := make([]float64, 0, 8)
	for i := range ba.resources {
		allocatable, allocated, ok := ba.amounts(i, podRequests[i], nodeInfo)
		if !ok {
			continue
		}
		withPod = append(withPod, fraction(allocated+podRequests[i], allocatable))
		withoutPod = append(withoutPod, fraction(allocated, allocatable))
	}
	scoreWithPod := balancedResourceScore(withPod)
	scoreWithoutPod := balancedResourceScore(withoutPod)
	return framework.MaxNodeScore/2 + (framework.MaxNodeScore/2+scoreWithPod-scoreWithoutPod)/2, nil
}

// fraction is requested / allocatable, capped at 1.
func fraction(requested, allocatable int64) float64 {
	f := float64(requested) / float64(allocatable)
	if f > 1 {
		return 1
	}
	return f
}

// balancedResourceScore is (1 - std) * 100, truncated, where std is the
// population standard deviation of the fractions: |f0 - f1| / 2 for two,
// 0 for fewer. The arithmetic follows kube-scheduler's step by step so that
// scores agree to the last bit.
func balancedResourceScore(fractions []float64) int64 {
	var std float64
	switch n := len(fractions); {
	case n == 2:
		std = math.Abs((fractions[0] - fractions[1]) / 2)
	case n > 2:
		var total float64
		for _, f := range fractions {
			total += f
		}
		mean := total / float64(n)
		var sum float64
		for _, f := range fractions {
			sum += (f - mean) * (f - mean)
		}
		std = math.Sqrt(sum / float64(n))
	}
	return int64((1 - std) * float64(framework.MaxNodeScore))
}

// ScoreExtensions returns nil: scores are already 0-100.
func (ba *BalancedAllocation) ScoreExtensions() framework.ScoreExtensions { return nil }
