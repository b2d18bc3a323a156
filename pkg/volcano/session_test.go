package volcano

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The expected answers here are derived by hand from Volcano's code
// (volcano-sh/volcano, pkg/scheduler): each test names the function it
// follows. volcano.sh/volcano is not served by the module proxy here, so
// no Volcano binary runs these cases.

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func res(kv ...string) *Resource { return NewResource(rl(kv...)) }

func tasks(prefix, role string, n int, st Status, req ...string) []*Task {
	var out []*Task
	for i := range n {
		out = append(out, &Task{Namespace: "ml", Name: fmt.Sprintf("%s-%d", prefix, i), Role: role, Status: st, Request: res(req...)})
	}
	return out
}

// cluster32 is 4 nodes of 8 GPUs and 32 CPUs, nothing running.
var cluster32 = res("cpu", "128", "memory", "512Gi", "nvidia.com/gpu", "32", "pods", "440")

// TestDeserved follows proportion's OnSessionOpen: the remaining capacity is
// divided by weight among the queues whose request is not met, each capped
// by its real capability and its request and raised to its guarantee.
func TestDeserved(t *testing.T) {
	total := res("cpu", "30", "memory", "100Gi")
	pending := func(queue, name, cpu string) *Job {
		return &Job{Namespace: "ml", Name: name, Queue: queue, Phase: PhaseInqueue, MinMember: 1, Tasks: tasks(name, "", 1, Pending, "cpu", cpu)}
	}
	for _, tc := range []struct {
		name   string
		queues []*Queue
		jobs   []*Job
		want   map[string]string // queue -> deserved cpu
	}{{
		// round 1: a 30*2/3 = 20, b 30/3 = 10 -> its request 5 (met);
		// remaining 5; round 2: a alone takes it: 25.
		name:   "weights among queues with demand",
		queues: []*Queue{{Name: "a", Weight: 2}, {Name: "b", Weight: 1}},
		jobs:   []*Job{pending("a", "ja", "30"), pending("b", "jb", "5")},
		want:   map[string]string{"a": "25", "b": "5"},
	}, {
		// a is capped at 12 in round 1; round 2 gives b 8/3, round 3 the
		// rest: b 18.
		name:   "capability caps a queue, the others take the rest",
		queues: []*Queue{{Name: "a", Weight: 2, Capability: rl("cpu", "12")}, {Name: "b", Weight: 1}},
		jobs:   []*Job{pending("a", "ja", "30"), pending("b", "jb", "30")},
		want:   map[string]string{"a": "12", "b": "18"},
	}, {
		// a guarantee raises a's deserved share above its request (2 ->
		// 10), and lowers b's real capability to the cluster less the
		// guarantees (30 - 10 = 20), which caps b below its request.
		name:   "guarantee",
		queues: []*Queue{{Name: "a", Weight: 1, Guarantee: rl("cpu", "10")}, {Name: "b", Weight: 1}},
		jobs:   []*Job{pending("a", "ja", "2"), pending("b", "jb", "30")},
		want:   map[string]string{"a": "10", "b": "20"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := Open(Default(), tc.queues, tc.jobs, total, &Resource{})
			for q, want := range tc.want {
				got := quantity(corev1.ResourceCPU, s.Attr(q).Deserved.MilliCPU)
				if got.Cmp(resource.MustParse(want)) != 0 {
					t.Errorf("queue %s deserved cpu %s, want %s", q, got.String(), want)
				}
			}
		})
	}
}

