package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
)

// Every test here works in a corner of the shared cluster of its own: a
// namespace named after the test, and nodes that carry the label
// gangtest.kubectl-gang.io/pool=<namespace> and a NoSchedule taint with the
// same key and value. Each test's pods select their pool with a nodeSelector
// and tolerate only its taint, so nodes other tests created (nodes are
// cluster-wide, and snapshot_test.go seeds GPU nodes too) never fit them,
// whatever order the tests run in, and no other test's pod fits ours. Nothing
// here runs in parallel: TestMissingCRDIsAbsent removes a CRD for a while.
//
// The checks that add capacity up over the whole cluster (coscheduling's
// resource gap, Volcano's overcommit) cannot be fenced off by a selector;
// they use a resource only their own nodes have, or assert only on the
// figures of the gang's own resource.
const (
	poolKey  = "gangtest.kubectl-gang.io/pool"
	gangGate = "example.com/gang"
	keepGate = "example.com/keep"
)

var (
	// gpuNode is a node a wholeNode pod fills.
	gpuNode = testutil.Res{"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8", "pods": "110"}
	// wholeNode asks for all of a gpuNode's GPUs, so two such members never share a node.
	wholeNode = testutil.Res{"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": "8"}
	// small fits many times on any node.
	small = testutil.Res{"cpu": "100m", "memory": "128Mi"}
)

// placementJSON is the Placement `place -o json` prints, as a script reads it.
type placementJSON struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Gang       struct {
		Source    string `json:"source"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"gang"`
	Verdict      string           `json:"verdict"`
	MinMember    int32            `json:"minMember"`
	MaxPlaceable int32            `json:"maxPlaceable"`
	Running      []runningJSON    `json:"running"`
	Assignments  []assignmentJSON `json:"assignments"`
	Unplaced     []string         `json:"unplaced"`
	TopologyKey  string           `json:"topologyKey"`
	Domain       string           `json:"domain"`
	Domains      []domainJSON     `json:"domains"`
	Message      string           `json:"message"`
}

type runningJSON struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
}

type assignmentJSON struct {
	Pod   string `json:"pod"`
	Node  string `json:"node"`
	Score int64  `json:"score"`
}

type domainJSON struct {
	Value        string `json:"value"`
	Nodes        int64  `json:"nodes"`
	Placed       int64  `json:"placed"`
	Complete     bool   `json:"complete"`
	Skipped      string `json:"skipped"`
	FreeFraction string `json:"freeFraction"`
}

// admissionJSON is the Admission `admit -o json` prints.
type admissionJSON struct {
	Kind     string        `json:"kind"`
	Admitted bool          `json:"admitted"`
	Checks   []checkJSON   `json:"checks"`
	Place    placementJSON `json:"placement"`
	Ungate   *struct {
		Bound       []string `json:"bound"`
		NotBoundYet []string `json:"notBoundYet"`
		Gate        string   `json:"gate"`
		Ungated     []string `json:"ungated"`
		Untouched   []string `json:"untouched"`
		Changed     []string `json:"changed"`
	} `json:"ungate"`
}

type checkJSON struct {
	Name             string            `json:"name"`
	Result           string            `json:"result"`
	Reason           string            `json:"reason"`
	Message          string            `json:"message"`
	SchedulerMessage string            `json:"schedulerMessage"`
	Figures          map[string]string `json:"figures"`
}

// check returns the named check; a missing one fails the test.
func (a admissionJSON) check(t *testing.T, name string) checkJSON {
	t.Helper()
	for _, c := range a.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s check in %+v", name, a.Checks)
	return checkJSON{}
}

// gangFixture is one test's namespace and node pool.
type gangFixture struct {
	t   *testing.T
	ctx context.Context
	ns  string
	dyn dynamic.Interface
	// queued: the fixture's Volcano queue exists (volcanoQueue).
	queued bool
}

func newGangFixture(t *testing.T, name string) *gangFixture {
	t.Helper()
	f := &gangFixture{t: t, ctx: t.Context(), ns: "gang-" + name, dyn: dynamic.NewForConfigOrDie(env.Config)}
	if _, err := env.Clientset().CoreV1().Namespaces().Create(f.ctx, testutil.MakeNamespace(f.ns), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *gangFixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// node creates a node <namespace>-<suffix> in the fixture's pool and returns its name.
func (f *gangFixture) node(suffix string, capacity testutil.Res, labels ...string) string {
	f.t.Helper()
	name := f.ns + "-" + suffix
	n := testutil.MakeNode().Name(name).Label(poolKey, f.ns).Capacity(capacity).
		Taint(poolKey, f.ns, corev1.TaintEffectNoSchedule)
	for i := 0; i+1 < len(labels); i += 2 {
		n.Label(labels[i], labels[i+1])
	}
	f.must(env.CreateNode(f.ctx, n.Obj()))
	return name
}

// nodes creates count gpuNodes named <namespace>-n0, -n1, ...
func (f *gangFixture) nodes(count int) []string {
	f.t.Helper()
	var names []string
	for i := range count {
		names = append(names, f.node(fmt.Sprintf("n%d", i), gpuNode))
	}
	return names
}

// pod starts a pending pod of the fixture that fits only the fixture's pool.
func (f *gangFixture) pod(name string, req testutil.Res) *testutil.PodWrapper {
	w := testutil.MakePod().Namespace(f.ns).Name(name).Req(req).Toleration(poolKey, f.ns, corev1.TaintEffectNoSchedule)
	w.Spec.NodeSelector = map[string]string{poolKey: f.ns}
	return w
}

// create creates pod; a pod with a node gets its phase written as status
// (no kubelet runs in the test bed).
func (f *gangFixture) create(pod *corev1.Pod) *corev1.Pod {
	f.t.Helper()
	pods := env.Clientset().CoreV1().Pods(f.ns)
	phase := pod.Status.Phase
	created, err := pods.Create(f.ctx, pod, metav1.CreateOptions{})
	f.must(err)
	if phase != "" && phase != corev1.PodPending {
		created.Status.Phase = phase
		created, err = pods.UpdateStatus(f.ctx, created, metav1.UpdateOptions{})
		f.must(err)
	}
	return created
}

func (f *gangFixture) nativePodGroup(name string, minCount int32) {
	f.t.Helper()
	_, err := env.Clientset().SchedulingV1beta1().PodGroups(f.ns).Create(f.ctx, &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}}},
	}, metav1.CreateOptions{})
	f.must(err)
}

func (f *gangFixture) createObject(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	f.t.Helper()
	var err error
	if obj.GetNamespace() == "" {
		_, err = f.dyn.Resource(gvr).Create(f.ctx, obj, metav1.CreateOptions{})
	} else {
		_, err = f.dyn.Resource(gvr).Namespace(obj.GetNamespace()).Create(f.ctx, obj, metav1.CreateOptions{})
	}
	f.must(err)
}

// file writes content to a file in the test's temporary directory.
func (f *gangFixture) file(name, content string) string {
	f.t.Helper()
	path := filepath.Join(f.t.TempDir(), name)
	f.must(os.WriteFile(path, []byte(content), 0o644))
	return path
}

// run runs kubectl gang against the test bed in the fixture's namespace.
func (f *gangFixture) run(args ...string) (int, string, string) {
	f.t.Helper()
	return runCLI(f.t, "", append(args, "--kubeconfig", env.Kubeconfig, "-n", f.ns)...)
}

// placeJSON runs `place ARGS -o json`; anything but a verdict (exit 0 or 3
// with a Placement on stdout) fails the test.
func (f *gangFixture) placeJSON(args ...string) (int, placementJSON) {
	f.t.Helper()
	code, out, stderr := f.run(append([]string{"place"}, append(args, "-o", "json")...)...)
	var p placementJSON
	decodeVerdict(f.t, code, out, stderr, &p)
	return code, p
}

// admitJSON runs `admit ARGS -o json`, as placeJSON does.
func (f *gangFixture) admitJSON(args ...string) (int, admissionJSON) {
	f.t.Helper()
	code, out, stderr := f.run(append([]string{"admit"}, append(args, "-o", "json")...)...)
	var a admissionJSON
	decodeVerdict(f.t, code, out, stderr, &a)
	return code, a
}

func decodeVerdict(t *testing.T, code int, out, stderr string, into any) {
	t.Helper()
	if code != cmd.ExitOK && code != cmd.ExitNo {
		t.Fatalf("exit %d, want 0 or 3; stderr: %s", code, stderr)
	}
	if rest := withoutWarnings(stderr); rest != "" {
		t.Errorf("stderr = %q, want nothing but warnings", stderr)
	}
	if err := json.Unmarshal([]byte(out), into); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
}

// podGates reads the pod back from the API and returns its scheduling gates.
func (f *gangFixture) podGates(name string) []string {
	f.t.Helper()
	pod, err := env.Clientset().CoreV1().Pods(f.ns).Get(f.ctx, name, metav1.GetOptions{})
	f.must(err)
	var gates []string
	for _, g := range pod.Spec.SchedulingGates {
		gates = append(gates, g.Name)
	}
	return gates
}

func (f *gangFixture) key(pod string) string { return f.ns + "/" + pod }

