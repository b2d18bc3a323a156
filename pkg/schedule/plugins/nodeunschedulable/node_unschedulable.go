// Package nodeunschedulable is kube-scheduler's NodeUnschedulable plugin: a
// cordoned node (spec.unschedulable) takes only pods that tolerate the
// node.kubernetes.io/unschedulable:NoSchedule taint.
package nodeunschedulable

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const (
	// Name is NodeUnschedulable's name in profiles.
	Name = "NodeUnschedulable"
	// ErrReasonUnschedulable is the Filter reason, as kube-scheduler words it.
	ErrReasonUnschedulable = "node(s) were unschedulable"
)

// enableComparisonOperators is kube-scheduler v1.37's default for the alpha
// TaintTolerationComparisonOperators gate (off): Lt and Gt tolerations
// tolerate nothing.
const enableComparisonOperators = false

var (
	_ framework.PreFilterPlugin = &NodeUnschedulable{}
	_ framework.FilterPlugin    = &NodeUnschedulable{}
)

var (
	// unschedulableTaint is the taint a pod must tolerate to land on a
	// cordoned node, whether or not the node carries it.
	unschedulableTaint = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}
	errReasons         = []string{ErrReasonUnschedulable}
	// logger only matters for comparison operators, which are off.
	logger = klog.Background()
)

// NodeUnschedulable rejects cordoned nodes for pods that do not tolerate them.
type NodeUnschedulable struct{}

// New returns the plugin; it takes no arguments.
func New(_ runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	return &NodeUnschedulable{}, nil
}

// Name returns the plugin's name.
func (pl *NodeUnschedulable) Name() string { return Name }

// PreFilter does nothing: kube-scheduler skips the plugin only for deferred
// in-place resizes, behind a gate that is off in v1.37.
func (pl *NodeUnschedulable) PreFilter(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	return nil, nil
}

// PreFilterExtensions returns nil: adding or removing pods changes nothing.
func (pl *NodeUnschedulable) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter rejects a cordoned node unless the pod tolerates
// node.kubernetes.io/unschedulable:NoSchedule.
func (pl *NodeUnschedulable) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if !Rejects(pod, nodeInfo.Node()) {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, errReasons...)
}

// Rejects reports whether the plugin's Filter rejects node for pod: the
// node is cordoned and the pod does not tolerate it.
func Rejects(pod *corev1.Pod, node *corev1.Node) bool {
	return node.Spec.Unschedulable && !corev1helpers.TolerationsTolerateTaint(logger, pod.Spec.Tolerations, &unschedulableTaint, enableComparisonOperators)
}
