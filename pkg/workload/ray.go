package workload

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// RayGroup is the API group of KubeRay's RayCluster and RayJob; this build
// reads their v1, the only version KubeRay's current releases serve.
const (
	RayGroup   = "ray.io"
	rayVersion = "v1"
)

// RayGangSchedulingKey on a RayCluster (or on a RayJob, which copies its
// labels to the RayCluster it creates) asks KubeRay's batch scheduler
// integrations for gang scheduling; they read its presence, not its value.
const RayGangSchedulingKey = "ray.io/gang-scheduling-enabled"

// The labels and annotations KubeRay puts on the pods of a RayCluster
// (labelPod, DefaultHeadPodTemplate, DefaultWorkerPodTemplate with the
// RayMultiHostIndexing gate on, its default since KubeRay 1.6) and on a
// RayJob's submitter (getSubmitterTemplate).
const (
	rayClusterKey       = "ray.io/cluster"
	rayNodeTypeKey      = "ray.io/node-type"
	rayGroupKey         = "ray.io/group"
	rayIsNodeKey        = "ray.io/is-ray-node"
	rayIdentifierKey    = "ray.io/identifier"
	rayReplicaNameKey   = "ray.io/worker-group-replica-name"
	rayReplicaIndexKey  = "ray.io/worker-group-replica-index"
	rayHostIndexKey     = "ray.io/replica-host-index"
	rayFTEnabledKey     = "ray.io/ft-enabled"
	rayOverwriteCmdKey  = "ray.io/overwrite-container-cmd"
	rayOriginNameKey    = "ray.io/originated-from-cr-name"
	rayOriginCRDKey     = "ray.io/originated-from-crd"
	appNameKey          = "app.kubernetes.io/name"
	appCreatedByKey     = "app.kubernetes.io/created-by"
	rayAppName          = "kuberay"
	rayOperatorName     = "kuberay-operator"
	rayHeadNode         = "head"
	rayWorkerNode       = "worker"
	rayHeadGroupName    = "headgroup"
	rayPodPrefixMax     = 50 // utils.PodName keeps this much of the prefix
	rayLabelMax         = 63
	rayJobClusterSuffix = "-cluster" // stands in for the 5 random characters
)

// The RayJob submission modes (spec.submissionMode, K8sJobMode by default).
const (
	rayK8sJobMode      = "K8sJobMode"
	rayHTTPMode        = "HTTPMode"
	rayInteractiveMode = "InteractiveMode"
	raySidecarMode     = "SidecarMode"
)

// rayClusterSpec is the part of a ray.io/v1 RayClusterSpec (a RayCluster's
// spec, a RayJob's spec.rayClusterSpec) that decides its pods.
type rayClusterSpec struct {
	EnableInTreeAutoscaling *bool `json:"enableInTreeAutoscaling,omitempty"`
	AutoscalerOptions       *struct {
		Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
		Version   string                       `json:"version,omitempty"`
	} `json:"autoscalerOptions,omitempty"`
	GcsFaultToleranceOptions *struct{} `json:"gcsFaultToleranceOptions,omitempty"`
	HeadGroupSpec            *struct {
		Labels   map[string]string      `json:"labels,omitempty"`
		Template corev1.PodTemplateSpec `json:"template"`
	} `json:"headGroupSpec,omitempty"`
	WorkerGroupSpecs []rayWorkerGroup `json:"workerGroupSpecs,omitempty"`
}

// rayWorkerGroup is one of a RayClusterSpec's workerGroupSpecs.
type rayWorkerGroup struct {
	GroupName   string                 `json:"groupName"`
	Replicas    *int32                 `json:"replicas,omitempty"`
	MinReplicas *int32                 `json:"minReplicas,omitempty"`
	MaxReplicas *int32                 `json:"maxReplicas,omitempty"`
	NumOfHosts  *int32                 `json:"numOfHosts,omitempty"`
	Labels      map[string]string      `json:"labels,omitempty"`
	Template    corev1.PodTemplateSpec `json:"template"`
}

