package volcano

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// RootQueue is the root of the capacity plugin's hierarchy.
const RootQueue = "root"

// openHierarchy is the capacity plugin's buildHierarchicalQueueAttrs and
// checkHierarchicalQueue (capacity.go): every queue has figures; a queue
// names its parent in spec.parent (root when unset); a job's allocated,
// request, inqueue and elastic count in its queue and every ancestor; the
// root's capability is unlimited unless set; a child's unset cpu, memory or
// scalar capability is its parent's; each child's real capability is its
// parent's less the guarantees of the parent's children, plus its own
// guarantee, capped at its capability. A hierarchy that cannot be built
// (no root queue, a parent that does not exist, a cycle, a job in a queue
// with children) leaves the plugin not ready: it enqueues and allocates
// nothing (Broken).
func (s *Session) openHierarchy() {
	if _, ok := s.Queues[RootQueue]; !ok {
		s.Broken = fmt.Sprintf("the capacity plugin's hierarchy has no %q queue", RootQueue)
		return
	}
	names := slices.Sorted(maps.Keys(s.Queues))
	for _, name := range names {
		q := s.Queues[name]
		attr := &QueueAttr{Name: name, Weight: q.Weight, Deserved: NewResource(q.Deserved), Allocated: &Resource{}, Request: &Resource{},
			Elastic: &Resource{}, Inqueue: &Resource{}, Guarantee: NewResource(q.Guarantee), Capability: NewResource(q.Capability),
			RealCapability: &Resource{}}
		s.attrs[name] = attr
	}
	children := map[string][]string{}
	for _, name := range names {
		if name == RootQueue {
			continue
		}
		chain, err := s.ancestors(name)
		if err != nil {
			s.Broken = err.Error()
			return
		}
		s.attrs[name].Ancestors = chain
		parent := chain[len(chain)-1]
		children[parent] = append(children[parent], name)
	}
	for _, name := range names {
		s.attrs[name].leaf = len(children[name]) == 0
	}
	for _, job := range s.Jobs {
		attr := s.attrs[job.Queue]
		if attr == nil {
			continue
		}
		if !attr.leaf {
			s.Broken = fmt.Sprintf("queue %s of job %s is not a leaf queue", job.Queue, job.Key())
			return
		}
		delta := &QueueAttr{Allocated: &Resource{}, Request: &Resource{}, Inqueue: &Resource{}, Elastic: &Resource{}}
		holds := s.account(delta, job)
		for _, q := range append(slices.Clone(attr.Ancestors), job.Queue) {
			a := s.attrs[q]
			a.Allocated.Add(delta.Allocated)
			a.Request.Add(delta.Request)
			a.Inqueue.Add(delta.Inqueue)
			a.Elastic.Add(delta.Elastic)
		}
		if holds {
			attr.Holders = append(attr.Holders, job.Key())
		}
	}
	root := s.attrs[RootQueue]
	if root.Capability.IsEmpty() {
		root.Capability = &Resource{MilliCPU: math.MaxFloat64, Memory: math.MaxFloat64}
		for name := range s.Total.Scalars {
			root.Capability.addScalar(name, math.MaxInt64)
		}
	}
	root.RealCapability = root.Capability.Clone()
	s.checkHierarchy(RootQueue, children)
	for _, a := range s.attrs {
		a.updateShare()
	}
}

// ancestors is a queue's chain of parents, root first.
func (s *Session) ancestors(name string) ([]string, error) {
	var chain []string
	seen := map[string]bool{name: true}
	for q := name; q != RootQueue; {
		parent := s.Queues[q].Parent
		if parent == "" {
			parent = RootQueue
		}
		if _, ok := s.Queues[parent]; !ok {
			return nil, fmt.Errorf("the queue %s has invalid parent queue %s", q, parent)
		}
		if seen[parent] {
			return nil, fmt.Errorf("cycle detected in queue hierarchy for queue %s", name)
		}
		seen[parent] = true
		chain = append([]string{parent}, chain...)
		q = parent
	}
	return chain, nil
}

// checkHierarchy is checkHierarchicalQueue for name's children.
func (s *Session) checkHierarchy(name string, children map[string][]string) {
	attr := s.attrs[name]
	totalGuarantee, totalDeserved := &Resource{}, &Resource{}
	for _, c := range children[name] {
		child := s.attrs[c]
		child.Deserved = maxOf(child.Deserved, child.Guarantee)
		totalDeserved.Add(child.Deserved)
		totalGuarantee.Add(child.Guarantee)
		if child.Capability.MilliCPU <= 0 {
			child.Capability.MilliCPU = attr.Capability.MilliCPU
		}
		if child.Capability.Memory <= 0 {
			child.Capability.Memory = attr.Capability.Memory
		}
		for k, v := range attr.Capability.Scalars {
			if _, ok := child.Capability.Scalars[k]; !ok {
				child.Capability.addScalar(k, v)
			}
		}
	}
	if name == RootQueue {
		attr.Guarantee, attr.Deserved = totalGuarantee, totalDeserved
	}
	for _, c := range children[name] {
		child := s.attrs[c]
		child.RealCapability = exceededPart(attr.RealCapability, totalGuarantee).Add(child.Guarantee).MinDimension(child.Capability, Infinity)
	}
	for _, c := range children[name] {
		s.checkHierarchy(c, children)
	}
}

// chain is the queues a hierarchical check goes through for a job of
// queue, leaf first (checkQueueAllocatableHierarchically).
func (s *Session) chain(queue string) []string {
	attr := s.attrs[queue]
	out := []string{queue}
	for i := len(attr.Ancestors) - 1; i >= 0; i-- {
		out = append(out, attr.Ancestors[i])
	}
	return out
}
