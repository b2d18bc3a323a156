package explain

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/coscheduling"
	"github.com/kubectl-gang/kubectl-gang/pkg/volcano"
)

// The case (#28): two pending 3 x 8-GPU gangs and 4 free 8-GPU
// nodes; judged alone each fits, together only the first in queue order
// starts. Order follows each scheduler's queue sort: a higher priority
// first whatever its age (PrioritySort, Coscheduling.Less), then the older
// (Coscheduling: the PodGroup's creation, not its pods'), and a pod of no
// gang takes its turn by the same key.
func TestQueueTakesEntriesInSchedulerOrder(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	gpu := testutil.Res{"nvidia.com/gpu": "8"}
	members := func(group string, n int, created time.Time, prio int32) []*corev1.Pod {
		var out []*corev1.Pod
		for i := range n {
			w := testutil.MakePod().Namespace("ml").Name(group + "-" + string(rune('0'+i))).Req(gpu).CoschedulingGroup(group).Created(created)
			if prio != 0 {
				w = w.Priority("p", prio)
			}
			out = append(out, w.Obj())
		}
		return out
	}
	group := func(name string, min int64, created time.Time) *unstructured.Unstructured {
		u := testutil.MakeCoschedulingPodGroup("ml", name, min).Obj()
		u.SetCreationTimestamp(metav1.NewTime(created))
		return u
	}
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 4)}
	// "first" is the older PodGroup although its pods were created last.
	snap.Pods = append(snap.Pods, members("first", 3, at(30), 0)...)
	snap.Pods = append(snap.Pods, members("second", 3, at(1), 0)...)
	snap.PodGroups = []*unstructured.Unstructured{group("first", 3, at(0)), group("second", 3, at(1))}
	run := func() []string {
		t.Helper()
		lines, err := ListPending(context.Background(), snap, "", defaultQueue(t))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range lines {
			got = append(got, l.Name()+" "+string(l.Outcome)+" "+l.Reason)
		}
		return got
	}
	want := []string{
		"podgroup/first Starts starts on zone-a-0, zone-a-1, zone-a-2",
		// Coscheduling orders equal priorities by the PodGroup's creation:
		// no doubt about the order.
		"podgroup/second Waits waits: fits the cluster as it is, but podgroup/first ahead of it take(s) the room",
	}
	if diff := cmp.Diff(want, run()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// explain podgroup/second says where it stands and who is ahead.
	place, err := Position(context.Background(), snap, defaultQueue(t), func(l *Pending) bool { return l.Gang != nil && l.Gang.Name == "second" })
	if err != nil {
		t.Fatal(err)
	}
	if place == nil || place.Entry.Position != 2 || place.Of != 2 || place.Entry.Outcome != OutcomeWaits || len(place.Ahead) != 1 || place.Ahead[0].Name() != "podgroup/first" {
		t.Errorf("Position of second: %+v", place)
	}

	// A newer gang of higher priority goes first, and a pod of no gang
	// of higher priority still before it takes a node.
	snap.Pods = append(snap.Pods, members("urgent", 2, at(60), 1000)...)
	snap.PodGroups = append(snap.PodGroups, group("urgent", 2, at(60)))
	snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("ml").Name("hot").Req(gpu).Priority("p", 2000).Created(at(90)).Obj())
	want = []string{
		"pod/hot Starts starts on zone-a-0",
		"podgroup/urgent Starts starts on zone-a-1, zone-a-2",
		"podgroup/first Waits waits: fits the cluster as it is, but pod/hot, podgroup/urgent ahead of it take(s) the room",
		"podgroup/second Waits waits: fits the cluster as it is, but pod/hot, podgroup/urgent ahead of it take(s) the room",
	}
	if diff := cmp.Diff(want, run()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A gang of higher priority that cannot start yet may preempt what starts
// behind it at a lower priority: those starts are not a plain yes.
func TestQueueStartsBehindAPreemptorAreUnverified(t *testing.T) {
	gpu := testutil.Res{"nvidia.com/gpu": "8"}
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 4)}
	// A running pod of higher priority than anything pending holds a node.
	snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("ml").Name("keep").Req(gpu).Priority("top", 5000).BoundTo("zone-a-0").Obj())
	for i := range 4 {
		snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("ml").Name("big-"+string(rune('0'+i))).Req(gpu).CoschedulingGroup("big").Priority("high", 1000).Obj())
	}
	snap.PodGroups = []*unstructured.Unstructured{testutil.MakeCoschedulingPodGroup("ml", "big", 4).Obj()}
	snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("ml").Name("small").Req(gpu).Obj())
	never := corev1.PreemptNever
	lines, err := ListPending(context.Background(), snap, "", defaultQueue(t))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		got = append(got, l.Name()+" "+string(l.Outcome))
	}
	if diff := cmp.Diff([]string{"podgroup/big Blocked", "pod/small Unverified"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A gang that never preempts leaves the start a yes.
	for _, pod := range snap.Pods {
		if strings.HasPrefix(pod.Name, "big-") {
			pod.Spec.PreemptionPolicy = &never
		}
	}
	if lines, err = ListPending(context.Background(), snap, "", defaultQueue(t)); err != nil {
		t.Fatal(err)
	}
	if lines[1].Outcome != OutcomeStarts {
		t.Errorf("with PreemptNever: %s %s, want Starts", lines[1].Name(), lines[1].Outcome)
	}
}

// Equal priorities, one room: kube-scheduler takes them by the time each
// entered its queue, which no snapshot holds, so the start is not a plain
// yes and the wait says why.
func TestQueueEqualPrioritiesRace(t *testing.T) {
	gpu := testutil.Res{"nvidia.com/gpu": "8"}
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 4)}
	for _, g := range []string{"a", "b"} {
		snap.PodGroups = append(snap.PodGroups, testutil.MakeNativePodGroup("ml", g, 3).Obj())
		for i := range 3 {
			snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("ml").Name(g+"-"+string(rune('0'+i))).Req(gpu).PodGroup(g).Obj())
		}
	}
	lines, err := ListPending(context.Background(), snap, "", defaultQueue(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || lines[0].Outcome != OutcomeUnverified || !strings.Contains(lines[0].Reason, "podgroup/b, of equal priority, waits for the same room") ||
		lines[1].Outcome != OutcomeWaits || !strings.Contains(lines[1].Reason, "ahead by an order the scheduler's own queue may not keep") {
		for _, l := range lines {
			t.Logf("%s %s: %s", l.Name(), l.Outcome, l.Reason)
		}
		t.Error("want a Unverified (b of equal priority races it), b Waits with the caveat")
	}
}

// Volcano: a job that started is allocated, not pending, in the next
// job's session (its PodGroup Running): a queue of capability 16 GPUs
// holds two 8-GPU jobs with minResources; were the first enqueued again it
// would count twice and the second would wait. A member gated only by
// Volcano's own queue-allocation gate competes (Volcano removes it).
func TestQueueVolcanoJobsShareTheirQueue(t *testing.T) {
	gpu := testutil.Res{"nvidia.com/gpu": "8"}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 4),
		Objects: []*unstructured.Unstructured{testutil.MakeVolcanoQueue("q").Capability(testutil.Res{"nvidia.com/gpu": "16", "cpu": "1000", "memory": "10000Gi"}).Obj()}}
	for i, g := range []string{"one", "two"} {
		pg := testutil.MakeVolcanoPodGroup("ml", g, 1).Queue("q").MinResources(gpu).Obj()
		pg.SetCreationTimestamp(metav1.NewTime(t0.Add(time.Duration(i) * time.Hour)))
		snap.PodGroups = append(snap.PodGroups, pg)
		snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("ml").Name(g+"-0").Req(gpu).VolcanoGroup(g).
			SchedulingGate("scheduling.volcano.sh/queue-allocation-gate").Created(t0.Add(time.Duration(i)*time.Hour)).Obj())
	}
	lines, err := ListPending(context.Background(), snap, "", defaultQueue(t))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		got = append(got, l.Name()+" "+string(l.Outcome))
	}
	if diff := cmp.Diff([]string{"podgroup/one Starts", "podgroup/two Starts"}, got); diff != "" {
		for _, l := range lines {
			t.Logf("%s %s: %s", l.Name(), l.Outcome, l.Reason)
		}
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// On the emptied cluster, claims only removed pods used hold no devices:
// a DRA gang blocked by running pods' devices fits there, so it is
// Blocked, not NeverFits.
func TestQueueEmptiedClusterFreesDevices(t *testing.T) {
	snap, g := draGang(4, 4)
	var claims []*resourcev1.ResourceClaim
	for _, node := range []string{"gpu-0", "gpu-1"} {
		user := testutil.MakePod().Namespace("other").Name("user-"+node).UID("user-"+node).BoundTo(node).Claim("gpus", "c-"+node).Obj()
		c := testutil.MakeClaim("other", "c-"+node, testutil.ExactRequest("gpus", "gpu", 4))
		var results []resourcev1.DeviceRequestAllocationResult
		for d := range 4 {
			results = append(results, resourcev1.DeviceRequestAllocationResult{Request: "gpus", Driver: "gpu.example.com", Pool: node, Device: fmt.Sprintf("gpu%d", d)})
		}
		c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: results}}
		c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: user.Name, UID: user.UID}}
		claims = append(claims, c)
		snap.Pods = append(snap.Pods, user)
	}
	snap.ResourceClaims = claims
	snap.PodGroups = []*unstructured.Unstructured{testutil.MakeNativePodGroup("ml", g.Name, 4).Obj()}
	for _, pod := range snap.Pods {
		if pod.Namespace == "ml" {
			pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &g.Name}
		}
	}
	snap.Sort()
	lines, err := ListPending(context.Background(), snap, "ml", defaultQueue(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0].Outcome != OutcomeBlocked {
		for _, l := range lines {
			t.Logf("%s %s: %s", l.Name(), l.Outcome, l.Reason)
		}
		t.Errorf("want the gang Blocked: it fits once the running pods and their devices are gone")
	}
}

