// Package testbed runs a real etcd, kube-apiserver and (optionally)
// kube-scheduler on loopback for kubectl-gang's tests.
//
// It is our own small harness, not envtest: the binaries come from
// hack/build-k8s.sh (or $KUBECTL_GANG_K8S_BIN), the apiserver serves the
// native gang API (scheduling.k8s.io/v1beta1 and v1alpha3 PodGroups and
// Workloads, GenericWorkload on), authenticates static token users and
// authorizes with RBAC, and our own Volcano and coscheduling CRDs (see the
// crds directory) are installed before Start returns. Component logs go to
// files under Env.LogDir, never to the test output.
//
// Typical use from a test package:
//
//	var env *testbed.Env
//
//	func TestMain(m *testing.M) {
//		os.Exit(testbed.RunTests(m, testbed.Options{}, func(e *testbed.Env) { env = e }))
//	}
package testbed

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

// Options configures Start. The zero value starts etcd and kube-apiserver only.
type Options struct {
	// Scheduler starts the real kube-scheduler too, with --leader-elect=false,
	// --secure-port=0, the GenericWorkload feature gate and its own kubeconfig
	// for the admin user. Start returns once the scheduler has made its first
	// scheduling attempt (on a probe pod in kube-system, deleted again).
	Scheduler bool
	// SchedulerConfig is an optional KubeSchedulerConfiguration file. A copy is
	// passed to the scheduler with clientConnection.kubeconfig pointing at the
	// testbed (and qps/burst raised unless the file sets them): kube-scheduler
	// ignores --kubeconfig when --config is given.
	SchedulerConfig string
	// SchedulerArgs are extra kube-scheduler flags, appended after ours
	// (for example --vmodule=schedule_one=10 or --v=4).
	SchedulerArgs []string
	// SchedulerBinary runs another kube-scheduler build in place of the one
	// in BinDir: scheduler-plugins' (see ResolveSchedulerPlugins), built
	// against an older Kubernetes, so it gets no --feature-gates flag.
	SchedulerBinary string
	// APIServerArgs are extra kube-apiserver flags, appended after ours.
	APIServerArgs []string
	// Users adds static token users (name -> groups) next to the pre-made
	// "admin" (system:masters), "alice" and "bob" (no groups).
	Users map[string][]string
	// LogDir is where component logs go (etcd.log, kube-apiserver.log,
	// kube-scheduler.log). Default: a new temporary directory, kept by Stop
	// so failing tests can point at it; RemoveLogs deletes it.
	LogDir string
}

// Env is a running test bed.
type Env struct {
	// Config is for the admin user (system:masters via a static token); it
	// trusts the apiserver's self-signed serving certificate.
	Config *rest.Config
	// Kubeconfig is a kubeconfig file for the admin user, for CLI tests.
	Kubeconfig string
	// BinDir holds the etcd, kube-apiserver and kube-scheduler binaries used.
	BinDir string
	// LogDir holds the component logs.
	LogDir string
	// EtcdLog, APIServerLog and SchedulerLog are the component log files;
	// SchedulerLog is empty unless Options.Scheduler was set.
	EtcdLog, APIServerLog, SchedulerLog string
	// Host is the apiserver URL (https://127.0.0.1:port).
	Host string
	// RuntimeConfig is the --runtime-config the apiserver runs with.
	RuntimeConfig string
	// StartDuration is how long Start took (including a retry, if any), and
	// StartPhases when each phase of the (last) attempt ended, for the curious.
	StartDuration time.Duration
	StartPhases   []string

	workDir   string
	ownLogDir bool
	caData    []byte
	tokens    map[string]string // user -> token
	clientset kubernetes.Interface
	procs     []*process // in start order

	mu          sync.Mutex
	kubeconfigs map[string]string // user -> path
	stopped     bool
}

