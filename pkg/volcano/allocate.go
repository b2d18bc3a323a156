package volcano

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Budget is the allocate action's queue check for one job's tasks in a
// session: each task must pass the queue plugin's Allocatable (the queue
// Open, and its allocated plus the task within its deserved share
// (proportion) or its real capability (capacity)), and once the job is
// ready each further task needs the queue not overused (proportion's
// Overused: deserved <= allocated), as allocate pops the queue again per
// task. A Budget is used by one placement; Fork starts another.
type Budget struct {
	s     *Session
	job   *Job
	attr  *QueueAttr
	queue *Queue
	// allocatable and overused say which checks the configuration enables.
	allocatable, overused bool
	// taken is what this placement allocated so far.
	taken *Resource
	// refused counts the tasks the queue refused.
	Refused []Refusal
}

// Refusal is one task the queue check refused.
type Refusal struct {
	Task    string
	Reason  string
	Message string
	// Queue is the queue whose limit refused (the job's, or an ancestor).
	Queue string
}

// Budget returns job's queue check, or nil when the configuration has
// none (no queue plugin, or its allocatable and overused points off).
func (s *Session) Budget(job *Job) *Budget {
	attr, q := s.attrs[job.Queue], s.Queues[job.Queue]
	if attr == nil || q == nil {
		return nil
	}
	b := &Budget{s: s, job: job, attr: attr, queue: q, taken: &Resource{},
		allocatable: s.Config.Enabled(s.QueuePlugin, PointAllocatable),
		overused:    s.QueuePlugin == pluginProportion && s.Config.Enabled(pluginProportion, PointOverused)}
	if !b.allocatable && !b.overused {
		return nil
	}
	return b
}

// Fork is a fresh budget for another placement of the same job.
func (b *Budget) Fork() *Budget {
	out := *b
	out.taken, out.Refused = &Resource{}, nil
	return &out
}

// Overused reports whether the queue is overused before anything is
// allocated: allocate skips it for the whole session.
func (b *Budget) Overused() bool {
	return b.overused && b.attr.Deserved.LessEqual(b.attr.Allocated, Zero)
}

// Admit decides whether the task (its request) may be allocated now; ready
// says the job has reached its minimum already. It returns "" or why not.
func (b *Budget) Admit(task string, req *Resource, ready bool) string {
	allocated := b.attr.Allocated.Clone().Add(b.taken)
	if b.overused && (ready || b.taken.IsEmpty()) && b.attr.Deserved.LessEqual(allocated, Zero) {
		msg := fmt.Sprintf("queue %s is overused: it holds %s of its deserved %s", b.queue.Name, allocated, b.attr.Deserved)
		b.Refused = append(b.Refused, Refusal{Task: task, Reason: ReasonQueueOverused, Message: msg})
		return msg
	}
	if !b.allocatable {
		return ""
	}
	if !b.queue.Open() {
		msg := fmt.Sprintf("queue %s is %s, not Open: %s allocates no task in it", b.queue.Name, b.queue.State, b.s.QueuePlugin)
		b.Refused = append(b.Refused, Refusal{Task: task, Reason: ReasonQueueNotOpen, Message: msg})
		return msg
	}
	if b.s.Broken != "" {
		msg := b.s.Broken + ": the capacity plugin allocates nothing"
		b.Refused = append(b.Refused, Refusal{Task: task, Reason: ReasonHierarchyBroken, Message: msg})
		return msg
	}
	if b.s.Hierarchy && !b.attr.leaf {
		msg := fmt.Sprintf("queue %s has child queues: the capacity plugin allocates tasks of leaf queues only", b.queue.Name)
		b.Refused = append(b.Refused, Refusal{Task: task, Reason: ReasonQueueNotLeaf, Message: msg})
		return msg
	}
	queues := []string{b.queue.Name}
	if b.s.Hierarchy {
		queues = b.s.chain(b.queue.Name)
	}
	for _, name := range queues {
		attr := b.s.attrs[name]
		held := attr.Allocated.Clone().Add(b.taken)
		limit, limitName := attr.Deserved, "deserved share"
		if b.s.QueuePlugin == pluginCapacity {
			limit, limitName = attr.RealCapability, "capability"
		}
		future := held.Clone().Add(req)
		if ok, names := future.LessEqualIn(limit, req); !ok {
			who := "queue " + name
			if name != b.queue.Name {
				who = "queue " + b.queue.Name + "'s parent " + name
			}
			msg := fmt.Sprintf("%s's %s is %s; %s allocated in it (with the job's tasks before this one) and this task's %s exceed it",
				who, limitName, onlyNames(limit, names), onlyNames(held, names), onlyNames(req, names))
			b.Refused = append(b.Refused, Refusal{Task: task, Reason: ReasonQueueInsufficient, Message: msg, Queue: name})
			return msg
		}
	}
	return ""
}

// Take records an allocated task.
func (b *Budget) Take(req *Resource) { b.taken.Add(req) }

// Attr is the queue's figures.
func (b *Budget) Attr() *QueueAttr { return b.attr }

// Limit is what the check compares against: the deserved share
// (proportion) or the real capability (capacity), and its name.
func (b *Budget) Limit() (*Resource, string) {
	if b.s.QueuePlugin == pluginCapacity {
		return b.attr.RealCapability, "capability"
	}
	return b.attr.Deserved, "deserved share"
}

func onlyNames(r *Resource, names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + formatValue(corev1.ResourceName(n), r.Get(corev1.ResourceName(n)))
	}
	return strings.Join(parts, ", ")
}

// formatResourceNames is Volcano's util.FormatResourceNames.
func formatResourceNames(prefix, verb string, names []string) string {
	if len(names) == 0 {
		return prefix
	}
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = verb + " " + name
	}
	return prefix + ": " + strings.Join(parts, ", ")
}

// Readiness is the gang plugin's JobReadyFn for a job whose tasks have the
// statuses given: CheckTaskReady (each task's minTaskMember allocated,
// succeeded, or pending without requests, when minMember is at least their
// sum) and IsReady (ready tasks plus pending best-effort ones reach
// minMember).
type Readiness struct {
	Ready bool
	// Count is ReadyTaskNum + PendingBestEffortTaskNum.
	Count int32
	// Short are the tasks below their minTaskMember: "ps: 0 of 1".
	Short []string
}

// Ready decides readiness with status giving each task's status after a
// placement (Allocated for the placed ones).
func (j *Job) Ready(status func(*Task) Status) Readiness {
	var r Readiness
	roles := map[string]int32{}
	var taskMinTotal int32
	for _, v := range j.MinTaskMember {
		taskMinTotal += v
	}
	for _, t := range j.Tasks {
		st := status(t)
		switch {
		case st.IsAllocated() || st == Succeeded:
			r.Count++
			roles[t.Role]++
		case st == Pending && t.Request.IsEmpty():
			r.Count++
			roles[t.Role]++
		}
	}
	if j.MinMember >= taskMinTotal {
		for _, role := range slices.Sorted(maps.Keys(j.MinTaskMember)) {
			if want := j.MinTaskMember[role]; roles[role] < want {
				r.Short = append(r.Short, fmt.Sprintf("%s: %d of %d", role, roles[role], want))
			}
		}
	}
	r.Ready = len(r.Short) == 0 && r.Count >= j.MinMember
	return r
}
