package admit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// A snapshot without Volcano Queues (a saved file, or a kind the user may
// not list) leaves the queue check not evaluated: it does not reject the
// gang (every Volcano installation has the default queue) and does not
// admit it either. With the queue in the snapshot, a missing queue rejects.
func TestVolcanoGangWithoutQueues(t *testing.T) {
	nodes := testutil.GPUNodes("zone-a", 2)
	pg := testutil.MakeVolcanoPodGroup("ml", "train", 2).MinResources(testutil.Res{"cpu": "2"}).Obj()
	snap := &schedule.Snapshot{Nodes: nodes, PodGroups: []*unstructured.Unstructured{pg}}
	for i := range 2 {
		snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("ml").Name(fmt.Sprintf("w-%d", i)).
			Req(testutil.Res{"cpu": "1"}).VolcanoGroup("train").Obj())
	}
	for _, tc := range []struct {
		name       string
		unreadable bool
		queues     []*unstructured.Unstructured
		want       Result
		admitted   bool
		verdict    Verdict
	}{
		// Without Queues the queue's state and share are unknown: never a
		// plain yes (issue #24); what needs no Queue (overcommit) is still
		// checked (TestVolcanoOvercommitWithoutQueues).
		// Not evaluated is no refusal either (issue #41): Unverified.
		{"no Queues in the snapshot", false, nil, ResultSkipped, false, VerdictUnverified},
		{"Queues may not be listed", true, nil, ResultSkipped, false, VerdictUnverified},
		{"another queue only", false, []*unstructured.Unstructured{volcanoQueue("other")}, ResultFailed, false, VerdictRejected},
		{"the default queue", false, []*unstructured.Unstructured{volcanoQueue("default")}, ResultPassed, true, VerdictAdmitted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := *snap
			s.Objects = tc.queues
			if tc.unreadable {
				s.Unreadable = []string{"queues.scheduling.volcano.sh"}
			}
			g, err := gang.ResolvePodGroup(&s, gang.Ref{Namespace: "ml", Name: "train"})
			if err != nil {
				t.Fatal(err)
			}
			a, err := Gang(context.Background(), &s, g, gang.PlaceOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var queue *Check
			for i := range a.Checks {
				if a.Checks[i].Name == "VolcanoQueue" {
					queue = &a.Checks[i]
				}
			}
			if queue == nil || queue.Result != tc.want || a.Admitted() != tc.admitted || a.Verdict != tc.verdict {
				t.Errorf("queue check %+v, admitted %v (%s); want %s and admitted %v (%s)", queue, a.Admitted(), a.Verdict, tc.want, tc.admitted, tc.verdict)
			}
			if tc.want == ResultSkipped && (queue.Reason != "NotEvaluated" || queue.Message == "") {
				t.Errorf("queue check %+v, want it marked NotEvaluated with why", queue)
			}
		})
	}
}

func volcanoQueue(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"weight": int64(1)},
		"status":   map[string]any{"state": "Open"},
	}}
	return u
}

