package quota

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// Model is Kueue's state as a snapshot holds it: the flavors, the quota
// tree of ClusterQueues and Cohorts with what the Workloads holding quota
// use, the LocalQueues, and the Workloads waiting in each ClusterQueue.
type Model struct {
	Flavors         map[string]*ResourceFlavor
	ClusterQueues   map[string]*ClusterQueueState
	cohorts         map[string]*node
	LocalQueues     map[string]*LocalQueue // namespace/name
	PriorityClasses map[string]int32       // WorkloadPriorityClasses' values
	AdmissionChecks map[string]bool        // name -> active
	// Workloads are all Workloads, by namespace/name; byOwner by the UID
	// of the job that owns each.
	Workloads map[string]*Workload
	byOwner   map[string]*Workload
	// objects are the Workloads' objects.
	objects map[*Workload]*unstructured.Unstructured
	// Namespaces are the snapshot's namespaces' labels (a ClusterQueue's
	// namespaceSelector), nil when the snapshot has none.
	Namespaces map[string]map[string]string
	// Problems are objects that could not be read, each in one line.
	Problems []string
	// fairSharing are the cohort trees' roots where a ClusterQueue or Cohort
	// sets spec.fairSharing: Kueue may run fair sharing there.
	fairSharing map[*node]bool
	// usage is what each Workload holding quota uses (Workload.Usage).
	usage map[*Workload]map[FlavorResource]int64
	// ordered are the Workloads in the snapshot's order (sorted by
	// namespace and name, as a snapshot keeps its objects).
	ordered []*Workload
	// read is what Load read of each object, for LoadAfter.
	read map[*unstructured.Unstructured]readObject
	// now is when the model was read (a Workload's backoff).
	now time.Time
	// queue is Queue's decisions, made once.
	queueOnce sync.Once
	queue     map[*Workload]Decision
}

// usageOf is what w, holding quota, uses (false when m, which may be nil,
// has not counted it).
func (m *Model) usageOf(w *Workload) (map[FlavorResource]int64, bool) {
	if m == nil {
		return nil, false
	}
	u, ok := m.usage[w]
	return u, ok
}

// readObject is one object as Load read it: a *ResourceFlavor,
// *ClusterQueue, *Cohort, *LocalQueue, *WorkloadPriorityClass, *Workload or
// admissionCheck, or why it could not be read; nil obj for a kind Load does
// not read.
type readObject struct {
	obj any
	err error
}

// readOf is what m read of u, if it read it (m may be nil).
func (m *Model) readOf(u *unstructured.Unstructured) (readObject, bool) {
	if m == nil {
		return readObject{}, false
	}
	r, ok := m.read[u]
	return r, ok
}

// admissionCheck is an AdmissionCheck's name and whether it is active.
type admissionCheck struct {
	name   string
	active bool
}

// readOne reads one of Kueue's objects.
func readOne(u *unstructured.Unstructured) readObject {
	if v := u.GroupVersionKind().Version; v != Version {
		// v1beta1 names fields otherwise (cohort, admissionChecks,
		// priorityClassName): read at it, a queue would lose them.
		return readObject{err: fmt.Errorf("%s %s is at %s/%s; this build reads %s/%s (kubectl gang snapshot saves what the server prefers)", u.GetKind(), nameOf(u), Group, v, Group, Version)}
	}
	var obj any
	var err error
	switch u.GetKind() {
	case KindResourceFlavor:
		obj, err = decodeAs[ResourceFlavor](u)
	case KindClusterQueue:
		obj, err = decodeAs[ClusterQueue](u)
	case KindCohort:
		obj, err = decodeAs[Cohort](u)
	case KindLocalQueue:
		obj, err = decodeAs[LocalQueue](u)
	case KindWorkloadPriorityClass:
		obj, err = decodeAs[WorkloadPriorityClass](u)
	case KindAdmissionCheck:
		obj = admissionCheck{name: u.GetName(), active: admissionCheckActive(u)}
	case KindWorkload:
		obj, err = decodeWorkload(u)
	}
	if err != nil {
		return readObject{err: err}
	}
	return readObject{obj: obj}
}

