package workload_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/coscheduling"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

// trainerGang reads Trainer manifests as -f does (default namespace ml),
// without priorities.
func trainerGang(yaml string) (*gang.Gang, error) {
	objs, err := workload.Decode([]byte(yaml), "trainjob.yaml")
	if err != nil {
		return nil, err
	}
	return workload.FromManifests(objs, "ml", 0)
}

// trainJobYAML is a TrainJob t on the ClusterTrainingRuntime rt, with the
// given lines under spec (indented by two).
func trainJobYAML(spec string) string {
	return "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: t}\nspec:\n  runtimeRef: {name: rt}\n" + spec
}

// runtimeYAML is a ClusterTrainingRuntime rt with the given lines under
// spec (indented by two).
func runtimeYAML(spec string) string {
	return "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: rt}\nspec:\n" + spec
}

// torchRuntime has a trainer Job whose node container requests 4 CPUs and
// 16Gi, beside a sidecar, and the given podGroupPolicy lines.
func torchRuntime(podGroupPolicy string) string {
	return runtimeYAML("  mlPolicy: {numNodes: 2, torch: {}}\n" + podGroupPolicy + `  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers:
                - {name: side, image: s, resources: {requests: {cpu: 100m}}}
                - {name: node, image: i, resources: {requests: {cpu: "4", memory: 16Gi}, limits: {memory: 16Gi}}}
`)
}

func TestTrainJobErrors(t *testing.T) {
	rt := runtimeYAML("  template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: {containers: [{name: node, image: i}]}}}}}]}}\n")
	tests := []struct{ name, yaml, wantErr string }{
		{"the ClusterTrainingRuntime is missing", trainJobYAML(""),
			`TrainJob "t": its runtime ClusterTrainingRuntime "rt" is not in the manifests; give it with -f too ` +
				`(kubectl get clustertrainingruntime rt -o yaml)`},
		{"the TrainingRuntime is missing", strings.Replace(trainJobYAML(""), "{name: rt}", "{name: rt, kind: TrainingRuntime}", 1) + "---\n" + rt,
			`TrainJob "t": its runtime TrainingRuntime "rt" (namespace ml) is not in the manifests; give it with -f too ` +
				`(kubectl get trainingruntime rt -n ml -o yaml)`},
		{"the TrainingRuntime is in another namespace", strings.Replace(trainJobYAML(""), "{name: rt}", "{name: rt, kind: TrainingRuntime}", 1) + "---\n" +
			strings.Replace(strings.Replace(rt, "ClusterTrainingRuntime", "TrainingRuntime", 1), "{name: rt}", "{name: rt, namespace: other}", 1),
			`TrainJob "t": its runtime TrainingRuntime "rt" (namespace ml) is not in the manifests; give it with -f too ` +
				`(kubectl get trainingruntime rt -n ml -o yaml)`},
		{"a TrainJob version this build does not read", strings.Replace(trainJobYAML(""), "v1alpha1", "v1beta1", 1) + "---\n" + rt,
			`TrainJob "t": trainer.kubeflow.org/v1beta1 is not supported; this build reads TrainJob trainer.kubeflow.org/v1alpha1 (Kubeflow Trainer v2)`},
		{"Trainer's early group", strings.Replace(trainJobYAML(""), "trainer.kubeflow.org/v1alpha1", "kubeflow.org/v2alpha1", 1),
			`TrainJob "t": kubeflow.org/v2alpha1 is not supported; this build reads TrainJob trainer.kubeflow.org/v1alpha1 (Kubeflow Trainer v2)`},
		{"a runtime version this build does not read", trainJobYAML("") + "---\n" + strings.Replace(rt, "v1alpha1", "v1beta1", 1),
			`ClusterTrainingRuntime "rt": trainer.kubeflow.org/v1beta1 is not supported; this build reads ClusterTrainingRuntime trainer.kubeflow.org/v1alpha1 (Kubeflow Trainer v2)`},
		{"no runtimeRef", "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: t}\nspec: {trainer: {numNodes: 2}}\n---\n" + rt,
			`TrainJob "t": spec.runtimeRef.name is required`},
		{"a runtimeRef of another kind", strings.Replace(trainJobYAML(""), "{name: rt}", "{name: rt, kind: Runtime, apiGroup: example.com}", 1),
			`TrainJob "t": spec.runtimeRef names a Runtime of example.com; Trainer runs a TrainJob on a ClusterTrainingRuntime or TrainingRuntime of trainer.kubeflow.org`},
		{"negative numNodes", trainJobYAML("  trainer: {numNodes: -1}\n") + "---\n" + rt,
			`TrainJob "t": spec.trainer.numNodes must not be negative, got -1`},
		{"a runtime alone", rt,
			`ClusterTrainingRuntime "rt" makes no pods by itself; give the TrainJob that names it too`},
		{"two runtimes alone", rt + "---\n" + strings.Replace(rt, "{name: rt}", "{name: rt2}", 1),
			`ClusterTrainingRuntime "rt", ClusterTrainingRuntime "rt2" make no pods by themselves; give a TrainJob that names one`},
		{"a runtime given twice", rt + "---\n" + rt + "---\n" + trainJobYAML(""),
			`ClusterTrainingRuntime "rt" is given twice`},
		{"a patch of a replicated Job the runtime lacks", trainJobYAML("  runtimePatches:\n  - manager: example.com/m\n"+
			"    trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: worker}]}}}\n") + "---\n" + rt,
			`TrainJob "t": spec.runtimePatches[0] patches replicated Job "worker", which the runtime's template does not have`},
		{"a runtime without replicated Jobs", trainJobYAML("") + "---\n" + runtimeYAML("  mlPolicy: {torch: {}}\n"),
			`TrainJob "t" (its JobSet, from ClusterTrainingRuntime "rt"): spec.replicatedJobs is required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := trainerGang(tt.yaml)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("error %v,\nwant %s", err, tt.wantErr)
			}
		})
	}
}

// resourcesPerNode is merged into the node container's resources key by
// key; the other containers keep theirs.
func TestTrainJobResourcesPerNode(t *testing.T) {
	g, err := trainerGang(torchRuntime("") + "---\n" + trainJobYAML(`  trainer:
    numNodes: 3
    resourcesPerNode:
      requests: {cpu: "32", nvidia.com/gpu: "8"}
      limits: {nvidia.com/gpu: "8"}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Members) != 3 {
		t.Fatalf("%d members, want 3", len(g.Members))
	}
	want := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{"cpu": resource.MustParse("32"), "memory": resource.MustParse("16Gi"), "nvidia.com/gpu": resource.MustParse("8")},
		Limits:   corev1.ResourceList{"memory": resource.MustParse("16Gi"), "nvidia.com/gpu": resource.MustParse("8")},
	}
	for _, p := range g.Members {
		if diff := cmp.Diff(want, p.Spec.Containers[1].Resources); diff != "" {
			t.Errorf("%s: node container resources (-want +got):\n%s", p.Name, diff)
		}
		if got := p.Spec.Containers[0].Resources.Requests; len(got) != 1 || got.Cpu().String() != "100m" {
			t.Errorf("%s: sidecar requests %v", p.Name, got)
		}
	}
}

