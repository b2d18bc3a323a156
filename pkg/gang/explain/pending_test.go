package explain

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/kueue"
)

// defaultQueue places every entry with the default profile.
func defaultQueue(t *testing.T) QueueOptions {
	p, err := schedule.DefaultProfile()
	if err != nil {
		t.Fatal(err)
	}
	return QueueOptions{PlaceFor: func(gang.Source, []*corev1.Pod) (gang.PlaceOptions, string) {
		return gang.PlaceOptions{Profile: p}, ""
	}}
}

// Without a subject, explain simulates the queue: a gang per line whatever
// its kind (members rolled up, running ones counted), a pod of no gang per
// line, a pod whose PodGroup is missing, gated pods; bound pods and other
// namespaces are left out of the lines but not out of the simulation. All
// have one priority and no creation time, so the queue takes them by
// namespace and name; each is placed on what those before it left.
func TestListPending(t *testing.T) {
	gpu := testutil.Res{"nvidia.com/gpu": "8"}
	pod := func(ns, name string) *testutil.PodWrapper {
		return testutil.MakePod().Namespace(ns).Name(name).Req(gpu)
	}
	// Three 8-GPU nodes: zone-a-0 and zone-a-1 are full, zone-a-2 is free.
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
			pod("ml", "kq-0").Label(kueue.PodGroupLabel, "kq").Annotation(kueue.TotalCountAnnotation, "2").Obj(),
			pod("ml", "kq-1").Label(kueue.PodGroupLabel, "kq").Annotation(kueue.TotalCountAnnotation, "2").Obj(),
			pod("ml", "kq-bad").Label(kueue.PodGroupLabel, "bad").Obj(),
		},
		PodGroups: []*unstructured.Unstructured{
			testutil.MakeNativePodGroup("ml", "big", 4).Obj(),
			testutil.MakeVolcanoPodGroup("ml", "small", 2).Obj(),
		},
	}
	lines, err := ListPending(context.Background(), snap, "ml", defaultQueue(t))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Position         int
		Name             string
		Pending, Members int
		Outcome          Outcome
		Reason           string // a prefix
		Behind           []string
	}
	var got []row
	for _, l := range lines {
		got = append(got, row{l.Position, l.Name(), l.PendingMembers, l.Members, l.Outcome, l.Reason, l.Behind})
	}
	want := []row{
		// Three nodes: big's four members never fit.
		{1, "podgroup/big", 4, 4, OutcomeNeverFits, "never fits, even with every other pod gone: 3/4 fit: 3 Insufficient nvidia.com/gpu", nil},
		{2, "pod/huge", 1, 1, OutcomeNeverFits, "never fits, even with every other pod gone: 3 Insufficient nvidia.com/gpu", nil},
		// A Kueue pod group has no object: explain takes it by a member.
		// One node is free: it is blocked, but fits an empty cluster.
		{3, "pod/kq-0", 2, 2, OutcomeBlocked, "1/2 fit: 3 Insufficient nvidia.com/gpu", nil},
		{4, "pod/kq-bad", 1, 1, OutcomeHeld, "pod ml/kq-bad is in Kueue pod group bad but has no kueue.x-k8s.io/pod-group-total-count annotation", nil},
		{5, "pod/orphan", 1, 1, OutcomeHeld, "PodGroup not found: its PodGroup podgroups.scheduling.x-k8s.io/gone does not exist in namespace ml, and the pod stays pending until it is created", nil},
		// small (a Volcano gang, not verified without Queues) takes the
		// free node; solo, of the same priority, waits behind it only by
		// an order no snapshot holds, and says so.
		{6, "podgroup/small", 1, 2, OutcomeUnverified, "would start on zone-a-2; not verified: the snapshot holds no Volcano Queues", nil},
		{7, "pod/solo", 1, 1, OutcomeWaits, "waits: fits the cluster as it is, but podgroup/small ahead of it take(s) the room (ahead by an order the scheduler's own queue may not keep)", []string{"podgroup/small"}},
		{8, "pod/waiting", 1, 1, OutcomeHeld, "scheduling gates: example.com/hold", nil},
	}
	for i := range got {
		if i < len(want) && strings.HasPrefix(got[i].Reason, want[i].Reason) {
			got[i].Reason = want[i].Reason
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// PodGroups of two kinds with one name are named in full.
	snap.PodGroups = append(snap.PodGroups, testutil.MakeCoschedulingPodGroup("ml", "big", 1).Obj())
	snap.Pods = append(snap.Pods, pod("ml", "cos-0").CoschedulingGroup("big").Obj())
	lines, err = ListPending(context.Background(), snap, "ml", defaultQueue(t))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range lines {
		names = append(names, l.Name())
	}
	if diff := cmp.Diff([]string{"podgroups.scheduling.k8s.io/big", "podgroups.scheduling.x-k8s.io/big", "pod/huge", "pod/kq-0", "pod/kq-bad", "pod/orphan",
		"podgroup/small", "pod/solo", "pod/waiting"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	all, err := ListPending(context.Background(), snap, "", defaultQueue(t))
	if err != nil {
		t.Fatal(err)
	}
	last := all[len(all)-1]
	if len(all) != len(want)+2 || all[0].Namespace != "ml" || last.Name() != "pod/elsewhere" || last.Outcome != OutcomeWaits {
		t.Errorf("every namespace: %d lines, want %d, other's last, waiting: %+v", len(all), len(want)+2, last)
	}
}
