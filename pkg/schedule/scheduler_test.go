package schedule

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

func TestFitMessage(t *testing.T) {
	st := func(code framework.Code, reasons ...string) *framework.Status {
		return framework.NewStatus(code, reasons...)
	}
	tests := []struct {
		name      string
		preFilter *framework.Status
		statuses  []*framework.Status
		want      string
	}{
		{
			name: "histogram sorted as strings, counts first",
			statuses: []*framework.Status{
				st(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)"),
				st(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)"),
				st(framework.UnschedulableAndUnresolvable, "node(s) were unschedulable"),
				st(framework.Unschedulable, "Insufficient cpu", "Insufficient memory"),
			},
			want: "0/4 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 node(s) were unschedulable, 2 node(s) had untolerated taint(s).",
		},
		{
			name:      "PreFilter rejection replaces the histogram",
			preFilter: st(framework.UnschedulableAndUnresolvable, "node(s) didn't satisfy plugin NodeAffinity"),
			statuses:  []*framework.Status{nil, nil},
			want:      "0/2 nodes are available: node(s) didn't satisfy plugin NodeAffinity.",
		},
		{
			name: "12 sorts before 2",
			statuses: append(slices.Repeat([]*framework.Status{st(framework.Unschedulable, "Too many pods")}, 12),
				st(framework.Unschedulable, "Insufficient cpu"), st(framework.Unschedulable, "Insufficient cpu")),
			want: "0/14 nodes are available: 12 Too many pods, 2 Insufficient cpu.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fitMessage(len(tt.statuses), tt.preFilter, tt.statuses); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestReserveMakesLaterCyclesSeeThePod(t *testing.T) {
	snap := &Snapshot{Nodes: []*corev1.Node{
		testutil.MakeNode().Name("a").Capacity(testutil.Res{"cpu": "4", "memory": "8Gi"}).Obj(),
		testutil.MakeNode().Name("b").Capacity(testutil.Res{"cpu": "4", "memory": "8Gi"}).Obj(),
	}}
	s, err := NewScheduler(snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var placed []string
	for i := range 3 {
		pod := testutil.MakePod().Name(fmt.Sprintf("w-%d", i)).Req(testutil.Res{"cpu": "3"}).Obj()
		res, err := s.Schedule(ctx, pod)
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != VerdictScheduled {
			placed = append(placed, res.Message)
			continue
		}
		placed = append(placed, res.SelectedNode)
		if err := s.Reserve(pod, res.SelectedNode); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"a", "b", "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."}
	if diff := cmp.Diff(want, placed); diff != "" {
		t.Errorf("placements (-want +got):\n%s", diff)
	}
	if got := len(snap.Pods); got != 0 {
		t.Errorf("Reserve changed the snapshot: %d pods", got)
	}
}

// TestExampleGolden runs every pending pod of the example snapshot through
// the default profile and compares the runner's records with testdata.
func TestExampleGolden(t *testing.T) {
	snap := loadExample(t)
	s, err := NewScheduler(snap, Options{RunAllFilters: true})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, pod := range snap.Pods {
		if pod.Spec.NodeName != "" {
			continue
		}
		res, err := s.Schedule(context.Background(), pod)
		if err != nil {
			t.Fatalf("%s: %v", pod.Name, err)
		}
		writeRecord(&b, res)
	}
	testutil.Golden(t, filepath.Join("testdata", "example.golden"), []byte(b.String()))
}

// writeRecord renders a Result as stable text for golden files.
func writeRecord(b *strings.Builder, r *Result) {
	fmt.Fprintf(b, "pod %s/%s: %s", r.Pod.Namespace, r.Pod.Name, r.Verdict)
	if r.SelectedNode != "" {
		fmt.Fprintf(b, " -> %s", r.SelectedNode)
	}
	b.WriteString("\n")
	if r.Message != "" {
		fmt.Fprintf(b, "  message: %s\n", r.Message)
	}
	for _, ne := range r.NotEvaluated {
		fmt.Fprintf(b, "  not evaluated: %s\n", ne)
	}
	for _, n := range r.Nodes {
		if n.Feasible {
			plugins := make([]string, 0, len(n.Scores))
			for _, ps := range n.Scores {
				plugins = append(plugins, fmt.Sprintf("%s=%d", ps.Plugin, ps.Score))
			}
			slices.Sort(plugins)
			fmt.Fprintf(b, "  %-18s feasible score=%d %s\n", n.Name, n.Score, strings.Join(plugins, " "))
			continue
		}
		var failed []string
		for _, v := range n.Filters {
			if v.Code != framework.Success {
				failed = append(failed, fmt.Sprintf("%s(%s)", v.Plugin, strings.Join(v.Reasons, "; ")))
			}
		}
		fmt.Fprintf(b, "  %-18s %s: %s | all: %s\n", n.Name, n.Status.Plugin(), n.Status.Message(), strings.Join(failed, " "))
	}
}

// Default topology spreading takes a pod's selector from the Services,
// ReplicationControllers, ReplicaSets and StatefulSets of its namespace. A
// live read refused those cluster-wide and read them in namespace "team"
// alone (Snapshot.ReadIn): a pod of "team" is evaluated, a pod of "other"
// is not (never a plain yes), and a pod with constraints of its own needs
// none of them.
func TestDefaultSpreadingSelectorsUnreadable(t *testing.T) {
	snap := &Snapshot{
		Nodes:      []*corev1.Node{testutil.MakeNode().Name("a").Capacity(testutil.Res{"cpu": "4", "memory": "8Gi"}).Obj()},
		Unreadable: []string{KindServices, KindReplicaSets},
		ReadIn:     map[string][]string{KindServices: {"team"}, KindReplicaSets: {"team"}},
	}
	s, err := NewScheduler(snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	own := testutil.MakePod().Namespace("other").Name("own").Req(testutil.Res{"cpu": "1"}).Obj()
	own.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname,
		WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}}
	for _, tt := range []struct {
		pod  *corev1.Pod
		want []string
	}{
		{testutil.MakePod().Namespace("team").Name("p").Req(testutil.Res{"cpu": "1"}).Obj(), nil},
		{testutil.MakePod().Namespace("other").Name("p").Req(testutil.Res{"cpu": "1"}).Obj(), []string{"PodTopologySpread: PodTopologySpread not evaluated: " +
			"default topology spreading takes the pod's selector from the Services, ReplicationControllers, ReplicaSets and StatefulSets of namespace other, " +
			"and the snapshot could not list services, replicasets.apps there"}},
		{own, nil},
	} {
		res, err := s.Schedule(context.Background(), tt.pod)
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != VerdictScheduled {
			t.Errorf("%s/%s: %s, want Scheduled", tt.pod.Namespace, tt.pod.Name, res.Verdict)
		}
		if diff := cmp.Diff(tt.want, res.NotEvaluated); diff != "" {
			t.Errorf("%s/%s: not evaluated (-want +got):\n%s", tt.pod.Namespace, tt.pod.Name, diff)
		}
	}
}

// A pod with claims on a snapshot that could not list the storage kinds is
// not evaluated (it was "persistentvolumeclaim not found", a wrong no, or a
// volume's node affinity silently passed); a pod without claims needs none.
func TestStorageUnreadable(t *testing.T) {
	snap := &Snapshot{
		Nodes:      []*corev1.Node{testutil.MakeNode().Name("a").Capacity(testutil.Res{"cpu": "4", "memory": "8Gi"}).Obj()},
		Unreadable: []string{KindPersistentVolumeClaims, "persistentvolumes"},
		ReadIn:     map[string][]string{KindPersistentVolumeClaims: {"team"}},
	}
	s, err := NewScheduler(snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	withClaim := testutil.MakePod().Namespace("team").Name("db").Req(testutil.Res{"cpu": "1"}).Obj()
	withClaim.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	res, err := s.Schedule(context.Background(), withClaim)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"volumes: the pod's PersistentVolumeClaims and their volumes are not evaluated: the snapshot could not list persistentvolumes (namespace team)"}
	if diff := cmp.Diff(want, res.NotEvaluated); diff != "" {
		t.Errorf("not evaluated (-want +got):\n%s", diff)
	}
	res, err = s.Schedule(context.Background(), testutil.MakePod().Namespace("team").Name("web").Req(testutil.Res{"cpu": "1"}).Obj())
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != VerdictScheduled || len(res.NotEvaluated) > 0 {
		t.Errorf("pod without claims: %s, not evaluated %v; want Scheduled, everything evaluated", res.Verdict, res.NotEvaluated)
	}
}
