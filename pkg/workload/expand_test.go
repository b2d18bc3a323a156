package workload_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/coscheduling"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

// memberSummary is what the manifests tests check of each member.
type memberSummary struct {
	Name, Namespace string
	Labels          map[string]string
	Annotations     map[string]string
	Phase           corev1.PodPhase
	Requests        corev1.ResourceList
	PriorityClass   string
	SchedulerName   string
	Hostname        string
	SchedulingGroup string
}

func summarize(pods []*corev1.Pod) []memberSummary {
	var out []memberSummary
	for _, p := range pods {
		s := memberSummary{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels, Annotations: p.Annotations,
			Phase: p.Status.Phase, PriorityClass: p.Spec.PriorityClassName, SchedulerName: p.Spec.SchedulerName, Hostname: p.Spec.Hostname}
		if len(p.Spec.Containers) > 0 {
			s.Requests = p.Spec.Containers[0].Resources.Requests
		}
		if sg := p.Spec.SchedulingGroup; sg != nil && sg.PodGroupName != nil {
			s.SchedulingGroup = *sg.PodGroupName
		}
		if !p.CreationTimestamp.IsZero() {
			s.Name += " (has a creation time)"
		}
		out = append(out, s)
	}
	return out
}

// gangSummary is a Gang with its members summarized.
type gangSummary struct {
	Source             gang.Source
	Namespace          string
	Name               string
	HasPodGroup        bool
	MinMember          int32
	MinTaskMember      map[string]int32
	MinResources       corev1.ResourceList
	Queue              string
	NotEvaluatedFields []string
	Members            []memberSummary
}

func summarizeGang(g *gang.Gang) *gangSummary {
	if g == nil {
		return nil
	}
	s := &gangSummary{Source: g.Source, Namespace: g.Namespace, Name: g.Name, HasPodGroup: g.PodGroup != nil,
		MinMember: g.MinMember, MinTaskMember: g.MinTaskMember, MinResources: g.MinResources, Queue: g.Queue,
		Members: summarize(g.Members)}
	for _, u := range g.NotEvaluatedFields {
		s.NotEvaluatedFields = append(s.NotEvaluatedFields, u.Field+": "+u.Value)
	}
	return s
}

const podTemplate = `
    metadata:
      labels: {app: train}
    spec:
      containers:
      - name: main
        image: trainer
        resources:
          requests: {cpu: "2"}`

