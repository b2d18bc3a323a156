package testbed

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	sigsyaml "sigs.k8s.io/yaml"
)

// ControllersEnv names the environment variable that, when set, points at a
// directory holding kube-controller-manager, the JobSet controller
// (jobset-controller) and the JobSet release's CRD (jobset-crd.yaml) and
// webhook manifests (jobset-webhooks.yaml); otherwise ResolveControllers
// runs hack/build-controllers.sh.
const ControllersEnv = "KUBECTL_GANG_CONTROLLERS_BIN"

// ResolveControllers returns the directory of the workload controllers:
// $KUBECTL_GANG_CONTROLLERS_BIN if set, else the last line that
// hack/build-controllers.sh prints (it builds them once into the cache).
func ResolveControllers(ctx context.Context) (string, error) {
	dir, err := fromEnvOrScript(ctx, ControllersEnv, "build-controllers.sh")
	if err != nil {
		return "", err
	}
	for _, f := range []string{"kube-controller-manager", "jobset-controller", "jobset-crd.yaml", "jobset-webhooks.yaml"} {
		if !fileExists(filepath.Join(dir, f)) {
			return "", fmt.Errorf("testbed: %s lacks %s", dir, f)
		}
	}
	return dir, nil
}

// StartJobSetControllers starts, on a running Env, what runs a JobSet:
// kube-controller-manager with its Job controller only, and the JobSet
// controller of dir (ResolveControllers) with its webhooks served on
// loopback (a serving certificate for 127.0.0.1 signed by a CA of its
// own) and registered with the apiserver, its CRD installed. It returns once
// the JobSet webhook answers through the apiserver. The webhooks admit
// every pod of the cluster (failurePolicy Fail): give the JobSet tests an
// Env of their own.
func (e *Env) StartJobSetControllers(ctx context.Context, dir string) error {
	ws, err := e.newWebhookServer("controllers")
	if err != nil {
		return err
	}
	kubeconfig := ws.kubeconfig
	kcm, err := startProcess("kube-controller-manager", filepath.Join(dir, "kube-controller-manager"),
		filepath.Join(e.LogDir, "kube-controller-manager.log"),
		"--kubeconfig="+kubeconfig, "--controllers=job", "--use-service-account-credentials=false",
		"--secure-port=0", "--leader-elect=false",
		"--kube-api-qps="+strconv.Itoa(clientQPS), "--kube-api-burst="+strconv.Itoa(clientBurst))
	if err != nil {
		return err
	}
	e.procs = append(e.procs, kcm)

	if err := e.applyManifests(ctx, filepath.Join(dir, "jobset-crd.yaml"), nil); err != nil {
		return err
	}
	certDir, caPEM, webhookPort, healthPort := ws.certDir, ws.caPEM, ws.webhookPort, ws.healthPort
	config := fmt.Sprintf(`apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
internalCertManagement: {enable: false}
leaderElection: {leaderElect: false}
clientConnection: {qps: %d, burst: %d}
webhook: {host: 127.0.0.1, port: %d, certDir: %s}
`, clientQPS, clientBurst, webhookPort, certDir)
	configPath := filepath.Join(e.workDir, "jobset-config.yaml")
	if err := os.WriteFile(configPath, []byte(config), 0o644); err != nil {
		return err
	}
	js, err := startProcess("jobset-controller", filepath.Join(dir, "jobset-controller"),
		filepath.Join(e.LogDir, "jobset-controller.log"),
		"--kubeconfig="+kubeconfig, "--config="+configPath, "--metrics-bind-address=0",
		"--health-probe-bind-address=127.0.0.1:"+strconv.Itoa(healthPort), "--leader-elect=false")
	if err != nil {
		return err
	}
	e.procs = append(e.procs, js)
	if err := waitHTTP(ctx, js, time.Minute, http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort), "", nil); err != nil {
		return fmt.Errorf("jobset-controller: %w", err)
	}
	base := "https://127.0.0.1:" + strconv.Itoa(webhookPort)
	if err := e.applyManifests(ctx, filepath.Join(dir, "jobset-webhooks.yaml"), func(obj *unstructured.Unstructured) error {
		return pointWebhooks(obj, base, caPEM)
	}); err != nil {
		return err
	}
	return e.waitJobSetWebhook(ctx, js)
}

