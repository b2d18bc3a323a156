package kueue

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/kueue/quota"
)

// Kueue as a queueing layer (docs/design.md#kueue): a workload that names a
// LocalQueue is admitted by Kueue's scheduler before kube-scheduler sees a
// pod of it. The rules are quota's; this file reads the snapshot and the
// gang for them and words the decision for the gang core.

// The keys by which a workload asks Kueue for admission (jobframework).
const (
	// QueueName is the label (and, before Kueue v0.10, the annotation)
	// naming the workload's LocalQueue.
	QueueName = "kueue.x-k8s.io/queue-name"
	// PriorityClassLabel names the workload's WorkloadPriorityClass.
	PriorityClassLabel = "kueue.x-k8s.io/priority-class"
	// MinParallelism lets a Job start with fewer pods (partial admission).
	MinParallelism = "kueue.x-k8s.io/job-min-parallelism"
)

// Layer is Kueue's name among the queueing layers.
const Layer = "Kueue"

// CheckName is admit's name for Kueue's admission check.
const CheckName = Layer

// The kinds of Kueue's objects a snapshot reads and keeps.
var objectKinds = []schedule.ObjectKind{
	{Group: quota.Group, Resource: "resourceflavors", Kind: quota.KindResourceFlavor},
	{Group: quota.Group, Resource: "clusterqueues", Kind: quota.KindClusterQueue},
	{Group: quota.Group, Resource: "cohorts", Kind: quota.KindCohort},
	{Group: quota.Group, Resource: "localqueues", Kind: quota.KindLocalQueue, Namespaced: true},
	{Group: quota.Group, Resource: "workloads", Kind: quota.KindWorkload, Namespaced: true},
	{Group: quota.Group, Resource: "workloadpriorityclasses", Kind: quota.KindWorkloadPriorityClass},
	{Group: quota.Group, Resource: "admissionchecks", Kind: quota.KindAdmissionCheck},
	{Group: quota.Group, Resource: "topologies", Kind: quota.KindTopology},
}

func init() {
	for _, k := range objectKinds {
		schedule.RegisterObjectKind(k)
	}
	gang.RegisterAdmitter(admitter{})
}

// admitter is Kueue as a gang.Admitter.
type admitter struct{}

// Queued: obj names a LocalQueue (the label, or the annotation of Kueue
// before v0.10) and waits for Kueue when it is not stored yet (Kueue's
// webhook suspends a new workload that names a queue, or gates its pods)
// or is stored suspended (spec.suspend, or a Kubeflow job's
// spec.runPolicy.suspend): Kueue resumes it when it admits it. A stored
// workload that runs was admitted, and its pods are judged as they are.
func (admitter) Queued(obj *unstructured.Unstructured) (string, bool) {
	if isWorkload(obj) {
		// A Workload itself (Waiting): its queue, pending while it holds
		// no admission.
		queue, _, _ := unstructured.NestedString(obj.Object, "spec", "queueName")
		_, admitted, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "admission")
		return queue, queue != "" && !admitted
	}
	queue := cmp.Or(obj.GetLabels()[QueueName], obj.GetAnnotations()[QueueName])
	if queue == "" {
		return "", false
	}
	suspended, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend")
	if !suspended {
		suspended, _, _ = unstructured.NestedBool(obj.Object, "spec", "runPolicy", "suspend")
	}
	return queue, obj.GetUID() == "" || suspended
}

// models caches the model of the last snapshots' Kueue objects: every
// placement of a gang (and of each what-if) asks again.
var models struct {
	sync.Mutex
	entries []modelEntry
}

type modelEntry struct {
	// objects and namespaces are the snapshot's slices' arrays: a changed
	// copy (a what-if) has its own.
	objects    **unstructured.Unstructured
	n          int
	namespaces **corev1.Namespace
	model      *quota.Model
}

// modelOf is the model of snap's Kueue objects, built once per set of
// objects.
func modelOf(snap *schedule.Snapshot) *quota.Model {
	key := modelEntry{n: len(snap.Objects), objects: unsafe.SliceData(snap.Objects), namespaces: unsafe.SliceData(snap.Namespaces)}
	models.Lock()
	defer models.Unlock()
	for _, e := range models.entries {
		if e.objects == key.objects && e.n == key.n && e.namespaces == key.namespaces {
			return e.model
		}
	}
	// The last model read most of these objects already (a what-if
	// changes a few; capacity adds a Workload a copy).
	var prev *quota.Model
	if n := len(models.entries); n > 0 {
		prev = models.entries[n-1].model
	}
	key.model = quota.LoadAfter(snap.Objects, snap.Namespaces, prev)
	models.entries = append(models.entries, key)
	if len(models.entries) > 4 {
		models.entries = models.entries[1:]
	}
	return key.model
}

