package workload

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/kueue"
)

// The labels and annotations controllers put on the pods they create, which
// FromManifests reproduces so that selectors in the templates (spread
// constraints, affinities) match the what-if pods as they would match real ones.
const (
	jobNameLabel           = "batch.kubernetes.io/job-name"
	legacyJobNameLabel     = "job-name"
	jobCompletionIndex     = "batch.kubernetes.io/job-completion-index"
	statefulSetPodName     = "statefulset.kubernetes.io/pod-name"
	statefulSetPodIndex    = "apps.kubernetes.io/pod-index"
	volcanoJobNameKey      = "volcano.sh/job-name"
	volcanoJobNamespace    = "volcano.sh/job-namespace"
	volcanoQueueNameKey    = "volcano.sh/queue-name"
	volcanoTaskIndexKey    = "volcano.sh/task-index"
	volcanoDefaultTask     = "default"
	volcanoSchedulerName   = "volcano"
	notEvaluatedClaimsText = "the claims a StatefulSet creates for its pods are not in the snapshot; " +
		"the what-if pods are placed without those volumes"
)

// FromManifests builds a what-if gang from the objects given with -f. It
// accepts Pods; at most one PodGroup of any source; and workloads that
// create pods from a template: batch/v1 Jobs (min(parallelism, completions)
// pods, the ones that run at once), apps/v1 Deployments, ReplicaSets and
// StatefulSets (spec.replicas), and Volcano batch.volcano.sh/v1alpha1 Jobs
// (one pod per task replica, and the PodGroup Volcano's controller would
// create for the job). Any other kind is an error naming it.
//
// Every object lives in one namespace: its own, or namespace when it names
// none. Generated pods are named <workload>-<index> (<job>-<task>-<index>
// for a Volcano Job), carry the template's labels and annotations plus the
// ones their controller adds, are Pending, and have a zero creation time.
// With a PodGroup (given or from a Volcano Job), every pod becomes its member
// through the source's membership key; a pod naming another group is an
// error. Without one the gang's source is gang.SourceFile and all its pods must
// run, unless they are the pods of one Kueue pod group (kueue.Source, its
// total count the minimum). A minMember above 0 overrides the minimum in
// any case. Kueue's topology annotations on the pods set the gang's
// topology keys (kueue.ReadTopology).
//
// Priorities are left for ApplyPriorities, which needs the cluster's
// PriorityClasses; a suspended Job is expanded as if it were resumed.
func FromManifests(objs []*unstructured.Unstructured, namespace string, minMember int32) (*gang.Gang, error) {
	return FromManifestsWith(objs, namespace, minMember, nil)
}