// TestEnqueue follows the enqueue action (enqueue.go Execute) and the
// JobEnqueueableFns of overcommit (overcommit.go) and proportion
// (proportion.go): the rows of issue #24's table and a few of our own.
func TestEnqueue(t *testing.T) {
	gpuJob := func(name, queue, phase, gpus string) *Job {
		j := &Job{Namespace: "ml", Name: name, Queue: queue, Phase: phase, MinMember: 1, Created: "2026-01-01T00:00:00Z"}
		if gpus != "" {
			j.MinResources = rl("nvidia.com/gpu", gpus)
		}
		j.Tasks = tasks(name, "", 1, Pending, "nvidia.com/gpu", "1")
		return j
	}
	for _, tc := range []struct {
		name    string
		queues  []*Queue
		others  []*Job
		subject *Job
		used    *Resource
		pass    bool
		reason  string
		message string
	}{{
		// Enqueue: a job without minResources is enqueued without asking
		// the plugins, whatever its queue's state (allocate refuses it
		// later: TestBudget).
		name:    "closed queue, no minResources",
		queues:  []*Queue{{Name: "default", Weight: 1, State: "Closed"}},
		subject: gpuJob("train", "default", "", ""),
		pass:    true,
	}, {
		name:    "closed queue with minResources",
		queues:  []*Queue{{Name: "default", Weight: 1, State: "Closing"}},
		subject: gpuJob("train", "default", "", "8"),
		reason:  ReasonQueueNotOpen,
		message: `queue "default" is Closing, not Open`,
	}, {
		// overcommit: 40 > 32 x 1.2 = 38.4, whatever the queue.
		name:    "minResources beyond the overcommitted cluster",
		queues:  []*Queue{{Name: "default", Weight: 1}},
		subject: gpuJob("train", "default", "", "40"),
		reason:  ReasonClusterOverused,
		message: "resource in cluster is overused: overused nvidia.com/gpu",
	}, {
		// overcommit adds every Inqueue group's minResources: 32 + 8 > 38.4.
		name:    "an Inqueue group holds the overcommit room",
		queues:  []*Queue{{Name: "default", Weight: 1}},
		others:  []*Job{gpuJob("big", "default", PhaseInqueue, "32")},
		subject: gpuJob("train", "default", "", "8"),
		reason:  ReasonClusterOverused,
		message: "resource in cluster is overused: overused nvidia.com/gpu",
	}, {
		// proportion: minResources + allocated + inqueue - elastic against
		// the real capability: 8 + 0 + 12 > 16.
		name:    "an Inqueue group holds the queue's capability",
		queues:  []*Queue{{Name: "q", Weight: 1, Capability: rl("nvidia.com/gpu", "16")}},
		others:  []*Job{gpuJob("held", "q", PhaseInqueue, "12")},
		subject: gpuJob("train", "q", "", "8"),
		reason:  ReasonQueueInsufficient,
		message: "queue resource quota insufficient: insufficient nvidia.com/gpu",
	}, {
		// A Pending group ahead in the same session (earlier creation) is
		// enqueued first and reserves its minResources (JobEnqueued).
		name:   "a Pending group ahead takes the room first",
		queues: []*Queue{{Name: "q", Weight: 1, Capability: rl("nvidia.com/gpu", "16")}},
		others: []*Job{func() *Job {
			j := gpuJob("first", "q", "", "12")
			j.Created = "2025-12-31T00:00:00Z"
			return j
		}()},
		subject: gpuJob("train", "q", "", "8"),
		reason:  ReasonQueueInsufficient,
		message: "queue resource quota insufficient: insufficient nvidia.com/gpu",
	}, {
		name:    "room in the queue",
		queues:  []*Queue{{Name: "q", Weight: 1, Capability: rl("nvidia.com/gpu", "16")}},
		others:  []*Job{gpuJob("held", "q", PhaseInqueue, "8")},
		subject: gpuJob("train", "q", "", "8"),
		pass:    true,
	}, {
		name:    "queue missing",
		queues:  []*Queue{{Name: "default", Weight: 1}},
		subject: gpuJob("train", "q", "", ""),
		reason:  ReasonQueueNotFound,
		message: `queue "q" not found`,
	}, {
		name:    "past Pending",
		queues:  []*Queue{{Name: "q", Weight: 1, State: "Closed"}},
		subject: gpuJob("train", "q", PhaseInqueue, "100"),
		pass:    true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			used := tc.used
			if used == nil {
				used = &Resource{}
			}
			s := Open(Default(), tc.queues, append([]*Job{tc.subject}, tc.others...), cluster32, used)
			v := s.Enqueue(tc.subject)
			if v.Passed != tc.pass || v.Reason != tc.reason || !strings.Contains(v.Message, tc.message) {
				t.Errorf("Enqueue: passed %v, %s: %q; want passed %v, %s: %q", v.Passed, v.Reason, v.Message, tc.pass, tc.reason, tc.message)
			}
		})
	}
}

