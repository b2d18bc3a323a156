package workload

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
)

// KubeflowGroup is the API group of Kubeflow's training jobs. This build
// reads the Training Operator's kubeflow.org/v1 jobs (its v1.x releases,
// the last line 1.9) and mpi-operator's kubeflow.org/v2beta1 MPIJob (its
// v0.x releases). The Training Operator's own kubeflow.org/v1 MPIJob, which
// creates the launcher as a bare pod with an init container, is not read.
const (
	KubeflowGroup   = "kubeflow.org"
	kubeflowVersion = "v1"
	mpiJobVersion   = "v2beta1"
)

// The labels both operators put on the pods they create (the Training
// Operator's GenLabels, createNewPod and utillabels; mpi-operator's
// defaultLabels, newWorker and newLauncherPodTemplate).
const (
	kubeflowOperatorNameKey = "training.kubeflow.org/operator-name"
	kubeflowJobNameKey      = "training.kubeflow.org/job-name"
	kubeflowReplicaTypeKey  = "training.kubeflow.org/replica-type"
	kubeflowReplicaIndexKey = "training.kubeflow.org/replica-index"
	kubeflowJobRoleKey      = "training.kubeflow.org/job-role"
	kubeflowMasterRole      = "master"
	mpiOperatorName         = "mpi-operator"
	mpiLauncher             = "Launcher"
	mpiWorker               = "Worker"
	mpiWaitForWorkersReady  = "WaitForWorkersReady"
)

// kubeflowKind is what the Training Operator's controller, its defaulting
// (SetDefaults_<Kind>, applied by the controller) and its validating
// webhook make of one kind's replica specs.
type kubeflowKind struct {
	specs    string   // the field of spec that holds the replica specs
	operator string   // the kind controller's name: the operator-name label
	types    []string // the replica types, in their canonical case
	// masters are the types whose pods get job-role master (IsMasterRole);
	// with worker0, when none of them is given, Worker 0 gets it.
	masters []string
	worker0 bool
	// oneMaster: a master type's replicas must be 1 (PyTorchJob,
	// XGBoostJob); needMaster: the Master type is required (XGBoostJob).
	oneMaster, needMaster bool
	// initMaster: with a Master, workers get pytorchInitContainer (PyTorchJob).
	initMaster bool
	restart    string               // the default restartPolicy
	container  string               // the container the webhook requires
	port       corev1.ContainerPort // the default port, on that container
}

var kubeflowKinds = map[string]kubeflowKind{
	"PyTorchJob": {specs: "pytorchReplicaSpecs", operator: "pytorchjob-controller", types: []string{"Master", "Worker"},
		masters: []string{"Master"}, worker0: true, oneMaster: true, initMaster: true, restart: "OnFailure", container: "pytorch",
		port: corev1.ContainerPort{Name: "pytorchjob-port", ContainerPort: 23456}},
	"TFJob": {specs: "tfReplicaSpecs", operator: "tfjob-controller", types: []string{"Chief", "Master", "PS", "Worker", "Evaluator"},
		masters: []string{"Chief", "Master"}, worker0: true, restart: "Never", container: "tensorflow",
		port: corev1.ContainerPort{Name: "tfjob-port", ContainerPort: 2222}},
	"XGBoostJob": {specs: "xgbReplicaSpecs", operator: "xgboostjob-controller", types: []string{"Master", "Worker"},
		masters: []string{"Master"}, oneMaster: true, needMaster: true, restart: "Never", container: "xgboost",
		port: corev1.ContainerPort{Name: "xgboostjob-port", ContainerPort: 9999}},
	"PaddleJob": {specs: "paddleReplicaSpecs", operator: "paddlejob-controller", types: []string{"Master", "Worker"},
		masters: []string{"Master"}, restart: "OnFailure", container: "paddle",
		port: corev1.ContainerPort{Name: "master", ContainerPort: 36543}},
	"JAXJob": {specs: "jaxReplicaSpecs", operator: "jaxjob-controller", types: []string{"Worker"},
		worker0: true, restart: "Never", container: "jax",
		port: corev1.ContainerPort{Name: "jaxjob-port", ContainerPort: 6666}},
}

