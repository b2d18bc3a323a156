package volcano

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubectl-gang/kubectl-gang/pkg/fields"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	model "github.com/kubectl-gang/kubectl-gang/pkg/volcano"
)

// The checks of Volcano's session besides its enqueue step
// (docs/design.md#volcano).
const (
	// GateAllocate is the allocate action's queue check: a task is
	// allocated only within its queue's deserved share (proportion) or
	// capability (capacity), in an Open queue that is not overused.
	GateAllocate = "VolcanoAllocate"
	// GateJobReady is the gang plugin's JobReadyFn: every task's
	// minTaskMember allocated, and minMember in all.
	GateJobReady = "VolcanoJobReady"
	// ReasonTaskNotReady: a task below its minTaskMember.
	ReasonTaskNotReady = "NotEnoughTasksReady"
)

// state is one Volcano session for one gang: the enqueue verdict,
// the queue check its members are allocated under, and the job whose
// readiness decides (docs/design.md#volcano).
type state struct {
	g       *gang.Gang
	session *model.Session
	job     *model.Job
	enqueue model.Verdict
	budget  *model.Budget
	// notEvaluated says what of the session could not be read.
	notEvaluated []string
}

// QueueOrder is the order Volcano's allocate action takes queues in
// on snap (volcano.Session.QueueOrder: queue priority, then share), in the
// session opened for g, one of its pending gangs: the allocate action pops
// the first queue, allocates its next job, and pushes the queue back with
// its share updated (allocate.go's allocateResources).
func QueueOrder(snap *schedule.Snapshot, g *gang.Gang, nodes []*framework.NodeInfo) func(a, b string) int {
	return open(snap, g, nodes).session.QueueOrder
}

// open opens the session Volcano's scheduler would run on snap for
// g: every Volcano PodGroup in the snapshot is a job (g's own taken from
// g, which may be a what-if), its pods the tasks, the Queues as listed,
// the configuration snap holds (model.ConfigIn). Queues the snapshot lacks (a file
// without them, a user who may not list them) leave the queue's state and
// figures unknown: the session then stands in an Open queue without limits
// for the gang's, so what needs no Queue (overcommit) is still checked, and
// says so in notEvaluated.
func open(snap *schedule.Snapshot, g *gang.Gang, nodes []*framework.NodeInfo) *state {
	cfg, unread := model.ConfigIn(snap.Systems)
	st := &state{g: g}
	if unread != "" {
		st.notEvaluated = append(st.notEvaluated, "Volcano's scheduler configuration: "+unread)
	}
	var queues []*model.Queue
	const listed = "queues." + Group
	snapQueues := snap.ObjectsOf(Group, "Queue")
	if snap.IsUnreadable(listed) || len(snapQueues) == 0 {
		why := "the snapshot holds no Volcano Queues"
		if snap.IsUnreadable(listed) {
			why = "Volcano Queues could not be listed"
		}
		st.notEvaluated = append(st.notEvaluated, fmt.Sprintf("%s, so queue %q's state, capability and share are unknown", why, g.Queue))
		queues = append(queues, &model.Queue{Name: g.Queue, Weight: 1})
	} else {
		for _, u := range snapQueues {
			q, err := model.QueueFrom(u)
			if err != nil {
				st.notEvaluated = append(st.notEvaluated, err.Error())
				continue
			}
			queues = append(queues, q)
		}
	}
	// The tasks of every Volcano job, by namespace/name.
	tasks := map[string][]*model.Task{}
	for _, list := range [][]*corev1.Pod{snap.Pods, snap.SucceededPods} {
		for _, pod := range list {
			if name := pod.Annotations[GroupAnnotation]; name != "" {
				key := pod.Namespace + "/" + name
				tasks[key] = append(tasks[key], task(pod, true))
			}
		}
	}
	st.job = job(snap, g.PodGroup, g.Namespace, g.Name)
	st.job.Queue, st.job.MinMember, st.job.MinTaskMember, st.job.MinResources = g.Queue, g.MinMember, g.MinTaskMember, g.MinResources
	for _, list := range [][]*corev1.Pod{g.Members, g.Succeeded} {
		for _, pod := range list {
			// The gang's own members are judged as released (its gates are
			// the Gated verdict's business).
			st.job.Tasks = append(st.job.Tasks, task(pod, false))
		}
	}
	known := map[string]bool{}
	for _, q := range queues {
		known[q.Name] = true
	}
	standIn := len(snapQueues) == 0 || snap.IsUnreadable(listed)
	jobs := []*model.Job{st.job}
	for _, u := range snap.PodGroups {
		if u.GroupVersionKind().Group != Group || (u.GetNamespace() == g.Namespace && u.GetName() == g.Name) {
			continue
		}
		j := job(snap, u, u.GetNamespace(), u.GetName())
		other := &gang.Gang{}
		if err := Read(fields.New(u), other); err != nil {
			continue // a malformed group of another user's: Volcano's cache would not take it either
		}
		j.Queue, j.MinMember, j.MinTaskMember, j.MinResources = other.Queue, other.MinMember, other.MinTaskMember, other.MinResources
		if !standIn && !known[j.Queue] {
			continue // Volcano's cache Snapshot leaves out a job whose queue does not exist
		}
		j.Tasks = tasks[j.Key()]
		jobs = append(jobs, j)
	}
	total, used := &model.Resource{}, &model.Resource{}
	for _, ni := range nodes {
		if ni == nil || ni.Node() == nil {
			continue
		}
		total.Add(model.NewResource(ni.Node().Status.Allocatable))
		used.Add(model.FromFramework(ni.Requested))
	}
	st.session = model.Open(cfg, queues, jobs, total, used)
	st.notEvaluated = append(st.notEvaluated, st.session.NotEvaluated...)
	if !cfg.Enabled("gang", model.PointJobReady) {
		// Without the gang plugin's JobReadyFn allocate commits every task
		// it places: no minimum holds the job together.
		st.notEvaluated = append(st.notEvaluated, "the configuration ("+cfg.Source+") runs no gang plugin JobReady: Volcano binds the tasks that fit one by one, so the gang's minimum is not Volcano's")
	}
	st.enqueue = st.session.Enqueue(st.job)
	st.budget = st.session.Budget(st.job)
	return st
}