// TestQueueVolcanoQueuesByShare: Volcano's allocate action takes queues, not
// jobs, in turn: it pops the queue of the highest priority and then the
// smallest share (proportion's QueueOrderFn: allocated/deserved), allocates
// that queue's next job (JobOrderFn: priority, then creation) and pushes the
// queue back with its share updated (allocate.go's allocateResources).
// Queues a and b of equal weight, jobs past enqueue (Inqueue) of one 8-GPU
// task each: a1 (oldest), a2, b1 (newest), on 4 nodes of 8 GPUs of which
// other pods fill some. Deserved (proportion's water-filling over 32 GPUs):
// a 16, b 8. Both shares are 0 at first, a tie: a1 goes first (the list's
// order), but Volcano's priority queue may pop b first. Then a's share is
// 8/16 and b's 0: b1 before a2, although a2 is older. Expected answers
// derived by hand from that code (no Volcano binary here).
func TestQueueVolcanoQueuesByShare(t *testing.T) {
	gpu := testutil.Res{"nvidia.com/gpu": "8"}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	build := func(free int, bPriority int64, bOlder bool) *schedule.Snapshot {
		qa, qb := testutil.MakeVolcanoQueue("a").Obj(), testutil.MakeVolcanoQueue("b").Obj()
		if bPriority != 0 {
			_ = unstructured.SetNestedField(qb.Object, bPriority, "spec", "priority")
		}
		if bOlder {
			// Equal shares: QueueOrderFn falls back to the older queue.
			qa.SetCreationTimestamp(metav1.NewTime(t0.Add(-time.Hour)))
			qb.SetCreationTimestamp(metav1.NewTime(t0.Add(-2 * time.Hour)))
			qa.SetUID("uid-a")
			qb.SetUID("uid-b")
		}
		snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 4),
			Objects: []*unstructured.Unstructured{qa, qb}}
		for n := free; n < 4; n++ {
			snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("other").Name(fmt.Sprintf("busy-%d", n)).
				Req(gpu).Node(fmt.Sprintf("zone-a-%d", n)).Phase(corev1.PodRunning).Obj())
		}
		for i, job := range []struct{ name, queue string }{{"a1", "a"}, {"a2", "a"}, {"b1", "b"}} {
			pg := testutil.MakeVolcanoPodGroup("ml", job.name, 1).Queue(job.queue).MinResources(gpu).Phase("Inqueue").Obj()
			pg.SetCreationTimestamp(metav1.NewTime(t0.Add(time.Duration(i) * time.Hour)))
			snap.PodGroups = append(snap.PodGroups, pg)
			snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("ml").Name(job.name+"-0").Req(gpu).VolcanoGroup(job.name).
				SchedulingGate("scheduling.volcano.sh/queue-allocation-gate").Created(t0.Add(time.Duration(i)*time.Hour)).Obj())
		}
		snap.Sort()
		return snap
	}
	for _, tc := range []struct {
		name      string
		free      int
		bPriority int64
		bOlder    bool
		want      []string
	}{
		// Room for two: a1 and b1 start (whichever queue goes first), a2
		// waits, certainly; the list's order alone would start a2.
		{"room for two", 2, 0, false, []string{"1 podgroup/a1 Starts", "2 podgroup/b1 Starts", "3 podgroup/a2 Waits"}},
		// Room for one: a1 would start, but only by the tie.
		{"room for one", 1, 0, false, []string{"1 podgroup/a1 Unverified", "2 podgroup/b1 Waits", "3 podgroup/a2 Waits"}},
		// Equal priorities and shares, the queues' creation known: the
		// older queue b goes first, for certain.
		{"b first by age", 1, 0, true, []string{"1 podgroup/b1 Starts", "2 podgroup/a1 Waits", "3 podgroup/a2 Waits"}},
		// Queue b's higher priority goes first whatever the shares.
		{"b first by priority", 1, 10, false, []string{"1 podgroup/b1 Starts", "2 podgroup/a1 Waits", "3 podgroup/a2 Waits"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, err := ListPending(context.Background(), build(tc.free, tc.bPriority, tc.bOlder), "", defaultQueue(t))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range lines {
				got = append(got, fmt.Sprintf("%d %s %s", l.Position, l.Name(), l.Outcome))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				for _, l := range lines {
					t.Logf("%s %s: %s", l.Name(), l.Outcome, l.Reason)
				}
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// explain podgroup/b1 finds it second, behind a1, though the list by
	// priority and creation put it last.
	place, err := Position(context.Background(), build(2, 0, false), defaultQueue(t), func(l *Pending) bool { return l.Gang != nil && l.Gang.Name == "b1" })
	if err != nil {
		t.Fatal(err)
	}
	if place == nil || place.Entry.Position != 2 || len(place.Ahead) != 1 || place.Ahead[0].Gang.Name != "a1" {
		t.Errorf("b1's place: %+v, want position 2 behind a1", place)
	}
}

// TestQueueVolcanoQueueOrderOfTheConfiguration: queues are ordered by the
// QueueOrderFn of the plugins the configuration enables (Session.QueueOrderFn,
// framework/session_plugins.go); when none orders queues (no proportion
// nor capacity, or enableQueueOrder: false), Volcano takes them by
// creation, then UID: spec.priority is read only inside proportion's and
// capacity's QueueOrderFn. Queue b has the higher priority, a is older;
// room for one: a1 starts, not b1.
func TestQueueVolcanoQueueOrderOfTheConfiguration(t *testing.T) {
	gpu := testutil.Res{"nvidia.com/gpu": "8"}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	build := func(conf string) *schedule.Snapshot {
		qa, qb := testutil.MakeVolcanoQueue("a").Obj(), testutil.MakeVolcanoQueue("b").Obj()
		qa.SetCreationTimestamp(metav1.NewTime(t0))
		qb.SetCreationTimestamp(metav1.NewTime(t0.Add(time.Hour)))
		_ = unstructured.SetNestedField(qb.Object, int64(10), "spec", "priority")
		// Two nodes (proportion's deserved is half the cluster each), one
		// taken by a pod of no queue: room for one.
		snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 2), Objects: []*unstructured.Unstructured{qa, qb},
			Pods: []*corev1.Pod{testutil.MakePod().Namespace("other").Name("busy").Req(gpu).Node("zone-a-1").Phase(corev1.PodRunning).Obj()}}
		for i, job := range []struct{ name, queue string }{{"a1", "a"}, {"b1", "b"}} {
			pg := testutil.MakeVolcanoPodGroup("ml", job.name, 1).Queue(job.queue).MinResources(gpu).Phase("Inqueue").Obj()
			pg.SetCreationTimestamp(metav1.NewTime(t0.Add(time.Duration(i) * time.Hour)))
			snap.PodGroups = append(snap.PodGroups, pg)
			snap.Pods = append(snap.Pods, testutil.MakePod().Namespace("ml").Name(job.name+"-0").Req(gpu).VolcanoGroup(job.name).
				Created(t0.Add(time.Duration(i)*time.Hour)).Obj())
		}
		c, err := volcano.Parse([]byte(conf), "test")
		if err != nil {
			t.Fatal(err)
		}
		volcano.SetConfigIn(&snap.Systems, c, "")
		snap.Sort()
		return snap
	}
	for name, conf := range map[string]string{
		"no queue plugin": `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: nodeorder
`,
		"proportion without queue order": `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
    enableQueueOrder: false
  - name: nodeorder
`,
	} {
		t.Run(name, func(t *testing.T) {
			lines, err := ListPending(context.Background(), build(conf), "", defaultQueue(t))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range lines {
				got = append(got, fmt.Sprintf("%s %s", l.Name(), l.Outcome))
			}
			// b1 must not be a plain yes: Volcano takes queue a first.
			for _, l := range lines {
				if l.Gang != nil && l.Gang.Name == "b1" && l.Outcome == OutcomeStarts {
					for _, l := range lines {
						t.Logf("%d %s %s: %s", l.Position, l.Name(), l.Outcome, l.Reason)
					}
					t.Errorf("b1 starts (%v); Volcano takes queue a, the older, first and a1 takes the node", got)
				}
			}
		})
	}
}

// Seen on the test bed (CI, 2026-11-28): scheduler-plugins' Coscheduling
// bound podgroup/old-low where the simulation started podgroup/mid and
// podgroup/tail. Coscheduling assumes the members of a gang that does not
// fit (huge: 7 x 8 GPUs, 6 nodes) as they fit and holds them at Permit
// until one fails and its PostFilter rejects the waiting ones
// (Coscheduling.PostFilter, waitingPod.Reject: the nodes are freed when
// the binding cycles unreserve, not at once). mid, tried meanwhile, fails
// and backs off; old-low, behind it, takes the room. So a start on nodes
// such a gang may hold is no plain yes when an entry behind it may take
// its room, the waiting entry that may is Raced, and a start behind an
// uncertain entry on nodes it may take is no plain yes either
// (markUnsettled).
func TestQueueCoschedulingHoldUnsettlesWhatComesBehind(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	gpu := testutil.Res{"nvidia.com/gpu": "8"}
	type g struct {
		name      string
		members   int
		priority  int32
		createdAt int
		min       int64        // minMember when not members
		zone      string       // a node selector, when set
		scheduler string       // schedulerName, when not the default
		minRes    testutil.Res // Coscheduling's minResources
	}
	build := func(zones map[string]int, gangs []g) *schedule.Snapshot {
		snap := &schedule.Snapshot{}
		for _, z := range []string{"zone-a", "zone-b"} {
			snap.Nodes = append(snap.Nodes, testutil.GPUNodes(z, zones[z])...)
		}
		for _, x := range gangs {
			created := t0.Add(time.Duration(x.createdAt) * time.Minute)
			for i := range x.members {
				w := testutil.MakePod().Namespace("ml").Name(fmt.Sprintf("%s-%d", x.name, i)).Req(gpu).CoschedulingGroup(x.name).Created(created)
				if x.priority != 0 {
					w = w.Priority(fmt.Sprintf("p%d", x.priority), x.priority)
				}
				p := w.Obj()
				if x.zone != "" {
					p.Spec.NodeSelector = map[string]string{corev1.LabelTopologyZone: x.zone}
				}
				if x.scheduler != "" {
					p.Spec.SchedulerName = x.scheduler
				}
				snap.Pods = append(snap.Pods, p)
			}
			min := x.min
			if min == 0 {
				min = int64(x.members)
			}
			w := testutil.MakeCoschedulingPodGroup("ml", x.name, min)
			if x.minRes != nil {
				w = w.MinResources(x.minRes)
			}
			u := w.Obj()
			u.SetCreationTimestamp(metav1.NewTime(created))
			snap.PodGroups = append(snap.PodGroups, u)
		}
		return snap
	}
	run := func(snap *schedule.Snapshot) map[string]Pending {
		t.Helper()
		lines, err := ListPending(context.Background(), snap, "", defaultQueue(t))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]Pending{}
		for _, l := range lines {
			out[l.Gang.Name] = l
		}
		return out
	}
	check := func(t *testing.T, got map[string]Pending, name string, outcome Outcome, raced bool, says ...string) {
		t.Helper()
		l := got[name]
		if l.Outcome != outcome || l.Raced != raced {
			t.Errorf("%s: %s raced=%v (%s), want %s raced=%v", name, l.Outcome, l.Raced, l.Reason, outcome, raced)
		}
		for _, s := range says {
			if !strings.Contains(l.Reason, s) {
				t.Errorf("%s: reason %q does not say %q", name, l.Reason, s)
			}
		}
	}
	// The test bed's scenario, in creation order.
	oldLow := g{name: "old-low", members: 3}
	huge := g{name: "huge", members: 7, priority: 500, createdAt: 1}
	newHigh := g{name: "new-high", members: 3, priority: 1000, createdAt: 2}
	mid := g{name: "mid", members: 2, priority: 500, createdAt: 3}
	tail := g{name: "tail", members: 1, createdAt: 4}
	snap := build(map[string]int{"zone-a": 6}, []g{oldLow, huge, newHigh, mid, tail})
	got := run(snap)
	check(t, got, "new-high", OutcomeStarts, false)
	check(t, got, "huge", OutcomeNeverFits, false)
	check(t, got, "mid", OutcomeUnverified, false, "podgroup/huge, ahead of it, may hold zone-a-3, zone-a-4 at Permit", "podgroup/old-low, behind it, may take its room")
	check(t, got, "old-low", OutcomeWaits, true, "ahead by an order the scheduler's own queue may not keep: podgroup/mid may not start as planned, podgroup/huge may hold its nodes while Coscheduling tries it")
	check(t, got, "tail", OutcomeUnverified, false, "podgroup/mid, ahead of it, may start elsewhere than planned")

	// explain podgroup/X says the same of X as the list.
	position := func(snap *schedule.Snapshot, got map[string]Pending, names ...string) {
		t.Helper()
		for _, name := range names {
			place, err := Position(context.Background(), snap, defaultQueue(t), func(l *Pending) bool { return l.Gang != nil && l.Gang.Name == name })
			if err != nil {
				t.Fatal(err)
			}
			if place.Entry.Outcome != got[name].Outcome || place.Entry.Raced != got[name].Raced || place.Entry.Reason != got[name].Reason {
				t.Errorf("Position of %s: %s raced=%v %q; the list: %s raced=%v %q", name, place.Entry.Outcome, place.Entry.Raced, place.Entry.Reason,
					got[name].Outcome, got[name].Raced, got[name].Reason)
			}
		}
	}
	position(snap, got, "mid", "old-low", "tail", "new-high")

	// Without the gang that holds, the order is certain.
	got = run(build(map[string]int{"zone-a": 6}, []g{oldLow, newHigh, mid, tail}))
	check(t, got, "new-high", OutcomeStarts, false)
	check(t, got, "mid", OutcomeStarts, false)
	check(t, got, "old-low", OutcomeWaits, false)
	check(t, got, "tail", OutcomeStarts, false)

	// A start on held nodes with nothing behind it that could take its
	// room starts once they are free: unsettled, still a yes.
	got = run(build(map[string]int{"zone-a": 6}, []g{huge, newHigh, mid}))
	check(t, got, "mid", OutcomeStarts, false)
	if l := got["mid"]; !l.held || !strings.Contains(l.unsettled, "podgroup/huge, ahead of it, may hold") {
		t.Errorf("mid is not seen on huge's hold: held=%v %q", l.held, l.unsettled)
	}

	// A hold on other nodes unsettles nothing: huge is held to zone-b.
	inA := func(gs ...g) []g {
		for i := range gs {
			gs[i].zone = "zone-a"
		}
		return gs
	}
	hugeB := huge
	hugeB.members, hugeB.zone = 3, "zone-b"
	got = run(build(map[string]int{"zone-a": 6, "zone-b": 2}, append([]g{hugeB}, inA(oldLow, newHigh, mid, tail)...)))
	check(t, got, "huge", OutcomeNeverFits, false)
	check(t, got, "mid", OutcomeStarts, false)
	check(t, got, "old-low", OutcomeWaits, false)
	check(t, got, "tail", OutcomeStarts, false)
	// ... unless the start has minResources: PreFilter's
	// CheckClusterResource counts the assumed pods of every node.
	midRes := inA(mid)[0]
	midRes.minRes = testutil.Res{"nvidia.com/gpu": "16"}
	got = run(build(map[string]int{"zone-a": 6, "zone-b": 2}, append([]g{hugeB, midRes}, inA(oldLow, newHigh, tail)...)))
	check(t, got, "mid", OutcomeUnverified, false, "podgroup/huge, ahead of it, holds nodes at Permit while Coscheduling tries it, which its minResources check (PreFilter) counts as taken")
	// A holder on its own nodes says so before one elsewhere does.
	hugeA := g{name: "huge-a", members: 7, priority: 500, createdAt: 2, zone: "zone-a"}
	got = run(build(map[string]int{"zone-a": 6, "zone-b": 2}, append([]g{hugeB, hugeA, midRes}, inA(oldLow, newHigh, tail)...)))
	check(t, got, "mid", OutcomeUnverified, false, "podgroup/huge-a, ahead of it, may hold zone-a-3, zone-a-4 at Permit")

	// Another scheduler's hold is not this one's: its assumed pods are in
	// its own memory.
	hugeOther := huge
	hugeOther.scheduler = "other-scheduler"
	got = run(build(map[string]int{"zone-a": 6}, []g{oldLow, hugeOther, newHigh, mid, tail}))
	check(t, got, "mid", OutcomeStarts, false)
	check(t, got, "old-low", OutcomeWaits, false)
	check(t, got, "tail", OutcomeStarts, false)

	// A raced gang may take a node a start behind it uses with the nodes
	// of the start ahead it raced: old-low needs three nodes, mid may
	// leave it two of zone-a, and tail's node in zone-b is the third.
	snap = build(map[string]int{"zone-a": 5, "zone-b": 1}, append([]g{oldLow, huge}, append(inA(newHigh, mid), tail)...))
	got = run(snap)
	check(t, got, "mid", OutcomeUnverified, false, "podgroup/huge, ahead of it, may hold zone-a-3, zone-a-4")
	check(t, got, "old-low", OutcomeWaits, true)
	check(t, got, "tail", OutcomeUnverified, false, "podgroup/old-low, ahead of it, may start (it waits only by an order the scheduler may not keep) and take zone-b-0 first")
	position(snap, got, "old-low", "tail")
}