func TestFromManifests(t *testing.T) {
	cpu2 := testutil.Res{"cpu": "2"}.List()
	trainLabels := func(extra ...string) map[string]string {
		m := map[string]string{"app": "train"}
		for i := 0; i < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	tests := []struct {
		name      string
		yaml      string
		minMember int32
		want      *gangSummary
		wantErr   string
	}{
		{
			name: "pods: every one must run",
			yaml: `
apiVersion: v1
kind: Pod
metadata: {name: b}
spec: {containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: ml}
spec: {containers: [{name: c, image: i}]}
`,
			want: &gangSummary{Source: gang.SourceFile, Namespace: "ml", Name: "b,a", MinMember: 2, Members: []memberSummary{
				{Name: "a", Namespace: "ml", Phase: corev1.PodPending}, {Name: "b", Namespace: "ml", Phase: corev1.PodPending}}},
		},
		{
			// The API server defaults requests to limits: a GPU pod that
			// sets only limits requests its GPUs.
			name: "limits only",
			yaml: `
apiVersion: batch/v1
kind: Job
metadata: {name: eval}
spec:
  template:
    spec:
      containers:
      - name: c
        image: i
        resources:
          requests: {cpu: "2"}
          limits: {cpu: "4", nvidia.com/gpu: "8"}
`,
			want: &gangSummary{Source: gang.SourceFile, Namespace: "ml", Name: "eval", MinMember: 1, Members: []memberSummary{
				{Name: "eval-0", Namespace: "ml", Labels: map[string]string{"batch.kubernetes.io/job-name": "eval", "job-name": "eval"},
					Annotations: map[string]string{}, Phase: corev1.PodPending,
					Requests: testutil.Res{"cpu": "2", "nvidia.com/gpu": "8"}.List()}}},
		},
		{
			name:      "min-member overrides",
			yaml:      "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: i}]}\nstatus: {phase: Running}\n",
			minMember: 1,
			want: &gangSummary{Source: gang.SourceFile, Namespace: "ml", Name: "a", MinMember: 1, Members: []memberSummary{
				{Name: "a", Namespace: "ml", Phase: corev1.PodRunning}}},
		},
		{
			name: "job runs min(parallelism, completions) pods",
			yaml: `
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  parallelism: 3
  completions: 2
  template:` + podTemplate,
			want: &gangSummary{Source: gang.SourceFile, Namespace: "ml", Name: "train", MinMember: 2, Members: []memberSummary{
				{Name: "train-0", Namespace: "ml", Labels: trainLabels("batch.kubernetes.io/job-name", "train", "job-name", "train"),
					Annotations: map[string]string{}, Phase: corev1.PodPending, Requests: cpu2},
				{Name: "train-1", Namespace: "ml", Labels: trainLabels("batch.kubernetes.io/job-name", "train", "job-name", "train"),
					Annotations: map[string]string{}, Phase: corev1.PodPending, Requests: cpu2}}},
		},
		{
			name: "indexed job, default parallelism",
			yaml: `
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  completionMode: Indexed
  completions: 4
  template:` + podTemplate,
			want: &gangSummary{Source: gang.SourceFile, Namespace: "ml", Name: "train", MinMember: 1, Members: []memberSummary{
				{Name: "train-0", Namespace: "ml", Labels: trainLabels("batch.kubernetes.io/job-name", "train", "job-name", "train",
					"batch.kubernetes.io/job-completion-index", "0"),
					Annotations: map[string]string{"batch.kubernetes.io/job-completion-index": "0"}, Phase: corev1.PodPending, Requests: cpu2,
					Hostname: "train-0"}}},
		},
		{
			name: "deployment and replica set",
			yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicas: 2
  template:` + podTemplate + `
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: r}
spec:
  template:` + podTemplate,
			want: &gangSummary{Source: gang.SourceFile, Namespace: "ml", Name: "d,r", MinMember: 3, Members: []memberSummary{
				{Name: "d-0", Namespace: "ml", Labels: trainLabels(), Annotations: map[string]string{}, Phase: corev1.PodPending, Requests: cpu2},
				{Name: "d-1", Namespace: "ml", Labels: trainLabels(), Annotations: map[string]string{}, Phase: corev1.PodPending, Requests: cpu2},
				{Name: "r-0", Namespace: "ml", Labels: trainLabels(), Annotations: map[string]string{}, Phase: corev1.PodPending, Requests: cpu2}}},
		},
		{
			name: "statefulset",
			yaml: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 1
  serviceName: db
  volumeClaimTemplates:
  - metadata: {name: data}
  template:` + podTemplate,
			want: &gangSummary{Source: gang.SourceFile, Namespace: "ml", Name: "db", MinMember: 1,
				NotEvaluatedFields: []string{"spec.volumeClaimTemplates: StatefulSet db: 1 claim templates"},
				Members: []memberSummary{{Name: "db-0", Namespace: "ml", Hostname: "db-0",
					Labels:      trainLabels("statefulset.kubernetes.io/pod-name", "db-0", "apps.kubernetes.io/pod-index", "0"),
					Annotations: map[string]string{}, Phase: corev1.PodPending, Requests: cpu2}}},
		},
		{
			name: "coscheduling PodGroup and a job",
			yaml: `
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: pg}
spec: {minMember: 2, minResources: {cpu: "4"}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  parallelism: 2
  template:` + podTemplate,
			want: &gangSummary{Source: coscheduling.Source, Namespace: "ml", Name: "pg", HasPodGroup: true, MinMember: 2,
				MinResources: testutil.Res{"cpu": "4"}.List(), Members: []memberSummary{
					{Name: "train-0", Namespace: "ml", Labels: trainLabels("batch.kubernetes.io/job-name", "train", "job-name", "train",
						"scheduling.x-k8s.io/pod-group", "pg"), Annotations: map[string]string{}, Phase: corev1.PodPending, Requests: cpu2},
					{Name: "train-1", Namespace: "ml", Labels: trainLabels("batch.kubernetes.io/job-name", "train", "job-name", "train",
						"scheduling.x-k8s.io/pod-group", "pg"), Annotations: map[string]string{}, Phase: corev1.PodPending, Requests: cpu2}}},
		},
		{
			name: "native PodGroup and a pod",
			yaml: `
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: pg}
spec: {schedulingPolicy: {gang: {minCount: 1}}}
---
apiVersion: v1
kind: Pod
metadata: {name: a}
spec: {containers: [{name: c, image: i}]}
`,
			minMember: 1,
			want: &gangSummary{Source: gang.SourceNative, Namespace: "ml", Name: "pg", HasPodGroup: true, MinMember: 1,
				Members: []memberSummary{{Name: "a", Namespace: "ml", Phase: corev1.PodPending, SchedulingGroup: "pg"}}},
		},
		{
			name: "Volcano PodGroup and a pod",
			yaml: `
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg}
spec: {minMember: 1, queue: research}
---
apiVersion: v1
kind: Pod
metadata: {name: a}
spec: {containers: [{name: c, image: i}]}
`,
			want: &gangSummary{Source: volcano.Source, Namespace: "ml", Name: "pg", HasPodGroup: true, MinMember: 1, Queue: "research",
				Members: []memberSummary{{Name: "a", Namespace: "ml", Phase: corev1.PodPending,
					Annotations: map[string]string{"scheduling.k8s.io/group-name": "pg"}}}},
		},
		{
			name: "volcano job",
			yaml: `
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: train}
spec:
  priorityClassName: high
  networkTopology: {mode: hard, highestTierAllowed: 2}
  tasks:
  - name: ps
    replicas: 1
    template:
      spec:
        containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
  - name: worker
    replicas: 3
    minAvailable: 2
    template:
      spec:
        containers: [{name: c, image: i, resources: {requests: {cpu: "2", nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}}]
`,
			want: &gangSummary{Source: volcano.Source, Namespace: "ml", Name: "train", HasPodGroup: true, MinMember: 3,
				MinTaskMember: map[string]int32{"ps": 1, "worker": 2},
				MinResources:  testutil.Res{"cpu": "5", "nvidia.com/gpu": "2", "pods": "3"}.List(), Queue: "default",
				NotEvaluatedFields: []string{"spec.networkTopology: mode=hard highestTierAllowed=2"},
				Members: []memberSummary{
					volcanoMember("train", "ps", 0, testutil.Res{"cpu": "1"}),
					volcanoMember("train", "worker", 0, testutil.Res{"cpu": "2", "nvidia.com/gpu": "1"}),
					volcanoMember("train", "worker", 1, testutil.Res{"cpu": "2", "nvidia.com/gpu": "1"}),
					volcanoMember("train", "worker", 2, testutil.Res{"cpu": "2", "nvidia.com/gpu": "1"}),
				}},
		},
		{name: "two PodGroups", yaml: `
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: a}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: b}
`, wantErr: `PodGroup "b": the manifests already hold a PodGroup (from PodGroup "a"); give one gang at a time`},
		{name: "a pod naming another group", yaml: `
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: a}
---
apiVersion: v1
kind: Pod
metadata: {name: p, labels: {scheduling.x-k8s.io/pod-group: b}}
spec: {containers: [{name: c, image: i}]}
`, wantErr: `pod ml/p names podgroups.scheduling.x-k8s.io "b", but the manifests' PodGroup is "a"`},
		{name: "a truncated Job: the template ends before its containers", yaml: `
apiVersion: batch/v1
kind: Job
metadata: {name: cut}
spec: {parallelism: 2, completions: 2, template: {spec: {restartPolicy: Never}}}
`, wantErr: `pod ml/cut-0: spec.containers: Required value`},
		{name: "two namespaces", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: dev}
spec: {containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: prod}
spec: {containers: [{name: c, image: i}]}
`, wantErr: `Pod "b" is in namespace "prod", the other objects in "dev": a gang lives in one namespace`},
		{name: "unsupported kind", yaml: "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: t}\n",
			wantErr: `Workflow "t": kind Workflow of argoproj.io/v1alpha1 is not supported with -f; give Pods, a PodGroup, Jobs, Deployments, ReplicaSets, StatefulSets, Volcano Jobs, JobSets, LeaderWorkerSets, Kubeflow training jobs (PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob, MPIJob), RayClusters, RayJobs or Kubeflow Trainer TrainJobs (with their ClusterTrainingRuntime or TrainingRuntime), and the ResourceClaimTemplates and ResourceClaims (resource.k8s.io/v1) they use`},
		{name: "a ResourceClaimTemplate version this build does not read", yaml: "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaimTemplate\nmetadata: {name: gpus}\n",
			wantErr: `ResourceClaimTemplate "gpus": resource.k8s.io/v1beta1 is not supported; this build reads ResourceClaimTemplate resource.k8s.io/v1`},
		{name: "a JobSet version this build does not read", yaml: "apiVersion: jobset.x-k8s.io/v1\nkind: JobSet\nmetadata: {name: j}\n",
			wantErr: `JobSet "j": jobset.x-k8s.io/v1 is not supported; this build reads JobSet jobset.x-k8s.io/v1alpha2`},
		{name: "a JobSet without replicated Jobs", yaml: "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: j}\nspec: {}\n",
			wantErr: `JobSet "j": spec.replicatedJobs is required`},
		{name: "no pods", yaml: "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: a}\n",
			wantErr: "the manifests (a) make no pods"},
		{name: "duplicate pod names", yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: a}
spec: {template: {spec: {containers: [{name: c, image: i}]}}}
---
apiVersion: v1
kind: Pod
metadata: {name: a-0}
spec: {containers: [{name: c, image: i}]}
`, wantErr: "the manifests make two pods named ml/a-0"},
		{name: "no name", yaml: "apiVersion: v1\nkind: Pod\nmetadata: {labels: {a: b}}\n", wantErr: "Pod has no metadata.name"},
		{name: "bad field type", yaml: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: many}\n",
			wantErr: `Deployment "d": unrecognized type: int32`},
		{name: "negative replicas", yaml: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: -1}\n",
			wantErr: `Deployment "d": spec.replicas must not be negative, got -1`},
		{name: "negative parallelism", yaml: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: -1}\n",
			wantErr: `Job "j": spec.parallelism must not be negative, got -1`},
		{name: "volcano job without tasks", yaml: "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: v}\nspec: {}\n",
			wantErr: "jobs.batch.volcano.sh ml/v: spec.tasks: is required"},
		{name: "volcano task replicas not a number", yaml: "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: v}\nspec: {tasks: [{replicas: two}]}\n",
			wantErr: `jobs.batch.volcano.sh ml/v: spec.tasks[0].replicas: must be an integer, got string "two"`},
		{name: "volcano job and a PodGroup", yaml: `
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: a}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: v}
spec: {tasks: [{replicas: 1, template: {spec: {containers: [{name: c, image: i}]}}}]}
`, wantErr: `Job "v": the manifests already hold a PodGroup (from PodGroup "a"); give one gang at a time`},
		{name: "negative min-member", yaml: "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n", minMember: -2,
			wantErr: "--min-member must not be negative, got -2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := workload.Decode([]byte(tt.yaml), "test.yaml")
			if err != nil {
				t.Fatal(err)
			}
			g, err := workload.FromManifests(objs, "ml", tt.minMember)
			testutil.CheckErr(t, err, tt.wantErr)
			if tt.want != nil {
				// The API server defaults schedulerName; so does FromManifests.
				for i := range tt.want.Members {
					if tt.want.Members[i].SchedulerName == "" {
						tt.want.Members[i].SchedulerName = corev1.DefaultSchedulerName
					}
				}
			}
			if diff := testutil.Diff(tt.want, summarizeGang(g)); diff != "" {
				t.Errorf("FromManifests (-want +got):\n%s", diff)
			}
		})
	}
}

