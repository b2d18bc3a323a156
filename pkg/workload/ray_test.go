package workload_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

// rayGang expands manifests as -f does, in namespace ml.
func rayGang(t *testing.T, manifests string) (*gang.Gang, error) {
	t.Helper()
	objs, err := workload.Decode([]byte(manifests), "ray.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return workload.FromManifests(objs, "ml", 0)
}

// rayCluster is a RayCluster named name with the given metadata and spec
// lines (each indented by two spaces under metadata and spec).
func rayCluster(name, metadata, spec string) string {
	return "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata:\n  name: " + name + "\n" + metadata + "spec:\n" + spec
}

// rayHead is a headGroupSpec whose head asks for 1 CPU and 1Gi.
const rayHead = `  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers: [{name: ray-head, image: ray, resources: {requests: {cpu: "1", memory: 1Gi}}}]
`

// rayWorkers is a worker group named w with the given fields; its pods ask
// for 100m CPU and 128Mi.
func rayWorkers(fields string) string {
	return `  workerGroupSpecs:
  - groupName: w
    rayStartParams: {}
` + fields + `    template:
      spec:
        containers: [{name: ray-worker, image: ray, resources: {requests: {cpu: 100m, memory: 128Mi}}}]
`
}

func TestRayErrors(t *testing.T) {
	for _, tc := range []struct {
		name, manifests, wantErr string
	}{
		{"v1alpha1 cluster", strings.Replace(rayCluster("rc", "", rayHead), "ray.io/v1", "ray.io/v1alpha1", 1),
			`RayCluster "rc": ray.io/v1alpha1 is not supported; this build reads RayCluster ray.io/v1`},
		{"v1alpha1 job", "apiVersion: ray.io/v1alpha1\nkind: RayJob\nmetadata: {name: rj}\nspec: {entrypoint: x}\n",
			`RayJob "rj": ray.io/v1alpha1 is not supported; this build reads RayJob ray.io/v1`},
		{"no head group", rayCluster("rc", "", rayWorkers("    replicas: 1\n")),
			`RayCluster "rc": spec.headGroupSpec is required`},
		{"head without containers", rayCluster("rc", "", "  headGroupSpec: {template: {spec: {containers: []}}}\n"),
			`RayCluster "rc": spec.headGroupSpec.template.spec.containers is required (the Ray container comes first)`},
		{"negative replicas", rayCluster("rc", "", rayHead+rayWorkers("    replicas: -1\n")),
			`RayCluster "rc": spec.workerGroupSpecs[0].replicas must not be negative, got -1`},
		{"negative minReplicas", rayCluster("rc", "", rayHead+rayWorkers("    minReplicas: -2\n")),
			`RayCluster "rc": spec.workerGroupSpecs[0].minReplicas must not be negative, got -2`},
		{"min above max", rayCluster("rc", "", rayHead+rayWorkers("    minReplicas: 3\n    maxReplicas: 2\n")),
			`RayCluster "rc": spec.workerGroupSpecs[0].minReplicas (3) must not be greater than maxReplicas (2)`},
		{"no hosts", rayCluster("rc", "", rayHead+rayWorkers("    numOfHosts: 0\n")),
			`RayCluster "rc": spec.workerGroupSpecs[0].numOfHosts must be at least 1, got 0`},
		{"group without a name", rayCluster("rc", "", rayHead+strings.Replace(rayWorkers(""), "groupName: w", "groupName: \"\"", 1)),
			`RayCluster "rc": spec.workerGroupSpecs[0].groupName is required`},
		{"job without a cluster", "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj}\nspec: {entrypoint: x}\n",
			`RayJob "rj": spec.rayClusterSpec or spec.clusterSelector is required`},
		{"job with a bad head", "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj}\nspec:\n  rayClusterSpec:\n    workerGroupSpecs: []\n",
			`RayJob "rj": spec.rayClusterSpec.headGroupSpec is required`},
		{"unknown mode", "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj}\nspec: {submissionMode: Batch, clusterSelector: {ray.io/cluster: rc}}\n",
			`RayJob "rj": spec.submissionMode "Batch" is not one of K8sJobMode, HTTPMode, InteractiveMode, SidecarMode`},
		{"selector without a cluster", "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj}\nspec: {clusterSelector: {app: x}}\n",
			`RayJob "rj": spec.clusterSelector must name the RayCluster in ray.io/cluster`},
		{"sidecar with a selector", "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj}\nspec: {submissionMode: SidecarMode, clusterSelector: {ray.io/cluster: rc}}\n",
			`RayJob "rj": spec.clusterSelector cannot be used with submissionMode SidecarMode`},
		{"selector in HTTPMode makes nothing", "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj}\nspec: {submissionMode: HTTPMode, clusterSelector: {ray.io/cluster: rc}}\n",
			`the manifests (rj) make no pods`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rayGang(t, tc.manifests)
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("got %v, want %s", err, tc.wantErr)
			}
		})
	}
}

