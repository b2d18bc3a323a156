package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/bind"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/kube"
	"github.com/kubectl-gang/kubectl-gang/pkg/snapshot"
)

// bindJSON is the BindReport printed by `bind -o json`.
type bindJSON struct {
	Kind         string `json:"kind"`
	Verdict      string `json:"verdict"`
	Reason       string `json:"reason"`
	Message      string `json:"message"`
	MinMember    int32  `json:"minMember"`
	BoundMembers int32  `json:"boundMembers"`
	Members      []struct {
		Pod     string `json:"pod"`
		Node    string `json:"node"`
		Result  string `json:"result"`
		Message string `json:"message"`
	} `json:"members"`
}

// bind runs `bind ARGS -o json` with kubeconfig (the admin's when empty)
// and decodes the report; anything but a report fails the test.
func (f *gangFixture) bind(kubeconfig string, args ...string) (int, bindJSON) {
	f.t.Helper()
	code, r, _ := f.bindWithStderr(kubeconfig, args...)
	return code, r
}

// bindWithStderr is bind, with what the run said on stderr.
func (f *gangFixture) bindWithStderr(kubeconfig string, args ...string) (int, bindJSON, string) {
	f.t.Helper()
	if kubeconfig == "" {
		kubeconfig = env.Kubeconfig
	}
	code, out, stderr := runCLI(f.t, "", append(append([]string{"bind"}, args...), "-o", "json", "--kubeconfig", kubeconfig, "-n", f.ns)...)
	var r bindJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		f.t.Fatalf("exit %d; stdout is not a report: %v\nstdout: %s\nstderr: %s", code, err, out, stderr)
	}
	if r.Kind != "BindReport" {
		f.t.Fatalf("kind %q, want BindReport", r.Kind)
	}
	return code, r, stderr
}

// boundNodes reads the pods back: pod name -> node ("" when unbound,
// "<deleted>" when gone or being deleted: no kubelet finishes a graceful
// deletion in the test bed).
func (f *gangFixture) boundNodes(names ...string) map[string]string {
	f.t.Helper()
	out := map[string]string{}
	for _, n := range names {
		pod, err := env.Clientset().CoreV1().Pods(f.ns).Get(context.WithoutCancel(f.ctx), n, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			out[n] = "<deleted>"
		case err != nil:
			f.t.Fatal(err)
		case pod.DeletionTimestamp != nil:
			out[n] = "<deleted>"
		default:
			out[n] = pod.Spec.NodeName
		}
	}
	return out
}

// gang3 makes three nodes and a native PodGroup of three members that each
// need a whole node. A Job owns the members (no controller runs in the
// test bed), so --on-partial=delete may take them back.
func (f *gangFixture) gang3() {
	f.t.Helper()
	f.nodes(3)
	f.nativePodGroup("trio", 3)
	for i := range 3 {
		pod := f.pod(fmt.Sprintf("m-%d", i), wholeNode).PodGroup("trio").Obj()
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "trio", UID: "0d8a1c1e-5f5e-4a0e-9a38-6f4a1c2b3d4e", Controller: new(true)}}
		f.create(pod)
	}
}

// bareGang3 is gang3 with pods no controller owns.
func (f *gangFixture) bareGang3() {
	f.t.Helper()
	f.nodes(3)
	f.nativePodGroup("trio", 3)
	for i := range 3 {
		f.create(f.pod(fmt.Sprintf("m-%d", i), wholeNode).PodGroup("trio").Obj())
	}
}

func wantUnbound(t *testing.T, f *gangFixture, except ...string) {
	t.Helper()
	for pod, node := range f.boundNodes("m-0", "m-1", "m-2") {
		if node != "" && !slices.Contains(except, pod) {
			t.Errorf("%s is bound to %s, want nothing bound", pod, node)
		}
	}
}

