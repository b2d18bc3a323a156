package volcano

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Queue states (scheduling.QueueState).
const (
	QueueOpen = "Open"
)

// PodGroup phases (scheduling.PodGroupPhase).
const (
	PhasePending = "Pending"
	PhaseInqueue = "Inqueue"
	PhaseRunning = "Running"
)

// Status is a task's status as Volcano's scheduler sees it.
type Status string

// Task statuses (pkg/scheduler/api/types.go).
const (
	Pending   Status = "Pending"
	Allocated Status = "Allocated"
	Pipelined Status = "Pipelined"
	Binding   Status = "Binding"
	Bound     Status = "Bound"
	Running   Status = "Running"
	Releasing Status = "Releasing"
	Succeeded Status = "Succeeded"
	Failed    Status = "Failed"
	Unknown   Status = "Unknown"
)

// IsAllocated is AllocatedStatus: the statuses that hold a node.
func (s Status) IsAllocated() bool {
	return s == Bound || s == Binding || s == Running || s == Allocated
}

// Task is one member of a job.
type Task struct {
	Namespace, Name string
	// Role is the task's name in the job (volcano.sh/task-spec).
	Role    string
	Status  Status
	Request *Resource
	// Gated: the pod carries scheduling gates other than Volcano's own.
	Gated bool
}

// Job is a Volcano PodGroup and its tasks (JobInfo).
type Job struct {
	Namespace, Name string
	Queue           string
	// Phase is status.phase ("" is Pending).
	Phase         string
	MinMember     int32
	MinTaskMember map[string]int32
	// MinResources is spec.minResources; nil when unset.
	MinResources corev1.ResourceList
	// Priority is the PodGroup's priority (its priorityClassName's value).
	Priority int32
	// Created orders jobs of equal priority (creation time, RFC 3339), then the name.
	Created string
	Tasks   []*Task
}

// Key is namespace/name.
func (j *Job) Key() string { return j.Namespace + "/" + j.Name }

// IsPending is JobInfo.IsPending.
func (j *Job) IsPending() bool { return j.Phase == "" || j.Phase == PhasePending }

func (j *Job) minResources() *Resource {
	if j.MinResources == nil {
		return &Resource{}
	}
	return NewResource(j.MinResources)
}

// allocated is JobInfo.Allocated: the requests of the tasks that hold a node.
func (j *Job) allocated() *Resource {
	r := &Resource{}
	for _, t := range j.Tasks {
		if t.Status.IsAllocated() {
			r.Add(t.Request)
		}
	}
	return r
}

func (j *Job) allocatedCount() int32 {
	var n int32
	for _, t := range j.Tasks {
		if t.Status.IsAllocated() {
			n++
		}
	}
	return n
}

// gatedRequest is GetSchGatedPodResources.
func (j *Job) gatedRequest() *Resource {
	r := &Resource{}
	for _, t := range j.Tasks {
		if t.Gated {
			r.Add(t.Request)
		}
	}
	return r
}

// deductGated is DeductSchGatedResources.
func (j *Job) deductGated(res *Resource) *Resource {
	g := j.gatedRequest()
	if g.IsEmpty() {
		return res
	}
	out := res.Clone()
	out.MilliCPU = max(out.MilliCPU-g.MilliCPU, 0)
	out.Memory = max(out.Memory-g.Memory, 0)
	for name, v := range res.Scalars {
		if gv, ok := g.Scalars[name]; ok {
			out.Scalars[name] = max(v-gv, 0)
		}
	}
	return out
}

