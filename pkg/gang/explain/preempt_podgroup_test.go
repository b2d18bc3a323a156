package explain

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// podGroupPreemptionCluster is the cluster: four 8-GPU nodes; on
// n-0 and n-1 the two members of a running native gang whose PodGroup has
// priority 1000 (its pods' own priority is 100000); on n-2 two sweeps of
// priority 100; on n-3 a pod of priority 1000. n-2 and n-3 also run a small
// pod of priority 200000, which makes them score lower. all sets the
// running gang's disruptionMode to All.
func podGroupPreemptionCluster(all bool) *schedule.Snapshot {
	snap := &schedule.Snapshot{}
	for i := range 4 {
		snap.Nodes = append(snap.Nodes, testutil.MakeNode().Name(fmt.Sprintf("n-%d", i)).
			Capacity(testutil.Res{"cpu": "32", "memory": "128Gi", "nvidia.com/gpu": "8"}).Obj())
	}
	gpus := func(n string) testutil.Res { return testutil.Res{"cpu": "1", "nvidia.com/gpu": n} }
	running := testutil.MakeNativePodGroup("ml", "running", 2).Field("mid", "priorityClassName").Field(int64(1000), "priority")
	if all {
		running.Field(map[string]any{}, "disruptionMode", "all")
	}
	snap.PodGroups = []*unstructured.Unstructured{running.Obj(),
		testutil.MakeNativePodGroup("ml", "train", 2).Field("top", "priorityClassName").Field(int64(100000), "priority").Obj()}
	snap.Pods = []*corev1.Pod{
		testutil.MakePod().Namespace("ml").Name("running-0").PodGroup("running").Priority("top", 100000).Req(gpus("8")).Node("n-0").Obj(),
		testutil.MakePod().Namespace("ml").Name("running-1").PodGroup("running").Priority("top", 100000).Req(gpus("8")).Node("n-1").Obj(),
		testutil.MakePod().Namespace("batch").Name("sweep-0").Priority("sweep", 100).Req(gpus("4")).Node("n-2").Obj(),
		testutil.MakePod().Namespace("batch").Name("sweep-1").Priority("sweep", 100).Req(gpus("4")).Node("n-2").Obj(),
		testutil.MakePod().Namespace("batch").Name("mid-0").Priority("mid", 1000).Req(gpus("8")).Node("n-3").Obj(),
		testutil.MakePod().Namespace("kube-system").Name("agent-2").Priority("system", 200000).Req(testutil.Res{"cpu": "16"}).Node("n-2").Obj(),
		testutil.MakePod().Namespace("kube-system").Name("agent-3").Priority("system", 200000).Req(testutil.Res{"cpu": "16"}).Node("n-3").Obj(),
	}
	for i := range 2 {
		snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("ml").Name(fmt.Sprintf("train-%d", i)).PodGroup("train").
			Priority("top", 100000).Req(gpus("8")).Obj())
	}
	return snap
}

func victimNames(s *Suggestion) []string {
	var out []string
	for _, v := range s.Victims {
		out = append(out, fmt.Sprintf("%s/%s@%s(%d)", v.Pod.Namespace, v.Pod.Name, v.Node, v.Priority))
	}
	return out
}