func TestGangBindNativePodGroup(t *testing.T) {
	f := newGangFixture(t, "bind")
	f.gang3()

	code, r := f.bind("", "podgroup/trio")
	if code != cmd.ExitOK || r.Verdict != "Bound" || r.BoundMembers != 3 || r.MinMember != 3 {
		t.Fatalf("exit %d, report %+v; want 0, Bound, 3 of 3", code, r)
	}
	got := f.boundNodes("m-0", "m-1", "m-2")
	for _, m := range r.Members {
		pod := strings.TrimPrefix(m.Pod, f.ns+"/")
		if m.Result != "Bound" || got[pod] != m.Node {
			t.Errorf("member %+v; the server has it on %q", m, got[pod])
		}
	}
	wantDistinct := map[string]bool{}
	for _, n := range got {
		wantDistinct[n] = true
	}
	if len(wantDistinct) != 3 {
		t.Errorf("members on %v, want three distinct nodes", got)
	}

	// kube-scheduler's event for every bound pod, written before exit.
	f.scheduledEvents(got)

	pg, err := env.Clientset().SchedulingV1beta1().PodGroups(f.ns).Get(f.ctx, "trio", metav1.GetOptions{})
	f.must(err)
	cond := meta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != "Scheduled" {
		t.Errorf("PodGroup condition %+v, want PodGroupInitiallyScheduled True (Scheduled)", cond)
	}

	// Bound members count; binding again binds nothing and says so.
	code, r = f.bind("", "podgroup/trio")
	if code != cmd.ExitOK || r.Verdict != "Bound" || r.BoundMembers != 3 {
		t.Errorf("second bind: exit %d, report %+v; want 0, Bound, 3 already bound", code, r)
	}
}

// ownSchedulerGang makes a native PodGroup name of members pods of half a
// node each, all needed, whose schedulerName is scheduler: the usual way to
// hand a gang to an external binder is a name no running scheduler watches.
func (f *gangFixture) ownSchedulerGang(name string, members int, scheduler string) {
	f.t.Helper()
	f.nativePodGroup(name, int32(members))
	for i := range members {
		pod := f.pod(fmt.Sprintf("%s-%d", name, i), halfNode).PodGroup(name).Obj()
		pod.Spec.SchedulerName = scheduler
		f.create(pod)
	}
}

// bindNote is the line bind writes once when it stands in for the pods'
// schedulerName.
func bindNote(scheduler string) string {
	return fmt.Sprintf("Note: no profile of the built-in configuration (kube-scheduler's default profile) is named after the pods' schedulerName %q: bind is their scheduler and places them with profile \"default-scheduler\" (--profile chooses another)\n", scheduler)
}

// A gang whose schedulerName no scheduler serves is the gang bind exists
// for (issue #41): place says the pods stay Pending unless something binds
// them (not verified, exit 3); bind is that something. It says once which
// profile it places them with, passes the server's dry run, binds every
// member and marks each as bound by kubectl-gang, so that the next gang of
// that name is bound without a warning; a pod another scheduler bound under
// that name (here bound by hand) makes the next bind warn, and still bind.
func TestGangBindOwnSchedulerName(t *testing.T) {
	f := newGangFixture(t, "bind-own-scheduler")
	// A name of this test's own: the snapshot is the whole test bed, where
	// other tests bind pods of their own scheduler names.
	scheduler := "binder-" + f.ns
	f.nodes(6)
	f.ownSchedulerGang("g0", 8, scheduler)

	code, out, _ := f.run("place", "podgroup/g0", "-o", "jsonpath={.verdict} {.notEvaluated}")
	if want := fmt.Sprintf(`Placed ["no scheduler is known to serve schedulerName \"%s\"`, scheduler); code != cmd.ExitNo || !strings.HasPrefix(out, want) {
		t.Errorf("place: exit %d, %s\nwant 3, Placed with %q not evaluated", code, out, want)
	}

	code, r, stderr := f.bindWithStderr("", "podgroup/g0", "--dry-run=server")
	if code != cmd.ExitOK || r.Verdict != "DryRun" || stderr != bindNote(scheduler) {
		t.Fatalf("--dry-run=server: exit %d, report %+v, stderr %q; want 0, DryRun and the note alone", code, r, stderr)
	}
	code, r, stderr = f.bindWithStderr("", "podgroup/g0")
	if code != cmd.ExitOK || r.Verdict != "Bound" || r.BoundMembers != 8 || stderr != bindNote(scheduler) {
		t.Fatalf("bind: exit %d, report %+v, stderr %q; want 0, Bound 8 and the note alone", code, r, stderr)
	}
	if got := f.boundCount("g0", 8); got != 8 {
		t.Fatalf("%d of 8 members bound on the server", got)
	}
	for i := range 8 {
		pod, err := env.Clientset().CoreV1().Pods(f.ns).Get(f.ctx, fmt.Sprintf("g0-%d", i), metav1.GetOptions{})
		f.must(err)
		if pod.Annotations[bind.BoundByAnnotation] != bind.BoundByValue {
			t.Errorf("%s: annotations %v, want %s=%s (the Binding's, copied by the server)", pod.Name, pod.Annotations, bind.BoundByAnnotation, bind.BoundByValue)
		}
	}

	// The pods bind bound show that bind serves the name: no warning.
	f.ownSchedulerGang("g1", 2, scheduler)
	code, r, stderr = f.bindWithStderr("", "podgroup/g1")
	if code != cmd.ExitOK || r.Verdict != "Bound" || stderr != bindNote(scheduler) {
		t.Fatalf("second gang: exit %d, report %+v, stderr %q; want 0, Bound and the note alone", code, r, stderr)
	}

	// A pod bound by someone else under that name: bind warns, and binds.
	other := f.pod("theirs", halfNode).Node(f.ns + "-n5").Obj()
	other.Spec.SchedulerName = scheduler
	f.create(other)
	f.ownSchedulerGang("g2", 1, scheduler)
	code, r, stderr = f.bindWithStderr("", "podgroup/g2")
	wantWarning := fmt.Sprintf("Warning: another scheduler may serve schedulerName %q (pod %s/theirs on node %s-n5 names it and was not bound by kubectl-gang)", scheduler, f.ns, f.ns)
	if code != cmd.ExitOK || r.Verdict != "Bound" || !strings.HasPrefix(stderr, bindNote(scheduler)+wantWarning) || strings.Count(stderr, "\n") != 2 {
		t.Fatalf("after another scheduler's pod: exit %d, report %+v, stderr %q; want 0, Bound, the note and the warning", code, r, stderr)
	}
}