// kubeflowReplicaSpec is one replica spec of a Kubeflow job, the same in
// both operators.
type kubeflowReplicaSpec struct {
	Replicas      *int32                 `json:"replicas,omitempty"`
	RestartPolicy string                 `json:"restartPolicy,omitempty"`
	Template      corev1.PodTemplateSpec `json:"template"`
}

// kubeflowRunPolicy is the part of a Kubeflow job's spec.runPolicy that
// decides its gang.
type kubeflowRunPolicy struct {
	SchedulingPolicy *struct {
		MinAvailable *int32 `json:"minAvailable,omitempty"`
	} `json:"schedulingPolicy,omitempty"`
}

// kubeflowJob is the part of a kubeflow.org/v1 job that decides its pods,
// its replica specs read from the kind's own field of spec.
type kubeflowJob struct {
	ReplicaSpecs map[string]*kubeflowReplicaSpec `json:"replicaSpecs"`
	RunPolicy    kubeflowRunPolicy               `json:"runPolicy"`
	// ElasticPolicy is a PyTorchJob's spec.elasticPolicy.
	ElasticPolicy *struct {
		MinReplicas *int32 `json:"minReplicas,omitempty"`
		MaxReplicas *int32 `json:"maxReplicas,omitempty"`
	} `json:"elasticPolicy,omitempty"`
}

// mpiJob is the part of a kubeflow.org/v2beta1 MPIJob that decides its pods.
type mpiJob struct {
	Spec struct {
		MPIReplicaSpecs        map[string]*kubeflowReplicaSpec `json:"mpiReplicaSpecs"`
		RunPolicy              kubeflowRunPolicy               `json:"runPolicy"`
		RunLauncherAsWorker    *bool                           `json:"runLauncherAsWorker,omitempty"`
		LauncherCreationPolicy string                          `json:"launcherCreationPolicy,omitempty"`
		MPIImplementation      string                          `json:"mpiImplementation,omitempty"`
	} `json:"spec"`
}

// addKubeflowJob adds the pods the Training Operator (v1.x) creates for a
// kubeflow.org/v1 PyTorchJob, TFJob, XGBoostJob, PaddleJob or JAXJob: per
// replica type, replicas (default 1) pods named <job>-<type lowercased>-<i>,
// all at once. Replica types are matched in any case, as the defaulting
// renames them. Each pod carries the operator-name (the kind's
// controller), job-name, replica-type (lowercased) and replica-index
// labels, and job-role master where IsMasterRole says so: PyTorchJob's
// Master (else Worker 0), TFJob's Chief and Master (else Worker 0),
// XGBoostJob's and PaddleJob's Master, JAXJob's Worker 0. Its restartPolicy
// is the replica spec's (ExitCode runs as Never), by default the kind's
// (OnFailure for PyTorchJob and PaddleJob, Never otherwise). The default
// port goes on the kind's container, which matters with hostNetwork, where
// it becomes a host port. A PyTorchJob's workers get the init container
// that waits for the master (alpine:3.10, requests 50m CPU, 10Mi), when
// there is a Master. The operator creates a headless Service per pod but
// sets no hostname or subdomain on it. Without gang scheduling configured
// in the operator, there is no PodGroup and no scheduler name; with
// spec.runPolicy.schedulingPolicy.minAvailable, that many pods (at most the
// job's) are the gang's minimum; see addMinAvailable. A suspended job
// (runPolicy.suspend) is expanded as if it were resumed.
func (m *builder) addKubeflowJob(obj *unstructured.Unstructured, ns, name, what string) error {
	gvk := obj.GroupVersionKind()
	if err := checkVersion(obj, schema.GroupVersion{Group: KubeflowGroup, Version: kubeflowVersion}, what); err != nil {
		return err
	}
	kind := kubeflowKinds[gvk.Kind]
	job, err := decodeKubeflowJob(obj, kind.specs, what)
	if err != nil {
		return err
	}
	specs, err := kind.replicaSpecs(job.ReplicaSpecs, what)
	if err != nil {
		return err
	}
	count := 0
	for _, rtype := range kind.types {
		if specs[rtype] == nil {
			continue
		}
		for i := range int(ptr.Deref(specs[rtype].Replicas, 1)) {
			if err := m.addPod(kind.newPod(specs, ns, name, rtype, i)); err != nil {
				return err
			}
			count++
		}
	}
	if gvk.Kind == "PyTorchJob" {
		m.recordTorchElastic(job, specs, count, what)
	} else {
		m.recordMinimum(what, "spec.runPolicy.schedulingPolicy.minAvailable", minAvailable(job.RunPolicy, count), int32(count))
	}
	return m.addMinAvailable(job.RunPolicy, count, what)
}

