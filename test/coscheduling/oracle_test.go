package coscheduling

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/api/v1alpha1"
	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
)

var podGroups = schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}

// hold is the scheduling gate the members are created with, so that
// kubectl-gang reads the cluster before the scheduler acts; it is removed
// once the plan is made, as `admit --ungate` would.
const hold = "kubectl-gang.io/test-hold"

// permitWait is testdata/scheduler-config.yaml's permitWaitingTimeSeconds.
const permitWait = 3 * time.Second

// scenario is one random coscheduling gang on a fresh set of nodes.
type scenario struct {
	seed      uint64
	nodeCPU   []int64 // cores per node
	usedCPU   []int64 // cores a bound pod already takes on each node
	members   int
	minMember int64
	podCPU    int64 // cores per member
	// minCPU is spec.minResources.cpu in cores (0: no minResources).
	minCPU int64
}

func newScenario(seed uint64) scenario {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	s := scenario{seed: seed}
	nodes := 2 + r.IntN(4)
	var free int64
	for range nodes {
		c := []int64{4, 8, 16}[r.IntN(3)]
		used := int64(0)
		if r.IntN(2) == 0 {
			used = r.Int64N(c)
		}
		s.nodeCPU = append(s.nodeCPU, c)
		s.usedCPU = append(s.usedCPU, used)
		free += c - used
	}
	s.members = 2 + r.IntN(6)
	s.minMember = 1 + r.Int64N(int64(s.members))
	s.podCPU = 1 + r.Int64N(6)
	switch r.IntN(4) {
	case 0: // no minResources
	case 1: // what the minimum members request, as users usually write it
		s.minCPU = s.minMember * s.podCPU
	default: // around the cluster's free cpu, on either side of it
		s.minCPU = max(1, free/2+r.Int64N(free))
	}
	return s
}

func (s scenario) String() string {
	return fmt.Sprintf("seed %d: nodes %v cores (used %v), %d members of %d cores, minMember %d, minResources.cpu %d",
		s.seed, s.nodeCPU, s.usedCPU, s.members, s.podCPU, s.minMember, s.minCPU)
}

// TestPlacementAgreesWithCoscheduling creates random coscheduling gangs,
// asks `kubectl gang place` for a plan while the members are still gated,
// then lets scheduler-plugins' Coscheduling schedule them and compares:
// the gang is Placed exactly when Coscheduling binds at least minMember
// members, and then it binds as many as the plan places (every member
// that fits); when the plan blames minResources, Coscheduling's PreFilter
// refuses the group for a resource gap. COSCHEDULING_SCENARIOS changes the
// number of scenarios (12), COSCHEDULING_SEED replays one.
func TestPlacementAgreesWithCoscheduling(t *testing.T) {
	count := envInt(t, "COSCHEDULING_SCENARIOS", 12)
	seeds := make([]uint64, count)
	for i := range seeds {
		seeds[i] = uint64(1000 + i)
	}
	if v := os.Getenv("COSCHEDULING_SEED"); v != "" {
		seeds = []uint64{uint64(envInt(t, "COSCHEDULING_SEED", 0))}
	}
	seen := map[string]int{}
	for _, seed := range seeds {
		s := newScenario(seed)
		verdict, gap := run(t, s)
		seen[verdict]++
		if gap {
			seen["resource gap"]++
		}
	}
	t.Logf("coscheduling: %d scenarios, outcomes %v", len(seeds), seen)
	// The scenarios must exercise both answers and the resource gate.
	if len(seeds) >= 12 && (seen["Placed"] == 0 || seen["Unschedulable"] == 0 || seen["resource gap"] == 0) {
		t.Errorf("the scenarios did not cover placed, unschedulable and resource-gap gangs: %v", seen)
	}
}