const (
	// AdminUser is in system:masters.
	AdminUser = "admin"
	// SchedulerProbePod is the pod (in kube-system) Start uses to see that
	// kube-scheduler is up; it is deleted before Start returns, but it shows
	// up in the scheduler's log.
	SchedulerProbePod = "testbed-scheduler-probe"

	runtimeConfig    = "scheduling.k8s.io/v1beta1=true,scheduling.k8s.io/v1alpha3=true"
	serviceCIDR      = "10.0.0.0/24"
	featureGates     = "GenericWorkload=true"
	disabledAdmision = "TaintNodesByCondition,ServiceAccount"
	clientQPS        = 500
	clientBurst      = 1000
)

// Start builds or finds the binaries and starts etcd, kube-apiserver and,
// if asked, kube-scheduler, on free loopback ports. It returns when the
// apiserver is ready, the default namespace exists, the test CRDs are
// established and served, and the scheduler (if any) is scheduling. A failed
// start is retried once (free ports can race with other processes). ctx bounds
// the start only, not the lifetime of the components: call Stop.
func Start(ctx context.Context, opts Options) (*Env, error) {
	began := time.Now()
	binDir, err := ResolveBinDir(ctx)
	if err != nil {
		return nil, err
	}
	logDir, ownLogDir := opts.LogDir, false
	if logDir == "" {
		if logDir, err = os.MkdirTemp("", "kubectl-gang-testbed-logs-"); err != nil {
			return nil, err
		}
		ownLogDir = true
	} else if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}

	var errs []error
	for attempt := 1; attempt <= 2; attempt++ {
		if attempt > 1 {
			keepFailedLogs(logDir, attempt-1)
		}
		env, err := startOnce(ctx, opts, binDir, logDir)
		if err == nil {
			env.ownLogDir = ownLogDir
			env.StartDuration = time.Since(began)
			return env, nil
		}
		errs = append(errs, fmt.Errorf("attempt %d: %w", attempt, err))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("testbed: start failed (component logs in %s): %w", logDir, errors.Join(errs...))
}

const workDirPrefix = "kubectl-gang-testbed-"

// cleanStaleWorkDirs removes the working directories of test binaries that
// died without Stop (their components died with them).
func cleanStaleWorkDirs() {
	pidFiles, _ := filepath.Glob(filepath.Join(os.TempDir(), workDirPrefix+"*", "owner.pid"))
	for _, f := range pidFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && processGone(pid) {
			_ = os.RemoveAll(filepath.Dir(f))
		}
	}
}

// keepFailedLogs renames the logs of a failed attempt so the next attempt
// starts with fresh files.
func keepFailedLogs(logDir string, attempt int) {
	for _, name := range []string{"etcd", "kube-apiserver", "kube-scheduler"} {
		old := filepath.Join(logDir, name+".log")
		if _, err := os.Stat(old); err == nil {
			_ = os.Rename(old, filepath.Join(logDir, fmt.Sprintf("%s.attempt%d.log", name, attempt)))
		}
	}
}