// decodeAs reads u into a new T.
func decodeAs[T any](u *unstructured.Unstructured) (*T, error) {
	out := new(T)
	if err := decode(u, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ClusterQueueState is a ClusterQueue in the model.
type ClusterQueueState struct {
	*ClusterQueue
	node *node
	// Inactive is Kueue's message for a ClusterQueue that admits nothing
	// (clusterQueue.inactiveReason), "" when active.
	Inactive string
	// Admitted are the Workloads holding quota in it, Pending the ones
	// waiting in its queue, in Kueue's queue order.
	Admitted, Pending []*Workload
}

// Strategy is the ClusterQueue's queueing strategy (BestEffortFIFO by
// default, as the CRD defaults it).
func (c *ClusterQueueState) Strategy() string {
	return cmp.Or(c.Spec.QueueingStrategy, "BestEffortFIFO")
}

// Path is the ClusterQueue's place in the cohort tree as Kueue's
// preemption messages print it: /root/child/cq.
func (c *ClusterQueueState) Path() string {
	var parts []string
	for n := c.node.parent; n != nil; n = n.parent {
		parts = append(parts, n.name)
	}
	slices.Reverse(parts)
	return "/" + strings.Join(append(parts, c.Name), "/")
}

// Load reads Kueue's objects of a snapshot (its Objects of group Group)
// and the namespaces: objects that cannot be read are Problems, not errors,
// so that one malformed ClusterQueue leaves the rest usable.
func Load(objects []*unstructured.Unstructured, namespaces []*corev1.Namespace) *Model {
	return LoadAfter(objects, namespaces, nil)
}

// LoadAfter is Load reusing what prev, the model of an earlier set of
// objects, read of the objects both hold (the same pointers; a changed
// copy replaces the objects it changes): capacity commits one Workload a
// copy and loads again, and 5,000 Workloads are not read again each time.
// Nothing read is changed by a model, so models may share it.
func LoadAfter(objects []*unstructured.Unstructured, namespaces []*corev1.Namespace, prev *Model) *Model {
	m := &Model{now: time.Now(), Flavors: map[string]*ResourceFlavor{}, ClusterQueues: map[string]*ClusterQueueState{},
		cohorts: map[string]*node{}, LocalQueues: map[string]*LocalQueue{}, PriorityClasses: map[string]int32{},
		AdmissionChecks: map[string]bool{}, read: make(map[*unstructured.Unstructured]readObject, len(objects))}
	// Sized after the last model: a what-if or the next copy holds as many.
	n := 0
	if prev != nil {
		n = len(prev.Workloads) + 1
	}
	m.Workloads, m.byOwner, m.usage = make(map[string]*Workload, n), make(map[string]*Workload, n), make(map[*Workload]map[FlavorResource]int64, n)
	m.objects = make(map[*Workload]*unstructured.Unstructured, n)
	if namespaces != nil {
		m.Namespaces = make(map[string]map[string]string, len(namespaces))
		for _, ns := range namespaces {
			m.Namespaces[ns.Name] = ns.Labels
		}
	}
	var cohortObjs []*Cohort
	for _, u := range objects {
		// What prev read is Kueue's: no need to parse its apiVersion again.
		r, ok := prev.readOf(u)
		if !ok {
			if u.GroupVersionKind().Group != Group {
				continue
			}
			r = readOne(u)
		}
		m.read[u] = r
		if r.err != nil {
			m.Problems = append(m.Problems, r.err.Error())
			continue
		}
		switch o := r.obj.(type) {
		case *ResourceFlavor:
			m.Flavors[o.Name] = o
		case *ClusterQueue:
			m.ClusterQueues[o.Name] = &ClusterQueueState{ClusterQueue: o, node: newNode(o.Name, false)}
		case *Cohort:
			cohortObjs = append(cohortObjs, o)
		case *LocalQueue:
			m.LocalQueues[o.Namespace+"/"+o.Name] = o
		case *WorkloadPriorityClass:
			m.PriorityClasses[o.Name] = o.Value
		case admissionCheck:
			m.AdmissionChecks[o.name] = o.active
		case *Workload:
			m.Workloads[o.Namespace+"/"+o.Name] = o
			m.ordered = append(m.ordered, o)
			m.objects[o] = u
			for _, ref := range o.OwnerReferences {
				// A job controls its Workload; the pods of a plain pod
				// group each own theirs (no controller among them).
				if ref.Controller != nil && *ref.Controller || ref.Kind == "Pod" && ref.APIVersion == "v1" {
					m.byOwner[string(ref.UID)] = o
				}
			}
			if u, ok := prev.usageOf(o); ok {
				m.usage[o] = u
			}
		}
	}
	m.buildTree(cohortObjs)
	m.account()
	return m
}

// admissionCheckActive reads an AdmissionCheck's Active condition (its
// controller sets it; a check without one is not active yet).
func admissionCheckActive(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Active" {
			return m["status"] == string(metav1.ConditionTrue)
		}
	}
	return false
}

