package workload_test

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

// kubeflowGang reads Kubeflow manifests as -f does, without priorities.
func kubeflowGang(yaml string) (*gang.Gang, error) {
	objs, err := workload.Decode([]byte(yaml), "kubeflow.yaml")
	if err != nil {
		return nil, err
	}
	return workload.FromManifests(objs, "ml", 0)
}

// pytorchJob is a PyTorchJob whose replica specs are given.
func pytorchJob(specs string) string {
	return "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: t}\nspec:\n  pytorchReplicaSpecs:\n" + specs
}

// mpiJobManifest is an MPIJob of version whose spec is given.
func mpiJobManifest(version, spec string) string {
	return "apiVersion: kubeflow.org/" + version + "\nkind: MPIJob\nmetadata: {name: m}\nspec:\n" + spec
}

const (
	kfContainer = "      template: {spec: {containers: [{name: pytorch, image: i}]}}\n"
	mpiLauncher = "    Launcher:\n      template: {spec: {containers: [{name: l, image: i}]}}\n"
)

func TestKubeflowErrors(t *testing.T) {
	tests := []struct{ name, yaml, wantErr string }{
		{"a PyTorchJob version this build does not read", "apiVersion: kubeflow.org/v2beta1\nkind: PyTorchJob\nmetadata: {name: t}\n",
			`PyTorchJob "t": kubeflow.org/v2beta1 is not supported; this build reads PyTorchJob kubeflow.org/v1`},
		{"a TFJob version this build does not read", "apiVersion: kubeflow.org/v1alpha2\nkind: TFJob\nmetadata: {name: t}\n",
			`TFJob "t": kubeflow.org/v1alpha2 is not supported; this build reads TFJob kubeflow.org/v1`},
		{"the Training Operator's MPIJob", mpiJobManifest("v1", "  mpiReplicaSpecs: {}\n"),
			`MPIJob "m": kubeflow.org/v1 is not supported; this build reads MPIJob kubeflow.org/v2beta1`},
		{"no replica specs", "apiVersion: kubeflow.org/v1\nkind: XGBoostJob\nmetadata: {name: x}\nspec: {}\n",
			`XGBoostJob "x": spec.xgbReplicaSpecs is required`},
		{"no spec at all", "apiVersion: kubeflow.org/v1\nkind: JAXJob\nmetadata: {name: j}\n",
			`JAXJob "j": spec.jaxReplicaSpecs is required`},
		{"negative replicas", pytorchJob("    Worker:\n      replicas: -1\n" + kfContainer),
			`PyTorchJob "t": spec.pytorchReplicaSpecs.Worker.replicas must not be negative, got -1`},
		{"an unknown replica type", pytorchJob("    Launcher:\n" + kfContainer),
			`PyTorchJob "t": spec.pytorchReplicaSpecs: replica type "Launcher" is not one of Master, Worker`},
		{"a type given twice", pytorchJob("    Worker:\n" + kfContainer + "    worker:\n" + kfContainer),
			`PyTorchJob "t": spec.pytorchReplicaSpecs: replica type Worker is given twice`},
		{"two masters", pytorchJob("    Master:\n      replicas: 2\n" + kfContainer),
			`PyTorchJob "t": spec.pytorchReplicaSpecs.Master.replicas must be 1, got 2`},
		{"no containers", pytorchJob("    Worker: {replicas: 2}\n"),
			`PyTorchJob "t": spec.pytorchReplicaSpecs.Worker.template.spec.containers is required`},
		{"no container of the kind's name", pytorchJob("    Worker:\n      template: {spec: {containers: [{name: main, image: i}]}}\n"),
			`PyTorchJob "t": spec.pytorchReplicaSpecs.Worker.template.spec.containers must have one named pytorch`},
		{"an unknown restart policy", pytorchJob("    Worker:\n      restartPolicy: Sometimes\n" + kfContainer),
			`PyTorchJob "t": spec.pytorchReplicaSpecs.Worker.restartPolicy "Sometimes" is not one of Always, OnFailure, Never, ExitCode`},
		{"a Chief and a Master", "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: t}\nspec:\n  tfReplicaSpecs:\n" +
			"    Chief: {template: {spec: {containers: [{name: tensorflow, image: i}]}}}\n" +
			"    Master: {template: {spec: {containers: [{name: tensorflow, image: i}]}}}\n",
			`TFJob "t": spec.tfReplicaSpecs must not have more than one of Chief and Master`},
		{"an XGBoostJob without a Master", "apiVersion: kubeflow.org/v1\nkind: XGBoostJob\nmetadata: {name: x}\nspec:\n  xgbReplicaSpecs:\n" +
			"    Worker: {template: {spec: {containers: [{name: xgboost, image: i}]}}}\n",
			`XGBoostJob "x": spec.xgbReplicaSpecs.Master is required`},
		{"a negative minAvailable", pytorchJob("    Worker:\n"+kfContainer) + "  runPolicy: {schedulingPolicy: {minAvailable: -1}}\n",
			`PyTorchJob "t": spec.runPolicy.schedulingPolicy.minAvailable must not be negative, got -1`},
		{"an MPIJob without replica specs", mpiJobManifest("v2beta1", "  slotsPerWorker: 1\n"),
			`MPIJob "m": spec.mpiReplicaSpecs is required`},
		{"an MPIJob without a launcher", mpiJobManifest("v2beta1", "  mpiReplicaSpecs:\n    Worker:\n      replicas: 1\n"+
			"      template: {spec: {containers: [{name: w, image: i}]}}\n"),
			`MPIJob "m": spec.mpiReplicaSpecs.Launcher is required`},
		{"an MPIJob with negative workers", mpiJobManifest("v2beta1", "  mpiReplicaSpecs:\n"+mpiLauncher+"    Worker:\n      replicas: -2\n"+
			"      template: {spec: {containers: [{name: w, image: i}]}}\n"),
			`MPIJob "m": spec.mpiReplicaSpecs.Worker.replicas must be at least 1, got -2`},
		{"an MPIJob worker without replicas", mpiJobManifest("v2beta1", "  mpiReplicaSpecs:\n"+mpiLauncher+"    Worker:\n"+
			"      template: {spec: {containers: [{name: w, image: i}]}}\n"),
			`MPIJob "m": spec.mpiReplicaSpecs.Worker.replicas is required (mpi-operator defaults it to 0, which it refuses)`},
		{"two MPI launchers", mpiJobManifest("v2beta1", "  mpiReplicaSpecs:\n    Launcher:\n      replicas: 2\n"+
			"      template: {spec: {containers: [{name: l, image: i}]}}\n"),
			`MPIJob "m": spec.mpiReplicaSpecs.Launcher.replicas must be 1, got 2`},
		{"an unknown MPI replica type", mpiJobManifest("v2beta1", "  mpiReplicaSpecs:\n"+mpiLauncher+"    Server:\n"+
			"      template: {spec: {containers: [{name: s, image: i}]}}\n"),
			`MPIJob "m": spec.mpiReplicaSpecs: replica type "Server" is not one of Launcher, Worker`},
		{"an MPI restart policy a Job cannot have", mpiJobManifest("v2beta1", "  mpiReplicaSpecs:\n    Launcher:\n      restartPolicy: Always\n"+
			"      template: {spec: {containers: [{name: l, image: i}]}}\n"),
			`MPIJob "m": spec.mpiReplicaSpecs.Launcher.restartPolicy "Always" is not one of Never, OnFailure`},
		{"an unknown launcher creation policy", mpiJobManifest("v2beta1", "  launcherCreationPolicy: Later\n  mpiReplicaSpecs:\n"+mpiLauncher),
			`MPIJob "m": spec.launcherCreationPolicy "Later" is not one of AtStartup, WaitForWorkersReady`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := kubeflowGang(tt.yaml)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("error %v, want %s", err, tt.wantErr)
			}
		})
	}
}

