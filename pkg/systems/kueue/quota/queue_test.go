package quota

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// pending is a Workload Kueue holds in LocalQueue queue, of one pod of gpu
// GPUs.
func pending(name, queue string, gpu int, prio int32, at string) string {
	return fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: %s, namespace: ns, uid: %s, creationTimestamp: "%s"}
spec:
  priority: %d
  queueName: %s
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, image: c, resources: {requests: {nvidia.com/gpu: "%d"}}}]}}}]
`, name, name, at, prio, queue, gpu)
}

func queueCQ(name, cohort, strategy string, gpus int, preemption string) string {
	c := ""
	if cohort != "" {
		c = "cohortName: " + cohort + ", "
	}
	return fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %s}
spec: {%snamespaceSelector: {}, queueingStrategy: %s, preemption: {%s}, resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: f0, resources: [{name: nvidia.com/gpu, nominalQuota: %d}]}]}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: %s, namespace: ns}
spec: {clusterQueue: %s}
`, name, c, strategy, preemption, gpus, name, name)
}

// Queue decides every pending Workload in Kueue's order (priority, then
// creation) on one simulation, each on what those before it left, in
// three cohort trees decided side by side: a BestEffortFIFO queue passes
// over the one that does not fit (a1) and admits those after it (a2, a3);
// a StrictFIFO queue holds every one behind its head (s1), in Kueue's
// words, s2 waiting; in a cohort, the higher priority goes first whatever
// its age (p-high before p-low, which then finds pb's quota and the
// cohort's used), and one admitted earlier in the pass is a candidate for
// a later one's preemption (r-late reclaims the quota r-early borrowed
// from rb's cohort); FirstInLine tells a refusal that waits for those before
// it (a4, which alone would fit) from one that would not fit at all (a1).
func TestQueueDecidesInOrder(t *testing.T) {
	docs := []string{"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f0}\n",
		queueCQ("best", "", "BestEffortFIFO", 8, "withinClusterQueue: Never"),
		queueCQ("strict", "", "StrictFIFO", 8, "withinClusterQueue: Never"),
		queueCQ("pa", "co", "BestEffortFIFO", 0, "withinClusterQueue: Never"),
		queueCQ("pb", "co", "BestEffortFIFO", 4, "withinClusterQueue: Never"),
		queueCQ("ra", "rco", "BestEffortFIFO", 0, "withinClusterQueue: Never"),
		queueCQ("rb", "rco", "BestEffortFIFO", 4, "reclaimWithinCohort: Any"),
		pending("a1", "best", 16, 0, "2030-01-01T00:00:01Z"),
		pending("a2", "best", 4, 0, "2030-01-01T00:00:02Z"),
		pending("a3", "best", 4, 0, "2030-01-01T00:00:03Z"),
		pending("a4", "best", 2, 0, "2030-01-01T00:00:04Z"),
		pending("s1", "strict", 16, 0, "2030-01-01T00:00:01Z"),
		pending("s2", "strict", 1, 0, "2030-01-01T00:00:02Z"),
		pending("p-low", "pa", 4, 0, "2030-01-01T00:00:01Z"),
		pending("p-high", "pb", 4, 100, "2030-01-01T00:00:02Z"),
		pending("r-early", "ra", 4, 0, "2030-01-01T00:00:01Z"),
		pending("r-late", "rb", 4, 0, "2030-01-01T00:00:02Z"),
	}
	m := load(t, strings.Join(docs, "\n---\n"))
	q := m.Queue()
	got := map[string]Decision{}
	for w, d := range q {
		got[w.Name] = d
	}
	if len(got) != 10 {
		t.Fatalf("%d decisions, want every pending Workload's: %v", len(got), got)
	}
	admitted := func(name string) bool { return got[name].Admitted }
	for name, want := range map[string]bool{"a1": false, "a2": true, "a3": true, "a4": false, "s1": false, "s2": false, "p-low": false, "p-high": true, "r-early": true, "r-late": true} {
		if admitted(name) != want {
			t.Errorf("%s: admitted %v, want %v (%s)", name, admitted(name), want, got[name].Message)
		}
	}
	if d := got["s2"]; d.Behind == nil || d.Behind.Name != "s1" || d.Message != "waiting behind Workload ns/s1 at the head of StrictFIFO ClusterQueue strict" {
		t.Errorf("s2: %+v", d)
	}
	if d := got["r-late"]; len(d.Preempts) != 1 || d.Preempts[0].Workload.Name != "r-early" || d.Preempts[0].Reason != "InCohortReclamation" {
		t.Errorf("r-late preempts %v, want r-early (admitted before it in the pass, borrowing)", d.Preempts)
	}
	if d := got["r-early"]; len(d.Borrows) == 0 {
		t.Errorf("r-early borrows nothing: %+v", d)
	}
	if got["a1"].FirstInLine || !got["a4"].FirstInLine {
		t.Errorf("first in line: a1 %v (fits no quota), a4 %v (fits alone)", got["a1"].FirstInLine, got["a4"].FirstInLine)
	}
	if want := "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor f0, 2 more needed"; got["a4"].Message != want {
		t.Errorf("a4: %q\nwant %q", got["a4"].Message, want)
	}
	// Made once per model: the same map.
	if again := m.Queue(); reflect.ValueOf(again).Pointer() != reflect.ValueOf(q).Pointer() {
		t.Error("a second Queue was made again")
	}
}

