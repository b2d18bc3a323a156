package defaultpreemption

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// The defaults kube-scheduler v1.37 gives DefaultPreemptionArgs
// (pkg/scheduler/apis/config/v1/defaults.go).
const (
	DefaultMinCandidateNodesPercentage int32 = 10
	DefaultMinCandidateNodesAbsolute   int32 = 100
)

// Args are the plugin's arguments with every default filled in.
type Args struct {
	// MinCandidateNodesPercentage is the least number of candidates to
	// shortlist, as a percentage of the nodes where preemption might help.
	MinCandidateNodesPercentage int32
	// MinCandidateNodesAbsolute is the least number of candidates to shortlist.
	MinCandidateNodesAbsolute int32
}

// ParseArgs applies kube-scheduler's defaults to args (nil means all
// defaults) and validates the result as kube-scheduler does. args is not
// modified.
func ParseArgs(obj runtime.Object) (Args, error) {
	var in *configv1.DefaultPreemptionArgs
	switch a := obj.(type) {
	case nil:
		in = &configv1.DefaultPreemptionArgs{}
	case *configv1.DefaultPreemptionArgs:
		if a == nil {
			in = &configv1.DefaultPreemptionArgs{}
		} else {
			in = a
		}
	default:
		return Args{}, fmt.Errorf("got args of type %T, want *DefaultPreemptionArgs", obj)
	}
	out := Args{MinCandidateNodesPercentage: DefaultMinCandidateNodesPercentage, MinCandidateNodesAbsolute: DefaultMinCandidateNodesAbsolute}
	if in.MinCandidateNodesPercentage != nil {
		out.MinCandidateNodesPercentage = *in.MinCandidateNodesPercentage
	}
	if in.MinCandidateNodesAbsolute != nil {
		out.MinCandidateNodesAbsolute = *in.MinCandidateNodesAbsolute
	}
	if err := out.Validate(); err != nil {
		return Args{}, err
	}
	return out, nil
}

// Validate checks the arguments as kube-scheduler's
// ValidateDefaultPreemptionArgs does, naming the offending field.
func (a Args) Validate() error {
	var errs field.ErrorList
	percentage := field.NewPath("minCandidateNodesPercentage")
	absolute := field.NewPath("minCandidateNodesAbsolute")
	if a.MinCandidateNodesPercentage < 0 || a.MinCandidateNodesPercentage > 100 {
		errs = append(errs, field.Invalid(percentage, a.MinCandidateNodesPercentage, "not in valid range [0, 100]"))
	}
	if a.MinCandidateNodesAbsolute < 0 {
		errs = append(errs, field.Invalid(absolute, a.MinCandidateNodesAbsolute, "not in valid range [0, inf)"))
	}
	if a.MinCandidateNodesPercentage == 0 && a.MinCandidateNodesAbsolute == 0 {
		errs = append(errs,
			field.Invalid(percentage, a.MinCandidateNodesPercentage, "cannot be zero at the same time as minCandidateNodesAbsolute"),
			field.Invalid(absolute, a.MinCandidateNodesAbsolute, "cannot be zero at the same time as minCandidateNodesPercentage"))
	}
	return errs.ToAggregate()
}

// numCandidates is how many candidates a dry run collects before it stops,
// for numNodes nodes where preemption might help: a percentage of them, at
// least the absolute minimum, at most all of them (kube-scheduler's
// calculateNumCandidates, in the same int32 arithmetic).
func (a Args) numCandidates(numNodes int32) int32 {
	n := numNodes * a.MinCandidateNodesPercentage / 100
	if n < a.MinCandidateNodesAbsolute {
		n = a.MinCandidateNodesAbsolute
	}
	if n > numNodes {
		n = numNodes
	}
	return n
}