// A native gang kube-scheduler refuses (validatePodGroup: a member's
// priority is not the PodGroup's) is rejected, though every member fits:
// kube-scheduler would never schedule it.
func TestNativePriorityMismatchRejected(t *testing.T) {
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 2),
		PodGroups: []*unstructured.Unstructured{testutil.MakeNativePodGroup("ml", "train", 2).Obj()}}
	for _, w := range testutil.GPUWorkers(2, "8") {
		p := int32(1500)
		w.Spec.PriorityClassName, w.Spec.Priority = "high", &p
		snap.Pods = append(snap.Pods, w)
	}
	g, err := gang.ResolvePodGroup(snap, gang.Ref{Namespace: "ml", Name: "train"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := Gang(context.Background(), snap, g, gang.PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var check *Check
	for i := range a.Checks {
		if a.Checks[i].Name == gang.GateNative {
			check = &a.Checks[i]
		}
	}
	want := "all pods in a single pod group should have the same priority as the pod group's priority, got 1500 and 0"
	if a.Admitted() || check == nil || check.Result != ResultFailed || check.SchedulerMessage != want {
		t.Fatalf("admitted %v, check %+v; want rejected, %s failed with %q", a.Admitted(), check, gang.GateNative, want)
	}
	if !strings.Contains(check.Message, "spec.priorityClassName") {
		t.Errorf("message %q does not say the fix", check.Message)
	}
}

// TestVerdictOfTheChecks: a failed check rejects whatever else could not be
// evaluated; a check not evaluated, with none failed, is Unverified, never
// Rejected (issue #41); skipped and passed checks admit.
func TestVerdictOfTheChecks(t *testing.T) {
	c := func(r Result) Check { return Check{Result: r} }
	for _, tt := range []struct {
		checks []Check
		want   Verdict
	}{
		{[]Check{c(ResultPassed), c(ResultSkipped)}, VerdictAdmitted},
		{[]Check{c(ResultPassed), c(ResultNotEvaluated)}, VerdictUnverified},
		{[]Check{c(ResultNotEvaluated), c(ResultFailed)}, VerdictRejected},
		{[]Check{c(ResultFailed), c(ResultNotEvaluated)}, VerdictRejected},
	} {
		if got := verdictOf(tt.checks); got != tt.want {
			t.Errorf("verdictOf(%v) = %s, want %s", tt.checks, got, tt.want)
		}
	}
}

// ungateServer is an UngateClient over a map of pods; failUpdate answers the
// update of that pod with an error, after writing it when lost is set (the
// answer lost, the write done).
type ungateServer struct {
	pods       map[string]*corev1.Pod
	failUpdate string
	lost       bool
}

func (s *ungateServer) GetPod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	return s.pods[ns+"/"+name].DeepCopy(), nil
}

func (s *ungateServer) UpdatePod(_ context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	key := pod.Namespace + "/" + pod.Name
	if key == s.failUpdate && !s.lost {
		return nil, errors.New("connection reset")
	}
	s.pods[key] = pod.DeepCopy()
	if key == s.failUpdate {
		return nil, errors.New("unexpected EOF")
	}
	return pod, nil
}

// An update whose answer is lost is settled by reading the pod back; one
// that failed stops the release, and the error names the members released
// before it (issue #41: a partly released gang is never hidden).
func TestUngateSettlesWhatItCannotHear(t *testing.T) {
	gated := func(name string) *corev1.Pod {
		p := testutil.MakePod().Namespace("ml").Name(name).SchedulingGate("example.com/hold").Obj()
		p.UID, p.ResourceVersion = types.UID("uid-"+name), "1"
		return p
	}
	for _, tt := range []struct {
		name        string
		lost        bool
		wantUngated []string
		wantErr     string
	}{
		{"the answer is lost, the write done", true, []string{"ml/m-0", "ml/m-1", "ml/m-2"}, ""},
		{"the write failed", false, []string{"ml/m-0"}, `removing gate "example.com/hold" from ml/m-1: connection reset (it still carried the gate when read back; an update lost in flight may yet apply); the gate was removed already from 1 member(s): ml/m-0`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := &gang.Gang{Namespace: "ml", Name: "g"}
			s := &ungateServer{pods: map[string]*corev1.Pod{}, failUpdate: "ml/m-1", lost: tt.lost}
			for _, name := range []string{"m-0", "m-1", "m-2"} {
				p := gated(name)
				g.Members = append(g.Members, p)
				s.pods["ml/"+name] = p.DeepCopy()
			}
			r, err := Ungate(context.Background(), s, g, "example.com/hold")
			if got := fmt.Sprint(err); (tt.wantErr == "") != (err == nil) || err != nil && !strings.HasPrefix(got, tt.wantErr) {
				t.Errorf("err %v, want %q", err, tt.wantErr)
			}
			if r == nil || !slices.Equal(r.Ungated, tt.wantUngated) {
				t.Errorf("report %+v, want ungated %v", r, tt.wantUngated)
			}
		})
	}
}
