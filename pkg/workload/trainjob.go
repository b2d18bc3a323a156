package workload

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/pkg/systems/coscheduling"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
)

// TrainerGroup is the API group of Kubeflow Trainer v2 (kubeflow/trainer);
// this build reads its v1alpha1 TrainJob, ClusterTrainingRuntime and
// TrainingRuntime, the only version its releases serve. Trainer's early
// development served them as kubeflow.org/v2alpha1, which is refused.
const (
	TrainerGroup   = "trainer.kubeflow.org"
	trainerVersion = "v1alpha1"

	trainJobKind               = "TrainJob"
	clusterTrainingRuntimeKind = "ClusterTrainingRuntime"
	trainingRuntimeKind        = "TrainingRuntime"
)

// What Trainer's runtime framework reads in a runtime's JobSet template
// (pkg/constants): the ancestor label that says which replicated Job
// carries which part of the TrainJob, the name of the trainer's container
// (and of MPI's node Job), and the port the torch, JAX and XGBoost plugins
// open on the trainer container.
const (
	trainJobAncestorKey              = "trainer.kubeflow.org/trainjob-ancestor-step"
	trainerAncestor                  = "trainer"
	datasetInitializerAncestor       = "dataset-initializer"
	modelInitializerAncestor         = "model-initializer"
	trainerNode                      = "node"
	trainerPort                int32 = 29500
)

// TrainingRuntimes finds the runtime a TrainJob names: a
// ClusterTrainingRuntime by name (namespace is ignored), a TrainingRuntime
// by namespace and name. It returns nil and no error when there is none.
// FromManifests looks in the runtimes given with -f; a cluster snapshot
// can serve as well.
type TrainingRuntimes interface {
	TrainingRuntime(kind, namespace, name string) (*unstructured.Unstructured, error)
}

// trainingRuntimeKey is a runtime's kind, namespace ("" for a
// ClusterTrainingRuntime) and name.
type trainingRuntimeKey struct{ kind, namespace, name string }

// trainingRuntimeMap is TrainingRuntimes over the runtimes given with -f.
type trainingRuntimeMap map[trainingRuntimeKey]*unstructured.Unstructured

func (r trainingRuntimeMap) TrainingRuntime(kind, namespace, name string) (*unstructured.Unstructured, error) {
	if kind == clusterTrainingRuntimeKind {
		namespace = ""
	}
	return r[trainingRuntimeKey{kind, namespace, name}], nil
}

// runtimeChain looks in each TrainingRuntimes in turn: the manifests', then
// the cluster's.
type runtimeChain []TrainingRuntimes

func (c runtimeChain) TrainingRuntime(kind, namespace, name string) (*unstructured.Unstructured, error) {
	for _, r := range c {
		if rt, err := r.TrainingRuntime(kind, namespace, name); rt != nil || err != nil {
			return rt, err
		}
	}
	return nil, nil
}

// MissingRuntimeError is a TrainJob whose runtime is neither in the
// manifests nor (when one was consulted) in the cluster.
type MissingRuntimeError struct {
	TrainJob, Kind, Namespace, Name string
	// InCluster says the cluster was looked in too.
	InCluster bool
}

func (e *MissingRuntimeError) Error() string {
	what := e.Kind + " " + strconv.Quote(e.Name)
	get := fmt.Sprintf("kubectl get %s %s -o yaml", strings.ToLower(e.Kind), e.Name)
	if e.Kind == trainingRuntimeKind {
		what += " (namespace " + e.Namespace + ")"
		get = fmt.Sprintf("kubectl get %s %s -n %s -o yaml", strings.ToLower(e.Kind), e.Name, e.Namespace)
	}
	if e.InCluster {
		return fmt.Sprintf("%s: its runtime %s is neither in the manifests nor in the cluster", e.TrainJob, what)
	}
	return fmt.Sprintf("%s: its runtime %s is not in the manifests; give it with -f too (%s)", e.TrainJob, what, get)
}

