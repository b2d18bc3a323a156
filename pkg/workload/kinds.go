package workload

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// Kind is one kind of object the expansion reads (docs/design.md#gangs):
// how it is recognized and expanded, and, for a workload a verb also reads
// from the cluster by name (jobset/NAME), its resource and the names a
// subject may call it by. The table of kinds (kinds) drives expansion, the
// live subjects, completion and the message that lists what -f takes.
type Kind struct {
	Kind string
	// Resource is the resource at the one version the expansion reads;
	// zero for kinds only -f carries (Pods, PodGroups, runtimes, claims).
	Resource schema.GroupVersionResource
	// Names are the singular, plural and short names, lower-case; none for
	// kinds only -f carries.
	Names []string
	// Selected: the controller names its pods at random and gives them
	// only the template's labels, so the live pods it stands for are told
	// by its selector (MergeLiveSelected) rather than by name or identity.
	Selected bool

	// family names the kind where the error lists what -f takes; kinds of
	// one family in a row are named once, accompanying ones at the end.
	family      string
	accompanies bool
	// match recognizes the kind (any version: add refuses one it does not read).
	match func(schema.GroupVersionKind) bool
	// add expands an object of the kind; ns is the gang's namespace,
	// what names the object in errors.
	add func(b *builder, obj *unstructured.Unstructured, ns, name, what string) error
	// makesNoPods: the object only serves others (a TrainJob's runtime, a
	// member's claim), so it is not part of the gang's name or namespace.
	makesNoPods bool
}

// Qualified is the resource as kubectl names it in messages:
// jobsets.jobset.x-k8s.io, jobs.batch.
func (k Kind) Qualified() string {
	return k.Resource.Resource + "." + k.Resource.Group
}

func exactly(gvk schema.GroupVersionKind) func(schema.GroupVersionKind) bool {
	return func(got schema.GroupVersionKind) bool { return got == gvk }
}

func groupKind(group, kind string) func(schema.GroupVersionKind) bool {
	return func(got schema.GroupVersionKind) bool { return got.Group == group && got.Kind == kind }
}

// kinds is the table, in the order help, completion and messages list them.
var kinds = func() []Kind {
	out := []Kind{
		{Kind: "Pod", family: "Pods", match: exactly(podGVK), add: (*builder).addPodObject},
		{Kind: schedule.PodGroupKind, family: "a PodGroup", match: schedule.IsPodGroup, add: (*builder).addPodGroup},
		{Kind: "Job", Resource: batchv1.SchemeGroupVersion.WithResource("jobs"), Names: []string{"job", "jobs"},
			family: "Jobs", match: exactly(jobGVK), add: (*builder).addJob},
		{Kind: "Deployment", Resource: appsv1.SchemeGroupVersion.WithResource("deployments"), Names: []string{"deployment", "deployments", "deploy"},
			Selected: true, family: "Deployments", match: exactly(deploymentGVK), add: (*builder).addDeployment},
		{Kind: "ReplicaSet", Resource: appsv1.SchemeGroupVersion.WithResource("replicasets"), Names: []string{"replicaset", "replicasets", "rs"},
			Selected: true, family: "ReplicaSets", match: exactly(replicaSetGVK), add: (*builder).addReplicaSet},
		{Kind: "StatefulSet", Resource: appsv1.SchemeGroupVersion.WithResource("statefulsets"), Names: []string{"statefulset", "statefulsets", "sts"},
			family: "StatefulSets", match: exactly(statefulSetGVK), add: (*builder).addStatefulSet},
		{Kind: "Job", Resource: VolcanoJobGVK.GroupVersion().WithResource("jobs"), Names: []string{"vcjob", "vcjobs", "vj"},
			family: "Volcano Jobs", match: exactly(VolcanoJobGVK), add: (*builder).addVolcanoJob},
		{Kind: "JobSet", Resource: schema.GroupVersionResource{Group: JobSetGroup, Version: jobSetVersion, Resource: "jobsets"},
			Names: []string{"jobset", "jobsets"}, family: "JobSets", match: groupKind(JobSetGroup, "JobSet"), add: (*builder).addJobSet},
		{Kind: "LeaderWorkerSet", Resource: schema.GroupVersionResource{Group: LeaderWorkerSetGroup, Version: lwsVersion, Resource: "leaderworkersets"},
			Names: []string{"leaderworkerset", "leaderworkersets", "lws"}, family: "LeaderWorkerSets",
			match: groupKind(LeaderWorkerSetGroup, "LeaderWorkerSet"), add: (*builder).addLeaderWorkerSet},
	}
	const kubeflowFamily = "Kubeflow training jobs (PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob, MPIJob)"
	for _, kind := range []string{"PyTorchJob", "TFJob", "XGBoostJob", "PaddleJob", "JAXJob"} {
		out = append(out, kubeflowTableKind(kind, kubeflowVersion, kubeflowFamily, (*builder).addKubeflowJob))
	}
	out = append(out, kubeflowTableKind("MPIJob", mpiJobVersion, kubeflowFamily, (*builder).addMPIJob),
		Kind{Kind: "RayCluster", Resource: schema.GroupVersionResource{Group: RayGroup, Version: rayVersion, Resource: "rayclusters"},
			Names: []string{"raycluster", "rayclusters"}, family: "RayClusters", match: groupKind(RayGroup, "RayCluster"), add: (*builder).addRayCluster},
		Kind{Kind: "RayJob", Resource: schema.GroupVersionResource{Group: RayGroup, Version: rayVersion, Resource: "rayjobs"},
			Names: []string{"rayjob", "rayjobs"}, family: "RayJobs", match: groupKind(RayGroup, "RayJob"), add: (*builder).addRayJob},
		Kind{Kind: "TrainJob", Resource: schema.GroupVersionResource{Group: TrainerGroup, Version: trainerVersion, Resource: "trainjobs"},
			Names: []string{"trainjob", "trainjobs"}, family: "Kubeflow Trainer TrainJobs (with their ClusterTrainingRuntime or TrainingRuntime)",
			match: isTrainJob, add: (*builder).recordTrainJob},
		Kind{Kind: "TrainingRuntime", match: isTrainingRuntime, add: (*builder).recordTrainingRuntime, makesNoPods: true},
		Kind{Kind: "ResourceClaim", family: "the ResourceClaimTemplates and ResourceClaims (resource.k8s.io/v1) they use", accompanies: true,
			match: func(gvk schema.GroupVersionKind) bool {
				return gvk.Group == resourcev1.GroupName && (gvk.Kind == claimTemplateGVK.Kind || gvk.Kind == claimGVK.Kind)
			},
			add: (*builder).addClaimObject, makesNoPods: true},
	)
	return out
}()