// job is a PodGroup's job without tasks: phase, priority (its
// class's value, else the global default class's, as Volcano's cache
// starts every job at its defaultPriority), creation.
func job(snap *schedule.Snapshot, u *unstructured.Unstructured, namespace, name string) *model.Job {
	j := &model.Job{Namespace: namespace, Name: name, Created: gang.NotCreated}
	for _, pc := range snap.PriorityClasses {
		if pc.GlobalDefault {
			j.Priority = pc.Value
		}
	}
	if u == nil {
		return j
	}
	j.Phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
	if ts := u.GetCreationTimestamp(); !ts.IsZero() {
		j.Created = ts.UTC().Format("2006-01-02T15:04:05Z")
	}
	if class, _, _ := unstructured.NestedString(u.Object, "spec", "priorityClassName"); class != "" {
		for _, pc := range snap.PriorityClasses {
			if pc.Name == class {
				j.Priority = pc.Value
			}
		}
	}
	return j
}

// task is a pod as a task of its job. gates says whether scheduling
// gates other than Volcano's own hold it (DeductSchGatedResources).
func task(pod *corev1.Pod, gates bool) *model.Task {
	t := &model.Task{Namespace: pod.Namespace, Name: pod.Name, Role: TaskOf(pod), Status: model.Status(gang.TaskStatusOf(pod)),
		Request: request(pod)}
	if gates {
		for _, sg := range pod.Spec.SchedulingGates {
			if sg.Name != QueueGate {
				t.Gated = true
			}
		}
	}
	return t
}

// Gate is the enqueue step as a GateResult.
func (st *state) Gate() *gang.GateResult {
	g := st.g
	v := st.enqueue
	res := &gang.GateResult{Gate: GateEnqueue, Check: CheckQueue, Passed: v.Passed, Reason: v.Reason, Message: v.Message,
		Shortfall: v.Shortfall, Figures: map[string]string{"queue": g.Queue, "configuration": st.session.Config.Source}}
	for k, val := range v.Figures {
		res.Figures[k] = val
	}
	if v.Plugin != "" && v.Plugin != "enqueue" {
		res.Figures["plugin"] = v.Plugin
	}
	if v.Queue != "" && v.Queue != g.Queue {
		res.Figures["limitQueue"] = v.Queue
	}
	if len(v.Ahead) > 0 {
		res.Detail = fmt.Sprintf("%s; enqueued before it in the same session: %s", v.Message, strings.Join(v.Ahead, ", "))
	}
	holders := append(slices.Clone(v.Holders), v.Ahead...)
	if len(holders) > 0 {
		res.Figures["holders"] = strings.Join(holders, ", ")
	}
	wait := ""
	if len(holders) > 0 {
		wait = ", or wait for " + strings.Join(holders, ", ")
	}
	if v.Passed && len(st.notEvaluated) > 0 {
		res.NotEvaluated = strings.Join(st.notEvaluated, "; ")
		if res.Message == "" {
			res.Message = "not evaluated: " + res.NotEvaluated
		}
	}
	switch v.Reason {
	case model.ReasonQueueInsufficient:
		res.Fix = fmt.Sprintf("raise queue %s's capability by %s%s", cmp.Or(v.Queue, g.Queue), gang.FormatResources(v.Shortfall), wait)
	case model.ReasonClusterOverused:
		res.Fix = fmt.Sprintf("free %s in the cluster (the overcommit factor is %s), or lower minResources%s", gang.FormatResources(v.Shortfall), v.Figures["overcommitFactor"], wait)
	case model.ReasonQueueNotOpen:
		res.Fix = fmt.Sprintf("open queue %s (vcctl queue operate -n %s -a open), or submit to another queue", g.Queue, g.Queue)
	case model.ReasonQueueNotFound:
		res.Fix = fmt.Sprintf("create queue %s, or set the group's spec.queue to one that exists", g.Queue)
	}
	return res
}