// wantPlacement checks the verdict, the minimum and the assignments (pod ->
// node) of a placement, and that every assignment has a positive score.
func wantPlacement(t *testing.T, p placementJSON, verdict string, minMember int32, assignments map[string]string) {
	t.Helper()
	wantPlacementScored(t, p, verdict, minMember, assignments, true)
}

// wantPlacementScored is wantPlacement; scored says every assignment has a
// positive node score (Volcano's allocate takes the only feasible node
// unscored, so a Volcano gang's last member may have none).
func wantPlacementScored(t *testing.T, p placementJSON, verdict string, minMember int32, assignments map[string]string, scored bool) {
	t.Helper()
	if p.Kind != "Placement" || p.APIVersion != v1alpha1.GroupVersion {
		t.Errorf("apiVersion %q kind %q, want %s Placement", p.APIVersion, p.Kind, v1alpha1.GroupVersion)
	}
	if p.Verdict != verdict {
		t.Errorf("verdict %q, want %q (message %q)", p.Verdict, verdict, p.Message)
	}
	if p.MinMember != minMember {
		t.Errorf("minMember %d, want %d", p.MinMember, minMember)
	}
	got := map[string]string{}
	for _, a := range p.Assignments {
		got[a.Pod] = a.Node
		if scored && a.Score <= 0 {
			t.Errorf("assignment %s -> %s has score %d, want a positive node score", a.Pod, a.Node, a.Score)
		}
	}
	if diff := cmp.Diff(assignments, got); diff != "" {
		t.Errorf("assignments (-want +got):\n%s", diff)
	}
}

// wantDistinctNodes checks that no two assignments share a node.
func wantDistinctNodes(t *testing.T, p placementJSON) {
	t.Helper()
	seen := map[string]string{}
	for _, a := range p.Assignments {
		if other, ok := seen[a.Node]; ok {
			t.Errorf("%s and %s both placed on %s", other, a.Pod, a.Node)
		}
		seen[a.Node] = a.Pod
	}
}

// withoutWarnings drops the "Warning: ..." lines the API server's warnings
// become on stderr. Every live read of this test bed gets one, since the
// apiserver flags scheduling.k8s.io/v1beta1 as deprecated in a later release;
// TestGangErrorIsTheOnlyLine holds the commands to the one-line promise in
// spite of them; the other tests look past them at what they test.
func withoutWarnings(stderr string) string {
	var kept []string
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if line != "" && !strings.HasPrefix(line, "Warning: ") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "")
}

// wantOneErrorLine checks a bad-input answer: exit 2, nothing on stdout, and
// one "error: ..." line on stderr (besides server warnings) containing every
// part of want.
func wantOneErrorLine(t *testing.T, code int, stdout, stderr string, want ...string) {
	t.Helper()
	wantErrorLine(t, cmd.ExitUsage, code, stdout, stderr, want...)
}

// wantErrorLine is wantOneErrorLine for another exit code.
func wantErrorLine(t *testing.T, wantCode, code int, stdout, stderr string, want ...string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("exit %d, want %d (stderr %q)", code, wantCode, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout = %q, want nothing", stdout)
	}
	stderr = withoutWarnings(stderr)
	if !strings.HasPrefix(stderr, "error: ") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr is not one error line: %q", stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q lacks %q", stderr, w)
		}
	}
}

func TestGangPlaceNativePodGroup(t *testing.T) {
	f := newGangFixture(t, "native")
	n := f.nodes(4)
	f.nativePodGroup("train", 4)
	// train-0 already runs on n0: it counts toward the minimum of 4, so the
	// three free nodes are enough for the three pending members.
	f.create(f.pod("train-0", wholeNode).PodGroup("train").Node(n[0]).Obj())
	for i := 1; i <= 3; i++ {
		f.create(f.pod(fmt.Sprintf("train-%d", i), wholeNode).PodGroup("train").Obj())
	}
	// big needs five whole nodes at once; three are free.
	f.nativePodGroup("big", 5)
	for i := range 5 {
		f.create(f.pod(fmt.Sprintf("big-%d", i), wholeNode).PodGroup("big").Obj())
	}

	t.Run("placed", func(t *testing.T) {
		code, p := f.placeJSON("podgroup/train")
		if code != cmd.ExitOK {
			t.Errorf("exit %d, want 0", code)
		}
		// Equal nodes score equally; ties go to the node name, members come
		// in queue order (creation time, then name).
		wantPlacement(t, p, "Placed", 4, map[string]string{
			f.key("train-1"): n[1], f.key("train-2"): n[2], f.key("train-3"): n[3],
		})
		wantDistinctNodes(t, p)
		if diff := cmp.Diff([]runningJSON{{Pod: f.key("train-0"), Node: n[0]}}, p.Running); diff != "" {
			t.Errorf("running (-want +got):\n%s", diff)
		}
		if p.MaxPlaceable != 4 {
			t.Errorf("maxPlaceable %d, want 4", p.MaxPlaceable)
		}
		if p.Gang.Source != "scheduling.k8s.io" || p.Gang.Name != "train" || p.Gang.Namespace != f.ns {
			t.Errorf("gang %+v, want the native PodGroup %s/train", p.Gang, f.ns)
		}
		if want := fmt.Sprintf("gang %s/train placed: 1 running and 3 to place, minimum 4", f.ns); p.Message != want {
			t.Errorf("message %q, want %q", p.Message, want)
		}
		if len(p.Assignments) == 3 && (p.Assignments[0].Score != p.Assignments[1].Score || p.Assignments[1].Score != p.Assignments[2].Score) {
			t.Errorf("members on identical empty nodes scored differently: %+v", p.Assignments)
		}
	})

	t.Run("table", func(t *testing.T) {
		code, out, stderr := f.run("place", "podgroup/train")
		if code != cmd.ExitOK || withoutWarnings(stderr) != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 6 || !strings.HasPrefix(lines[0], "Placed: gang "+f.ns+"/train placed") || !strings.HasPrefix(lines[1], "POD ") {
			t.Fatalf("want a verdict line, a header and 4 rows:\n%s", out)
		}
		// Running members first, then the placed ones in queue order.
		for line, want := range map[int][3]string{
			2: {f.key("train-0"), n[0], "Running"},
			3: {f.key("train-1"), n[1], "Placed"},
			5: {f.key("train-3"), n[3], "Placed"},
		} {
			row := strings.Fields(lines[line])
			if row[0] != want[0] || row[1] != want[1] || row[len(row)-1] != want[2] {
				t.Errorf("row %q, want pod %s on %s, %s", lines[line], want[0], want[1], want[2])
			}
		}
	})

	t.Run("jsonpath", func(t *testing.T) {
		code, out, _ := f.run("place", "podgroup/train", "-o", "jsonpath={.verdict} {.assignments[*].node}")
		if want := "Placed " + strings.Join(n[1:], " "); code != cmd.ExitOK || out != want {
			t.Errorf("exit %d, output %q: want 0 and %q", code, out, want)
		}
	})

	t.Run("not enough nodes", func(t *testing.T) {
		code, p := f.placeJSON("podgroup/big")
		if code != cmd.ExitNo {
			t.Errorf("exit %d, want 3", code)
		}
		wantPlacement(t, p, "Unschedulable", 5, map[string]string{})
		if p.Assignments == nil {
			t.Errorf("assignments is absent, want an empty list")
		}
		if p.MaxPlaceable != 3 {
			t.Errorf("maxPlaceable %d, want 3", p.MaxPlaceable)
		}
		want := fmt.Sprintf("gang %s/big cannot be placed: at most 3 of minimum 5 member(s) run or fit at once; %s/big-3: 0/", f.ns, f.ns)
		if !strings.HasPrefix(p.Message, want) || !strings.Contains(p.Message, "Insufficient nvidia.com/gpu") {
			t.Errorf("message %q, want it to start with %q and name the short resource", p.Message, want)
		}
	})
}

func TestGangPlaceVolcanoPodGroup(t *testing.T) {
	f := newGangFixture(t, "volcano")
	n := f.nodes(3)
	f.createObject(volcanoPodGroups, testutil.MakeVolcanoPodGroup(f.ns, "mpi", 3).Queue(f.volcanoQueue()).Obj())
	// mpi-0 is bound but not started (Pending with a node): Volcano's Bound,
	// which counts toward the minimum like a running member.
	f.create(f.pod("mpi-0", wholeNode).VolcanoGroup("mpi").BoundTo(n[0]).Obj())
	f.create(f.pod("mpi-1", wholeNode).VolcanoGroup("mpi").Obj())
	f.create(f.pod("mpi-2", wholeNode).VolcanoGroup("mpi").Obj())
	// A pod naming no group is no member, even with the same labels.
	f.create(f.pod("stranger", wholeNode).Obj())

	code, p := f.placeJSON("podgroup/mpi")
	if code != cmd.ExitOK {
		t.Errorf("exit %d, want 0", code)
	}
	wantPlacementScored(t, p, "Placed", 3, map[string]string{f.key("mpi-1"): n[1], f.key("mpi-2"): n[2]}, false)
	if diff := cmp.Diff([]runningJSON{{Pod: f.key("mpi-0"), Node: n[0]}}, p.Running); diff != "" {
		t.Errorf("running (-want +got):\n%s", diff)
	}
	if p.Gang.Source != "scheduling.volcano.sh" {
		t.Errorf("gang source %q, want scheduling.volcano.sh", p.Gang.Source)
	}
}

