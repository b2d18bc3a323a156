// Package clustergen makes large, deterministic clusters for benchmarks and
// for the scale figures in the README: GPU and CPU nodes in zones and
// blocks, running pods of several owners and shapes, and the Jobs users
// submit (plain or Indexed). The same options always give the same objects.
package clustergen

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Options shape a cluster.
type Options struct {
	// Nodes is the number of nodes; GPUNodes of them have 8 GPUs.
	Nodes, GPUNodes int
	// Zones is how many zones the nodes are spread over (round robin);
	// nodes are also in blocks of BlockSize.
	Zones, BlockSize int
	// Pods is the number of running pods, spread over the nodes: on a GPU
	// node the first pod of each node takes GPUsUsed GPUs.
	Pods     int
	GPUsUsed int
	Seed     uint64
}

// Default is the 5,000-node benchmark cluster: 4,000 8-GPU nodes with 4
// GPUs in use, in 3 zones, and 20,000 running pods.
var Default = Options{Nodes: 5000, GPUNodes: 4000, Zones: 3, BlockSize: 250, Pods: 20000, GPUsUsed: 4, Seed: 1}

// Label keys of the generated nodes.
const (
	ZoneKey  = corev1.LabelTopologyZone
	BlockKey = "network.topology.kubernetes.io/block"
	GPUKey   = "nvidia.com/gpu.present"
)

var created = metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))

// Cluster returns the nodes, pods and other objects of a cluster, as a
// snapshot file holds them.
func Cluster(o Options) []any {
	rng := rand.New(rand.NewPCG(o.Seed, 7))
	var objs []any
	for _, ns := range []string{"default", "kube-system", "ml-research", "ml-prod", "batch", "serving"} {
		objs = append(objs, &corev1.Namespace{TypeMeta: typeMeta("v1", "Namespace"),
			ObjectMeta: metav1.ObjectMeta{Name: ns, CreationTimestamp: created, Labels: map[string]string{corev1.LabelMetadataName: ns}}})
	}
	for _, pc := range []struct {
		name  string
		value int32
	}{{"batch-low", 100}, {"training", 1000}, {"serving-high", 10000}} {
		objs = append(objs, &schedulingv1.PriorityClass{TypeMeta: typeMeta("scheduling.k8s.io/v1", "PriorityClass"),
			ObjectMeta: metav1.ObjectMeta{Name: pc.name, CreationTimestamp: created}, Value: pc.value})
	}
	nodes := make([]*corev1.Node, o.Nodes)
	for i := range o.Nodes {
		nodes[i] = node(o, i)
		objs = append(objs, nodes[i])
	}
	for k := range o.Pods {
		i := k % max(o.Nodes, 1)
		objs = append(objs, runningPod(o, rng, nodes[i], k, k < o.Nodes))
	}
	return objs
}

func node(o Options, i int) *corev1.Node {
	gpu := i < o.GPUNodes
	name := fmt.Sprintf("cpu-%05d", i)
	alloc := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("500Gi"),
	}
	labels := map[string]string{
		ZoneKey:                            fmt.Sprintf("zone-%c", 'a'+i%max(o.Zones, 1)),
		BlockKey:                           fmt.Sprintf("block-%03d", i/max(o.BlockSize, 1)),
		"node.kubernetes.io/instance-type": "m7i.16xlarge",
		corev1.LabelOSStable:               "linux",
		corev1.LabelArchStable:             "amd64",
	}
	var taints []corev1.Taint
	if gpu {
		name = fmt.Sprintf("gpu-%05d", i)
		alloc[corev1.ResourceCPU] = resource.MustParse("96")
		alloc[corev1.ResourceMemory] = resource.MustParse("1000Gi")
		alloc["nvidia.com/gpu"] = resource.MustParse("8")
		labels[GPUKey] = "true"
		labels["nvidia.com/gpu.product"] = "NVIDIA-H100-80GB-HBM3"
		labels["node.kubernetes.io/instance-type"] = "p5.48xlarge"
		taints = append(taints, corev1.Taint{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule})
	}
	labels[corev1.LabelHostname] = name
	return &corev1.Node{
		TypeMeta:   typeMeta("v1", "Node"),
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid("node", i), CreationTimestamp: created, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{
			Capacity: alloc, Allocatable: alloc,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Images: []corev1.ContainerImage{
				{Names: []string{"registry.example.com/ml/trainer:2026.11"}, SizeBytes: 9 << 30},
				{Names: []string{"registry.example.com/base/agent:1.4"}, SizeBytes: 200 << 20},
			},
		},
	}
}