// TestBudget follows the allocate action's allocateResourcesForTasks
// (ssn.Allocatable per task) and allocateResources (ssn.Overused per queue
// pop) with proportion's queueAllocatable and OverusedFn.
func TestBudget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		queue  *Queue
		others []*Job
		want   int // tasks of 2 CPUs admitted out of 8
		reason string
	}{{
		// deserved = min(cluster, capability 8, request 16) = 8 CPUs: four
		// tasks of 2 fit it (issue #24's second row).
		name:   "capability 8 CPUs, 8 tasks of 2",
		queue:  &Queue{Name: "q", Weight: 1, Capability: rl("cpu", "8")},
		want:   4,
		reason: ReasonQueueInsufficient,
	}, {
		// The queue's running job holds 6 of its 8: one more task.
		name:  "the queue's other job holds most of it",
		queue: &Queue{Name: "q", Weight: 1, Capability: rl("cpu", "8")},
		others: []*Job{{Namespace: "ml", Name: "running", Queue: "q", Phase: PhaseRunning, MinMember: 1,
			Tasks: tasks("running", "", 3, Running, "cpu", "2")}},
		want:   1,
		reason: ReasonQueueInsufficient,
	}, {
		// proportion's queueAllocatable refuses every task of a queue that
		// is not Open.
		name:   "closed queue",
		queue:  &Queue{Name: "q", Weight: 1, State: "Closed"},
		want:   0,
		reason: ReasonQueueNotOpen,
	}, {
		name:  "no limit",
		queue: &Queue{Name: "q", Weight: 1},
		want:  8,
	}, {
		// deserved 8 (capability) and 8 held by the running job: the queue
		// is overused, allocate skips it before any task.
		name:  "overused queue",
		queue: &Queue{Name: "q", Weight: 1, Capability: rl("cpu", "8")},
		others: []*Job{{Namespace: "ml", Name: "running", Queue: "q", Phase: PhaseRunning, MinMember: 1,
			Tasks: tasks("running", "", 4, Running, "cpu", "2")}},
		want:   0,
		reason: ReasonQueueOverused,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			job := &Job{Namespace: "ml", Name: "train", Queue: "q", Phase: PhaseInqueue, MinMember: 8, Tasks: tasks("w", "worker", 8, Pending, "cpu", "2")}
			s := Open(Default(), []*Queue{tc.queue}, append([]*Job{job}, tc.others...), cluster32, &Resource{})
			b := s.Budget(job)
			admitted := 0
			for _, task := range job.Tasks {
				if b.Admit(task.Name, task.Request, false) == "" {
					b.Take(task.Request)
					admitted++
				}
			}
			if admitted != tc.want {
				t.Errorf("admitted %d, want %d", admitted, tc.want)
			}
			if tc.reason != "" && (len(b.Refused) == 0 || b.Refused[0].Reason != tc.reason) {
				t.Errorf("refusals %+v, want reason %s", b.Refused, tc.reason)
			}
		})
	}
}