// cohortNode is the node of cohort name, made on first use: a cohort
// named only by its members' cohortName exists with no quota of its own.
func (m *Model) cohortNode(name string) *node {
	n := m.cohorts[name]
	if n == nil {
		n = newNode(name, true)
		m.cohorts[name] = n
	}
	return n
}

// buildTree links ClusterQueues and Cohorts into the cohort forest and
// computes each tree's subtree quotas (updateCohortTreeResources). A
// ClusterQueue in a tree with a cycle is inactive, as Kueue leaves it.
func (m *Model) buildTree(cohortObjs []*Cohort) {
	slices.SortFunc(cohortObjs, func(a, b *Cohort) int { return cmp.Compare(a.Name, b.Name) })
	m.fairSharing = map[*node]bool{}
	var fair []*node
	for _, c := range cohortObjs {
		n := m.cohortNode(c.Name)
		if c.Spec.FairSharing != nil {
			fair = append(fair, n)
		}
		n.setQuotas(c.Spec.ResourceGroups)
		if c.Spec.ParentName != "" {
			p := m.cohortNode(c.Spec.ParentName)
			n.parent = p
			p.children = append(p.children, n)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.ClusterQueues)) {
		cq := m.ClusterQueues[name]
		cq.node.setQuotas(cq.Spec.ResourceGroups)
		if cq.Spec.CohortName != "" {
			p := m.cohortNode(cq.Spec.CohortName)
			cq.node.parent = p
			p.children = append(p.children, cq.node)
		}
	}
	for _, cq := range m.ClusterQueues {
		if cq.Spec.FairSharing != nil {
			fair = append(fair, cq.node)
		}
	}
	for _, n := range fair {
		if !hasCycle(n) {
			m.fairSharing[n.root()] = true
		}
	}
	for _, cq := range m.ClusterQueues {
		if hasCycle(cq.node) {
			cq.Inactive = fmt.Sprintf("the cohort tree of ClusterQueue %s has a cycle", cq.Name)
			cq.node.parent = nil
			continue
		}
		cq.Inactive = m.inactiveReason(cq)
	}
	done := map[*node]bool{}
	for _, cq := range m.ClusterQueues {
		if r := cq.node.root(); !done[r] {
			done[r] = true
			r.accumulate()
		}
	}
}

func hasCycle(n *node) bool {
	seen := map[*node]bool{}
	for ; n != nil; n = n.parent {
		if seen[n] {
			return true
		}
		seen[n] = true
	}
	return false
}

