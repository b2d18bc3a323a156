// Package queue checks the queue simulation of `kubectl gang explain`
// without a subject (docs/design.md#the-queue) against the real
// kube-scheduler: pods and native PodGroups are created while no scheduler
// runs, kubectl-gang simulates the queue, then kube-scheduler starts, finds
// them all at once and binds what it binds. Every entry the simulation says
// starts must be bound whole, and every other one must stay unbound.
package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
	"github.com/kubectl-gang/kubectl-gang/test/testbed"
)

// env is the test bed the package shares; its kube-scheduler runs only
// while a scenario is decided.
var env *testbed.Env

func TestMain(m *testing.M) {
	os.Exit(testbed.RunTests(m, testbed.Options{}, func(e *testbed.Env) { env = e }))
}

// entry is a pending gang (native PodGroup, members whole-node GPU pods) or
// a pod of no gang.
type entry struct {
	name    string
	members int    // 0: a pod of no gang
	class   string // PriorityClass, "" for none
	gpus    string
}

// scenario is a cluster of identical 8-GPU nodes and the entries created,
// in order, while no scheduler runs.
type scenario struct {
	nodes   int
	entries []entry
}

// classes are the scenarios' PriorityClasses. None preempts: with
// preemption a waiting gang of higher priority evicts what started after
// it, which the simulation reports as not verified, not as a start.
// Entries that compete have distinct priorities: among equal ones
// kube-scheduler's order is the time each entered its queue, which its own
// start-up races decide (a PodGroup popped before all its members were
// listed fails and backs off while the next starts), so no snapshot can
// tell it (docs/design.md#the-queue).
var classes = map[string]int32{"low": 100, "mid": 500, "high": 1000, "p1": 110, "p2": 120, "p3": 130, "p4": 140, "p5": 150, "p6": 160, "p7": 170}

// item is the part of the PendingList the test reads.
type item struct {
	Name     string   `json:"name"`
	Position int      `json:"position"`
	Verdict  string   `json:"verdict"`
	Reason   string   `json:"reason"`
	Nodes    []string `json:"nodes"`
	Raced    bool     `json:"raced"`
}

// TestQueueAgreesWithKubeScheduler runs fixed scenarios (the two
// gangs on four nodes; priorities against age; a pod of no gang ahead of a
// gang) and seeded random ones.
func TestQueueAgreesWithKubeScheduler(t *testing.T) {
	ctx := t.Context()
	cs := env.Clientset()
	for name, value := range classes {
		never := corev1.PreemptNever
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, PreemptionPolicy: &never}
		if _, err := cs.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	scenarios := map[string]scenario{
		// The case: judged alone both fit; only one starts, the
		// one of higher priority although it is newer.
		"two-gangs-four-nodes": {nodes: 4, entries: []entry{{name: "first", members: 3, class: "low", gpus: "8"}, {name: "second", members: 3, class: "mid", gpus: "8"}}},
		// A newer gang of higher priority goes first; a pod of no gang of
		// higher priority still takes a node before it.
		"priority-before-age": {nodes: 5, entries: []entry{
			{name: "old", members: 3, class: "low", gpus: "8"},
			{name: "urgent", members: 3, class: "mid", gpus: "8"},
			{name: "hot", class: "high", gpus: "8"},
			{name: "small", class: "low", gpus: "8"},
		}},
		// A gang that cannot start lets smaller ones behind it start.
		"no-head-of-line-blocking": {nodes: 3, entries: []entry{
			{name: "big", members: 4, class: "high", gpus: "8"},
			{name: "mid", members: 2, class: "mid", gpus: "8"},
			{name: "one", class: "p1", gpus: "8"}, {name: "two", gpus: "8"},
		}},
	}
	rng := rand.New(rand.NewPCG(28, 2026))
	for i := range 4 {
		var sc scenario
		sc.nodes = 3 + rng.IntN(4)
		for j := range 3 + rng.IntN(4) {
			e := entry{name: fmt.Sprintf("e%d", j), gpus: []string{"8", "8", "4"}[rng.IntN(3)]}
			if rng.IntN(3) > 0 {
				e.members = 2 + rng.IntN(3)
			}
			e.class = fmt.Sprintf("p%d", j+1)
			sc.entries = append(sc.entries, e)
		}
		// Priorities in random order, none equal.
		rng.Shuffle(len(sc.entries), func(a, b int) { sc.entries[a].class, sc.entries[b].class = sc.entries[b].class, sc.entries[a].class })
		scenarios[fmt.Sprintf("random-%d", i)] = sc
	}
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) { runScenario(t, name, scenarios[name]) })
	}
}

// runs numbers the scenarios run, for their namespaces' names.
var runs int

