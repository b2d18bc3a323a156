package clustergen

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// KueueObjects are Kueue's objects for the cluster (kueue.x-k8s.io/v1beta2):
// one ResourceFlavor for the GPU nodes, queues ClusterQueues in cohorts of
// ten (cpu, memory and GPUs, the GPU quota of the GPU nodes shared out),
// a LocalQueue for each in ml-research, and workloads admitted Workloads
// spread over the queues (1-4 pods of 1-2 GPUs), each as Kueue writes it,
// its pod template included: the shape of issue #39's benchmark.
func KueueObjects(o Options, queues, workloads int) []any {
	return KueueQueue(o, queues, workloads, 0)
}

// KueueQueue is KueueObjects with pending Workloads that Kueue holds with
// no pods yet (their Jobs suspended), spread over the queues after the
// admitted ones: 1-8 pods of 1-8 GPUs, priorities 0, 100 or 1000, queued
// over the day after. With pending, each ClusterQueue's GPU quota is what
// its admitted Workloads use plus 16: most pending Workloads wait for
// quota, as on a cluster whose queues are full.
func KueueQueue(o Options, queues, workloads, pending int) []any {
	if queues == 0 {
		return nil
	}
	objs := kueueObjects(o, queues, workloads, pending > 0)
	rng := rand.New(rand.NewPCG(o.Seed, 40))
	for k := range pending {
		cq := k % queues
		pods, g := 1+rng.IntN(8), 1+rng.IntN(8)
		at := created.Add(timeStep(workloads) + time.Duration(k)*24*time.Hour/time.Duration(pending)).UTC().Format("2006-01-02T15:04:05Z")
		req := map[string]any{"cpu": fmt.Sprint(11 * g), "memory": fmt.Sprintf("%dGi", 120*g), "nvidia.com/gpu": fmt.Sprint(g)}
		name := fmt.Sprintf("job-wait-%05d-%s", k, string(uid("pw", k))[:5])
		objs = append(objs, map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
			"metadata": map[string]any{"name": name, "namespace": "ml-research", "uid": string(uid("pw", k)), "creationTimestamp": at,
				"labels":          map[string]any{"kueue.x-k8s.io/job-uid": string(uid("pjob", k))},
				"ownerReferences": []any{map[string]any{"apiVersion": "batch/v1", "kind": "Job", "name": fmt.Sprintf("wait-%05d", k), "uid": string(uid("pjob", k)), "controller": true}}},
			"spec": map[string]any{"queueName": fmt.Sprintf("lq-%03d", cq), "priority": int64([]int{0, 100, 1000}[rng.IntN(3)]),
				"podSets": []any{map[string]any{"name": "main", "count": int64(pods), "template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"batch.kubernetes.io/job-name": fmt.Sprintf("wait-%05d", k)}},
					"spec": map[string]any{"restartPolicy": "Never", "priorityClassName": "training",
						"tolerations":  []any{map[string]any{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}},
						"nodeSelector": map[string]any{GPUKey: "true"},
						"containers": []any{map[string]any{"name": "trainer", "image": "registry.example.com/ml/trainer:2026.11",
							"env":       []any{map[string]any{"name": "WORLD_SIZE", "value": fmt.Sprint(pods)}},
							"resources": map[string]any{"requests": req, "limits": req}}}}}}}},
			"status": map[string]any{"conditions": []any{map[string]any{"type": "QuotaReserved", "status": "False", "reason": "Pending",
				"message": "couldn't assign flavors to pod set main: insufficient unused quota", "lastTransitionTime": at}}}})
	}
	return objs
}