// schedulingPolicy.minAvailable is the gang's minimum; the minima of
// several jobs add up, each at most its job's pods, and a job without one
// asks for nothing less than all of its pods, in the same file too.
func TestKubeflowMinAvailable(t *testing.T) {
	job := func(name string, replicas, minAvailable int) string {
		s := "apiVersion: kubeflow.org/v1\nkind: JAXJob\nmetadata: {name: " + name + "}\nspec:\n"
		if minAvailable >= 0 {
			s += "  runPolicy: {schedulingPolicy: {minAvailable: " + strconv.Itoa(minAvailable) + "}}\n"
		}
		return s + "  jaxReplicaSpecs:\n    Worker:\n      replicas: " + strconv.Itoa(replicas) + "\n" +
			"      template: {spec: {containers: [{name: jax, image: i}]}}\n"
	}
	mpi := mpiJobManifest("v2beta1", "  runPolicy: {schedulingPolicy: {minAvailable: 3}}\n  mpiReplicaSpecs:\n"+mpiLauncher+
		"    Worker:\n      replicas: 4\n      template: {spec: {containers: [{name: w, image: i}]}}\n")
	for _, tt := range []struct {
		name string
		yaml string
		want int32
	}{
		{"no minAvailable: all pods", job("a", 4, -1), 4},
		{"minAvailable", job("a", 4, 2), 2},
		{"minAvailable above the pods", job("a", 4, 9), 4},
		{"two jobs add up", job("a", 4, 2) + "---\n" + job("b", 3, 1), 3},
		{"a job without one counts all its pods", job("a", 4, 2) + "---\n" + job("b", 3, -1), 5},
		{"in any order", job("b", 3, -1) + "---\n" + job("a", 4, 2), 5},
		{"an MPIJob counts its launcher", mpi, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, err := kubeflowGang(tt.yaml)
			if err != nil {
				t.Fatal(err)
			}
			if g.MinMember != tt.want {
				t.Errorf("MinMember %d, want %d", g.MinMember, tt.want)
			}
		})
	}
}