// rayJob is the part of a ray.io/v1 RayJob that decides its pods.
type rayJob struct {
	Spec struct {
		SubmissionMode       string                  `json:"submissionMode,omitempty"`
		ClusterSelector      map[string]string       `json:"clusterSelector,omitempty"`
		RayClusterSpec       *rayClusterSpec         `json:"rayClusterSpec,omitempty"`
		SubmitterPodTemplate *corev1.PodTemplateSpec `json:"submitterPodTemplate,omitempty"`
	} `json:"spec"`
	Status struct {
		RayClusterName string `json:"rayClusterName,omitempty"`
	} `json:"status"`
}

// addRayCluster adds the pods KubeRay's RayCluster controller creates: one
// head pod and, per worker group, replicas (clamped to [minReplicas,
// maxReplicas], defaults 0, 0 and MaxInt32) times numOfHosts (default 1)
// worker pods. KubeRay names them <cluster>-head-<random> and
// <cluster>-<group>-worker-<random> (the prefix cut to 50 characters); a
// what-if names them <cluster>-head (the name KubeRay gives with
// ENABLE_DETERMINISTIC_HEAD_POD_NAME) and <cluster>-<group>-worker-<i>,
// i counting the group's pods from 0, replica by replica. See rayHeadPod and
// rayWorkerPod for what KubeRay adds to the templates.
//
// Every pod must run, unless the RayCluster carries RayGangSchedulingKey:
// then the minimum is what KubeRay's YuniKorn integration asks for, the
// head plus each worker group's minReplicas x numOfHosts (Volcano's
// PodGroup has the same minimum with in-tree autoscaling; the
// scheduler-plugins PodGroup asks for every pod). No PodGroup is made: the
// batch scheduler is the operator's setting, which a manifest cannot show,
// as are the scheduler name, labels and annotations it puts on the pods and
// the operator's default pod labels, annotations and sidecars; none is
// added. A suspended cluster (spec.suspend) or worker group is expanded as
// if resumed.
func (m *builder) addRayCluster(obj *unstructured.Unstructured, ns, name, what string) error {
	if err := checkVersion(obj, schema.GroupVersion{Group: RayGroup, Version: rayVersion}, what); err != nil {
		return err
	}
	rc := &struct {
		Spec rayClusterSpec `json:"spec"`
	}{}
	if err := fromUnstructured(obj, rc, what); err != nil {
		return err
	}
	before := len(m.pods)
	if err := m.addRayClusterPods(ns, name, what, "spec", &rc.Spec, obj.GetAnnotations()); err != nil {
		return err
	}
	_, gang := obj.GetLabels()[RayGangSchedulingKey]
	m.setRayMinimum(len(m.pods)-before, rayGangMinimum(&rc.Spec), gang)
	m.recordRayElastic(what, &rc.Spec, len(m.pods)-before, rayGangMinimum(&rc.Spec), gang)
	return nil
}

// recordRayElastic records how few pods a Ray cluster runs with: with
// in-tree autoscaling (spec.enableInTreeAutoscaling) the autoscaler scales
// each worker group down to its minReplicas, so it runs with the head and
// minReplicas x numOfHosts workers per group (minimum, rayGangMinimum); so
// it does by design when it asks for gang scheduling (RayGangSchedulingKey)
// with that minimum. Otherwise KubeRay keeps every group's replicas.
func (m *builder) recordRayElastic(what string, spec *rayClusterSpec, pods int, minimum int32, gang bool) {
	switch {
	case pods == 0:
	case ptr.Deref(spec.EnableInTreeAutoscaling, false) && minimum < int32(pods):
		m.elasticity = append(m.elasticity, gangElastic(minimum, int32(pods),
			fmt.Sprintf("%s autoscales (enableInTreeAutoscaling): it runs with %d of its %d pod(s), the head and each worker group's minReplicas", what, minimum, pods)))
	case gang && minimum < int32(pods):
		m.recordMinimum(what, "the head and each worker group's minReplicas, with "+RayGangSchedulingKey, minimum, int32(pods))
	default:
		m.recordFixed(what, fmt.Sprintf("keeps every worker group's replicas (%d pod(s); no in-tree autoscaling)", pods), int32(pods))
	}
}

