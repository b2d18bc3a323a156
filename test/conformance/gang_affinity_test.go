package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
)

var nativePodGroups = schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1beta1", Resource: "podgroups"}

// gangHold keeps a gang's members out of kube-scheduler's queue until our
// plan is made; removing it, member by member, decides the order in which
// they enter the queue.
const gangHold = "conformance.kubectl-gang.io/gang-hold"

// gangCase is a native gang on nodes of its own.
type gangCase struct {
	name    string
	nodes   []*corev1.Node
	members []*corev1.Pod
	min     int32
	// order: the members' names in the order they enter the queue.
	order []string
}

// TestGangMembersThatNeedEachOther creates native gangs whose members need
// each other (test/testutil.MakeNeedEachOther: a launcher, workers that
// require its zone, refuse to share a node, or spread over zones; random
// names, released in random order), asks `place` for a plan while the
// members are gated, releases them and lets kube-scheduler v1.37.1 decide.
// Its pod-group cycle tries each member once, in queue order
// (podGroupSchedulingDefaultAlgorithm): a plan that is Placed must be
// bound, at least the minimum; a gang that fits only in some orders
// (queueOrder) may be bound or not, never in part; any other no is bound
// nowhere. The hand-written cases are the issue's: the workers need the
// launcher, whatever the names.
func TestGangMembersThatNeedEachOther(t *testing.T) {
	launcher := func(name string) *corev1.Pod {
		return testutil.MakePod().Name(name).Label("role", "launcher").Req(testutil.Res{"cpu": "1", "memory": "1Gi"}).Obj()
	}
	worker := func(name string) *corev1.Pod {
		return testutil.MakePod().Name(name).Label("role", "worker").
			Req(testutil.Res{"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "8"}).
			RequiredPodAffinity(testutil.MakePodAffinityTerm(corev1.LabelTopologyZone).MatchLabel("role", "launcher")).Obj()
	}
	fourNodes := func(prefix string) []*corev1.Node {
		var nodes []*corev1.Node
		for _, n := range []string{"z0-0", "z0-1", "z1-0", "z1-1"} {
			nodes = append(nodes, testutil.MakeNode().Name(prefix+n).Label(corev1.LabelTopologyZone, prefix+n[:2]).
				Capacity(testutil.Res{"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8", "pods": "110"}).Obj())
		}
		return nodes
	}
	cases := []gangCase{
		{name: "ne-workers-first", nodes: fourNodes("ne-wf-"), min: 3,
			members: []*corev1.Pod{worker("a-worker-0"), worker("a-worker-1"), launcher("b-launcher")},
			order:   []string{"a-worker-0", "a-worker-1", "b-launcher"}},
		{name: "ne-launcher-first", nodes: fourNodes("ne-lf-"), min: 3,
			members: []*corev1.Pod{worker("a-worker-0"), worker("a-worker-1"), launcher("0-launcher")},
			order:   []string{"0-launcher", "a-worker-0", "a-worker-1"}},
	}
	for seed := uint64(1); seed <= uint64(envCount(t, "CONFORMANCE_GANG_SCENARIOS", 10)); seed++ {
		r := rand.New(rand.NewPCG(seed, 0x9a6))
		ns := fmt.Sprintf("ne-%d", seed)
		ne := testutil.MakeNeedEachOther(r, "", ns+"-")
		c := gangCase{name: ns, nodes: ne.Nodes, members: ne.Members, min: ne.Min}
		for _, i := range r.Perm(len(ne.Members)) {
			c.order = append(c.order, ne.Members[i].Name)
		}
		t.Logf("%s: %s, minimum %d", ns, ne.Shape, ne.Min)
		cases = append(cases, c)
	}
	seen := map[string]int{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, bound, msgs := playGang(t, c)
			outcome := plan.Verdict
			if plan.QueueOrder != nil {
				outcome = "QueueOrder"
			}
			seen[outcome]++
			t.Logf("ours: %s, %d planned, %d placed later: %s\nkube-scheduler bound %d: %q", plan.Verdict, len(plan.Assignments), len(plan.PlacedLater), plan.Message, bound, msgs)
			switch {
			case plan.Verdict == "Placed" && bound < int(c.min):
				t.Errorf("ours Placed (%d planned); kube-scheduler bound %d of minimum %d", len(plan.Assignments), bound, c.min)
			case plan.Verdict != "Placed" && plan.QueueOrder == nil && bound > 0:
				t.Errorf("ours %s without a queue-order risk; kube-scheduler bound %d", plan.Verdict, bound)
			case bound > 0 && bound < int(c.min):
				t.Errorf("kube-scheduler bound %d of minimum %d: a gang in part", bound, c.min)
			}
			if strings.HasPrefix(c.name, "ne-workers") || strings.HasPrefix(c.name, "ne-launcher") {
				if plan.QueueOrder == nil || plan.Verdict != "Unschedulable" {
					t.Errorf("the launcher's workers: ours %s (%s), want Unschedulable with the queue-order risk", plan.Verdict, plan.Message)
				}
			}
		})
	}
	t.Logf("outcomes: %v", seen)
	if len(cases) >= 12 && (seen["Placed"] == 0 || seen["QueueOrder"] == 0 || seen["Unschedulable"] == 0) {
		t.Errorf("the scenarios did not cover placed, queue-order and unschedulable gangs: %v", seen)
	}
}