// kueueObjects are KueueObjects; tight sets each ClusterQueue's GPU quota
// to what its admitted Workloads use plus 16.
func kueueObjects(o Options, queues, workloads int, tight bool) []any {
	rng := rand.New(rand.NewPCG(o.Seed, 39))
	objs := []any{map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
		"metadata": map[string]any{"name": "gpu", "uid": string(uid("rf", 0)), "creationTimestamp": created.UTC().Format("2006-01-02T15:04:05Z")},
		"spec":     map[string]any{"nodeLabels": map[string]any{GPUKey: "true"}}}}
	gpus := 8 * o.GPUNodes / queues
	// The admitted Workloads' shapes, drawn first: a tight quota is what
	// they use.
	type shape struct{ pods, g, prio int }
	shapes := make([]shape, workloads)
	used := make([]int, queues)
	for k := range shapes {
		// Drawn in the order the Workloads always were.
		pods := 1 + rng.IntN(4)
		g := 1 + rng.IntN(2)
		shapes[k] = shape{pods, g, 100 * rng.IntN(3)}
		used[k%queues] += shapes[k].pods * shapes[k].g
	}
	for i := range queues {
		gpus := gpus
		if tight {
			gpus = used[i] + 16
		}
		name := fmt.Sprintf("cq-%03d", i)
		objs = append(objs, map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
			"metadata": map[string]any{"name": name, "uid": string(uid("cq", i)), "creationTimestamp": created.UTC().Format("2006-01-02T15:04:05Z")},
			"spec": map[string]any{"cohortName": fmt.Sprintf("cohort-%d", i/10), "namespaceSelector": map[string]any{},
				"preemption": map[string]any{"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
				"resourceGroups": []any{map[string]any{"coveredResources": []any{"cpu", "memory", "nvidia.com/gpu"},
					"flavors": []any{map[string]any{"name": "gpu", "resources": []any{
						map[string]any{"name": "cpu", "nominalQuota": fmt.Sprint(11 * gpus)},
						map[string]any{"name": "memory", "nominalQuota": fmt.Sprintf("%dGi", 120*gpus)},
						map[string]any{"name": "nvidia.com/gpu", "nominalQuota": fmt.Sprint(gpus)}}}}}}}})
		objs = append(objs, map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
			"metadata": map[string]any{"name": fmt.Sprintf("lq-%03d", i), "namespace": "ml-research", "uid": string(uid("lq", i)),
				"creationTimestamp": created.UTC().Format("2006-01-02T15:04:05Z")},
			"spec": map[string]any{"clusterQueue": name}})
	}
	for k := range workloads {
		cq := k % queues
		pods, g := shapes[k].pods, shapes[k].g
		at := created.Add(timeStep(k)).UTC().Format("2006-01-02T15:04:05Z")
		req := map[string]any{"cpu": fmt.Sprint(11 * g), "memory": fmt.Sprintf("%dGi", 120*g), "nvidia.com/gpu": fmt.Sprint(g)}
		name := fmt.Sprintf("job-train-%05d-%s", k, string(uid("wl", k))[:5])
		objs = append(objs, map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
			"metadata": map[string]any{"name": name, "namespace": "ml-research", "uid": string(uid("wl", k)), "creationTimestamp": at,
				"labels":          map[string]any{"kueue.x-k8s.io/job-uid": string(uid("job", k))},
				"ownerReferences": []any{map[string]any{"apiVersion": "batch/v1", "kind": "Job", "name": fmt.Sprintf("train-%05d", k), "uid": string(uid("job", k)), "controller": true}}},
			"spec": map[string]any{"queueName": fmt.Sprintf("lq-%03d", cq), "priority": int64(shapes[k].prio),
				"podSets": []any{map[string]any{"name": "main", "count": int64(pods), "template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"batch.kubernetes.io/job-name": fmt.Sprintf("train-%05d", k)}},
					"spec": map[string]any{"restartPolicy": "Never", "priorityClassName": "training",
						"tolerations":  []any{map[string]any{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}},
						"nodeSelector": map[string]any{GPUKey: "true"},
						"containers": []any{map[string]any{"name": "trainer", "image": "registry.example.com/ml/trainer:2026.11",
							"env":       []any{map[string]any{"name": "WORLD_SIZE", "value": fmt.Sprint(pods)}},
							"resources": map[string]any{"requests": req, "limits": req}}}}}}}},
			"status": map[string]any{
				"admission": map[string]any{"clusterQueue": fmt.Sprintf("cq-%03d", cq), "podSetAssignments": []any{map[string]any{
					"name": "main", "count": int64(pods), "flavors": map[string]any{"cpu": "gpu", "memory": "gpu", "nvidia.com/gpu": "gpu"},
					"resourceUsage": map[string]any{"cpu": fmt.Sprint(11 * g * pods), "memory": fmt.Sprintf("%dGi", 120*g*pods), "nvidia.com/gpu": fmt.Sprint(g * pods)}}}},
				"conditions": []any{
					map[string]any{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "Quota reserved in ClusterQueue " + fmt.Sprintf("cq-%03d", cq), "lastTransitionTime": at},
					map[string]any{"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted", "lastTransitionTime": at}}}})
	}
	return objs
}

// timeStep spreads the k-th Workload's creation a second apart.
func timeStep(k int) time.Duration { return time.Duration(k) * time.Second }