// TrainingRuntimeResources are the resources a runtime of each kind is
// read from in a cluster, at the version this build reads.
var TrainingRuntimeResources = map[string]schema.GroupVersionResource{
	clusterTrainingRuntimeKind: {Group: TrainerGroup, Version: trainerVersion, Resource: "clustertrainingruntimes"},
	trainingRuntimeKind:        {Group: TrainerGroup, Version: trainerVersion, Resource: "trainingruntimes"},
}

// trainerObjects are the Trainer objects manifests.add records. A TrainJob
// needs its runtime, which may come after it, so FromManifests expands the
// TrainJobs (addTrainJobs) once every object is read.
type trainerObjects struct {
	jobs         []recordedTrainJob
	runtimes     trainingRuntimeMap
	runtimeNames []string // the runtimes given, as "Kind "name"", in order
}

// recordedTrainJob is a TrainJob read from -f, in namespace ns.
type recordedTrainJob struct {
	obj            *unstructured.Unstructured
	ns, name, what string
}

// isTrainJob is true for a TrainJob of Trainer's group or of kubeflow.org,
// its early one (refused by checkTrainerVersion).
func isTrainJob(gvk schema.GroupVersionKind) bool {
	return (gvk.Group == TrainerGroup || gvk.Group == KubeflowGroup) && gvk.Kind == trainJobKind
}

// isTrainingRuntime is true for a ClusterTrainingRuntime or a
// TrainingRuntime, of Trainer's group or of kubeflow.org.
func isTrainingRuntime(gvk schema.GroupVersionKind) bool {
	return (gvk.Group == TrainerGroup || gvk.Group == KubeflowGroup) &&
		(gvk.Kind == clusterTrainingRuntimeKind || gvk.Kind == trainingRuntimeKind)
}

// checkTrainerVersion is checkVersion for Trainer's kinds, which also
// existed in kubeflow.org.
func checkTrainerVersion(obj *unstructured.Unstructured, what string) error {
	if err := checkVersion(obj, schema.GroupVersion{Group: TrainerGroup, Version: trainerVersion}, what); err != nil {
		return fmt.Errorf("%w (Kubeflow Trainer v2)", err)
	}
	return nil
}

// recordTrainingRuntime keeps a ClusterTrainingRuntime or TrainingRuntime
// for the TrainJobs that name it. A runtime makes no pods: it is not part of
// the gang's name or namespace (a ClusterTrainingRuntime has none), but
// gang.Gang.Read lists it. A TrainingRuntime serves the TrainJobs of its own
// namespace (the default one when it names none), as Trainer looks it up in
// the TrainJob's.
func (m *builder) recordTrainingRuntime(obj *unstructured.Unstructured, _, name, what string) error {
	gvk := obj.GroupVersionKind()
	if err := checkTrainerVersion(obj, what); err != nil {
		return err
	}
	key := trainingRuntimeKey{kind: gvk.Kind, name: name}
	if gvk.Kind == trainingRuntimeKind {
		key.namespace = cmp.Or(obj.GetNamespace(), m.defaultNamespace)
	}
	if m.trainer.runtimes[key] != nil {
		return fmt.Errorf("%s is given twice", what)
	}
	if m.trainer.runtimes == nil {
		m.trainer.runtimes = trainingRuntimeMap{}
	}
	m.trainer.runtimes[key] = obj
	m.trainer.runtimeNames = append(m.trainer.runtimeNames, what)
	m.read = append(m.read, fmt.Sprintf("%s %s (%s)", gvk.Kind, name, gvk.GroupVersion()))
	return nil
}

// recordTrainJob keeps a TrainJob for addTrainJobs.
func (m *builder) recordTrainJob(obj *unstructured.Unstructured, ns, name, what string) error {
	if err := checkTrainerVersion(obj, what); err != nil {
		return err
	}
	m.trainer.jobs = append(m.trainer.jobs, recordedTrainJob{obj: obj, ns: ns, name: name, what: what})
	return nil
}

// trainJob is the part of a TrainJob that decides its pods.
type trainJob struct {
	Spec struct {
		RuntimeRef struct {
			Name     string  `json:"name,omitempty"`
			APIGroup *string `json:"apiGroup,omitempty"`
			Kind     *string `json:"kind,omitempty"`
		} `json:"runtimeRef"`
		Trainer *struct {
			NumNodes         *int32                       `json:"numNodes,omitempty"`
			ResourcesPerNode *corev1.ResourceRequirements `json:"resourcesPerNode,omitempty"`
		} `json:"trainer,omitempty"`
		RuntimePatches []trainerRuntimePatch `json:"runtimePatches,omitempty"`
	} `json:"spec"`
}

