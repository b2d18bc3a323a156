package gang

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
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/volcano"
)

// The checks of Volcano's session besides its enqueue step
// (docs/design.md#volcano).
const (
	// GateVolcanoAllocate is the allocate action's queue check: a task is
	// allocated only within its queue's deserved share (proportion) or
	// capability (capacity), in an Open queue that is not overused.
	GateVolcanoAllocate = "VolcanoAllocate"
	// GateVolcanoJobReady is the gang plugin's JobReadyFn: every task's
	// minTaskMember allocated, and minMember in all.
	GateVolcanoJobReady = "VolcanoJobReady"
	// ReasonTaskNotReady: a task below its minTaskMember.
	ReasonTaskNotReady = "NotEnoughTasksReady"
)

// volcanoQueueGateName is the chart's own gate, which Volcano removes itself.
const volcanoQueueGateName = "scheduling.volcano.sh/queue-allocation-gate"

// volcanoState is one Volcano session for one gang: the enqueue verdict,
// the queue check its members are allocated under, and the job whose
// readiness decides (docs/design.md#volcano).
type volcanoState struct {
	session *volcano.Session
	job     *volcano.Job
	enqueue volcano.Verdict
	budget  *volcano.Budget
	// notEvaluated says what of the session could not be read.
	notEvaluated []string
}

// VolcanoQueueOrder is the order Volcano's allocate action takes queues in
// on snap (volcano.Session.QueueOrder: queue priority, then share), in the
// session opened for g, one of its pending gangs: the allocate action pops
// the first queue, allocates its next job, and pushes the queue back with
// its share updated (allocate.go's allocateResources).
func VolcanoQueueOrder(snap *schedule.Snapshot, g *Gang, nodes []*framework.NodeInfo) func(a, b string) int {
	return openVolcano(snap, g, nodes).session.QueueOrder
}

// openVolcano opens the session Volcano's scheduler would run on snap for
// g: every Volcano PodGroup in the snapshot is a job (g's own taken from
// g, which may be a what-if), its pods the tasks, the Queues as listed,
// the configuration snap.Volcano(). Queues the snapshot lacks (a file
// without them, a user who may not list them) leave the queue's state and
// figures unknown: the session then stands in an Open queue without limits
// for the gang's, so what needs no Queue (overcommit) is still checked, and
// says so in notEvaluated.
func openVolcano(snap *schedule.Snapshot, g *Gang, nodes []*framework.NodeInfo) *volcanoState {
	cfg := snap.Volcano()
	st := &volcanoState{}
	if snap.VolcanoConfigUnread != "" {
		st.notEvaluated = append(st.notEvaluated, "Volcano's scheduler configuration: "+snap.VolcanoConfigUnread)
	}
	var queues []*volcano.Queue
	const listed = "queues." + schedule.VolcanoGroup
	if snap.IsUnreadable(listed) || len(snap.Queues) == 0 {
		why := "the snapshot holds no Volcano Queues"
		if snap.IsUnreadable(listed) {
			why = "Volcano Queues could not be listed"
		}
		st.notEvaluated = append(st.notEvaluated, fmt.Sprintf("%s, so queue %q's state, capability and share are unknown", why, g.Queue))
		queues = append(queues, &volcano.Queue{Name: g.Queue, Weight: 1})
	} else {
		for _, u := range snap.Queues {
			q, err := volcano.QueueFrom(u)
			if err != nil {
				st.notEvaluated = append(st.notEvaluated, err.Error())
				continue
			}
			queues = append(queues, q)
		}
	}
	// The tasks of every Volcano job, by namespace/name.
	tasks := map[string][]*volcano.Task{}
	for _, list := range [][]*corev1.Pod{snap.Pods, snap.SucceededPods} {
		for _, pod := range list {
			if name := pod.Annotations[VolcanoGroupAnnotation]; name != "" {
				key := pod.Namespace + "/" + name
				tasks[key] = append(tasks[key], volcanoTask(pod, true))
			}
		}
	}
	st.job = volcanoJob(snap, g.PodGroup, g.Namespace, g.Name)
	st.job.Queue, st.job.MinMember, st.job.MinTaskMember, st.job.MinResources = g.Queue, g.MinMember, g.MinTaskMember, g.MinResources
	for _, list := range [][]*corev1.Pod{g.Members, g.Succeeded} {
		for _, pod := range list {
			// The gang's own members are judged as released (its gates are
			// the Gated verdict's business).
			st.job.Tasks = append(st.job.Tasks, volcanoTask(pod, false))
		}
	}
	known := map[string]bool{}
	for _, q := range queues {
		known[q.Name] = true
	}
	standIn := len(snap.Queues) == 0 || snap.IsUnreadable(listed)
	jobs := []*volcano.Job{st.job}
	for _, u := range snap.PodGroups {
		if u.GroupVersionKind().Group != schedule.VolcanoGroup || (u.GetNamespace() == g.Namespace && u.GetName() == g.Name) {
			continue
		}
		j := volcanoJob(snap, u, u.GetNamespace(), u.GetName())
		other := &Gang{}
		if err := readVolcano(fields.New(u), other); err != nil {
			continue // a malformed group of another user's: Volcano's cache would not take it either
		}
		j.Queue, j.MinMember, j.MinTaskMember, j.MinResources = other.Queue, other.MinMember, other.MinTaskMember, other.MinResources
		if !standIn && !known[j.Queue] {
			continue // Volcano's cache Snapshot leaves out a job whose queue does not exist
		}
		j.Tasks = tasks[j.Key()]
		jobs = append(jobs, j)
	}
	total, used := &volcano.Resource{}, &volcano.Resource{}
	for _, ni := range nodes {
		if ni == nil || ni.Node() == nil {
			continue
		}
		total.Add(volcano.NewResource(ni.Node().Status.Allocatable))
		used.Add(volcano.FromFramework(ni.Requested))
	}
	st.session = volcano.Open(cfg, queues, jobs, total, used)
	st.notEvaluated = append(st.notEvaluated, st.session.NotEvaluated...)
	if !cfg.Enabled("gang", volcano.PointJobReady) {
		// Without the gang plugin's JobReadyFn allocate commits every task
		// it places: no minimum holds the job together.
		st.notEvaluated = append(st.notEvaluated, "the configuration ("+cfg.Source+") runs no gang plugin JobReady: Volcano binds the tasks that fit one by one, so the gang's minimum is not Volcano's")
	}
	st.enqueue = st.session.Enqueue(st.job)
	st.budget = st.session.Budget(st.job)
	return st
}

