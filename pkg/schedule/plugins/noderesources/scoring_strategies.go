package noderesources

import (
	"math"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// maxUtilization is 100%: RequestedToCapacityRatio's shape is defined over
// utilization in percent.
const maxUtilization = 100

// scoringStrategy is one of NodeResourcesFit's scoring strategies: a score
// per resource from the requested amount (the node's plus the pod's) and the
// allocatable amount, combined into a weighted mean.
type scoringStrategy struct {
	name          configv1.ScoringStrategyType
	resourceScore func(requested, allocatable int64) int64
	// requestedToCapacityRatio weighs only resources that score above zero,
	// and rounds the mean where the other strategies truncate it.
	requestedToCapacityRatio bool
}

func newScoringStrategy(strategy *configv1.ScoringStrategy) *scoringStrategy {
	switch strategy.Type {
	case configv1.MostAllocated:
		return &scoringStrategy{name: strategy.Type, resourceScore: mostRequestedScore}
	case configv1.RequestedToCapacityRatio:
		shape := make(functionShape, 0, len(strategy.RequestedToCapacityRatio.Shape))
		for _, point := range strategy.RequestedToCapacityRatio.Shape {
			// Shape scores are 0-10; node scores are 0-100.
			shape = append(shape, functionShapePoint{
				utilization: int64(point.Utilization),
				score:       int64(point.Score) * (framework.MaxNodeScore / maxCustomPriorityScore),
			})
		}
		return &scoringStrategy{name: strategy.Type, resourceScore: shape.resourceScore, requestedToCapacityRatio: true}
	default:
		return &scoringStrategy{name: configv1.LeastAllocated, resourceScore: leastRequestedScore}
	}
}

// leastRequestedScore favours free capacity: the unrequested share of the
// node on a 0-100 scale, 0 once the request exceeds the node.
func leastRequestedScore(requested, allocatable int64) int64 {
	if allocatable == 0 || requested > allocatable {
		return 0
	}
	return (allocatable - requested) * framework.MaxNodeScore / allocatable
}

// mostRequestedScore favours packing: the requested share of the node on a
// 0-100 scale, capped at 100 (non-zero defaults can push requests past
// allocatable).
func mostRequestedScore(requested, allocatable int64) int64 {
	if allocatable == 0 {
		return 0
	}
	if requested > allocatable {
		requested = allocatable
	}
	return requested * framework.MaxNodeScore / allocatable
}

// functionShapePoint is a point of a broken linear function.
type functionShapePoint struct {
	utilization int64
	score       int64
}

// functionShape is a broken linear function given by its points, sorted by
// utilization: flat before the first point and after the last, linear
// between neighbours (with integer division, as kube-scheduler computes it).
type functionShape []functionShapePoint

func (shape functionShape) at(p int64) int64 {
	for i := range shape {
		if p <= shape[i].utilization {
			if i == 0 {
				return shape[0].score
			}
			prev := shape[i-1]
			return prev.score + (shape[i].score-prev.score)*(p-prev.utilization)/(shape[i].utilization-prev.utilization)
		}
	}
	return shape[len(shape)-1].score
}

// resourceScore maps the utilization in percent (truncated) through the
// shape; a request beyond the node counts as full utilization.
func (shape functionShape) resourceScore(requested, allocatable int64) int64 {
	if allocatable == 0 || requested > allocatable {
		return shape.at(maxUtilization)
	}
	return shape.at(requested * maxUtilization / allocatable)
}

// score combines the per-resource scores of the resources that take part on
// this node into their weighted mean.
func (s *scoringStrategy) score(alloc *resourceAllocation, podRequests []int64, nodeInfo *framework.NodeInfo) int64 {
	var nodeScore, weightSum int64
	for i := range alloc.resources {
		allocatable, allocated, ok := alloc.amounts(i, podRequests[i], nodeInfo)
		if !ok {
			continue
		}
		score := s.resourceScore(allocated+podRequests[i], allocatable)
		if s.requestedToCapacityRatio && score <= 0 {
			continue
		}
		weight := alloc.resources[i].weight
		nodeScore += score * weight
		weightSum += weight
	}
	if weightSum == 0 {
		return 0
	}
	if s.requestedToCapacityRatio {
		return int64(math.Round(float64(nodeScore) / float64(weightSum)))
	}
	return nodeScore / weightSum
}