// trainerRuntimePatch is one of a TrainJob's spec.runtimePatches: what it
// may change of the runtime's JobSet template (Trainer's RuntimePatch and
// the types under it; a field not among them is pruned by the API server).
type trainerRuntimePatch struct {
	TrainingRuntimeSpec *struct {
		Template *struct {
			Metadata *trainerMetadataPatch `json:"metadata,omitempty"`
			Spec     *struct {
				ReplicatedJobs []trainerReplicatedJobPatch `json:"replicatedJobs,omitempty"`
			} `json:"spec,omitempty"`
		} `json:"template,omitempty"`
	} `json:"trainingRuntimeSpec,omitempty"`
}

type trainerMetadataPatch struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type trainerReplicatedJobPatch struct {
	Name     string `json:"name,omitempty"`
	Template *struct {
		Metadata *trainerMetadataPatch `json:"metadata,omitempty"`
		Spec     *struct {
			Template *struct {
				Metadata *trainerMetadataPatch `json:"metadata,omitempty"`
				Spec     *trainerPodSpecPatch  `json:"spec,omitempty"`
			} `json:"template,omitempty"`
		} `json:"spec,omitempty"`
	} `json:"template,omitempty"`
}

type trainerPodSpecPatch struct {
	ServiceAccountName            *string                       `json:"serviceAccountName,omitempty"`
	Volumes                       []corev1.Volume               `json:"volumes,omitempty"`
	InitContainers                []trainerContainerPatch       `json:"initContainers,omitempty"`
	Containers                    []trainerContainerPatch       `json:"containers,omitempty"`
	ImagePullSecrets              []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	SecurityContext               *corev1.PodSecurityContext    `json:"securityContext,omitempty"`
	NodeSelector                  map[string]string             `json:"nodeSelector,omitempty"`
	Affinity                      *corev1.Affinity              `json:"affinity,omitempty"`
	Tolerations                   []corev1.Toleration           `json:"tolerations,omitempty"`
	SchedulingGates               []corev1.PodSchedulingGate    `json:"schedulingGates,omitempty"`
	TerminationGracePeriodSeconds *int64                        `json:"terminationGracePeriodSeconds,omitempty"`
}

type trainerContainerPatch struct {
	Name            string                  `json:"name,omitempty"`
	Env             []corev1.EnvVar         `json:"env,omitempty"`
	VolumeMounts    []corev1.VolumeMount    `json:"volumeMounts,omitempty"`
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
}

// mlPolicy is a training runtime's spec.mlPolicy, as far as it decides the
// pods.
type mlPolicy struct {
	NumNodes *int32    `json:"numNodes,omitempty"`
	Torch    *struct{} `json:"torch,omitempty"`
	JAX      *struct{} `json:"jax,omitempty"`
	XGBoost  *struct{} `json:"xgboost,omitempty"`
	MPI      *struct {
		RunLauncherAsNode *bool `json:"runLauncherAsNode,omitempty"`
	} `json:"mpi,omitempty"`
}

// trainingRuntime is the part of a (Cluster)TrainingRuntime's spec that
// decides a TrainJob's pods, but for its JobSet template's spec, which is
// read as it is.
type trainingRuntime struct {
	Spec struct {
		MLPolicy       *mlPolicy `json:"mlPolicy,omitempty"`
		PodGroupPolicy *struct {
			Coscheduling *struct{} `json:"coscheduling,omitempty"`
			Volcano      *struct{} `json:"volcano,omitempty"`
		} `json:"podGroupPolicy,omitempty"`
		Template struct {
			Metadata trainerMetadataPatch `json:"metadata"`
		} `json:"template"`
	} `json:"spec"`
}