// With MPI's runLauncherAsNode, both the launcher (the trainer ancestor)
// and the node Job get resourcesPerNode; numNodes counts the launcher.
// Without an mlPolicy, Trainer leaves resourcesPerNode unapplied.
func TestTrainJobResourcesPerNodeMPI(t *testing.T) {
	job := trainJobYAML("  trainer: {numNodes: 3, resourcesPerNode: {limits: {nvidia.com/gpu: \"8\"}}}\n")
	template := `  template:
    spec:
      replicatedJobs:
      - name: node
        template: {spec: {template: {spec: {containers: [{name: node, image: i}]}}}}
      - name: launcher
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, image: i}]}}}
`
	for _, tt := range []struct {
		name, policy string
		wantPods     []string
		wantGPUs     int64
	}{
		{"runLauncherAsNode", "  mlPolicy: {numNodes: 1, mpi: {runLauncherAsNode: true}}\n",
			[]string{"t-launcher-0-0", "t-node-0-0", "t-node-0-1"}, 8},
		{"the launcher apart", "  mlPolicy: {numNodes: 1, mpi: {}}\n",
			[]string{"t-launcher-0-0", "t-node-0-0", "t-node-0-1", "t-node-0-2"}, 8},
		{"no mlPolicy", "",
			[]string{"t-launcher-0-0", "t-launcher-0-1", "t-launcher-0-2", "t-node-0-0"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, err := trainerGang(runtimeYAML(tt.policy+template) + "---\n" + job)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range g.Members {
				names = append(names, p.Name)
				gpus := p.Spec.Containers[0].Resources.Requests.Name("nvidia.com/gpu", resource.DecimalSI).Value()
				// Without runLauncherAsNode only the trainer ancestor (the launcher) gets them.
				want := tt.wantGPUs
				if tt.name == "the launcher apart" && strings.HasPrefix(p.Name, "t-node") {
					want = 0
				}
				if gpus != want {
					t.Errorf("%s: %d GPUs requested, want %d", p.Name, gpus, want)
				}
			}
			slices.Sort(names)
			if !slices.Equal(names, tt.wantPods) {
				t.Errorf("pods %v, want %v", names, tt.wantPods)
			}
		})
	}
}