// unread names Kueue's kinds the live read could not list.
func unread(snap *schedule.Snapshot) []string {
	var out []string
	for _, k := range objectKinds {
		if r := k.String(); snap.IsUnreadable(r) {
			out = append(out, r)
		}
	}
	return out
}

// notInstalled: the snapshot holds none of Kueue's queue objects (nor
// any it could not read).
func notInstalled(m *quota.Model) bool {
	return len(m.ClusterQueues) == 0 && len(m.LocalQueues) == 0 && len(m.Flavors) == 0 && len(m.Problems) == 0
}

// Admit decides the gang's workloads that wait for Kueue.
func (a admitter) Admit(snap *schedule.Snapshot, g *gang.Gang) *gang.Admission {
	var queued []gang.QueuedWorkload
	for _, q := range g.Queued {
		// A Workload is Kueue's to decide whatever queue it names (none:
		// Kueue never admits it).
		if name, _ := a.Queued(q.Object); name != "" || isWorkload(q.Object) {
			queued = append(queued, q)
		}
	}
	if len(queued) == 0 {
		return nil
	}
	adm := &gang.Admission{Layer: Layer}
	if u := unread(snap); len(u) > 0 {
		adm.NotEvaluated = append(adm.NotEvaluated, fmt.Sprintf("Kueue admits the workload first, and its objects could not be read (%s): its quota, flavors and preemption are not evaluated", strings.Join(u, ", ")))
		return adm
	}
	m := modelOf(snap)
	if notInstalled(m) {
		adm.NotEvaluated = append(adm.NotEvaluated, fmt.Sprintf("the workload names LocalQueue %s, and the snapshot holds no ClusterQueue, LocalQueue or ResourceFlavor "+
			"(kueue.x-k8s.io): where Kueue runs it admits the workload first, and that is not evaluated; where it does not, the label does nothing", queued[0].Queue))
		return adm
	}
	for _, p := range m.Problems {
		adm.NotEvaluated = append(adm.NotEvaluated, "Kueue object not read: "+p)
	}
	if len(queued) > 1 {
		adm.NotEvaluated = append(adm.NotEvaluated, fmt.Sprintf("%d workloads wait for Kueue; each is admitted on its own here, their quota not added up", len(queued)))
	}
	adm.Admitted = true
	var record []admittedRecord
	var preempts []string
	var evicted []*corev1.Pod
	// flavorsOf are each admitted member's flavors; dropped the members a
	// partial admission leaves out; only, when there is a single pod set,
	// its flavors (for live members that stand in for made ones).
	flavorsOf := map[string]map[corev1.ResourceName]string{}
	dropped := map[string]bool{}
	var only map[corev1.ResourceName]string
	sets := 0
	for _, q := range queued {
		sub, members, err := subjectOf(m, g, q)
		var refused *refusal
		switch {
		case errors.As(err, &refused):
			adm.Admitted = false
			adm.Inadmissible = true
			adm.Message = refused.message
			adm.Gate = &gang.GateResult{Gate: Layer, Check: CheckName, Reason: refused.reason, Message: refused.message,
				Detail: fmt.Sprintf("Kueue does not admit %s %s: %s", q.Object.GetKind(), q.Object.GetName(), refused.message)}
			continue
		case err != nil:
			adm.Admitted = false
			adm.NotEvaluated = append(adm.NotEvaluated, err.Error())
			continue
		}
		var d quota.Decision
		fromQueue := isWorkload(q.Object) && sub.Self != nil && sub.Self.Pending()
		if fromQueue {
			// A Workload waiting in its queue (Waiting): decided with every
			// other pending one, in order (quota.Model.Queue), as the queue
			// lists them.
			d = m.Queue()[sub.Self]
		} else {
			d = m.Admit(sub)
			if u := m.Unsettled(d.ClusterQueue, sub.Self); d.Admitted && len(u) > 0 {
				d.NotEvaluated = append(d.NotEvaluated, fmt.Sprintf("Workload %s/%s, pending in the same cohort, would be admitted as well (the snapshot is not settled): Kueue may admit it first and take the quota", u[0].Namespace, u[0].Name))
			}
		}
		adm.Queue = cmp.Or(adm.Queue, d.ClusterQueue)
		adm.NotEvaluated = append(adm.NotEvaluated, d.NotEvaluated...)
		if !d.Admitted {
			adm.Admitted = false
			adm.Message = d.Message
			// Refused whatever the quota (or until its backoff ends).
			adm.Inadmissible = d.Reason == "Inadmissible" || d.Reason == "Backoff"
			if d.Behind != nil {
				adm.Behind = append(adm.Behind, d.Behind.Namespace+"/"+d.Behind.Name)
			} else {
				adm.FirstInLine = d.FirstInLine
			}
			adm.Gate = &gang.GateResult{Gate: Layer, Check: CheckName, Reason: d.Reason, Message: d.Message,
				Detail: refusalDetail(q, d)}
			adm.Holders = holders(d)
			adm.Fixes = append(adm.Fixes, fixes(m, q, sub, d)...)
			continue
		}
		adm.Borrows = strings.Join(append(slices.DeleteFunc([]string{adm.Borrows}, func(s string) bool { return s == "" }), d.Borrows...), "; ")
		victims := make([]*quota.Workload, 0, len(d.Preempts))
		for _, t := range d.Preempts {
			preempts = append(preempts, t.Workload.Namespace+"/"+t.Workload.Name)
			victims = append(victims, t.Workload)
		}
		evicted = append(evicted, podsOf(snap, m, victims)...)
		if len(d.Preempts) > 0 {
			adm.Message = d.Message
		}
		record = append(record, admittedRecord{sub: sub, decision: d, queued: fromQueue})
		if adm.Flavors == nil {
			adm.Flavors = map[string]map[string]string{}
		}
		for _, ps := range d.PodSets {
			fl := map[string]string{}
			for r, f := range ps.Flavors {
				fl[string(r)] = f
			}
			adm.Flavors[ps.Name] = fl
			if adm.Counts == nil {
				adm.Counts = map[string]int32{}
			}
			adm.Counts[ps.Name] = ps.Count
			only = ps.Flavors
			sets++
			// The first Count members of the pod set are admitted
			// (Kueue sets a Job's parallelism to the count).
			for k, name := range members[ps.Name] {
				if int32(k) < ps.Count {
					flavorsOf[name] = ps.Flavors
				} else {
					dropped[name] = true
				}
			}
		}
	}
	if !adm.Admitted {
		adm.Flavors, adm.Counts = nil, nil
		return adm
	}
	adm.Preempts, adm.Evicted = preempts, evicted
	adm.Summary = summary(adm)
	adm.Record = record
	if sets != 1 {
		only = nil
	}
	adm.Admit = func(pod *corev1.Pod) *corev1.Pod {
		if dropped[pod.Name] {
			return nil
		}
		flavors, ok := flavorsOf[pod.Name]
		if !ok {
			// A live member that stands in for a made one (MergeLive)
			// of a workload with a single pod set.
			flavors = only
		}
		// Kueue removes its gates from the pods it admits (a flavor with
		// a topology is not evaluated: checksFor and the decision say so).
		return withoutGate(withoutGate(withFlavors(m, pod, flavors), pod, AdmissionGate), pod, TopologyGate)
	}
	return adm
}

