package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// snapshotPods is how many realistic pods BenchmarkLiveSnapshot runs.
const snapshotPods = 40000

// BenchmarkLiveSnapshot reads a live snapshot of 5,000 nodes and 40,000
// realistic pods (about 5 KB of JSON each) from the test bed with the
// kubectl-gang binary (`snapshot -o json`), and the same pods with
// `kubectl get pods -A -o json` when kubectl is in the test binaries'
// directory (make bench-e2e builds it): wall time, peak memory of the
// process, and the size of what each wrote.
func BenchmarkLiveSnapshot(b *testing.B) {
	ctx := context.Background()
	env, cs, stop := clusterOfNodes(b, benchNodes)
	defer stop()
	start := time.Now()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	parallel(b, snapshotPods, func(i int) error {
		_, err := cs.CoreV1().Pods("apps").Create(ctx, realisticPod(i), metav1.CreateOptions{})
		return err
	})
	b.Logf("set-up: %d nodes, %d pods in %s", benchNodes, snapshotPods, time.Since(start).Round(time.Second))

	dir := b.TempDir()
	gang := filepath.Join(dir, "kubectl-gang")
	build := exec.Command("go", "build", "-o", gang, "../../cmd/kubectl-gang")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	b.ResetTimer()
	wall, peak, size := runMeasured(b, filepath.Join(dir, "gang.json"), gang, "snapshot", "-o", "json", "--kubeconfig", env.Kubeconfig)
	b.ReportMetric(wall.Seconds(), "snapshot-s")
	b.ReportMetric(float64(peak)/(1<<20), "snapshot-peak-MiB")
	b.ReportMetric(float64(size)/(1<<20), "snapshot-json-MiB")
	b.ReportMetric(float64(peak)/float64(size), "peak/json")
	b.Logf("kubectl gang snapshot -o json: %s, peak %d MiB, wrote %d MiB (peak %.2fx the JSON)", wall.Round(time.Millisecond), peak>>20, size>>20, float64(peak)/float64(size))

	kubectl := filepath.Join(env.BinDir, "kubectl")
	if testing.Short() {
		b.Log("-short: the comparison with kubectl get pods -A -o json is left out")
		return
	}
	if _, err := os.Stat(kubectl); err != nil {
		b.Logf("no kubectl in %s: the comparison with kubectl get pods -A -o json is left out", env.BinDir)
		return
	}
	kwall, kpeak, ksize := runMeasured(b, filepath.Join(dir, "kubectl.json"), kubectl, "get", "pods", "-A", "-o", "json", "--kubeconfig", env.Kubeconfig)
	b.ReportMetric(kwall.Seconds(), "kubectl-get-pods-s")
	b.ReportMetric(float64(kpeak)/(1<<20), "kubectl-peak-MiB")
	b.ReportMetric(kwall.Seconds()/wall.Seconds(), "kubectl/snapshot")
	b.Logf("kubectl get pods -A -o json: %s, peak %d MiB, wrote %d MiB; the snapshot is %.2fx faster",
		kwall.Round(time.Millisecond), kpeak>>20, ksize>>20, kwall.Seconds()/wall.Seconds())
}

// runMeasured runs a command with its output to file and returns its wall
// time, its peak resident memory and how much it wrote.
func runMeasured(b *testing.B, file, name string, args ...string) (time.Duration, int64, int64) {
	out, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	var stderr strings.Builder
	c := exec.Command(name, args...)
	c.Stdout, c.Stderr = out, &stderr
	start := time.Now()
	if err := c.Run(); err != nil {
		b.Fatalf("%s: %v: %s", name, err, stderr.String())
	}
	wall := time.Since(start)
	peak := int64(0)
	if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peak = ru.Maxrss * 1024 // kilobytes on Linux
	}
	info, err := out.Stat()
	if err != nil {
		b.Fatal(err)
	}
	return wall, peak, info.Size()
}

// realisticPod is a pod of the size and shape a Deployment's pods have on
// a busy cluster: about 5 KB of JSON with labels, annotations, two
// containers with environments, probes and mounts, and a node.
func realisticPod(i int) *corev1.Pod {
	labels := map[string]string{}
	for k := range 10 {
		labels[fmt.Sprintf("example.com/label-%d", k)] = fmt.Sprintf("value-%d-%d", k, i%50)
	}
	labels["app.kubernetes.io/name"] = fmt.Sprintf("service-%d", i%200)
	annotations := map[string]string{
		"prometheus.io/scrape": "true", "prometheus.io/port": "9090",
		"example.com/config": strings.Repeat(fmt.Sprintf("setting-%d=on;", i%97), 90),
	}
	var env []corev1.EnvVar
	for k := range 15 {
		env = append(env, corev1.EnvVar{Name: fmt.Sprintf("SETTING_%02d", k), Value: fmt.Sprintf("value-%d-of-service-%d", k, i%200)})
	}
	env = append(env, corev1.EnvVar{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}})
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 10}
	container := func(name string) corev1.Container {
		return corev1.Container{
			Name: name, Image: "registry.example.com/team/" + name + ":2026.11.23", Env: env,
			Args:  []string{"--config=/etc/app/config.yaml", "--log-level=info", fmt.Sprintf("--shard=%d", i%16)},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "metrics", ContainerPort: 9090}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
			},
			LivenessProbe: probe, ReadinessProbe: probe,
		}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("service-%d-%06d", i%200, i), Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{
			NodeName:   fmt.Sprintf("node-%05d", i%benchNodes),
			Containers: []corev1.Container{container("app"), container("sidecar")},
		},
	}
}

// TestRealisticPodSize keeps realisticPod at about 5 KB of JSON, the size
// the benchmark claims.
func TestRealisticPodSize(t *testing.T) {
	data, err := json.Marshal(realisticPod(12345))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(data); n < 4500 || n > 6000 {
		t.Errorf("a realistic pod is %d bytes of JSON, want about 5 KB", n)
	}
}