// addRayJob adds the pods of what a RayJob's controller creates: the
// RayCluster of spec.rayClusterSpec (see addRayCluster), and in K8sJobMode
// (the default) the submitter, a batch Job named after the RayJob whose one
// pod runs `ray job submit` (from spec.submitterPodTemplate, or KubeRay's
// default: one ray-job-submitter container with the head's image asking
// 500m CPU and 200Mi memory). KubeRay creates the submitter once the
// cluster is ready; a what-if counts it in the gang, as YuniKorn's task
// groups do. HTTPMode and InteractiveMode make no submitter; SidecarMode
// adds the submitter container to the head pod, whose restartPolicy
// becomes Never. With spec.clusterSelector the job runs on an existing
// RayCluster and only the submitter (if any) is added.
//
// KubeRay names the RayCluster <rayjob>-<5 random characters> and records
// it in status.rayClusterName; a what-if uses that name when the status
// has one, and <rayjob>-cluster otherwise. The RayCluster carries the
// RayJob's labels and annotations, so RayGangSchedulingKey on the RayJob
// asks for gang scheduling: the minimum is the head, each worker group's
// minReplicas x numOfHosts, and the submitter pod. A suspended RayJob is
// expanded as if resumed.
func (m *builder) addRayJob(obj *unstructured.Unstructured, ns, name, what string) error {
	if err := checkVersion(obj, schema.GroupVersion{Group: RayGroup, Version: rayVersion}, what); err != nil {
		return err
	}
	rj := &rayJob{}
	if err := fromUnstructured(obj, rj, what); err != nil {
		return err
	}
	mode := cmp.Or(rj.Spec.SubmissionMode, rayK8sJobMode)
	switch mode {
	case rayK8sJobMode, rayHTTPMode, rayInteractiveMode, raySidecarMode:
	default:
		return fmt.Errorf("%s: spec.submissionMode %q is not one of %s, %s, %s, %s", what, mode, rayK8sJobMode, rayHTTPMode, rayInteractiveMode, raySidecarMode)
	}
	before := len(m.pods)
	var minimum int32
	spec := rj.Spec.RayClusterSpec
	switch {
	case len(rj.Spec.ClusterSelector) > 0:
		if rj.Spec.ClusterSelector[rayClusterKey] == "" {
			return fmt.Errorf("%s: spec.clusterSelector must name the RayCluster in %s", what, rayClusterKey)
		}
		if mode == raySidecarMode {
			return fmt.Errorf("%s: spec.clusterSelector cannot be used with submissionMode %s", what, raySidecarMode)
		}
		spec = nil // the job runs on the existing cluster
	case spec == nil:
		return fmt.Errorf("%s: spec.rayClusterSpec or spec.clusterSelector is required", what)
	default:
		if err := rayJobSidecar(spec, mode, what); err != nil {
			return err
		}
		cluster := cmp.Or(rj.Status.RayClusterName, name+rayJobClusterSuffix)
		if err := m.addRayClusterPods(ns, cluster, what, "spec.rayClusterSpec", spec, obj.GetAnnotations()); err != nil {
			return err
		}
		minimum = rayGangMinimum(spec)
	}
	if mode == rayK8sJobMode {
		if err := m.addRaySubmitter(ns, name, what, spec, rj.Spec.SubmitterPodTemplate); err != nil {
			return err
		}
		minimum++
	}
	_, gang := obj.GetLabels()[RayGangSchedulingKey]
	m.setRayMinimum(len(m.pods)-before, minimum, gang && len(rj.Spec.ClusterSelector) == 0)
	if spec == nil {
		m.recordFixed(what, "adds only its submitter to a RayCluster that runs already", int32(len(m.pods)-before))
	} else {
		m.recordRayElastic(what, spec, len(m.pods)-before, minimum, gang && len(rj.Spec.ClusterSelector) == 0)
	}
	return nil
}