// inqueueResource is util.GetInqueueResource: minResources less what the
// job holds already, in the dimensions minResources names.
func (j *Job) inqueueResource() *Resource {
	minRes := NewResource(j.MinResources)
	alloc := j.allocated()
	out := &Resource{}
	for name := range j.MinResources {
		switch {
		case name == corev1.ResourceCPU:
			out.MilliCPU = max(minRes.MilliCPU-alloc.MilliCPU, 0)
		case name == corev1.ResourceMemory:
			out.Memory = max(minRes.Memory-alloc.Memory, 0)
		case name == corev1.ResourcePods || framework.IsScalarResourceName(name):
			// GetInqueueResource reserves pods (in units) and scalar
			// resources only: not ephemeral storage.
			if v := minRes.Scalars[name] - alloc.Scalars[name]; v > 0 {
				out.addScalar(name, v)
			}
		}
	}
	return out
}

// reserved is what the job holds of its queue's and the cluster's
// enqueue room (the inqueue sums of proportion, capacity and overcommit):
// an Inqueue job's minResources (less what it holds), and a Running job's
// when it holds at least its minimum.
func (j *Job) reserved(overcommit bool) *Resource {
	if j.MinResources == nil {
		return nil
	}
	switch {
	case j.Phase == PhaseInqueue:
		if overcommit {
			// overcommit adds the whole minResources of an Inqueue job.
			return j.deductGated(j.minResources())
		}
		return j.deductGated(j.inqueueResource())
	case j.Phase == PhaseRunning && j.allocatedCount() >= j.MinMember:
		return j.deductGated(j.inqueueResource())
	}
	return nil
}

// elastic is GetElasticResources: what the job holds beyond minResources.
func (j *Job) elastic() *Resource {
	return exceededPart(j.allocated(), j.minResources())
}

// The queue plugins this model runs.
const (
	pluginProportion = "proportion"
	pluginCapacity   = "capacity"
	pluginOvercommit = "overcommit"
	pluginGang       = "gang"
)

// DefaultOvercommitFactor is the overcommit plugin's default factor.
const DefaultOvercommitFactor = 1.2

// Session is one Volcano scheduling session over a cluster: the queue
// figures its plugins compute when the session opens (OnSessionOpen).
type Session struct {
	Config *Config
	Queues map[string]*Queue
	Jobs   []*Job
	// Total is the cluster's allocatable (TotalResource); Used what the
	// nodes' pods request.
	Total, Used *Resource
	// QueuePlugin is "proportion", "capacity" or "" (none configured).
	QueuePlugin string
	// OvercommitFactor is the overcommit plugin's factor; 0 when the plugin
	// is not configured.
	OvercommitFactor float64
	// NotEvaluated lists what the configuration enables that this model
	// does not run and that could refuse a job (sorted).
	NotEvaluated []string
	// Hierarchy: the capacity plugin runs hierarchical queues
	// (enableHierarchy). Broken says why the hierarchy cannot be built (a
	// queue whose parent does not exist, a cycle, a job in a queue with
	// children): the capacity plugin then schedules nothing at all.
	Hierarchy bool
	Broken    string
	attrs     map[string]*QueueAttr
	// overcommit's idle and inqueue sums, and the groups that make up the
	// inqueue sum.
	idle, inqueue     *Resource
	overcommitHolders []string
}

// unmodelled are plugins that can refuse a job or a node this model does
// not run, with the point that does it.
var unmodelled = []struct {
	plugin string
	point  Point
	what   string
}{
	{"extender", PointJobEnqueued, "the extender plugin's enqueue, readiness and node filters"},
	{"resourcequota", PointJobEnqueued, "the resourcequota plugin's enqueue check"},
	{"sla", PointJobEnqueued, "the sla plugin's enqueue check"},
	{"tdm", PointPredicate, "the tdm plugin's node filter"},
	{"numaaware", PointPredicate, "the numaaware plugin's node filter"},
	{"deviceshare", PointPredicate, "the deviceshare plugin's device filter"},
	{"nodegroup", PointPredicate, "the nodegroup plugin's node filter"},
	{"usage", PointPredicate, "the usage plugin's load filter"},
	{"resource-strategy-fit", PointPredicate, "the resource-strategy-fit plugin's node filter"},
}