// inactiveReason is Kueue's message for a ClusterQueue that admits nothing
// (clusterQueue.inactiveReason), "" for an active one.
func (m *Model) inactiveReason(cq *ClusterQueueState) string {
	var parts []string
	if p := cq.Spec.StopPolicy; p != nil && *p != StopNone {
		parts = append(parts, "is stopped")
	}
	var missing []string
	for _, rg := range cq.Spec.ResourceGroups {
		for _, f := range rg.Flavors {
			if m.Flavors[f.Name] == nil && !slices.Contains(missing, f.Name) {
				missing = append(missing, f.Name)
			}
		}
	}
	if len(missing) > 0 {
		parts = append(parts, "references missing ResourceFlavor(s): "+strings.Join(missing, ","))
	}
	var missingChecks, inactiveChecks []string
	for _, name := range cq.checkNames() {
		active, ok := m.AdmissionChecks[name]
		switch {
		case !ok:
			missingChecks = append(missingChecks, name)
		case !active:
			inactiveChecks = append(inactiveChecks, name)
		}
	}
	if len(missingChecks) > 0 {
		parts = append(parts, "references missing AdmissionCheck(s): "+strings.Join(missingChecks, ","))
	}
	if len(inactiveChecks) > 0 {
		parts = append(parts, "references inactive AdmissionCheck(s): "+strings.Join(inactiveChecks, ","))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("Can't admit new workloads: %v.", strings.Join(parts, ", "))
}

// checkNames are the admission checks the ClusterQueue names.
func (cq *ClusterQueueState) checkNames() []string {
	names := slices.Clone(cq.Spec.AdmissionChecks)
	if s := cq.Spec.AdmissionChecksStrategy; s != nil {
		for _, c := range s.AdmissionChecks {
			names = append(names, c.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// account adds what each Workload holding quota uses to its ClusterQueue
// (cache.addOrUpdateWorkload: QuotaReserved, not finished, active) and
// queues the pending ones in their ClusterQueues, in Kueue's order.
func (m *Model) account() {
	for _, w := range m.ordered {
		switch {
		case w.HoldsQuota():
			cq := m.ClusterQueues[w.Status.Admission.ClusterQueue]
			if cq == nil {
				continue
			}
			cq.Admitted = append(cq.Admitted, w)
			u, ok := m.usage[w]
			if !ok {
				u = w.Usage()
				m.usage[w] = u
			}
			for fr, v := range u {
				cq.node.usage[fr] += v
			}
		case w.Pending() && w.backoff(m.now) == "":
			// One waiting out its backoff is in no queue yet.
			if cq := m.clusterQueueOf(w.Namespace, w.Spec.QueueName); cq != nil {
				cq.Pending = append(cq.Pending, w)
			}
		}
	}
	for _, cq := range m.ClusterQueues {
		slices.SortFunc(cq.Pending, func(a, b *Workload) int { return QueueOrder(a, b) })
	}
	done := map[*node]bool{}
	for _, cq := range m.ClusterQueues {
		if r := cq.node.root(); r.isCohort && !done[r] {
			done[r] = true
			r.accumulate()
		}
	}
}

// clusterQueueOf is the ClusterQueue LocalQueue name in namespace points
// at; nil when either does not exist.
func (m *Model) clusterQueueOf(namespace, name string) *ClusterQueueState {
	lq := m.LocalQueues[namespace+"/"+name]
	if lq == nil {
		return nil
	}
	return m.ClusterQueues[lq.Spec.ClusterQueue]
}

// OwnedBy is the Workload Kueue made for the job of uid, nil for none.
func (m *Model) OwnedBy(uid string) *Workload { return m.byOwner[uid] }

// ObjectOf is the object w was read from.
func (m *Model) ObjectOf(w *Workload) *unstructured.Unstructured { return m.objects[w] }

// HoldsQuota: the Workload counts against its ClusterQueue's quota
// (workload.HasActiveQuotaReservation): QuotaReserved, an admission, not
// finished, active. An evicted Workload still holding its reservation
// counts until its job stops.
func (w *Workload) HoldsQuota() bool {
	return w.HasQuotaReservation() && !w.IsFinished() && (w.Spec.Active == nil || *w.Spec.Active)
}

// Pending: the Workload waits in its queue (workload.IsAdmissible, no
// admission gate read here): not finished, active, no quota reserved.
func (w *Workload) Pending() bool {
	return !w.IsFinished() && (w.Spec.Active == nil || *w.Spec.Active) && !w.HasQuotaReservation()
}

// backoff says why a pending Workload is not in its ClusterQueue's queue
// yet (ClusterQueue.backoffWaitingTimeExpired): its Requeued condition is
// False, or its requeueAt (the backoff after an eviction) is still to
// come at now; "" when it is.
func (w *Workload) backoff(now time.Time) string {
	if c := w.Condition(ConditionRequeued); c != nil && c.Status == metav1.ConditionFalse {
		return fmt.Sprintf("Kueue has not queued it again (its Requeued condition is False: %s)", c.Reason)
	}
	if at := w.Status.RequeueAt; at != nil && now.Before(at.Time) {
		return fmt.Sprintf("Kueue queues it again at %s, after its backoff (status.requeueState.requeueAt)", at.UTC().Format(time.RFC3339))
	}
	return ""
}

// Priority is the Workload's priority (spec.priority, 0 when unset).
func (w *Workload) Priority() int32 {
	if w.Spec.Priority == nil {
		return 0
	}
	return *w.Spec.Priority
}

// QueueTime is when the Workload joined its queue as Kueue orders it
// (Ordering.GetQueueOrderTimestamp with the default Eviction requeuing
// timestamp): the time it was evicted for PodsReady timeout or by an
// admission check, else its creation.
func (w *Workload) QueueTime() time.Time {
	if c := w.Condition(ConditionEvicted); c != nil && c.Status == metav1.ConditionTrue &&
		(c.Reason == "PodsReadyTimeout" || c.Reason == "AdmissionCheck") {
		return c.LastTransitionTime.Time
	}
	return w.CreationTimestamp.Time
}

// QueueOrder is Kueue's order of a ClusterQueue's heap
// (cluster_queue.go baseCompareFunc, no sticky workload): higher priority,
// then earlier queue time, then UID.
func QueueOrder(a, b *Workload) int {
	return cmp.Or(cmp.Compare(b.Priority(), a.Priority()), a.QueueTime().Compare(b.QueueTime()), cmp.Compare(a.UID, b.UID))
}

// Usage is what a Workload holding quota uses, per flavor and resource
// (workload.NewInfo from its admission, totalRequestsFromAdmission): each
// pod set's resourceUsage in the flavor assigned to each resource, scaled
// down by its reclaimable pods.
func (w *Workload) Usage() map[FlavorResource]int64 {
	out := map[FlavorResource]int64{}
	if w.Status.Admission == nil {
		return out
	}
	for _, psa := range w.Status.Admission.PodSetAssignments {
		count := w.podSetCount(psa)
		// What is left of the spec's count once the reclaimable pods are
		// gone, against the admitted count (a partial admission keeps its
		// count when that is the larger).
		after := count
		for _, ps := range w.Spec.PodSets {
			if ps.Name == psa.Name {
				after = ps.Count
			}
		}
		for _, r := range w.Status.ReclaimablePods {
			if r.Name == psa.Name {
				after = max(0, after-r.Count)
			}
		}
		for name, q := range psa.ResourceUsage {
			v := value(name, q)
			if after < count && count > 0 {
				v = v / int64(count) * int64(after)
			}
			out[FlavorResource{psa.Flavors[name], name}] += v
		}
	}
	return out
}

// podSetCount is an assignment's count, else its pod set's.
func (w *Workload) podSetCount(psa PodSetAssignment) int32 {
	if psa.Count != nil {
		return *psa.Count
	}
	for _, ps := range w.Spec.PodSets {
		if ps.Name == psa.Name {
			return ps.Count
		}
	}
	return 0
}

// MatchesNamespace reports whether the ClusterQueue's namespaceSelector
// selects namespace (a nil selector selects none, {} every one); ok is
// false when the namespace's labels are not known.
func (m *Model) MatchesNamespace(cq *ClusterQueueState, namespace string) (matches, ok bool) {
	sel := cq.Spec.NamespaceSelector
	if sel == nil {
		return false, true
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, true
	}
	if s.Empty() {
		return true, true
	}
	nsLabels, known := m.Namespaces[namespace]
	if !known {
		return false, false
	}
	return s.Matches(labels.Set(nsLabels)), true
}