func TestGangBindDryRun(t *testing.T) {
	f := newGangFixture(t, "bind-dry")
	f.gang3()
	var mu sync.Mutex
	var dryRuns, writes int
	kubeconfig := faultKubeconfig(t, f.ns, func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
		if isBinding(r) {
			mu.Lock()
			if r.URL.Query().Get("dryRun") == "All" {
				dryRuns++
			} else {
				writes++
			}
			mu.Unlock()
		}
		forward(w)
	})

	code, r := f.bind(kubeconfig, "podgroup/trio", "--dry-run=server")
	if code != cmd.ExitOK || r.Verdict != "DryRun" {
		t.Fatalf("exit %d, report %+v; want 0, DryRun", code, r)
	}
	for _, m := range r.Members {
		if m.Result != "WouldBind" || m.Node == "" {
			t.Errorf("member %+v, want WouldBind with a node", m)
		}
	}
	if dryRuns != 3 || writes != 0 {
		t.Errorf("the server got %d dry-run and %d real Bindings, want 3 and 0", dryRuns, writes)
	}
	wantUnbound(t, f)

	code, r = f.bind(kubeconfig, "podgroup/trio", "--dry-run")
	if code != cmd.ExitOK || r.Verdict != "DryRun" || dryRuns != 3 || writes != 0 {
		t.Errorf("--dry-run=client: exit %d, report %+v, %d dry runs and %d writes; want 0, DryRun and no Binding sent", code, r, dryRuns-3, writes)
	}
	wantUnbound(t, f)
}

func TestGangBindDoesNotFit(t *testing.T) {
	f := newGangFixture(t, "bind-nofit")
	f.nodes(2)
	f.nativePodGroup("trio", 3)
	for i := range 3 {
		f.create(f.pod(fmt.Sprintf("m-%d", i), wholeNode).PodGroup("trio").Obj())
	}
	code, r := f.bind("", "podgroup/trio")
	if code != cmd.ExitNo || r.Verdict != "NotBound" || r.Reason != "Unschedulable" {
		t.Fatalf("exit %d, report %+v; want 3, NotBound (Unschedulable)", code, r)
	}
	wantUnbound(t, f)
}