// Open opens a session: every queue with a job gets its figures, as the
// configured queue plugin (proportion or capacity) computes them.
func Open(cfg *Config, queues []*Queue, jobs []*Job, total, used *Resource) *Session {
	s := &Session{Config: cfg, Queues: map[string]*Queue{}, Jobs: jobs, Total: total, Used: used, attrs: map[string]*QueueAttr{}}
	for _, q := range queues {
		s.Queues[q.Name] = q
	}
	switch {
	case cfg.Plugin(pluginProportion) != nil:
		s.QueuePlugin = pluginProportion
		if cfg.Plugin(pluginCapacity) != nil {
			s.NotEvaluated = append(s.NotEvaluated, "the capacity plugin beside proportion (only proportion's limits are checked)")
		}
	case cfg.Plugin(pluginCapacity) != nil:
		s.QueuePlugin = pluginCapacity
		s.Hierarchy = cfg.Enabled(pluginCapacity, PointHierarchy)
	}
	if cfg.Plugin(pluginOvercommit) != nil {
		s.OvercommitFactor = cfg.PluginArguments(pluginOvercommit).Float64("overcommit-factor", DefaultOvercommitFactor)
		if s.OvercommitFactor < 1 {
			s.OvercommitFactor = DefaultOvercommitFactor // overcommit's OnSessionOpen
		}
	}
	for _, u := range unmodelled {
		if cfg.Enabled(u.plugin, u.point) {
			s.NotEvaluated = append(s.NotEvaluated, u.what)
		}
	}
	slices.Sort(s.NotEvaluated)
	s.openQueues()
	s.openOvercommit()
	return s
}

// Attr is a queue's figures; nil when the queue has no job in the session.
func (s *Session) Attr(queue string) *QueueAttr { return s.attrs[queue] }

// openQueues is proportion's (or capacity's buildQueueAttrs) OnSessionOpen.
func (s *Session) openQueues() {
	if s.QueuePlugin == "" {
		return
	}
	if s.Hierarchy {
		s.openHierarchy()
		return
	}
	totalGuarantee := &Resource{}
	for _, name := range slices.Sorted(maps.Keys(s.Queues)) {
		if q := s.Queues[name]; len(q.Guarantee) > 0 {
			totalGuarantee.Add(NewResource(q.Guarantee))
		}
	}
	for _, job := range s.Jobs {
		q, ok := s.Queues[job.Queue]
		if !ok {
			continue
		}
		attr, ok := s.attrs[job.Queue]
		if !ok {
			attr = s.newQueueAttr(q, totalGuarantee)
			s.attrs[job.Queue] = attr
		}
		if s.account(attr, job) {
			attr.Holders = append(attr.Holders, job.Key())
		}
	}
	if s.QueuePlugin == pluginCapacity {
		for _, attr := range s.attrs {
			attr.Deserved.MinDimension(attr.RealCapability, Infinity)
			attr.Deserved = maxOf(attr.Deserved, attr.Guarantee)
			attr.updateShare()
		}
		return
	}
	// proportion: the remaining capacity is divided by weight among the
	// queues whose request is not met, each capped by its real capability
	// and its request and raised to its guarantee, until nothing remains
	// or nothing changes.
	names := slices.Sorted(maps.Keys(s.attrs))
	remaining := s.Total.Clone()
	meet := map[string]bool{}
	for {
		var totalWeight int32
		for _, n := range names {
			if !meet[n] {
				totalWeight += s.attrs[n].Weight
			}
		}
		if totalWeight == 0 {
			break
		}
		oldRemaining := remaining.Clone()
		increased, decreased := &Resource{}, &Resource{}
		for _, n := range names {
			attr := s.attrs[n]
			if meet[n] {
				continue
			}
			old := attr.Deserved.Clone()
			attr.Deserved.Add(remaining.Clone().Multi(float64(attr.Weight) / float64(totalWeight)))
			attr.Deserved.MinDimension(attr.RealCapability, Infinity)
			attr.Deserved.MinDimension(attr.Request, Zero)
			attr.Deserved = maxOf(attr.Deserved, attr.Guarantee)
			attr.updateShare()
			if attr.Request.LessEqual(attr.Deserved, Zero) || attr.Deserved.equal(old) {
				meet[n] = true
			}
			inc, dec := attr.Deserved.diff(old, Zero)
			increased.Add(inc)
			decreased.Add(dec)
		}
		remaining = exceededPart(remaining.Clone().Add(decreased), increased)
		if remaining.IsEmpty() || remaining.equal(oldRemaining) {
			break
		}
	}
}