// The gang's minimum: all pods, unless the runtime's PodGroup (coscheduling
// or volcano), which counts each replicated Job's pods once, asks for fewer;
// several TrainJobs add up.
func TestTrainJobMinimum(t *testing.T) {
	withPS := func(name, podGroupPolicy string, psReplicas string) string {
		return strings.ReplaceAll(runtimeYAML("  mlPolicy: {torch: {}}\n"+podGroupPolicy+`  template:
    spec:
      replicatedJobs:
      - name: ps
        replicas: `+psReplicas+`
        template: {spec: {template: {spec: {containers: [{name: ps, image: i}]}}}}
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, image: i}]}}}
`), "{name: rt}", "{name: "+name+"}")
	}
	job := func(name, runtime string, nodes string) string {
		return "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: " + name + "}\nspec:\n  runtimeRef: {name: " + runtime + "}\n" +
			"  trainer: {numNodes: " + nodes + "}\n"
	}
	for _, tt := range []struct {
		name       string
		yaml       string
		pods, want int32
	}{
		{"no podGroupPolicy", withPS("rt", "", "3") + "---\n" + job("a", "rt", "4"), 7, 7},
		{"coscheduling, every Job once", withPS("rt", "  podGroupPolicy: {coscheduling: {}}\n", "1") + "---\n" + job("a", "rt", "4"), 5, 5},
		{"coscheduling with replicas", withPS("rt", "  podGroupPolicy: {coscheduling: {}}\n", "3") + "---\n" + job("a", "rt", "4"), 7, 5},
		{"volcano with replicas", withPS("rt", "  podGroupPolicy: {volcano: {}}\n", "2") + "---\n" + job("a", "rt", "2"), 4, 3},
		{"two TrainJobs add up", withPS("pg", "  podGroupPolicy: {coscheduling: {}}\n", "3") + "---\n" + withPS("plain", "", "2") + "---\n" +
			job("a", "pg", "2") + "---\n" + job("b", "plain", "1"), 5 + 3, 3 + 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, err := trainerGang(tt.yaml)
			if err != nil {
				t.Fatal(err)
			}
			if int32(len(g.Members)) != tt.pods || g.MinMember != tt.want {
				t.Errorf("%d pods, minimum %d; want %d, %d", len(g.Members), g.MinMember, tt.pods, tt.want)
			}
		})
	}
}

// A ClusterTrainingRuntime has no namespace: given first, it does not set
// the gang's. The gang is named after the TrainJob and reads both objects,
// not the JobSet made of them. With hostNetwork the torch port 29500 takes
// the place of the node container's unnamed port and becomes a host port.
func TestTrainJobNamespaceReadAndPort(t *testing.T) {
	rt := strings.Replace(torchRuntime("  podGroupPolicy: {coscheduling: {}}\n"), "- {name: node, image: i,",
		"- {name: node, image: i, ports: [{name: ssh, containerPort: 2222}, {containerPort: 8080}],", 1)
	rt = strings.Replace(rt, "containers:\n", "hostNetwork: true\n                containers:\n", 1)
	job := strings.Replace(trainJobYAML("  trainer: {numNodes: 1}\n"), "metadata: {name: t}", "metadata: {name: t, namespace: prod}", 1)
	g, err := trainerGang(rt + "---\n" + job)
	if err != nil {
		t.Fatal(err)
	}
	if g.Key() != "prod/t" || g.Source != gang.SourceFile || g.MinMember != 1 {
		t.Errorf("gang %s (%s), minimum %d", g.Key(), g.Source, g.MinMember)
	}
	wantRead := []string{"ClusterTrainingRuntime rt (trainer.kubeflow.org/v1alpha1)", "TrainJob t (trainer.kubeflow.org/v1alpha1)"}
	if !slices.Equal(g.Read, wantRead) {
		t.Errorf("Read %q, want %q", g.Read, wantRead)
	}
	if len(g.Members) != 1 {
		t.Fatalf("%d members", len(g.Members))
	}
	pod := g.Members[0]
	if pod.Name != "t-node-0-0" || pod.Labels[coscheduling.Label] != "t" {
		t.Errorf("pod %s, labels %v", pod.Name, pod.Labels)
	}
	want := []corev1.ContainerPort{
		{Name: "ssh", ContainerPort: 2222, HostPort: 2222, Protocol: corev1.ProtocolTCP},
		{ContainerPort: 29500, HostPort: 29500, Protocol: corev1.ProtocolTCP},
	}
	if diff := cmp.Diff(want, pod.Spec.Containers[1].Ports); diff != "" {
		t.Errorf("node container ports (-want +got):\n%s", diff)
	}
}
