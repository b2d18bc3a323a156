package gang

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
)

// A queueing layer admits workloads before any scheduler sees their pods:
// it keeps a workload that names one of its queues suspended (its pods
// gated) until a queue has quota for it, and may change its pods when it
// admits it (a node selector, tolerations). It decides first, whatever the
// gang system; PlaceOn asks every registered one
// (docs/design.md#queueing-layers).

// An Admitter is a queueing layer, registered by its wing with
// RegisterAdmitter.
type Admitter interface {
	// Queued says which of the layer's queues obj (a workload as given or
	// read) names and whether it waits for the layer's admission: a
	// workload not stored yet, or stored and held (suspended). "" when it
	// names none.
	Queued(obj *unstructured.Unstructured) (queue string, waits bool)
	// Admit decides the admission of g's queued workloads (Gang.Queued)
	// on snap; nil when the layer has nothing to say of g.
	Admit(snap *schedule.Snapshot, g *Gang) *Admission
}

// A GateHolder is a queueing layer that holds the pods of a workload it
// has not admitted (they exist) by scheduling gates of its own, and
// removes them when it admits the workload (its Admission.Admit does): for
// a gang queued for it, those gates are the layer's decision.
type GateHolder interface {
	HoldingGates() []string
}

// holdingGate reports whether gate is a registered layer's (GateHolder).
func holdingGate(gate string) bool {
	for _, a := range admitters {
		if h, ok := a.(GateHolder); ok && slices.Contains(h.HoldingGates(), gate) {
			return true
		}
	}
	return false
}

// A PodHolder is a queueing layer that holds single pods as workloads of
// their own (gated until it admits each): HeldPod is the pod as a gang of
// one queued for the layer (Gang.Subject pod/NAME), nil when it holds no
// workload of it.
type PodHolder interface {
	HeldPod(snap *schedule.Snapshot, pod *corev1.Pod) *Gang
}

// A Waiter is a queueing layer that holds workloads whose pods do not
// exist yet (a suspended job makes none): the queue lists them, each as
// the gang of the pods the layer would let be made, queued for it
// (Gang.Queued), Gang.Subject naming it.
type Waiter interface {
	Waiting(snap *schedule.Snapshot) []*Gang
	// WaitingKind is the API group of the layer's workload objects and
	// the names (singular, plural, short) a verb takes them by.
	WaitingKind() (group string, names []string)
	// Holds reports whether obj is one of the layer's workload objects;
	// NotWaiting says why one is not among Waiting's.
	Holds(obj *unstructured.Unstructured) bool
	NotWaiting(snap *schedule.Snapshot, obj *unstructured.Unstructured) string
}

// WaiterOf is the registered layer whose workload objects resource (a
// verb's TYPE, lower-case, its group if given) names; nil for none.
func WaiterOf(resource, group string) Waiter {
	for _, a := range admitters {
		if w, ok := a.(Waiter); ok {
			g, names := w.WaitingKind()
			if (group == "" || group == g) && slices.Contains(names, resource) {
				return w
			}
		}
	}
	return nil
}

// Waiting are the workloads every registered layer holds that have no
// pods yet (Waiter).
func Waiting(snap *schedule.Snapshot) []*Gang {
	var out []*Gang
	for _, a := range admitters {
		if w, ok := a.(Waiter); ok {
			out = append(out, w.Waiting(snap)...)
		}
	}
	return out
}

// A QueuedWorkload is one workload of a gang that waits for a queueing
// layer's admission: what the layer admits as one.
type QueuedWorkload struct {
	// Object is the workload as given (-f) or read (a live workload).
	Object *unstructured.Unstructured
	// Queue is the queue it names.
	Queue string
	// Members are the gang's members made from it, by name.
	Members []string
	// Created is when it was stored; zero for a workload not stored yet
	// (it would be created now).
	Created time.Time
}