// newQueueAttr is a queue's attributes before any job is counted
// (proportion's and capacity's OnSessionOpen): its weight, deserved share
// (capacity's own), capability (an unset cpu or memory unbounded),
// guarantee, and real capability: what the other queues' guarantees leave
// of the cluster, plus its own, within its capability.
func (s *Session) newQueueAttr(q *Queue, totalGuarantee *Resource) *QueueAttr {
	attr := &QueueAttr{Name: q.Name, Weight: q.Weight, Deserved: &Resource{}, Allocated: &Resource{}, Request: &Resource{},
		Elastic: &Resource{}, Inqueue: &Resource{}, Guarantee: &Resource{}}
	if s.QueuePlugin == pluginCapacity {
		attr.Deserved = NewResource(q.Deserved)
	}
	if len(q.Capability) > 0 {
		attr.Capability = NewResource(q.Capability)
		if attr.Capability.MilliCPU <= 0 {
			attr.Capability.MilliCPU = math.MaxFloat64
		}
		if attr.Capability.Memory <= 0 {
			attr.Capability.Memory = math.MaxFloat64
		}
	}
	if len(q.Guarantee) > 0 {
		attr.Guarantee = NewResource(q.Guarantee)
	}
	real := exceededPart(s.Total, totalGuarantee).Add(attr.Guarantee)
	if attr.Capability == nil {
		attr.Capability = &Resource{}
	} else {
		real.MinDimension(attr.Capability, Infinity)
	}
	attr.RealCapability = real
	return attr
}

// account adds a job's tasks to its queue's figures: allocated and request
// (its tasks on nodes), request (its pending tasks), inqueue (what it
// reserves) and elastic; it reports whether the job holds or reserves any
// of the queue's room.
func (s *Session) account(attr *QueueAttr, job *Job) bool {
	holds := false
	for _, t := range job.Tasks {
		switch {
		case t.Status.IsAllocated():
			attr.Allocated.Add(t.Request)
			attr.Request.Add(t.Request)
			holds = true
		case t.Status == Pending:
			attr.Request.Add(t.Request)
		}
	}
	if r := job.reserved(false); r != nil {
		attr.Inqueue.Add(r)
		holds = holds || !r.IsEmpty()
	}
	attr.Elastic.Add(job.elastic())
	return holds
}

// openOvercommit is the overcommit plugin's OnSessionOpen.
func (s *Session) openOvercommit() {
	if s.OvercommitFactor == 0 {
		return
	}
	s.idle = s.Total.Clone().Multi(s.OvercommitFactor).Sub(s.Used)
	s.inqueue = &Resource{}
	for _, job := range s.Jobs {
		if r := job.reserved(true); r != nil {
			s.inqueue.Add(r)
			if !r.IsEmpty() {
				s.overcommitHolders = append(s.overcommitHolders, job.Key())
			}
		}
	}
}

// Verdict is one plugin's decision on a job.
type Verdict struct {
	// Passed: the step lets the job on.
	Passed bool
	// Plugin names the plugin (or action) that decided: overcommit,
	// proportion, capacity, enqueue.
	Plugin string
	// Reason is a CamelCase word for a refusal.
	Reason string
	// Message is Volcano's own words where it writes them (events, conditions), with kubectl-gang's figures.
	Message string
	// Shortfall is how much of each resource was missing.
	Shortfall corev1.ResourceList
	// Figures are the numbers compared, by name.
	Figures map[string]string
	// Ahead are the pending jobs enqueued before this one in the same
	// session that reserve room it needed.
	Ahead []string
	// Queue is the queue whose limit refused: the job's own, or (capacity
	// hierarchy) an ancestor.
	Queue string
	// Holders are the groups that hold or reserve the room that was
	// missing (Inqueue groups' minResources for overcommit; the queue's
	// groups for proportion and capacity).
	Holders []string
}