// FromManifestsWith is FromManifests where a TrainJob's runtime not given
// with the manifests is looked up in runtimes (the cluster's), when not nil.
func FromManifestsWith(objs []*unstructured.Unstructured, namespace string, minMember int32, runtimes TrainingRuntimes) (*gang.Gang, error) {
	if minMember < 0 {
		return nil, fmt.Errorf("--min-member must not be negative, got %d", minMember)
	}
	if len(objs) == 0 {
		return nil, errors.New("no objects given")
	}
	m := &builder{namespace: "", defaultNamespace: namespace}
	for _, obj := range objs {
		if err := m.add(obj); err != nil {
			return nil, err
		}
	}
	var lookup TrainingRuntimes = m.trainer.runtimes
	if runtimes != nil {
		lookup = runtimeChain{m.trainer.runtimes, runtimes}
	}
	if err := m.addTrainJobs(lookup); err != nil {
		return nil, err
	}
	if len(m.pods) == 0 {
		return nil, fmt.Errorf("the manifests (%s) make no pods", strings.Join(m.names, ", "))
	}
	var g *gang.Gang
	if m.podGroup != nil {
		var err error
		if g, err = gang.FromPodGroup(m.podGroup); err != nil {
			return nil, err
		}
		for _, pod := range m.pods {
			switch name := gang.GroupNameOf(pod, g.Source); name {
			case "":
				gang.SetGroupName(pod, g.Source, g.Name)
			case g.Name:
			default:
				return nil, fmt.Errorf("pod %s/%s names %s %q, but the manifests' PodGroup is %q",
					pod.Namespace, pod.Name, podGroupResource(g.Source), name, g.Name)
			}
		}
	} else if name := kueue.GroupOfAll(m.pods); name != "" {
		// Pods of one Kueue pod group: its total count is the minimum.
		count, err := kueue.TotalCount(m.pods, name)
		if err != nil {
			return nil, err
		}
		g = &gang.Gang{Source: kueue.Source, Namespace: m.namespace, Name: name, MinMember: count}
	} else {
		g = &gang.Gang{Source: gang.SourceFile, Namespace: m.namespace, Name: strings.Join(m.names, ","), MinMember: int32(len(m.pods))}
		g.MinMember -= min(m.excused, g.MinMember)
	}
	g.NotEvaluatedFields = append(g.NotEvaluatedFields, m.notEvaluated...)
	g.Queued = m.queued
	g.ClaimTemplates, g.Claims = m.claimTemplates, m.claims
	g.Refill = m.refill
	g.Members = m.pods
	g.Read = m.read
	if !m.elasticityUnknown {
		g.Elasticity = gang.CombineElasticity(m.elasticity)
	}
	sg, err := mergeSubGroups(m.subGroups)
	if err != nil {
		return nil, err
	}
	g.SubGroups = sg
	if minMember > 0 && minMember != g.MinMember {
		if m.podGroup != nil {
			return nil, fmt.Errorf("--min-member applies to manifests without a PodGroup; the PodGroup %s sets the minimum (%d): change it there",
				g.Name, g.MinMember)
		}
		g.MinMember = minMember
	}
	g.SortMembers()
	kueue.ReadTopology(g)
	return g, nil
}

// subGroupsOf is the sub-groups one workload asks for.
type subGroupsOf struct {
	what string // the workload, for errors
	sg   *gang.SubGroups
}

// mergeSubGroups is the one rule for the sub-groups of a gang expanded from
// several workloads: placement takes one kind of sub-group per gang, so
// workloads that ask for the same (two JobSets with one exclusive key) share
// it, and workloads that ask for different ones are refused rather than one
// rule silently winning.
func mergeSubGroups(asked []subGroupsOf) (*gang.SubGroups, error) {
	if len(asked) == 0 {
		return nil, nil
	}
	first := asked[0]
	for _, a := range asked[1:] {
		if !reflect.DeepEqual(a.sg, first.sg) {
			return nil, fmt.Errorf("%s and %s place their pods in sub-groups of different kinds (%s, %s); give them one at a time",
				first.what, a.what, first.sg.Unit, a.sg.Unit)
		}
	}
	return first.sg, nil
}

func podGroupResource(src gang.Source) string {
	return "podgroups." + string(src)
}

// builder collects what one expansion reads, kind by kind.
type builder struct {
	namespace        string // the namespace every object is in, once known
	defaultNamespace string
	podGroup         *unstructured.Unstructured
	podGroupFrom     string // the object the PodGroup came from, for errors
	pods             []*corev1.Pod
	podNames         map[string]bool
	names            []string // the top-level objects' names
	read             []string // and what they are, for gang.Gang.Read
	// subGroups are the sub-groups each workload asks for (mergeSubGroups).
	subGroups    []subGroupsOf
	notEvaluated []gang.NotEvaluatedField
	// queued are the workloads that wait for a queueing layer (noteQueued).
	queued []gang.QueuedWorkload
	// excused counts the pods workloads without a PodGroup let the gang
	// start without (a Kubeflow job's pods beyond its
	// schedulingPolicy.minAvailable, a Ray cluster's workers beyond its
	// minimum, a TrainJob's beyond its PodGroup's): the gang's minimum is
	// the other pods, so that workloads with and without a minimum of
	// their own in one file add up. Every pod must run when it is 0.
	excused int32
	trainer trainerObjects // TrainJobs and their runtimes, expanded once all objects are read
	// claimTemplates and claims are the manifests' resource.k8s.io objects.
	claimTemplates []*resourcev1.ResourceClaimTemplate
	claims         []*resourcev1.ResourceClaim
	// refill names the pods that stand for any of a Job's indexes still
	// to run (gang.Gang.Refill).
	refill map[string]bool
	// elasticity is, per workload, how few of its pods it runs with
	// (elastic.go); elasticityUnknown says a workload made pods and said
	// nothing of it, so the gang's elasticity is not known.
	elasticity        []gang.ElasticityOf
	elasticityUnknown bool
}

