package testbed

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
)

// KueueEnv names the environment variable that, when set, points at a
// directory holding Kueue's controller manager (kueue) and its release's
// CRDs (kueue-crds.yaml) and webhook manifests (kueue-webhooks.yaml);
// otherwise ResolveKueue runs hack/build-kueue.sh.
const KueueEnv = "KUBECTL_GANG_KUEUE_BIN"

// kueueMetricsCertDir is where Kueue v0.17.0's controller manager reads its
// metrics serving certificate whenever its internal certificate management
// is off (cmd/kueue/main.go, a fixed path its Deployment mounts a Secret
// at); it exits when the files are missing, even with metrics off.
const kueueMetricsCertDir = "/etc/kueue/metrics/certs"

// ResolveKueue returns the directory of Kueue's controller manager:
// $KUBECTL_GANG_KUEUE_BIN if set, else the last line hack/build-kueue.sh
// prints (it builds it once into the cache).
func ResolveKueue(ctx context.Context) (string, error) {
	dir, err := fromEnvOrScript(ctx, KueueEnv, "build-kueue.sh")
	if err != nil {
		return "", err
	}
	for _, f := range []string{"kueue", "kueue-crds.yaml", "kueue-webhooks.yaml"} {
		if !fileExists(filepath.Join(dir, f)) {
			return "", fmt.Errorf("testbed: %s lacks %s", dir, f)
		}
	}
	return dir, nil
}

// KueueFrameworks are the job integrations the test bed's Kueue manages,
// each with the path fragment of its webhooks.
var KueueFrameworks = map[string]string{"batch/job": "-batch-v1-job", "pod": "--v1-pod"}

// StartKueue starts, on a running Env, Kueue's controller manager of dir
// (ResolveKueue) with its CRDs installed and the webhooks of its own kinds
// and of KueueFrameworks served on loopback and registered, as a release
// installs it: a Job that names a LocalQueue is suspended by its webhook and
// admitted by its scheduler. Nothing runs the Jobs' pods unless the Job
// controller does too (StartJobSetControllers starts it). It returns once
// Kueue's webhook defaults a ClusterQueue through the apiserver. Kueue's
// webhooks call it for every Job of the cluster: give the Kueue tests an
// Env of their own.
func (e *Env) StartKueue(ctx context.Context, dir string) error {
	if err := e.applyManifests(ctx, filepath.Join(dir, "kueue-crds.yaml"), nil); err != nil {
		return err
	}
	// Its REST mapper is built at start: the CRDs must be discoverable
	// first (applyManifests waits for each).
	disc, err := discovery.NewDiscoveryClientForConfig(e.Config)
	if err != nil {
		return err
	}
	if _, err := disc.ServerResourcesForGroupVersion("kueue.x-k8s.io/v1beta2"); err != nil {
		return fmt.Errorf("kueue: its API is not served after installing the CRDs: %w", err)
	}
	if _, err := writeServingCert(kueueMetricsCertDir); err != nil {
		return fmt.Errorf("kueue: its controller manager reads a metrics certificate at the fixed path %s, which the test bed could not write: %w", kueueMetricsCertDir, err)
	}
	ws, err := e.newWebhookServer("kueue")
	if err != nil {
		return err
	}
	kubeconfig, certDir, caPEM, webhookPort, healthPort := ws.kubeconfig, ws.certDir, ws.caPEM, ws.webhookPort, ws.healthPort
	config := fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: default
manageJobsWithoutQueueName: false
internalCertManagement: {enable: false}
leaderElection: {leaderElect: false}
clientConnection: {qps: %d, burst: %d}
metrics: {bindAddress: "0"}
health: {healthProbeBindAddress: "127.0.0.1:%d"}
webhook: {host: 127.0.0.1, port: %d, certDir: %s}
integrations: {frameworks: [%s]}
`, clientQPS, clientBurst, healthPort, webhookPort, certDir, strings.Join(slices.Sorted(maps.Keys(KueueFrameworks)), ", "))
	configPath := filepath.Join(e.workDir, "kueue-config.yaml")
	if err := os.WriteFile(configPath, []byte(config), 0o644); err != nil {
		return err
	}
	// VisibilityOnDemand (on by default) serves Kueue's visibility API from
	// a certificate at another fixed path (/visibility): admission does not
	// need it.
	kq, err := startProcess("kueue", filepath.Join(dir, "kueue"), filepath.Join(e.LogDir, "kueue.log"),
		"--kubeconfig="+kubeconfig, "--config="+configPath, "--feature-gates=VisibilityOnDemand=false")
	if err != nil {
		return err
	}
	e.procs = append(e.procs, kq)
	if err := waitHTTP(ctx, kq, 2*time.Minute, http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort), "", nil); err != nil {
		return fmt.Errorf("kueue: %w", err)
	}
	base := "https://127.0.0.1:" + strconv.Itoa(webhookPort)
	return e.applyManifests(ctx, filepath.Join(dir, "kueue-webhooks.yaml"), func(obj *unstructured.Unstructured) error {
		if err := keepWebhooks(obj, func(path string) bool {
			if strings.Contains(path, "-kueue-x-k8s-io-") {
				return true
			}
			for _, fragment := range KueueFrameworks {
				if strings.HasSuffix(path, fragment) {
					return true
				}
			}
			return false
		}); err != nil {
			return err
		}
		return pointWebhooks(obj, base, caPEM)
	})
}

// keepWebhooks drops the webhooks of a webhook configuration whose path
// keep refuses (those of integrations the controller does not serve: the
// apiserver would fail every call to them).
func keepWebhooks(obj *unstructured.Unstructured, keep func(path string) bool) error {
	hooks, _, err := unstructured.NestedSlice(obj.Object, "webhooks")
	if err != nil {
		return err
	}
	var kept []any
	for _, h := range hooks {
		hook, _ := h.(map[string]any)
		path, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "path")
		if keep(path) {
			kept = append(kept, hook)
		}
	}
	return unstructured.SetNestedSlice(obj.Object, kept, "webhooks")
}