// The cluster moves between the snapshot and the bind: another pod takes a
// target node, a member is recreated, or a member gets a gate. Nothing is
// bound, and the report says what changed.
func TestGangBindClusterMoved(t *testing.T) {
	for _, tc := range []struct {
		name string
		move func(f *gangFixture)
		want func(f *gangFixture) string
		// moved is a member the test bound itself.
		moved string
	}{{
		name: "node taken",
		move: func(f *gangFixture) {
			for i := range 3 {
				f.create(f.pod(fmt.Sprintf("squatter-%d", i), wholeNode).Node(fmt.Sprintf("%s-n%d", f.ns, i)).Obj())
			}
		},
		want: func(*gangFixture) string { return "no longer fits" },
	}, {
		name: "member recreated",
		move: func(f *gangFixture) {
			f.must(env.Clientset().CoreV1().Pods(f.ns).Delete(context.WithoutCancel(f.ctx), "m-1", metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}))
			f.create(f.pod("m-1", wholeNode).PodGroup("trio").Obj())
		},
		want: func(*gangFixture) string { return "m-1 was recreated" },
	}, {
		name: "member bound elsewhere",
		move: func(f *gangFixture) {
			f.must(env.Clientset().CoreV1().Pods(f.ns).Bind(context.WithoutCancel(f.ctx), &corev1.Binding{
				ObjectMeta: metav1.ObjectMeta{Name: "m-2"}, Target: corev1.ObjectReference{Kind: "Node", Name: f.ns + "-n0"},
			}, metav1.CreateOptions{}))
		},
		want:  func(f *gangFixture) string { return "m-2 is bound to " + f.ns + "-n0 already" },
		moved: "m-2",
	}} {
		for _, reads := range bindReads {
			t.Run(tc.name+reads.name, func(t *testing.T) {
				f := newGangFixture(t, "bind-moved-"+strings.ReplaceAll(tc.name, " ", "-")+reads.ns)
				f.gang3()
				var once sync.Once
				var lw lockWatch
				kubeconfig := faultKubeconfig(t, f.ns, func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
					// The protocol's first access review comes after the
					// snapshot and the plan, before the re-reads.
					if lw.protocolReview(r) {
						once.Do(func() { tc.move(f) })
					}
					forward(w)
				})
				code, r := f.bind(kubeconfig, append([]string{"podgroup/trio"}, reads.args...)...)
				if want := tc.want(f); code != cmd.ExitNo || r.Verdict != "NotBound" || r.Reason != "Changed" || !strings.Contains(r.Message, want) {
					t.Fatalf("exit %d, report %+v; want 3, NotBound (Changed) mentioning %q", code, r, want)
				}
				wantUnbound(t, f, tc.moved)
			})
		}
	}
}

// bindReads are the two ways bind re-reads and reads back: a GET per
// object (the default for small gangs), and the versions of every pod and
// node, then a GET of what changed (large gangs; forced here with the hidden
// --bulk-reads). TestGangBindRereadsByVersions covers the lists the second
// falls back to.
var bindReads = []struct {
	name, ns string
	args     []string
}{{"", "", nil}, {" (lists)", "-l", []string{"--bulk-reads=-1"}}}

// A preemptor pending in the snapshot, nominated to a target node, and
// bound there before the re-check is counted once: as the pod on the node.
func TestGangBindNominatedPodBoundSince(t *testing.T) {
	for _, reads := range bindReads {
		t.Run("reads"+reads.name, func(t *testing.T) {
			f := newGangFixture(t, "bind-nominated"+reads.ns)
			f.gang3()
			pre := f.create(f.pod("preemptor", testutil.Res{"cpu": "20"}).Obj())
			pre.Status.NominatedNodeName = f.ns + "-n0"
			_, err := env.Clientset().CoreV1().Pods(f.ns).UpdateStatus(f.ctx, pre, metav1.UpdateOptions{})
			f.must(err)
			var once sync.Once
			var lw lockWatch
			kubeconfig := faultKubeconfig(t, f.ns, func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
				if lw.protocolReview(r) {
					once.Do(func() {
						f.must(env.Clientset().CoreV1().Pods(f.ns).Bind(context.WithoutCancel(f.ctx), &corev1.Binding{
							ObjectMeta: metav1.ObjectMeta{Name: "preemptor"}, Target: corev1.ObjectReference{Kind: "Node", Name: f.ns + "-n0"},
						}, metav1.CreateOptions{}))
					})
				}
				forward(w)
			})
			code, r := f.bind(kubeconfig, append([]string{"podgroup/trio"}, reads.args...)...)
			if code != cmd.ExitOK || r.Verdict != "Bound" {
				t.Fatalf("exit %d, report %+v; want 0, Bound (the preemptor's 20 cpus leave room for a member)", code, r)
			}
		})
	}
}