func startOnce(ctx context.Context, opts Options, binDir, logDir string) (_ *Env, err error) {
	cleanStaleWorkDirs()
	workDir, err := os.MkdirTemp("", workDirPrefix)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(workDir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	e := &Env{
		BinDir:        binDir,
		LogDir:        logDir,
		EtcdLog:       filepath.Join(logDir, "etcd.log"),
		APIServerLog:  filepath.Join(logDir, "kube-apiserver.log"),
		RuntimeConfig: runtimeConfig,
		workDir:       workDir,
		kubeconfigs:   map[string]string{},
	}
	defer func() {
		if err != nil {
			_ = e.Stop()
		}
	}()

	began := time.Now()
	mark := func(what string) {
		e.StartPhases = append(e.StartPhases, fmt.Sprintf("%s %v", what, time.Since(began).Round(time.Millisecond)))
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdClient, etcdPeer, apiPort := ports[0], ports[1], ports[2]

	// etcd.
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdClient)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(etcdPeer)
	etcd, err := startProcess("etcd", filepath.Join(binDir, "etcd"), e.EtcdLog,
		"--name=testbed",
		"--data-dir="+filepath.Join(workDir, "etcd-data"),
		"--listen-client-urls="+etcdURL,
		"--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=testbed="+peerURL,
		"--initial-cluster-state=new",
		"--unsafe-no-fsync",
	)
	if err != nil {
		return nil, err
	}
	e.procs = append(e.procs, etcd)
	if err := waitHTTP(ctx, etcd, 30*time.Second, http.DefaultClient, etcdURL+"/health", "", nil); err != nil {
		return nil, err
	}
	mark("etcd ready")

	// Credentials: a static token file and one service-account RSA key.
	if err := e.writeTokens(opts.Users); err != nil {
		return nil, err
	}
	saKey := filepath.Join(workDir, "sa.key")
	if err := writeRSAKey(saKey); err != nil {
		return nil, err
	}

	// kube-apiserver.
	certDir := filepath.Join(workDir, "certs")
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(apiPort),
		"--cert-dir=" + certDir,
		"--service-cluster-ip-range=" + serviceCIDR,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + saKey,
		"--service-account-signing-key-file=" + saKey,
		"--endpoint-reconciler-type=none",
		"--token-auth-file=" + filepath.Join(workDir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--disable-admission-plugins=" + disabledAdmision,
		"--feature-gates=" + featureGates,
		"--runtime-config=" + runtimeConfig,
		"--profiling=false",
	}
	args = append(args, opts.APIServerArgs...)
	apiserver, err := startProcess("kube-apiserver", filepath.Join(binDir, "kube-apiserver"), e.APIServerLog, args...)
	if err != nil {
		return nil, err
	}
	e.procs = append(e.procs, apiserver)
	e.Host = "https://127.0.0.1:" + strconv.Itoa(apiPort)
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	// Create the CRDs as soon as the apiserver answers, while its post-start
	// hooks finish, so they are established sooner.
	crdObjs, err := CRDObjects()
	if err != nil {
		return nil, err
	}
	early := &rest.Config{
		Host: e.Host, BearerToken: e.tokens[AdminUser],
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		WarningHandler:  rest.NoWarnings{},
		Timeout:         5 * time.Second,
	}
	crdsCreated := false
	whileWaiting := func() {
		if !crdsCreated && createCRDs(ctx, early, crdObjs) == nil {
			crdsCreated = true
			mark("CRDs created")
		}
	}
	if err := waitHTTP(ctx, apiserver, 120*time.Second, insecure, e.Host+"/readyz", e.tokens[AdminUser], whileWaiting); err != nil {
		return nil, err
	}
	insecure.CloseIdleConnections()

	// The serving certificate the apiserver generated is self-signed; the file
	// holds the certificate followed by its CA, which is what clients trust.
	if e.caData, err = os.ReadFile(filepath.Join(certDir, "apiserver.crt")); err != nil {
		return nil, err
	}
	if e.Config, e.Kubeconfig, err = e.UserConfig(AdminUser); err != nil {
		return nil, err
	}
	if e.clientset, err = kubernetes.NewForConfig(e.Config); err != nil {
		return nil, err
	}
	mark("apiserver ready")
	established, err := installCRDs(ctx, e.Config)
	if err != nil {
		return nil, err
	}
	// kube-apiserver delays every create of a custom resource by 2s while its
	// CRD became Established less than 2s ago (by a condition time truncated to
	// the second); wait that out here, overlapped with the rest of the start,
	// so tests do not pay it on their first create.
	crdsSettled := established.Add(2 * time.Second)
	mark("CRDs established")
	if err := e.waitForNamespace(ctx, metav1.NamespaceDefault); err != nil {
		return nil, err
	}
	mark("default namespace")
	if opts.Scheduler {
		if err := e.startScheduler(ctx, opts); err != nil {
			return nil, err
		}
		mark("scheduler probed")
	}
	if d := time.Until(crdsSettled); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	mark("CRD create delay over")
	return e, nil
}

// Stop ends the components (SIGTERM to their process groups, SIGKILL after
// 5s; about a second in practice) and removes the
// working directory (etcd data, certificates, kubeconfigs). The logs are kept;
// see RemoveLogs. Stop is idempotent.
func (e *Env) Stop() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return nil
	}
	e.stopped = true
	for i := len(e.procs) - 1; i >= 0; i-- {
		e.procs[i].stop(5 * time.Second)
	}
	if e.workDir == "" {
		return nil
	}
	return os.RemoveAll(e.workDir)
}