// refusal is a queued workload Kueue refuses before its quota is looked
// at (no Workload is ever made of it, or its webhook refuses it).
type refusal struct{ reason, message string }

func (r *refusal) Error() string { return r.message }

// refusalDetail words a refusal for people: the workload, its queue, and
// what Kueue says.
func refusalDetail(q gang.QueuedWorkload, d quota.Decision) string {
	what := fmt.Sprintf("%s %s in LocalQueue %s", q.Object.GetKind(), q.Object.GetName(), q.Queue)
	if d.ClusterQueue != "" {
		what += " (ClusterQueue " + d.ClusterQueue + ")"
	}
	msg := fmt.Sprintf("Kueue does not admit %s: %s", what, d.Message)
	if d.Detail != "" {
		msg += " (" + d.Detail + ")"
	}
	return msg
}

// withoutGate is p (pod, or a copy of it) without scheduling gate name: a
// copy when p is pod and has it.
func withoutGate(p, pod *corev1.Pod, name string) *corev1.Pod {
	i := slices.IndexFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == name })
	if i < 0 {
		return p
	}
	if p == pod {
		p = pod.DeepCopy()
	}
	p.Spec.SchedulingGates = slices.Delete(slices.Clone(p.Spec.SchedulingGates), i, i+1)
	return p
}

