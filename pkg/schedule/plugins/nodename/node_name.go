// Package nodename is kube-scheduler's NodeName plugin: a pod that names its
// node in spec.nodeName can only go there.
package nodename

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const (
	// Name is NodeName's name in profiles.
	Name = "NodeName"
	// ErrReason is the Filter reason, as kube-scheduler words it.
	ErrReason = "node(s) didn't match the requested node name"
)

var (
	_ framework.PreFilterPlugin = &NodeName{}
	_ framework.FilterPlugin    = &NodeName{}
)

// errReasons is shared by every rejection so that Filter allocates only the
// Status itself; nothing appends to it.
var errReasons = []string{ErrReason}

// NodeName rejects every node but the one a pod names in spec.nodeName.
type NodeName struct{}

// New returns the plugin; it takes no arguments.
func New(_ runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	return &NodeName{}, nil
}

// Name returns the plugin's name.
func (pl *NodeName) Name() string { return Name }

// PreFilter narrows Filter to the named node, as kube-scheduler v1.37 does.
// When that node is not in the snapshot, the framework ends up with no node
// to filter.
func (pl *NodeName) PreFilter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	if pod.Spec.NodeName == "" {
		return nil, nil
	}
	return &framework.PreFilterResult{NodeNames: sets.New(pod.Spec.NodeName)}, nil
}

// PreFilterExtensions returns nil: adding or removing pods changes nothing.
func (pl *NodeName) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter rejects a node other than the one the pod names.
func (pl *NodeName) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if !Fits(pod, nodeInfo) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, errReasons...)
	}
	return nil
}

// Fits reports whether the pod names no node or names this one.
func Fits(pod *corev1.Pod, nodeInfo *framework.NodeInfo) bool {
	return pod.Spec.NodeName == "" || pod.Spec.NodeName == nodeInfo.Node().Name
}
