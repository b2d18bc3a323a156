package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/kube"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// halfNode is a member that takes half a gpuNode's GPUs.
var halfNode = testutil.Res{"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "4"}

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// gangBinary builds kubectl-gang once for the tests that run it as real,
// separate processes (the bind lock is between processes).
func gangBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kubectl-gang-bin")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "kubectl-gang")
		out, err := exec.Command("go", "build", "-o", binaryPath, "github.com/kubectl-gang/kubectl-gang/cmd/kubectl-gang").CombinedOutput()
		if err != nil {
			binaryErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binaryErr != nil {
		t.Fatal(binaryErr)
	}
	return binaryPath
}

// run is one finished process.
type run struct {
	code           int
	report         bindJSON
	stdout, stderr string
}

// startBind starts `kubectl-gang bind ARGS -o json` as a process of its own.
func startBind(t *testing.T, kubeconfig, namespace string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	c := exec.Command(gangBinary(t), append(append([]string{"bind"}, args...), "-o", "json", "--kubeconfig", kubeconfig, "-n", namespace)...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	return c, &stdout, &stderr
}

func finish(t *testing.T, c *exec.Cmd, stdout, stderr *bytes.Buffer) run {
	t.Helper()
	err := c.Wait()
	r := run{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	if r.stdout != "" {
		if err := json.Unmarshal([]byte(r.stdout), &r.report); err != nil {
			t.Fatalf("exit %d; stdout is not a report: %v\n%s\nstderr: %s", r.code, err, r.stdout, r.stderr)
		}
	}
	return r
}

// halfGang makes a native PodGroup name of members pods of half a node each,
// all needed.
func (f *gangFixture) halfGang(name string, members int) {
	f.t.Helper()
	f.nativePodGroup(name, int32(members))
	for i := range members {
		f.create(f.pod(fmt.Sprintf("%s-%d", name, i), halfNode).PodGroup(name).Obj())
	}
}

// overcommitted lists the fixture's nodes whose bound pods request more
// GPUs, cpu or memory than they have, read from the server.
func (f *gangFixture) overcommitted() []string {
	f.t.Helper()
	pods, err := env.Clientset().CoreV1().Pods(f.ns).List(context.WithoutCancel(f.ctx), metav1.ListOptions{})
	f.must(err)
	nodes, err := env.Clientset().CoreV1().Nodes().List(context.WithoutCancel(f.ctx), metav1.ListOptions{LabelSelector: poolKey + "=" + f.ns})
	f.must(err)
	var out []string
	for _, n := range nodes.Items {
		alloc := framework.NewResource(n.Status.Allocatable)
		var gpu, cpu, mem int64
		for _, pod := range pods.Items {
			if pod.Spec.NodeName != n.Name {
				continue
			}
			r := framework.ComputePodResource(&pod).Resource
			gpu += r.ScalarResources["nvidia.com/gpu"]
			cpu += r.MilliCPU
			mem += r.Memory
		}
		if gpu > alloc.ScalarResources["nvidia.com/gpu"] || cpu > alloc.MilliCPU || mem > alloc.Memory {
			out = append(out, fmt.Sprintf("%s: %d of %d GPUs", n.Name, gpu, alloc.ScalarResources["nvidia.com/gpu"]))
		}
	}
	return out
}

// boundCount is how many of a gang's members are bound.
func (f *gangFixture) boundCount(name string, members int) int {
	f.t.Helper()
	var names []string
	for i := range members {
		names = append(names, fmt.Sprintf("%s-%d", name, i))
	}
	n := 0
	for _, node := range f.boundNodes(names...) {
		if node != "" && node != "<deleted>" {
			n++
		}
	}
	return n
}

// Runs of bind started together, as separate processes, over many rounds
// with random offsets: no node ends overcommitted, every exit code matches
// what the cluster holds, and gangs that fit together are all bound
// (docs/design.md#binding-a-gang).
func TestGangBindConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts many processes")
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for _, tc := range []struct {
		name           string
		nodes, members int
		gangs          int
		// fit is how many of the gangs fit together.
		fit    int
		rounds int
		// scheduler is the members' schedulerName: a name no scheduler
		// serves is how a gang is handed to bind (issue #41).
		scheduler string
	}{
		{"two gangs, room for one", 4, 8, 2, 1, 6, ""},
		{"two gangs, room for both", 8, 8, 2, 2, 4, ""},
		{"three gangs, room for two", 8, 8, 3, 2, 4, ""},
		{"two gangs of their own scheduler, room for one", 4, 8, 2, 1, 6, "gang-test"},
		{"three gangs of their own scheduler, room for two", 8, 8, 3, 2, 4, "gang-test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for round := range tc.rounds {
				f := newGangFixture(t, fmt.Sprintf("bind-conc-%d-%d-%d%s", tc.gangs, tc.fit, round, tc.scheduler))
				f.nodes(tc.nodes)
				var names []string
				for g := range tc.gangs {
					name := fmt.Sprintf("g%d", g)
					names = append(names, name)
					if tc.scheduler == "" {
						f.halfGang(name, tc.members)
					} else {
						f.ownSchedulerGang(name, tc.members, tc.scheduler)
					}
				}
				// Each starts 0-200 ms after the one before.
				offsets := make([]time.Duration, tc.gangs)
				for g := range offsets {
					offsets[g] = time.Duration(rng.IntN(200)) * time.Millisecond
				}
				runs := make([]run, tc.gangs)
				var wg sync.WaitGroup
				for g, name := range names {
					wg.Go(func() {
						time.Sleep(offsets[g])
						c, out, errOut := startBind(t, env.Kubeconfig, f.ns, "podgroup/"+name)
						runs[g] = finish(t, c, out, errOut)
					})
				}
				wg.Wait()
				if over := f.overcommitted(); len(over) > 0 {
					t.Errorf("round %d (offsets %v): nodes overcommitted: %v", round, offsets, over)
				}
				bound := 0
				for g, name := range names {
					r, got := runs[g], f.boundCount(name, tc.members)
					// The gang bound first marked its pods as bind's:
					// no run takes them for another scheduler's.
					if tc.scheduler != "" && strings.Contains(r.stderr, "another scheduler may serve") {
						t.Errorf("round %d: %s warns of another scheduler where only bind binds:\n%s", round, name, r.stderr)
					}
					switch {
					case r.code == cmd.ExitOK && r.report.Verdict == "Bound" && got == tc.members:
						bound++
					case r.code == cmd.ExitNo && r.report.Verdict == "NotBound" && got == 0:
					default:
						t.Errorf("round %d (offsets %v): %s exit %d, verdict %s (%s), %d of %d members bound on the server\nstderr: %s",
							round, offsets, name, r.code, r.report.Verdict, r.report.Message, got, tc.members, r.stderr)
					}
				}
				if bound != tc.fit {
					t.Errorf("round %d (offsets %v): %d gangs bound, want %d (as many as fit together)", round, offsets, bound, tc.fit)
				}
			}
		})
	}
}