// A Succeeded member of a Volcano gang counts toward its minimum, as in
// Volcano: the snapshot reads finished pods' metadata for it.
func TestGangVolcanoSucceededMemberCounts(t *testing.T) {
	f := newGangFixture(t, "volcano-done")
	n := f.nodes(2)
	f.createObject(volcanoPodGroups, testutil.MakeVolcanoPodGroup(f.ns, "mpi", 3).Queue(f.volcanoQueue()).Obj())
	f.create(f.pod("mpi-0", wholeNode).VolcanoGroup("mpi").BoundTo(n[0]).Phase(corev1.PodSucceeded).Obj())
	f.create(f.pod("mpi-1", wholeNode).VolcanoGroup("mpi").Obj())
	f.create(f.pod("mpi-2", wholeNode).VolcanoGroup("mpi").Obj())

	code, p := f.placeJSON("podgroup/mpi")
	if code != cmd.ExitOK || p.Verdict != "Placed" || !strings.Contains(p.Message, "1 succeeded") {
		t.Errorf("exit %d, %s: %s; want 0, Placed with 1 succeeded member", code, p.Verdict, p.Message)
	}
	_, a := f.admitJSON("podgroup/mpi")
	if c := a.check(t, "Validity"); c.Result != "Passed" || c.Figures["valid"] != "3" {
		t.Errorf("validity %+v; want Passed with 3 valid members", c)
	}
}

func TestGangPlaceCoschedulingPodGroup(t *testing.T) {
	f := newGangFixture(t, "cosched")
	n := f.nodes(3)
	f.createObject(coschedulingPodGroups, testutil.MakeCoschedulingPodGroup(f.ns, "ring", 3).Obj())
	// Small members that any node holds three of, but that must not share a
	// node: each placed member must be visible to the next one's filter.
	apart := testutil.MakePodAffinityTerm(corev1.LabelHostname).MatchLabel("ring", f.ns)
	for i := range 3 {
		f.create(f.pod(fmt.Sprintf("ring-%d", i), small).CoschedulingGroup("ring").Label("ring", f.ns).RequiredPodAntiAffinity(apart).Obj())
	}

	code, p := f.placeJSON("podgroup/ring")
	if code != cmd.ExitOK {
		t.Errorf("exit %d, want 0", code)
	}
	wantPlacement(t, p, "Placed", 3, map[string]string{f.key("ring-0"): n[0], f.key("ring-1"): n[1], f.key("ring-2"): n[2]})
	wantDistinctNodes(t, p)
	if p.Gang.Source != "scheduling.x-k8s.io" {
		t.Errorf("gang source %q, want scheduling.x-k8s.io", p.Gang.Source)
	}

	// A fourth member has nowhere to go: all or nothing.
	_, err := f.dyn.Resource(coschedulingPodGroups).Namespace(f.ns).Patch(f.ctx, "ring", "application/merge-patch+json",
		[]byte(`{"spec":{"minMember":4}}`), metav1.PatchOptions{})
	f.must(err)
	f.create(f.pod("ring-3", small).CoschedulingGroup("ring").Label("ring", f.ns).RequiredPodAntiAffinity(apart).Obj())
	code, p = f.placeJSON("podgroup/ring")
	if code != cmd.ExitNo {
		t.Errorf("exit %d, want 3", code)
	}
	wantPlacement(t, p, "Unschedulable", 4, map[string]string{})
	if p.MaxPlaceable != 3 || !strings.Contains(p.Message, "didn't match pod anti-affinity rules") {
		t.Errorf("maxPlaceable %d, message %q: want 3 and the anti-affinity reason", p.MaxPlaceable, p.Message)
	}
}

func TestGangPlaceSelector(t *testing.T) {
	f := newGangFixture(t, "selector")
	n := f.nodes(2)
	for i := range 3 {
		f.create(f.pod(fmt.Sprintf("sel-%d", i), wholeNode).Label("app", "sel").Obj())
	}
	f.create(f.pod("other", wholeNode).Label("app", "other").Obj())

	t.Run("min-member 2", func(t *testing.T) {
		code, p := f.placeJSON("-l", "app=sel", "--min-member", "2")
		if code != cmd.ExitOK {
			t.Errorf("exit %d, want 0", code)
		}
		// The minimum is met, so every member that fits is placed and the
		// rest is listed as unplaced.
		wantPlacement(t, p, "Placed", 2, map[string]string{f.key("sel-0"): n[0], f.key("sel-1"): n[1]})
		if diff := cmp.Diff([]string{f.key("sel-2")}, p.Unplaced); diff != "" {
			t.Errorf("unplaced (-want +got):\n%s", diff)
		}
		if p.Gang.Source != "selector" || p.Gang.Name != "app=sel" {
			t.Errorf("gang %+v, want selector app=sel", p.Gang)
		}
		if !strings.HasSuffix(p.Message, "; 1 more member(s) do not fit") {
			t.Errorf("message %q does not say one member does not fit", p.Message)
		}
	})
	t.Run("every member", func(t *testing.T) {
		code, p := f.placeJSON("-l", "app=sel")
		if code != cmd.ExitNo {
			t.Errorf("exit %d, want 3", code)
		}
		wantPlacement(t, p, "Unschedulable", 3, map[string]string{})
		if p.MaxPlaceable != 2 {
			t.Errorf("maxPlaceable %d, want 2", p.MaxPlaceable)
		}
	})
}

// The container resources of the manifests below: wholeNodeYAML fills one of
// a fixture's gpuNodes, as wholeNode does.
const wholeNodeYAML = `{requests: {cpu: "4", memory: 32Gi, nvidia.com/gpu: "8"}, limits: {nvidia.com/gpu: "8"}}`

// job is a batch/v1 Job manifest whose pods fit only the fixture's pool and
// ask for resources (a YAML flow mapping).
func (f *gangFixture) job(name string, parallelism int, resources string) string {
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: %[1]s
spec:
  parallelism: %[2]d
  completions: 8
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      restartPolicy: Never
      nodeSelector: {%[3]s: %[4]s}
      tolerations:
      - {key: %[3]s, operator: Equal, value: %[4]s, effect: NoSchedule}
      containers:
      - name: train
        image: registry.k8s.io/pause:3.10
        resources: %[5]s
`, name, parallelism, poolKey, f.ns, resources)
}

// gpuJob is a Job whose pods each fill one of the fixture's nodes.
func (f *gangFixture) gpuJob(name string, parallelism int) string {
	return f.job(name, parallelism, wholeNodeYAML)
}

// podManifest is a Pod manifest that fits only the fixture's pool.
func (f *gangFixture) podManifest(name, resources string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %[1]s
spec:
  nodeSelector: {%[2]s: %[3]s}
  tolerations:
  - {key: %[2]s, operator: Equal, value: %[3]s, effect: NoSchedule}
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources: %[4]s
`, name, poolKey, f.ns, resources)
}

// gpuPod is a Pod manifest that fills one of the fixture's nodes.
// volcanoQueue creates the fixture's Volcano queue once (Open, weight 100,
// so that its share of the test bed's cluster, which other tests' queues
// divide with it, holds its gangs) and returns its name.
func (f *gangFixture) volcanoQueue() string {
	f.t.Helper()
	name := f.ns + "-q"
	if !f.queued {
		q := testutil.MakeVolcanoQueue(name).Obj()
		_ = unstructured.SetNestedField(q.Object, int64(100), "spec", "weight")
		f.createObject(volcanoQueues, q)
		f.queued = true
	}
	return name
}

func (f *gangFixture) gpuPod(name string) string {
	return f.podManifest(name, wholeNodeYAML)
}

