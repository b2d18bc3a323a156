package schedule_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// TestValidateResources checks the pods the v1.37 API server refuses at
// create time (each message as it words it, seen on the test bed with a dry
// run), and quantities it accepts but kube-scheduler cannot count.
func TestValidateResources(t *testing.T) {
	container := func(req, lim testutil.Res) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: req.List(), Limits: lim.List()}
		}
	}
	tests := []struct {
		name string
		edit func(*corev1.Pod)
		want string // "" for a valid pod
	}{
		{"plain cpu and gpu", container(testutil.Res{"cpu": "2"}, testutil.Res{"nvidia.com/gpu": "8"}), ""},
		{"negative cpu", container(testutil.Res{"cpu": "-1"}, nil),
			`spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0`},
		{"request above limit", container(testutil.Res{"memory": "2Gi"}, testutil.Res{"memory": "1Gi"}),
			`spec.containers[0].resources.requests[memory]: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi`},
		{"fractional gpu", container(testutil.Res{"nvidia.com/gpu": "500m"}, testutil.Res{"nvidia.com/gpu": "500m"}),
			`[spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer, spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "500m": must be an integer]`},
		{"gpu request below limit", container(testutil.Res{"nvidia.com/gpu": "2"}, testutil.Res{"nvidia.com/gpu": "4"}),
			`spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "2": must be equal to nvidia.com/gpu limit of 4`},
		{"gpu request without limit", container(testutil.Res{"nvidia.com/gpu": "2"}, nil),
			`spec.containers[0].resources.limits[nvidia.com/gpu]: Required value: Limit must be set for non overcommitable resources`},
		{"hugepages not whole pages", container(testutil.Res{"memory": "1Gi", "hugepages-2Mi": "3Mi"}, testutil.Res{"memory": "1Gi", "hugepages-2Mi": "3Mi"}),
			`[spec.containers[0].resources.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi, spec.containers[0].resources.requests[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi]`},
		{"hugepages alone", container(testutil.Res{"hugepages-2Mi": "4Mi"}, testutil.Res{"hugepages-2Mi": "4Mi"}),
			`spec.containers[0].resources: Forbidden: HugePages require cpu or memory`},
		{"hugepages with memory", container(testutil.Res{"memory": "1Gi", "hugepages-2Mi": "4Mi"}, testutil.Res{"memory": "1Gi", "hugepages-2Mi": "4Mi"}), ""},
		{"unqualified name", container(testutil.Res{"foo": "1"}, nil),
			`[spec.containers[0].resources.requests[foo]: Invalid value: "foo": must be a standard resource type or fully qualified, spec.containers[0].resources.requests[foo]: Invalid value: "foo": must be a standard resource for containers]`},
		{"pods is not a container resource", container(testutil.Res{"pods": "1"}, nil),
			`spec.containers[0].resources.requests[pods]: Invalid value: "pods": must be a standard resource for containers`},
		{"cpu the API server accepts but kube-scheduler wraps", container(testutil.Res{"cpu": "9223372036854775807"}, nil),
			`spec.containers[0].resources.requests[cpu]: Invalid value: "9223372036854775807": must be at most 9223372036854775807m, the most kube-scheduler counts in an int64 of millicores`},
		{"cpu beyond int64", container(testutil.Res{"cpu": "99999999999999999999999"}, nil),
			`spec.containers[0].resources.requests[cpu]: Invalid value: "99999999999999999999999": must be at most 9223372036854775807m`},
		{"largest cpu kube-scheduler counts", container(testutil.Res{"cpu": "9223372036854775"}, nil), ""},
		{"memory beyond int64", container(testutil.Res{"memory": "9223372036854775808"}, nil),
			`spec.containers[0].resources.requests[memory]: Invalid value: "9223372036854775808": must be at most 9223372036854775807, the most kube-scheduler counts in an int64 of units`},
		{"containers adding up past int64", func(p *corev1.Pod) {
			container(testutil.Res{"cpu": "9000000000000000"}, nil)(p)
			p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0])
			p.Spec.Containers[1].Name = "second"
		}, `spec.containers[*].resources.requests[cpu]: Invalid value: "18P": the pod's requests add up to more than kube-scheduler counts`},
		{"pod-level gpu", func(p *corev1.Pod) {
			p.Spec.Resources = &corev1.ResourceRequirements{Limits: testutil.Res{"nvidia.com/gpu": "1"}.List()}
		}, `spec.resources.limits[nvidia.com/gpu]: Unsupported value: "nvidia.com/gpu": supported values: "cpu", "hugepages-", "memory"`},
		{"pod-level requests below the containers'", func(p *corev1.Pod) {
			container(testutil.Res{"cpu": "2"}, nil)(p)
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: testutil.Res{"cpu": "1"}.List()}
		}, `spec.resources.requests[cpu]: Invalid value: "1": must be greater than or equal to aggregate container requests of 2`},
		{"fractional gpu overhead", func(p *corev1.Pod) { p.Spec.Overhead = testutil.Res{"example.com/x": "1500m"}.List() },
			`spec.overhead.limits[example.com/x]: Invalid value: "1500m": must be an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testutil.MakePod().Namespace("ml").Name("p").Obj()
			tt.edit(p)
			got := ""
			if errs := schedule.ValidateResources(p); len(errs) > 0 {
				got = errs.ToAggregate().Error()
			}
			if tt.want == "" && got != "" || !strings.HasPrefix(got, tt.want) {
				t.Errorf("ValidateResources = %q, want it to start with %q", got, tt.want)
			}
		})
	}
}

// TestValidateStoredResources checks that a pod an API server stored is
// refused only for what no release ever accepted.
func TestValidateStoredResources(t *testing.T) {
	p := testutil.MakePod().Namespace("ml").Name("p").UID("u").Obj()
	p.Spec.Containers[0].Resources.Requests = testutil.Res{"nvidia.com/gpu": "500m", "cpu": "9223372036854775807"}.List()
	if errs := schedule.ValidateStoredResources(p); len(errs) > 0 {
		t.Errorf("a stored pod is refused: %v", errs)
	}
	p.Spec.Containers[0].Resources.Requests = testutil.Res{"cpu": "-1"}.List()
	if errs := schedule.ValidateStoredResources(p); len(errs) == 0 {
		t.Error("a negative request is accepted")
	}
}