// webhookServer is what a controller with webhooks on loopback needs: a
// kubeconfig of the admin user, a serving certificate for 127.0.0.1 (its
// CA in caPEM, for the webhook configurations), and two free ports.
type webhookServer struct {
	kubeconfig, certDir     string
	caPEM                   []byte
	webhookPort, healthPort int
}

// newWebhookServer writes the kubeconfig and certificate of controller
// name in the test bed's work directory and picks its ports.
func (e *Env) newWebhookServer(name string) (*webhookServer, error) {
	ws := &webhookServer{kubeconfig: filepath.Join(e.workDir, "kubeconfig-"+name), certDir: filepath.Join(e.workDir, name+"-certs")}
	if err := writeKubeconfig(ws.kubeconfig, e.Host, e.caData, AdminUser, e.tokens[AdminUser]); err != nil {
		return nil, err
	}
	var err error
	if ws.caPEM, err = writeServingCert(ws.certDir); err != nil {
		return nil, err
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	ws.webhookPort, ws.healthPort = ports[0], ports[1]
	return ws, nil
}

// applyManifests creates every object of a multi-document YAML file,
// changed by edit first when given; CRDs are waited for until served.
func (e *Env) applyManifests(ctx context.Context, path string, edit func(*unstructured.Unstructured) error) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		return err
	}
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		if edit != nil {
			if err := edit(obj); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		gvk := obj.GroupVersionKind()
		var gvr schema.GroupVersionResource
		switch gvk.Kind {
		case "CustomResourceDefinition":
			gvr = crdGVR
		case "MutatingWebhookConfiguration":
			gvr = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations")
		case "ValidatingWebhookConfiguration":
			gvr = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations")
		default:
			return fmt.Errorf("%s: unexpected kind %s", path, gvk.Kind)
		}
		if _, err := dyn.Resource(gvr).Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: create %s %s: %w", path, gvk.Kind, obj.GetName(), err)
		}
		if gvr == crdGVR {
			disc, err := discovery.NewDiscoveryClientForConfig(e.Config)
			if err != nil {
				return err
			}
			wait, cancel := context.WithTimeout(ctx, time.Minute)
			_, err = waitCRD(wait, dyn.Resource(crdGVR), disc, obj)
			cancel()
			if err != nil {
				return err
			}
		}
	}
}

// pointWebhooks points every webhook of a webhook configuration at base
// (the controller's server on loopback) in place of its Service.
func pointWebhooks(obj *unstructured.Unstructured, base string, caPEM []byte) error {
	hooks, _, err := unstructured.NestedSlice(obj.Object, "webhooks")
	if err != nil {
		return err
	}
	for i, h := range hooks {
		hook, _ := h.(map[string]any)
		path, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "path")
		hook["clientConfig"] = map[string]any{"url": base + path, "caBundle": base64.StdEncoding.EncodeToString(caPEM)}
		hooks[i] = hook
	}
	return unstructured.SetNestedSlice(obj.Object, hooks, "webhooks")
}

// waitJobSetWebhook waits until the apiserver calls the JobSet controller's
// webhook: a server-side dry run of a JobSet comes back defaulted by it.
func (e *Env) waitJobSetWebhook(ctx context.Context, p *process) error {
	dyn, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
	probe := &unstructured.Unstructured{}
	if err := sigsyaml.Unmarshal([]byte(`apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: testbed-probe, namespace: default}
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        template:
          spec:
            containers: [{name: c, image: c}]
`), &probe.Object); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := dyn.Resource(gvr).Namespace("default").Create(ctx, probe.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil {
			if _, ok, _ := unstructured.NestedMap(got.Object, "spec", "successPolicy"); ok {
				return nil
			}
		}
		if p.exited() {
			return p.exitError()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("jobset-controller: its webhook does not default JobSets after a minute (last error: %v)", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// writeServingCert makes a CA and a serving certificate for 127.0.0.1
// signed by it, writes the certificate and key as tls.crt and tls.key in
// dir (controller-runtime's names) and returns the CA in PEM.
func writeServingCert(dir string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubectl-gang-testbed-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), nil
}