func volcanoMember(job, task string, i int, req testutil.Res) memberSummary {
	index := string(rune('0' + i))
	return memberSummary{
		Name: job + "-" + task + "-" + index, Namespace: "ml", Phase: corev1.PodPending, Requests: req.List(),
		PriorityClass: "high", SchedulerName: "volcano",
		Labels: map[string]string{"volcano.sh/task-spec": task, "volcano.sh/job-name": job, "volcano.sh/job-namespace": "ml",
			"volcano.sh/queue-name": "default", "volcano.sh/task-index": index},
		Annotations: map[string]string{"volcano.sh/task-spec": task, "scheduling.k8s.io/group-name": job,
			"volcano.sh/job-name": job, "volcano.sh/queue-name": "default", "volcano.sh/task-index": index},
	}
}

// The two branches of Volcano's calcPGMinResources beyond the plain one.
func TestFromManifestsVolcanoMinResources(t *testing.T) {
	job := func(minAvailable string) string {
		return `
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: train}
spec:
  minAvailable: ` + minAvailable + `
  tasks:
  - name: ps
    replicas: 1
    template: {spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}}
  - name: worker
    replicas: 3
    minAvailable: 2
    template: {spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "2"}}}]}}
`
	}
	tests := []struct {
		minAvailable string
		want         corev1.ResourceList
	}{
		// Below the tasks' sum: the first 2 pods in task order, one ps and one worker.
		{"2", testutil.Res{"cpu": "3", "pods": "2"}.List()},
		// Above it: the tasks' minimums, then the worker's spare replica.
		{"4", testutil.Res{"cpu": "7", "pods": "4"}.List()},
	}
	for _, tt := range tests {
		t.Run("minAvailable "+tt.minAvailable, func(t *testing.T) {
			objs, err := workload.Decode([]byte(job(tt.minAvailable)), "job.yaml")
			if err != nil {
				t.Fatal(err)
			}
			g, err := workload.FromManifests(objs, "ml", 0)
			if err != nil {
				t.Fatal(err)
			}
			if diff := testutil.Diff(tt.want, g.MinResources); diff != "" {
				t.Errorf("MinResources (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyPriorities(t *testing.T) {
	never := corev1.PreemptNever
	lower := corev1.PreemptLowerPriority
	high := testutil.MakePriorityClass("high", 1000)
	high.PreemptionPolicy = &never
	defaultA := testutil.MakePriorityClass("default-a", 10)
	defaultA.GlobalDefault = true
	defaultB := testutil.MakePriorityClass("default-b", 5)
	defaultB.GlobalDefault = true
	withPriority := func(class string, value int32) *corev1.Pod {
		return testutil.MakePod().Name("p").Priority(class, value).Obj()
	}
	type result struct {
		Class    string
		Priority int32
		Policy   *corev1.PreemptionPolicy
	}
	tests := []struct {
		name    string
		pod     *corev1.Pod
		classes []*schedulingv1.PriorityClass
		want    result
		wantErr string
	}{
		{name: "no class and no global default", pod: testutil.MakePod().Name("p").Obj(), classes: []*schedulingv1.PriorityClass{high},
			want: result{Priority: 0, Policy: &lower}},
		{name: "class from the template", pod: func() *corev1.Pod {
			p := testutil.MakePod().Name("p").Obj()
			p.Spec.PriorityClassName = "high"
			return p
		}(),
			classes: []*schedulingv1.PriorityClass{high}, want: result{Class: "high", Priority: 1000, Policy: &never}},
		{name: "lowest global default", pod: testutil.MakePod().Name("p").Obj(), classes: []*schedulingv1.PriorityClass{high, defaultA, defaultB},
			want: result{Class: "default-b", Priority: 5}},
		{name: "system class the snapshot lacks", pod: func() *corev1.Pod {
			p := testutil.MakePod().Name("p").Obj()
			p.Spec.PriorityClassName = "system-node-critical"
			return p
		}(), want: result{Class: "system-node-critical", Priority: 2000001000, Policy: &lower}},
		{name: "priority already consistent", pod: withPriority("high", 1000), classes: []*schedulingv1.PriorityClass{high},
			want: result{Class: "high", Priority: 1000, Policy: &never}},
		{name: "missing class", pod: withPriority("gone", 3), wantErr: "pod default/p: no PriorityClass with name gone was found",
			want: result{Class: "gone", Priority: 3}},
		{name: "contradicting priority", pod: withPriority("high", 7), classes: []*schedulingv1.PriorityClass{high},
			wantErr: "pod default/p: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name",
			want:    result{Class: "high", Priority: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := workload.ApplyPriorities([]*corev1.Pod{tt.pod}, tt.classes)
			testutil.CheckErr(t, err, tt.wantErr)
			got := result{Class: tt.pod.Spec.PriorityClassName, Policy: tt.pod.Spec.PreemptionPolicy}
			if tt.pod.Spec.Priority != nil {
				got.Priority = *tt.pod.Spec.Priority
			}
			if diff := testutil.Diff(tt.want, got); diff != "" {
				t.Errorf("ApplyPriorities (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSortMembersAfterPriorities(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	low := testutil.MakePod().Name("a").Created(t0).Obj()
	high := testutil.MakePod().Name("b").Created(t0.Add(1)).Obj()
	high.Spec.PriorityClassName = "high"
	g := &gang.Gang{Members: []*corev1.Pod{low, high}}
	if err := workload.ApplyPriorities(g.Members, []*schedulingv1.PriorityClass{testutil.MakePriorityClass("high", 9)}); err != nil {
		t.Fatal(err)
	}
	g.SortMembers()
	if g.Members[0] != high {
		t.Errorf("members = %s, %s; want the high-priority pod first", g.Members[0].Name, g.Members[1].Name)
	}
}

// --min-member does not silently replace the minimum of a PodGroup given
// with -f: a different value is refused, naming where to change it.
func TestFromManifestsMinMemberAgainstPodGroup(t *testing.T) {
	objs, err := workload.Decode([]byte(`
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: pg}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
---
apiVersion: v1
kind: Pod
metadata: {name: a}
spec: {containers: [{name: c, image: i}]}
`), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := workload.FromManifests(objs, "ml", 2); err != nil {
		t.Errorf("--min-member equal to the PodGroup's: %v", err)
	}
	_, err = workload.FromManifests(objs, "ml", 1)
	if err == nil || !strings.Contains(err.Error(), "the PodGroup pg sets the minimum (2)") {
		t.Errorf("--min-member 1 against minCount 2: %v, want a refusal naming the PodGroup's minimum", err)
	}
}