func (m *builder) add(obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	name := obj.GetName()
	if name == "" {
		name = strings.TrimSuffix(obj.GetGenerateName(), "-")
	}
	what := gvk.Kind + " " + strconv.Quote(name)
	if name == "" {
		return fmt.Errorf("%s has no metadata.name", gvk.Kind)
	}
	// What the API server refuses of any object (issue #42): the pods it
	// would make are checked one by one (addPod).
	meta := field.NewPath("metadata")
	if msgs := apivalidation.NameIsDNSSubdomain(name, false); len(msgs) > 0 {
		return fmt.Errorf("%s: %w", what, field.Invalid(meta.Child("name"), name, msgs[0]))
	}
	if errs := metav1validation.ValidateLabels(obj.GetLabels(), meta.Child("labels")); len(errs) > 0 {
		return fmt.Errorf("%s: %w", what, errs.ToAggregate())
	}
	k := kindOf(gvk)
	if k == nil {
		return fmt.Errorf("%s: kind %s of %s is not supported with -f; give %s", what, gvk.Kind, gvk.GroupVersion().String(), supported())
	}
	if k.makesNoPods { // cluster-scoped or looked up by namespace
		return k.add(m, obj, cmp.Or(obj.GetNamespace(), m.defaultNamespace), name, what)
	}
	ns := cmp.Or(obj.GetNamespace(), m.defaultNamespace)
	if m.namespace == "" {
		m.namespace = ns
	} else if ns != m.namespace {
		return fmt.Errorf("%s is in namespace %q, the other objects in %q: a gang lives in one namespace", what, ns, m.namespace)
	}
	m.names = append(m.names, name)
	m.read = append(m.read, fmt.Sprintf("%s %s (%s)", gvk.Kind, name, gvk.GroupVersion()))
	pods, told := len(m.pods), len(m.elasticity)
	if err := k.add(m, obj, ns, name, what); err != nil {
		return err
	}
	if err := m.noteQueued(obj, m.pods[pods:]); err != nil {
		return err
	}
	switch added := int32(len(m.pods) - pods); {
	case added == 0 || len(m.elasticity) > told:
	case gvk.Kind == "JobSet" && gvk.Group == JobSetGroup:
		// Nothing in a JobSet runs it with fewer Jobs or pods.
		m.recordFixed(what, fmt.Sprintf("runs every pod of every Job it replicates (%d)", added), added)
	case gvk.Kind == "LeaderWorkerSet" && gvk.Group == LeaderWorkerSetGroup:
		m.recordFixed(what, fmt.Sprintf("has groups of a fixed size (%d pod(s) in all)", added), added)
	default:
		m.elasticityUnknown = true
	}
	return nil
}

func (m *builder) addPodGroup(obj *unstructured.Unstructured, ns, name, what string) error {
	pg := obj.DeepCopy()
	pg.SetNamespace(ns)
	pg.SetName(name)
	return m.setPodGroup(pg, what)
}

func (m *builder) addPodObject(obj *unstructured.Unstructured, ns, name, what string) error {
	pod := &corev1.Pod{}
	if err := fromUnstructured(obj, pod, what); err != nil {
		return err
	}
	pod.Name, pod.Namespace = name, ns
	if pod.Status.Phase == "" {
		pod.Status.Phase = corev1.PodPending
	}
	return m.addPod(pod)
}