// RemoveLogs deletes LogDir if Start created it (a caller's Options.LogDir
// is left alone). Call it after Stop when the tests passed.
func (e *Env) RemoveLogs() error {
	if !e.ownLogDir {
		return nil
	}
	return os.RemoveAll(e.LogDir)
}

// Clientset returns a clientset for the admin user.
func (e *Env) Clientset() kubernetes.Interface { return e.clientset }

// Users returns the names of the static token users.
func (e *Env) Users() []string {
	names := make([]string, 0, len(e.tokens))
	for u := range e.tokens {
		names = append(names, u)
	}
	sort.Strings(names)
	return names
}

// UserConfig returns a rest.Config and a kubeconfig file for a static token
// user: "admin" (system:masters), "alice" and "bob" (no groups, so only what
// RBAC grants them, which is nothing beyond discovery until a test binds a
// role), or one added with Options.Users.
func (e *Env) UserConfig(user string) (*rest.Config, string, error) {
	token, ok := e.tokens[user]
	if !ok {
		return nil, "", fmt.Errorf("testbed: no token user %q (have %s)", user, strings.Join(e.Users(), ", "))
	}
	cfg := &rest.Config{
		Host:            e.Host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: slices.Clone(e.caData)},
		QPS:             clientQPS,
		Burst:           clientBurst,
		UserAgent:       "kubectl-gang-testbed/" + user,
		// Keep server warnings (such as "scheduling.k8s.io/v1beta1 PodGroup is
		// deprecated") out of the test output; set a handler to see them.
		WarningHandler: rest.NoWarnings{},
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if path, ok := e.kubeconfigs[user]; ok {
		return cfg, path, nil
	}
	path := filepath.Join(e.workDir, "kubeconfig-"+user)
	if err := writeKubeconfig(path, e.Host, e.caData, user, token); err != nil {
		return nil, "", err
	}
	e.kubeconfigs[user] = path
	return cfg, path, nil
}

// CreateNode creates node and then writes its status with UpdateStatus (a
// create drops the status). Defaults: allocatable copies capacity when empty
// (and the other way round), "pods" is 110 in both when neither sets it,
// and a Ready=True condition is added when there are no conditions. On success
// *node is replaced by the stored object.
func (e *Env) CreateNode(ctx context.Context, node *corev1.Node) error {
	status := *node.Status.DeepCopy()
	if len(status.Allocatable) == 0 {
		status.Allocatable = status.Capacity.DeepCopy()
	}
	if len(status.Capacity) == 0 {
		status.Capacity = status.Allocatable.DeepCopy()
	}
	if status.Capacity == nil {
		status.Capacity = corev1.ResourceList{}
	}
	if status.Allocatable == nil {
		status.Allocatable = corev1.ResourceList{}
	}
	_, hasCap := status.Capacity[corev1.ResourcePods]
	_, hasAlloc := status.Allocatable[corev1.ResourcePods]
	if !hasCap && !hasAlloc {
		status.Capacity[corev1.ResourcePods] = resource.MustParse("110")
		status.Allocatable[corev1.ResourcePods] = resource.MustParse("110")
	}
	if len(status.Conditions) == 0 {
		now := metav1.Now()
		status.Conditions = []corev1.NodeCondition{{
			Type:               corev1.NodeReady,
			Status:             corev1.ConditionTrue,
			Reason:             "KubeletReady",
			Message:            "testbed node",
			LastHeartbeatTime:  now,
			LastTransitionTime: now,
		}}
	}

	nodes := e.clientset.CoreV1().Nodes()
	created, err := nodes.Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	created.Status = status
	updated, err := nodes.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update status of node %s: %w", node.Name, err)
	}
	*node = *updated
	return nil
}