// minAvailable is a job's spec.runPolicy.schedulingPolicy.minAvailable, at
// most its pods; its pods without one.
func minAvailable(rp kubeflowRunPolicy, pods int) int32 {
	if sp := rp.SchedulingPolicy; sp != nil && sp.MinAvailable != nil && *sp.MinAvailable > 0 {
		return min(*sp.MinAvailable, int32(pods))
	}
	return int32(pods)
}

// recordTorchElastic records how few pods a PyTorchJob runs with: torchrun
// gets --nnodes from spec.elasticPolicy (the Training Operator's
// generateEnvNNodes: minReplicas:maxReplicas, defaulted by setElasticPolicy
// to each other, or both to the Worker replicas), so with minReplicas
// below its workers it is elastic down to that many workers (its Master
// beside them); without an elastic policy its world size is every worker,
// and fewer hang, whatever schedulingPolicy.minAvailable says.
func (m *builder) recordTorchElastic(job *kubeflowJob, specs map[string]*kubeflowReplicaSpec, pods int, what string) {
	var workers int32
	if w := specs["Worker"]; w != nil {
		workers = ptr.Deref(w.Replicas, 1)
	}
	ep := job.ElasticPolicy
	if ep == nil {
		m.recordFixed(what, fmt.Sprintf("has no spec.elasticPolicy: torchrun's world size is its %d worker(s)", workers), int32(pods))
		return
	}
	lo := cmp.Or(ep.MinReplicas, ep.MaxReplicas)
	least := workers
	if lo != nil {
		least = *lo
	}
	if least >= workers {
		m.recordFixed(what, fmt.Sprintf("has spec.elasticPolicy.minReplicas %d, every one of its %d worker(s)", least, workers), int32(pods))
		return
	}
	m.elasticity = append(m.elasticity, gang.ElasticityOf{Min: int32(pods) - (workers - least), Pods: int32(pods),
		Why: fmt.Sprintf("%s is elastic: spec.elasticPolicy.minReplicas %d of its %d worker(s)", what, least, workers)})
}

// decodeKubeflowJob reads a job's replica specs, from spec.<field>, and
// its run policy.
func decodeKubeflowJob(obj *unstructured.Unstructured, field, what string) (*kubeflowJob, error) {
	spec, _ := obj.Object["spec"].(map[string]any)
	view := &unstructured.Unstructured{Object: map[string]any{}}
	if v, ok := spec[field]; ok {
		view.Object["replicaSpecs"] = v
	}
	if v, ok := spec["runPolicy"]; ok {
		view.Object["runPolicy"] = v
	}
	if v, ok := spec["elasticPolicy"]; ok && field == kubeflowKinds["PyTorchJob"].specs {
		view.Object["elasticPolicy"] = v
	}
	job := &kubeflowJob{}
	if err := fromUnstructured(view, job, what); err != nil {
		return nil, err
	}
	return job, nil
}

// newPod makes pod index of a replica type as the kind's controller does
// (createNewPod, SetClusterSpec) after its defaulting.
func (k kubeflowKind) newPod(specs map[string]*kubeflowReplicaSpec, ns, job, rtype string, index int) *corev1.Pod {
	spec, rt := specs[rtype], strings.ToLower(rtype)
	pod := podFromTemplate(&spec.Template, ns, fmt.Sprintf("%s-%s-%d", job, rt, index))
	pod.Labels[kubeflowOperatorNameKey] = k.operator
	pod.Labels[kubeflowJobNameKey] = job
	pod.Labels[kubeflowReplicaTypeKey] = rt
	pod.Labels[kubeflowReplicaIndexKey] = strconv.Itoa(index)
	if k.isMaster(specs, rtype, index) {
		pod.Labels[kubeflowJobRoleKey] = kubeflowMasterRole
	}
	pod.Spec.RestartPolicy = kubeflowRestartPolicy(spec.RestartPolicy, k.restart)
	k.setDefaultPort(&pod.Spec)
	if k.initMaster && rtype == "Worker" && specs["Master"] != nil {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, pytorchInitContainer())
	}
	return pod
}