func (m *builder) addDeployment(obj *unstructured.Unstructured, ns, name, what string) error {
	d := &appsv1.Deployment{}
	if err := fromUnstructured(obj, d, what); err != nil {
		return err
	}
	return m.addReplicas(ns, name, what, d.Spec.Replicas, &d.Spec.Template, nil)
}

func (m *builder) addReplicaSet(obj *unstructured.Unstructured, ns, name, what string) error {
	rs := &appsv1.ReplicaSet{}
	if err := fromUnstructured(obj, rs, what); err != nil {
		return err
	}
	return m.addReplicas(ns, name, what, rs.Spec.Replicas, &rs.Spec.Template, nil)
}

func (m *builder) addStatefulSet(obj *unstructured.Unstructured, ns, name, what string) error {
	sts := &appsv1.StatefulSet{}
	if err := fromUnstructured(obj, sts, what); err != nil {
		return err
	}
	if len(sts.Spec.VolumeClaimTemplates) > 0 {
		m.notEvaluated = append(m.notEvaluated, gang.NotEvaluatedField{Field: "spec.volumeClaimTemplates",
			Value: fmt.Sprintf("StatefulSet %s: %d claim templates", name, len(sts.Spec.VolumeClaimTemplates)), Reason: notEvaluatedClaimsText})
	}
	return m.addReplicas(ns, name, what, sts.Spec.Replicas, &sts.Spec.Template, func(pod *corev1.Pod, i int) {
		pod.Labels[statefulSetPodName] = pod.Name
		pod.Labels[statefulSetPodIndex] = strconv.Itoa(i)
		pod.Spec.Hostname = pod.Name
		pod.Spec.Subdomain = sts.Spec.ServiceName
	})
}

// addClaimObject keeps a ResourceClaimTemplate or ResourceClaim of the
// manifests, in the namespace the gang's objects use.
func (m *builder) addClaimObject(obj *unstructured.Unstructured, ns, name, what string) error {
	if err := checkVersion(obj, resourcev1.SchemeGroupVersion, what); err != nil {
		return err
	}
	if obj.GroupVersionKind() == claimTemplateGVK {
		t := &resourcev1.ResourceClaimTemplate{}
		if err := fromUnstructured(obj, t, what); err != nil {
			return err
		}
		t.Name, t.Namespace = name, ns
		m.claimTemplates = append(m.claimTemplates, t)
		return nil
	}
	c := &resourcev1.ResourceClaim{}
	if err := fromUnstructured(obj, c, what); err != nil {
		return err
	}
	c.Name, c.Namespace = name, ns
	if c.UID == "" {
		c.UID = types.UID("what-if/" + ns + "/" + name)
	}
	m.claims = append(m.claims, c)
	return nil
}

func (m *builder) setPodGroup(pg *unstructured.Unstructured, what string) error {
	if m.podGroup != nil {
		return fmt.Errorf("%s: the manifests already hold a PodGroup (from %s); give one gang at a time", what, m.podGroupFrom)
	}
	m.podGroup, m.podGroupFrom = pg, what
	return nil
}

func (m *builder) addPod(pod *corev1.Pod) error {
	// What the API server would default when the pod is created.
	schedule.DefaultPod(pod)
	if len(pod.Spec.Containers) == 0 {
		// validatePodSpec: a pod has a container; a truncated manifest
		// (the template ends before them) often has none.
		return fmt.Errorf("pod %s/%s: spec.containers: Required value", pod.Namespace, pod.Name)
	}
	if errs := schedule.ValidateResources(pod); len(errs) > 0 {
		return fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, errs.ToAggregate())
	}
	// Names, labels, selectors and the other fields the API server would
	// refuse (issue #42): no verdict about a pod that cannot be created.
	if errs := schedule.ValidateFields(pod); len(errs) > 0 {
		return fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, errs.ToAggregate())
	}
	if m.podNames[pod.Name] {
		return fmt.Errorf("the manifests make two pods named %s/%s", pod.Namespace, pod.Name)
	}
	if m.podNames == nil {
		m.podNames = map[string]bool{}
	}
	m.podNames[pod.Name] = true
	m.pods = append(m.pods, pod)
	return nil
}