// The reasons a step refuses a job.
const (
	ReasonQueueNotFound     = "QueueNotFound"
	ReasonQueueNotOpen      = "QueueNotOpen"
	ReasonClusterOverused   = "ClusterOverused"
	ReasonQueueInsufficient = "QueueInsufficient"
	ReasonQueueOverused     = "QueueOverused"
	// ReasonHierarchyBroken: the capacity plugin's hierarchy cannot be
	// built, and it schedules nothing.
	ReasonHierarchyBroken = "QueueHierarchyInvalid"
	// ReasonQueueNotLeaf: a job in a queue with child queues.
	ReasonQueueNotLeaf = "QueueNotLeaf"
)

// Enqueue is the enqueue action for job, as it runs in a session where
// the other Pending jobs are taken in Volcano's order (queues by priority,
// then share; a queue's jobs by priority, then creation time), one job per
// queue in turn, each enqueued one reserving its minResources before the
// next (JobEnqueued). job must be one of s.Jobs.
func (s *Session) Enqueue(job *Job) Verdict {
	if _, ok := s.Queues[job.Queue]; !ok {
		return Verdict{Plugin: "enqueue", Reason: ReasonQueueNotFound,
			Message: fmt.Sprintf("queue %q not found: Volcano enqueues and allocates no job of a queue that does not exist", job.Queue)}
	}
	if !job.IsPending() {
		return Verdict{Passed: true, Plugin: "enqueue", Message: fmt.Sprintf("podgroup is %s: it has passed Volcano's enqueue step", job.Phase)}
	}
	if !s.Config.HasAction("enqueue") {
		return Verdict{Passed: true, Plugin: "enqueue", Message: "the configuration runs no enqueue action: allocate takes Pending jobs as Inqueue"}
	}
	// Work on copies: the session's figures stay those of its opening.
	inqueue := map[string]*Resource{}
	for n, a := range s.attrs {
		inqueue[n] = a.Inqueue.Clone()
	}
	var clusterInqueue *Resource
	if s.inqueue != nil {
		clusterInqueue = s.inqueue.Clone()
	}
	// ahead are the jobs enqueued before this one with their queues: a
	// refusal names those that reserved the room it lacked (every one for
	// overcommit, the refusing queue's and its children's for the queue
	// plugins).
	type enqueued struct {
		key    string
		queues []string
	}
	var ahead []enqueued
	for _, j := range s.enqueueOrder() {
		v := s.enqueueable(j, inqueue, clusterInqueue)
		if j == job {
			if !v.Passed {
				for _, a := range ahead {
					if v.Plugin == pluginOvercommit || slices.Contains(a.queues, cmp.Or(v.Queue, job.Queue)) {
						v.Ahead = append(v.Ahead, a.key)
					}
				}
			}
			return v
		}
		if v.Passed && j.MinResources != nil {
			r := j.deductGated(j.minResources())
			if a := inqueue[j.Queue]; a != nil {
				a.Add(r)
				if s.Hierarchy {
					for _, anc := range s.attrs[j.Queue].Ancestors {
						inqueue[anc].Add(r)
					}
				}
			}
			if clusterInqueue != nil {
				clusterInqueue.Add(r)
			}
			queues := []string{j.Queue}
			if a := s.attrs[j.Queue]; a != nil {
				queues = append(queues, a.Ancestors...)
			}
			ahead = append(ahead, enqueued{key: j.Key(), queues: queues})
		}
	}
	return Verdict{Passed: true, Plugin: "enqueue"}
}