// Admission is a queueing layer's decision on a gang's queued workloads.
type Admission struct {
	// Layer names the queueing layer, in output.
	Layer string
	// Admitted: the layer admits every queued workload, at once or after
	// the preemptions listed.
	Admitted bool
	// Queue is the layer's queue that admits them (or refuses them).
	Queue string
	// Flavors are the flavors assigned: pod set -> resource -> flavor.
	Flavors map[string]map[string]string
	// Counts are the pods admitted per pod set (fewer than asked in a
	// partial admission).
	Counts map[string]int32
	// Borrows says what is borrowed from where, for people; empty when
	// nothing is.
	Borrows string
	// Preempts names the workloads (namespace/name) the layer evicts to
	// admit these; Evicted are their pods in the snapshot, which the
	// placement takes off their nodes first.
	Preempts []string
	Evicted  []*corev1.Pod
	// Message is the layer's own words when it does not admit (its
	// condition's message), or what it does when it does.
	Message string
	// Summary says the decision in one line for people, in the layer's
	// terms ("admitted by ClusterQueue research: ...").
	Summary string
	// Gate is the refusal as a gate of the placement (ApplyGate); nil when
	// admitted.
	Gate *GateResult
	// Inadmissible says the refusal holds whatever the quota (a queue that
	// does not exist or is stopped, a webhook's refusal): no other
	// workload's going changes it.
	Inadmissible bool
	// Behind names the layer's workloads (namespace/name) ahead of these
	// that hold them back whatever the quota left (the head of a
	// StrictFIFO queue).
	Behind []string
	// FirstInLine says the layer, refusing them for quota, would admit
	// them were no pending workload ahead of them in its queue: they wait
	// for those (decided with the layer's queue: Waiter's workloads).
	FirstInLine bool
	// NotEvaluated says what of the layer's rules could not be evaluated:
	// an admission with any is not a plain yes.
	NotEvaluated []string
	// Holders says, for a refusal for quota, which admitted workloads hold
	// the quota and since when; "" otherwise.
	Holders string
	// Fixes are changes that may let the layer admit the gang, in its
	// terms, most direct first: explain proves each by placing again.
	Fixes []AdmissionFix
	// Record is the layer's own account of the decision, for its
	// AdmitCommitter; the core does not read it.
	Record any
	// Admit changes a pending member as the layer changes it on admission
	// (nil: unchanged); it returns a copy when it changes it, and nil for
	// a member the layer does not admit (a partial admission's).
	Admit func(pod *corev1.Pod) *corev1.Pod
}

// An AdmissionFix is one change to the layer's objects or to the gang's
// workloads that may let the layer admit the gang.
type AdmissionFix struct {
	// Words say the change in the layer's terms.
	Words string
	// Objects returns the snapshot's Objects with the change made; nil
	// for none.
	Objects func(objs []*unstructured.Unstructured) []*unstructured.Unstructured
	// Gang returns the gang with its workloads changed; nil for none.
	Gang func(g *Gang) *Gang
}

// An AdmitCommitter is a queueing layer whose objects change when it
// admits a gang (the admission then holds quota): capacity, which counts
// copies one after another, commits each copy's admission before the next.
type AdmitCommitter interface {
	// Committed returns snap with the layer's objects as they are once it
	// admitted g as adm says (a copy; snap is not changed).
	Committed(snap *schedule.Snapshot, g *Gang, adm *Admission) *schedule.Snapshot
}

// CommitAdmission is snap and s once the layer that admitted p's gang
// holds its quota: the pods of the workloads it evicts taken off their
// nodes, its objects as it leaves them (AdmitCommitter). Copies; both are
// returned as they are when no layer admitted the gang. capacity commits
// each copy's admission so that the next is judged after it.
func CommitAdmission(snap *schedule.Snapshot, s *schedule.Scheduler, p *Placement) (*schedule.Snapshot, *schedule.Scheduler, error) {
	adm := p.Admission
	if adm == nil || !adm.Admitted {
		return snap, s, nil
	}
	if len(adm.Evicted) > 0 {
		next, err := withoutEvicted(s, adm)
		if err != nil {
			return nil, nil, err
		}
		gone := make(map[[2]string]bool, len(adm.Evicted))
		for _, e := range adm.Evicted {
			gone[[2]string{e.Namespace, e.Name}] = true
		}
		out := *snap
		out.Pods = slices.DeleteFunc(slices.Clone(snap.Pods), func(pod *corev1.Pod) bool { return gone[[2]string{pod.Namespace, pod.Name}] })
		snap, s = &out, next
	}
	for _, a := range admitters {
		if c, ok := a.(AdmitCommitter); ok {
			snap = c.Committed(snap, p.Gang, adm)
		}
	}
	return snap, s, nil
}