func TestGangPlaceWhatIf(t *testing.T) {
	f := newGangFixture(t, "whatif")
	n := f.nodes(4)

	t.Run("job", func(t *testing.T) {
		job := f.file("job.yaml", f.gpuJob("pretrain", 4))
		code, p := f.placeJSON("-f", job)
		if code != cmd.ExitOK {
			t.Errorf("exit %d, want 0", code)
		}
		// min(parallelism, completions) pods run at once, named as the Job
		// controller would, in the -n namespace; all of them must fit.
		wantPlacement(t, p, "Placed", 4, map[string]string{
			f.key("pretrain-0"): n[0], f.key("pretrain-1"): n[1], f.key("pretrain-2"): n[2], f.key("pretrain-3"): n[3],
		})
		wantDistinctNodes(t, p)
		if p.Gang.Source != "file" || p.Gang.Namespace != f.ns {
			t.Errorf("gang %+v, want a file gang in %s", p.Gang, f.ns)
		}

		// The same Job read from stdin.
		code, out, stderr := runCLI(t, f.gpuJob("pretrain", 4), "place", "-f", "-", "-o", "json", "--kubeconfig", env.Kubeconfig, "-n", f.ns)
		var fromStdin placementJSON
		decodeVerdict(t, code, out, stderr, &fromStdin)
		if diff := cmp.Diff(p, fromStdin); diff != "" {
			t.Errorf("placement from stdin differs (-file +stdin):\n%s", diff)
		}
	})

	t.Run("job too wide", func(t *testing.T) {
		code, p := f.placeJSON("-f", f.file("wide.yaml", f.gpuJob("wide", 5)))
		if code != cmd.ExitNo {
			t.Errorf("exit %d, want 3", code)
		}
		wantPlacement(t, p, "Unschedulable", 5, map[string]string{})
		if p.MaxPlaceable != 4 {
			t.Errorf("maxPlaceable %d, want 4", p.MaxPlaceable)
		}
	})

	t.Run("podgroup and pods", func(t *testing.T) {
		// A Volcano PodGroup and pods that do not name it yet: the file makes
		// them its members. Five pods, four nodes, a minimum of three.
		docs := []string{`apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: sweep
spec:
  minMember: 3
  queue: ` + f.volcanoQueue() + `
`}
		for i := range 5 {
			docs = append(docs, f.gpuPod(fmt.Sprintf("sweep-%d", i)))
		}
		code, p := f.placeJSON("-f", f.file("sweep.yaml", strings.Join(docs, "---\n")))
		if code != cmd.ExitOK {
			t.Errorf("exit %d, want 0", code)
		}
		wantPlacementScored(t, p, "Placed", 3, map[string]string{
			f.key("sweep-0"): n[0], f.key("sweep-1"): n[1], f.key("sweep-2"): n[2], f.key("sweep-3"): n[3],
		}, false)
		if diff := cmp.Diff([]string{f.key("sweep-4")}, p.Unplaced); diff != "" {
			t.Errorf("unplaced (-want +got):\n%s", diff)
		}
		if p.Gang.Source != "scheduling.volcano.sh" || p.Gang.Name != "sweep" {
			t.Errorf("gang %+v, want the file's Volcano PodGroup sweep", p.Gang)
		}
	})

	// A what-if writes nothing.
	pods, err := env.Clientset().CoreV1().Pods(f.ns).List(f.ctx, metav1.ListOptions{})
	f.must(err)
	jobs, err := env.Clientset().BatchV1().Jobs(f.ns).List(f.ctx, metav1.ListOptions{})
	f.must(err)
	if len(pods.Items)+len(jobs.Items) != 0 {
		t.Errorf("a what-if created %d pods and %d jobs", len(pods.Items), len(jobs.Items))
	}
}

func TestGangPlaceAmbiguousPodGroup(t *testing.T) {
	f := newGangFixture(t, "ambiguous")
	n := f.nodes(2)
	f.nativePodGroup("dup", 1)
	f.createObject(volcanoPodGroups, testutil.MakeVolcanoPodGroup(f.ns, "dup", 1).Queue(f.volcanoQueue()).Obj())
	f.create(f.pod("native-0", wholeNode).PodGroup("dup").Obj())
	f.create(f.pod("volcano-0", wholeNode).VolcanoGroup("dup").Obj())

	code, out, stderr := f.run("place", "podgroup/dup")
	wantOneErrorLine(t, code, out, stderr, fmt.Sprintf(`error: podgroup "dup" in namespace %q exists in 2 API groups; `+
		"name one of: podgroups.scheduling.k8s.io/dup, podgroups.scheduling.volcano.sh/dup", f.ns))

	for _, tt := range []struct{ ref, source, member string }{
		{"podgroups.scheduling.volcano.sh/dup", "scheduling.volcano.sh", "volcano-0"},
		{"podgroups.scheduling.k8s.io/dup", "scheduling.k8s.io", "native-0"},
	} {
		t.Run(tt.ref, func(t *testing.T) {
			code, p := f.placeJSON(tt.ref)
			if code != cmd.ExitOK {
				t.Errorf("exit %d, want 0", code)
			}
			if p.Gang.Source != tt.source {
				t.Errorf("gang source %q, want %q", p.Gang.Source, tt.source)
			}
			wantPlacement(t, p, "Placed", 1, map[string]string{f.key(tt.member): n[0]})
		})
	}
}

func TestGangPlaceTopology(t *testing.T) {
	f := newGangFixture(t, "topology")
	zone := func(z string) string { return f.ns + "-" + z } // values no other test's nodes carry
	// Zone a has two nodes, b four, c three.
	var a, b, c []string
	for i := range 2 {
		a = append(a, f.node(fmt.Sprintf("a%d", i), gpuNode, corev1.LabelTopologyZone, zone("a")))
	}
	for i := range 4 {
		b = append(b, f.node(fmt.Sprintf("b%d", i), gpuNode, corev1.LabelTopologyZone, zone("b")))
	}
	for i := range 3 {
		c = append(c, f.node(fmt.Sprintf("c%d", i), gpuNode, corev1.LabelTopologyZone, zone("c")))
	}
	// Three whole-node members that must share a zone. Placed greedily
	// they start in zone a (its nodes sort first) and the third has nowhere
	// to go; confined to one zone, b and c both hold them and c, with no GPU
	// left over, is the tightest fit.
	together := testutil.MakePodAffinityTerm(corev1.LabelTopologyZone).MatchLabel("gang", f.ns)
	for i := range 3 {
		f.create(f.pod(fmt.Sprintf("tp-%d", i), wholeNode).Label("gang", f.ns).RequiredPodAffinity(together).Obj())
	}
	wantInC := map[string]string{f.key("tp-0"): c[0], f.key("tp-1"): c[1], f.key("tp-2"): c[2]}

	// ours keeps the domains of this test's zones; other tests' nodes may carry zone labels too.
	ours := func(p placementJSON) map[string]domainJSON {
		out := map[string]domainJSON{}
		for _, d := range p.Domains {
			if strings.HasPrefix(d.Value, f.ns+"-") {
				out[strings.TrimPrefix(d.Value, f.ns+"-")] = d
			}
		}
		return out
	}
	checkDomains := func(t *testing.T, p placementJSON) {
		t.Helper()
		if p.TopologyKey != corev1.LabelTopologyZone || p.Domain != zone("c") {
			t.Errorf("topologyKey %q domain %q, want %s=%s", p.TopologyKey, p.Domain, corev1.LabelTopologyZone, zone("c"))
		}
		d := ours(p)
		if got := d["a"]; got.Complete || got.Nodes != 2 || got.Skipped != "needs at least 24 nvidia.com/gpu, has 16 free on the 2 node(s) the members may use" {
			t.Errorf("zone a: %+v, want it skipped for want of GPUs", got)
		}
		for _, z := range []string{"b", "c"} {
			if got := d[z]; !got.Complete || got.Placed != 3 || got.Skipped != "" {
				t.Errorf("zone %s: %+v, want all three members placed", z, got)
			}
		}
		if !(d["c"].FreeFraction < d["b"].FreeFraction) {
			t.Errorf("zone c free fraction %s is not below zone b's %s", d["c"].FreeFraction, d["b"].FreeFraction)
		}
		if !strings.HasSuffix(p.Message, fmt.Sprintf(", all in %s=%s", corev1.LabelTopologyZone, zone("c"))) {
			t.Errorf("message %q does not name the chosen zone", p.Message)
		}
	}

	t.Run("greedy", func(t *testing.T) {
		code, p := f.placeJSON("-l", "gang="+f.ns)
		if code != cmd.ExitNo {
			t.Errorf("exit %d, want 3", code)
		}
		wantPlacement(t, p, "Unschedulable", 3, map[string]string{})
		if p.MaxPlaceable != 2 || !strings.Contains(p.Message, "didn't match pod affinity rules") {
			t.Errorf("maxPlaceable %d, message %q: want 2 and the affinity reason", p.MaxPlaceable, p.Message)
		}
	})
	t.Run("--topology-key", func(t *testing.T) {
		code, p := f.placeJSON("-l", "gang="+f.ns, "--topology-key", corev1.LabelTopologyZone)
		if code != cmd.ExitOK {
			t.Errorf("exit %d, want 0", code)
		}
		wantPlacement(t, p, "Placed", 3, wantInC)
		checkDomains(t, p)
	})
	t.Run("native PodGroup topology", func(t *testing.T) {
		// The test bed's apiserver runs with TopologyAwareWorkloadScheduling
		// off (alpha in v1.37), so it drops spec.schedulingConstraints from a
		// PodGroup it stores; the constraint is given as a what-if instead,
		// with pods that carry no affinity of their own.
		docs := []string{`apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: zonal
spec:
  schedulingPolicy:
    gang: {minCount: 3}
  schedulingConstraints:
    topology:
    - key: topology.kubernetes.io/zone
`}
		for i := range 3 {
			docs = append(docs, f.gpuPod(fmt.Sprintf("zonal-%d", i)))
		}
		code, p := f.placeJSON("-f", f.file("zonal.yaml", strings.Join(docs, "---\n")))
		if code != cmd.ExitOK {
			t.Errorf("exit %d, want 0", code)
		}
		wantPlacement(t, p, "Placed", 3, map[string]string{f.key("zonal-0"): c[0], f.key("zonal-1"): c[1], f.key("zonal-2"): c[2]})
		checkDomains(t, p)
	})
	t.Run("--prefer-topology-key", func(t *testing.T) {
		// Three members fit in one zone, so they go to the tightest one.
		code, p := f.placeJSON("-f", f.file("three.yaml", f.gpuJob("three", 3)), "--prefer-topology-key", corev1.LabelTopologyZone)
		if code != cmd.ExitOK {
			t.Errorf("exit %d, want 0", code)
		}
		wantPlacement(t, p, "Placed", 3, map[string]string{f.key("three-0"): c[0], f.key("three-1"): c[1], f.key("three-2"): c[2]})
		if p.TopologyKey != corev1.LabelTopologyZone || p.Domain != zone("c") {
			t.Errorf("topologyKey %q domain %q, want %s=%s", p.TopologyKey, p.Domain, corev1.LabelTopologyZone, zone("c"))
		}
		// Five fit in no zone: the whole cluster is tried after all.
		code, p = f.placeJSON("-f", f.file("five.yaml", f.gpuJob("five", 5)), "--prefer-topology-key", corev1.LabelTopologyZone)
		if code != cmd.ExitOK {
			t.Errorf("exit %d, want 0", code)
		}
		wantPlacement(t, p, "Placed", 5, map[string]string{
			f.key("five-0"): a[0], f.key("five-1"): a[1], f.key("five-2"): b[0], f.key("five-3"): b[1], f.key("five-4"): b[2],
		})
		if p.TopologyKey != "" || p.Domain != "" {
			t.Errorf("topologyKey %q domain %q, want neither after the fallback", p.TopologyKey, p.Domain)
		}
	})
}