func (e *Env) writeTokens(extra map[string][]string) error {
	users := map[string][]string{AdminUser: {"system:masters"}, "alice": nil, "bob": nil}
	for u, g := range extra {
		if u == "" || strings.ContainsAny(u, ",\"\n") {
			return fmt.Errorf("bad user name %q", u)
		}
		users[u] = g
	}
	e.tokens = map[string]string{}
	var b strings.Builder
	for _, u := range sortedKeys(users) {
		buf := make([]byte, 16)
		if _, err := rand.Read(buf); err != nil {
			return err
		}
		token := hex.EncodeToString(buf)
		e.tokens[u] = token
		fmt.Fprintf(&b, "%s,%s,%s", token, u, u)
		if g := users[u]; len(g) > 0 {
			fmt.Fprintf(&b, ",%q", strings.Join(g, ","))
		}
		b.WriteString("\n")
	}
	return os.WriteFile(filepath.Join(e.workDir, "tokens.csv"), []byte(b.String()), 0o600)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func writeRSAKey(path string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	der := x509.MarshalPKCS1PrivateKey(key)
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der}), 0o600)
}

func writeKubeconfig(path, host string, caData []byte, user, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["testbed"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: caData}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["testbed-"+user] = &clientcmdapi.Context{Cluster: "testbed", AuthInfo: user, Namespace: metav1.NamespaceDefault}
	cfg.CurrentContext = "testbed-" + user
	return clientcmd.WriteToFile(*cfg, path)
}

