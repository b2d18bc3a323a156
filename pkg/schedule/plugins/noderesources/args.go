package noderesources

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// maxCustomPriorityScore is the highest score a RequestedToCapacityRatio
// shape point may give; scores are scaled from 0-10 up to 0-100.
const maxCustomPriorityScore = 10

// The resource weights kube-scheduler accepts for NodeResourcesFit scoring.
const (
	minResourceWeight = 1
	maxResourceWeight = 100
)

// defaultResourceSpec is the resource set both plugins score when none is
// configured: cpu and memory, equally weighted.
func defaultResourceSpec() []configv1.ResourceSpec {
	return []configv1.ResourceSpec{
		{Name: string(corev1.ResourceCPU), Weight: 1},
		{Name: string(corev1.ResourceMemory), Weight: 1},
	}
}

var supportedScoringStrategyTypes = sets.New(
	string(configv1.LeastAllocated),
	string(configv1.MostAllocated),
	string(configv1.RequestedToCapacityRatio),
)

// fitArgs returns a defaulted copy of args (nil meaning every default), the
// way kube-scheduler's v1 defaulting fills a NodeResourcesFitArgs, and
// validates it. The caller's object is never changed.
func fitArgs(obj runtime.Object) (*configv1.NodeResourcesFitArgs, error) {
	args := &configv1.NodeResourcesFitArgs{}
	if obj != nil {
		in, ok := obj.(*configv1.NodeResourcesFitArgs)
		if !ok {
			return nil, fmt.Errorf("want args to be of type NodeResourcesFitArgs, got %T", obj)
		}
		if in != nil {
			args = in.DeepCopy()
		}
	}
	setDefaultsFitArgs(args)
	if err := validateFitArgs(nil, args); err != nil {
		return nil, err
	}
	return args, nil
}

// setDefaultsFitArgs mirrors SetDefaults_NodeResourcesFitArgs.
func setDefaultsFitArgs(args *configv1.NodeResourcesFitArgs) {
	if args.ScoringStrategy == nil {
		args.ScoringStrategy = &configv1.ScoringStrategy{Type: configv1.LeastAllocated, Resources: defaultResourceSpec()}
	}
	if len(args.ScoringStrategy.Resources) == 0 {
		args.ScoringStrategy.Resources = defaultResourceSpec()
	}
	for i := range args.ScoringStrategy.Resources {
		if args.ScoringStrategy.Resources[i].Weight == 0 {
			args.ScoringStrategy.Resources[i].Weight = 1
		}
	}
}

// validateFitArgs mirrors ValidateNodeResourcesFitArgs, field paths included.
func validateFitArgs(path *field.Path, args *configv1.NodeResourcesFitArgs) error {
	var errs field.ErrorList
	resPath := path.Child("ignoredResources")
	for i, res := range args.IgnoredResources {
		errs = append(errs, metav1validation.ValidateLabelName(res, resPath.Index(i))...)
	}
	groupPath := path.Child("ignoredResourceGroups")
	for i, group := range args.IgnoredResourceGroups {
		if strings.Contains(group, "/") {
			errs = append(errs, field.Invalid(groupPath.Index(i), group, "resource group name can't contain '/'"))
		}
		errs = append(errs, metav1validation.ValidateLabelName(group, groupPath.Index(i))...)
	}

	strategyPath := path.Child("scoringStrategy")
	strategy := args.ScoringStrategy
	if strategy == nil {
		errs = append(errs, field.Required(strategyPath, "ScoringStrategy field is required"))
		return errs.ToAggregate()
	}
	if !supportedScoringStrategyTypes.Has(string(strategy.Type)) {
		errs = append(errs, field.NotSupported(strategyPath.Child("type"), strategy.Type, sets.List(supportedScoringStrategyTypes)))
	}
	for i, res := range strategy.Resources {
		if res.Weight < minResourceWeight || res.Weight > maxResourceWeight {
			errs = append(errs, field.Invalid(strategyPath.Child("resources").Index(i).Child("weight"), res.Weight,
				fmt.Sprintf("resource weight of %v not in valid range (0, 100]", res.Name)))
		}
	}
	ratioPath := strategyPath.Child("requestedToCapacityRatio")
	switch {
	case strategy.Type == configv1.RequestedToCapacityRatio && strategy.RequestedToCapacityRatio == nil:
		errs = append(errs, field.Required(ratioPath, "must be specified when type is RequestedToCapacityRatio"))
	case strategy.Type == configv1.RequestedToCapacityRatio:
		errs = append(errs, validateFunctionShape(strategy.RequestedToCapacityRatio.Shape, ratioPath.Child("shape"))...)
	case strategy.RequestedToCapacityRatio != nil:
		errs = append(errs, field.Forbidden(ratioPath, "must be nil when type is not RequestedToCapacityRatio"))
	}
	return errs.ToAggregate()
}