// checkVersion refuses obj unless it is at the group and version this
// build reads for its kind: another version is never guessed.
func checkVersion(obj *unstructured.Unstructured, want schema.GroupVersion, what string) error {
	if gvk := obj.GroupVersionKind(); gvk.GroupVersion() != want {
		return fmt.Errorf("%s: %s is not supported; this build reads %s %s", what, gvk.GroupVersion(), gvk.Kind, want)
	}
	return nil
}

// fromUnstructured converts obj into a typed object, naming obj in errors.
func fromUnstructured(obj *unstructured.Unstructured, into any, what string) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, into); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// podFromTemplate makes the pod a controller would create from tmpl.
func podFromTemplate(tmpl *corev1.PodTemplateSpec, namespace, name string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   namespace,
			Labels:      maps.Clone(tmpl.Labels),
			Annotations: maps.Clone(tmpl.Annotations),
		},
		Spec:   *tmpl.Spec.DeepCopy(),
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	return pod
}

// addReplicas adds replicas pods (default 1) from a template, named <name>-<i>.
func (m *builder) addReplicas(ns, name, what string, replicas *int32, tmpl *corev1.PodTemplateSpec, decorate func(*corev1.Pod, int)) error {
	n := int32(1)
	if replicas != nil {
		n = *replicas
	}
	if n < 0 {
		return fmt.Errorf("%s: spec.replicas must not be negative, got %d", what, n)
	}
	for i := range int(n) {
		pod := podFromTemplate(tmpl, ns, fmt.Sprintf("%s-%d", name, i))
		if decorate != nil {
			decorate(pod, i)
		}
		if err := m.addPod(pod); err != nil {
			return err
		}
	}
	return nil
}

// addJob adds the pods a batch/v1 Job runs at once: parallelism (default 1),
// at most completions.
func (m *builder) addJob(obj *unstructured.Unstructured, ns, name, what string) error {
	job := &batchv1.Job{}
	if err := fromUnstructured(obj, job, what); err != nil {
		return err
	}
	return m.addJobPodsWithStatus(ns, name, what, &job.Spec, &job.Status, nil)
}

// addJobPods adds the pods the Job controller creates at once for a Job
// spec: parallelism (default 1), at most completions, named <name>-<i>. An
// Indexed Job's pods carry their completion index (label and annotation)
// and the hostname <name>-<i>, as the Job controller gives them. decorate,
// when given, changes each pod after that.
func (m *builder) addJobPods(ns, name, what string, spec *batchv1.JobSpec, decorate func(*corev1.Pod, int)) error {
	return m.addJobPodsWithStatus(ns, name, what, spec, nil, decorate)
}

