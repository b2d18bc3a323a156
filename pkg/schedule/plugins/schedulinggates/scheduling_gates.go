// Package schedulinggates is kube-scheduler's SchedulingGates plugin: a pod
// with scheduling gates does not enter the scheduling queue until every gate
// is removed.
package schedulinggates

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Name is SchedulingGates' name in profiles.
const Name = "SchedulingGates"

// ReasonPrefix starts the PreEnqueue message, followed by the gate names in
// Go's %v form for a []string, as kube-scheduler writes it:
// "waiting for scheduling gates: [gate1 gate2]".
const ReasonPrefix = "waiting for scheduling gates: "

var _ framework.Plugin = &SchedulingGates{}

// SchedulingGates holds back pods that still have scheduling gates. It is a
// PreEnqueue plugin: the runner calls PreEnqueue before anything else and
// reports a gated pod instead of scheduling it.
type SchedulingGates struct{}

// New returns the plugin; it takes no arguments.
func New(_ runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	return &SchedulingGates{}, nil
}

// Name returns the plugin's name.
func (pl *SchedulingGates) Name() string { return Name }

// PreEnqueue returns nil for a pod without scheduling gates, and otherwise
// UnschedulableAndUnresolvable with kube-scheduler's message naming the
// gates in the pod's order.
func (pl *SchedulingGates) PreEnqueue(_ context.Context, pod *corev1.Pod) *framework.Status {
	if len(pod.Spec.SchedulingGates) == 0 {
		return nil
	}
	gates := make([]string, 0, len(pod.Spec.SchedulingGates))
	for _, gate := range pod.Spec.SchedulingGates {
		gates = append(gates, gate.Name)
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("%s%v", ReasonPrefix, gates))
}