// validateFunctionShape mirrors kube-scheduler's shape check: at least one
// point, utilizations strictly increasing within [0, 100], scores within [0, 10].
func validateFunctionShape(shape []configv1.UtilizationShapePoint, path *field.Path) field.ErrorList {
	if len(shape) == 0 {
		return field.ErrorList{field.Required(path, "at least one point must be specified")}
	}
	var errs field.ErrorList
	for i := 1; i < len(shape); i++ {
		if shape[i-1].Utilization >= shape[i].Utilization {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), shape[i].Utilization, "values must be sorted in increasing order"))
			break
		}
	}
	for i, point := range shape {
		if point.Utilization < 0 || point.Utilization > maxUtilization {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), point.Utilization,
				fmt.Sprintf("not in valid range [%d, %d]", 0, maxUtilization)))
		}
		if point.Score < 0 || point.Score > maxCustomPriorityScore {
			errs = append(errs, field.Invalid(path.Index(i).Child("score"), point.Score,
				fmt.Sprintf("not in valid range [%d, %d]", 0, maxCustomPriorityScore)))
		}
	}
	return errs
}

// balancedAllocationArgs returns a defaulted, validated copy of args (nil
// meaning every default), as kube-scheduler's v1 defaulting and validation do.
func balancedAllocationArgs(obj runtime.Object) (*configv1.NodeResourcesBalancedAllocationArgs, error) {
	args := &configv1.NodeResourcesBalancedAllocationArgs{}
	if obj != nil {
		in, ok := obj.(*configv1.NodeResourcesBalancedAllocationArgs)
		if !ok {
			return nil, fmt.Errorf("want args to be of type NodeResourcesBalancedAllocationArgs, got %T", obj)
		}
		if in != nil {
			args = in.DeepCopy()
		}
	}
	// SetDefaults_NodeResourcesBalancedAllocationArgs.
	if len(args.Resources) == 0 {
		args.Resources = defaultResourceSpec()
	}
	for i := range args.Resources {
		if args.Resources[i].Weight == 0 {
			args.Resources[i].Weight = 1
		}
	}
	if err := validateBalancedAllocationArgs(nil, args); err != nil {
		return nil, err
	}
	return args, nil
}

// validateBalancedAllocationArgs mirrors ValidateNodeResourcesBalancedAllocationArgs:
// no resource twice, and every weight 1 (the standard deviation has no weights).
func validateBalancedAllocationArgs(path *field.Path, args *configv1.NodeResourcesBalancedAllocationArgs) error {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, res := range args.Resources {
		resPath := path.Child("resources").Index(i)
		if seen.Has(res.Name) {
			errs = append(errs, field.Duplicate(resPath.Child("name"), res.Name))
		} else {
			seen.Insert(res.Name)
		}
		if res.Weight != 1 {
			errs = append(errs, field.Invalid(resPath.Child("weight"), res.Weight, "must be 1"))
		}
	}
	return errs.ToAggregate()
}
