// Package volumebinding is kube-scheduler's VolumeBinding plugin, for what a
// snapshot can decide: a pod's claims must exist, be bound (or bind
// later, when their class waits for the first consumer), and a bound
// claim's PersistentVolume must allow the node through its node affinity.
//
// Binding an unbound WaitForFirstConsumer claim (matching it to an available
// PersistentVolume, or provisioning one within CSIStorageCapacity) depends on
// CSI objects the snapshot does not hold, so a pod with such a claim is not
// evaluated by this plugin: PreFilter returns framework.NotEvaluated with a
// reason that starts with NotEvaluatedReason, which the runner reports
// instead of passing the pod silently.
package volumebinding

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/storage/ephemeral"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const (
	// Name is VolumeBinding's name in profiles.
	Name = "VolumeBinding"

	stateKey framework.StateKey = Name
)

// The Filter reasons, as kube-scheduler words them. Only ErrReasonNodeConflict
// and ErrReasonPVNotExist can come out of what this package evaluates; the
// other two belong to the binding of unbound claims, which it does not.
const (
	ErrReasonBindConflict   = "node(s) didn't find available persistent volumes to bind"
	ErrReasonNodeConflict   = "node(s) didn't match PersistentVolume's node affinity"
	ErrReasonNotEnoughSpace = "node(s) did not have enough free storage"
	ErrReasonPVNotExist     = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)

// ErrReasonUnboundImmediateClaims is the PreFilter reason for a pod with an
// unbound claim whose class binds immediately (or a claim pre-bound to a
// volume the PV controller has not confirmed): the PV controller, not the
// scheduler, has to bind it first.
const ErrReasonUnboundImmediateClaims = "pod has unbound immediate PersistentVolumeClaims"

// NotEvaluatedReason starts the reason of the not-evaluated status PreFilter
// returns (framework.NotEvaluated, a Skip whose IsNotEvaluated is true) for a
// pod with an unbound claim whose class waits for the first consumer; the
// rest of the reason names the claims.
const NotEvaluatedReason = "VolumeBinding not evaluated"

// annBindCompleted marks a claim the PV controller has finished binding;
// only such a claim counts as bound.
const annBindCompleted = "pv.kubernetes.io/bind-completed"

// kube-scheduler's defaults for VolumeBindingArgs (StorageCapacityScoring is
// beta and on in v1.37): a 600s bind timeout and a shape that prefers the
// least utilised node.
const (
	defaultBindTimeoutSeconds int64 = 600
	maxCustomPriorityScore    int32 = 10
	maxUtilization            int32 = 100
)

var (
	_ framework.PreFilterPlugin = &VolumeBinding{}
	_ framework.FilterPlugin    = &VolumeBinding{}
	_ framework.PreScorePlugin  = &VolumeBinding{}
	_ framework.ScorePlugin     = &VolumeBinding{}
)

// VolumeBinding checks a pod's claims and their volumes against nodes.
type VolumeBinding struct {
	storage framework.StorageLister
}

// New builds the plugin from *configv1.VolumeBindingArgs; nil args mean
// kube-scheduler v1.37's defaults. The args are defaulted and validated as
// kube-scheduler does; the shape only matters to the scoring of bindings and
// provisioning, which this package does not evaluate.
func New(args runtime.Object, h framework.Handle) (framework.Plugin, error) {
	var a configv1.VolumeBindingArgs
	if args != nil {
		typed, ok := args.(*configv1.VolumeBindingArgs)
		if !ok {
			return nil, fmt.Errorf("want args to be of type VolumeBindingArgs, got %T", args)
		}
		if typed != nil {
			a = *typed.DeepCopy()
		}
	}
	setDefaults(&a)
	if err := validate(&a); err != nil {
		return nil, err
	}
	return &VolumeBinding{storage: h.Storage()}, nil
}

func setDefaults(a *configv1.VolumeBindingArgs) {
	if a.BindTimeoutSeconds == nil {
		timeout := defaultBindTimeoutSeconds
		a.BindTimeoutSeconds = &timeout
	}
	if len(a.Shape) == 0 {
		a.Shape = []configv1.UtilizationShapePoint{
			{Utilization: 0, Score: maxCustomPriorityScore},
			{Utilization: maxUtilization, Score: 0},
		}
	}
}