// A run that holds the lock and dies is taken over once its Lease expires;
// the run that waited says for whom, then binds on what the cluster holds.
func TestGangBindLockHolderKilled(t *testing.T) {
	f := newGangFixture(t, "bind-lock-killed")
	f.nodes(4)
	f.halfGang("first", 4)
	f.halfGang("second", 4)
	// The first run's dry runs hang, so it holds the lock until killed.
	var taken atomic.Bool
	slow := faultKubeconfig(t, f.ns, func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
		if isBinding(r) && r.URL.Query().Get("dryRun") != "" {
			taken.Store(true)
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
			return
		}
		forward(w)
	})
	first, _, _ := startBind(t, slow, f.ns, "podgroup/first")
	f.must(wait.PollUntilContextTimeout(f.ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return taken.Load(), nil
	}))
	f.must(first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	start := time.Now()
	c, out, errOut := startBind(t, env.Kubeconfig, f.ns, "podgroup/second")
	r := finish(t, c, out, errOut)
	if r.code != cmd.ExitOK || r.report.Verdict != "Bound" {
		t.Fatalf("exit %d, report %+v; want 0, Bound\nstderr: %s", r.code, r.report, r.stderr)
	}
	if !strings.Contains(r.stderr, "Waiting for the Lease "+kube.DefaultLockNamespace+"/"+kube.DefaultLockName+", held by kubectl-gang bind podgroup/first -n "+f.ns) {
		t.Errorf("stderr %q does not say whom it waited for", r.stderr)
	}
	if waited := time.Since(start); waited < 5*time.Second {
		t.Errorf("the second run took %s: it did not wait for the dead holder's Lease to expire", waited)
	}
	if got := f.boundCount("first", 4); got != 0 {
		t.Errorf("%d members of the killed run's gang are bound", got)
	}
}

