package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
)

// nativeBed is one native-gang test's share of the test bed: a namespace,
// nodes and priority classes of its own, on the shared apiserver and
// kube-scheduler (GenericWorkload on). The harness's next reset deletes the
// pods and nodes.
type nativeBed struct {
	t   *testing.T
	ctx context.Context
	h   *harness
	ns  string
}

// holdGate keeps members away from kube-scheduler until the test has asked
// kubectl-gang about the cluster as it is.
const holdGate = "kubectl-gang.test/hold"

func newNativeBed(t *testing.T, ns string, nodes ...*corev1.Node) *nativeBed {
	t.Helper()
	h := sharedHarness(t)
	ctx := t.Context()
	b := &nativeBed{t: t, ctx: ctx, h: h, ns: ns}
	if err := h.reset(ctx); err != nil {
		t.Fatalf("clear the previous scenario: %v", err)
	}
	if _, err := h.cs.CoreV1().Namespaces().Create(ctx, testutil.MakeNamespace(ns), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	h.dirty = append(h.dirty, ns)
	b.deletePodGroups()
	t.Cleanup(b.deletePodGroups)
	h.nodesLeft = true
	for _, n := range nodes {
		if err := h.env.CreateNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// priorityClass creates a PriorityClass unless it exists.
func (b *nativeBed) priorityClass(name string, value int32, policy corev1.PreemptionPolicy) {
	b.t.Helper()
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, PreemptionPolicy: &policy}
	if _, err := b.h.cs.SchedulingV1().PriorityClasses().Create(b.ctx, pc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		b.t.Fatal(err)
	}
}

// podGroup creates a native PodGroup with a gang policy, retrying while the
// Priority admission plugin's informer has not seen a new class yet.
func (b *nativeBed) podGroup(name string, minCount int32, class string, all bool) {
	b.t.Helper()
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: b.ns},
		Spec: schedulingv1beta1.PodGroupSpec{PriorityClassName: class, SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}}},
	}
	if all {
		pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
	}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if err := waitFor(ctx, func() (bool, error) {
		_, err := b.h.cs.SchedulingV1beta1().PodGroups(b.ns).Create(ctx, pg, metav1.CreateOptions{})
		if err != nil && strings.Contains(err.Error(), "no PriorityClass with name") {
			return false, nil
		}
		return err == nil, err
	}); err != nil {
		b.t.Fatalf("create PodGroup %s: %v", name, err)
	}
}

