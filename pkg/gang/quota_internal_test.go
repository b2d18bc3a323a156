package gang

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
)

// The BestEffort quota scopes follow the pod's QoS class as the API server
// computes it: a zero request leaves a pod BestEffort, pod-level resources
// make it Burstable.
func TestQuotaSelectsBestEffort(t *testing.T) {
	bestEffort := &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}}}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"no requests", testutil.MakePod().Obj(), true},
		{"zero cpu request", testutil.MakePod().Req(testutil.Res{"cpu": "0"}).Obj(), true},
		{"cpu request", testutil.MakePod().Req(testutil.Res{"cpu": "1"}).Obj(), false},
		{"only a GPU", testutil.MakePod().Req(testutil.Res{"nvidia.com/gpu": "1"}).Obj(), true},
		{"pod-level resources", testutil.MakePod().PodLevelReq(testutil.Res{"cpu": "1"}).Obj(), false},
	} {
		got, err := quotaSelects(bestEffort, tc.pod)
		if err != nil || got != tc.want {
			t.Errorf("%s: BestEffort scope selects = %v (%v), want %v", tc.name, got, err, tc.want)
		}
	}
}

// A pod is charged as the quota evaluator charges it: ephemeral storage and
// huge pages under their bare names too, extended resources only under
// requests.*.
func TestPodQuotaUsage(t *testing.T) {
	pod := testutil.MakePod().Req(testutil.Res{"cpu": "1", "ephemeral-storage": "2Gi", "hugepages-2Mi": "4Mi", "nvidia.com/gpu": "1"}).Obj()
	got := podQuotaUsage(pod)
	for name, want := range map[corev1.ResourceName]string{
		"ephemeral-storage": "2Gi", "requests.ephemeral-storage": "2Gi",
		"hugepages-2Mi": "4Mi", "requests.hugepages-2Mi": "4Mi",
		"requests.nvidia.com/gpu": "1", "cpu": "1", "requests.cpu": "1", "pods": "1",
	} {
		q, ok := got[name]
		if !ok || q.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("%s charged %v (present %v), want %s", name, q.String(), ok, want)
		}
	}
	if _, ok := got["nvidia.com/gpu"]; ok {
		t.Errorf("the bare extended resource is charged: %v", got)
	}
}