// A run that cannot get the lock in time gives up, writing nothing.
func TestGangBindLockTimeout(t *testing.T) {
	f := newGangFixture(t, "bind-lock-timeout")
	f.gang3()
	hold := exec.Command(gangBinary(t), "bind", "podgroup/trio", "--kubeconfig", faultKubeconfig(t, f.ns,
		func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
			if isBinding(r) {
				select {
				case <-r.Context().Done():
				case <-time.After(30 * time.Second):
				}
				return
			}
			forward(w)
		}), "-n", f.ns)
	f.must(hold.Start())
	// Interrupted, the holder releases the Lease for the tests after this
	// one, as Ctrl-C does.
	t.Cleanup(func() {
		start := time.Now()
		_ = hold.Process.Signal(os.Interrupt)
		exited := make(chan struct{})
		go func() { _ = hold.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = hold.Process.Kill()
			<-exited
			t.Errorf("the lock holder did not end within 20s of Ctrl-C")
		}
		t.Logf("the holder ended %s after Ctrl-C", time.Since(start).Round(time.Millisecond))
		lease, err := env.Clientset().CoordinationV1().Leases(kube.DefaultLockNamespace).Get(context.Background(), kube.DefaultLockName, metav1.GetOptions{})
		if err == nil && ptr.Deref(lease.Spec.HolderIdentity, "") != "" {
			t.Errorf("after Ctrl-C the Lease is still held by %q", ptr.Deref(lease.Spec.HolderIdentity, ""))
		}
	})
	f.must(wait.PollUntilContextTimeout(f.ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		lease, err := env.Clientset().CoordinationV1().Leases(kube.DefaultLockNamespace).Get(ctx, kube.DefaultLockName, metav1.GetOptions{})
		return err == nil && strings.Contains(ptr.Deref(lease.Spec.HolderIdentity, ""), f.ns), nil
	}))
	c, out, errOut := startBind(t, env.Kubeconfig, f.ns, "podgroup/trio", "--lock-timeout=2s")
	r := finish(t, c, out, errOut)
	waiting, errLine, _ := strings.Cut(r.stderr, "\n")
	if !strings.HasPrefix(waiting, "Waiting for the Lease kube-system/kubectl-gang-bind, held by kubectl-gang bind podgroup/trio -n "+f.ns) {
		t.Errorf("stderr %q does not start with whom it waits for", r.stderr)
	}
	wantErrorLine(t, cmd.ExitNo, r.code, r.stdout, errLine, "waited 2s for the bind lock (Lease kube-system/kubectl-gang-bind) held by kubectl-gang bind podgroup/trio -n "+f.ns)
	wantUnbound(t, f)
}

// grantBindLock lets user take the bind lock.
func grantBindLock(t *testing.T, user string) {
	t.Helper()
	ctx, cs := context.WithoutCancel(t.Context()), env.Clientset()
	name := "gang-bind-lock-" + user
	_, err := cs.RbacV1().Roles(kube.DefaultLockNamespace).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.RbacV1().RoleBindings(kube.DefaultLockNamespace).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.RbacV1().RoleBindings(kube.DefaultLockNamespace).Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = cs.RbacV1().Roles(kube.DefaultLockNamespace).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// A user who may bind but not take the lock is told which rule to add;
// --no-lock proceeds without it, saying so.
func TestGangBindWithoutLockRights(t *testing.T) {
	f := newGangFixture(t, "bind-lock-rbac")
	f.gang3()
	ctx, cs := f.ctx, env.Clientset()
	_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "gang-binder"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"pods/binding"}, Verbs: []string{"create"}},
			{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
			{APIGroups: []string{"scheduling.k8s.io"}, Resources: []string{"podgroups/status"}, Verbs: []string{"update", "patch"}}},
	}, metav1.CreateOptions{})
	f.must(err)
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "gang-binder"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "gang-binder"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}},
	}, metav1.CreateOptions{})
	f.must(err)
	t.Cleanup(func() {
		_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), "gang-binder", metav1.DeleteOptions{})
		_ = cs.RbacV1().ClusterRoles().Delete(context.Background(), "gang-binder", metav1.DeleteOptions{})
	})
	bobCfg, kubeconfig, err := env.UserConfig("bob")
	f.must(err)
	f.must(wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := env.Clientset().CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1})
		_ = bobCfg
		return err == nil, nil
	}))
	code, stdout, stderr := runCLI(t, "", "bind", "podgroup/trio", "--kubeconfig", kubeconfig, "-n", f.ns)
	wantErrorLine(t, cmd.ExitError, code, stdout, stderr, "you may not [create update] the Lease kube-system/kubectl-gang-bind",
		"{apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get, create, update]}")
	wantUnbound(t, f)

	code, stdout, stderr = runCLI(t, "", "bind", "podgroup/trio", "--kubeconfig", kubeconfig, "-n", f.ns, "--no-lock", "-o", "json")
	if code != cmd.ExitOK || !strings.Contains(stderr, "Warning: --no-lock: bind runs without the Lease kube-system/kubectl-gang-bind") {
		t.Fatalf("--no-lock: exit %d, stderr %q, stdout %s", code, stderr, stdout)
	}
}