// Workloads queued in the same second (creation times have a second's
// resolution) are taken by UID, as a ClusterQueue orders its own
// (QueueOrder), not by name: room for one, z (UID u1) goes first.
func TestQueueTiesByUID(t *testing.T) {
	wl := func(name, uid string) string {
		return strings.Replace(pending(name, "best", 4, 0, "2030-01-01T00:00:01Z"), "uid: "+name, "uid: u"+uid, 1)
	}
	m := load(t, strings.Join([]string{"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f0}\n",
		queueCQ("best", "", "BestEffortFIFO", 4, "withinClusterQueue: Never"), wl("a", "2"), wl("z", "1")}, "\n---\n"))
	got := map[string]bool{}
	for w, d := range m.Queue() {
		got[w.Name] = d.Admitted
	}
	if !got["z"] || got["a"] {
		t.Errorf("admitted %v, want z (the lower UID) alone", got)
	}
}

// A Workload waiting out its backoff after an eviction (requeueAt to come,
// or Requeued False) is in no queue yet (backoffWaitingTimeExpired): never
// admitted, and taking nothing from those after it.
func TestQueueBackoff(t *testing.T) {
	later := pending("later", "best", 4, 0, "2030-01-01T00:00:02Z")
	backoff := pending("evicted", "best", 4, 100, "2030-01-01T00:00:01Z") + "status: {requeueState: {requeueAt: \"2999-01-01T00:00:00Z\"}}\n"
	notRequeued := pending("unqueued", "best", 4, 100, "2030-01-01T00:00:01Z") +
		"status: {conditions: [{type: Requeued, status: \"False\", reason: BackoffStarted, message: m, lastTransitionTime: \"2030-01-01T00:00:01Z\"}]}\n"
	m := load(t, strings.Join([]string{"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f0}\n",
		queueCQ("best", "", "BestEffortFIFO", 4, "withinClusterQueue: Never"), backoff, notRequeued, later}, "\n---\n"))
	got := map[string]Decision{}
	for w, d := range m.Queue() {
		got[w.Name] = d
	}
	if d := got["evicted"]; d.Admitted || d.Reason != "Backoff" || !strings.Contains(d.Message, "at 2999-01-01T00:00:00Z") {
		t.Errorf("evicted: %+v", d)
	}
	if d := got["unqueued"]; d.Admitted || d.Reason != "Backoff" || !strings.Contains(d.Message, "Requeued condition is False: BackoffStarted") {
		t.Errorf("unqueued: %+v", d)
	}
	if !got["later"].Admitted {
		t.Errorf("later, behind two in backoff: %+v", got["later"])
	}
	// Decided alone, the same.
	for w := range m.Queue() {
		if d := m.Admit(SubjectOf(w)); d.Admitted != got[w.Name].Admitted || d.Reason != got[w.Name].Reason {
			t.Errorf("%s alone: %+v, in the pass %+v", w.Name, d, got[w.Name])
		}
	}
}