func kubeflowTableKind(kind, version, family string, add func(*builder, *unstructured.Unstructured, string, string, string) error) Kind {
	singular := strings.ToLower(kind)
	return Kind{Kind: kind, Resource: schema.GroupVersionResource{Group: KubeflowGroup, Version: version, Resource: singular + "s"},
		Names: []string{singular, singular + "s"}, family: family, match: groupKind(KubeflowGroup, kind), add: add}
}

// Kinds are the workloads a verb reads from the cluster by name, in the
// order help and completion list them.
var Kinds = func() []Kind {
	var out []Kind
	for _, k := range kinds {
		if len(k.Names) > 0 {
			out = append(out, k)
		}
	}
	return out
}()

// kindOf is the table's row for an object of gvk, or nil.
func kindOf(gvk schema.GroupVersionKind) *Kind {
	for i := range kinds {
		if kinds[i].match(gvk) {
			return &kinds[i]
		}
	}
	return nil
}

// supported words what -f takes, from the table.
func supported() string {
	var families, accompanying []string
	for _, k := range kinds {
		switch {
		case k.family == "":
		case k.accompanies:
			accompanying = append(accompanying, k.family)
		case len(families) == 0 || families[len(families)-1] != k.family:
			families = append(families, k.family)
		}
	}
	out := strings.Join(families[:len(families)-1], ", ") + " or " + families[len(families)-1]
	for _, a := range accompanying {
		out += ", and " + a
	}
	return out
}

var (
	podGVK           = corev1.SchemeGroupVersion.WithKind("Pod")
	claimTemplateGVK = resourcev1.SchemeGroupVersion.WithKind("ResourceClaimTemplate")
	claimGVK         = resourcev1.SchemeGroupVersion.WithKind("ResourceClaim")
	jobGVK           = batchv1.SchemeGroupVersion.WithKind("Job")
	deploymentGVK    = appsv1.SchemeGroupVersion.WithKind("Deployment")
	statefulSetGVK   = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	replicaSetGVK    = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	// VolcanoJobGVK is Volcano's batch Job, which its controller turns into a
	// PodGroup and one pod per task replica.
	VolcanoJobGVK = schema.GroupVersionKind{Group: "batch.volcano.sh", Version: "v1alpha1", Kind: "Job"}
)