// enqueueOrder is the order the enqueue action takes Pending jobs in.
func (s *Session) enqueueOrder() []*Job {
	byQueue := map[string][]*Job{}
	for _, j := range s.Jobs {
		if _, ok := s.Queues[j.Queue]; ok && j.IsPending() {
			byQueue[j.Queue] = append(byQueue[j.Queue], j)
		}
	}
	queues := slices.Sorted(maps.Keys(byQueue))
	slices.SortStableFunc(queues, s.QueueOrder)
	for _, q := range queues {
		slices.SortStableFunc(byQueue[q], func(a, b *Job) int {
			return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.Created, b.Created), cmp.Compare(a.Key(), b.Key()))
		})
	}
	var out []*Job
	for i := 0; ; i++ {
		added := false
		for _, q := range queues {
			if i < len(byQueue[q]) {
				out = append(out, byQueue[q][i])
				added = true
			}
		}
		if !added {
			return out
		}
	}
}

// QueueOrder is Session.QueueOrderFn (framework/session_plugins.go) over
// two queues of the session: the plugins with their queue order enabled,
// tiers in order, each deciding unless it finds them equal (proportion's
// and capacity's QueueOrderFn: the higher spec.priority first, then the
// smaller share, the largest of allocated/deserved over the resources;
// capacity then puts a queue with a deserved share first), and last the
// older queue, then the smaller UID. 0 when this model cannot tell which
// Volcano's priority queue takes first: a plugin whose order it does not
// model (drf's or capacity's hierarchy, capacity beside proportion), or
// queues without creation times or UIDs (a hand-made snapshot).
func (s *Session) QueueOrder(a, b string) int {
	qa, qb := s.Queues[a], s.Queues[b]
	if qa == nil || qb == nil {
		return 0
	}
	for _, tier := range s.Config.Tiers {
		for _, p := range tier.Plugins {
			if f := p.point(PointQueueOrder); f == nil || !*f {
				continue
			}
			switch {
			case p.Name == pluginProportion || p.Name == pluginCapacity:
				// Both compare spec.priority first (proportion.go,
				// capacity.go: AddQueueOrderFn).
				if c := cmp.Compare(qb.Priority, qa.Priority); c != 0 {
					return c
				}
				if p.Name != s.QueuePlugin || s.Hierarchy {
					return 0
				}
				if c := cmp.Compare(s.share(a), s.share(b)); c != 0 {
					return c
				}
				if p.Name == pluginCapacity {
					// compareShareWithDeserved: at equal shares a queue
					// with a deserved share goes first.
					if da, db := s.hasDeserved(a), s.hasDeserved(b); da != db {
						if da {
							return -1
						}
						return 1
					}
				}
				// Equal: the next plugin decides.
			case p.Name == "drf" && p.EnabledHierarchy != nil && *p.EnabledHierarchy:
				return 0
			}
		}
	}
	// QueueOrderFn's last word: the older queue, then the smaller UID.
	if qa.Created.IsZero() || qb.Created.IsZero() {
		return 0
	}
	if c := qa.Created.Compare(qb.Created); c != 0 {
		return c
	}
	if qa.UID == "" || qb.UID == "" {
		return 0
	}
	return cmp.Compare(qa.UID, qb.UID)
}

// hasDeserved says the queue's deserved share (capacity: spec.deserved) is
// not empty.
func (s *Session) hasDeserved(queue string) bool {
	a := s.attrs[queue]
	return a != nil && a.Deserved != nil && !a.Deserved.IsEmpty()
}

func (s *Session) share(queue string) float64 {
	if a := s.attrs[queue]; a != nil {
		return a.Share
	}
	return 0
}