func runScenario(t *testing.T, name string, sc scenario) {
	ctx := t.Context()
	cs := env.Clientset()
	// The test bed has no namespace controller: a deleted namespace stays
	// Terminating, so every run takes a new one.
	runs++
	ns := fmt.Sprintf("q%d-%s", runs, name)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, testutil.MakeNamespace(ns), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for i := range sc.nodes {
		n := testutil.MakeNode().Name(fmt.Sprintf("%s-n%d", ns, i)).Label("queue-test", name).
			Capacity(testutil.Res{"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "8", "pods": "110"}).Obj()
		if err := env.CreateNode(ctx, n); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n.Name)
	}
	t.Cleanup(func() {
		env.StopScheduler()
		ctx := context.WithoutCancel(ctx)
		pgs, _ := cs.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{})
		if pgs != nil {
			for _, pg := range pgs.Items {
				_, _ = cs.SchedulingV1beta1().PodGroups(ns).Patch(ctx, pg.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			}
		}
		zero := int64(0)
		_ = cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		_ = cs.SchedulingV1beta1().PodGroups(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		_ = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		for _, n := range nodes {
			_ = cs.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{})
		}
	})
	// Entries are created in order, a second apart, so that creation
	// times order them as the scheduler's queue times will.
	for i, e := range sc.entries {
		if i > 0 {
			time.Sleep(1100 * time.Millisecond)
		}
		create(t, ns, e)
	}

	var list struct {
		Items []item `json:"items"`
	}
	var out, errOut bytes.Buffer
	code := cmd.Main([]string{"explain", "-n", ns, "--kubeconfig", env.Kubeconfig, "-o", "json"},
		genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if code != cmd.ExitOK {
		t.Fatalf("explain exited %d: %s", code, errOut.String())
	}
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		t.Fatalf("explain output: %v\n%s", err, out.String())
	}
	byName := map[string]item{}
	for _, it := range list.Items {
		byName[it.Name] = it
	}

	if err := env.StartScheduler(ctx, testbed.Options{}); err != nil {
		t.Fatal(err)
	}
	bound := kubeOutcome(t, ns)
	var report []string
	for _, it := range list.Items {
		report = append(report, fmt.Sprintf("%d %s %s: %s", it.Position, it.Name, it.Verdict, it.Reason))
	}
	// Distinct priorities on one scheduler, whose native PodGroups hold
	// nothing between entries: nothing unsettles the order, and a line
	// that is no plain answer would be a needless one (and would make
	// this test pass whatever kube-scheduler does).
	classes := map[string]bool{}
	for _, e := range sc.entries {
		classes[e.class] = true
	}
	if len(classes) == len(sc.entries) {
		for _, it := range list.Items {
			if it.Verdict == "Unverified" || it.Raced {
				t.Errorf("%s: %s (raced %v) where the order is certain: %s", it.Name, it.Verdict, it.Raced, it.Reason)
			}
		}
	}
	for _, e := range sc.entries {
		key := "pod/" + e.name
		want := 1
		if e.members > 0 {
			key, want = "podgroup/"+e.name, e.members
		}
		it, ok := byName[key]
		if !ok {
			t.Errorf("%s is not in the list:\n%s", key, strings.Join(report, "\n"))
			continue
		}
		got := bound[e.name]
		switch it.Verdict {
		case "Starts":
			if got != want {
				t.Errorf("%s: we say Starts (%s), kube-scheduler bound %d of %d\n%s", key, it.Reason, got, want, strings.Join(report, "\n"))
			}
		case "Unverified":
			// Not a yes: either outcome is allowed.
		case "Waits":
			// A raced wait (docs/design.md#the-queue) may start, but whole.
			if got != 0 && (!it.Raced || got != want) {
				t.Errorf("%s: we say Waits (raced %v: %s), kube-scheduler bound %d of %d\n%s", key, it.Raced, it.Reason, got, want, strings.Join(report, "\n"))
			}
		default:
			if got != 0 {
				t.Errorf("%s: we say %s (%s), kube-scheduler bound %d of %d\n%s", key, it.Verdict, it.Reason, got, want, strings.Join(report, "\n"))
			}
		}
	}
}

// create creates an entry's PodGroup and pods.
func create(t *testing.T, ns string, e entry) {
	t.Helper()
	ctx := t.Context()
	cs := env.Clientset()
	pod := func(name string) *corev1.Pod {
		w := testutil.MakePod().Namespace(ns).Name(name).Req(testutil.Res{"nvidia.com/gpu": e.gpus, "cpu": "1"})
		if e.members > 0 {
			w = w.PodGroup(e.name)
		}
		p := w.Obj()
		p.Spec.PriorityClassName = e.class
		return p
	}
	if e.members == 0 {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod(e.name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return
	}
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: e.name, Namespace: ns},
		Spec: schedulingv1beta1.PodGroupSpec{PriorityClassName: e.class, SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: int32(e.members)}}},
	}
	if _, err := cs.SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range e.members {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod(fmt.Sprintf("%s-%d", e.name, i)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// kubeOutcome waits until kube-scheduler has decided on every pod of ns
// (bound, or PodScheduled=False) and a little longer, and counts the bound
// pods per entry (a member's entry is its PodGroup).
func kubeOutcome(t *testing.T, ns string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cs := env.Clientset()
	var bound map[string]int
	settled := 0
	for {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		bound = map[string]int{}
		decided := 0
		for _, p := range pods.Items {
			key := p.Name
			if g := p.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
				key = *g.PodGroupName
			}
			if p.Spec.NodeName != "" {
				bound[key]++
				decided++
				continue
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
					decided++
				}
			}
		}
		if decided == len(pods.Items) {
			// Decided once is not final: a gang that failed first may be
			// retried; wait for the outcome to hold for 3 s.
			if settled++; settled >= 15 {
				return bound
			}
		} else {
			settled = 0
		}
		select {
		case <-ctx.Done():
			t.Fatalf("kube-scheduler did not decide on every pod of %s: bound %v", ns, bound)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