// validate is kube-scheduler's ValidateVolumeBindingArgs with
// StorageCapacityScoring on.
func validate(a *configv1.VolumeBindingArgs) error {
	var errs field.ErrorList
	if *a.BindTimeoutSeconds < 0 {
		errs = append(errs, field.Invalid(field.NewPath("bindTimeoutSeconds"), *a.BindTimeoutSeconds, "invalid BindTimeoutSeconds, should not be a negative value"))
	}
	shape := field.NewPath("shape")
	if len(a.Shape) == 0 {
		errs = append(errs, field.Required(shape, "at least one point must be specified"))
		return errs.ToAggregate()
	}
	for i := 1; i < len(a.Shape); i++ {
		if a.Shape[i-1].Utilization >= a.Shape[i].Utilization {
			errs = append(errs, field.Invalid(shape.Index(i).Child("utilization"), a.Shape[i].Utilization, "values must be sorted in increasing order"))
			break
		}
	}
	for i, p := range a.Shape {
		if p.Utilization < 0 || p.Utilization > maxUtilization {
			errs = append(errs, field.Invalid(shape.Index(i).Child("utilization"), p.Utilization, fmt.Sprintf("not in valid range [%d, %d]", 0, maxUtilization)))
		}
		if p.Score < 0 || p.Score > maxCustomPriorityScore {
			errs = append(errs, field.Invalid(shape.Index(i).Child("score"), p.Score, fmt.Sprintf("not in valid range [%d, %d]", 0, maxCustomPriorityScore)))
		}
	}
	return errs.ToAggregate()
}

// Name returns the plugin's name.
func (pl *VolumeBinding) Name() string { return Name }

// stateData holds the pod's bound claims.
type stateData struct {
	boundClaims []*corev1.PersistentVolumeClaim
}

// Clone returns the state itself: it is never changed after PreFilter.
func (d *stateData) Clone() framework.StateData { return d }

// PreFilter checks the pod's claims the way kube-scheduler does, in its
// order: each claim (generic ephemeral ones included) must exist, not be
// lost or being deleted, and an ephemeral one must belong to the pod; a pod
// without claims skips the plugin. Then an unbound claim that binds
// immediately rejects the pod, and an unbound claim that waits for the first
// consumer makes the pod not evaluated.
func (pl *VolumeBinding) PreFilter(_ context.Context, cycleState *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	claims, err := pl.podClaims(pod)
	if err != nil {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
	}
	if len(claims) == 0 {
		cycleState.Write(stateKey, &stateData{})
		return nil, framework.NewStatus(framework.Skip)
	}
	var bound, waiting []*corev1.PersistentVolumeClaim
	immediate := 0
	for _, claim := range claims {
		if isFullyBound(claim) {
			bound = append(bound, claim)
			continue
		}
		delay, err := pl.isDelayBindingMode(claim)
		if err != nil {
			return nil, framework.AsStatus(err)
		}
		if delay && claim.Spec.VolumeName == "" {
			waiting = append(waiting, claim)
		} else {
			immediate++
		}
	}
	if immediate > 0 {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnboundImmediateClaims)
	}
	if len(waiting) > 0 {
		names := make([]string, len(waiting))
		for i, c := range waiting {
			names[i] = fmt.Sprintf("%q", c.Name)
		}
		return nil, framework.NotEvaluated(fmt.Sprintf("%s: PersistentVolumeClaim(s) %s wait for their first consumer; binding them to a PersistentVolume or provisioning one is not evaluated",
			NotEvaluatedReason, strings.Join(names, ", ")))
	}
	cycleState.Write(stateKey, &stateData{boundClaims: bound})
	return nil, nil
}