// A waiting entry behind a start whose place an entry behind both makes
// uncertain (another scheduler waits for its room) is raced, and explain
// of it says so as the list does, though what unsettles the start comes
// after it.
func TestQueueRacedByWhatComesBehind(t *testing.T) {
	gpu := testutil.Res{"nvidia.com/gpu": "8"}
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 1)}
	snap.Pods = append(snap.Pods,
		testutil.MakePod().Namespace("ml").Name("a").Req(gpu).Priority("p100", 100).Obj(),
		testutil.MakePod().Namespace("ml").Name("w").Req(gpu).Priority("p50", 50).Obj())
	x := testutil.MakePod().Namespace("ml").Name("x").Req(gpu).Priority("p10", 10).Obj()
	x.Spec.SchedulerName = "other-scheduler"
	snap.Pods = append(snap.Pods, x)
	lines, err := ListPending(context.Background(), snap, "", defaultQueue(t))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		got = append(got, fmt.Sprintf("%s %s raced=%v", l.Name(), l.Outcome, l.Raced))
	}
	want := []string{"pod/a Unverified raced=false", "pod/w Waits raced=true", "pod/x Waits raced=true"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	place, err := Position(context.Background(), snap, defaultQueue(t), func(l *Pending) bool { return l.Pod.Name == "w" })
	if err != nil {
		t.Fatal(err)
	}
	if place.Entry.Outcome != OutcomeWaits || !place.Entry.Raced || place.Entry.Reason != lines[1].Reason {
		t.Errorf("Position of w: %s raced=%v %q; the list: %q", place.Entry.Outcome, place.Entry.Raced, place.Entry.Reason, lines[1].Reason)
	}
}