// run plays one scenario and compares; it returns our verdict and whether
// the plan blamed minResources.
func run(t *testing.T, s scenario) (string, bool) {
	t.Helper()
	ctx := t.Context()
	cs := env.Clientset()
	ns := fmt.Sprintf("cosched-%d", s.seed)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, testutil.MakeNamespace(ns), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for i, c := range s.nodeCPU {
		name := fmt.Sprintf("%s-n%d", ns, i)
		nodes = append(nodes, name)
		node := testutil.MakeNode().Name(name).Capacity(testutil.Res{"cpu": strconv.FormatInt(c, 10), "memory": "64Gi", "pods": "110"}).Obj()
		if err := env.CreateNode(ctx, node); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing else may stay in the cluster: Coscheduling's minResources
	// check adds up every node's free capacity.
	defer cleanup(t, ns, nodes)
	for i, used := range s.usedCPU {
		if used == 0 {
			continue
		}
		busy := testutil.MakePod().Namespace(ns).Name(fmt.Sprintf("busy-%d", i)).Node(nodes[i]).
			Req(testutil.Res{"cpu": strconv.FormatInt(used, 10)}).Obj()
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, busy, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pg := testutil.MakeCoschedulingPodGroup(ns, "gang", s.minMember)
	if s.minCPU > 0 {
		pg.Field(map[string]any{"cpu": strconv.FormatInt(s.minCPU, 10)}, "minResources")
	}
	if _, err := dynamic.NewForConfigOrDie(env.Config).Resource(podGroups).Namespace(ns).Create(ctx, pg.Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var members []string
	for i := range s.members {
		name := fmt.Sprintf("m-%d", i)
		members = append(members, name)
		pod := testutil.MakePod().Namespace(ns).Name(name).CoschedulingGroup("gang").SchedulingGate(hold).
			Req(testutil.Res{"cpu": strconv.FormatInt(s.podCPU, 10), "memory": "1Gi"}).Obj()
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	var out, errOut bytes.Buffer
	// place reads the configuration the scheduler runs with: the same file
	// is accepted by both, and Coscheduling in it is the source's rules.
	code := cmd.Main([]string{"place", "podgroup/gang", "-n", ns, "-o", "json", "--kubeconfig", env.Kubeconfig, "--scheduler-config", "testdata/scheduler-config.yaml"},
		genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if code != cmd.ExitOK && code != cmd.ExitNo {
		t.Fatalf("%s: place exit %d: %s", s, code, errOut.String())
	}
	var plan v1alpha1.Placement
	if err := json.Unmarshal(out.Bytes(), &plan); err != nil {
		t.Fatalf("%s: place -o json: %v\n%s", s, err, out.String())
	}
	gap := strings.Contains(plan.Message, "(ResourceGap)")

	for _, name := range members {
		patch := []byte(`{"spec":{"schedulingGates":null}}`)
		if _, err := cs.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bound, messages := settle(t, ns, members)

	// The members are gated while place runs: its verdict is Gated, and
	// the plan (assignments, empty when the gang would not fit) is where
	// they go once released.
	if plan.Verdict != "Gated" {
		t.Errorf("%s: place said %s of gated members, want Gated (%s)", s, plan.Verdict, plan.Message)
	}
	verdict := plan.OnceReleased
	placed := verdict == "Placed"
	switch {
	case placed && bound != len(plan.Assignments):
		t.Errorf("%s\nkubectl-gang: Placed, %d member(s) planned; Coscheduling bound %d\n%s", s, len(plan.Assignments), bound, plan.Message)
	case !placed && bound > 0:
		t.Errorf("%s\nkubectl-gang: %s (%s); Coscheduling bound %d", s, verdict, plan.Message, bound)
	case !placed && gap != anyContains(messages, "resource gap"):
		t.Errorf("%s\nkubectl-gang blames minResources: %v (%s)\nCoscheduling's messages: %q", s, gap, plan.Message, messages)
	case gap && ourGap(plan.Message) != theirGap(messages):
		t.Errorf("%s\ncpu short: kubectl-gang %d millicores (%s), Coscheduling %d (%q)", s, ourGap(plan.Message), plan.Message, theirGap(messages), messages)
	}
	return verdict, gap
}

// settle waits until Coscheduling is done with the members: each is bound
// or has PodScheduled=False, and that stays so for longer than Permit
// waits (members waiting at Permit are released or rejected by then). It
// returns how many are bound and the PodScheduled messages of the others.
func settle(t *testing.T, ns string, members []string) (int, []string) {
	t.Helper()
	bound, messages, err := env.Settle(t.Context(), ns, members, permitWait+time.Second, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return bound, messages
}

// cleanup deletes the scenario's pods, nodes and namespace, and waits for
// the pods and nodes to be gone.
func cleanup(t *testing.T, ns string, nodes []string) {
	if err := env.DeleteScenario(context.WithoutCancel(t.Context()), ns, nodes); err != nil {
		t.Fatal(err)
	}
}

var (
	// ourGap reads "cpu need 56, free 39, short 17" from our message.
	ourGapRE = regexp.MustCompile(`cpu need [^,]+, free [^,]+, short ([0-9.]+m?)`)
	// theirGap reads "resource gap: map[cpu:{{17000 -3} ..." from Coscheduling's.
	theirGapRE = regexp.MustCompile(`resource gap: map\[[^]]*cpu:\{\{(-?[0-9]+) (-?[0-9]+)\}`)
)

// ourGap is the cpu our placement says is short, in millicores (-1: none).
func ourGap(message string) int64 {
	m := ourGapRE.FindStringSubmatch(message)
	if m == nil {
		return -1
	}
	q, err := resource.ParseQuantity(m[1])
	if err != nil {
		return -1
	}
	return q.MilliValue()
}

// theirGap is the cpu Coscheduling's PreFilter says is short (a Quantity
// printed as %v: its int64Amount, value times ten to the scale), in
// millicores (-1: none).
func theirGap(messages []string) int64 {
	for _, msg := range messages {
		m := theirGapRE.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		v, _ := strconv.ParseInt(m[1], 10, 64)
		scale, _ := strconv.Atoi(m[2])
		return resource.NewScaledQuantity(v, resource.Scale(scale)).MilliValue()
	}
	return -1
}

func anyContains(messages []string, s string) bool {
	for _, m := range messages {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}
