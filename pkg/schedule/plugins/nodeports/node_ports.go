// Package nodeports is kube-scheduler's NodePorts plugin: a pod that asks for
// host ports only fits nodes where no running pod holds them.
package nodeports

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

const (
	// Name is NodePorts' name in profiles.
	Name = "NodePorts"
	// ErrReason is the Filter reason, as kube-scheduler words it.
	ErrReason = "node(s) didn't have free ports for the requested pod ports"

	preFilterStateKey framework.StateKey = "PreFilter" + Name
)

var (
	_ framework.PreFilterPlugin = &NodePorts{}
	_ framework.FilterPlugin    = &NodePorts{}
)

var errReasons = []string{ErrReason}

// NodePorts checks a pod's host ports against those in use on a node.
type NodePorts struct{}

// New returns the plugin; it takes no arguments.
func New(_ runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	return &NodePorts{}, nil
}

// Name returns the plugin's name.
func (pl *NodePorts) Name() string { return Name }

// preFilterState is the host ports the pod wants.
type preFilterState []corev1.ContainerPort

// Clone returns the state itself: it is never changed after PreFilter.
func (s preFilterState) Clone() framework.StateData { return s }

// PreFilter collects the host ports of the pod's containers and sidecars,
// and skips the plugin for a pod that asks for none.
func (pl *NodePorts) PreFilter(_ context.Context, cycleState *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	ports := framework.HostPorts(pod)
	if len(ports) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	cycleState.Write(preFilterStateKey, preFilterState(ports))
	return nil, nil
}

// PreFilterExtensions returns nil: Filter reads the node's ports, which the
// NodeInfo keeps up to date itself.
func (pl *NodePorts) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter rejects the node when one of the wanted ports is taken there, with
// 0.0.0.0 clashing with every address. The rejection is Unschedulable:
// preemption can free the port.
func (pl *NodePorts) Filter(_ context.Context, cycleState *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	wantPorts, err := framework.ReadState[preFilterState](cycleState, preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	if !fitsPorts(wantPorts, nodeInfo.UsedPorts) {
		return framework.NewStatus(framework.Unschedulable, errReasons...)
	}
	return nil
}

// Fits reports whether the pod's host ports are free on the node.
func Fits(pod *corev1.Pod, nodeInfo *framework.NodeInfo) bool {
	return fitsPorts(framework.HostPorts(pod), nodeInfo.UsedPorts)
}

func fitsPorts(want []corev1.ContainerPort, inUse framework.HostPortInfo) bool {
	for _, p := range want {
		if inUse.CheckConflict(p.HostIP, string(p.Protocol), p.HostPort) {
			return false
		}
	}
	return true
}