// A large gang re-reads the versions of every pod and node (metadata only)
// and GETs what changed; when more changed than is worth a GET each, it
// lists the pods and nodes whole. Either way a pod on a target node since
// the snapshot is seen: a new one, or one that was pending.
func TestGangBindRereadsByVersions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		newPods  int
		pending  bool
		wantFull bool
	}{{"little changed", 2, false, false}, {"pending pod bound since", 0, true, false}, {"much changed", 40, false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newGangFixture(t, "bind-versions-"+strings.ReplaceAll(tc.name, " ", "-"))
			f.gang3()
			if tc.pending {
				// Pending in the snapshot (and left there: it fits no node
				// the gang leaves free), bound to a target node since.
				f.create(f.pod("squatter", wholeNode).Obj())
			}
			var mu sync.Mutex
			var once sync.Once
			checked := false
			var lists []string // after the access reviews: "versions" or "objects"
			var lw lockWatch
			kubeconfig := faultKubeconfig(t, f.ns, func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
				if lw.protocolReview(r) {
					once.Do(func() {
						// Pods created since the snapshot, the first bound to a
						// target node, which then has no room for its member.
						if tc.pending {
							f.must(env.Clientset().CoreV1().Pods(f.ns).Bind(context.WithoutCancel(f.ctx), &corev1.Binding{
								ObjectMeta: metav1.ObjectMeta{Name: "squatter"}, Target: corev1.ObjectReference{Kind: "Node", Name: f.ns + "-n1"},
							}, metav1.CreateOptions{}))
						}
						for i := range tc.newPods {
							pod := f.pod(fmt.Sprintf("new-%02d", i), small)
							if i == 0 {
								pod = f.pod("squatter", wholeNode).Node(f.ns + "-n1")
							}
							f.create(pod.Obj())
						}
						mu.Lock()
						checked = true
						mu.Unlock()
					})
				}
				// A list is its first page: the test bed's cluster holds
				// the other tests' pods too, more than one page of them.
				if r.Method == http.MethodGet && (r.URL.Path == "/api/v1/pods" || r.URL.Path == "/api/v1/nodes") && r.URL.Query().Get("continue") == "" {
					mu.Lock()
					if checked {
						kind := "objects"
						if strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadataList") {
							kind = "versions"
						}
						lists = append(lists, strings.TrimPrefix(r.URL.Path, "/api/v1/")+" "+kind)
					}
					mu.Unlock()
				}
				forward(w)
			})
			code, r := f.bind(kubeconfig, "podgroup/trio", "--bulk-reads=-1")
			if code != cmd.ExitNo || r.Reason != "Changed" || !strings.Contains(r.Message, "node "+f.ns+"-n1 no longer fits") {
				t.Fatalf("exit %d, report %+v; want 3, Changed: node %s-n1 no longer fits", code, r, f.ns)
			}
			wantUnbound(t, f)
			slices.Sort(lists)
			want := []string{"nodes versions", "pods versions"}
			if tc.wantFull {
				want = []string{"nodes objects", "nodes versions", "pods objects", "pods versions"}
			}
			if !slices.Equal(lists, want) {
				t.Errorf("lists after the snapshot %v, want %v", lists, want)
			}
		})
	}
}

func TestGangBindForbidden(t *testing.T) {
	f := newGangFixture(t, "bind-rbac")
	f.gang3()
	// carol may read everything but write nothing.
	ctx := f.ctx
	cs := env.Clientset()
	_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "gang-bind-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}},
	}, metav1.CreateOptions{})
	f.must(err)
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "gang-bind-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "gang-bind-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	}, metav1.CreateOptions{})
	f.must(err)
	t.Cleanup(func() {
		_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), "gang-bind-reader", metav1.DeleteOptions{})
		_ = cs.RbacV1().ClusterRoles().Delete(context.Background(), "gang-bind-reader", metav1.DeleteOptions{})
	})
	// alice may take the bind lock, so that the protocol's own review is
	// what refuses her; bob below may not.
	grantBindLock(t, "alice")
	aliceCfg, kubeconfig, err := env.UserConfig("alice")
	f.must(err)
	// RBAC takes the new binding into account a moment later: wait until
	// alice may read, so the test sees the bind protocol's refusal, not a
	// snapshot read that came too early.
	alice := kubernetes.NewForConfigOrDie(aliceCfg)
	f.must(wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := alice.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, nil
	}))
	code, stdout, stderr := runCLI(t, "", "bind", "podgroup/trio", "--kubeconfig", kubeconfig, "-n", f.ns)
	wantErrorLine(t, cmd.ExitError, code, stdout, stderr, "forbidden: nothing was bound: you may not create pods/binding in namespace "+f.ns)
	wantUnbound(t, f)
}