// replicaSpecs checks a job's replica specs as the kind's validating
// webhook does and returns them by canonical type. A Master given without
// replicas counts as 1, as the defaulting has it (the webhook, which runs
// before, would ask for the 1).
func (k kubeflowKind) replicaSpecs(raw map[string]*kubeflowReplicaSpec, what string) (map[string]*kubeflowReplicaSpec, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("%s: spec.%s is required", what, k.specs)
	}
	specs := map[string]*kubeflowReplicaSpec{}
	for _, given := range slices.Sorted(maps.Keys(raw)) {
		i := slices.IndexFunc(k.types, func(t string) bool { return strings.EqualFold(t, given) })
		if i < 0 {
			return nil, fmt.Errorf("%s: spec.%s: replica type %q is not one of %s", what, k.specs, given, strings.Join(k.types, ", "))
		}
		rtype, path := k.types[i], "spec."+k.specs+"."+given
		if specs[rtype] != nil {
			return nil, fmt.Errorf("%s: spec.%s: replica type %s is given twice", what, k.specs, rtype)
		}
		spec := raw[given]
		if err := checkReplicaSpec(spec, path, k.container, "Always", "OnFailure", "Never", "ExitCode"); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if n := ptr.Deref(spec.Replicas, 1); n < 0 {
			return nil, fmt.Errorf("%s: %s.replicas must not be negative, got %d", what, path, n)
		} else if k.oneMaster && slices.Contains(k.masters, rtype) && n != 1 {
			return nil, fmt.Errorf("%s: %s.replicas must be 1, got %d", what, path, n)
		}
		specs[rtype] = spec
	}
	if given := k.mastersGiven(specs); len(given) > 1 {
		return nil, fmt.Errorf("%s: spec.%s must not have more than one of %s", what, k.specs, strings.Join(given, " and "))
	}
	if k.needMaster && specs["Master"] == nil {
		return nil, fmt.Errorf("%s: spec.%s.Master is required", what, k.specs)
	}
	return specs, nil
}

// mastersGiven returns the master types the job gives.
func (k kubeflowKind) mastersGiven(specs map[string]*kubeflowReplicaSpec) []string {
	var given []string
	for _, t := range k.masters {
		if specs[t] != nil {
			given = append(given, t)
		}
	}
	return given
}

// isMaster is the kind controller's IsMasterRole.
func (k kubeflowKind) isMaster(specs map[string]*kubeflowReplicaSpec, rtype string, index int) bool {
	if slices.Contains(k.masters, rtype) {
		return true
	}
	return k.worker0 && len(k.mastersGiven(specs)) == 0 && rtype == "Worker" && index == 0
}

// setDefaultPort adds the kind's default port to its container (the first
// one when none has the kind's name) unless a port of that name is there.
func (k kubeflowKind) setDefaultPort(spec *corev1.PodSpec) {
	i := max(0, slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == k.container }))
	c := &spec.Containers[i]
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == k.port.Name }) {
		c.Ports = append(c.Ports, k.port)
	}
}

// pytorchInitContainer is the container the Training Operator's default
// template puts first on a PyTorchJob's workers, to wait for the master's
// name to resolve; its requests count towards the pod's.
func pytorchInitContainer() corev1.Container {
	return corev1.Container{
		Name:            "init-pytorch",
		Image:           "alpine:3.10",
		ImagePullPolicy: corev1.PullIfNotPresent,
		Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("20Mi")},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("10Mi")},
		},
	}
}

