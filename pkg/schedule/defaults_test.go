package schedule_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// TestDefaultPod checks the API server's defaults that scheduling reads,
// on pods it has not seen.
func TestDefaultPod(t *testing.T) {
	limitsOnly := func() *corev1.Pod {
		p := testutil.MakePod().Namespace("ml").Name("p").Obj()
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
			Requests: testutil.Res{"cpu": "1"}.List(),
			Limits:   testutil.Res{"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "4"}.List(),
		}
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Limits: testutil.Res{"cpu": "3"}.List()}}}
		return p
	}
	tests := []struct {
		name string
		pod  func() *corev1.Pod
		want func(*corev1.Pod)
	}{
		{
			name: "container requests default to limits",
			pod:  limitsOnly,
			want: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources.Requests = testutil.Res{"cpu": "1", "memory": "8Gi", "nvidia.com/gpu": "4"}.List()
				p.Spec.InitContainers[0].Resources.Requests = testutil.Res{"cpu": "3"}.List()
			},
		},
		{
			name: "pod-level requests from containers and pod-level limits",
			pod: func() *corev1.Pod {
				p := limitsOnly()
				p.Spec.Resources = &corev1.ResourceRequirements{Limits: testutil.Res{"memory": "16Gi"}.List()}
				return p
			},
			want: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources.Requests = testutil.Res{"cpu": "1", "memory": "8Gi", "nvidia.com/gpu": "4"}.List()
				p.Spec.InitContainers[0].Resources.Requests = testutil.Res{"cpu": "3"}.List()
				// cpu: the larger of the init container (3) and the sum of
				// the containers (1); memory: the containers' 8Gi, which the
				// pod-level limit does not replace. GPUs are not pod-level.
				p.Spec.Resources.Requests = testutil.Res{"cpu": "3", "memory": "8Gi"}.List()
			},
		},
		{
			name: "ports: TCP, and hostPort with hostNetwork",
			pod: func() *corev1.Pod {
				p := testutil.MakePod().Namespace("ml").Name("p").Obj()
				p.Spec.HostNetwork = true
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080}, {ContainerPort: 53, Protocol: corev1.ProtocolUDP, HostPort: 5353}}
				return p
			},
			want: func(p *corev1.Pod) {
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: corev1.ProtocolTCP},
					{ContainerPort: 53, Protocol: corev1.ProtocolUDP, HostPort: 5353}}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.pod()
			schedule.DefaultPod(got)
			want := tt.pod()
			tt.want(want)
			want.Spec.SchedulerName = corev1.DefaultSchedulerName
			if diff := testutil.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			again := got.DeepCopy()
			schedule.DefaultPod(again)
			if diff := testutil.Diff(got, again); diff != "" {
				t.Errorf("defaulting twice changed the pod (-once +twice):\n%s", diff)
			}
		})
	}
}
