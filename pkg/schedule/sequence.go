package schedule

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Sequence schedules pods one after another on a Scheduler, each reserved
// before the next, as gang placement does. Runs of equivalent pods whose
// fit depends on nothing but the node they go to (no pod affinity or
// anti-affinity, no topology spread constraints, no volumes) are scheduled
// incrementally: reserving one on node X changes nothing for the next but
// node X, so only X is filtered and scored again, and the other nodes'
// verdicts and raw scores are reused. Normalization and the choice of the
// top node are redone every time over the whole feasible set, so the
// decisions equal full cycles (a test proves it). Anything else runs a full
// cycle.
type Sequence struct {
	s     *Scheduler
	class *classCache
	// hits counts incremental cycles, for tests and benchmarks.
	hits int
}

// classCache is what a full cycle found for one class of equivalent pods,
// kept up to date node by node.
type classCache struct {
	key      string
	state    *framework.CycleState
	statuses []*framework.Status // per node; nil = feasible
	plugins  []framework.ScorePlugin
	weights  []int64
	raw      [][]int64 // per score plugin, per node (valid where feasible)
	// contrib is each plugin's weighted, normalized score per node, and
	// total their sum: what the full cycle would compute.
	contrib [][]int64
	total   []int64
	names   []string
	dirty   map[int]bool
	// normalized says contrib of a normalizing plugin matches the current
	// raw scores and feasible set.
	normalized []bool
	// stale says every total needs recomputing.
	stale bool
	// podInfo is the first reserved member's, reused for the others.
	podInfo *framework.PodInfo
	list    framework.NodeScoreList
}

// NewSequence starts a sequence on the scheduler's working copy.
func (s *Scheduler) NewSequence() *Sequence { return &Sequence{s: s} }