// withFlavors is pod as Kueue starts it in the flavors assigned
// (podset.FromAssignment, PodSetInfo.Merge): each flavor's node labels
// join its node selector and its tolerations its own; the pod is copied
// when it changes.
func withFlavors(m *quota.Model, pod *corev1.Pod, flavors map[corev1.ResourceName]string) *corev1.Pod {
	if len(flavors) == 0 {
		return pod
	}
	names := slices.Sorted(maps.Values(flavors))
	names = slices.Compact(names)
	out := pod
	for _, name := range names {
		f := m.Flavors[name]
		if f == nil {
			continue
		}
		for k, v := range f.Spec.NodeLabels {
			if out.Spec.NodeSelector[k] == v {
				continue
			}
			if out == pod {
				out = pod.DeepCopy()
			}
			if out.Spec.NodeSelector == nil {
				out.Spec.NodeSelector = map[string]string{}
			}
			out.Spec.NodeSelector[k] = v
		}
		for _, t := range f.Spec.Tolerations {
			if slices.ContainsFunc(out.Spec.Tolerations, func(have corev1.Toleration) bool {
				return have.MatchToleration(&t) && have.TolerationSeconds == t.TolerationSeconds
			}) {
				continue
			}
			if out == pod {
				out = pod.DeepCopy()
			}
			out.Spec.Tolerations = append(out.Spec.Tolerations, t)
		}
	}
	return out
}

// subjectOf is a queued workload as Kueue's scheduler reads it, and its
// members' pod sets by member name. A workload Kueue made a Workload for
// (a live suspended job) is that Workload; one not created yet is what
// Kueue's job framework would make of it: a pod set per role, the
// priority of its WorkloadPriorityClass or else its pods', queued now.
func subjectOf(m *quota.Model, g *gang.Gang, q gang.QueuedWorkload) (*quota.Subject, map[string][]string, error) {
	obj := q.Object
	if isWorkload(obj) {
		// A waiting Workload (Waiting): its pods carry their pod set.
		w := m.Workloads[obj.GetNamespace()+"/"+obj.GetName()]
		if w == nil {
			return nil, nil, fmt.Errorf("the snapshot holds no Workload %s/%s among Kueue's objects", obj.GetNamespace(), obj.GetName())
		}
		podSetOf := map[string][]string{}
		for _, p := range g.Members {
			// Made pods carry their pod set; a pod group's pods their role
			// (the pod set's name); a Workload of one pod set has them all.
			ps := cmp.Or(p.Labels[PodSetLabel], p.Annotations[RoleHashAnnotation])
			if ps == "" && len(w.Spec.PodSets) == 1 {
				ps = w.Spec.PodSets[0].Name
			}
			if ps != "" {
				podSetOf[ps] = append(podSetOf[ps], p.Name)
			}
		}
		return quota.SubjectOf(w), podSetOf, nil
	}
	members := map[string]*corev1.Pod{}
	for _, p := range g.Members {
		members[p.Name] = p
	}
	var pods []*corev1.Pod
	for _, name := range q.Members {
		if p := members[name]; p != nil {
			pods = append(pods, p)
		}
	}
	sets := podSetsOf(obj, pods)
	podSetOf := map[string][]string{}
	for _, s := range sets {
		for _, p := range s.pods {
			podSetOf[s.name] = append(podSetOf[s.name], p.Name)
		}
	}
	if uid := string(obj.GetUID()); uid != "" {
		if w := m.OwnedBy(uid); w != nil {
			sub := quota.SubjectOf(w)
			// Kueue takes a changed priority-class label over to the
			// Workload (UpdateWorkloadPriority).
			if v, ok := m.PriorityClasses[obj.GetLabels()[PriorityClassLabel]]; ok {
				sub.Priority = v
			}
			return sub, podSetOf, nil
		}
	}
	sub := &quota.Subject{Namespace: cmp.Or(obj.GetNamespace(), g.Namespace), Name: obj.GetName(), UID: string(obj.GetUID()), Queue: q.Queue,
		QueueTime: q.Created}
	if sub.QueueTime.IsZero() {
		sub.QueueTime = nowFunc()
	}
	if wpc := obj.GetLabels()[PriorityClassLabel]; wpc != "" {
		v, ok := m.PriorityClasses[wpc]
		if !ok {
			return nil, nil, &refusal{reason: "WorkloadPriorityClassNotFound", message: fmt.Sprintf("its label %s names WorkloadPriorityClass %s, which does not exist: Kueue creates no Workload for it (the job stays suspended) until it does", PriorityClassLabel, wpc)}
		}
		sub.Priority = v
	} else if len(pods) > 0 && pods[0].Spec.Priority != nil {
		sub.Priority = *pods[0].Spec.Priority
	}
	minCount := int32(-1)
	if v, ok := obj.GetAnnotations()[MinParallelism]; ok && obj.GetKind() == "Job" {
		// Kueue's webhook refuses the Job otherwise (ValidateJobOnCreate).
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n <= 0 || int(n) >= len(pods) {
			return nil, nil, &refusal{reason: "AdmissionWebhook", message: fmt.Sprintf("Kueue's webhook refuses the Job: metadata.annotations[%s]: Invalid value: %q: must be an integer above 0 and below the Job's pod count (%d)", MinParallelism, v, len(pods))}
		}
		minCount = int32(n)
	}
	for _, s := range sets {
		ps := quota.SubjectPodSet{Name: s.name, Count: int32(len(s.pods)), MinCount: int32(len(s.pods)), Spec: &s.pods[0].Spec, PerPod: quota.PerPod(&s.pods[0].Spec)}
		if minCount > 0 {
			ps.MinCount = minCount
		}
		sub.PodSets = append(sub.PodSets, ps)
	}
	return sub, podSetOf, nil
}