// deletePodGroups takes the finalizer the test bed's missing controller
// would remove off every PodGroup of the namespace and deletes them.
func (b *nativeBed) deletePodGroups() {
	ctx := context.WithoutCancel(b.ctx)
	pgs, err := b.h.cs.SchedulingV1beta1().PodGroups(b.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, pg := range pgs.Items {
		if len(pg.Finalizers) > 0 {
			patch := []byte(`{"metadata":{"finalizers":null}}`)
			_, _ = b.h.cs.SchedulingV1beta1().PodGroups(b.ns).Patch(ctx, pg.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		}
		_ = b.h.cs.SchedulingV1beta1().PodGroups(b.ns).Delete(ctx, pg.Name, metav1.DeleteOptions{})
	}
}

// member is a pod of PodGroup group asking for cpu, held by holdGate.
func (b *nativeBed) member(name, group, cpu string) *testutil.PodWrapper {
	return testutil.MakePod().Namespace(b.ns).Name(name).PodGroup(group).Req(testutil.Res{"cpu": cpu}).SchedulingGate(holdGate)
}

// create creates pods as given (priorities and policies are admission's).
func (b *nativeBed) create(pods ...*corev1.Pod) {
	b.t.Helper()
	for _, p := range pods {
		p = p.DeepCopy()
		p.Spec.Priority, p.Spec.PreemptionPolicy = nil, nil
		if _, err := b.h.cs.CoreV1().Pods(b.ns).Create(b.ctx, p, metav1.CreateOptions{}); err != nil {
			b.t.Fatalf("create pod %s: %v", p.Name, err)
		}
	}
}

// release removes holdGate from every pod of the namespace.
func (b *nativeBed) release() {
	b.t.Helper()
	pods, err := b.h.cs.CoreV1().Pods(b.ns).List(b.ctx, metav1.ListOptions{})
	if err != nil {
		b.t.Fatal(err)
	}
	for _, p := range pods.Items {
		if len(p.Spec.SchedulingGates) == 0 {
			continue
		}
		p.Spec.SchedulingGates = nil
		if _, err := b.h.cs.CoreV1().Pods(b.ns).Update(b.ctx, &p, metav1.UpdateOptions{}); err != nil {
			b.t.Fatalf("release %s: %v", p.Name, err)
		}
	}
}

// gangCLI runs kubectl gang against the test bed in the bed's namespace
// with -o json and decodes what it printed.
func (b *nativeBed) gangCLI(into any, args ...string) int {
	b.t.Helper()
	var out, errOut bytes.Buffer
	args = append(args, "-n", b.ns, "--kubeconfig", b.h.env.Kubeconfig, "-o", "json")
	code := cmd.Main(args, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if err := json.Unmarshal(out.Bytes(), into); err != nil {
		b.t.Fatalf("kubectl gang %s exited %d, stderr %q, output not JSON: %v", strings.Join(args, " "), code, errOut.String(), err)
	}
	return code
}

// kubeOutcome waits until kube-scheduler has bound every pending member of
// group or failed each with a PodScheduled=False condition, and returns how
// many it bound and the conditions' distinct reason: message lines.
func (b *nativeBed) kubeOutcome(group string, members int) (bound int, failures []string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	err := waitFor(ctx, func() (bool, error) {
		pods, err := b.h.cs.CoreV1().Pods(b.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		bound, failures = 0, nil
		decided := 0
		for _, p := range pods.Items {
			if p.Spec.SchedulingGroup == nil || *p.Spec.SchedulingGroup.PodGroupName != group {
				continue
			}
			if p.Spec.NodeName != "" {
				bound++
				decided++
				continue
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "SchedulingGated" {
					decided++
					if line := c.Reason + ": " + c.Message; !slices.Contains(failures, line) {
						failures = append(failures, line)
					}
				}
			}
		}
		return decided == members, nil
	})
	if err != nil {
		b.t.Fatalf("kube-scheduler did not decide on every member of %s: %v (bound %d, failures %q)", group, err, bound, failures)
	}
	return bound, failures
}

// verdictJSON is the part of place, admit and bind -o json these tests read.
type verdictJSON struct {
	Verdict      string `json:"verdict"`
	OnceReleased string `json:"onceReleased"`
	Reason       string `json:"reason"`
	Message      string `json:"message"`
	Checks       []struct {
		Name             string `json:"name"`
		Result           string `json:"result"`
		SchedulerMessage string `json:"schedulerMessage"`
	} `json:"checks"`
}

// TestNativePodGroupValidation checks kube-scheduler v1.37.1's
// validatePodGroup against the native source's gate (gang.NativeGate): for
// each PodGroup, place, admit and bind decide on the cluster with the
// members held back, then the members are released and kube-scheduler
// decides. A group it refuses fails with SchedulerError and our message is
// its message, place and admit say no and bind refuses; a group it accepts
// is bound, and ours is a yes.
func TestNativePodGroupValidation(t *testing.T) {
	var nodes []*corev1.Node
	for _, name := range []string{"ngv-a", "ngv-b"} {
		nodes = append(nodes, testutil.MakeNode().Name(name).Capacity(testutil.Res{"cpu": "16", "memory": "64Gi", "pods": "110"}).Obj())
	}
	b := newNativeBed(t, "ng-validate", nodes...)
	b.priorityClass("ngv-high", 1500, corev1.PreemptLowerPriority)
	b.priorityClass("ngv-high-never", 1500, corev1.PreemptNever)

	type gangCase struct {
		name    string
		class   string // the PodGroup's priorityClassName
		members []*corev1.Pod
		// running members are bound at creation, not held.
		running []*corev1.Pod
		accept  bool
	}
	other := func(w *testutil.PodWrapper) *corev1.Pod {
		p := w.Obj()
		p.Spec.SchedulerName = "other-scheduler"
		return p
	}
	run := func(w *testutil.PodWrapper, node string) *corev1.Pod {
		p := w.Node(node).Obj()
		p.Spec.SchedulingGates = nil
		return p
	}
	cases := []gangCase{{
		// The case: the class is on the members only.
		name:    "class-on-members-only",
		members: []*corev1.Pod{b.member("a-0", "class-on-members-only", "100m").Priority("ngv-high", 0).Obj(), b.member("a-1", "class-on-members-only", "100m").Priority("ngv-high", 0).Obj()},
	}, {
		name:    "class-on-both",
		class:   "ngv-high",
		members: []*corev1.Pod{b.member("b-0", "class-on-both", "100m").Priority("ngv-high", 0).Obj(), b.member("b-1", "class-on-both", "100m").Priority("ngv-high", 0).Obj()},
		accept:  true,
	}, {
		name:    "running-member-at-another-priority",
		class:   "ngv-high",
		members: []*corev1.Pod{b.member("c-0", "running-member-at-another-priority", "100m").Priority("ngv-high", 0).Obj()},
		running: []*corev1.Pod{run(b.member("c-1", "running-member-at-another-priority", "100m"), "ngv-a")},
	}, {
		name:    "two-preemption-policies",
		class:   "ngv-high",
		members: []*corev1.Pod{b.member("d-0", "two-preemption-policies", "100m").Priority("ngv-high", 0).Obj(), b.member("d-1", "two-preemption-policies", "100m").Priority("ngv-high-never", 0).Obj()},
	}, {
		name:    "running-member-of-another-scheduler",
		members: []*corev1.Pod{b.member("e-0", "running-member-of-another-scheduler", "100m").Obj()},
		running: []*corev1.Pod{other(b.member("e-1", "running-member-of-another-scheduler", "100m").Node("ngv-b"))},
	}}
	for _, c := range cases {
		b.podGroup(c.name, int32(len(c.members)+len(c.running)), c.class, false)
		for _, p := range c.running {
			p.Spec.SchedulingGates = nil
		}
		b.create(append(slices.Clone(c.running), c.members...)...)
	}

	type ours struct {
		place, admit, bind verdictJSON
		placeCode          int
	}
	got := map[string]ours{}
	for _, c := range cases {
		var o ours
		o.placeCode = b.gangCLI(&o.place, "place", "podgroup/"+c.name)
		b.gangCLI(&o.admit, "admit", "podgroup/"+c.name)
		b.gangCLI(&o.bind, "bind", "podgroup/"+c.name, "--dry-run=server")
		got[c.name] = o
	}
	b.release()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := got[c.name]
			bound, failures := b.kubeOutcome(c.name, len(c.members)+len(c.running))
			t.Logf("kube-scheduler: %d bound, %q; place: exit %d %s: %s", bound, failures, o.placeCode, o.place.Verdict, o.place.Message)
			if c.accept {
				if bound != len(c.members)+len(c.running) || len(failures) > 0 {
					t.Fatalf("case is wrong: kube-scheduler bound %d, failures %q", bound, failures)
				}
				// The members are gated while place runs: Gated, exit 3,
				// and Placed once released.
				if o.placeCode != cmd.ExitNo || o.place.Verdict != "Gated" || o.place.OnceReleased != "Placed" || o.admit.Verdict != "Admitted" {
					t.Errorf("place exit %d %s, once released %s (%s), admit %s: want Gated, Placed once released, Admitted", o.placeCode, o.place.Verdict, o.place.OnceReleased, o.place.Message, o.admit.Verdict)
				}
				return
			}
			if bound != len(c.running) || len(failures) != 1 || !strings.HasPrefix(failures[0], "SchedulerError: ") {
				t.Fatalf("case is wrong: kube-scheduler bound %d, failures %q; want one SchedulerError", bound, failures)
			}
			kube := strings.TrimPrefix(failures[0], "SchedulerError: ")
			if o.placeCode != cmd.ExitNo || o.place.OnceReleased != "Unschedulable" || !strings.Contains(o.place.Message, kube) {
				t.Errorf("place exit %d %s, once released %s: %q\nwant exit 3, Unschedulable once released, with kube-scheduler's %q", o.placeCode, o.place.Verdict, o.place.OnceReleased, o.place.Message, kube)
			}
			var check string
			for _, ch := range o.admit.Checks {
				if ch.Name == "PodGroupValidation" {
					check = ch.Result + ": " + ch.SchedulerMessage
				}
			}
			if o.admit.Verdict != "Rejected" || check != "Failed: "+kube {
				t.Errorf("admit %s, check %q; want Rejected, Failed: %q", o.admit.Verdict, check, kube)
			}
			if o.bind.Verdict != "NotBound" || o.bind.Reason != "Unschedulable" || !strings.Contains(o.bind.Message, kube) {
				t.Errorf("bind %s %s: %q; want NotBound, Unschedulable with kube-scheduler's words", o.bind.Verdict, o.bind.Reason, o.bind.Message)
			}
		})
	}
}

// explainedVictims is the part of explain -o json the preemption test reads.
type explainedVictims struct {
	Verdict     string `json:"verdict"`
	Message     string `json:"message"`
	Suggestions []struct {
		Kind     string `json:"kind"`
		Verified bool   `json:"verified"`
		Message  string `json:"message"`
		Victims  []struct {
			Pod  string `json:"pod"`
			Node string `json:"node"`
		} `json:"victims"`
	} `json:"suggestions"`
}

// preempted waits until kube-scheduler has started evicting pods of the
// namespace (their deletion requested), then a little longer for the rest
// of the same preemption, and returns them as namespace/name@node.
func (b *nativeBed) preempted(candidates []string) []string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	var got []string
	read := func() (bool, error) {
		got = nil
		for _, key := range candidates {
			ns, name, _ := strings.Cut(key, "/")
			p, err := b.h.cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) || err == nil && p.DeletionTimestamp != nil {
				node := ""
				if p != nil {
					node = p.Spec.NodeName
				}
				got = append(got, key+"@"+node)
				continue
			}
			if err != nil {
				return false, err
			}
		}
		return len(got) > 0, nil
	}
	if err := waitFor(ctx, read); err != nil {
		b.t.Fatalf("kube-scheduler preempted nothing: %v", err)
	}
	time.Sleep(3 * time.Second) // the rest of one preemption, and no second one
	if _, err := read(); err != nil {
		b.t.Fatal(err)
	}
	slices.Sort(got)
	return got
}