// TestGangReleasingMemberDoesNotCount deletes a running member that cannot go
// yet (a finalizer holds it, as a kubelet would while the container stops).
// Volcano counts such a Releasing task neither as valid nor as ready, and
// admit's validity check agrees; placement must not count it toward the
// minimum either, or place says yes to a gang that is losing a member.
func TestGangReleasingMemberDoesNotCount(t *testing.T) {
	f := newGangFixture(t, "releasing")
	n := f.nodes(2)
	f.nativePodGroup("pg", 2)
	leaving := f.pod("pg-0", wholeNode).PodGroup("pg").Node(n[0]).Obj()
	leaving.Finalizers = []string{"example.com/hold"}
	f.create(leaving)
	f.create(f.pod("pg-1", wholeNode).PodGroup("pg").Obj())
	pods := env.Clientset().CoreV1().Pods(f.ns)
	f.must(pods.Delete(f.ctx, "pg-0", metav1.DeleteOptions{}))
	t.Cleanup(func() {
		_, _ = pods.Patch(context.Background(), "pg-0", "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	if got, err := pods.Get(f.ctx, "pg-0", metav1.GetOptions{}); err != nil || got.DeletionTimestamp == nil {
		t.Fatalf("pg-0 is not terminating: %v", err)
	}

	code, a := f.admitJSON("podgroup/pg")
	if v := a.check(t, "Validity"); v.Result != "Failed" || v.Message != "minCount (2) cannot be satisfied: 1 member(s) can count (the others failed or are being deleted)" {
		t.Errorf("validity check %+v, want 1 valid of 2", v)
	}
	if code != cmd.ExitNo {
		t.Errorf("admit exit %d, want 3", code)
	}
	code, p := f.placeJSON("podgroup/pg")
	if code != cmd.ExitNo || p.Verdict != "Unschedulable" {
		t.Errorf("place exit %d verdict %q running %+v (message %q): want 3 and Unschedulable, pg-0 is leaving",
			code, p.Verdict, p.Running, p.Message)
	}
}

func TestGangAdmitValidity(t *testing.T) {
	f := newGangFixture(t, "validity")
	f.nodes(3)
	f.nativePodGroup("short", 3)
	f.create(f.pod("short-0", wholeNode).PodGroup("short").SchedulingGate(gangGate).Obj())
	f.create(f.pod("short-1", wholeNode).PodGroup("short").SchedulingGate(gangGate).Obj())

	code, a := f.admitJSON("podgroup/short", "--ungate", gangGate)
	if code != cmd.ExitNo {
		t.Errorf("exit %d, want 3", code)
	}
	if a.Kind != "Admission" || a.Admitted {
		t.Errorf("kind %q admitted %v, want a rejected Admission", a.Kind, a.Admitted)
	}
	v := a.check(t, "Validity")
	want := checkJSON{Name: "Validity", Result: "Failed", Reason: "NotEnoughPods",
		Message: "waiting for minCount pods from a gang to appear in scheduling queue (minCount 3, 2 member(s) exist, 1 do not)",
		Figures: map[string]string{"valid": "2", "minMember": "3"}}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("validity check (-want +got):\n%s", diff)
	}
	if a.Ungate != nil {
		t.Errorf("a rejected gang was ungated: %+v", a.Ungate)
	}
	for _, pod := range []string{"short-0", "short-1"} {
		if diff := cmp.Diff([]string{gangGate}, f.podGates(pod)); diff != "" {
			t.Errorf("gates of %s after a rejection (-want +got):\n%s", pod, diff)
		}
	}

	code, out, stderr := f.run("admit", "podgroup/short")
	if code != cmd.ExitNo || withoutWarnings(stderr) != "" {
		t.Errorf("exit %d, stderr %q: want 3 and nothing", code, stderr)
	}
	if !strings.HasPrefix(out, fmt.Sprintf("Rejected: gang %s/short (scheduling.k8s.io)\n", f.ns)) ||
		!strings.Contains(out, "waiting for minCount pods from a gang to appear in scheduling queue (minCount 3, 2 member(s) exist, 1 do not)") {
		t.Errorf("human output lacks the verdict or the validity message:\n%s", out)
	}
}

// quota creates a ResourceQuota and writes its status: no
// kube-controller-manager runs in the test bed, so nothing else would, and
// both the apiserver's quota admission and kubectl-gang read hard and used
// from the status. It waits until the apiserver's quota admission sees the
// status (it reads quotas from an informer).
func (f *gangFixture) quota(name string, spec corev1.ResourceQuotaSpec, used testutil.Res) {
	f.t.Helper()
	quotas := env.Clientset().CoreV1().ResourceQuotas(f.ns)
	q, err := quotas.Create(f.ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{})
	f.must(err)
	q.Status = corev1.ResourceQuotaStatus{Hard: spec.Hard.DeepCopy(), Used: used.List()}
	_, err = quotas.UpdateStatus(f.ctx, q, metav1.UpdateOptions{})
	f.must(err)
}

// dryRunCreate creates the pod of a manifest with dryRun=All and returns the
// apiserver's error: what its quota admission says about it. It retries
// while the error is quota admission's "status unknown" (its informer has not
// seen the status yet).
func (f *gangFixture) dryRunCreate(manifest string) error {
	f.t.Helper()
	pod := &corev1.Pod{}
	f.must(yaml.Unmarshal([]byte(manifest), pod))
	var err error
	for range 100 {
		_, err = env.Clientset().CoreV1().Pods(f.ns).Create(f.ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil || !strings.Contains(err.Error(), "status unknown for quota") {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

func TestGangAdmitResourceQuota(t *testing.T) {
	// Pods of four GPUs: two fit on a node.
	const fourGPUs = `{requests: {cpu: "2", memory: 16Gi, nvidia.com/gpu: "4"}, limits: {nvidia.com/gpu: "4"}}`
	gpus := corev1.ResourceQuotaSpec{Hard: testutil.Res{"requests.nvidia.com/gpu": "16"}.List()}

	t.Run("requests", func(t *testing.T) {
		f := newGangFixture(t, "quota")
		f.nodes(2)
		f.quota("gpus", gpus, testutil.Res{"requests.nvidia.com/gpu": "8"}) // 8 of 16 GPUs used

		t.Run("exceeded", func(t *testing.T) {
			// Four pods of four GPUs: 16 GPUs with 8 left in the quota. The
			// nodes hold them, so only the quota says no.
			code, a := f.admitJSON("-f", f.file("job.yaml", f.job("big", 4, fourGPUs)))
			if code != cmd.ExitNo || a.Admitted {
				t.Errorf("exit %d admitted %v, want 3 and rejected", code, a.Admitted)
			}
			want := checkJSON{Name: "ResourceQuota", Result: "Failed", Reason: "QuotaExceeded",
				Message: "exceeded quota: gpus, requested: requests.nvidia.com/gpu=16, used: requests.nvidia.com/gpu=8, limited: requests.nvidia.com/gpu=16",
				Figures: map[string]string{"gpus/requests.nvidia.com/gpu": "used 8 + 16 of 16"}}
			if diff := cmp.Diff(want, a.check(t, "ResourceQuota")); diff != "" {
				t.Errorf("quota check (-want +got):\n%s", diff)
			}
			if c := a.check(t, "Placement"); c.Result != "Passed" {
				t.Errorf("placement check %+v, want passed: only the quota is short", c)
			}
		})
		t.Run("within", func(t *testing.T) {
			code, a := f.admitJSON("-f", f.file("job.yaml", f.job("small", 2, fourGPUs)))
			if code != cmd.ExitOK || !a.Admitted {
				t.Errorf("exit %d admitted %v, want 0 and admitted; checks %+v", code, a.Admitted, a.Checks)
			}
			if c := a.check(t, "ResourceQuota"); c.Result != "Passed" || c.Figures["gpus/requests.nvidia.com/gpu"] != "used 8 + 8 of 16" {
				t.Errorf("quota check %+v, want passed with used 8 + 8 of 16", c)
			}
		})
		t.Run("as the apiserver words it", func(t *testing.T) {
			// One pod of twelve GPUs, which the apiserver's own quota
			// admission refuses: kubectl-gang says no in the same words.
			pod := f.podManifest("twelve", `{requests: {nvidia.com/gpu: "12"}, limits: {nvidia.com/gpu: "12"}}`)
			err := f.dryRunCreate(pod)
			if err == nil {
				t.Fatal("the apiserver admitted a pod beyond the quota")
			}
			_, apiserver, _ := strings.Cut(err.Error(), "is forbidden: ")
			_, a := f.admitJSON("-f", f.file("pod.yaml", pod))
			if got := a.check(t, "ResourceQuota").Message; got != apiserver {
				t.Errorf("kubectl-gang: %q\napiserver:    %q", got, apiserver)
			}
		})
	})

	t.Run("limits", func(t *testing.T) {
		// A quota on limits.memory charges the pods' memory limits.
		f := newGangFixture(t, "quota-limits")
		f.nodes(2)
		f.quota("mem", corev1.ResourceQuotaSpec{Hard: testutil.Res{"limits.memory": "48Gi"}.List()}, testutil.Res{"limits.memory": "0"})
		pod := f.podManifest("big", `{requests: {memory: 16Gi}, limits: {memory: 64Gi}}`)
		err := f.dryRunCreate(pod)
		if err == nil || !strings.Contains(err.Error(), "exceeded quota: mem") {
			t.Fatalf("the apiserver's quota admission: %v, want it to refuse 64Gi of limits.memory", err)
		}
		_, apiserver, _ := strings.Cut(err.Error(), "is forbidden: ")
		code, a := f.admitJSON("-f", f.file("pod.yaml", pod))
		c := a.check(t, "ResourceQuota")
		if code != cmd.ExitNo || c.Result != "Failed" || c.Message != apiserver {
			t.Errorf("exit %d, quota check %+v: want 3 and %q, as the apiserver refuses the pod", code, c, apiserver)
		}
	})

	t.Run("scoped to another priority class", func(t *testing.T) {
		// A quota that only covers pods of one PriorityClass does not charge
		// pods of another, however little room it has.
		f := newGangFixture(t, "quota-scoped")
		f.nodes(2)
		f.quota("high-gpus", corev1.ResourceQuotaSpec{
			Hard: testutil.Res{"requests.nvidia.com/gpu": "0"}.List(),
			ScopeSelector: &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{
				ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{f.ns + "-high"}}}},
		}, testutil.Res{"requests.nvidia.com/gpu": "0"})
		if err := f.dryRunCreate(f.podManifest("probe", fourGPUs)); err != nil {
			t.Fatalf("the apiserver refuses a pod the quota does not cover: %v", err)
		}
		code, a := f.admitJSON("-f", f.file("job.yaml", f.job("low", 2, fourGPUs)))
		if c := a.check(t, "ResourceQuota"); c.Result == "Failed" {
			t.Errorf("quota check %+v, want it to pass: the quota covers only PriorityClass %s-high", c, f.ns)
		}
		if code != cmd.ExitOK {
			t.Errorf("exit %d, want 0", code)
		}
	})
}

func TestGangAdmitVolcanoQueue(t *testing.T) {
	f := newGangFixture(t, "queue")
	// Four nodes (32 GPUs): both groups' pending members count in their
	// queues' requests, so proportion divides the cluster between the two
	// queues (weights 1:1); with 16 GPUs each gets 8 and neither group
	// would start (TestVolcanoQueuesShareTheCluster, pkg/cmd).
	f.nodes(4)
	for _, capability := range []string{"8", "16"} {
		f.createObject(volcanoQueues, testutil.MakeVolcanoQueue(f.ns+"-gpu"+capability).
			Capability(testutil.Res{"nvidia.com/gpu": capability}).Obj())
	}
	// Two groups of two whole-node members each, minResources 16 GPUs: one
	// in a queue capped at 8 GPUs, one in a queue of 16.
	for _, capability := range []string{"8", "16"} {
		name := "in" + capability
		f.createObject(volcanoPodGroups, testutil.MakeVolcanoPodGroup(f.ns, name, 2).Queue(f.ns+"-gpu"+capability).
			MinResources(testutil.Res{"nvidia.com/gpu": "16"}).Obj())
		for i := range 2 {
			f.create(f.pod(fmt.Sprintf("%s-%d", name, i), wholeNode).VolcanoGroup(name).Obj())
		}
	}

	t.Run("capability too small", func(t *testing.T) {
		code, a := f.admitJSON("podgroup/in8")
		if code != cmd.ExitNo || a.Admitted {
			t.Errorf("exit %d admitted %v, want 3 and rejected", code, a.Admitted)
		}
		c := a.check(t, "VolcanoQueue")
		if c.Result != "Failed" || c.Reason != "QueueInsufficient" ||
			c.Message != "queue resource quota insufficient: insufficient nvidia.com/gpu; to fix: raise queue "+f.ns+"-gpu8's capability by nvidia.com/gpu=8" {
			t.Errorf("queue check %+v, want Volcano's QueueInsufficient message and by how much the capability falls short", c)
		}
		if c.Figures["queue"] != f.ns+"-gpu8" || !strings.Contains(c.Figures["queueCapability"], "nvidia.com/gpu=8") ||
			c.Figures["minResources"] != "nvidia.com/gpu=16" {
			t.Errorf("queue figures %v, want the queue, its 8-GPU capability and the 16-GPU minResources", c.Figures)
		}
		if p := a.check(t, "Placement"); p.Result != "Passed" {
			t.Errorf("placement check %+v, want passed: only the queue is short", p)
		}
	})
	t.Run("capability enough", func(t *testing.T) {
		code, a := f.admitJSON("podgroup/in16")
		if code != cmd.ExitOK || !a.Admitted {
			t.Errorf("exit %d admitted %v, want 0 and admitted; checks %+v", code, a.Admitted, a.Checks)
		}
		if c := a.check(t, "VolcanoQueue"); c.Result != "Passed" {
			t.Errorf("queue check %+v, want passed", c)
		}
	})
}

func TestGangAdmitCoschedulingMinResources(t *testing.T) {
	f := newGangFixture(t, "minres")
	// Coscheduling sums free capacity over every node of the cluster, so the
	// group asks for a resource only this test's nodes offer: 2 + 2 of it.
	const fpga = "gangtest.kubectl-gang.io/fpga"
	for i := range 2 {
		f.node(fmt.Sprintf("n%d", i), testutil.Res{"cpu": "32", "memory": "256Gi", fpga: "2", "pods": "110"})
	}
	f.createObject(coschedulingPodGroups, testutil.MakeCoschedulingPodGroup(f.ns, "fpgas", 2).
		MinResources(testutil.Res{fpga: "10"}).Obj())
	f.createObject(coschedulingPodGroups, testutil.MakeCoschedulingPodGroup(f.ns, "fits", 2).
		MinResources(testutil.Res{fpga: "4"}).Obj())
	for _, group := range []string{"fpgas", "fits"} {
		for i := range 2 {
			f.create(f.pod(fmt.Sprintf("%s-%d", group, i), testutil.Res{"cpu": "1", "memory": "1Gi", fpga: "1"}).CoschedulingGroup(group).Obj())
		}
	}

	t.Run("gap", func(t *testing.T) {
		code, a := f.admitJSON("podgroup/fpgas")
		if code != cmd.ExitNo || a.Admitted {
			t.Errorf("exit %d admitted %v, want 3 and rejected", code, a.Admitted)
		}
		c := a.check(t, "MinResources")
		if c.Result != "Failed" || c.Reason != "ResourceGap" || !strings.HasPrefix(c.SchedulerMessage, "resource gap: ") || !strings.Contains(c.SchedulerMessage, fpga) {
			t.Errorf("minResources check %+v, want coscheduling's resource gap in %s", c, fpga)
		}
		// For people, the figures as kubectl prints quantities; no Go struct.
		if !strings.Contains(c.Message, fpga+" need 10, free 4, short 6") || strings.Contains(c.Message, "{{") {
			t.Errorf("minResources message %q, want need, free and short %s as quantities", c.Message, fpga)
		}
		if !strings.Contains(c.Figures["free"], fpga+"=4") || !strings.Contains(c.Figures["requested"], fpga+"=10") {
			t.Errorf("figures %v, want 4 free and 10 requested", c.Figures)
		}
		if p := a.check(t, "Placement"); p.Result != "Passed" {
			t.Errorf("placement check %+v, want passed: the members fit, the group's minResources do not", p)
		}
		// place, explain and bind apply the gate as coscheduling does: its
		// PreFilter refuses the group, so nothing is placed or bound.
		code, p := f.placeJSON("podgroup/fpgas")
		if code != cmd.ExitNo || p.Verdict != "Unschedulable" || !strings.Contains(p.Message, "held back by CoschedulingPreFilter (ResourceGap)") {
			t.Errorf("place: exit %d, %s: %s; want 3, Unschedulable, held back by coscheduling's PreFilter", code, p.Verdict, p.Message)
		}
		code, out, _ := f.run("explain", "podgroup/fpgas")
		if code != cmd.ExitNo || !strings.HasPrefix(out, "Unschedulable: ") || !strings.Contains(out, fpga+" need 10, free 4, short 6") ||
			!strings.Contains(out, "every member fits, but CoschedulingPreFilter holds the gang back") {
			t.Errorf("explain: exit %d:\n%s", code, out)
		}
		code, r := f.bind("", "podgroup/fpgas")
		if code != cmd.ExitNo || r.Verdict != "NotBound" || r.Reason != "Unschedulable" {
			t.Errorf("bind: exit %d, report %+v; want 3, NotBound (Unschedulable)", code, r)
		}
	})
	t.Run("fits", func(t *testing.T) {
		code, a := f.admitJSON("podgroup/fits")
		if code != cmd.ExitOK || !a.Admitted {
			t.Errorf("exit %d admitted %v, want 0 and admitted; checks %+v", code, a.Admitted, a.Checks)
		}
	})
}

// proxiedKubeconfig returns a kubeconfig for a plain-HTTP proxy in front of
// the test bed's apiserver (as the admin user) that calls intercept with each
// request before forwarding it, so a test can change the cluster at an exact
// point of a command's conversation with it.
func proxiedKubeconfig(t *testing.T, namespace string, intercept func(*http.Request)) string {
	t.Helper()
	return faultKubeconfig(t, namespace, func(w http.ResponseWriter, r *http.Request, forward func(http.ResponseWriter)) {
		intercept(r)
		forward(w)
	})
}

// touch changes a pod (a label), giving it a new resourceVersion.
func (f *gangFixture) touch(name string) {
	_, err := env.Clientset().CoreV1().Pods(f.ns).Patch(context.WithoutCancel(f.ctx), name, "application/merge-patch+json",
		[]byte(`{"metadata":{"labels":{"touched":"true"}}}`), metav1.PatchOptions{})
	if err != nil {
		f.t.Errorf("touching pod %s: %v", name, err)
	}
}

func TestGangAdmitUngate(t *testing.T) {
	f := newGangFixture(t, "ungate")
	f.nodes(3)
	f.nativePodGroup("release", 3)
	f.create(f.pod("rel-0", wholeNode).PodGroup("release").SchedulingGate(gangGate).SchedulingGate(keepGate).Obj())
	f.create(f.pod("rel-1", wholeNode).PodGroup("release").SchedulingGate(gangGate).Obj())
	f.create(f.pod("rel-2", wholeNode).PodGroup("release").Obj())

	// No scheduler runs in the test bed: rel-1, released, is not bound
	// within the wait (rel-0 keeps another gate and is not waited for).
	code, a := f.admitJSON("podgroup/release", "--ungate", gangGate, "--wait-bound=1s")
	if code != cmd.ExitOK || !a.Admitted {
		t.Fatalf("exit %d admitted %v, want 0 and admitted; checks %+v", code, a.Admitted, a.Checks)
	}
	if a.Ungate == nil {
		t.Fatal("no ungate report")
	}
	if a.Ungate.Gate != gangGate || !slices.Equal(a.Ungate.Ungated, []string{f.key("rel-0"), f.key("rel-1")}) ||
		!slices.Equal(a.Ungate.Untouched, []string{f.key("rel-2")}) || len(a.Ungate.Changed) != 0 ||
		!slices.Equal(a.Ungate.NotBoundYet, []string{f.key("rel-1")}) || len(a.Ungate.Bound) != 0 {
		t.Errorf("ungate report %+v, want rel-0 and rel-1 ungated, rel-2 untouched, rel-1 not bound yet", *a.Ungate)
	}
	for pod, want := range map[string][]string{"rel-0": {keepGate}, "rel-1": nil, "rel-2": nil} {
		if diff := cmp.Diff(want, f.podGates(pod)); diff != "" {
			t.Errorf("gates of %s read back (-want +got):\n%s", pod, diff)
		}
	}
}

// TestGangAdmitUngateConflict changes a member behind admit's back. The
// command refuses --ungate with --snapshot (it writes to the cluster), so a
// stale snapshot cannot be handed to it from a file; instead a proxy changes
// a member at the exact moment the command talks to the API server: after
// it read the snapshot and decided, either while it re-reads the members or
// at its first update.
func TestGangAdmitUngateConflict(t *testing.T) {
	f := newGangFixture(t, "conflict")
	f.nodes(2)
	f.nativePodGroup("pair", 2)
	f.create(f.pod("pair-0", wholeNode).PodGroup("pair").SchedulingGate(gangGate).Obj())
	f.create(f.pod("pair-1", wholeNode).PodGroup("pair").SchedulingGate(gangGate).Obj())
	podPath := "/api/v1/namespaces/" + f.ns + "/pods/"
	wantGated := func(t *testing.T) {
		t.Helper()
		for _, pod := range []string{"pair-0", "pair-1"} {
			if diff := cmp.Diff([]string{gangGate}, f.podGates(pod)); diff != "" {
				t.Errorf("gates of %s after a conflict (-want +got):\n%s", pod, diff)
			}
		}
	}

	t.Run("offline snapshot refused", func(t *testing.T) {
		code, out, stderr := runCLI(t, "", "admit", "podgroup/pair", "-n", f.ns, "--ungate", gangGate, "--snapshot", "../../examples/gpu-cluster.yaml")
		wantOneErrorLine(t, code, out, stderr, "--ungate writes to the cluster; it cannot be used with --snapshot")
	})

	t.Run("changed before the check", func(t *testing.T) {
		var once sync.Once
		kubeconfig := proxiedKubeconfig(t, f.ns, func(r *http.Request) {
			// The first GET of a single member comes after the snapshot
			// (LISTs) and the decision: pair-1 changes then.
			if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, podPath) {
				once.Do(func() { f.touch("pair-1") })
			}
		})
		code, out, stderr := runCLI(t, "", "admit", "podgroup/pair", "--ungate", gangGate, "--kubeconfig", kubeconfig)
		if code != cmd.ExitNo {
			t.Errorf("exit %d, want 3 (stderr %q)", code, stderr)
		}
		want := fmt.Sprintf("Gate %s: nothing more removed: 1 member(s) changed since the snapshot: %s\n", gangGate, f.key("pair-1"))
		if !strings.HasPrefix(out, "Admitted: ") || !strings.HasSuffix(out, want) {
			t.Errorf("output does not end with %q:\n%s", want, out)
		}
		wantGated(t)
	})

	t.Run("changed before the update", func(t *testing.T) {
		var mu sync.Mutex
		var touched string
		kubeconfig := proxiedKubeconfig(t, f.ns, func(r *http.Request) {
			// The first update: its member changes just before it arrives.
			mu.Lock()
			defer mu.Unlock()
			if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, podPath) && touched == "" {
				touched = strings.TrimPrefix(r.URL.Path, podPath)
				f.touch(touched)
			}
		})
		code, out, stderr := runCLI(t, "", "admit", "podgroup/pair", "--ungate", gangGate, "--kubeconfig", kubeconfig, "-o", "json")
		var a admissionJSON
		decodeVerdict(t, code, out, stderr, &a)
		if code != cmd.ExitNo {
			t.Errorf("exit %d, want 3", code)
		}
		mu.Lock()
		defer mu.Unlock()
		if touched == "" {
			t.Fatal("the command sent no update")
		}
		if !a.Admitted || a.Ungate == nil || !slices.Equal(a.Ungate.Changed, []string{f.key(touched)}) || len(a.Ungate.Ungated) != 0 {
			t.Errorf("admitted %v, ungate report %+v: want %s changed and nothing ungated", a.Admitted, a.Ungate, touched)
		}
		wantGated(t)
	})

	t.Run("then released", func(t *testing.T) {
		code, a := f.admitJSON("podgroup/pair", "--ungate", gangGate, "--wait-bound=0")
		if code != cmd.ExitOK || a.Ungate == nil || len(a.Ungate.Ungated) != 2 {
			t.Errorf("exit %d, ungate report %+v: want both members ungated", code, a.Ungate)
		}
		for _, pod := range []string{"pair-0", "pair-1"} {
			if gates := f.podGates(pod); len(gates) != 0 {
				t.Errorf("gates of %s: %v, want none", pod, gates)
			}
		}
	})
}

// TestGangAdmitUnreadableKinds runs admit as a user who may read what the
// pipeline needs and the PodGroups, but neither Volcano Queues nor
// ResourceQuotas. The snapshot warns that it has none of them; admit must
// not then report them as absent: the queue exists (and has room), and so
// does a quota (with none), so "queue not found" and "has no ResourceQuota"
// would both be wrong. Not knowing is "not evaluated", never a verdict.
func TestGangAdmitUnreadableKinds(t *testing.T) {
	f := newGangFixture(t, "unreadable")
	f.nodes(1)
	f.createObject(volcanoQueues, testutil.MakeVolcanoQueue(f.ns+"-q").Capability(testutil.Res{"nvidia.com/gpu": "64"}).Obj())
	f.createObject(volcanoPodGroups, testutil.MakeVolcanoPodGroup(f.ns, "vq", 1).Queue(f.ns+"-q").Obj())
	f.create(f.pod("vq-0", small).VolcanoGroup("vq").Obj())
	f.quota("none", corev1.ResourceQuotaSpec{Hard: testutil.Res{"requests.cpu": "0"}.List()}, testutil.Res{"requests.cpu": "0"})

	user := f.ns + "-reader"
	cs := env.Clientset()
	_, err := cs.RbacV1().ClusterRoles().Create(f.ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes", "pods", "namespaces"}, Verbs: []string{"list"}},
			{APIGroups: []string{"scheduling.k8s.io"}, Resources: []string{"priorityclasses", "podgroups"}, Verbs: []string{"list"}},
			{APIGroups: []string{"scheduling.volcano.sh", "scheduling.x-k8s.io"}, Resources: []string{"podgroups"}, Verbs: []string{"list"}},
		},
	}, metav1.CreateOptions{})
	f.must(err)
	_, err = cs.RbacV1().ClusterRoleBindings().Create(f.ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: user}},
	}, metav1.CreateOptions{})
	f.must(err)

	code, a := f.admitJSON("podgroup/vq")
	if code != cmd.ExitOK {
		t.Fatalf("as admin: exit %d, checks %+v: want the gang admitted", code, a.Checks)
	}

	// The admin kubeconfig, impersonating the reader (RBAC takes a moment to
	// see the new binding).
	var out, stderr string
	for range 100 {
		code, out, stderr = f.run("admit", "podgroup/vq", "-o", "json", "--as", user)
		if code != cmd.ExitError {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, want := range []string{"Warning: cannot list queues.scheduling.volcano.sh (Forbidden)",
		"Warning: cannot list resourcequotas in every namespace (Forbidden), nor in namespace(s) " + f.ns} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	var asReader admissionJSON
	if err := json.Unmarshal([]byte(out), &asReader); err != nil {
		t.Fatalf("exit %d, stdout is not JSON: %v\n%s\nstderr: %s", code, err, out, stderr)
	}
	if c := asReader.check(t, "VolcanoQueue"); c.Result == "Failed" {
		t.Errorf("queue check %+v: the queue exists, the user may only not read it", c)
	}
	if c := asReader.check(t, "ResourceQuota"); strings.Contains(c.Message, "has no ResourceQuota") {
		t.Errorf("quota check %+v: the namespace has a quota, the user may only not read it", c)
	}
}

func TestGangBadInput(t *testing.T) {
	f := newGangFixture(t, "badinput")
	f.nodes(1)
	f.nativePodGroup("real", 1)
	f.create(f.pod("real-0", small).PodGroup("real").Obj())

	missing := filepath.Join(t.TempDir(), "missing.yaml")
	syntax := f.file("syntax.yaml", f.gpuPod("ok")+"---\napiVersion: v1\nkind: Pod\nmetadata: {name: [}\n")
	noKind := f.file("nokind.yaml", f.gpuPod("ok")+"---\nmetadata:\n  name: anonymous\n")
	unsupported := f.file("service.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n")

	tests := []struct {
		name string
		args []string
		want []string // parts of the one error line
	}{
		{"unknown podgroup", []string{"place", "podgroup/nope"},
			[]string{fmt.Sprintf(`error: podgroups "nope" not found in namespace %q; PodGroups in the snapshot: `, f.ns)}},
		{"unknown podgroup of a group", []string{"admit", "podgroups.scheduling.x-k8s.io/real"},
			[]string{fmt.Sprintf(`error: podgroups.scheduling.x-k8s.io "real" not found in namespace %q`, f.ns)}},
		{"selector matches nothing", []string{"place", "-l", "app=nothing-here"},
			[]string{fmt.Sprintf(`error: no pods match selector "app=nothing-here" in namespace %q`, f.ns)}},
		{"missing file", []string{"place", "-f", missing}, []string{"error: " + missing + ": no such file"}},
		// The line number is go-yaml's, which for a parser error such as
		// this one is the line before the bad one (for a scanner error, the
		// bad line itself); so only the file and the problem are checked.
		{"YAML syntax error", []string{"admit", "-f", syntax}, []string{"error: " + syntax + ":", ": invalid YAML: did not find expected node content"}},
		{"document without kind", []string{"place", "-f", noKind},
			[]string{fmt.Sprintf("error: %s: document 2 (line %d): not a Kubernetes object: apiVersion and kind are required",
				noKind, strings.Count(f.gpuPod("ok"), "\n")+2)}},
		{"unsupported kind", []string{"place", "-f", unsupported}, []string{"error: " + unsupported + `: Service "web": kind Service of v1 is not supported with -f`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := f.run(tt.args...)
			wantOneErrorLine(t, code, out, stderr, tt.want...)
		})
	}
}

// TestGangErrorIsTheOnlyLine holds place and admit to docs/design.md's promise for
// bad input: "one clear line naming the problem". On a cluster that serves
// native PodGroups at scheduling.k8s.io/v1beta1 (any v1.37 cluster with
// GenericWorkload on), the snapshot's own LIST of them draws the apiserver's
// deprecation warning, and the command prints it before its error, about a
// version the user never chose.
func TestGangErrorIsTheOnlyLine(t *testing.T) {
	f := newGangFixture(t, "oneline")
	for _, verb := range []string{"place", "admit"} {
		t.Run(verb, func(t *testing.T) {
			code, out, stderr := f.run(verb, "podgroup/nope")
			if code != cmd.ExitUsage || out != "" {
				t.Errorf("exit %d, stdout %q: want 2 and nothing", code, out)
			}
			if !strings.HasPrefix(stderr, "error: ") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr is not one error line:\n%s", stderr)
			}
		})
	}
}

