// Package tainttoleration is kube-scheduler's TaintToleration plugin: Filter
// rejects nodes with a NoSchedule or NoExecute taint the pod does not
// tolerate, and Score prefers nodes with fewer untolerated PreferNoSchedule
// taints.
package tainttoleration

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const (
	// Name is TaintToleration's name in profiles.
	Name = "TaintToleration"
	// ErrReasonUntoleratedTaint is the Filter reason. kube-scheduler v1.37
	// no longer names the taint in it (it only logs it); use
	// UntoleratedTaint to learn which taint it was.
	ErrReasonUntoleratedTaint = "node(s) had untolerated taint(s)"

	preScoreStateKey framework.StateKey = "PreScore" + Name
)

// enableComparisonOperators is kube-scheduler v1.37's default for the alpha
// TaintTolerationComparisonOperators gate (off): Lt and Gt tolerations
// tolerate nothing.
const enableComparisonOperators = false

var (
	_ framework.PreFilterPlugin = &TaintToleration{}
	_ framework.FilterPlugin    = &TaintToleration{}
	_ framework.PreScorePlugin  = &TaintToleration{}
	_ framework.ScorePlugin     = &TaintToleration{}
	_ framework.ScoreExtensions = &TaintToleration{}
)

var (
	errReasons = []string{ErrReasonUntoleratedTaint}
	// logger only matters for comparison operators, which are off.
	logger = klog.Background()
)

// TaintToleration checks a pod's tolerations against a node's taints. Its
// NormalizeScore maps the counts of untolerated PreferNoSchedule taints onto
// [0, 100] in reverse: the node with the most gets 0, a node with none 100.
type TaintToleration struct {
	framework.DefaultNormalizer
}

// New returns the plugin; it takes no arguments.
func New(_ runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	return &TaintToleration{DefaultNormalizer: framework.DefaultNormalizer{Reverse: true}}, nil
}

// Name returns the plugin's name.
func (pl *TaintToleration) Name() string { return Name }

// PreFilter does nothing: kube-scheduler skips the plugin only for deferred
// in-place resizes, behind a gate that is off in v1.37.
func (pl *TaintToleration) PreFilter(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	return nil, nil
}

// PreFilterExtensions returns nil: adding or removing pods changes nothing.
func (pl *TaintToleration) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter rejects the node when one of its NoSchedule or NoExecute taints is
// not tolerated. It does not allocate unless it rejects.
func (pl *TaintToleration) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if _, untolerated := UntoleratedTaint(pod, nodeInfo.Node()); untolerated {
		return statusUntolerated
	}
	return nil
}

// statusUntolerated is the one shared rejection: returning it costs no
// allocation per node, and it carries the plugin name so the runner's
// WithPlugin never writes to it. Explain names the taint with UntoleratedTaint.
var statusUntolerated = framework.NewStatus(framework.UnschedulableAndUnresolvable, errReasons...).WithPlugin(Name)

// UntoleratedTaint returns the first NoSchedule or NoExecute taint of the
// node, in the node's order, that the pod does not tolerate: the taint
// kube-scheduler's Filter rejects the node for (and logs at V(4)). The taint
// points into node.Spec.Taints and must not be changed.
//
// It is component-helpers' FindMatchingUntoleratedTaint with kube-scheduler's
// filter for NoSchedule and NoExecute, written as a loop over
// TolerationsTolerateTaint because that function copies the filtered taints,
// which would cost an allocation for every tainted node.
func UntoleratedTaint(pod *corev1.Pod, node *corev1.Node) (*corev1.Taint, bool) {
	taints := node.Spec.Taints
	for i := range taints {
		taint := &taints[i]
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !corev1helpers.TolerationsTolerateTaint(logger, pod.Spec.Tolerations, taint, enableComparisonOperators) {
			return taint, true
		}
	}
	return nil, false
}

// preScoreState holds the pod's tolerations that can tolerate a
// PreferNoSchedule taint: those with that effect or with none.
type preScoreState struct {
	tolerationsPreferNoSchedule []corev1.Toleration
}

// Clone returns the state itself: it is never changed after PreScore.
func (s *preScoreState) Clone() framework.StateData { return s }

// PreScore collects the pod's tolerations with effect PreferNoSchedule or no
// effect.
func (pl *TaintToleration) PreScore(_ context.Context, cycleState *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	cycleState.Write(preScoreStateKey, &preScoreState{tolerationsPreferNoSchedule: preferNoScheduleTolerations(pod.Spec.Tolerations)})
	return nil
}

func preferNoScheduleTolerations(tolerations []corev1.Toleration) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range tolerations {
		if t.Effect == "" || t.Effect == corev1.TaintEffectPreferNoSchedule {
			out = append(out, t)
		}
	}
	return out
}

// Score counts the node's PreferNoSchedule taints the pod does not tolerate;
// NormalizeScore turns the count around so that fewer is better.
func (pl *TaintToleration) Score(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, err := framework.ReadState[*preScoreState](cycleState, preScoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	var count int64
	taints := nodeInfo.Node().Spec.Taints
	for i := range taints {
		if taints[i].Effect != corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !corev1helpers.TolerationsTolerateTaint(logger, s.tolerationsPreferNoSchedule, &taints[i], enableComparisonOperators) {
			count++
		}
	}
	return count, nil
}

// ScoreExtensions returns the plugin itself: it normalizes its scores.
func (pl *TaintToleration) ScoreExtensions() framework.ScoreExtensions { return pl }

var _ framework.RangeNormalizer = (*TaintToleration)(nil)