// TestNativeGangPreemption is the case on the real kube-scheduler
// v1.37.1: a 2 x 8-GPU native gang at priority 100000 where a running
// native gang (PodGroup priority 1000, its pods' own 100000) holds the two
// best-scored nodes, two priority-100 sweeps share a third, a priority-1000
// pod the fourth. explain, asked before the members are released, must name
// exactly the pods kube-scheduler's pod group preemption then evicts: the
// running gang's members, not the sweeps. With disruptionMode All the
// running group goes whole as well.
func TestNativeGangPreemption(t *testing.T) {
	for _, all := range []bool{false, true} {
		t.Run(fmt.Sprintf("disruptionMode all=%v", all), func(t *testing.T) {
			var nodes []*corev1.Node
			for i := range 4 {
				nodes = append(nodes, testutil.MakeNode().Name(fmt.Sprintf("ngp-%d", i)).
					Capacity(testutil.Res{"cpu": "32", "memory": "128Gi", "pods": "110", "nvidia.com/gpu": "8"}).Obj())
			}
			ns := fmt.Sprintf("ng-preempt-%v", all)
			b := newNativeBed(t, ns, nodes...)
			b.priorityClass("ngp-sweep", 100, corev1.PreemptLowerPriority)
			b.priorityClass("ngp-mid", 1000, corev1.PreemptLowerPriority)
			b.priorityClass("ngp-top", 100000, corev1.PreemptLowerPriority)
			b.priorityClass("ngp-system", 200000, corev1.PreemptLowerPriority)
			b.podGroup("running", 2, "ngp-mid", all)
			b.podGroup("train", 2, "ngp-top", false)
			gpus := func(n string) testutil.Res { return testutil.Res{"cpu": "1", "nvidia.com/gpu": n} }
			bound := func(name, class, node string, req testutil.Res) *testutil.PodWrapper {
				return testutil.MakePod().Namespace(ns).Name(name).Priority(class, 0).Req(req).Node(node)
			}
			b.create(
				bound("running-0", "ngp-top", "ngp-0", gpus("8")).PodGroup("running").Obj(),
				bound("running-1", "ngp-top", "ngp-1", gpus("8")).PodGroup("running").Obj(),
				bound("sweep-0", "ngp-sweep", "ngp-2", gpus("4")).Obj(),
				bound("sweep-1", "ngp-sweep", "ngp-2", gpus("4")).Obj(),
				bound("mid-0", "ngp-mid", "ngp-3", gpus("8")).Obj(),
				bound("agent-2", "ngp-system", "ngp-2", testutil.Res{"cpu": "16"}).Obj(),
				bound("agent-3", "ngp-system", "ngp-3", testutil.Res{"cpu": "16"}).Obj(),
				b.member("train-0", "train", "1").Priority("ngp-top", 0).Req(gpus("8")).Obj(),
				b.member("train-1", "train", "1").Priority("ngp-top", 0).Req(gpus("8")).Obj(),
			)

			var e explainedVictims
			b.gangCLI(&e, "explain", "podgroup/train")
			var ours []string
			for _, s := range e.Suggestions {
				if s.Kind == "Preempt" {
					for _, v := range s.Victims {
						ours = append(ours, v.Pod+"@"+v.Node)
					}
				}
			}
			slices.Sort(ours)

			b.release()
			var candidates []string
			for _, name := range []string{"running-0", "running-1", "sweep-0", "sweep-1", "mid-0", "agent-2", "agent-3"} {
				candidates = append(candidates, ns+"/"+name)
			}
			kube := b.preempted(candidates)
			t.Logf("explain: %s: %s; victims %v; kube-scheduler preempted %v", e.Verdict, e.Message, ours, kube)
			if !slices.Equal(ours, kube) {
				t.Errorf("explain's victims %v, kube-scheduler preempted %v", ours, kube)
			}
		})
	}
}