// A scheduler outside the lock (here a Binding sent by the test, as
// kube-scheduler would) fills a target node during the commit: bind says
// Overcommitted with the node and the pod that arrived, exit 5, never Bound.
func TestGangBindRacesAnotherScheduler(t *testing.T) {
	f := newGangFixture(t, "bind-overcommit")
	f.gang3()
	intruder := f.create(f.pod("intruder", halfNode).Obj())
	var once sync.Once
	kubeconfig := faultKubeconfig(t, f.ns, func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
		if isBinding(r) && r.URL.Query().Get("dryRun") == "" {
			once.Do(func() {
				f.must(env.Clientset().CoreV1().Pods(f.ns).Bind(context.WithoutCancel(f.ctx), &corev1.Binding{
					ObjectMeta: metav1.ObjectMeta{Name: intruder.Name, UID: intruder.UID}, Target: corev1.ObjectReference{Kind: "Node", Name: f.ns + "-n1"},
				}, metav1.CreateOptions{}))
			})
		}
		forward(w)
	})
	code, r := f.bind(kubeconfig, "podgroup/trio")
	if code != cmd.ExitUnverified || r.Verdict != "Overcommitted" ||
		!strings.Contains(r.Message, "node "+f.ns+"-n1 holds nvidia.com/gpu 12 of 8") || !strings.Contains(r.Message, f.ns+"/intruder") {
		t.Fatalf("exit %d, report %+v; want 5, Overcommitted naming %s-n1 and the intruder", code, r, f.ns)
	}
}

// The API server goes away after the first Binding answered 201: that
// member is bound and said so, the rest is unknown, and the exit code is
// not "nothing was bound".
func TestGangBindServerGoneMidCommit(t *testing.T) {
	f := newGangFixture(t, "bind-server-gone")
	f.gang3()
	// The first real Binding goes through; every request after it, or
	// beside it, meets a dead server (the Lease's aside, so that the run
	// does not also lose its lock).
	var first, gone atomic.Bool
	done := make(chan struct{})
	kubeconfig := faultKubeconfig(t, f.ns, func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
		switch {
		case strings.Contains(r.URL.Path, "/leases"):
		case isBinding(r) && r.URL.Query().Get("dryRun") == "" && first.CompareAndSwap(false, true):
			forward(w)
			gone.Store(true)
			close(done)
			return
		case isBinding(r) && r.URL.Query().Get("dryRun") == "":
			<-done
			dropConnection(t, w)
			return
		case gone.Load():
			dropConnection(t, w)
			return
		}
		forward(w)
	})
	code, r := f.bind(kubeconfig, "podgroup/trio", "--bulk-reads=100")
	if code != cmd.ExitUnverified || r.Verdict != "Unverified" || !strings.Contains(r.Message, "1 Binding(s) succeeded") {
		t.Fatalf("exit %d, report %+v; want 5, Unverified, 1 Binding succeeded", code, r)
	}
	bound := 0
	for _, m := range r.Members {
		if m.Result == "Bound" {
			bound++
		}
	}
	if bound != 1 || f.boundCount("m", 3) != 1 {
		t.Errorf("report has %d members Bound, the server %d; want 1 and 1", bound, f.boundCount("m", 3))
	}
}