// podSet is one pod set of a workload and its members.
type podSet struct {
	name string
	pods []*corev1.Pod
}

// roleLabels name a pod's role in the workloads Kueue makes a pod set per
// role of: a JobSet's replicated Job, a Kubeflow job's replica type, a Ray
// cluster's group.
var roleLabels = []string{"jobset.sigs.k8s.io/replicatedjob-name", "training.kubeflow.org/replica-type", "ray.io/group"}

// podSetsOf groups a workload's pods into Kueue's pod sets: one, "main",
// for a Job; one per role otherwise, named by the role, lower-case.
func podSetsOf(obj *unstructured.Unstructured, pods []*corev1.Pod) []podSet {
	if len(pods) == 0 {
		return nil
	}
	var key string
	if obj.GetKind() != "Job" {
		for _, l := range roleLabels {
			if _, ok := pods[0].Labels[l]; ok {
				key = l
				break
			}
		}
	}
	if key == "" {
		return []podSet{{name: "main", pods: pods}}
	}
	var out []podSet
	for _, p := range pods {
		name := strings.ToLower(p.Labels[key])
		if key == "ray.io/group" && name == "headgroup" {
			name = "head" // Kueue's name for a Ray cluster's head pod set
		}
		i := slices.IndexFunc(out, func(s podSet) bool { return s.name == name })
		if i < 0 {
			out = append(out, podSet{name: name})
			i = len(out) - 1
		}
		out[i].pods = append(out[i].pods, p)
	}
	return out
}

// nowFunc is when a workload not created yet joins its queue.
var nowFunc = time.Now

// summary words an admission in Kueue's terms: the ClusterQueue, the
// flavor of each pod set's resources, what is borrowed, who is preempted.
func summary(adm *gang.Admission) string {
	var parts []string
	for _, ps := range slices.Sorted(maps.Keys(adm.Flavors)) {
		byFlavor := map[string][]string{}
		for r, f := range adm.Flavors[ps] {
			byFlavor[f] = append(byFlavor[f], r)
		}
		var in []string
		for _, f := range slices.Sorted(maps.Keys(byFlavor)) {
			rs := byFlavor[f]
			slices.Sort(rs)
			in = append(in, strings.Join(rs, ", ")+" in flavor "+f)
		}
		parts = append(parts, "pod set "+ps+": "+strings.Join(in, "; "))
	}
	s := "admits it in ClusterQueue " + adm.Queue
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, "; ") + ")"
	}
	if adm.Borrows != "" {
		s += "; borrows " + adm.Borrows
	}
	if len(adm.Preempts) > 0 {
		s += fmt.Sprintf("; after evicting %d Workload(s): %s", len(adm.Preempts), strings.Join(adm.Preempts, ", "))
	}
	return s
}