// notCreated orders a group no API server stored (a what-if, a file's
// group without a creation time) after every group that exists: Volcano
// gives it the time it is created, the newest.
const notCreated = "9999-12-31T23:59:59Z"

// volcanoJob is a PodGroup's job without tasks: phase, priority (its
// class's value, else the global default class's, as Volcano's cache
// starts every job at its defaultPriority), creation.
func volcanoJob(snap *schedule.Snapshot, u *unstructured.Unstructured, namespace, name string) *volcano.Job {
	j := &volcano.Job{Namespace: namespace, Name: name, Created: notCreated}
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

// volcanoTask is a pod as a task of its job. gates says whether scheduling
// gates other than Volcano's own hold it (DeductSchGatedResources).
func volcanoTask(pod *corev1.Pod, gates bool) *volcano.Task {
	t := &volcano.Task{Namespace: pod.Namespace, Name: pod.Name, Role: TaskOf(pod), Status: volcano.Status(TaskStatusOf(pod)),
		Request: volcanoRequest(pod)}
	if gates {
		for _, sg := range pod.Spec.SchedulingGates {
			if sg.Name != volcanoQueueGateName {
				t.Gated = true
			}
		}
	}
	return t
}

// gate is the enqueue step as a GateResult.
func (st *volcanoState) gate(g *Gang) *GateResult {
	v := st.enqueue
	res := &GateResult{Gate: GateVolcanoEnqueue, Check: checkVolcanoQueue, Passed: v.Passed, Reason: v.Reason, Message: v.Message,
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
	case volcano.ReasonQueueInsufficient:
		res.Fix = fmt.Sprintf("raise queue %s's capability by %s%s", cmp.Or(v.Queue, g.Queue), FormatResources(v.Shortfall), wait)
	case volcano.ReasonClusterOverused:
		res.Fix = fmt.Sprintf("free %s in the cluster (the overcommit factor is %s), or lower minResources%s", FormatResources(v.Shortfall), v.Figures["overcommitFactor"], wait)
	case volcano.ReasonQueueNotOpen:
		res.Fix = fmt.Sprintf("open queue %s (vcctl queue operate -n %s -a open), or submit to another queue", g.Queue, g.Queue)
	case volcano.ReasonQueueNotFound:
		res.Fix = fmt.Sprintf("create queue %s, or set the group's spec.queue to one that exists", g.Queue)
	}
	return res
}

// volcanoBudget adapts the allocate action's queue check to placement.
type volcanoBudget struct {
	b   *volcano.Budget
	job *volcano.Job
	// counted are the members that hold a node or finished already; taken
	// those placed so far.
	counted, taken int32
	// pod and req are the last member admit saw and its request.
	pod *corev1.Pod
	req *volcano.Resource
}

func (st *volcanoState) memberBudget() memberBudget {
	if st == nil || st.budget == nil || !st.enqueue.Passed {
		// A job the enqueue step holds back is never allocated: the
		// enqueue step is the blocker, and the plan kept for the
		// diagnosis is where the members would go.
		return nil
	}
	var counted int32
	for _, t := range st.job.Tasks {
		if t.Status.IsAllocated() || t.Status == volcano.Succeeded {
			counted++
		}
	}
	return &volcanoBudget{b: st.budget.Fork(), job: st.job, counted: counted}
}

func (vb *volcanoBudget) fork() memberBudget {
	return &volcanoBudget{b: vb.b.Fork(), job: vb.job, counted: vb.counted}
}

func (vb *volcanoBudget) admit(pod *corev1.Pod) string {
	vb.pod, vb.req = pod, volcanoRequest(pod)
	return vb.b.Admit(pod.Name, vb.req, vb.counted+vb.taken >= vb.job.MinMember)
}

func (vb *volcanoBudget) take(pod *corev1.Pod) {
	if vb.pod != pod {
		// take follows admit of the same pod: its request is computed once.
		vb.pod, vb.req = pod, volcanoRequest(pod)
	}
	vb.b.Take(vb.req)
	vb.taken++
}

// refused are the members the queue refused, once each (a member
// refused on one pass is refused again on the next).
func (vb *volcanoBudget) refused() []volcano.Refusal {
	seen := map[string]bool{}
	var out []volcano.Refusal
	for _, r := range vb.b.Refused {
		if !seen[r.Task] {
			seen[r.Task] = true
			out = append(out, r)
		}
	}
	return out
}

// allocateHold is the allocate action's queue check holding a gang back:
// the placement the queue allowed (p) misses the minimum because the queue
// refused members, in Volcano's words ("N/M tasks in gang unschedulable"),
// with the queue's figures and the groups that hold its room.
func (st *volcanoState) allocateHold(p *Placement, refused []volcano.Refusal) *GateResult {
	g := p.Gang
	attr := st.budget.Attr()
	limit, limitName := st.budget.Limit()
	r := refused[0]
	res := &GateResult{Gate: GateVolcanoAllocate, Check: GateVolcanoAllocate, Reason: r.Reason,
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
		want.Add(volcano.NewResource(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})))
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
		res.Needs = want.Shortfall(&volcano.Resource{}, over)
		res.Figures["shortfall"] = FormatResources(res.Shortfall)
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
	case volcano.ReasonQueueNotOpen:
		res.Fix = fmt.Sprintf("open queue %s (vcctl queue operate -n %s -a open), or submit to another queue", g.Queue, g.Queue)
	case volcano.ReasonQueueOverused:
		res.Fix = fmt.Sprintf("queue %s holds its deserved share already: wait for %s, or raise the queue's weight (its share among the queues with demand) or guarantee", g.Queue, holders)
	case volcano.ReasonHierarchyBroken:
		res.Fix = "repair the queue hierarchy (every queue's spec.parent must exist, without cycles, up to the root queue; jobs only in leaf queues)"
	case volcano.ReasonQueueNotLeaf:
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

// applyReadiness is the gang plugin's JobReadyFn on a placed gang: one
// that reaches minMember but not a task's minTaskMember is not ready, and
// allocate discards the session's statement.
func (st *volcanoState) applyReadiness(p *Placement) {
	if p.Verdict != VerdictPlaced || !st.session.Config.Enabled("gang", volcano.PointJobReady) {
		return
	}
	placed := map[string]bool{}
	for _, a := range p.Assignments {
		placed[a.Pod.Namespace+"/"+a.Pod.Name] = true
	}
	ready := st.job.Ready(func(t *volcano.Task) volcano.Status {
		if placed[t.Namespace+"/"+t.Name] {
			return volcano.Allocated
		}
		return t.Status
	})
	if ready.Ready {
		return
	}
	p.ApplyGate(&GateResult{Gate: GateVolcanoJobReady, Check: GateVolcanoJobReady, Reason: ReasonTaskNotReady,
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
	return " by " + FormatResources(short)
}

// volcanoRequest is a task's Resreq as Volcano's GetPodResourceRequest
// makes it: the pod's requests (init containers, sidecars and overhead
// included) and one pod.
func volcanoRequest(pod *corev1.Pod) *volcano.Resource {
	rl := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	rl[corev1.ResourcePods] = *resource.NewQuantity(1, resource.DecimalSI)
	return volcano.NewResource(rl)
}