// A PyTorchJob's workers wait for the master in an init container, whose
// requests count when they are above the containers'; the default port is
// a host port with hostNetwork, so two such pods cannot share a node.
func TestKubeflowPyTorchPodSpecs(t *testing.T) {
	g, err := kubeflowGang(pytorchJob("    Master:\n" +
		"      template: {spec: {hostNetwork: true, containers: [{name: side, image: i}, {name: pytorch, image: i}]}}\n" +
		"    Worker:\n      replicas: 1\n" +
		"      template: {spec: {containers: [{name: pytorch, image: i, resources: {requests: {cpu: 10m, memory: 1Mi}}}]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*corev1.Pod{}
	for _, p := range g.Members {
		byName[p.Name] = p
	}
	master, worker := byName["t-master-0"], byName["t-worker-0"]
	if master == nil || worker == nil {
		t.Fatalf("no t-master-0 and t-worker-0 among %d members", len(g.Members))
	}
	if len(master.Spec.InitContainers) != 0 || len(worker.Spec.InitContainers) != 1 || worker.Spec.InitContainers[0].Name != "init-pytorch" {
		t.Errorf("init containers: master %d, worker %v", len(master.Spec.InitContainers), worker.Spec.InitContainers)
	}
	if got := worker.Spec.InitContainers[0].Resources.Requests; !got.Cpu().Equal(testutil.Res{"cpu": "50m"}.List()[corev1.ResourceCPU]) {
		t.Errorf("init container requests %v", got)
	}
	want := corev1.ContainerPort{Name: "pytorchjob-port", ContainerPort: 23456, HostPort: 23456, Protocol: corev1.ProtocolTCP}
	if ports := master.Spec.Containers[1].Ports; len(ports) != 1 || ports[0] != want || len(master.Spec.Containers[0].Ports) != 0 {
		t.Errorf("master ports %v, want %v on the pytorch container", ports, want)
	}
	if ports := worker.Spec.Containers[0].Ports; len(ports) != 1 || ports[0].HostPort != 0 {
		t.Errorf("worker ports %v", ports)
	}
}