// freePorts returns n distinct free TCP ports on 127.0.0.1 (listening on :0
// and closing; a component that loses the race fails and Start retries).
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitHTTP polls url until it answers 200, the process exits, or the timeout.
// It calls whileWaiting (if not nil) after each other HTTP answer.
func waitHTTP(ctx context.Context, p *process, timeout time.Duration, client *http.Client, url, token string, whileWaiting func()) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			body := make([]byte, 4096)
			n, _ := resp.Body.Read(body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body[:n])))
			if whileWaiting != nil {
				whileWaiting()
			}
		} else {
			last = err.Error()
		}
		if p.exited() {
			return p.exitError()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready at %s after %v (last: %s)", p.name, url, timeout, last)
		case <-p.done:
			return p.exitError()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (e *Env) waitForNamespace(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		_, err := e.clientset.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsNotFound(err) && ctx.Err() == nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("namespace %s not created: %w", name, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// startScheduler starts kube-scheduler and waits until it has tried to
// schedule a probe pod, which shows it is connected and its caches synced.
// StartScheduler starts the real kube-scheduler on a running Env that was
// started without one (Options.Scheduler false), as Start would have, with
// opts' SchedulerConfig and SchedulerArgs. It returns once the scheduler has
// made its first scheduling attempt.
func (e *Env) StartScheduler(ctx context.Context, opts Options) error {
	return e.startScheduler(ctx, opts)
}

func (e *Env) startScheduler(ctx context.Context, opts Options) error {
	e.SchedulerLog = filepath.Join(e.LogDir, "kube-scheduler.log")
	kubeconfig := filepath.Join(e.workDir, "kubeconfig-kube-scheduler")
	if err := writeKubeconfig(kubeconfig, e.Host, e.caData, AdminUser, e.tokens[AdminUser]); err != nil {
		return err
	}
	args := []string{
		"--leader-elect=false",
		"--secure-port=0",
	}
	binary := filepath.Join(e.BinDir, "kube-scheduler")
	if opts.SchedulerBinary != "" {
		binary = opts.SchedulerBinary
	} else {
		args = append(args, "--feature-gates="+featureGates)
	}
	if opts.SchedulerConfig != "" {
		path, err := e.schedulerConfigCopy(opts.SchedulerConfig, kubeconfig)
		if err != nil {
			return err
		}
		args = append(args, "--config="+path)
	} else {
		args = append(args, "--kubeconfig="+kubeconfig,
			"--kube-api-qps="+strconv.Itoa(clientQPS), "--kube-api-burst="+strconv.Itoa(clientBurst))
	}
	args = append(args, opts.SchedulerArgs...)
	p, err := startProcess("kube-scheduler", binary, e.SchedulerLog, args...)
	if err != nil {
		return err
	}
	e.procs = append(e.procs, p)
	return e.probeScheduler(ctx, p)
}

// StopScheduler stops the kube-scheduler StartScheduler (or Start) started,
// so that a test can create pods no scheduler sees, then start one that
// finds them all at once. It is a no-op without a scheduler.
func (e *Env) StopScheduler() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, p := range e.procs {
		if p.name == "kube-scheduler" {
			p.stop(5 * time.Second)
			e.procs = append(e.procs[:i], e.procs[i+1:]...)
			return
		}
	}
}

// schedulerConfigCopy writes a copy of the KubeSchedulerConfiguration at src
// that talks to this test bed.
func (e *Env) schedulerConfigCopy(src, kubeconfig string) (string, error) {
	data, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return "", fmt.Errorf("scheduler config %s: %w", src, err)
	}
	if cfg == nil {
		return "", fmt.Errorf("scheduler config %s is empty", src)
	}
	cc, _ := cfg["clientConnection"].(map[string]any)
	if cc == nil {
		cc = map[string]any{}
	}
	cc["kubeconfig"] = kubeconfig
	if _, ok := cc["qps"]; !ok {
		cc["qps"] = clientQPS
	}
	if _, ok := cc["burst"]; !ok {
		cc["burst"] = clientBurst
	}
	cfg["clientConnection"] = cc
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	path := filepath.Join(e.workDir, "kube-scheduler-config.yaml")
	return path, os.WriteFile(path, out, 0o600)
}

func (e *Env) probeScheduler(ctx context.Context, p *process) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	pods := e.clientset.CoreV1().Pods(metav1.NamespaceSystem)
	zero := int64(0)
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: SchedulerProbePod, Labels: map[string]string{"app.kubernetes.io/name": "testbed-probe"}},
		Spec: corev1.PodSpec{
			// Fits nowhere, so the scheduler answers with PodScheduled=False
			// whether or not a test has created nodes yet.
			NodeSelector:                  map[string]string{"testbed.kubectl-gang.io/nowhere": "true"},
			TerminationGracePeriodSeconds: &zero,
			Containers:                    []corev1.Container{{Name: "probe", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if _, err := pods.Create(ctx, probe, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create scheduler probe pod: %w", err)
	}
	defer func() {
		_ = pods.Delete(context.WithoutCancel(ctx), SchedulerProbePod, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	}()
	for {
		got, err := pods.Get(ctx, SchedulerProbePod, metav1.GetOptions{})
		if err == nil {
			for _, c := range got.Status.Conditions {
				if c.Type == corev1.PodScheduled {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-scheduler did not try to schedule the probe pod: %w", ctx.Err())
		case <-p.done:
			return p.exitError()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// RunTests is a TestMain body: it starts an Env, hands it to use, runs the
// tests, stops the Env, and keeps the logs (printing their path) only when
// something failed. It returns the exit code for os.Exit.
func RunTests(m interface{ Run() int }, opts Options, use func(*Env)) int {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // includes a first build
	env, err := Start(ctx, opts)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	use(env)
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "testbed: stop:", err)
	}
	if code != 0 {
		fmt.Fprintln(os.Stderr, "testbed: component logs in", env.LogDir)
	} else {
		_ = env.RemoveLogs()
	}
	return code
}

var errNoBinDir = errors.New("testbed: cannot find the repository root (a directory with go.mod and hack/build-k8s.sh) above the working directory; set KUBECTL_GANG_K8S_BIN")