// enqueueable is the enqueue action's test for one job: a job without
// minResources is enqueued without asking the plugins; otherwise
// JobEnqueueable asks them tier by tier (overcommit, then the queue
// plugin, in the configuration's order), and the first that rejects
// decides.
func (s *Session) enqueueable(job *Job, inqueue map[string]*Resource, clusterInqueue *Resource) Verdict {
	if job.MinResources == nil {
		return Verdict{Passed: true, Plugin: "enqueue", Message: "no minResources: Volcano's enqueue action enqueues the group without asking its plugins"}
	}
	minReq := job.minResources()
	figures := map[string]string{"minResources": minReq.String()}
	for _, tier := range s.Config.Tiers {
		// JobEnqueueable (session_plugins.go): a plugin that rejects
		// decides; a tier in which one permitted enqueues the job, and the
		// tiers after it are not asked.
		permitted := false
		for _, p := range tier.Plugins {
			if p.EnabledJobEnqueued == nil || !*p.EnabledJobEnqueued {
				continue
			}
			switch p.Name {
			case pluginOvercommit:
				permitted = true
				want := clusterInqueue.Clone().Add(minReq)
				figures["clusterIdle"] = s.idle.String()
				figures["clusterInqueue"] = clusterInqueue.String()
				figures["overcommitFactor"] = fmt.Sprint(s.OvercommitFactor)
				if ok, names := want.LessEqualIn(s.idle, minReq); !ok {
					return Verdict{Plugin: pluginOvercommit, Reason: ReasonClusterOverused, Figures: figures, Holders: s.overcommitHolders,
						Message:   formatResourceNames("resource in cluster is overused", "overused", names),
						Shortfall: want.Shortfall(s.idle, names)}
				}
			case pluginProportion, pluginCapacity:
				if p.Name != s.QueuePlugin {
					continue
				}
				permitted = true
				if s.Broken != "" {
					return Verdict{Plugin: p.Name, Reason: ReasonHierarchyBroken, Figures: figures,
						Message: s.Broken + ": the capacity plugin enqueues and allocates nothing"}
				}
				if s.Hierarchy && !s.attrs[job.Queue].leaf {
					return Verdict{Plugin: p.Name, Reason: ReasonQueueNotLeaf, Figures: figures,
						Message: fmt.Sprintf("queue %q has child queues: the capacity plugin enqueues jobs of leaf queues only", job.Queue)}
				}
				q := s.Queues[job.Queue]
				if !q.Open() {
					return Verdict{Plugin: p.Name, Reason: ReasonQueueNotOpen, Figures: figures,
						Message: fmt.Sprintf("queue %q is %s, not Open: %s rejects every job of it", q.Name, q.State, p.Name)}
				}
				queues := []string{job.Queue}
				if s.Hierarchy {
					queues = s.chain(job.Queue)
				}
				for _, name := range queues {
					attr := s.attrs[name]
					want := minReq.Clone().Add(attr.Allocated).Add(inqueue[name]).Sub(attr.Elastic)
					prefix := "queue"
					if name != job.Queue {
						prefix = "parentQueue/" + name + "/"
					}
					figures[prefix+"Capability"] = attr.RealCapability.String()
					figures[prefix+"Allocated"] = attr.Allocated.String()
					figures[prefix+"Inqueue"] = inqueue[name].String()
					figures[prefix+"Elastic"] = attr.Elastic.String()
					if ok, names := want.LessEqualIn(attr.RealCapability, minReq); !ok {
						v := Verdict{Plugin: p.Name, Reason: ReasonQueueInsufficient, Figures: figures, Queue: name, Holders: attr.Holders,
							Message:   formatResourceNames("queue resource quota insufficient", "insufficient", names),
							Shortfall: want.Shortfall(attr.RealCapability, names)}
						return v
					}
				}
			}
		}
		if permitted {
			return Verdict{Passed: true, Plugin: "enqueue", Figures: figures}
		}
	}
	return Verdict{Passed: true, Plugin: "enqueue", Figures: figures}
}

// parseList parses a map of quantities.
func parseList(m map[string]string) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for k, v := range m {
		q, err := parseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[corev1.ResourceName(k)] = q
	}
	return out, nil
}