// TestReady follows the gang plugin's JobReadyFn: CheckTaskReady (each
// task's minTaskMember among allocated, succeeded and request-less pending
// tasks, checked only when minMember >= the tasks' sum) and IsReady.
func TestReady(t *testing.T) {
	job := &Job{MinMember: 4, MinTaskMember: map[string]int32{"ps": 1, "worker": 3},
		Tasks: append(tasks("ps", "ps", 1, Pending, "cpu", "64"), tasks("w", "worker", 4, Pending, "cpu", "1")...)}
	workersOnly := func(t *Task) Status {
		if t.Role == "worker" {
			return Allocated
		}
		return t.Status
	}
	if r := job.Ready(workersOnly); r.Ready || r.Count != 4 || len(r.Short) != 1 || r.Short[0] != "ps: 0 of 1" {
		t.Errorf("4 workers, no ps: %+v; want not ready, ps short", r)
	}
	job.MinMember = 3 // below the tasks' sum (4): CheckTaskReady skips the per-task check
	if r := job.Ready(workersOnly); !r.Ready {
		t.Errorf("minMember below the task minimums' sum: %+v; want ready", r)
	}
}

// TestHierarchy follows the capacity plugin with enableHierarchy
// (capacity.go buildHierarchicalQueueAttrs, checkHierarchicalQueue,
// checkQueueAllocatableHierarchically): root > org (capability 16 GPUs) >
// team-a (capability inherited) and team-b (guarantee 4 GPUs, a running
// job of 8). team-a's real capability is org's 16 less its children's
// guarantees, 12; org holds 8 already, so of team-a's four 4-GPU tasks two
// get in (8 + 4 + 4 = 16), and the refusal names org.
func TestHierarchy(t *testing.T) {
	conf := strings.Replace(strings.Replace(ChartDefault, "  - name: proportion\n", "  - name: capacity\n    enableHierarchy: true\n", 1), "    enablePreemptable: false\n  - name: predicates", "  - name: predicates", 1)
	cfg, err := Parse([]byte(conf), "test")
	if err != nil {
		t.Fatal(err)
	}
	queues := func(extra ...*Queue) []*Queue {
		return append([]*Queue{{Name: RootQueue, Weight: 1}, {Name: "org", Weight: 1, Capability: rl("nvidia.com/gpu", "16")},
			{Name: "team-a", Weight: 1, Parent: "org"}, {Name: "team-b", Weight: 1, Parent: "org", Guarantee: rl("nvidia.com/gpu", "4")}}, extra...)
	}
	job := &Job{Namespace: "ml", Name: "train", Queue: "team-a", Phase: PhaseInqueue, MinMember: 4, Tasks: tasks("w", "", 4, Pending, "nvidia.com/gpu", "4")}
	running := &Job{Namespace: "ml", Name: "b", Queue: "team-b", Phase: PhaseRunning, MinMember: 1, MinResources: rl("nvidia.com/gpu", "8"),
		Tasks: tasks("b", "", 2, Running, "nvidia.com/gpu", "4")}
	s := Open(cfg, queues(), []*Job{job, running}, cluster32, &Resource{})
	if s.Broken != "" {
		t.Fatal(s.Broken)
	}
	if got := s.Attr("team-a").RealCapability.String(); !strings.Contains(got, "nvidia.com/gpu=12") {
		t.Errorf("team-a's real capability %s, want 12 GPUs", got)
	}
	b := s.Budget(job)
	admitted := 0
	for _, task := range job.Tasks {
		if b.Admit(task.Name, task.Request, false) == "" {
			b.Take(task.Request)
			admitted++
		}
	}
	if admitted != 2 || len(b.Refused) == 0 || b.Refused[0].Queue != "org" {
		t.Errorf("admitted %d, refusals %+v; want 2, refused by org", admitted, b.Refused)
	}
	// A job in a queue with children: the plugin builds no hierarchy and
	// schedules nothing, this job's queue or any other.
	inOrg := &Job{Namespace: "ml", Name: "o", Queue: "org", Phase: PhaseInqueue, MinMember: 1, Tasks: tasks("o", "", 1, Pending, "cpu", "1")}
	s = Open(cfg, queues(), []*Job{job, inOrg}, cluster32, &Resource{})
	if s.Broken == "" || s.Budget(job).Admit("w-0", job.Tasks[0].Request, false) == "" {
		t.Errorf("a job in a parent queue: broken %q; want the hierarchy broken and nothing admitted", s.Broken)
	}
	// No root queue.
	s = Open(cfg, queues()[1:], []*Job{job}, cluster32, &Resource{})
	if !strings.Contains(s.Broken, `no "root" queue`) {
		t.Errorf("without root: broken %q", s.Broken)
	}
	// Enqueue checks every queue of the chain: minResources 12 fits team-a
	// (12) but not org (16, with team-b's job holding its minResources of
	// 8: a job's allocated beyond its minResources is elastic and would
	// not count).
	job.Phase, job.MinResources = PhasePending, rl("nvidia.com/gpu", "12")
	s = Open(cfg, queues(), []*Job{job, running}, cluster32, &Resource{})
	if v := s.Enqueue(job); v.Passed || v.Queue != "org" || v.Reason != ReasonQueueInsufficient {
		t.Errorf("enqueue: %+v; want refused by org", v)
	}
}