// A native gang preempts as kube-scheduler's pod group preemption does: at
// its PodGroup's priority, over the whole cluster, victims in a PodGroup at
// their group's priority. The running gang's members (priority 1000 as
// victims, whatever their pods say) go, on the nodes the gang scores best;
// the sweeps and the priority-1000 pod stay (the wrong answer
// evicted them, member by member at the pods' own priorities).
func TestExplainNativeGangPreemptsAsPodGroup(t *testing.T) {
	for _, tc := range []struct {
		name string
		all  bool
	}{{"disruption mode Single", false}, {"disruption mode All", true}} {
		t.Run(tc.name, func(t *testing.T) {
			snap := podGroupPreemptionCluster(tc.all)
			g, err := gang.ResolvePodGroup(snap, gang.Ref{Namespace: "ml", Name: "train"})
			if err != nil {
				t.Fatal(err)
			}
			e, err := Gang(context.Background(), snap, g, Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := find(e.Suggestions, SuggestPreempt)
			if s == nil {
				t.Fatalf("%s: %s; no preemption suggestion: %+v", e.Verdict, e.Message, e.Suggestions)
			}
			want := []string{"ml/running-0@n-0(1000)", "ml/running-1@n-1(1000)"}
			if got := victimNames(s); !slices.Equal(got, want) || !s.Verified {
				t.Errorf("victims %v (verified %v), want %v: %s", got, s.Verified, want, s.Message)
			}
			if !strings.Contains(s.Message, "pod group preemption") {
				t.Errorf("message %q does not say it is the pod group preemption", s.Message)
			}
		})
	}
}

// With disruptionMode All, a group is evicted whole or not at all: the
// gang needs one node, and the running group's member on the node it
// scores best goes with its sibling elsewhere, where nothing needed room.
func TestExplainNativePreemptionTakesWholeGroups(t *testing.T) {
	snap := podGroupPreemptionCluster(true)
	// One member only.
	snap.Pods = slices.DeleteFunc(snap.Pods, func(p *corev1.Pod) bool { return p.Name == "train-1" })
	snap.PodGroups[1] = testutil.MakeNativePodGroup("ml", "train", 1).Field("top", "priorityClassName").Field(int64(100000), "priority").Obj()
	g, err := gang.ResolvePodGroup(snap, gang.Ref{Namespace: "ml", Name: "train"})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Gang(context.Background(), snap, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := find(e.Suggestions, SuggestPreempt)
	if s == nil {
		t.Fatalf("no preemption suggestion: %+v", e.Suggestions)
	}
	want := []string{"ml/running-0@n-0(1000)", "ml/running-1@n-1(1000)"}
	if got := victimNames(s); !slices.Equal(got, want) {
		t.Errorf("victims %v, want the whole group %v", got, want)
	}
}

// A gang of lower priority than every pod in its way preempts nothing.
func TestExplainNativePreemptionNoVictims(t *testing.T) {
	snap := podGroupPreemptionCluster(false)
	snap.PodGroups[1] = testutil.MakeNativePodGroup("ml", "train", 2).Field(int64(50), "priority").Obj()
	for _, p := range snap.Pods {
		if strings.HasPrefix(p.Name, "train-") {
			p.Spec.PriorityClassName, p.Spec.Priority = "", ptrTo(int32(50))
		}
	}
	g, err := gang.ResolvePodGroup(snap, gang.Ref{Namespace: "ml", Name: "train"})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Gang(context.Background(), snap, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := find(e.Suggestions, SuggestPreempt); s != nil {
		t.Errorf("preemption suggested: %s", s.Message)
	}
}

// Pods preempting one by one (a gang of no scheduler of its own) whose
// candidate victims include a native PodGroup with disruptionMode All: the
// member-by-member what-if cannot take the group whole as kube-scheduler
// does, so it proposes nothing and says it was not evaluated.
func TestExplainPreemptionOfWholeGroupsNotEvaluated(t *testing.T) {
	snap := podGroupPreemptionCluster(true)
	snap.Pods = slices.DeleteFunc(snap.Pods, func(p *corev1.Pod) bool { return strings.HasPrefix(p.Name, "train-") })
	var members []*corev1.Pod
	for i := range 2 {
		members = append(members, testutil.MakePod().Namespace("ml").Name(fmt.Sprintf("w-%d", i)).
			Priority("top", 100000).Req(testutil.Res{"cpu": "1", "nvidia.com/gpu": "8"}).Obj())
	}
	e, err := Gang(context.Background(), snap, gangOf(2, members), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := find(e.Suggestions, SuggestPreempt); s != nil {
		t.Errorf("preemption suggested: %s", s.Message)
	}
	if !slices.ContainsFunc(e.NotEvaluated, func(s string) bool { return strings.Contains(s, "ml/running (disruptionMode All)") }) {
		t.Errorf("not evaluated %q, want the whole-group preemption named", e.NotEvaluated)
	}
}