// feasible is where an entry may go in another order: the nodes where one
// of its pods passes Filter on the cluster as it is, every node past a few
// shapes or when a gang's pod passes nowhere.
func TestQueueFeasibleIsWhereAnEntryMayGo(t *testing.T) {
	gpu := testutil.Res{"nvidia.com/gpu": "8"}
	snap := &schedule.Snapshot{Nodes: append(testutil.GPUNodes("zone-a", 2), testutil.GPUNodes("zone-b", 2)...)}
	sim := newQueueSim(snap, defaultQueue(t))
	pod := func(name, zone string, labels int) *corev1.Pod {
		w := testutil.MakePod().Namespace("ml").Name(name).Req(gpu).CoschedulingGroup("g")
		for i := range labels {
			w = w.Label(fmt.Sprintf("l%d", i), name)
		}
		p := w.Obj()
		if zone != "" {
			p.Spec.NodeSelector = map[string]string{corev1.LabelTopologyZone: zone}
		}
		return p
	}
	nodes := func(m map[string]bool) []string {
		var out []string
		for n := range m {
			out = append(out, n)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name string
		pods []*corev1.Pod
		gang bool
		want []string
	}{
		{"a pod of zone-a", []*corev1.Pod{pod("p", "zone-a", 0)}, false, []string{"zone-a-0", "zone-a-1"}},
		{"a pod nowhere", []*corev1.Pod{pod("p", "zone-c", 0)}, false, nil},
		{"a gang of zone-a and zone-b", []*corev1.Pod{pod("p0", "zone-a", 0), pod("p1", "zone-b", 0)}, true, []string{"zone-a-0", "zone-a-1", "zone-b-0", "zone-b-1"}},
		{"a gang of one shape", []*corev1.Pod{pod("p0", "zone-a", 0), pod("p1", "zone-a", 0)}, true, []string{"zone-a-0", "zone-a-1"}},
		{"a gang with a pod nowhere", []*corev1.Pod{pod("p0", "zone-a", 0), pod("p1", "zone-c", 0)}, true, []string{"zone-a-0", "zone-a-1", "zone-b-0", "zone-b-1"}},
	} {
		l := &Pending{Pod: tc.pods[0]}
		if tc.gang {
			l = &Pending{Gang: &gang.Gang{Source: coscheduling.Source, Members: tc.pods}}
		}
		f, err := sim.feasible(context.Background(), l)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, nodes(f)); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", tc.name, diff)
		}
	}
	// Past maxFeasibleShapes classes, every node, though each passes on
	// zone-a. Labels no selector reads do not make a class (an Indexed
	// Job's members share one): the pods differ in what Filter reads.
	var many, sameClass []*corev1.Pod
	for i := range maxFeasibleShapes + 1 {
		p := pod(fmt.Sprintf("p%d", i), "zone-a", i+1)
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = *resource.NewQuantity(int64(i+1), resource.DecimalSI)
		many = append(many, p)
		sameClass = append(sameClass, pod(fmt.Sprintf("q%d", i), "zone-a", i+1))
	}
	opts, _ := defaultQueue(t).PlaceFor(coscheduling.Source, many)
	s, err := sim.initial.scheduler(opts.Profile)
	if err != nil {
		t.Fatal(err)
	}
	if f, _, err := passing(context.Background(), s, sameClass); err != nil || len(f) != 2 {
		t.Errorf("%d pods of one class but their labels: %v %v, want zone-a's nodes", len(sameClass), nodes(f), err)
	}
	f, _, err := passing(context.Background(), s, many)
	if err != nil {
		t.Fatal(err)
	}
	if len(f) != 4 {
		t.Errorf("%d shapes: %v, want every node", len(many), nodes(f))
	}
	f, _, err = passing(context.Background(), s, many[:maxFeasibleShapes])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"zone-a-0", "zone-a-1"}, nodes(f)); diff != "" {
		t.Errorf("%d shapes: (-want +got):\n%s", maxFeasibleShapes, diff)
	}
}