// Gang scheduling asked for with ray.io/gang-scheduling-enabled makes the
// head plus each group's minReplicas x numOfHosts the minimum; without it
// every pod must run. Several objects add up.
func TestRayGangMinimum(t *testing.T) {
	workers := rayWorkers("    replicas: 3\n    minReplicas: 1\n    numOfHosts: 2\n")
	gangLabel := "  labels: {ray.io/gang-scheduling-enabled: \"true\"}\n"
	plain := rayCluster("plain", "", rayHead+workers)
	gangCluster := rayCluster("gang", gangLabel, rayHead+workers)
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: c}]}\n"
	job := `apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: job
` + gangLabel + "spec:\n  rayClusterSpec:\n" + indent(rayHead+workers)
	for _, tc := range []struct {
		name      string
		manifests []string
		pods      int
		minMember int32
	}{
		{"without gang scheduling", []string{plain}, 7, 7},
		{"with gang scheduling", []string{gangCluster}, 7, 3},
		{"two gangs", []string{gangCluster, strings.Replace(gangCluster, "name: gang", "name: gang2", 1)}, 14, 6},
		{"a plain cluster, then a gang", []string{plain, gangCluster}, 14, 10},
		{"a gang, then a plain cluster", []string{gangCluster, plain}, 14, 10},
		{"a pod, then a gang", []string{pod, gangCluster}, 8, 4},
		{"a RayJob counts its submitter", []string{job}, 8, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := rayGang(t, strings.Join(tc.manifests, "---\n"))
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Members) != tc.pods || g.MinMember != tc.minMember {
				t.Errorf("%d pods, minMember %d; want %d, %d", len(g.Members), g.MinMember, tc.pods, tc.minMember)
			}
		})
	}
}

// indent puts two more spaces before every line.
func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

// KubeRay adds containers that ask for resources: the autoscaler on the
// head with in-tree autoscaling, the wait-gcs-ready init container on every
// worker, and the submitter (its own pod in K8sJobMode, a head container in
// SidecarMode).
func TestRayAddedContainers(t *testing.T) {
	requests := func(g *gang.Gang) map[string]string {
		out := map[string]string{}
		for _, p := range g.Members {
			rl := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
			out[p.Name] = rl.Cpu().String() + " " + rl.Memory().String()
		}
		return out
	}
	for _, tc := range []struct {
		name, manifests string
		want            map[string]string
	}{
		{"autoscaler", rayCluster("rc", "", "  enableInTreeAutoscaling: true\n"+rayHead+rayWorkers("    replicas: 1\n")),
			// The worker's 100m/128Mi is below the init container's 200m/256Mi.
			map[string]string{"rc-head": "1500m 1536Mi", "rc-w-worker-0": "200m 256Mi"}},
		{"autoscaler resources", rayCluster("rc", "", "  enableInTreeAutoscaling: true\n  autoscalerOptions: {resources: {requests: {cpu: 250m, memory: 256Mi}}}\n"+rayHead),
			map[string]string{"rc-head": "1250m 1280Mi"}},
		{"no autoscaler", rayCluster("rc", "", "  enableInTreeAutoscaling: false\n"+rayHead),
			map[string]string{"rc-head": "1 1Gi"}},
		{"K8sJobMode", "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj}\nspec:\n  rayClusterSpec:\n" + indent(rayHead),
			map[string]string{"rj-cluster-head": "1 1Gi", "rj-0": "500m 200Mi"}},
		{"SidecarMode", "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj}\nspec:\n  submissionMode: SidecarMode\n  rayClusterSpec:\n" + indent(rayHead),
			map[string]string{"rj-cluster-head": "1500m 1224Mi"}},
		{"existing cluster", "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj}\nspec: {clusterSelector: {ray.io/cluster: rc}}\n",
			map[string]string{"rj-0": "500m 200Mi"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := rayGang(t, tc.manifests)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, requests(g)); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// Pod names follow KubeRay's without the random suffix: the prefix is cut to
// 50 characters and lower-cased, the identifier label keeps the last 63
// characters, and a RayJob's cluster takes its name from the status when
// there is one.
func TestRayNames(t *testing.T) {
	long := strings.Repeat("a", 45) + "-cluster"
	g, err := rayGang(t, rayCluster(long, "", rayHead+rayWorkers("    replicas: 1\n")))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range g.Members {
		names = append(names, p.Name+" "+p.Labels["ray.io/identifier"])
	}
	want := []string{
		long[:50] + "-head " + long + "-head",
		long[:50] + "-worker-0 " + long + "-worker",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}

	job := "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj}\nspec:\n  submissionMode: HTTPMode\n  rayClusterSpec:\n" +
		indent(rayHead) + "status: {rayClusterName: rj-x7k2p}\n"
	if g, err = rayGang(t, job); err != nil {
		t.Fatal(err)
	}
	if len(g.Members) != 1 || g.Members[0].Name != "rj-x7k2p-head" || g.Members[0].Labels["ray.io/cluster"] != "rj-x7k2p" {
		t.Errorf("members %v", summarize(g.Members))
	}
	if got := g.Members[0].Spec.RestartPolicy; got != "" {
		t.Errorf("HTTPMode head restartPolicy %q", got)
	}
}