// addJobPodsWithStatus is addJobPods for a Job whose status is known (one
// read from the cluster, or a manifest written by kubectl get): as the Job
// controller does, an Indexed Job runs the lowest indexes not in
// status.completedIndexes, and a non-Indexed one no more pods than the
// completions not yet succeeded. A member that stands for any of several
// indexes still to run (more are left than run at once) is recorded in
// m.refill: when it turns out finished, another index takes its place.
func (m *builder) addJobPodsWithStatus(ns, name, what string, spec *batchv1.JobSpec, status *batchv1.JobStatus, decorate func(*corev1.Pod, int)) error {
	job := &batchv1.Job{Spec: *spec}
	n := int32(1)
	if job.Spec.Parallelism != nil {
		n = *job.Spec.Parallelism
	}
	if n < 0 {
		return fmt.Errorf("%s: spec.parallelism must not be negative, got %d", what, n)
	}
	if c := job.Spec.Completions; c != nil {
		if *c < 0 {
			return fmt.Errorf("%s: spec.completions must not be negative, got %d", what, *c)
		}
		n = min(n, *c)
	}
	indexed := job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion
	// The indexes (an Indexed Job's) or slots the pods at once take, and
	// how many are left to run in all.
	left := int(n)
	if c := job.Spec.Completions; c != nil {
		left = int(*c)
	}
	indexes := make([]int, 0, n)
	switch {
	case indexed && job.Spec.Completions != nil:
		var done sets.Set[int]
		if status != nil {
			var err error
			if done, err = parseIndexes(status.CompletedIndexes, int(*job.Spec.Completions)); err != nil {
				return fmt.Errorf("%s: status.completedIndexes: %w", what, err)
			}
		}
		left = 0
		for i := range int(*job.Spec.Completions) {
			if done.Has(i) {
				continue
			}
			left++
			if len(indexes) < int(n) {
				indexes = append(indexes, i)
			}
		}
	default:
		if status != nil && job.Spec.Completions != nil {
			left = max(0, left-int(status.Succeeded))
		}
		for i := range min(int(n), left) {
			indexes = append(indexes, i)
		}
	}
	for _, i := range indexes {
		pod := podFromTemplate(&job.Spec.Template, ns, fmt.Sprintf("%s-%d", name, i))
		pod.Labels[jobNameLabel] = name
		pod.Labels[legacyJobNameLabel] = name
		if indexed {
			pod.Labels[jobCompletionIndex] = strconv.Itoa(i)
			pod.Annotations[jobCompletionIndex] = strconv.Itoa(i)
			pod.Spec.Hostname = fmt.Sprintf("%s-%d", name, i)
		}
		if decorate != nil {
			decorate(pod, i)
		}
		if left > len(indexes) {
			if m.refill == nil {
				m.refill = map[string]bool{}
			}
			m.refill[pod.Name] = true
		}
		if err := m.addPod(pod); err != nil {
			return err
		}
	}
	return nil
}

// parseIndexes parses a Job's completedIndexes ("1,3-5"), indexes below
// completions.
func parseIndexes(s string, completions int) (sets.Set[int], error) {
	out := sets.New[int]()
	if s == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("%q is not an index", part)
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil || last < first {
				return nil, fmt.Errorf("%q is not a range of indexes", part)
			}
		}
		for i := first; i <= last && i < completions; i++ {
			out.Insert(i)
		}
	}
	return out, nil
}

// ApplyPriorities is schedule.ApplyPriorities: each pod's priority from
// its PriorityClass, as the Priority admission plugin fills it in.
func ApplyPriorities(pods []*corev1.Pod, classes []*schedulingv1.PriorityClass) error {
	return schedule.ApplyPriorities(pods, classes)
}

// recordMinimum records a workload of pods pods whose own minimum
// (field, at most its pods) is min: elastic by design when below its pods
// (the minimum is the fewest it runs with), else fixed.
func (m *builder) recordMinimum(what, field string, min, pods int32) {
	if min > 0 && min < pods {
		m.elasticity = append(m.elasticity, gang.ElasticityOf{Min: min, Pods: pods,
			Why: fmt.Sprintf("%s runs with %d of its %d pod(s) by design (%s)", what, min, pods, field)})
		return
	}
	m.recordFixed(what, fmt.Sprintf("sets no minimum below its %d pod(s)", pods), pods)
}

// recordFixed records a workload that needs every one of its pods, and why.
func (m *builder) recordFixed(what, why string, pods int32) {
	m.elasticity = append(m.elasticity, gang.ElasticityOf{Min: pods, Pods: pods, Why: what + " " + why})
}

// gangElastic is a workload that runs with min of its pods.
func gangElastic(min, pods int32, why string) gang.ElasticityOf {
	return gang.ElasticityOf{Min: min, Pods: pods, Why: why}
}