// Faults on the wire during the commit: a reply lost after the server bound
// the pod, 429s and a 503 that pass, and a member the server keeps refusing.
func TestGangBindFaults(t *testing.T) {
	for _, reads := range bindReads {
		t.Run("lost reply and transient errors"+reads.name, func(t *testing.T) {
			testGangBindLostReply(t, reads.ns, reads.args)
		})
	}

	t.Run("someone else binds a member first", func(t *testing.T) {
		f := newGangFixture(t, "bind-race")
		f.gang3()
		var once sync.Once
		kubeconfig := faultKubeconfig(t, f.ns, func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
			if isBinding(r) && r.URL.Query().Get("dryRun") == "" && bindingPod(r) == "m-1" {
				// Another scheduler wins the race for m-1; our Binding then
				// meets a 409.
				once.Do(func() {
					f.must(env.Clientset().CoreV1().Pods(f.ns).Bind(context.WithoutCancel(f.ctx), &corev1.Binding{
						ObjectMeta: metav1.ObjectMeta{Name: "m-1"}, Target: corev1.ObjectReference{Kind: "Node", Name: f.ns + "-elsewhere"},
					}, metav1.CreateOptions{}))
				})
			}
			forward(w)
		})
		// m-1 ends bound to a node that does not exist: deleted after the
		// test, so that later snapshots of the shared test bed hold no
		// pod on a missing node.
		t.Cleanup(func() {
			_ = env.Clientset().CoreV1().Pods(f.ns).Delete(context.Background(), "m-1", metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))})
		})
		code, r := f.bind(kubeconfig, "podgroup/trio")
		if code != cmd.ExitPartial || r.Verdict != "PartiallyBound" || r.BoundMembers != 2 {
			t.Fatalf("exit %d, report %+v; want 4, PartiallyBound, 2 bound", code, r)
		}
		for _, m := range r.Members {
			if strings.HasSuffix(m.Pod, "/m-1") && (m.Result != "NotBound" || !strings.Contains(m.Message, "bound to "+f.ns+"-elsewhere by someone else")) {
				t.Errorf("m-1: %+v, want NotBound, bound elsewhere by someone else", m)
			}
		}
	})

	t.Run("partial delete of bare pods", func(t *testing.T) {
		f := newGangFixture(t, "bind-partial-bare")
		f.bareGang3()
		kubeconfig := faultKubeconfig(t, f.ns, func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
			if isBinding(r) && r.URL.Query().Get("dryRun") == "" && bindingPod(r) == "m-2" {
				http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected","reason":"InternalError","code":500}`, http.StatusInternalServerError)
				return
			}
			forward(w)
		})
		code, r := f.bind(kubeconfig, "podgroup/trio", "--on-partial=delete")
		if code != cmd.ExitPartial || r.Verdict != "PartiallyBound" || r.BoundMembers != 2 || !strings.Contains(r.Message, "2 stay bound") {
			t.Fatalf("exit %d, report %+v; want 4, PartiallyBound, 2 bound and left", code, r)
		}
		// Nothing recreates a bare pod: it is left bound, and named.
		if got := f.boundNodes("m-0", "m-1"); got["m-0"] == "" || got["m-0"] == "<deleted>" || got["m-1"] == "" || got["m-1"] == "<deleted>" {
			t.Errorf("pods read back %v, want m-0 and m-1 left bound", got)
		}
		for _, m := range r.Members[:2] {
			if m.Result != "Bound" || !strings.Contains(m.Message, "no controller owns it") {
				t.Errorf("%s: %s %q, want Bound and why it was left", m.Pod, m.Result, m.Message)
			}
		}
	})

	for _, policy := range []string{"report", "delete"} {
		t.Run("partial "+policy, func(t *testing.T) {
			f := newGangFixture(t, "bind-partial-"+policy)
			f.gang3()
			kubeconfig := faultKubeconfig(t, f.ns, func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
				if isBinding(r) && r.URL.Query().Get("dryRun") == "" && bindingPod(r) == "m-2" {
					http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected","reason":"InternalError","code":500}`, http.StatusInternalServerError)
					return
				}
				forward(w)
			})
			code, r := f.bind(kubeconfig, "podgroup/trio", "--on-partial="+policy)
			if code != cmd.ExitPartial || r.Verdict != "PartiallyBound" {
				t.Fatalf("exit %d, report %+v; want 4, PartiallyBound", code, r)
			}
			results := map[string]string{}
			for _, m := range r.Members {
				results[strings.TrimPrefix(m.Pod, f.ns+"/")] = m.Result
			}
			got := f.boundNodes("m-0", "m-1", "m-2")
			wantResult, wantBound := "Bound", int32(2)
			if policy == "delete" {
				wantResult, wantBound = "Deleted", 0
				if got["m-0"] != "<deleted>" || got["m-1"] != "<deleted>" {
					t.Errorf("pods read back %v, want m-0 and m-1 deleted", got)
				}
			} else if got["m-0"] == "" || got["m-1"] == "" {
				t.Errorf("pods read back %v, want m-0 and m-1 left bound", got)
			}
			if got["m-2"] != "" {
				t.Errorf("m-2 is on %q, want unbound", got["m-2"])
			}
			if results["m-0"] != wantResult || results["m-1"] != wantResult || results["m-2"] != "NotBound" || r.BoundMembers != wantBound {
				t.Errorf("results %v, %d bound; want m-0 and m-1 %s, m-2 NotBound, %d bound", results, r.BoundMembers, wantResult, wantBound)
			}
		})
	}
}

