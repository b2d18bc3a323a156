package nodeunschedulable_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeunschedulable"
)

// The cases of kube-scheduler's TestNodeUnschedulable, plus the toleration
// forms that do and do not cover the unschedulable taint.
func TestFilter(t *testing.T) {
	rejected := framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) were unschedulable")
	cordoned := testutil.MakeNode().Name("n").Unschedulable().Obj()
	tests := []struct {
		name string
		pod  *corev1.Pod
		node *corev1.Node
		want *framework.Status
	}{
		{name: "pod without tolerations on a cordoned node", pod: testutil.MakePod().Obj(), node: cordoned, want: rejected},
		{name: "pod on a schedulable node", pod: testutil.MakePod().Obj(), node: testutil.MakeNode().Name("n").Obj()},
		{
			name: "pod tolerating unschedulable:NoSchedule",
			pod:  testutil.MakePod().Toleration(corev1.TaintNodeUnschedulable, "", corev1.TaintEffectNoSchedule).Obj(),
			node: cordoned,
		},
		{
			name: "pod tolerating every taint (operator Exists, no key)",
			pod:  withTolerations(corev1.Toleration{Operator: corev1.TolerationOpExists}),
			node: cordoned,
		},
		{
			name: "pod tolerating the key with any effect",
			pod:  withTolerations(corev1.Toleration{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists}),
			node: cordoned,
		},
		{
			name: "toleration with the wrong effect",
			pod:  testutil.MakePod().Toleration(corev1.TaintNodeUnschedulable, "", corev1.TaintEffectNoExecute).Obj(),
			node: cordoned,
			want: rejected,
		},
		{
			name: "toleration with operator Equal and empty value, as the unschedulable taint has none",
			pod:  withTolerations(corev1.Toleration{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpEqual, Effect: corev1.TaintEffectNoSchedule}),
			node: cordoned,
		},
		{
			name: "toleration with a value does not match the unschedulable taint",
			pod:  testutil.MakePod().Toleration(corev1.TaintNodeUnschedulable, "x", corev1.TaintEffectNoSchedule).Obj(),
			node: cordoned,
			want: rejected,
		},
	}
	pl, err := nodeunschedulable.New(nil, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	plugin := pl.(*nodeunschedulable.NodeUnschedulable)
	if plugin.Name() != "NodeUnschedulable" || plugin.PreFilterExtensions() != nil {
		t.Errorf("Name() = %q, PreFilterExtensions() = %v", plugin.Name(), plugin.PreFilterExtensions())
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := framework.NewCycleState()
			if _, s := plugin.PreFilter(context.Background(), state, tt.pod, nil); !s.IsSuccess() {
				t.Fatalf("PreFilter = %v", s)
			}
			got := plugin.Filter(context.Background(), state, tt.pod, framework.NewNodeInfo(tt.node))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

func withTolerations(tolerations ...corev1.Toleration) *corev1.Pod {
	p := testutil.MakePod().Obj()
	p.Spec.Tolerations = tolerations
	return p
}