// addTrainJobs adds the pods of the TrainJobs manifests.add recorded, each
// with the runtime it names, from runtimes (addTrainJob). When a TrainJob's
// PodGroup asks for fewer pods than it has, the gang's minimum is the sum of
// the TrainJobs' minimums (their PodGroups', or all their pods). Runtimes
// given without any TrainJob or other pods are an error.
func (m *builder) addTrainJobs(runtimes TrainingRuntimes) error {
	if len(m.trainer.jobs) == 0 {
		switch n := len(m.trainer.runtimeNames); {
		case len(m.pods) > 0 || n == 0:
		case n == 1:
			return fmt.Errorf("%s makes no pods by itself; give the TrainJob that names it too", m.trainer.runtimeNames[0])
		default:
			return fmt.Errorf("%s make no pods by themselves; give a TrainJob that names one", strings.Join(m.trainer.runtimeNames, ", "))
		}
		return nil
	}
	// A TrainJob's elasticity is not read (its runtime's policies): the
	// JobSets it expands into say nothing of it.
	told := len(m.elasticity)
	defer func() { m.elasticity, m.elasticityUnknown = m.elasticity[:told], true }()
	for _, j := range m.trainer.jobs {
		before := len(m.pods)
		minMember, err := m.addTrainJob(j, runtimes)
		if err != nil {
			return err
		}
		if pods := int32(len(m.pods) - before); minMember >= 0 && minMember < pods {
			m.excused += pods - minMember
		}
	}
	return nil
}