// rayJobSidecar does to a RayJob's cluster spec what SidecarMode does
// (constructRayClusterForRayJob): the submitter container joins the head
// pod, which then never restarts.
func rayJobSidecar(spec *rayClusterSpec, mode, what string) error {
	if mode != raySidecarMode || spec.HeadGroupSpec == nil || len(spec.HeadGroupSpec.Template.Spec.Containers) == 0 {
		return nil // addRayClusterPods reports a missing head
	}
	head := &spec.HeadGroupSpec.Template.Spec
	if p := head.RestartPolicy; p != "" && p != corev1.RestartPolicyNever {
		return fmt.Errorf("%s: spec.rayClusterSpec.headGroupSpec.template.spec.restartPolicy must be Never or unset with submissionMode %s, got %s",
			what, raySidecarMode, p)
	}
	head.Containers = append(head.Containers, raySubmitterContainer(head.Containers[0].Image))
	head.RestartPolicy = corev1.RestartPolicyNever
	return nil
}

// addRaySubmitter adds the pod of a RayJob's submitter Job, named after the
// RayJob, with the labels KubeRay gives its template.
func (m *builder) addRaySubmitter(ns, name, what string, spec *rayClusterSpec, tmpl *corev1.PodTemplateSpec) error {
	var t corev1.PodTemplateSpec
	if tmpl != nil {
		t = *tmpl.DeepCopy()
	} else {
		image := "" // with a clusterSelector, the existing cluster's head image
		if spec != nil {
			image = spec.HeadGroupSpec.Template.Spec.Containers[0].Image
		}
		t.Spec = corev1.PodSpec{Containers: []corev1.Container{raySubmitterContainer(image)}, RestartPolicy: corev1.RestartPolicyNever}
	}
	t.Labels = merged(t.Labels, map[string]string{rayOriginNameKey: name, rayOriginCRDKey: "RayJob", appCreatedByKey: rayOperatorName})
	return m.addJobPods(ns, name, what, &batchv1.JobSpec{Template: t}, nil)
}