// runningPod is the k-th running pod, on n: the first one of a GPU node is
// a training worker holding GPUsUsed GPUs (production training, or on
// every other node a low-priority sweep), the others are CPU pods of a few
// Deployments and DaemonSets.
func runningPod(o Options, rng *rand.Rand, n *corev1.Node, k int, first bool) *corev1.Pod {
	_, gpu := n.Status.Allocatable["nvidia.com/gpu"]
	ns, app, owner := "serving", fmt.Sprintf("web-%d", k%40), "ReplicaSet"
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(fmt.Sprintf("%dm", 250*(1+rng.IntN(8)))),
		corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", 512*(1+rng.IntN(8))))}
	var tolerations []corev1.Toleration
	priority := "serving-high"
	switch {
	case gpu && first:
		// Half the GPU nodes run production training, half low-priority
		// batch sweeps a training gang may preempt.
		ns, app, owner, priority = "ml-prod", fmt.Sprintf("train-%d", k%50), "Job", "training"
		if k%2 == 1 {
			ns, app, priority = "batch", fmt.Sprintf("sweep-%d", k%50), "batch-low"
		}
		req = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("400Gi"),
			"nvidia.com/gpu": *resource.NewQuantity(int64(o.GPUsUsed), resource.DecimalSI)}
		tolerations = append(tolerations, corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	case k%5 == 1:
		ns, app, owner, priority = "kube-system", "node-agent", "DaemonSet", "serving-high"
		req = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}
		tolerations = append(tolerations, corev1.Toleration{Operator: corev1.TolerationOpExists})
	case gpu:
		tolerations = append(tolerations, corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	name := fmt.Sprintf("%s-%07d", app, k)
	values := map[string]int32{"batch-low": 100, "training": 1000, "serving-high": 10000}
	return &corev1.Pod{
		TypeMeta: typeMeta("v1", "Pod"),
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, UID: uid("pod", k), CreationTimestamp: created,
			Labels: map[string]string{"app.kubernetes.io/name": app, "app.kubernetes.io/part-of": ns, "pod-template-hash": fmt.Sprintf("%08x", k%40*2654435761)},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/restartedAt": "2026-11-01T00:00:00Z",
				"prometheus.io/scrape":              "true",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: ownerAPIVersion(owner), Kind: owner, Name: app, UID: uid(owner, k%40), Controller: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{
			NodeName:          n.Name,
			SchedulerName:     corev1.DefaultSchedulerName,
			PriorityClassName: priority,
			Priority:          ptr.To(values[priority]),
			Tolerations:       tolerations,
			Containers: []corev1.Container{{
				Name: "main", Image: "registry.example.com/ml/trainer:2026.11",
				Resources: corev1.ResourceRequirements{Requests: req, Limits: req},
				Env: []corev1.EnvVar{
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					{Name: "LOG_LEVEL", Value: "info"},
				},
				Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}},
			}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: corev1.PodQOSGuaranteed,
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}},
	}
}

// JobOptions shape a Job to submit.
type JobOptions struct {
	Name, Namespace string
	// Parallelism is how many pods run at once (and the completions).
	Parallelism int32
	// GPUs each pod asks for.
	GPUs int
	// Indexed gives the Job completionMode Indexed.
	Indexed bool
	// ZoneSpread adds a hard spread over zones across the Job's pods.
	ZoneSpread bool
	// Queue, when set, labels the Job for that Kueue LocalQueue.
	Queue string
}

// Job returns a batch/v1 Job as a user would submit it.
func Job(o JobOptions) *batchv1.Job {
	labels := map[string]string{"app.kubernetes.io/name": o.Name}
	req := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(11*o.GPUs), resource.DecimalSI),
		corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dGi", 120*o.GPUs)),
		"nvidia.com/gpu":      *resource.NewQuantity(int64(o.GPUs), resource.DecimalSI),
	}
	job := &batchv1.Job{
		TypeMeta:   typeMeta("batch/v1", "Job"),
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To(o.Parallelism), Completions: ptr.To(o.Parallelism),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:     corev1.RestartPolicyNever,
					PriorityClassName: "training",
					Tolerations:       []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					NodeSelector:      map[string]string{GPUKey: "true"},
					Containers: []corev1.Container{{
						Name: "trainer", Image: "registry.example.com/ml/trainer:2026.11",
						Resources: corev1.ResourceRequirements{Requests: req, Limits: req},
						Env:       []corev1.EnvVar{{Name: "WORLD_SIZE", Value: fmt.Sprint(o.Parallelism)}},
					}},
				},
			},
		},
	}
	if o.Indexed {
		job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	}
	if o.Queue != "" {
		job.Labels = map[string]string{"kueue.x-k8s.io/queue-name": o.Queue}
	}
	if o.ZoneSpread {
		job.Spec.Template.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: ZoneKey, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
		}}
	}
	return job
}

// WriteList writes objects as one JSON v1 List, item by item, so a large
// cluster is never held twice in memory.
func WriteList(w io.Writer, objs []any) error {
	if _, err := io.WriteString(w, `{"apiVersion":"v1","kind":"List","items":[`); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	for i, obj := range objs {
		if i > 0 {
			if _, err := io.WriteString(w, ","); err != nil {
				return err
			}
		}
		if err := enc.Encode(obj); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "]}\n")
	return err
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func ownerAPIVersion(kind string) string {
	switch kind {
	case "Job":
		return "batch/v1"
	default:
		return "apps/v1"
	}
}

// uid is a stable UID for the i-th object of a kind.
func uid(kind string, i int) types.UID {
	var h uint32 = 2166136261
	for _, c := range []byte(kind) {
		h = (h ^ uint32(c)) * 16777619
	}
	return types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", h, i))
}