var podPath = regexp.MustCompile(`^/api/v1/namespaces/[^/]+/pods/[^/]+$`)

var bindingPath = regexp.MustCompile(`^/api/v1/namespaces/[^/]+/pods/([^/]+)/binding$`)

// lockWatch tells the bind protocol's access reviews (step 1, after the
// snapshot and the plan) from the bind lock's, which come before the run
// takes its Lease.
type lockWatch struct{ taken atomic.Bool }

func (l *lockWatch) protocolReview(r *http.Request) bool {
	if strings.Contains(r.URL.Path, "/leases") && (r.Method == http.MethodPost || r.Method == http.MethodPut) {
		l.taken.Store(true)
		return false
	}
	return l.taken.Load() && strings.Contains(r.URL.Path, "selfsubjectaccessreviews")
}

func isBinding(r *http.Request) bool {
	return r.Method == http.MethodPost && bindingPath.MatchString(r.URL.Path)
}

func bindingPod(r *http.Request) string {
	if m := bindingPath.FindStringSubmatch(r.URL.Path); m != nil {
		return m[1]
	}
	return ""
}

// dropConnection closes the client's connection without an answer.
func dropConnection(t *testing.T, w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijacking: %v", err)
		return
	}
	_ = conn.Close()
}

// faultKubeconfig returns a kubeconfig for a plain-HTTP proxy in front of
// the test bed's apiserver (as the admin user). Every request goes to fault,
// which may answer it itself, or forward it (to the real writer, or to a
// recorder to drop the answer).
func faultKubeconfig(t *testing.T, namespace string, fault func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter))) string {
	t.Helper()
	target, err := url.Parse(env.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = transport
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fault(w, r, func(to http.ResponseWriter) { proxy.ServeHTTP(to, r) })
	}))
	t.Cleanup(srv.Close)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["proxy"] = &clientcmdapi.Cluster{Server: srv.URL}
	cfg.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy", Namespace: namespace}
	cfg.CurrentContext = "proxy"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// An interrupt during the commit lets the Binding in flight finish, sends
// no more, and still verifies and reports; one before the commit writes
// nothing.
func TestGangBindInterrupted(t *testing.T) {
	for _, tc := range []struct {
		name      string
		at        func(r *http.Request) bool
		wantBound int32
		verdict   bind.Verdict
	}{
		{"before the commit", func(r *http.Request) bool { return isBinding(r) && r.URL.Query().Get("dryRun") == "All" }, 0, bind.VerdictNotBound},
		{"during the commit", func(r *http.Request) bool { return isBinding(r) && r.URL.Query().Get("dryRun") == "" }, 1, bind.VerdictPartiallyBound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newGangFixture(t, "bind-int-"+strings.Fields(tc.name)[0])
			f.gang3()
			interrupt := make(chan struct{})
			var once sync.Once
			kubeconfig := faultKubeconfig(t, f.ns, func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
				if tc.at(r) {
					once.Do(func() { close(interrupt) })
				}
				forward(w)
			})
			cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
			f.must(err)
			client, err := kube.New(cfg)
			f.must(err)
			snap, _, err := snapshot.Live(f.ctx, env.Config, snapshot.LiveOptions{})
			f.must(err)
			g, err := gang.ResolvePodGroup(snap, gang.Ref{Namespace: f.ns, Name: "trio"})
			f.must(err)
			r, err := bind.Gang(f.ctx, snap, g, client, bind.Options{Parallelism: 1, Interrupted: interrupt})
			f.must(err)
			if r.Verdict != tc.verdict || r.Reason != bind.ReasonInterrupted || r.BoundMembers != tc.wantBound {
				t.Fatalf("report %s (%s) with %d bound: %s; want %s (Interrupted) with %d bound", r.Verdict, r.Reason, r.BoundMembers, r.Message, tc.verdict, tc.wantBound)
			}
			bound := 0
			for _, node := range f.boundNodes("m-0", "m-1", "m-2") {
				if node != "" {
					bound++
				}
			}
			if bound != int(tc.wantBound) {
				t.Errorf("%d members bound on the server, want %d", bound, tc.wantBound)
			}
		})
	}
}