// TestEnqueueTiers follows JobEnqueueable (session_plugins.go): a tier in
// which a plugin permitted enqueues the job, and later tiers are not
// asked. Overcommit alone in the first tier permits a group that
// proportion in the second would refuse.
func TestEnqueueTiers(t *testing.T) {
	cfg, err := Parse([]byte("actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n  - name: overcommit\n- plugins:\n  - name: proportion\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	job := &Job{Namespace: "ml", Name: "train", Queue: "q", MinMember: 1, MinResources: rl("cpu", "4"), Tasks: tasks("w", "", 1, Pending, "cpu", "4")}
	s := Open(cfg, []*Queue{{Name: "q", Weight: 1, Capability: rl("cpu", "2")}}, []*Job{job}, cluster32, &Resource{})
	if v := s.Enqueue(job); !v.Passed {
		t.Errorf("overcommit permits in tier 1: %+v; want enqueued without asking proportion", v)
	}
	// The same plugins in one tier: proportion rejects.
	cfg, _ = Parse([]byte("actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n  - name: overcommit\n  - name: proportion\n"), "test")
	s = Open(cfg, []*Queue{{Name: "q", Weight: 1, Capability: rl("cpu", "2")}}, []*Job{job}, cluster32, &Resource{})
	if v := s.Enqueue(job); v.Passed || v.Reason != ReasonQueueInsufficient {
		t.Errorf("one tier: %+v; want QueueInsufficient", v)
	}
}

// TestInqueueResourceSkipsEphemeralStorage follows util.GetInqueueResource:
// a Running group's reservation leaves out ephemeral storage, which is no
// scalar resource name.
func TestInqueueResourceSkipsEphemeralStorage(t *testing.T) {
	running := &Job{Namespace: "ml", Name: "run", Queue: "q", Phase: PhaseRunning, MinMember: 1,
		MinResources: rl("cpu", "1", "ephemeral-storage", "60Gi"), Tasks: tasks("r", "", 1, Running, "cpu", "1")}
	job := &Job{Namespace: "ml", Name: "train", Queue: "q", MinMember: 1, MinResources: rl("ephemeral-storage", "50Gi"), Tasks: tasks("w", "", 1, Pending, "cpu", "1")}
	total := res("cpu", "32", "memory", "64Gi", "ephemeral-storage", "100Gi")
	s := Open(Default(), []*Queue{{Name: "q", Weight: 1}}, []*Job{job, running}, total, &Resource{})
	if v := s.Enqueue(job); !v.Passed {
		t.Errorf("%+v; want enqueued: 50Gi of 100Gi, the running group reserves no storage", v)
	}
}