// checkReplicaSpec refuses a replica spec without containers (or, when
// container is set, without one of that name) or with a restartPolicy
// other than the given ones.
func checkReplicaSpec(spec *kubeflowReplicaSpec, path, container string, policies ...string) error {
	if spec == nil || len(spec.Template.Spec.Containers) == 0 {
		return fmt.Errorf("%s.template.spec.containers is required", path)
	}
	if container != "" && !slices.ContainsFunc(spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == container }) {
		return fmt.Errorf("%s.template.spec.containers must have one named %s", path, container)
	}
	if p := spec.RestartPolicy; p != "" && !slices.Contains(policies, p) {
		return fmt.Errorf("%s.restartPolicy %q is not one of %s", path, p, strings.Join(policies, ", "))
	}
	return nil
}

// kubeflowRestartPolicy is a pod's restartPolicy for a replica spec's
// (checked) policy, def when it sets none: ExitCode, which the operator
// applies itself, runs the pod with Never.
func kubeflowRestartPolicy(policy, def string) corev1.RestartPolicy {
	switch policy {
	case "":
		return corev1.RestartPolicy(def)
	case "ExitCode":
		return corev1.RestartPolicyNever
	}
	return corev1.RestartPolicy(policy)
}

// addMinAvailable makes a job's spec.runPolicy.schedulingPolicy.minAvailable
// (at most its pods) part of the gang's minimum, added to the other jobs'.
// The operators pass it to the PodGroup they create with gang scheduling;
// without it every pod of the job must run.
func (m *builder) addMinAvailable(rp kubeflowRunPolicy, pods int, what string) error {
	sp := rp.SchedulingPolicy
	if sp == nil || sp.MinAvailable == nil {
		return nil
	}
	switch n := *sp.MinAvailable; {
	case n < 0:
		return fmt.Errorf("%s: spec.runPolicy.schedulingPolicy.minAvailable must not be negative, got %d", what, n)
	case n > 0:
		m.excused += int32(pods) - min(n, int32(pods))
	}
	return nil
}

// addMPIJob adds the pods mpi-operator (v0.x) creates for a
// kubeflow.org/v2beta1 MPIJob: replicas Worker pods <job>-worker-<i>
// (the Worker spec is optional; given, its replicas must be at least 1:
// the operator defaults them to 0 and then refuses that), and the batch Job
// <job>-launcher, whose one pod the Job controller names with a random
// suffix: here <job>-launcher-0, as addJobPods names a Job's pods, with
// the Job controller's labels. The launcher is part of the job even with
// launcherCreationPolicy WaitForWorkersReady, where it is created once the
// workers are ready, so it is placed here with them. Pods carry the
// operator-name (mpi-operator), job-name and job-role (worker or launcher;
// mpi-operator sets no replica-type label) labels; workers the
// replica-index label i, or i+1 with runLauncherAsWorker, where the launcher
// takes index 0. Every pod's hostname is its name (the launcher's
// <job>-launcher) and its subdomain the job's Service, <job>. The
// restartPolicy is the replica spec's (Never or OnFailure), by default
// Never for workers and OnFailure for the launcher. Gang scheduling in the
// operator is off by default: no PodGroup, no scheduler name; minAvailable
// sets the gang's minimum as for the Training Operator's jobs. A suspended
// MPIJob is expanded as if it were resumed.
func (m *builder) addMPIJob(obj *unstructured.Unstructured, ns, name, what string) error {
	if err := checkVersion(obj, schema.GroupVersion{Group: KubeflowGroup, Version: mpiJobVersion}, what); err != nil {
		return err
	}
	job := &mpiJob{}
	if err := fromUnstructured(obj, job, what); err != nil {
		return err
	}
	if err := job.check(what); err != nil {
		return err
	}
	specs := job.Spec.MPIReplicaSpecs
	// With the launcher as a worker, workers' indexes start after its 0.
	first := 0
	if ptr.Deref(job.Spec.RunLauncherAsWorker, false) {
		first = 1
	}
	workers := 0
	if w := specs[mpiWorker]; w != nil {
		workers = int(*w.Replicas)
		for i := range workers {
			pod := podFromTemplate(&w.Template, ns, fmt.Sprintf("%s-worker-%d", name, i))
			setMPILabels(pod.Labels, name, "worker")
			pod.Labels[kubeflowReplicaIndexKey] = strconv.Itoa(first + i)
			pod.Spec.Hostname, pod.Spec.Subdomain = pod.Name, name
			pod.Spec.RestartPolicy = kubeflowRestartPolicy(w.RestartPolicy, string(corev1.RestartPolicyNever))
			if err := m.addPod(pod); err != nil {
				return err
			}
		}
	}
	l := specs[mpiLauncher]
	tmpl := l.Template.DeepCopy()
	tmpl.Labels = merged(tmpl.Labels, nil)
	setMPILabels(tmpl.Labels, name, "launcher")
	if first == 1 {
		tmpl.Labels[kubeflowReplicaIndexKey] = "0"
	}
	tmpl.Spec.Hostname, tmpl.Spec.Subdomain = name+"-launcher", name
	tmpl.Spec.RestartPolicy = kubeflowRestartPolicy(l.RestartPolicy, string(corev1.RestartPolicyOnFailure))
	if err := m.addJobPods(ns, name+"-launcher", what, &batchv1.JobSpec{Template: *tmpl}, nil); err != nil {
		return err
	}
	if n := minAvailable(job.Spec.RunPolicy, workers+1); n < int32(workers+1) {
		m.recordMinimum(what, "spec.runPolicy.schedulingPolicy.minAvailable", n, int32(workers+1))
	} else {
		m.recordFixed(what, fmt.Sprintf("is an MPI job: its world, every one of its %d pod(s), has a fixed size", workers+1), int32(workers+1))
	}
	return m.addMinAvailable(job.Spec.RunPolicy, workers+1, what)
}