// testGangBindLostReply: a Binding whose reply is lost is settled by reading
// the pod back, and 429s and 503s are retried.
func testGangBindLostReply(t *testing.T, nsSuffix string, args []string) {
	f := newGangFixture(t, "bind-lost"+nsSuffix)
	f.gang3()
	var mu sync.Mutex
	seen := map[string]int{}
	gets := 0
	kubeconfig := faultKubeconfig(t, f.ns, func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
		if r.Method == http.MethodGet && podPath.MatchString(r.URL.Path) {
			mu.Lock()
			gets++
			mu.Unlock()
		}
		if !isBinding(r) || r.URL.Query().Get("dryRun") != "" {
			forward(w)
			return
		}
		pod := bindingPod(r)
		mu.Lock()
		seen[pod]++
		n := seen[pod]
		mu.Unlock()
		switch {
		case pod == "m-0" && n == 1:
			// The server binds the pod; the answer never arrives.
			forward(httptest.NewRecorder())
			dropConnection(t, w)
		case pod == "m-1" && n <= 2:
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429}`, http.StatusTooManyRequests)
		case pod == "m-2" && n == 1:
			http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503}`, http.StatusServiceUnavailable)
		default:
			forward(w)
		}
	})
	code, r := f.bind(kubeconfig, append([]string{"podgroup/trio"}, args...)...)
	if code != cmd.ExitOK || r.Verdict != "Bound" || r.BoundMembers != 3 {
		t.Fatalf("exit %d, report %+v; want 0, Bound, 3", code, r)
	}
	for pod, node := range f.boundNodes("m-0", "m-1", "m-2") {
		if node == "" {
			t.Errorf("%s is not bound", pod)
		}
	}
	if seen["m-0"] < 2 {
		t.Errorf("the Binding of m-0 was sent %d times; the lost reply should have been retried", seen["m-0"])
	}
	// m-0, whose answer was lost, gets its event like the others.
	f.scheduledEvents(f.boundNodes("m-0", "m-1", "m-2"))
	// Re-read and read-back: a GET per member, or none when listing.
	if listing := len(args) > 0; (gets == 0) != listing {
		t.Errorf("%d GETs of single pods (listing %v)", gets, listing)
	}
}

// scheduledEvents checks that each pod of bound (name -> node) has exactly
// one kube-scheduler Scheduled event, reported by kubectl-gang, naming its
// node, and that no other pod of the namespace has one.
func (f *gangFixture) scheduledEvents(bound map[string]string) {
	f.t.Helper()
	evs, err := env.Clientset().EventsV1().Events(f.ns).List(f.ctx, metav1.ListOptions{})
	f.must(err)
	seen := map[string][]string{}
	for _, e := range evs.Items {
		if e.Reason == "Scheduled" && e.Action == "Binding" && e.Type == corev1.EventTypeNormal && e.ReportingController == "kubectl-gang" {
			seen[e.Regarding.Name] = append(seen[e.Regarding.Name], e.Note)
		}
	}
	for pod, node := range bound {
		want := fmt.Sprintf("Successfully assigned %s/%s to %s", f.ns, pod, node)
		if len(seen[pod]) != 1 || seen[pod][0] != want {
			f.t.Errorf("events for %s: %q, want one: %q", pod, seen[pod], want)
		}
	}
	for pod := range seen {
		if _, ok := bound[pod]; !ok {
			f.t.Errorf("pod %s has a Scheduled event but was not bound", pod)
		}
	}
}