// queueBudget adapts the allocate action's queue check to placement.
type queueBudget struct {
	b   *model.Budget
	job *model.Job
	// counted are the members that hold a node or finished already; taken
	// those placed so far.
	counted, taken int32
	// pod and req are the last member admit saw and its request.
	pod *corev1.Pod
	req *model.Resource
}

func (st *state) Budget() gang.MemberBudget {
	if st == nil || st.budget == nil || !st.enqueue.Passed {
		// A job the enqueue step holds back is never allocated: the
		// enqueue step is the blocker, and the plan kept for the
		// diagnosis is where the members would go.
		return nil
	}
	var counted int32
	for _, t := range st.job.Tasks {
		if t.Status.IsAllocated() || t.Status == model.Succeeded {
			counted++
		}
	}
	return &queueBudget{b: st.budget.Fork(), job: st.job, counted: counted}
}

func (vb *queueBudget) Fork() gang.MemberBudget {
	return &queueBudget{b: vb.b.Fork(), job: vb.job, counted: vb.counted}
}

func (vb *queueBudget) Admit(pod *corev1.Pod) string {
	vb.pod, vb.req = pod, request(pod)
	return vb.b.Admit(pod.Name, vb.req, vb.counted+vb.taken >= vb.job.MinMember)
}

func (vb *queueBudget) Take(pod *corev1.Pod) {
	if vb.pod != pod {
		// take follows admit of the same pod: its request is computed once.
		vb.pod, vb.req = pod, request(pod)
	}
	vb.b.Take(vb.req)
	vb.taken++
}

// refused are the members the queue refused, once each (a member
// refused on one pass is refused again on the next).
func (vb *queueBudget) refused() []model.Refusal {
	seen := map[string]bool{}
	var out []model.Refusal
	for _, r := range vb.b.Refused {
		if !seen[r.Task] {
			seen[r.Task] = true
			out = append(out, r)
		}
	}
	return out
}

// Hold is allocateHold when the queue refused members of the placement
// budget served.
func (st *state) Hold(p *gang.Placement, budget gang.MemberBudget) *gang.GateResult {
	if qb, ok := budget.(*queueBudget); ok {
		if refused := qb.refused(); len(refused) > 0 {
			return st.allocateHold(p, refused)
		}
	}
	return nil
}

// NotEvaluated says what of the session could not be read.
func (st *state) NotEvaluated() []string { return st.notEvaluated }

