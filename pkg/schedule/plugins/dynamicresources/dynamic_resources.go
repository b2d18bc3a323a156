// Package dynamicresources is kube-scheduler's DynamicResources plugin as far
// as a snapshot can take it: the snapshot holds no ResourceClaims,
// ResourceSlices or DeviceClasses, so a pod that references resource claims
// is not evaluated. PreFilter returns framework.NotEvaluated for it, with a
// reason that starts with NotEvaluatedReason, which the runner reports
// instead of letting the pod pass silently. A pod without claims skips the
// plugin, as in kube-scheduler, and scores 0 on every node.
//
// Extended resources backed by DRA (DRAExtendedResource, GA in v1.37) need
// DeviceClasses too; without them a pod's extended resources are left to
// NodeResourcesFit, as in a cluster that maps none of them to a class.
package dynamicresources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const (
	// Name is DynamicResources' name in profiles.
	Name = "DynamicResources"

	// NotEvaluatedReason starts the reason of the not-evaluated status
	// PreFilter returns (framework.NotEvaluated, a Skip whose
	// IsNotEvaluated is true) for a pod with resource claims; the rest of
	// the reason names the claims.
	NotEvaluatedReason = "DynamicResources not evaluated"

	stateKey framework.StateKey = Name
)

var (
	_ framework.PreFilterPlugin = &DynamicResources{}
	_ framework.FilterPlugin    = &DynamicResources{}
	_ framework.ScorePlugin     = &DynamicResources{}
	_ framework.ScoreExtensions = &DynamicResources{}
)

// DynamicResources recognises pods with resource claims.
type DynamicResources struct {
	framework.DefaultNormalizer
}

// New builds the plugin from *configv1.DynamicResourcesArgs; nil args mean
// kube-scheduler v1.37's defaults. The args are validated as kube-scheduler
// validates them (DRASchedulerFilterTimeout, DRADeviceBindingConditions and
// DRAResourceClaimDeviceStatus on), though the timeouts have nothing to time
// here.
func New(args runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	if args != nil {
		typed, ok := args.(*configv1.DynamicResourcesArgs)
		if !ok {
			return nil, fmt.Errorf("got args of type %T, want *DynamicResourcesArgs", args)
		}
		if typed != nil {
			if err := validate(typed); err != nil {
				return nil, err
			}
		}
	}
	return &DynamicResources{}, nil
}

func validate(a *configv1.DynamicResourcesArgs) error {
	var errs field.ErrorList
	if a.FilterTimeout != nil && a.FilterTimeout.Duration < 0 {
		errs = append(errs, field.Invalid(field.NewPath("filterTimeout"), a.FilterTimeout, "must be zero or positive"))
	}
	if a.BindingTimeout != nil && a.BindingTimeout.Duration < time.Second {
		errs = append(errs, field.Invalid(field.NewPath("bindingTimeout"), a.BindingTimeout, "must be at least 1 second"))
	}
	return errs.ToAggregate()
}

// Name returns the plugin's name.
func (pl *DynamicResources) Name() string { return Name }

type stateData struct{}

// Clone returns the state itself: it holds nothing.
func (s *stateData) Clone() framework.StateData { return s }

// PreFilter skips the plugin for a pod without resource claims and returns
// the not-evaluated status for a pod with some.
func (pl *DynamicResources) PreFilter(_ context.Context, cycleState *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	cycleState.Write(stateKey, &stateData{})
	if len(pod.Spec.ResourceClaims) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	names := make([]string, len(pod.Spec.ResourceClaims))
	for i, c := range pod.Spec.ResourceClaims {
		names[i] = fmt.Sprintf("%q", c.Name)
	}
	return nil, framework.NotEvaluated(fmt.Sprintf("%s: resource claim(s) %s: ResourceClaims, ResourceSlices and DeviceClasses are not in the snapshot, so device allocation is not evaluated",
		NotEvaluatedReason, strings.Join(names, ", ")))
}

// PreFilterExtensions returns nil: nothing is evaluated that other pods change.
func (pl *DynamicResources) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter accepts every node for a pod without claims; a pod with claims
// never gets here, because PreFilter skipped the plugin for it.
func (pl *DynamicResources) Filter(_ context.Context, cycleState *framework.CycleState, pod *corev1.Pod, _ *framework.NodeInfo) *framework.Status {
	if _, err := cycleState.Read(stateKey); err != nil {
		return framework.AsStatus(fmt.Errorf("reading %q from cycleState: %w", stateKey, err))
	}
	if len(pod.Spec.ResourceClaims) > 0 {
		return framework.AsStatus(errors.New("resource claims are not evaluated"))
	}
	return nil
}

// Score is 0 for every node: kube-scheduler scores only the allocations it
// made for the pod's claims (with DRAPrioritizedList), and a pod scored here
// has none.
func (pl *DynamicResources) Score(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, _ *framework.NodeInfo) (int64, *framework.Status) {
	return 0, nil
}

var _ framework.RangeNormalizer = &DynamicResources{}

// ScoreExtensions returns the plugin itself: it normalizes its scores with
// the embedded DefaultNormalizer (all-zero scores stay 0).
func (pl *DynamicResources) ScoreExtensions() framework.ScoreExtensions { return pl }
