package clustergen

import (
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PendingGangs returns n pending entries of mixed shapes and priorities, as
// the queue simulation's benchmark sees a busy Monday (docs/design.md#the-queue):
// native and Coscheduling PodGroups of 2 to 64 members and pods of no gang,
// each member asking 1, 2, 4 or 8 GPUs, priorities batch-low or training,
// created a minute apart. Their own random stream: the rest of the cluster
// is the same with or without them.
func PendingGangs(o Options, n int) []any {
	rng := rand.New(rand.NewPCG(o.Seed, 28))
	values := map[string]int32{"batch-low": 100, "training": 1000}
	var objs []any
	for g := range n {
		ns := []string{"ml-research", "batch"}[g%2]
		name := fmt.Sprintf("pending-%03d", g)
		members := []int{1, 2, 4, 8, 16, 32, 64}[rng.IntN(7)]
		gpus := []int{1, 2, 4, 8}[rng.IntN(4)]
		class := []string{"batch-low", "training"}[rng.IntN(2)]
		ts := metav1.NewTime(created.Add(time.Duration(g) * time.Minute))
		kind := rng.IntN(2) // 0 native, 1 Coscheduling
		if members > 1 {
			if kind == 0 {
				objs = append(objs, map[string]any{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
					"metadata": map[string]any{"name": name, "namespace": ns, "creationTimestamp": ts.UTC().Format(time.RFC3339)},
					"spec": map[string]any{"priorityClassName": class, "priority": values[class],
						"schedulingPolicy": map[string]any{"gang": map[string]any{"minCount": members}}}})
			} else {
				objs = append(objs, map[string]any{"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
					"metadata": map[string]any{"name": name, "namespace": ns, "creationTimestamp": ts.UTC().Format(time.RFC3339)},
					"spec":     map[string]any{"minMember": members}})
			}
		}
		for m := range members {
			pod := &corev1.Pod{
				TypeMeta:   typeMeta("v1", "Pod"),
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, m), Namespace: ns, CreationTimestamp: ts, UID: uid("pending", g*1000+m)},
				Spec: corev1.PodSpec{
					SchedulerName:     corev1.DefaultSchedulerName,
					PriorityClassName: class,
					Priority:          new(values[class]),
					Tolerations:       []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					Containers: []corev1.Container{{Name: "trainer", Image: "trainer:1", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(fmt.Sprint(4 * gpus)), corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dGi", 32*gpus)),
							"nvidia.com/gpu": *resource.NewQuantity(int64(gpus), resource.DecimalSI)},
						Limits: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(int64(gpus), resource.DecimalSI)}}}},
				},
				Status: corev1.PodStatus{Phase: corev1.PodPending},
			}
			switch {
			case members > 1 && kind == 0:
				pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &name}
			case members > 1:
				pod.Labels = map[string]string{"scheduling.x-k8s.io/pod-group": name}
			}
			objs = append(objs, pod)
		}
	}
	return objs
}

// PendingNative returns n pending native PodGroups of the shape issue #39
// measured the queue view on: 2 to 16 members of 1 to 8 GPUs, priorities
// 0, 100 and 1000 on the pods (their own priority, no class) and none on
// the PodGroups, created over a day. Their own random stream.
func PendingNative(o Options, n int) []any {
	rng := rand.New(rand.NewPCG(o.Seed, 139))
	var objs []any
	for g := range n {
		ns := []string{"ml-research", "batch"}[g%2]
		name := fmt.Sprintf("native-%03d", g)
		members := 2 + rng.IntN(15)
		gpus := 1 + rng.IntN(8)
		prio := []int32{0, 100, 1000}[rng.IntN(3)]
		ts := metav1.NewTime(created.Add(time.Duration(rng.Int64N(int64(24 * time.Hour)))))
		objs = append(objs, map[string]any{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
			"metadata": map[string]any{"name": name, "namespace": ns, "creationTimestamp": ts.UTC().Format(time.RFC3339)},
			"spec":     map[string]any{"schedulingPolicy": map[string]any{"gang": map[string]any{"minCount": members}}}})
		for m := range members {
			pod := &corev1.Pod{
				TypeMeta:   typeMeta("v1", "Pod"),
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, m), Namespace: ns, CreationTimestamp: ts, UID: uid("native", g*1000+m)},
				Spec: corev1.PodSpec{
					SchedulerName:   corev1.DefaultSchedulerName,
					Priority:        new(prio),
					SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: &name},
					Tolerations:     []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					Containers: []corev1.Container{{Name: "trainer", Image: "trainer:1", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(fmt.Sprint(4 * gpus)), corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dGi", 32*gpus)),
							"nvidia.com/gpu": *resource.NewQuantity(int64(gpus), resource.DecimalSI)},
						Limits: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(int64(gpus), resource.DecimalSI)}}}},
				},
				Status: corev1.PodStatus{Phase: corev1.PodPending},
			}
			objs = append(objs, pod)
		}
	}
	return objs
}
