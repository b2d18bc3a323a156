package noderesources_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
)

// TestNewArgs checks defaulting and validation as kube-scheduler's v1
// defaults.go and validation_pluginargs.go do them; errors name the field.
func TestNewArgs(t *testing.T) {
	strategy := func(typ configv1.ScoringStrategyType, resources ...configv1.ResourceSpec) *configv1.NodeResourcesFitArgs {
		return &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: typ, Resources: resources}}
	}
	ratio := func(shape ...configv1.UtilizationShapePoint) *configv1.NodeResourcesFitArgs {
		args := strategy(configv1.RequestedToCapacityRatio)
		args.ScoringStrategy.RequestedToCapacityRatio = &configv1.RequestedToCapacityRatioParam{Shape: shape}
		return args
	}
	leastWithShape := strategy(configv1.LeastAllocated)
	leastWithShape.ScoringStrategy.RequestedToCapacityRatio = &configv1.RequestedToCapacityRatioParam{}
	ratioWithoutParam := strategy(configv1.RequestedToCapacityRatio)

	tests := []struct {
		name    string
		newFn   func(runtime.Object, framework.Handle) (framework.Plugin, error)
		args    runtime.Object
		wantErr string
	}{
		{name: "fit: nil args are the defaults", newFn: noderesources.New},
		{name: "fit: empty args are the defaults", newFn: noderesources.New, args: &configv1.NodeResourcesFitArgs{}},
		{name: "fit: a strategy without resources scores cpu and memory", newFn: noderesources.New, args: strategy(configv1.MostAllocated)},
		{
			name: "fit: weight 0 defaults to 1", newFn: noderesources.New,
			args: strategy(configv1.LeastAllocated, configv1.ResourceSpec{Name: "cpu"}),
		},
		{
			name: "fit: wrong args type", newFn: noderesources.New, args: &configv1.NodeAffinityArgs{},
			wantErr: "want args to be of type NodeResourcesFitArgs, got *v1.NodeAffinityArgs",
		},
		{
			name: "fit: negative weight", newFn: noderesources.New,
			args:    strategy(configv1.LeastAllocated, configv1.ResourceSpec{Name: "memory", Weight: -1}, configv1.ResourceSpec{Name: "cpu", Weight: 1}),
			wantErr: "scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of memory not in valid range (0, 100]",
		},
		{
			name: "fit: weight above 100", newFn: noderesources.New,
			args:    strategy(configv1.MostAllocated, configv1.ResourceSpec{Name: "memory", Weight: 1}, configv1.ResourceSpec{Name: "cpu", Weight: 101}),
			wantErr: "scoringStrategy.resources[1].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
		},
		{
			name: "fit: unknown strategy", newFn: noderesources.New, args: strategy("Spread"),
			wantErr: `scoringStrategy.type: Unsupported value: "Spread": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"`,
		},
		{
			name: "fit: RequestedToCapacityRatio without its parameters", newFn: noderesources.New, args: ratioWithoutParam,
			wantErr: "scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is RequestedToCapacityRatio",
		},
		{
			name: "fit: a shape for another strategy", newFn: noderesources.New, args: leastWithShape,
			wantErr: "scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio",
		},
		{
			name: "fit: empty shape", newFn: noderesources.New, args: ratio(),
			wantErr: "scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must be specified",
		},
		{
			name: "fit: unsorted shape", newFn: noderesources.New,
			args:    ratio(configv1.UtilizationShapePoint{Utilization: 50, Score: 1}, configv1.UtilizationShapePoint{Utilization: 50, Score: 2}),
			wantErr: "scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 50: values must be sorted in increasing order",
		},
		{
			name: "fit: shape point out of range", newFn: noderesources.New,
			args: ratio(configv1.UtilizationShapePoint{Utilization: -1, Score: 11}),
			wantErr: "[scoringStrategy.requestedToCapacityRatio.shape[0].utilization: Invalid value: -1: not in valid range [0, 100], " +
				"scoringStrategy.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid range [0, 10]]",
		},
		{
			name: "fit: bad ignored resource and group", newFn: noderesources.New,
			args: &configv1.NodeResourcesFitArgs{IgnoredResources: []string{"example.com/bbb", "no spaces"}, IgnoredResourceGroups: []string{"example.com/aaa"}},
			wantErr: "[ignoredResources[1]: Invalid value: \"no spaces\": name part must consist of alphanumeric characters, '-', '_' or '.', " +
				"and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), " +
				"ignoredResourceGroups[0]: Invalid value: \"example.com/aaa\": resource group name can't contain '/']",
		},
		{name: "balanced: nil args are the defaults", newFn: noderesources.NewBalancedAllocation},
		{
			name: "balanced: weight 0 defaults to 1", newFn: noderesources.NewBalancedAllocation,
			args: &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{{Name: "cpu"}, {Name: "memory"}}},
		},
		{
			name: "balanced: wrong args type", newFn: noderesources.NewBalancedAllocation, args: &configv1.NodeResourcesFitArgs{},
			wantErr: "want args to be of type NodeResourcesBalancedAllocationArgs, got *v1.NodeResourcesFitArgs",
		},
		{
			name: "balanced: duplicate resource and weight other than 1", newFn: noderesources.NewBalancedAllocation,
			args:    &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "cpu", Weight: 2}}},
			wantErr: `[resources[1].name: Duplicate value: "cpu", resources[1].weight: Invalid value: 2: must be 1]`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before runtime.Object
			if tc.args != nil {
				before = tc.args.DeepCopyObject()
			}
			_, err := tc.newFn(tc.args, nil)
			var got string
			if err != nil {
				got = err.Error()
			}
			if got != tc.wantErr {
				t.Errorf("error = %q\nwant    %q", got, tc.wantErr)
			}
			if diff := cmp.Diff(before, tc.args); tc.args != nil && diff != "" {
				t.Errorf("New changed its args (-before +after):\n%s", diff)
			}
		})
	}
}