// fakeScheduler binds the fixture's pending pods that carry no gates,
// first fit by GPUs, each once it has seen it released for delay, until the
// test ends: kube-scheduler's part after an ungate, with a delay that
// leaves another run time to decide on the room those pods will take.
func (f *gangFixture) fakeScheduler(delay time.Duration) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(f.ctx))
	f.t.Cleanup(cancel)
	cs := env.Clientset()
	released := map[string]time.Time{}
	go func() {
		for ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
			pods, err := cs.CoreV1().Pods(f.ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: poolKey + "=" + f.ns})
			if err != nil {
				continue
			}
			free := map[string]int64{}
			for _, n := range nodes.Items {
				free[n.Name] = framework.NewResource(n.Status.Allocatable).ScalarResources["nvidia.com/gpu"]
			}
			for _, pod := range pods.Items {
				if pod.Spec.NodeName != "" {
					free[pod.Spec.NodeName] -= framework.ComputePodResource(&pod).Resource.ScalarResources["nvidia.com/gpu"]
				}
			}
			for _, pod := range pods.Items {
				if pod.Spec.NodeName != "" || len(pod.Spec.SchedulingGates) > 0 {
					continue
				}
				if seen, ok := released[pod.Name]; !ok {
					released[pod.Name] = time.Now()
					continue
				} else if time.Since(seen) < delay {
					continue
				}
				need := framework.ComputePodResource(&pod).Resource.ScalarResources["nvidia.com/gpu"]
				for _, n := range nodes.Items {
					if free[n.Name] >= need {
						if cs.CoreV1().Pods(f.ns).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, UID: pod.UID},
							Target: corev1.ObjectReference{Kind: "Node", Name: n.Name}}, metav1.CreateOptions{}) == nil {
							free[n.Name] -= need
						}
						break
					}
				}
			}
		}
	}()
}

// Two admit --ungate runs released together onto room for one gang: the
// second decides once the first's members hold their room (it waits for
// the lock, which the first keeps until its scheduler bound them), so it is
// not admitted and releases nothing.
func TestGangAdmitUngateConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	for round := range 3 {
		f := newGangFixture(t, fmt.Sprintf("ungate-conc-%d", round))
		f.nodes(4)
		for _, name := range []string{"a", "b"} {
			f.nativePodGroup(name, 8)
			for i := range 8 {
				f.create(f.pod(fmt.Sprintf("%s-%d", name, i), halfNode).PodGroup(name).SchedulingGate(gangGate).Obj())
			}
		}
		f.fakeScheduler(time.Second)
		codes := make([]int, 2)
		var wg sync.WaitGroup
		for i, name := range []string{"a", "b"} {
			wg.Go(func() {
				time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
				c := exec.Command(gangBinary(t), "admit", "podgroup/"+name, "--ungate", gangGate, "--kubeconfig", env.Kubeconfig, "-n", f.ns)
				out, err := c.CombinedOutput()
				var exit *exec.ExitError
				if errors.As(err, &exit) {
					codes[i] = exit.ExitCode()
				} else if err != nil {
					t.Errorf("admit %s: %v", name, err)
				}
				t.Logf("round %d: admit %s: exit %d\n%s", round, name, codes[i], out)
			})
		}
		wg.Wait()
		time.Sleep(300 * time.Millisecond) // the fake scheduler's last pass
		if over := f.overcommitted(); len(over) > 0 {
			t.Errorf("round %d: nodes overcommitted: %v", round, over)
		}
		admitted := 0
		for i, name := range []string{"a", "b"} {
			bound := f.boundCount(name, 8)
			switch {
			case codes[i] == cmd.ExitOK && bound == 8:
				admitted++
			case codes[i] == cmd.ExitNo && bound == 0 && slices.Equal(f.podGates(name+"-0"), []string{gangGate}):
			default:
				t.Errorf("round %d: admit %s exit %d, %d of 8 bound, gates of %s-0 %v", round, name, codes[i], bound, name, f.podGates(name+"-0"))
			}
		}
		if admitted != 1 {
			t.Errorf("round %d: %d gangs admitted, want 1", round, admitted)
		}
	}
}

// Two runs of bind for the same gang at once: the one that waited finds
// every member bound, writes nothing, and every pod has one Scheduled
// event.
func TestGangBindSameGangTwice(t *testing.T) {
	for round := range 3 {
		f := newGangFixture(t, fmt.Sprintf("bind-twice-%d", round))
		f.gang3()
		runs := make([]run, 2)
		var wg sync.WaitGroup
		for i := range runs {
			wg.Go(func() {
				time.Sleep(time.Duration(rand.IntN(200)) * time.Millisecond)
				c, out, errOut := startBind(t, env.Kubeconfig, f.ns, "podgroup/trio")
				runs[i] = finish(t, c, out, errOut)
			})
		}
		wg.Wait()
		var messages []string
		for _, r := range runs {
			if r.code != cmd.ExitOK || r.report.Verdict != "Bound" {
				t.Errorf("round %d: exit %d, report %+v; want 0, Bound\nstderr: %s", round, r.code, r.report, r.stderr)
			}
			messages = append(messages, r.report.Message)
		}
		if !slices.Contains(messages, "every member is bound already") {
			t.Errorf("round %d: messages %q; one run should find every member bound already", round, messages)
		}
		f.scheduledEvents(f.boundNodes("m-0", "m-1", "m-2"))
	}
}