// check refuses what mpi-operator's validation (ValidateMPIJob, after its
// defaults) and the CRD's enums refuse.
func (j *mpiJob) check(what string) error {
	s := &j.Spec
	if len(s.MPIReplicaSpecs) == 0 {
		return fmt.Errorf("%s: spec.mpiReplicaSpecs is required", what)
	}
	for _, rtype := range slices.Sorted(maps.Keys(s.MPIReplicaSpecs)) {
		if rtype != mpiLauncher && rtype != mpiWorker {
			return fmt.Errorf("%s: spec.mpiReplicaSpecs: replica type %q is not one of %s, %s", what, rtype, mpiLauncher, mpiWorker)
		}
		if err := checkReplicaSpec(s.MPIReplicaSpecs[rtype], "spec.mpiReplicaSpecs."+rtype, "", "Never", "OnFailure"); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	l := s.MPIReplicaSpecs[mpiLauncher]
	if l == nil {
		return fmt.Errorf("%s: spec.mpiReplicaSpecs.%s is required", what, mpiLauncher)
	}
	if n := ptr.Deref(l.Replicas, 1); n != 1 {
		return fmt.Errorf("%s: spec.mpiReplicaSpecs.%s.replicas must be 1, got %d", what, mpiLauncher, n)
	}
	if w := s.MPIReplicaSpecs[mpiWorker]; w != nil && w.Replicas == nil {
		return fmt.Errorf("%s: spec.mpiReplicaSpecs.%s.replicas is required (mpi-operator defaults it to 0, which it refuses)", what, mpiWorker)
	} else if w != nil && *w.Replicas < 1 {
		return fmt.Errorf("%s: spec.mpiReplicaSpecs.%s.replicas must be at least 1, got %d", what, mpiWorker, *w.Replicas)
	}
	if p := s.LauncherCreationPolicy; p != "" && p != "AtStartup" && p != mpiWaitForWorkersReady {
		return fmt.Errorf("%s: spec.launcherCreationPolicy %q is not one of AtStartup, %s", what, p, mpiWaitForWorkersReady)
	}
	if impl := s.MPIImplementation; impl != "" && !slices.Contains([]string{"OpenMPI", "Intel", "MPICH"}, impl) {
		return fmt.Errorf("%s: spec.mpiImplementation %q is not one of OpenMPI, Intel, MPICH", what, impl)
	}
	return nil
}

// setMPILabels sets mpi-operator's defaultLabels for a role.
func setMPILabels(labels map[string]string, job, role string) {
	labels[kubeflowOperatorNameKey] = mpiOperatorName
	labels[kubeflowJobNameKey] = job
	labels[kubeflowJobRoleKey] = role
}