// admitters are the registered queueing layers (RegisterAdmitter), filled
// in package init functions only.
var admitters []Admitter

// RegisterAdmitter adds a queueing layer; each wing that is one calls it
// in its init.
func RegisterAdmitter(a Admitter) { admitters = append(admitters, a) }

// Admitters are the registered queueing layers.
func Admitters() []Admitter { return admitters }

// QueuedBy says which registered layer's queue obj names and whether it
// waits for that layer's admission.
func QueuedBy(obj *unstructured.Unstructured) (queue string, waits bool) {
	for _, a := range admitters {
		if q, w := a.Queued(obj); q != "" {
			return q, w
		}
	}
	return "", false
}

// admit asks the queueing layers for g's admission: the first that has
// something to say decides (a workload names one layer's queue).
func admit(snap *schedule.Snapshot, g *Gang) *Admission {
	if len(g.Queued) == 0 {
		return nil
	}
	for _, a := range admitters {
		if adm := a.Admit(snap, g); adm != nil {
			return adm
		}
	}
	return nil
}

// admitted is g as the layer admits it: its pending members changed by
// adm.Admit (a copy of g and of the members it changes), or g itself.
func admitted(g *Gang, adm *Admission) *Gang {
	if adm == nil || !adm.Admitted || adm.Admit == nil {
		return g
	}
	out := *g
	out.Members = make([]*corev1.Pod, 0, len(g.Members))
	changed := false
	dropped := int32(0)
	for _, pod := range g.Members {
		p := pod
		if pod.Spec.NodeName == "" {
			p = adm.Admit(pod)
		}
		switch {
		case p == nil:
			changed = true
			dropped++
		case p != pod:
			out.Members, changed = append(out.Members, p), true
		default:
			out.Members = append(out.Members, p)
		}
	}
	if !changed {
		return g
	}
	// The members the layer leaves out are not created: the gang is what
	// it admits. A member it only changes (its gates removed) still
	// counts, and so do those that do not exist yet (a pod group short of
	// pods): the minimum falls only with members dropped.
	if dropped > 0 {
		out.MinMember = min(g.MinMember, int32(len(g.Members))-dropped)
	}
	return &out
}

// withoutEvicted is base with the pods of the workloads the layer evicts
// taken off their nodes (a fork), or base itself when it evicts none.
func withoutEvicted(base *schedule.Scheduler, adm *Admission) (*schedule.Scheduler, error) {
	if adm == nil || !adm.Admitted || len(adm.Evicted) == 0 {
		return base, nil
	}
	byNode := map[string][]*corev1.Pod{}
	for _, p := range adm.Evicted {
		if p.Spec.NodeName != "" {
			byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
		}
	}
	fork, err := base.Fork()
	if err != nil {
		return nil, err
	}
	for node, pods := range byNode {
		if err := fork.Evict(pods, node); err != nil {
			return nil, err
		}
	}
	return fork, nil
}

// applyAdmission makes the placement honour the layer's decision: a gang
// it does not admit is held back by it, whatever fits (its refusal leads),
// and what it could not evaluate leaves the placement not verified.
func (p *Placement) applyAdmission(adm *Admission) {
	if adm == nil {
		return
	}
	p.Admission = adm
	if adm.Admitted {
		p.NotEvaluated = append(p.NotEvaluated, adm.NotEvaluated...)
		return
	}
	if adm.Gate != nil {
		p.ApplyGate(adm.Gate)
	}
	p.NotEvaluated = append(p.NotEvaluated, adm.NotEvaluated...)
}

// SameQueued reports whether a, a layer's waiting workload (Waiter), is
// b's: b is that workload, or b's queued workload is the job that owns it.
func SameQueued(a, b *Gang) bool {
	if len(a.Queued) != 1 || len(b.Queued) != 1 || a.Namespace != b.Namespace {
		return false
	}
	wa, wb := a.Queued[0].Object, b.Queued[0].Object
	if wb.GetUID() == "" {
		return false
	}
	if wa.GetUID() == wb.GetUID() {
		return true
	}
	for _, o := range wa.GetOwnerReferences() {
		if o.UID == wb.GetUID() && o.Controller != nil && *o.Controller {
			return true
		}
	}
	return false
}
