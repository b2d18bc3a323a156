package explain

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// Without a subject, explain lists what waits: a gang per line whatever
// its kind (members rolled up, running ones counted), a pod of no gang per
// line, a pod whose PodGroup is missing, gated pods; bound pods and other
// namespaces are left out.
func TestListPending(t *testing.T) {
	gpu := testutil.Res{"nvidia.com/gpu": "8"}
	pod := func(ns, name string) *testutil.PodWrapper {
		return testutil.MakePod().Namespace(ns).Name(name).Req(gpu)
	}
	snap := &schedule.Snapshot{
		Nodes: testutil.GPUNodes("zone-a", 3),
		Pods: []*corev1.Pod{
			pod("ml", "big-0").PodGroup("big").Obj(), pod("ml", "big-1").PodGroup("big").Obj(),
			pod("ml", "big-2").PodGroup("big").Obj(), pod("ml", "big-3").PodGroup("big").Obj(),
			pod("ml", "small-0").VolcanoGroup("small").Obj(), pod("ml", "small-1").VolcanoGroup("small").BoundTo("zone-a-0").Obj(),
			pod("ml", "solo").Obj(),
			pod("ml", "huge").Req(testutil.Res{"nvidia.com/gpu": "16"}).Obj(),
			pod("ml", "orphan").CoschedulingGroup("gone").Obj(),
			pod("ml", "waiting").SchedulingGate("example.com/hold").Obj(),
			pod("ml", "running").BoundTo("zone-a-1").Obj(),
			pod("other", "elsewhere").Obj(),
			pod("ml", "kq-0").Label(gang.KueuePodGroupLabel, "kq").Annotation(gang.KueueTotalCountAnnotation, "2").Obj(),
			pod("ml", "kq-1").Label(gang.KueuePodGroupLabel, "kq").Annotation(gang.KueueTotalCountAnnotation, "2").Obj(),
			pod("ml", "kq-bad").Label(gang.KueuePodGroupLabel, "bad").Obj(),
		},
		PodGroups: []*unstructured.Unstructured{
			testutil.MakeNativePodGroup("ml", "big", 4).Obj(),
			testutil.MakeVolcanoPodGroup("ml", "small", 2).Obj(),
		},
	}
	lines, err := ListPending(context.Background(), snap, "ml", gang.PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name             string
		Pending, Members int
		Verdict          Verdict
		Reason           string
	}
	var got []row
	for _, l := range lines {
		got = append(got, row{l.Name(), l.PendingMembers, l.Members, l.Verdict, l.Reason})
	}
	want := []row{
		{"pod/huge", 1, 1, VerdictUnschedulable, "3 Insufficient nvidia.com/gpu"},
		// A Kueue pod group has no object: explain takes it by a member.
		{"pod/kq-0", 2, 2, VerdictUnschedulable, "1/2 fit: 3 Insufficient nvidia.com/gpu"},
		{"pod/kq-bad", 1, 1, VerdictUnschedulable, "pod ml/kq-bad is in Kueue pod group bad but has no kueue.x-k8s.io/pod-group-total-count annotation"},
		{"pod/orphan", 1, 1, VerdictUnschedulable, "PodGroup not found: its PodGroup podgroups.scheduling.x-k8s.io/gone does not exist in namespace ml, and the pod stays pending until it is created"},
		{"pod/solo", 1, 1, VerdictSchedulable, "fits 1 of 3 node(s); the best is zone-a-2 (score 399)"},
		{"pod/waiting", 1, 1, VerdictGated, "scheduling gates: example.com/hold"},
		{"podgroup/big", 4, 4, VerdictUnschedulable, "1/4 fit: 3 Insufficient nvidia.com/gpu"},
		{"podgroup/small", 1, 2, VerdictSchedulable, "gang ml/small placed: 1 running and 1 to place, minimum 2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// PodGroups of two kinds with one name are named in full.
	snap.PodGroups = append(snap.PodGroups, testutil.MakeCoschedulingPodGroup("ml", "big", 1).Obj())
	snap.Pods = append(snap.Pods, pod("ml", "cos-0").CoschedulingGroup("big").Obj())
	lines, err = ListPending(context.Background(), snap, "ml", gang.PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range lines {
		names = append(names, l.Name())
	}
	if diff := cmp.Diff([]string{"pod/huge", "pod/kq-0", "pod/kq-bad", "pod/orphan", "pod/solo", "pod/waiting", "podgroup/small",
		"podgroups.scheduling.k8s.io/big", "podgroups.scheduling.x-k8s.io/big"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	all, err := ListPending(context.Background(), snap, "", gang.PlaceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(want)+2 || all[0].Namespace != "ml" || all[len(all)-1].Name() != "pod/elsewhere" {
		t.Errorf("every namespace: %d lines, want %d, other's last", len(all), len(want)+2)
	}
}