// allocateHold is the allocate action's queue check holding a gang back:
// the placement the queue allowed (p) misses the minimum because the queue
// refused members, in Volcano's words ("N/M tasks in gang unschedulable"),
// with the queue's figures and the groups that hold its room.
func (st *state) allocateHold(p *gang.Placement, refused []model.Refusal) *gang.GateResult {
	g := p.Gang
	attr := st.budget.Attr()
	limit, limitName := st.budget.Limit()
	r := refused[0]
	res := &gang.GateResult{Gate: GateAllocate, Check: GateAllocate, Reason: r.Reason,
		Message: fmt.Sprintf("%d/%d tasks in gang unschedulable: %d of them refused by queue %s: %s",
			max(0, g.MinMember-p.MaxPlaceable), len(st.job.Tasks), len(refused), g.Queue, r.Message),
		Figures: map[string]string{"queue": g.Queue, "configuration": st.session.Config.Source, limitKey(limitName): limit.String(),
			"queueAllocated": attr.Allocated.String(), "queueRequest": attr.Request.String(), "admitted": fmt.Sprint(p.MaxPlaceable)}}
	// By how much: what the queue would hold with the gang's minimum
	// placed, beyond its limit.
	want := attr.Allocated.Clone()
	need := g.MinMember - int32(len(g.Running())+len(g.Succeeded))
	for _, pod := range g.Pending() {
		if need <= 0 {
			break
		}
		want.Add(model.NewResource(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})))
		need--
	}
	var over []string
	for _, name := range want.Names() {
		if want.Get(name) > limit.Get(name)+0.1 {
			over = append(over, string(name))
		}
	}
	if len(over) > 0 {
		res.Shortfall = want.Shortfall(limit, over)
		res.Needs = want.Shortfall(&model.Resource{}, over)
		res.Figures["shortfall"] = gang.FormatResources(res.Shortfall)
	}
	if r.Queue != "" && r.Queue != g.Queue {
		res.Figures["limitQueue"] = r.Queue
	}
	holders := "the other queues' demand to drop (no group of this queue holds any of it)"
	if len(attr.Holders) > 0 {
		res.Figures["queueHolders"] = strings.Join(attr.Holders, ", ")
		holders = strings.Join(attr.Holders, ", ")
	}
	switch r.Reason {
	case model.ReasonQueueNotOpen:
		res.Fix = fmt.Sprintf("open queue %s (vcctl queue operate -n %s -a open), or submit to another queue", g.Queue, g.Queue)
	case model.ReasonQueueOverused:
		res.Fix = fmt.Sprintf("queue %s holds its deserved share already: wait for %s, or raise the queue's weight (its share among the queues with demand) or guarantee", g.Queue, holders)
	case model.ReasonHierarchyBroken:
		res.Fix = "repair the queue hierarchy (every queue's spec.parent must exist, without cycles, up to the root queue; jobs only in leaf queues)"
	case model.ReasonQueueNotLeaf:
		res.Fix = fmt.Sprintf("submit to a leaf queue under %s", g.Queue)
	default:
		if r.Queue != "" && r.Queue != g.Queue {
			res.Fix = fmt.Sprintf("raise the capability of queue %s (a parent of %s), or wait for the jobs of its queues", r.Queue, g.Queue)
		} else if limitName == "capability" {
			res.Fix = fmt.Sprintf("raise queue %s's capability%s, or wait for %s", g.Queue, by(res.Shortfall), holders)
		} else {
			res.Fix = fmt.Sprintf("raise queue %s's weight (its share among the queues with demand), capability or guarantee%s, or wait for %s", g.Queue, by(res.Shortfall), holders)
		}
	}
	return res
}

// Finish is the gang plugin's JobReadyFn on a placed gang: one
// that reaches minMember but not a task's minTaskMember is not ready, and
// allocate discards the session's statement.
func (st *state) Finish(p *gang.Placement) {
	if p.Verdict != gang.VerdictPlaced || !st.session.Config.Enabled("gang", model.PointJobReady) {
		return
	}
	placed := map[string]bool{}
	for _, a := range p.Assignments {
		placed[a.Pod.Namespace+"/"+a.Pod.Name] = true
	}
	ready := st.job.Ready(func(t *model.Task) model.Status {
		if placed[t.Namespace+"/"+t.Name] {
			return model.Allocated
		}
		return t.Status
	})
	if ready.Ready {
		return
	}
	p.ApplyGate(&gang.GateResult{Gate: GateJobReady, Check: GateJobReady, Reason: ReasonTaskNotReady,
		Message: fmt.Sprintf("%d/%d tasks in gang unschedulable: minTaskMember not met (%s), so the gang plugin's JobReady is false and allocate discards the session's statement",
			max(0, p.Gang.MinMember-ready.Count), len(st.job.Tasks), strings.Join(ready.Short, "; ")),
		Fix: "make room for the short tasks' members (they are the blocker), or lower their minTaskMember"})
}

// limitKey names the queue's limit among the figures.
func limitKey(name string) string {
	if name == "capability" {
		return "queueCapability"
	}
	return "queueDeserved"
}

// by words a shortfall for a fix: " by nvidia.com/gpu=1" ("" for none).
func by(short corev1.ResourceList) string {
	if len(short) == 0 {
		return ""
	}
	return " by " + gang.FormatResources(short)
}

// request is a task's Resreq as Volcano's GetPodResourceRequest
// makes it: the pod's requests (init containers, sidecars and overhead
// included) and one pod.
func request(pod *corev1.Pod) *model.Resource {
	rl := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	rl[corev1.ResourcePods] = *resource.NewQuantity(1, resource.DecimalSI)
	return model.NewResource(rl)
}