// playGang creates c's nodes and gated members, asks `place` for a plan,
// releases the members in c.order and waits for kube-scheduler to settle.
func playGang(t *testing.T, c gangCase) (*v1alpha1.Placement, int, []string) {
	t.Helper()
	ctx := t.Context()
	cs := env.Clientset()
	ns := "gang-" + c.name
	if _, err := cs.CoreV1().Namespaces().Create(ctx, testutil.MakeNamespace(ns), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	defer cleanupGang(t, ns, &nodes)
	// The case's nodes are its own: a taint keeps other pods off them,
	// and a selector keeps the members on them.
	for _, n := range c.nodes {
		node := n.DeepCopy()
		node.Labels[gangCaseKey] = ns
		node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: gangCaseKey, Value: ns, Effect: corev1.TaintEffectNoSchedule})
		if err := env.CreateNode(ctx, node); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, node.Name)
	}
	pg := testutil.MakeNativePodGroup(ns, "gang", int64(c.min)).Obj()
	if _, err := dynamic.NewForConfigOrDie(env.Config).Resource(nativePodGroups).Namespace(ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, m := range c.members {
		pod := m.DeepCopy()
		pod.Namespace = ns
		pod.Spec.SchedulingGates = append(pod.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: gangHold})
		pod.Spec.NodeSelector = map[string]string{gangCaseKey: ns}
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{Key: gangCaseKey, Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule})
		pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptrTo("gang")}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	code := cmd.Main([]string{"place", "podgroup/gang", "-n", ns, "-o", "json", "--kubeconfig", env.Kubeconfig},
		genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if code != cmd.ExitOK && code != cmd.ExitNo {
		t.Fatalf("place exit %d: %s", code, errOut.String())
	}
	var plan v1alpha1.Placement
	if err := json.Unmarshal(out.Bytes(), &plan); err != nil {
		t.Fatalf("place -o json: %v\n%s", err, out.String())
	}
	// The members are gated while place runs: the verdict to compare is
	// the one once they are released.
	if plan.Verdict != "Gated" {
		t.Errorf("place said %s of gated members, want Gated (%s)", plan.Verdict, plan.Message)
	}
	plan.Verdict = plan.OnceReleased
	for _, name := range c.order {
		patch := []byte(`{"spec":{"schedulingGates":null}}`)
		if _, err := cs.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	bound, msgs := settleGang(t, ns, c.order)
	return &plan, bound, msgs
}

// settleGang waits until kube-scheduler is done with the members
// (testbed.Env.Settle).
func settleGang(t *testing.T, ns string, members []string) (int, []string) {
	t.Helper()
	bound, msgs, err := env.Settle(t.Context(), ns, members, settleFor, 40*time.Second+settleFor)
	if err != nil {
		t.Fatal(err)
	}
	return bound, msgs
}

// cleanupGang deletes the case's PodGroup (its finalizer taken off: no
// controller removes it here), then its pods, nodes and namespace.
func cleanupGang(t *testing.T, ns string, nodes *[]string) {
	ctx := context.WithoutCancel(t.Context())
	pgs := dynamic.NewForConfigOrDie(env.Config).Resource(nativePodGroups).Namespace(ns)
	_, _ = pgs.Patch(ctx, "gang", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	_ = pgs.Delete(ctx, "gang", metav1.DeleteOptions{})
	if err := env.DeleteScenario(ctx, ns, *nodes); err != nil {
		t.Error(err)
	}
}

// settleFor is how long the members' state must hold before the outcome
// is read: a pod-group cycle that fails leaves the group waiting for a
// cluster event, and one that succeeds binds within it.
const settleFor = 3 * time.Second

// gangCaseKey labels and taints a case's nodes.
const gangCaseKey = "conformance.kubectl-gang.io/gang-case"

func ptrTo[T any](v T) *T { return &v }

// envCount reads a count from the environment, def when unset.
func envCount(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q is not a count", name, v)
	}
	return n
}