// addTrainJob adds the pods of the JobSet Trainer's controller creates for
// a TrainJob (the runtime framework's newRuntimeInfo, its ML-policy,
// pod-group and JobSet plugins): the runtime's JobSet template, with the
// TrainJob's spec.runtimePatches applied (strategic merge, replicated Jobs
// by name, in the runtime's order; their metadata's labels and annotations
// join the template's), named as the TrainJob in its namespace, with the
// template's labels and annotations. Then, per replicated Job:
//
//   - its pods at once (parallelism, and completions with it) are, for a Job
//     with ancestor label "trainer" when the runtime has an mlPolicy,
//     mlPolicy.numNodes (default 1), else its parallelism (default 1), at
//     least 1. spec.trainer.numNodes replaces that for the first "trainer"
//     Job, or with an MPI policy for the first Job named "node"
//     (numNodes-1, at least 1, with runLauncherAsNode).
//   - the Jobs with ancestor "trainer", "dataset-initializer" or
//     "model-initializer" have replicas 1.
//   - spec.trainer.resourcesPerNode is merged, key by key (claims by name),
//     into the resources of the first container named "node" of the
//     "trainer" Jobs when the runtime has an mlPolicy, and of the Job named
//     "node" with MPI's runLauncherAsNode.
//   - with a torch, JAX or XGBoost policy and spec.trainer given, the first
//     "trainer" Job's "node" container gets port 29500 (in place of its
//     first port with that number or no name, as Trainer's upsert has it).
//   - with podGroupPolicy.coscheduling, every pod gets the label
//     scheduling.x-k8s.io/pod-group, with volcano the annotation
//     scheduling.k8s.io/group-name, naming the TrainJob. Trainer sets no
//     schedulerName: the runtime's template gives it.
//
// addJobSet expands that JobSet. It returns the minimum of the PodGroup
// Trainer creates (the sum of the replicated Jobs' pod counts, not times
// their replicas), or -1 without a podGroupPolicy. env, image, command,
// args, initializer and numProcPerNode change no pod's scheduling and are
// not read; spec.suspend is ignored (the TrainJob is expanded as if it
// ran), and so is managedBy.
func (m *builder) addTrainJob(j recordedTrainJob, runtimes TrainingRuntimes) (int32, error) {
	tj, tr, rt, rtWhat, err := trainJobRuntime(j, runtimes)
	if err != nil {
		return 0, err
	}
	var numNodes *int32
	var resources *corev1.ResourceRequirements
	if t := tj.Spec.Trainer; t != nil {
		numNodes, resources = t.NumNodes, t.ResourcesPerNode
		if numNodes != nil && *numNodes < 0 {
			return 0, fmt.Errorf("%s: spec.trainer.numNodes must not be negative, got %d", j.what, *numNodes)
		}
	}
	jsWhat := fmt.Sprintf("%s (its JobSet, from %s)", j.what, rtWhat)

	spec, labels, annotations, err := patchedJobSet(j, tj, tr, rt, rtWhat)
	if err != nil {
		return 0, err
	}

	rjobs, _ := spec["replicatedJobs"].([]any)
	ml := tr.Spec.MLPolicy
	templates, names, counts, err := replicatedJobTemplates(rjobs, ml, resources, jsWhat)
	if err != nil {
		return 0, err
	}
	firstTrainer := slices.IndexFunc(templates, func(t *batchv1.JobTemplateSpec) bool { return t.Labels[trainJobAncestorKey] == trainerAncestor })
	mpi := ml != nil && ml.MPI != nil
	if numNodes != nil {
		if mpi {
			if i := slices.Index(names, trainerNode); i >= 0 {
				counts[i] = *numNodes
				if ptr.Deref(ml.MPI.RunLauncherAsNode, false) {
					counts[i] = max(*numNodes-1, 1)
				}
			}
		} else if firstTrainer >= 0 {
			counts[firstTrainer] = *numNodes
		}
	}
	if tj.Spec.Trainer != nil && firstTrainer >= 0 && ml != nil && (ml.Torch != nil || ml.JAX != nil || ml.XGBoost != nil) {
		if c := nodeContainer(&templates[firstTrainer].Spec.Template.Spec); c != nil {
			upsertTrainerPort(c)
		}
	}
	var byCoscheduling, byVolcano bool
	if pg := tr.Spec.PodGroupPolicy; pg != nil {
		byCoscheduling, byVolcano = pg.Coscheduling != nil, pg.Volcano != nil
	}
	minMember := int32(0)
	for i, tmpl := range templates {
		rj := rjobs[i].(map[string]any)
		tmpl.Spec.Parallelism, tmpl.Spec.Completions = ptr.To(counts[i]), ptr.To(counts[i])
		minMember += counts[i]
		switch tmpl.Labels[trainJobAncestorKey] {
		case trainerAncestor, datasetInitializerAncestor, modelInitializerAncestor:
			rj["replicas"] = int64(1)
		}
		pod := &tmpl.Spec.Template
		if byCoscheduling {
			pod.Labels = merged(pod.Labels, map[string]string{coscheduling.Label: j.name})
		}
		if byVolcano {
			pod.Annotations = merged(pod.Annotations, map[string]string{volcano.GroupAnnotation: j.name})
		}
		out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tmpl)
		if err != nil {
			return 0, fmt.Errorf("%s: spec.replicatedJobs[%d].template: %w", jsWhat, i, err)
		}
		rj["template"] = out
	}

	js := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	js.SetAPIVersion(JobSetGroup + "/" + jobSetVersion)
	js.SetKind("JobSet")
	js.SetNamespace(j.ns)
	js.SetName(j.name)
	js.SetLabels(labels)
	js.SetAnnotations(annotations)
	if err := m.addJobSet(js, j.ns, j.name, jsWhat); err != nil {
		return 0, err
	}
	if !byCoscheduling && !byVolcano {
		return -1, nil
	}
	return minMember, nil
}

