package schedulinggates_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/schedulinggates"
)

// preEnqueuer is the shape of the runner's PreEnqueue extension point.
type preEnqueuer interface {
	framework.Plugin
	PreEnqueue(ctx context.Context, pod *corev1.Pod) *framework.Status
}

// The cases of kube-scheduler's TestPreEnqueue, plus a single gate.
func TestPreEnqueue(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		want *framework.Status
	}{
		{name: "pod does not carry scheduling gates", pod: testutil.MakePod().Name("p").Obj()},
		{
			name: "pod carries scheduling gates",
			pod:  testutil.MakePod().Name("p").SchedulingGate("foo").SchedulingGate("bar").Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "waiting for scheduling gates: [foo bar]"),
		},
		{
			name: "one gate",
			pod:  testutil.MakePod().Name("p").SchedulingGate("example.com/admission").Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "waiting for scheduling gates: [example.com/admission]"),
		},
	}
	pl, err := schedulinggates.New(nil, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	p, ok := pl.(preEnqueuer)
	if !ok {
		t.Fatalf("%T has no PreEnqueue", pl)
	}
	if p.Name() != "SchedulingGates" {
		t.Errorf("Name() = %q", p.Name())
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := p.PreEnqueue(context.Background(), tt.pod)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PreEnqueue (-want +got):\n%s", diff)
			}
		})
	}
}
