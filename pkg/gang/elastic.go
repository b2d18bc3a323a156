package gang

import "strings"

// Elasticity is what the workloads a gang was expanded from say of running
// with fewer members than they have (pkg/workload reads it; explain's
// lower-minimum advice follows it, issue #27): an elastic workload (a
// PyTorchJob's spec.elasticPolicy, a RayCluster with in-tree autoscaling, a
// batch Job whose minAvailable is below its replicas) runs with as few as
// Min members; a fixed one (torchrun without an elastic policy, MPI, a
// JobSet, a LeaderWorkerSet) needs every member, whatever a PodGroup's
// minimum says.
type Elasticity struct {
	// Elastic says the workloads run with fewer members, down to Min.
	Elastic bool
	Min     int32
	// Why says, per workload, what says so: "PyTorchJob \"x\":
	// spec.elasticPolicy.minReplicas 2 of 8 workers".
	Why []string
}

// ElasticityOf is one workload's part of a gang's Elasticity: of its Pods,
// how few it runs with (Min; Pods when it is fixed), and what says so.
type ElasticityOf struct {
	Min, Pods int32
	Why       string
}

// CombineElasticity is the elasticity of a gang of several workloads: the
// fewest members each runs with, summed; elastic when one of them is.
// Nil without any.
func CombineElasticity(parts []ElasticityOf) *Elasticity {
	if len(parts) == 0 {
		return nil
	}
	e := &Elasticity{}
	for _, p := range parts {
		e.Min += min(p.Min, p.Pods)
		e.Elastic = e.Elastic || p.Min < p.Pods
		e.Why = append(e.Why, p.Why)
	}
	return e
}

// Reason joins Why.
func (e *Elasticity) Reason() string { return strings.Join(e.Why, "; ") }