// jobSetSpecSchema is what a strategic merge patch of a JobSet's spec
// reaches from a runtime patch: replicated Jobs, merged by name (JobSet's
// patch strategy), whose templates are batch/v1 Job templates.
type jobSetSpecSchema struct {
	ReplicatedJobs []struct {
		Name     string                  `json:"name"`
		Template batchv1.JobTemplateSpec `json:"template"`
	} `json:"replicatedJobs,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
}

// patchJobSetSpec applies one runtime patch's replicated Jobs to a JobSet
// spec by strategic merge, then puts the replicated Jobs back in the
// spec's order, as Trainer does (mergeRuntimePatches). A patch of a
// replicated Job the runtime lacks is an error, as Trainer's webhook has it.
func patchJobSetSpec(spec map[string]any, patches []trainerReplicatedJobPatch, what string) (map[string]any, error) {
	if len(patches) == 0 {
		return spec, nil
	}
	order := map[string]int{}
	rjobs, _ := spec["replicatedJobs"].([]any)
	for i, raw := range rjobs {
		if rj, ok := raw.(map[string]any); ok {
			if name, ok := rj["name"].(string); ok {
				order[name] = i
			}
		}
	}
	for _, p := range patches {
		if _, ok := order[p.Name]; !ok {
			return nil, fmt.Errorf("%s patches replicated Job %q, which the runtime's template does not have", what, p.Name)
		}
	}
	src, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	patch, err := json.Marshal(map[string]any{"replicatedJobs": patches})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := strategicpatch.StrategicMergePatch(src, patch, jobSetSpecSchema{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	patched := map[string]any{}
	if err := utiljson.Unmarshal(out, &patched); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if rjobs, ok := patched["replicatedJobs"].([]any); ok {
		nameOf := func(v any) string { rj, _ := v.(map[string]any); name, _ := rj["name"].(string); return name }
		slices.SortStableFunc(rjobs, func(a, b any) int { return cmp.Compare(order[nameOf(a)], order[nameOf(b)]) })
	}
	return patched, nil
}

// nodeContainer is the pod's first container named "node", Trainer's
// trainer container, or nil.
func nodeContainer(spec *corev1.PodSpec) *corev1.Container {
	if i := slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == trainerNode }); i >= 0 {
		return &spec.Containers[i]
	}
	return nil
}

// mergeResources overlays a TrainJob's resourcesPerNode on a container's
// resources as Trainer's strategic merge does: limits and requests key by
// key, claims by name.
func mergeResources(base, over corev1.ResourceRequirements) corev1.ResourceRequirements {
	out := *base.DeepCopy()
	if len(over.Limits) > 0 {
		if out.Limits == nil {
			out.Limits = corev1.ResourceList{}
		}
		maps.Copy(out.Limits, over.Limits)
	}
	if len(over.Requests) > 0 {
		if out.Requests == nil {
			out.Requests = corev1.ResourceList{}
		}
		maps.Copy(out.Requests, over.Requests)
	}
	for _, c := range over.Claims {
		if i := slices.IndexFunc(out.Claims, func(o corev1.ResourceClaim) bool { return o.Name == c.Name }); i >= 0 {
			if c.Request != "" {
				out.Claims[i].Request = c.Request
			}
			continue
		}
		out.Claims = append(out.Claims, c)
	}
	return out
}

// upsertTrainerPort gives the trainer container port 29500 as Trainer's
// upsert does: in place of the first port with that number or with no name,
// else appended. With hostNetwork it becomes a host port.
func upsertTrainerPort(c *corev1.Container) {
	port := corev1.ContainerPort{ContainerPort: trainerPort}
	if i := slices.IndexFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.ContainerPort == trainerPort || p.Name == "" }); i >= 0 {
		c.Ports[i] = port
		return
	}
	c.Ports = append(c.Ports, port)
}

// trainJobRuntime reads TrainJob j and the training runtime its
// spec.runtimeRef names (rt, its name for messages rtWhat); a runtime
// that does not exist is a *MissingRuntimeError.
func trainJobRuntime(j recordedTrainJob, runtimes TrainingRuntimes) (tj *trainJob, tr *trainingRuntime, rt *unstructured.Unstructured, rtWhat string, err error) {
	tj = &trainJob{}
	if err := fromUnstructured(j.obj, tj, j.what); err != nil {
		return nil, nil, nil, "", err
	}
	ref := tj.Spec.RuntimeRef
	if ref.Name == "" {
		return nil, nil, nil, "", fmt.Errorf("%s: spec.runtimeRef.name is required", j.what)
	}
	group, kind := ptr.Deref(ref.APIGroup, TrainerGroup), ptr.Deref(ref.Kind, clusterTrainingRuntimeKind)
	if group != TrainerGroup || kind != clusterTrainingRuntimeKind && kind != trainingRuntimeKind {
		return nil, nil, nil, "", fmt.Errorf("%s: spec.runtimeRef names a %s of %s; Trainer runs a TrainJob on a %s or %s of %s",
			j.what, kind, cmp.Or(group, `""`), clusterTrainingRuntimeKind, trainingRuntimeKind, TrainerGroup)
	}
	rt, err = runtimes.TrainingRuntime(kind, j.ns, ref.Name)
	if err != nil {
		return nil, nil, nil, "", fmt.Errorf("%s: %w", j.what, err)
	}
	rtWhat = kind + " " + strconv.Quote(ref.Name)
	if rt == nil {
		_, inCluster := runtimes.(runtimeChain)
		return nil, nil, nil, "", &MissingRuntimeError{TrainJob: j.what, Kind: kind, Namespace: j.ns, Name: ref.Name, InCluster: inCluster}
	}
	tr = &trainingRuntime{}
	if err := fromUnstructured(rt, tr, rtWhat); err != nil {
		return nil, nil, nil, "", err
	}
	return tj, tr, rt, rtWhat, nil
}

// replicatedJobTemplates reads the JobSet's replicated Jobs: each one's
// template, name and pod count (the trainer's from the ML policy's
// numNodes), with the TrainJob's resourcesPerNode merged into the node
// container of the trainer (and of an MPI launcher run as a node).
func replicatedJobTemplates(rjobs []any, ml *mlPolicy, resources *corev1.ResourceRequirements, jsWhat string) ([]*batchv1.JobTemplateSpec, []string, []int32, error) {
	templates := make([]*batchv1.JobTemplateSpec, len(rjobs))
	names := make([]string, len(rjobs))
	counts := make([]int32, len(rjobs))
	for i, raw := range rjobs {
		rj, ok := raw.(map[string]any)
		if !ok {
			return nil, nil, nil, fmt.Errorf("%s: spec.replicatedJobs[%d] must be an object", jsWhat, i)
		}
		names[i], _ = rj["name"].(string)
		tmpl := &batchv1.JobTemplateSpec{}
		if t, ok := rj["template"].(map[string]any); ok {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(t, tmpl); err != nil {
				return nil, nil, nil, fmt.Errorf("%s: spec.replicatedJobs[%d].template: %w", jsWhat, i, err)
			}
		}
		templates[i] = tmpl
		counts[i] = ptr.Deref(tmpl.Spec.Parallelism, 1)
		trainerJob := tmpl.Labels[trainJobAncestorKey] == trainerAncestor && ml != nil
		if trainerJob {
			counts[i] = ptr.Deref(ml.NumNodes, 1)
		}
		counts[i] = max(counts[i], 1)
		launcherAsNode := ml != nil && ml.MPI != nil && ptr.Deref(ml.MPI.RunLauncherAsNode, false) && names[i] == trainerNode
		if resources != nil && (trainerJob || launcherAsNode) {
			if c := nodeContainer(&tmpl.Spec.Template.Spec); c != nil {
				c.Resources = mergeResources(c.Resources, *resources)
			}
		}
	}
	return templates, names, counts, nil
}

// patchedJobSet is the runtime's JobSet template (its spec, labels and
// annotations) with the TrainJob's runtimePatches applied.
func patchedJobSet(j recordedTrainJob, tj *trainJob, tr *trainingRuntime, rt *unstructured.Unstructured, rtWhat string) (spec map[string]any, labels, annotations map[string]string, err error) {
	spec, _, err = unstructured.NestedMap(rt.Object, "spec", "template", "spec")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: spec.template.spec: %w", rtWhat, err)
	}
	if spec == nil {
		spec = map[string]any{}
	}
	labels, annotations = maps.Clone(tr.Spec.Template.Metadata.Labels), maps.Clone(tr.Spec.Template.Metadata.Annotations)
	for i, p := range tj.Spec.RuntimePatches {
		if p.TrainingRuntimeSpec == nil || p.TrainingRuntimeSpec.Template == nil {
			continue
		}
		if md := p.TrainingRuntimeSpec.Template.Metadata; md != nil {
			labels, annotations = merged(labels, md.Labels), merged(annotations, md.Annotations)
		}
		if s := p.TrainingRuntimeSpec.Template.Spec; s != nil {
			if spec, err = patchJobSetSpec(spec, s.ReplicatedJobs, fmt.Sprintf("%s: spec.runtimePatches[%d]", j.what, i)); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	return spec, labels, annotations, nil
}