// The API server is the judge of what a pod may be (issue #42): for pods
// with names, labels and placement fields it takes or refuses, `place -f`
// refuses (exit 2, one line) exactly those the server's dry run refuses,
// and places the others. Each case changes one field of a valid pod.
func TestGangFieldValidationAgreesWithTheAPIServer(t *testing.T) {
	f := newGangFixture(t, "field-validation")
	f.nodes(1)
	for _, tc := range []struct{ name, meta, spec string }{
		{"valid", "", ""},
		{"uppercase name", "name: Bad_Name", ""},
		{"a name of 300 characters", "name: " + strings.Repeat("a", 300), ""},
		{"a dotted name", "name: trainer-0.a", ""},
		{"label value of 300 characters", "labels: {app: " + strings.Repeat("a", 300) + "}", ""},
		{"label key with a prefix", "labels: {example.com/role: worker}", ""},
		{"label key with two slashes", "labels: {a/b/c: x}", ""},
		{"annotation key", `annotations: {"not a key": x}`, ""},
		{"node affinity operator Near", "", "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: Near, values: [a]}]}]}}}"},
		{"node affinity In without values", "", "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In}]}]}}}"},
		{"preferred affinity with an invalid value", "", "affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 5, preference: {matchExpressions: [{key: zone, operator: In, values: [a b]}]}}]}}"},
		{"preferred affinity weight 0", "", "affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 0, preference: {matchExpressions: [{key: zone, operator: In, values: [a]}]}}]}}"},
		{"pod anti-affinity without a topology key", "", "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: x}}}]}}"},
		{"toleration Equals", "", "tolerations: [{key: gpu, operator: Equals, value: x}]"},
		{"toleration effect", "", "tolerations: [{key: gpu, operator: Exists, effect: NoScheduling}]"},
		{"spread whenUnsatisfiable", "", "topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedul}]"},
		{"spread maxSkew 0", "", "topologySpreadConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]"},
		{"node selector value", "", "nodeSelector: {zone: a/b}"},
		{"any scheduler name", "", `schedulerName: "My Scheduler"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := "name: p"
			if strings.HasPrefix(tc.meta, "name:") {
				meta = tc.meta
			} else if tc.meta != "" {
				meta += "\n  " + tc.meta
			}
			manifest := fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  %s\n  namespace: %s\nspec:\n  containers: [{name: c, image: x}]\n", meta, f.ns)
			if tc.spec != "" {
				manifest += "  " + tc.spec + "\n"
			}
			serverErr := f.dryRunCreate(manifest)
			code, out, stderr := f.run("place", "-f", f.file("pod.yaml", manifest))
			switch {
			case serverErr != nil && !apierrors.IsInvalid(serverErr):
				t.Fatalf("the server's dry run: %v", serverErr)
			case serverErr != nil:
				wantOneErrorLine(t, code, out, stderr)
			case code != cmd.ExitOK && code != cmd.ExitNo:
				t.Errorf("the server takes it; place: exit %d (not a verdict), stderr %q", code, stderr)
			}
		})
	}
}