// Schedule runs the cycle for pod; see Sequence.
func (q *Sequence) Schedule(ctx context.Context, pod *corev1.Pod) (*Result, error) {
	key, ok := nodeLocalKey(pod)
	if ok && q.class != nil && q.class.key == key {
		res, err := q.incremental(ctx, pod)
		if err != nil || res != nil {
			q.hits++
			return res, err
		}
	}
	res, err := q.s.Schedule(ctx, pod)
	if err != nil {
		return res, err
	}
	q.class = nil
	if ok && res.Verdict == Scheduled {
		q.class, err = q.newClass(ctx, key, pod)
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Reserve reserves pod on nodeName and marks the node for re-evaluation.
func (q *Sequence) Reserve(ctx context.Context, pod *corev1.Pod, nodeName string) error {
	var like *framework.PodInfo
	if q.class != nil && q.class.podInfo != nil {
		if key, ok := nodeLocalKey(pod); ok && key == q.class.key {
			like = q.class.podInfo
		}
	}
	if err := q.s.reserve(pod, nodeName, like); err != nil {
		return err
	}
	if q.class != nil {
		i := q.s.byName[nodeName]
		ni := q.s.nodes[i]
		added := ni.Pods[len(ni.Pods)-1]
		if q.class.podInfo == nil {
			q.class.podInfo = added
		}
		if st := q.s.fw.runPreFilterExtensionAddPod(ctx, q.class.state, pod, added, ni); !st.IsSuccess() {
			q.class = nil // fall back to full cycles
			return nil
		}
		q.class.dirty[i] = true
	}
	return nil
}

// nodeLocalKey returns a key that equal pods share, and whether the pod's
// fit is node-local: nothing about it depends on where other pods are.
func nodeLocalKey(pod *corev1.Pod) (string, bool) {
	spec := pod.Spec
	if a := spec.Affinity; a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil) {
		return "", false
	}
	if len(spec.TopologySpreadConstraints) > 0 || len(spec.Volumes) > 0 || len(spec.ResourceClaims) > 0 {
		return "", false
	}
	spec.NodeName = ""
	spec.SchedulingGates = nil
	data, err := json.Marshal(struct {
		Namespace string
		Labels    map[string]string
		Spec      corev1.PodSpec
	}{pod.Namespace, pod.Labels, spec})
	if err != nil {
		return "", false
	}
	return string(data), true
}

// newClass runs PreFilter, Filter and raw Score for the class once more and
// keeps everything the incremental cycles reuse.
func (q *Sequence) newClass(ctx context.Context, key string, pod *corev1.Pod) (*classCache, error) {
	s := q.s
	state := framework.NewCycleState()
	scratch := &Result{}
	preResult, preStatus, _ := s.runPreFilter(ctx, state, pod, scratch)
	if !preStatus.IsSuccess() || !preResult.AllNodes() {
		return nil, nil
	}
	c := &classCache{key: key, state: state, statuses: make([]*framework.Status, len(s.nodes)), dirty: map[int]bool{}}
	var feasible []*framework.NodeInfo
	outside := framework.NewStatus(framework.UnschedulableAndUnresolvable, NotInDomainReason)
	for i, ni := range s.nodes {
		if s.allowed != nil && !s.allowed[i] {
			c.statuses[i] = outside
			continue
		}
		st, _ := s.fw.runFilterPlugins(ctx, state, pod, ni, false)
		if st.Code() == framework.Error {
			return nil, st.AsError()
		}
		c.statuses[i] = st
		if st == nil {
			feasible = append(feasible, ni)
		}
	}
	skip := map[string]bool{}
	for _, pl := range s.fw.preScore {
		st := pl.PreScore(ctx, state, pod, feasible)
		if st.IsSkip() {
			skip[pl.Name()] = true
			continue
		}
		if !st.IsSuccess() {
			return nil, fmt.Errorf("running PreScore plugin %q: %w", pl.Name(), st.AsError())
		}
	}
	for _, pl := range s.fw.score {
		if !skip[pl.Name()] {
			c.plugins = append(c.plugins, pl)
		}
	}
	n := len(s.nodes)
	c.raw, c.contrib = make([][]int64, len(c.plugins)), make([][]int64, len(c.plugins))
	c.weights, c.normalized = make([]int64, len(c.plugins)), make([]bool, len(c.plugins))
	for j, pl := range c.plugins {
		c.raw[j], c.contrib[j] = make([]int64, n), make([]int64, n)
		c.weights[j] = s.fw.weights[pl.Name()]
	}
	c.total, c.names = make([]int64, n), make([]string, n)
	for i, ni := range s.nodes {
		c.names[i] = ni.Name()
		if c.statuses[i] != nil {
			continue
		}
		if _, err := c.scoreNode(ctx, pod, i, ni); err != nil {
			return nil, err
		}
		for j, pl := range c.plugins {
			if pl.ScoreExtensions() == nil {
				c.contrib[j][i] = c.raw[j][i] * c.weights[j]
			}
		}
	}
	c.stale = true
	return c, nil
}

// scoreNode computes a node's raw scores and reports which plugins' changed.
func (c *classCache) scoreNode(ctx context.Context, pod *corev1.Pod, i int, ni *framework.NodeInfo) (changed []bool, err error) {
	changed = make([]bool, len(c.plugins))
	for j, pl := range c.plugins {
		v, st := pl.Score(ctx, c.state, pod, ni)
		if !st.IsSuccess() {
			return nil, fmt.Errorf("running Score plugin %q: %w", pl.Name(), st.AsError())
		}
		changed[j] = c.raw[j][i] != v
		c.raw[j][i] = v
	}
	return changed, nil
}

// incremental re-evaluates the dirty nodes and picks the top node again. It
// returns nil (and no error) when no node is feasible any more: the caller
// then runs a full cycle, which builds the exact FailedScheduling message
// and the preemption what-if. A normalizing plugin is normalized again only
// when the feasible set or one of its raw scores changed; totals are
// recomputed only where something changed.
func (q *Sequence) incremental(ctx context.Context, pod *corev1.Pod) (*Result, error) {
	s, c := q.s, q.class
	feasibleChanged := false
	for i := range c.dirty {
		ni := s.nodes[i]
		st, _ := s.fw.runFilterPlugins(ctx, c.state, pod, ni, false)
		if st.Code() == framework.Error {
			return nil, st.AsError()
		}
		if (st == nil) != (c.statuses[i] == nil) {
			feasibleChanged = true
		}
		c.statuses[i] = st
		if st != nil {
			continue
		}
		changed, err := c.scoreNode(ctx, pod, i, ni)
		if err != nil {
			return nil, err
		}
		for j, pl := range c.plugins {
			if pl.ScoreExtensions() == nil {
				c.contrib[j][i] = c.raw[j][i] * c.weights[j]
			} else if changed[j] {
				c.normalized[j] = false
			}
		}
	}
	for j, pl := range c.plugins {
		ext := pl.ScoreExtensions()
		if ext == nil || (c.normalized[j] && !feasibleChanged) {
			continue
		}
		list := c.list[:0]
		for i, st := range c.statuses {
			if st == nil {
				list = append(list, framework.NodeScore{Name: c.names[i], Score: c.raw[j][i]})
			}
		}
		c.list = list
		if len(list) == 0 {
			break
		}
		if st := ext.NormalizeScore(ctx, c.state, pod, list); !st.IsSuccess() {
			return nil, fmt.Errorf("running NormalizeScore of %q: %w", pl.Name(), st.AsError())
		}
		k := 0
		for i, st := range c.statuses {
			if st == nil {
				if v := list[k].Score * c.weights[j]; v != c.contrib[j][i] {
					c.total[i] += v - c.contrib[j][i]
					c.contrib[j][i] = v
				}
				k++
			}
		}
		c.normalized[j] = true
	}
	if c.stale {
		for i := range c.total {
			c.total[i] = c.sum(i)
		}
		c.stale = false
	} else {
		for i := range c.dirty {
			c.total[i] = c.sum(i)
		}
	}
	clear(c.dirty)

	best := -1
	for i, st := range c.statuses {
		// Nodes are in name order, so the first of equal scores wins.
		if st == nil && (best < 0 || c.total[i] > c.total[best]) {
			best = i
		}
	}
	if best < 0 {
		return nil, nil
	}
	return &Result{Pod: pod, Verdict: Scheduled, SelectedNode: c.names[best], SelectedScore: c.total[best], NumAllNodes: s.numNodes}, nil
}

func (c *classCache) sum(i int) int64 {
	var t int64
	for j := range c.plugins {
		t += c.contrib[j][i]
	}
	return t
}