// TestPodPreemptsNativeGroupMember checks a pod that preempts on its own
// against the real kube-scheduler v1.37.1 when the only lower-priority pod
// in its way is a member of a native PodGroup whose own priority is higher
// than the preemptor's and whose group's is lower: kube-scheduler weighs it
// at its group's priority and evicts it, and explain, asked before the pod
// is released, names it (it used to find no victim).
func TestPodPreemptsNativeGroupMember(t *testing.T) {
	var nodes []*corev1.Node
	for _, name := range []string{"ngm-a", "ngm-b"} {
		nodes = append(nodes, testutil.MakeNode().Name(name).Capacity(testutil.Res{"cpu": "4", "memory": "16Gi", "pods": "110"}).Obj())
	}
	ns := "ng-member-victim"
	b := newNativeBed(t, ns, nodes...)
	b.priorityClass("ngm-low", 100, corev1.PreemptLowerPriority)
	b.priorityClass("ngm-mid", 500, corev1.PreemptLowerPriority)
	b.priorityClass("ngm-high", 1000, corev1.PreemptLowerPriority)
	b.priorityClass("ngm-top", 100000, corev1.PreemptLowerPriority)
	b.podGroup("batch", 1, "ngm-low", false)
	b.create(
		testutil.MakePod().Namespace(ns).Name("member").PodGroup("batch").Priority("ngm-top", 0).Req(testutil.Res{"cpu": "3"}).Node("ngm-a").Obj(),
		testutil.MakePod().Namespace(ns).Name("db").Priority("ngm-high", 0).Req(testutil.Res{"cpu": "3"}).Node("ngm-b").Obj(),
		testutil.MakePod().Namespace(ns).Name("web").Priority("ngm-mid", 0).Req(testutil.Res{"cpu": "2"}).SchedulingGate(holdGate).Obj(),
	)
	var e explainedVictims
	b.gangCLI(&e, "explain", "pod/web")
	var ours []string
	for _, s := range e.Suggestions {
		if s.Kind == "Preempt" {
			for _, v := range s.Victims {
				ours = append(ours, v.Pod+"@"+v.Node)
			}
		}
	}
	b.release()
	kube := b.preempted([]string{ns + "/member", ns + "/db"})
	t.Logf("explain: %s: %s; victims %v; kube-scheduler preempted %v", e.Verdict, e.Message, ours, kube)
	if !slices.Equal(ours, kube) {
		t.Errorf("explain's victims %v, kube-scheduler preempted %v", ours, kube)
	}
}
