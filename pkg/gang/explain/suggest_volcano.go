package explain

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/systems/volcano"
)

// SuggestVolcanoQueue: changing the Volcano queue that holds the gang back
// (open it, raise its capability, weight or guarantee) makes it fit.
const SuggestVolcanoQueue SuggestionKind = "VolcanoQueue"

// maxWeightDoublings bounds the weights tried for a queue's share.
const maxWeightDoublings = 6

// volcanoQueue proves a change to the Volcano queue that holds the gang
// back, in the order an operator would reach for it: open a queue that is
// not Open; raise a capability by the shortfall; for a deserved share
// (proportion divides the cluster by weight among the queues with demand)
// the smallest doubling of the weight, else a guarantee of what the gang's
// minimum needs. Each is placed again on a copy of the snapshot with the
// changed Queue (docs/design.md#volcano); only one that places the gang
// is offered.
func (x *explainer) volcanoQueue(ctx context.Context, g *gang.Gang, p *gang.Placement) (*Suggestion, error) {
	r := p.Gate
	if g.Source != volcano.Source || r == nil || (r.Gate != volcano.GateAllocate && r.Gate != volcano.GateEnqueue) {
		return nil, nil
	}
	name := g.Queue
	if q := r.Figures["limitQueue"]; q != "" {
		name = q
	}
	queue := x.queue(name)
	if queue == nil {
		return nil, nil
	}
	try := func(change func(q *unstructured.Unstructured), words string) (*Suggestion, error) {
		q := queue.DeepCopy()
		change(q)
		snap := *x.snap
		snap.Objects = slices.Clone(x.snap.Objects)
		for i, u := range snap.Objects {
			if gvk := u.GroupVersionKind(); gvk.Group == volcano.Group && gvk.Kind == "Queue" && u.GetName() == name {
				snap.Objects[i] = q
			}
		}
		// Queues play no part in the nodes: the explainer's scheduler serves.
		then, err := x.placeOn(ctx, x.plain, &snap, g)
		if err != nil || then.Verdict != gang.VerdictPlaced {
			return nil, err
		}
		return &Suggestion{Kind: SuggestVolcanoQueue, Verified: true, Message: fmt.Sprintf("%s; %s", words, fitsThen(g, then))}, nil
	}
	switch {
	case r.Reason == volcano.ReasonQueueNotOpen:
		return try(func(q *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(q.Object, "Open", "status", "state")
		},
			fmt.Sprintf("opening queue %s (vcctl queue operate -n %s -a open) lets Volcano allocate the gang", name, name))
	case r.Reason != volcano.ReasonQueueInsufficient && r.Reason != volcano.ReasonQueueOverused:
		return nil, nil
	}
	// The enqueue step and the capacity plugin compare with the queue's
	// capability; proportion's allocation with its deserved share.
	if r.Gate == volcano.GateEnqueue || r.Figures["queueDeserved"] == "" {
		if len(r.Shortfall) == 0 {
			return nil, nil
		}
		capability := raised(queueResources(queue, "spec", "capability"), r.Shortfall)
		return try(func(q *unstructured.Unstructured) { setResources(q, capability, "spec", "capability") },
			fmt.Sprintf("raising queue %s's capability to %s (by %s)", name, gang.FormatResources(capability), gang.FormatResources(r.Shortfall)))
	}
	// A deserved share: proportion caps it at the queue's capability, so
	// first the capability where it is short of what the gang needs, then
	// the weight (the share among the queues with demand), then a
	// guarantee of what it needs.
	if len(r.Needs) == 0 {
		return nil, nil
	}
	capability := queueResources(queue, "spec", "capability")
	capWords := ""
	if len(capability) > 0 {
		short := false
		for name, need := range r.Needs {
			if c, ok := capability[name]; ok && c.Cmp(need) < 0 {
				capability[name] = need
				short = true
			}
		}
		if short {
			capWords = fmt.Sprintf("raising queue %s's capability to %s", name, gang.FormatResources(capability))
			if s, err := try(func(q *unstructured.Unstructured) { setResources(q, capability, "spec", "capability") }, capWords); s != nil || err != nil {
				return s, err
			}
			capWords += " and "
		}
	}
	withCapability := func(q *unstructured.Unstructured) {
		if capWords != "" {
			setResources(q, capability, "spec", "capability")
		}
	}
	weight, _, _ := unstructured.NestedInt64(queue.Object, "spec", "weight")
	weight = max(weight, 1)
	for w, i := weight*2, 0; i < maxWeightDoublings; w, i = w*2, i+1 {
		s, err := try(func(q *unstructured.Unstructured) {
			withCapability(q)
			_ = unstructured.SetNestedField(q.Object, w, "spec", "weight")
		}, fmt.Sprintf("%sraising queue %s's weight from %d to %d gives it a deserved share that holds the gang's minimum", capWords, name, weight, w))
		if s != nil || err != nil {
			return s, err
		}
	}
	guarantee := queueResources(queue, "spec", "guarantee", "resource")
	for k, v := range r.Needs {
		guarantee[k] = v
	}
	return try(func(q *unstructured.Unstructured) {
		withCapability(q)
		setResources(q, guarantee, "spec", "guarantee", "resource")
	}, fmt.Sprintf("%sa guarantee of %s on queue %s raises its deserved share to what the gang's minimum needs", capWords, gang.FormatResources(guarantee), name))
}

// queue finds a Volcano Queue of the snapshot by name.
func (x *explainer) queue(name string) *unstructured.Unstructured {
	for _, u := range x.snap.ObjectsOf(volcano.Group, "Queue") {
		if u.GetName() == name {
			return u
		}
	}
	return nil
}

func queueResources(q *unstructured.Unstructured, path ...string) corev1.ResourceList {
	m, _, _ := unstructured.NestedStringMap(q.Object, path...)
	out := corev1.ResourceList{}
	for k, v := range m {
		if qty, err := resource.ParseQuantity(v); err == nil {
			out[corev1.ResourceName(k)] = qty
		}
	}
	return out
}

// raised is base plus by in by's resources (base's others kept).
func raised(base, by corev1.ResourceList) corev1.ResourceList {
	out := base.DeepCopy()
	for name, q := range by {
		sum := out[name]
		sum.Add(q)
		out[name] = sum
	}
	return out
}

func setResources(q *unstructured.Unstructured, rl corev1.ResourceList, path ...string) {
	m := map[string]any{}
	for k, v := range rl {
		m[string(k)] = v.String()
	}
	_ = unstructured.SetNestedField(q.Object, m, path...)
}
