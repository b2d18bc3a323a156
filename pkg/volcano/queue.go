package volcano

import (
	"fmt"
	"math"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Queue is a Volcano Queue as the scheduler reads it.
type Queue struct {
	Name string
	// Weight is spec.weight (the CRD defaults it to 1).
	Weight     int32
	Capability corev1.ResourceList
	Guarantee  corev1.ResourceList
	// Deserved is spec.deserved, which only the capacity plugin reads.
	Deserved corev1.ResourceList
	// State is status.state; a queue whose status the controller has not
	// written yet ("") is taken as Open, as the controller opens new queues.
	State    string
	Priority int32
	// Parent is spec.parent (hierarchical queues of the capacity plugin).
	Parent string
	// Created and UID are the object's: Volcano's queue order falls back
	// to them (Session.QueueOrderFn).
	Created time.Time
	UID     string
}

// Open reports whether the queue takes jobs.
func (q *Queue) Open() bool { return q.State == "" || q.State == QueueOpen }

// QueueFrom reads a Queue object.
func QueueFrom(u *unstructured.Unstructured) (*Queue, error) {
	q := &Queue{Name: u.GetName(), Weight: 1}
	var err error
	get := func(path ...string) corev1.ResourceList {
		if err != nil {
			return nil
		}
		m, found, e := unstructured.NestedStringMap(u.Object, path...)
		if e != nil || !found {
			if e != nil {
				err = fmt.Errorf("queue %s: %s: %w", u.GetName(), strings.Join(path, "."), e)
			}
			return nil
		}
		rl, e := parseList(m)
		if e != nil {
			err = fmt.Errorf("queue %s: %s: %w", u.GetName(), strings.Join(path, "."), e)
		}
		return rl
	}
	q.Capability = get("spec", "capability")
	q.Guarantee = get("spec", "guarantee", "resource")
	q.Deserved = get("spec", "deserved")
	if err != nil {
		return nil, err
	}
	if w, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "weight"); found {
		if n, ok := asInt(w); ok && n > 0 {
			q.Weight = int32(n)
		}
	}
	if p, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "priority"); found {
		if n, ok := asInt(p); ok {
			q.Priority = int32(n)
		}
	}
	q.State, _, _ = unstructured.NestedString(u.Object, "status", "state")
	q.Parent, _, _ = unstructured.NestedString(u.Object, "spec", "parent")
	q.Created, q.UID = u.GetCreationTimestamp().Time, string(u.GetUID())
	return q, nil
}

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		return int64(n), n == math.Trunc(n)
	}
	return 0, false
}

// QueueAttr is one queue's figures in a session (proportion's or
// capacity's queueAttr).
type QueueAttr struct {
	Name   string
	Weight int32
	// Deserved is the queue's share of the cluster (proportion: divided by
	// weight among queues with demand; capacity: spec.deserved).
	Deserved  *Resource
	Allocated *Resource
	// Request is what the queue's tasks hold or wait for.
	Request *Resource
	// Inqueue is the room enqueued jobs reserve; Elastic what running jobs
	// hold beyond their minResources.
	Inqueue, Elastic *Resource
	// RealCapability is the cluster less other queues' guarantees, raised
	// to the queue's own guarantee, capped at its capability.
	RealCapability *Resource
	Capability     *Resource
	Guarantee      *Resource
	Share          float64
	// Jobs are the queue's jobs, for advice: the keys of those holding
	// (allocated) or reserving (inqueue) its room.
	Holders []string
	// Ancestors are the queue's parents, root first (the capacity
	// plugin's hierarchy; empty otherwise).
	Ancestors []string
	leaf      bool
}

// updateShare is updateQueueAttrShare: the largest allocated/deserved.
func (a *QueueAttr) updateShare() {
	a.Share = 0
	for _, name := range a.Deserved.Names() {
		if s := share(a.Allocated.Get(name), a.Deserved.Get(name)); s > a.Share {
			a.Share = s
		}
	}
}

func share(l, r float64) float64 {
	if r == 0 {
		if l == 0 {
			return 0
		}
		return 1
	}
	return l / r
}