// holders says which Workloads hold the quota the workload lacks, and
// since when.
func holders(d quota.Decision) string {
	var parts []string
	seen := map[string]bool{}
	for _, sf := range d.Short {
		for i, h := range sf.Holders {
			key := h.Workload.Namespace + "/" + h.Workload.Name
			if seen[key] || i >= 3 {
				continue
			}
			seen[key] = true
			part := fmt.Sprintf("%s (%s %s in flavor %s", key, quota.Format(sf.Resource, h.Uses), sf.Resource, sf.Flavor)
			if h.Workload.Simulated() {
				part += ", admitted ahead of it in Kueue's queue"
			} else if c := h.Workload.Condition(quota.ConditionQuotaReserved); c != nil {
				part += ", since " + c.LastTransitionTime.UTC().Format(time.RFC3339)
			}
			parts = append(parts, part+")")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "ClusterQueue " + d.ClusterQueue + "'s quota is held by " + strings.Join(parts, ", ")
}

// fixes are the changes that may let Kueue admit the workload: its
// ClusterQueue's nominal quota raised by what it lacks in a flavor its pod
// sets may use (the first two such flavors), and a WorkloadPriorityClass
// high enough for Kueue to preempt within the ClusterQueue, when the model
// says Kueue then admits it.
func fixes(m *quota.Model, q gang.QueuedWorkload, sub *quota.Subject, d quota.Decision) []gang.AdmissionFix {
	var out []gang.AdmissionFix
	byFlavor := map[string][]quota.Shortfall{}
	var order []string
	for _, sf := range d.Short {
		if _, ok := byFlavor[sf.Flavor]; !ok {
			order = append(order, sf.Flavor)
		}
		byFlavor[sf.Flavor] = append(byFlavor[sf.Flavor], sf)
	}
	for _, f := range order {
		// Where the cohort has the quota and the ClusterQueue's borrowing
		// limit keeps it out: the limit raised (before any nominal quota).
		short := byFlavor[f]
		var words []string
		limits := map[corev1.ResourceName]int64{}
		for _, sf := range short {
			if sf.BorrowingLimit == nil || sf.CohortFree < sf.Need {
				break
			}
			by := sf.Need - sf.Available
			limits[sf.Resource] = *sf.BorrowingLimit + by
			words = append(words, fmt.Sprintf("%s from %s to %s (by %s)", sf.Resource,
				quota.Format(sf.Resource, *sf.BorrowingLimit), quota.Format(sf.Resource, *sf.BorrowingLimit+by), quota.Format(sf.Resource, by)))
		}
		if len(limits) != len(short) {
			continue
		}
		cq := d.ClusterQueue
		out = append(out, gang.AdmissionFix{
			Words: fmt.Sprintf("raising ClusterQueue %s's borrowingLimit in flavor %s (its cohort has the quota free): %s", cq, f, strings.Join(words, ", ")),
			Objects: func(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
				return withQuotaField(objs, cq, f, "borrowingLimit", limits)
			},
		})
		break
	}
	for _, f := range order[:min(len(order), 2)] {
		short := byFlavor[f]
		var words []string
		raised := map[corev1.ResourceName]int64{}
		for _, sf := range short {
			by := sf.Need - sf.Available
			raised[sf.Resource] = sf.Nominal + by
			words = append(words, fmt.Sprintf("%s from %s to %s (by %s)", sf.Resource,
				quota.Format(sf.Resource, sf.Nominal), quota.Format(sf.Resource, sf.Nominal+by), quota.Format(sf.Resource, by)))
		}
		cq := d.ClusterQueue
		out = append(out, gang.AdmissionFix{
			Words: fmt.Sprintf("raising ClusterQueue %s's nominalQuota in flavor %s: %s", cq, f, strings.Join(words, ", ")),
			Objects: func(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
				return withQuotaField(objs, cq, f, "nominalQuota", raised)
			},
		})
	}
	if len(d.Short) > 0 {
		values := slices.Sorted(maps.Values(m.PriorityClasses))
		for _, v := range slices.Compact(values) {
			if v <= sub.Priority {
				continue
			}
			if d2 := m.WithPriority(sub, v); !d2.Admitted {
				continue
			}
			var name string
			for _, n := range slices.Sorted(maps.Keys(m.PriorityClasses)) {
				if m.PriorityClasses[n] == v {
					name = n
					break
				}
			}
			obj := q.Object
			out = append(out, gang.AdmissionFix{
				Words: fmt.Sprintf("giving %s %s WorkloadPriorityClass %s (value %d; label %s) lets Kueue preempt for it", obj.GetKind(), obj.GetName(), name, v, PriorityClassLabel),
				Gang:  func(g *gang.Gang) *gang.Gang { return withPriorityClass(g, obj, name) },
			})
			break
		}
	}
	return out
}

// withQuotaField is objs with ClusterQueue cq's field (nominalQuota,
// borrowingLimit) in flavor f set to raised, per resource (a copy of the
// ClusterQueue).
func withQuotaField(objs []*unstructured.Unstructured, cq, f, field string, raised map[corev1.ResourceName]int64) []*unstructured.Unstructured {
	out := slices.Clone(objs)
	for i, u := range objs {
		if u.GroupVersionKind().Group != quota.Group || u.GetKind() != quota.KindClusterQueue || u.GetName() != cq {
			continue
		}
		c := u.DeepCopy()
		groups, _, _ := unstructured.NestedSlice(c.Object, "spec", "resourceGroups")
		for _, g := range groups {
			flavors, _ := g.(map[string]any)["flavors"].([]any)
			for _, fl := range flavors {
				fm, _ := fl.(map[string]any)
				if fm["name"] != f {
					continue
				}
				resources, _ := fm["resources"].([]any)
				for _, r := range resources {
					rm, _ := r.(map[string]any)
					name, _ := rm["name"].(string)
					if v, ok := raised[corev1.ResourceName(name)]; ok {
						q := quota.Quantity(corev1.ResourceName(name), v)
						rm[field] = q.String()
					}
				}
			}
		}
		_ = unstructured.SetNestedSlice(c.Object, groups, "spec", "resourceGroups")
		out[i] = c
	}
	return out
}

// withPriorityClass is g with workload obj labelled for
// WorkloadPriorityClass name.
func withPriorityClass(g *gang.Gang, obj *unstructured.Unstructured, name string) *gang.Gang {
	out := *g
	out.Queued = slices.Clone(g.Queued)
	for i, q := range out.Queued {
		if q.Object != obj {
			continue
		}
		c := q.Object.DeepCopy()
		labels := c.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[PriorityClassLabel] = name
		c.SetLabels(labels)
		out.Queued[i].Object = c
	}
	return &out
}

// podsOf are the snapshot's pods of Workloads ws: those each one's job
// controls (the controller reference or the Job's and JobSet's uid
// labels), or the pods that own it (a pod group). The pods of a Workload
// that held quota when the model's first index was made are looked up in
// it (ownerIndex) and found again in snap by name; others (one admitted
// since, by capacity or the queue) are found by reading every pod.
func podsOf(snap *schedule.Snapshot, m *quota.Model, ws []*quota.Workload) []*corev1.Pod {
	if len(ws) == 0 {
		return nil
	}
	idx := ownerIndexOf(snap, m)
	var out []*corev1.Pod
	var rest []*quota.Workload
	for _, w := range ws {
		if !idx.held[w.UID] {
			rest = append(rest, w)
			continue
		}
		var mine []*corev1.Pod
		missed := false
		for _, o := range w.OwnerReferences {
			for _, key := range idx.byOwner[string(o.UID)] {
				if key[0] != w.Namespace {
					continue
				}
				p := podNamed(snap, key)
				if p == nil {
					// Gone since (evicted), or the pods are not in order:
					// its pods are found by reading them all instead.
					missed = true
					break
				}
				mine = append(mine, p)
			}
		}
		if missed {
			rest = append(rest, w)
			continue
		}
		out = append(out, mine...)
	}
	return append(out, scanPodsOf(snap, rest)...)
}

// podNamed is snap's pod namespace/name, by a binary search (a snapshot
// keeps its pods in that order); nil when not found.
func podNamed(snap *schedule.Snapshot, key [2]string) *corev1.Pod {
	i, found := slices.BinarySearchFunc(snap.Pods, key, func(p *corev1.Pod, k [2]string) int {
		return cmp.Or(strings.Compare(p.Namespace, k[0]), strings.Compare(p.Name, k[1]))
	})
	if !found {
		return nil
	}
	return snap.Pods[i]
}

// scanPodsOf is podsOf by reading every pod.
func scanPodsOf(snap *schedule.Snapshot, ws []*quota.Workload) []*corev1.Pod {
	if len(ws) == 0 {
		return nil
	}
	owners := map[string]string{} // owner UID -> the Workload's namespace
	for _, w := range ws {
		for _, o := range w.OwnerReferences {
			owners[string(o.UID)] = w.Namespace
		}
	}
	var out []*corev1.Pod
	for _, p := range snap.Pods {
		if uid := ownerOf(p, func(uid string) bool { return owners[uid] == p.Namespace }); uid != "" {
			out = append(out, p)
		}
	}
	return out
}

// ownerOf is the UID by which pod belongs to a workload's job, the first
// of its own UID (a pod group's Workload is owned by its pods), the Job's
// and JobSet's uid labels and its controller that known reports true
// for; "" for none.
func ownerOf(p *corev1.Pod, known func(uid string) bool) string {
	for _, uid := range []string{string(p.UID), p.Labels["batch.kubernetes.io/controller-uid"], p.Labels["jobset.sigs.k8s.io/jobset-uid"]} {
		if uid != "" && known(uid) {
			return uid
		}
	}
	for _, o := range p.OwnerReferences {
		if o.Controller != nil && *o.Controller && known(string(o.UID)) {
			return string(o.UID)
		}
	}
	return ""
}

// ownerIndex is where the pods of the Workloads holding quota are: their
// owners' UIDs to the pods' namespace/name, read once from the first
// snapshot a model is asked about (the queue and capacity ask about many
// copies of it, which hold the same pods, some bound, some gone).
type ownerIndex struct {
	held    map[types.UID]bool
	byOwner map[string][][2]string
}

var ownerIndexes struct {
	sync.Mutex
	m   *quota.Model
	idx *ownerIndex
}

func ownerIndexOf(snap *schedule.Snapshot, m *quota.Model) *ownerIndex {
	ownerIndexes.Lock()
	defer ownerIndexes.Unlock()
	if ownerIndexes.m == m {
		return ownerIndexes.idx
	}
	idx := &ownerIndex{held: map[types.UID]bool{}, byOwner: map[string][][2]string{}}
	owners := map[string]bool{}
	for _, w := range m.Workloads {
		if !w.HoldsQuota() {
			continue
		}
		idx.held[w.UID] = true
		for _, o := range w.OwnerReferences {
			owners[string(o.UID)] = true
		}
	}
	if len(owners) > 0 {
		for _, p := range snap.Pods {
			if uid := ownerOf(p, func(uid string) bool { return owners[uid] }); uid != "" {
				idx.byOwner[uid] = append(idx.byOwner[uid], [2]string{p.Namespace, p.Name})
			}
		}
	}
	ownerIndexes.m, ownerIndexes.idx = m, idx
	return idx
}

// admittedRecord is one queued workload Kueue admits, for Committed.
type admittedRecord struct {
	sub      *quota.Subject
	decision quota.Decision
	// queued: a Workload of the snapshot decided with every other pending
	// one (quota.Model.Queue), whose admission the model holds already.
	queued bool
}

// Committed is snap with a Workload holding the quota of each queued
// workload of g that Kueue admits (as Kueue writes it: status.admission,
// QuotaReserved), and the Workloads it evicts for them pending again.
func (admitter) Committed(snap *schedule.Snapshot, g *gang.Gang, adm *gang.Admission) *schedule.Snapshot {
	record, _ := adm.Record.([]admittedRecord)
	// The model's queue holds its own admissions, and what they evict.
	record = slices.DeleteFunc(slices.Clone(record), func(r admittedRecord) bool { return r.queued })
	if len(record) == 0 {
		return snap
	}
	out := *snap
	evicted := map[string]bool{}
	for _, r := range record {
		for _, t := range r.decision.Preempts {
			evicted[t.Workload.Namespace+"/"+t.Workload.Name] = true
		}
	}
	now := nowFunc().UTC().Format(time.RFC3339)
	// An evicted Workload is queued again once its job stops: pending,
	// its quota released (workload.UnsetQuotaReservationWithCondition).
	out.Objects = slices.Clone(snap.Objects)
	for i, u := range out.Objects {
		if len(evicted) == 0 {
			break
		}
		if u.GetKind() != quota.KindWorkload || u.GroupVersionKind().Group != quota.Group || !evicted[u.GetNamespace()+"/"+u.GetName()] {
			continue
		}
		c := u.DeepCopy()
		unstructured.RemoveNestedField(c.Object, "status", "admission")
		_ = unstructured.SetNestedSlice(c.Object, []any{map[string]any{"type": quota.ConditionQuotaReserved, "status": "False", "reason": "Pending",
			"message": "evicted", "lastTransitionTime": now}}, "status", "conditions")
		out.Objects[i] = c
	}
	for i, r := range record {
		var sets, psas []any
		for _, ps := range r.decision.PodSets {
			sets = append(sets, map[string]any{"name": ps.Name, "count": int64(ps.Count)})
			flavors, usage := map[string]any{}, map[string]any{}
			for res, f := range ps.Flavors {
				flavors[string(res)] = f
			}
			for res, q := range ps.Usage {
				usage[string(res)] = q.String()
			}
			psas = append(psas, map[string]any{"name": ps.Name, "count": int64(ps.Count), "flavors": flavors, "resourceUsage": usage})
		}
		status := map[string]any{
			"admission":  map[string]any{"clusterQueue": r.decision.ClusterQueue, "podSetAssignments": psas},
			"conditions": []any{map[string]any{"type": quota.ConditionQuotaReserved, "status": "True", "reason": "QuotaReserved", "message": "Quota reserved in ClusterQueue " + r.decision.ClusterQueue, "lastTransitionTime": now}},
		}
		if r.queued {
			// The model's queue holds it already, and what it evicts.
			continue
		}
		w := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": quota.Group + "/v1beta2", "kind": quota.KindWorkload,
			"metadata": map[string]any{"name": fmt.Sprintf("%s-%d-admitted", g.Name, i), "namespace": r.sub.Namespace,
				"uid": fmt.Sprintf("kubectl-gang-%s-%s-%d", r.sub.Namespace, g.Name, i), "creationTimestamp": now},
			"spec":   map[string]any{"queueName": r.sub.Queue, "priority": int64(r.sub.Priority), "podSets": sets},
			"status": status,
		}}
		out.Objects = append(out.Objects, w)
	}
	return &out
}