// podClaims returns the claim of every PVC and generic ephemeral volume of
// the pod, or kube-scheduler's error for the first that cannot be used.
func (pl *VolumeBinding) podClaims(pod *corev1.Pod) ([]*corev1.PersistentVolumeClaim, error) {
	var claims []*corev1.PersistentVolumeClaim
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		var name string
		isEphemeral := false
		switch {
		case vol.PersistentVolumeClaim != nil:
			name = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			name = ephemeral.VolumeClaimName(pod, vol)
			isEphemeral = true
		default:
			continue
		}
		claim, ok := pl.storage.PersistentVolumeClaim(pod.Namespace, name)
		if !ok {
			if isEphemeral {
				return nil, fmt.Errorf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name)
			}
			return nil, apierrors.NewNotFound(corev1.Resource("persistentvolumeclaim"), name)
		}
		if claim.Status.Phase == corev1.ClaimLost {
			return nil, fmt.Errorf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", claim.Name, claim.Spec.VolumeName)
		}
		if claim.DeletionTimestamp != nil {
			return nil, fmt.Errorf("persistentvolumeclaim %q is being deleted", claim.Name)
		}
		if isEphemeral {
			if err := ephemeral.VolumeIsForPod(pod, claim); err != nil {
				return nil, err
			}
		}
		claims = append(claims, claim)
	}
	return claims, nil
}

func isFullyBound(claim *corev1.PersistentVolumeClaim) bool {
	return claim.Spec.VolumeName != "" && metav1.HasAnnotation(claim.ObjectMeta, annBindCompleted)
}

// isDelayBindingMode is component-helpers' IsDelayBindingMode (whose
// package needs client-go): a claim without a class, or whose class is not
// in the snapshot, binds immediately; a class without a binding mode is an
// error.
func (pl *VolumeBinding) isDelayBindingMode(claim *corev1.PersistentVolumeClaim) (bool, error) {
	className := persistentVolumeClaimClass(claim)
	if className == "" {
		return false, nil
	}
	class, ok := pl.storage.StorageClass(className)
	if !ok {
		return false, nil
	}
	if class.VolumeBindingMode == nil {
		return false, fmt.Errorf("VolumeBindingMode not set for StorageClass %q", className)
	}
	return *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer, nil
}

// persistentVolumeClaimClass is component-helpers' GetPersistentVolumeClaimClass:
// the beta annotation wins over the field.
func persistentVolumeClaimClass(claim *corev1.PersistentVolumeClaim) string {
	if class, ok := claim.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return class
	}
	if claim.Spec.StorageClassName != nil {
		return *claim.Spec.StorageClassName
	}
	return ""
}

// PreFilterExtensions returns nil: other pods do not matter.
func (pl *VolumeBinding) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter checks every bound claim's PersistentVolume against the node: a
// volume missing from the snapshot or whose required node affinity the
// node's labels do not match rejects the node, for the first claim that
// fails. As in kube-scheduler, matchFields in a volume's node affinity are
// ignored (only the node's labels are offered), and in-tree volumes are
// checked as they are, without CSI migration translation (no CSINode in the
// snapshot).
func (pl *VolumeBinding) Filter(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadState[*stateData](cycleState, stateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	node := nodeInfo.Node()
	for _, claim := range s.boundClaims {
		pv, ok := pl.storage.PersistentVolume(claim.Spec.VolumeName)
		if !ok {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPVNotExist)
		}
		if checkNodeAffinity(pv, node.Labels) != nil {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeConflict)
		}
	}
	return nil
}

// checkNodeAffinity is component-helpers' storage CheckNodeAffinity (whose
// package needs client-go), built on the same MatchNodeSelectorTerms.
func checkNodeAffinity(pv *corev1.PersistentVolume, nodeLabels map[string]string) error {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return nil
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: nodeLabels}}
	matches, err := corev1helpers.MatchNodeSelectorTerms(node, pv.Spec.NodeAffinity.Required)
	if err != nil {
		return err
	}
	if !matches {
		return errors.New("no matching NodeSelectorTerms")
	}
	return nil
}

// PreScore lets Score run, as kube-scheduler does with StorageCapacityScoring
// on; it fails without PreFilter's state.
func (pl *VolumeBinding) PreScore(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	if _, err := cycleState.Read(stateKey); err != nil {
		return framework.AsStatus(err)
	}
	return nil
}

// Score is 0 for every node: kube-scheduler scores only static bindings and
// dynamic provisioning, and a pod evaluated here has neither (no claims, or
// bound claims only), for which kube-scheduler's score is 0 too.
func (pl *VolumeBinding) Score(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, _ *framework.NodeInfo) (int64, *framework.Status) {
	return 0, nil
}

// ScoreExtensions returns nil: VolumeBinding does not normalize.
func (pl *VolumeBinding) ScoreExtensions() framework.ScoreExtensions { return nil }
