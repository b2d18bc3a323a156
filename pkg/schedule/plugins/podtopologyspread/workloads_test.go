package podtopologyspread

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Cases from kube-scheduler's helper TestDefaultSelector and TestGetPodServices.
func TestWorkloadsDefaultSelector(t *testing.T) {
	const ns = "test"
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	all := Workloads{
		Services: []*corev1.Service{
			{ObjectMeta: meta("test-service"), Spec: corev1.ServiceSpec{Selector: map[string]string{"podLabelKey": "podLabelVal"}}},
			{ObjectMeta: meta("nil-selector")},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "other-ns"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"other": "x"}}},
			{ObjectMeta: meta("not-selecting"), Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "else"}}},
		},
		ReplicationControllers: []*corev1.ReplicationController{
			{ObjectMeta: meta("test-rc"), Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"replicationLabelKey": "replicationLabelVal"}}},
		},
		ReplicaSets: []*appsv1.ReplicaSet{
			{ObjectMeta: meta("test-rs"), Spec: appsv1.ReplicaSetSpec{Selector: matchLabels("replicaSetLabelKey", "replicaSetLabelVal")}},
		},
		StatefulSets: []*appsv1.StatefulSet{
			{ObjectMeta: meta("test-ss"), Spec: appsv1.StatefulSetSpec{Selector: matchLabels("statefulSetLabelKey", "statefulSetLabelVal")}},
		},
	}
	owned := func(name string, gvk schema.GroupVersionKind) *corev1.Pod {
		p := pod("test-pod", "podLabelKey", "podLabelVal").Namespace(ns).Obj()
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: name, Controller: ptrTo(true)}}
		return p
	}
	tests := []struct {
		name      string
		workloads Workloads
		pod       *corev1.Pod
		want      string
	}{
		{
			name: "nothing selects the pod",
			pod:  pod("test-pod", "podLabelKey", "podLabelVal").Namespace(ns).Obj(),
			want: "",
		},
		{
			name:      "no owner, a service",
			workloads: all,
			pod:       pod("test-pod", "podLabelKey", "podLabelVal").Namespace(ns).Obj(),
			want:      "podLabelKey=podLabelVal",
		},
		{
			name:      "ReplicaSet owner",
			workloads: all,
			pod:       owned("test-rs", appsv1.SchemeGroupVersion.WithKind("ReplicaSet")),
			want:      "podLabelKey=podLabelVal,replicaSetLabelKey=replicaSetLabelVal",
		},
		{
			name:      "ReplicationController owner",
			workloads: all,
			pod:       owned("test-rc", corev1.SchemeGroupVersion.WithKind("ReplicationController")),
			want:      "podLabelKey=podLabelVal,replicationLabelKey=replicationLabelVal",
		},
		{
			name:      "StatefulSet owner",
			workloads: all,
			pod:       owned("test-ss", appsv1.SchemeGroupVersion.WithKind("StatefulSet")),
			want:      "podLabelKey=podLabelVal,statefulSetLabelKey=statefulSetLabelVal",
		},
		{
			name:      "owner not in the snapshot",
			workloads: all,
			pod:       owned("gone", appsv1.SchemeGroupVersion.WithKind("ReplicaSet")),
			want:      "podLabelKey=podLabelVal",
		},
		{
			name:      "unsupported owner kind",
			workloads: all,
			pod:       owned("test-rs", appsv1.SchemeGroupVersion.WithKind("Deployment")),
			want:      "podLabelKey=podLabelVal",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.workloads.DefaultSelector(tt.pod).String(); got != tt.want {
				t.Errorf("DefaultSelector = %q, want %q", got, tt.want)
			}
		})
	}
}