// addRayClusterPods adds the head and worker pods of the RayCluster named
// cluster, read from spec (at path, for errors); annotations are the
// RayCluster's.
func (m *builder) addRayClusterPods(ns, cluster, what, path string, spec *rayClusterSpec, annotations map[string]string) error {
	if err := validateRaySpec(spec, what, path); err != nil {
		return err
	}
	if err := m.addPod(rayHeadPod(ns, cluster, spec, annotations)); err != nil {
		return err
	}
	next := map[string]int{} // per name prefix: KubeRay cuts long prefixes, which may then meet
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		hosts := ptr.Deref(g.NumOfHosts, 1)
		for r := range int(rayWorkerReplicas(g)) {
			for h := range int(hosts) {
				pod := rayWorkerPod(ns, cluster, spec, g, annotations, r, h)
				prefix := pod.Name
				pod.Name = prefix + strconv.Itoa(next[prefix])
				next[prefix]++
				if err := m.addPod(pod); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// validateRaySpec checks what addRayClusterPods needs of a RayClusterSpec,
// with the checks of KubeRay's ValidateRayClusterSpec that bear on pods.
func validateRaySpec(spec *rayClusterSpec, what, path string) error {
	if spec.HeadGroupSpec == nil {
		return fmt.Errorf("%s: %s.headGroupSpec is required", what, path)
	}
	if len(spec.HeadGroupSpec.Template.Spec.Containers) == 0 {
		return fmt.Errorf("%s: %s.headGroupSpec.template.spec.containers is required (the Ray container comes first)", what, path)
	}
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		at := fmt.Sprintf("%s.workerGroupSpecs[%d]", path, i)
		if g.GroupName == "" {
			return fmt.Errorf("%s: %s.groupName is required", what, at)
		}
		for _, f := range []struct {
			name string
			v    *int32
		}{{"replicas", g.Replicas}, {"minReplicas", g.MinReplicas}, {"maxReplicas", g.MaxReplicas}} {
			if f.v != nil && *f.v < 0 {
				return fmt.Errorf("%s: %s.%s must not be negative, got %d", what, at, f.name, *f.v)
			}
		}
		if lo, hi := ptr.Deref(g.MinReplicas, 0), ptr.Deref(g.MaxReplicas, math.MaxInt32); lo > hi {
			return fmt.Errorf("%s: %s.minReplicas (%d) must not be greater than maxReplicas (%d)", what, at, lo, hi)
		}
		if n := ptr.Deref(g.NumOfHosts, 1); n < 1 {
			return fmt.Errorf("%s: %s.numOfHosts must be at least 1, got %d", what, at, n)
		}
		if len(g.Template.Spec.Containers) == 0 {
			return fmt.Errorf("%s: %s.template.spec.containers is required (the Ray container comes first)", what, at)
		}
	}
	return nil
}

// rayWorkerReplicas is the number of replicas KubeRay keeps of a worker
// group (GetWorkerGroupDesiredReplicas, suspension aside): replicas clamped
// to [minReplicas, maxReplicas].
func rayWorkerReplicas(g *rayWorkerGroup) int32 {
	lo, hi := ptr.Deref(g.MinReplicas, 0), ptr.Deref(g.MaxReplicas, math.MaxInt32)
	return min(max(ptr.Deref(g.Replicas, 0), lo), hi)
}

// rayGangMinimum is the gang minimum KubeRay's YuniKorn integration gives a
// RayCluster (newTaskGroupsFromRayClusterSpec): the head plus each worker
// group's minReplicas x numOfHosts.
func rayGangMinimum(spec *rayClusterSpec) int32 {
	n := int32(1)
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		n += ptr.Deref(g.MinReplicas, 0) * ptr.Deref(g.NumOfHosts, 1)
	}
	return n
}

// setRayMinimum records the gang minimum of a Ray object that just added
// its last `added` pods: minimum of them when it asks for gang scheduling,
// all of them otherwise (the others are excused).
func (m *builder) setRayMinimum(added int, minimum int32, gang bool) {
	if gang {
		m.excused += int32(added) - min(minimum, int32(added))
	}
}

// rayHeadPod is the head pod KubeRay builds (DefaultHeadPodTemplate,
// BuildPod): the template with KubeRay's labels (the group's labels field
// merged in), the ray.io/ft-enabled annotation, and with in-tree
// autoscaling the autoscaler container (500m CPU and 512Mi memory unless
// autoscalerOptions.resources says otherwise; autoscaler v2 makes the pod
// restartPolicy Never).
func rayHeadPod(ns, cluster string, spec *rayClusterSpec, annotations map[string]string) *corev1.Pod {
	head := spec.HeadGroupSpec
	tmpl := head.Template.DeepCopy()
	tmpl.Labels = rayPodLabels(rayHeadNode, cluster, rayHeadGroupName, merged(tmpl.Labels, head.Labels))
	tmpl.Annotations = rayPodAnnotations(tmpl.Annotations, annotations)
	ft := strings.EqualFold(annotations[rayFTEnabledKey], "true") || spec.GcsFaultToleranceOptions != nil
	tmpl.Annotations[rayFTEnabledKey] = strconv.FormatBool(ft)
	if ptr.Deref(spec.EnableInTreeAutoscaling, false) {
		autoscaler := corev1.Container{Name: "autoscaler", Image: tmpl.Spec.Containers[0].Image, Resources: rayResources("500m", "512Mi", "500m", "512Mi")}
		if o := spec.AutoscalerOptions; o != nil && o.Resources != nil {
			autoscaler.Resources = *o.Resources.DeepCopy()
		}
		tmpl.Spec.Containers = append(tmpl.Spec.Containers, autoscaler)
		rayAutoscalerV2(tmpl, spec)
	}
	return podFromTemplate(tmpl, ns, rayPodName(cluster, rayHeadNode))
}

// rayWorkerPod is the worker pod KubeRay builds for host h of replica r of
// a group (DefaultWorkerPodTemplate, BuildPod), named up to its index: the
// template with KubeRay's labels (the group's labels field merged in) and
// the replica index; a multi-host group's pods also carry the replica's
// name (<group>-<r> here, <group>-<random> in KubeRay) and their host
// index. KubeRay adds the wait-gcs-ready init container (200m CPU and 256Mi
// memory; unless the operator runs with ENABLE_INIT_CONTAINER_INJECTION=false);
// autoscaler v2 makes the pod restartPolicy Never.
func rayWorkerPod(ns, cluster string, spec *rayClusterSpec, g *rayWorkerGroup, annotations map[string]string, r, h int) *corev1.Pod {
	tmpl := g.Template.DeepCopy()
	tmpl.Labels = rayPodLabels(rayWorkerNode, cluster, g.GroupName, merged(tmpl.Labels, g.Labels))
	tmpl.Labels[rayReplicaIndexKey] = strconv.Itoa(r)
	if ptr.Deref(g.NumOfHosts, 1) > 1 {
		tmpl.Labels[rayReplicaNameKey] = fmt.Sprintf("%s-%d", g.GroupName, r)
		tmpl.Labels[rayHostIndexKey] = strconv.Itoa(h)
	}
	tmpl.Annotations = rayPodAnnotations(tmpl.Annotations, annotations)
	ray := tmpl.Spec.Containers[0]
	tmpl.Spec.InitContainers = append(tmpl.Spec.InitContainers, corev1.Container{
		Name: "wait-gcs-ready", Image: ray.Image, Resources: rayResources("200m", "256Mi", "200m", "256Mi")})
	if ptr.Deref(spec.EnableInTreeAutoscaling, false) {
		rayAutoscalerV2(tmpl, spec)
	}
	return podFromTemplate(tmpl, ns, rayPodName(cluster+"-"+g.GroupName, rayWorkerNode)+"-")
}

// rayAutoscalerV2 makes a pod restartPolicy Never when the cluster asks for
// autoscaler v2 (autoscalerOptions.version).
func rayAutoscalerV2(tmpl *corev1.PodTemplateSpec, spec *rayClusterSpec) {
	if o := spec.AutoscalerOptions; o != nil && o.Version == "v2" {
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	}
}

// rayPodLabels is KubeRay's labelPod: its labels, with the template's
// added, except that ray.io/node-type, ray.io/group and ray.io/cluster
// cannot be overridden.
func rayPodLabels(nodeType, cluster, group string, template map[string]string) map[string]string {
	labels := map[string]string{
		rayIsNodeKey:     "yes",
		rayClusterKey:    cluster,
		rayNodeTypeKey:   nodeType,
		rayGroupKey:      group,
		rayIdentifierKey: rayCheckLabel(cluster + "-" + nodeType),
		appNameKey:       rayAppName,
		appCreatedByKey:  rayOperatorName,
	}
	for k, v := range template {
		if k != rayNodeTypeKey && k != rayGroupKey && k != rayClusterKey {
			labels[k] = v
		}
	}
	return labels
}

// rayPodAnnotations is a template's annotations (a new map) with the one
// KubeRay copies from the RayCluster (initTemplateAnnotations).
func rayPodAnnotations(template, cluster map[string]string) map[string]string {
	out := merged(template, nil)
	if strings.EqualFold(cluster[rayOverwriteCmdKey], "true") {
		out[rayOverwriteCmdKey] = "true"
	}
	return out
}

// rayPodName is KubeRay's utils.PodName without the generated suffix:
// the prefix cut to 50 characters, "-" and the node type, lower-cased.
func rayPodName(prefix, nodeType string) string {
	if len(prefix) > rayPodPrefixMax {
		prefix = prefix[:rayPodPrefixMax]
	}
	return strings.ToLower(prefix + "-" + nodeType)
}

// rayCheckLabel is KubeRay's utils.CheckLabel: a label value keeps its last
// 63 characters and does not start with punctuation.
func rayCheckLabel(s string) string {
	if len(s) > rayLabelMax {
		s = s[len(s)-rayLabelMax:]
	}
	if s != "" && unicode.IsPunct(rune(s[0])) {
		s = "r" + s[1:]
	}
	return s
}

// raySubmitterContainer is KubeRay's default submitter container
// (GetDefaultSubmitterContainer).
func raySubmitterContainer(image string) corev1.Container {
	return corev1.Container{Name: "ray-job-submitter", Image: image, Resources: rayResources("500m", "200Mi", "1", "1Gi")}
}

// rayResources is CPU and memory requests and limits.
func rayResources(cpu, memory, cpuLimit, memoryLimit string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuLimit), corev1.ResourceMemory: resource.MustParse(memoryLimit)},
	}
}
