package schedule

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// incremental brings the class up to date with the pods reserved since the
// last cycle and picks the top node again. It returns nil (and no error)
// when no node is feasible any more, or the class no longer holds: the
// caller then runs a full cycle, which builds the exact FailedScheduling
// message and the preemption what-if. A normalizing plugin is normalized
// again only when the feasible set or one of its raw scores changed; totals
// are recomputed only where something changed.
func (q *Sequence) incremental(ctx context.Context, pod *corev1.Pod) (*Result, error) {
	s, c := q.s, q.class
	c.touched.clear()

	// Domain verdicts: every domain when the global part changed, else the
	// domains sharing a value with a node that got a pod.
	for _, d := range c.domains {
		if !slices.Equal(d.keys, d.pl.FilterDomainKeys(c.state)) {
			return nil, nil
		}
		global := d.pl.FilterGlobal(c.state, nil)
		all := !slices.Equal(global, d.global)
		d.global = global
		d.seen.clear()
		var err error
		visit := func(g int32) {
			if err != nil || !d.seen.add(int(g)) {
				return
			}
			was := d.ok[g]
			if err = d.evaluate(ctx, c.state, pod, s.nodes, int(g)); err == nil && was != d.ok[g] {
				for _, i := range d.members[g] {
					c.touched.add(i)
				}
			}
		}
		if all {
			for g := range d.members {
				visit(int32(g))
			}
		} else {
			for _, i := range c.dirty {
				labels := s.nodes[i].Node().Labels
				for k, key := range d.keys {
					if v, ok := labels[key]; ok {
						for _, g := range d.byValue[k][v] {
							visit(g)
						}
					}
				}
			}
		}
		if err != nil {
			return nil, err
		}
	}

	// Local verdicts of the nodes that got a pod; their raw scores are
	// stale.
	for _, i := range c.dirty {
		ok, err := c.runLocal(ctx, s, pod, i, s.nodes[i])
		if err != nil {
			return nil, err
		}
		c.localOK[i] = ok
		c.stale[i] = true
		c.touched.add(i)
	}
	c.dirty = c.dirty[:0]

	feasibleChanged := false
	for _, i := range c.touched.list {
		if now := c.feasibleNow(i); now != c.feasible[i] {
			feasibleChanged = true
			c.feasible[i] = now
			c.best.changed(i)
			for _, d := range c.scorers {
				if d.pl.ScoreFeasible(c.state, s.nodes[i], now) {
					d.all = true
				}
			}
		}
	}
	rescored := c.rescored[:0]
	for _, i := range c.touched.list {
		if !c.feasible[i] || !c.stale[i] {
			continue
		}
		if err := c.scoreNode(ctx, pod, i, s.nodes[i]); err != nil {
			return nil, err
		}
		rescored = append(rescored, i)
	}
	// The incremental scorers' scores that other nodes' pods changed.
	changedNodes := append(c.changedNodes[:0], c.touched.list...)
	for _, d := range c.scorers {
		pl := c.plugins[d.j]
		nodes := d.dirty.list
		if d.all {
			nodes = c.allNodes
		}
		for _, i := range nodes {
			if !c.feasible[i] {
				c.stale[i] = true
				continue
			}
			if c.stale[i] {
				continue // to be scored when feasible
			}
			v, st := pl.Score(ctx, c.state, pod, s.nodes[i])
			if !st.IsSuccess() {
				return nil, fmt.Errorf("running Score plugin %q: %w", pl.Name(), st.AsError())
			}
			if c.setRaw(d.j, i, v) {
				rescored = append(rescored, i)
				changedNodes = append(changedNodes, i)
			}
		}
		d.dirty.clear()
		d.all = false
	}
	c.changedNodes = changedNodes
	c.rescored = rescored
	if err := c.normalize(ctx, pod, feasibleChanged, changedNodes); err != nil {
		return nil, err
	}
	for _, i := range rescored {
		if v := c.sum(i); v != c.total[i] {
			c.total[i] = v
			c.best.changed(i)
		}
	}

	// Nodes are in name order, so the first of equal scores wins.
	best := c.bestNode()
	if best < 0 {
		return nil, nil
	}
	return &Result{Pod: pod, Verdict: VerdictScheduled, SelectedNode: c.names[best], SelectedScore: c.total[best], NumAllNodes: s.numNodes, NotEvaluated: c.notEvaluated}, nil
}

// normalize runs the NormalizeScore of every normalizing plugin whose input
// changed (all of them when the feasible set did) and keeps totals equal to
// the sum of the contributions. A RangeNormalizer whose range of raw scores
// over the feasible nodes stayed the same is applied only to the nodes in
// changed: no other node's raw score or feasibility changed.
func (c *classCache) normalize(ctx context.Context, pod *corev1.Pod, feasibleChanged bool, changed []int) error {
	for j, pl := range c.plugins {
		ext := pl.ScoreExtensions()
		if ext == nil || (c.normalized[j] && !feasibleChanged) {
			continue
		}
		if rn, ok := ext.(framework.RangeNormalizer); ok {
			c.normalizeRange(j, rn, changed)
			continue
		}
		list := c.list[:0]
		for i, ok := range c.feasible {
			if ok {
				list = append(list, framework.NodeScore{Name: c.names[i], Score: c.raw[j][i]})
			}
		}
		c.list = list
		if len(list) == 0 {
			// Nothing to normalize; the RangeNormalizers after it still
			// count the nodes that changed (rangeOf), or they would keep
			// the scores of nodes no longer feasible in their range.
			continue
		}
		if st := ext.NormalizeScore(ctx, c.state, pod, list); !st.IsSuccess() {
			return fmt.Errorf("running NormalizeScore of %q: %w", pl.Name(), st.AsError())
		}
		k := 0
		for i, ok := range c.feasible {
			if ok {
				c.setContrib(j, i, list[k].Score*c.weights[j])
				k++
			}
		}
		c.normalized[j] = true
	}
	return nil
}

// rangeCount is what a RangeNormalizer's range was taken over at its last
// normalization: the raw score counted for each feasible node (in, val),
// how many there were (n) and how many held the low and the high end.
type rangeCount struct {
	in          []bool
	val         []int64
	n, nLo, nHi int
}

// clone copies the count.
func (r *rangeCount) clone() *rangeCount {
	if r == nil {
		return nil
	}
	out := *r
	out.in, out.val = slices.Clone(r.in), slices.Clone(r.val)
	return &out
}

// rangeOf returns the range of plugin j's raw scores over the feasible
// nodes. Given the nodes whose raw score or feasibility changed since the
// last normalization (changed; nil: unknown), it moves those in the count
// and keeps the ends while nodes still hold them, and counts every node
// again otherwise: a gang's member changes a node or two of thousands.
func (c *classCache) rangeOf(j int, changed []int) (lo, hi int64) {
	raw, r := c.raw[j], c.ranges[j]
	if r != nil && c.ranged[j] && changed != nil {
		lo, hi = c.lo[j], c.hi[j]
		for _, i := range changed {
			if r.in[i] {
				if v := r.val[i]; v == lo {
					r.nLo--
				}
				if v := r.val[i]; v == hi {
					r.nHi--
				}
				r.n--
				r.in[i] = false
			}
			if c.feasible[i] {
				lo, hi = r.add(i, raw[i], lo, hi)
			}
		}
		if r.n == 0 {
			return 0, 0
		}
		if r.nLo > 0 && r.nHi > 0 {
			return lo, hi
		}
	}
	if r == nil {
		r = &rangeCount{in: make([]bool, len(raw)), val: make([]int64, len(raw))}
		c.ranges[j] = r
	}
	lo, hi = 0, 0
	r.n, r.nLo, r.nHi = 0, 0, 0
	for i, ok := range c.feasible {
		r.in[i] = false
		if ok {
			lo, hi = r.add(i, raw[i], lo, hi)
		}
	}
	return lo, hi
}

// add counts node i's raw score v in the range lo..hi and returns the
// range with it.
func (r *rangeCount) add(i int, v, lo, hi int64) (int64, int64) {
	if r.n == 0 {
		lo, hi, r.nLo, r.nHi = v, v, 1, 1
	} else {
		if v < lo {
			lo, r.nLo = v, 1
		} else if v == lo {
			r.nLo++
		}
		if v > hi {
			hi, r.nHi = v, 1
		} else if v == hi {
			r.nHi++
		}
	}
	r.n++
	r.in[i], r.val[i] = true, v
	return lo, hi
}

// normalizeRange normalizes plugin j's scores with rn; see normalize.
func (c *classCache) normalizeRange(j int, rn framework.RangeNormalizer, changed []int) {
	raw := c.raw[j]
	lo, hi := c.rangeOf(j, changed)
	if c.ranged[j] && lo == c.lo[j] && hi == c.hi[j] {
		for _, i := range changed {
			if c.feasible[i] {
				c.setContrib(j, i, rn.NormalizeOne(raw[i], lo, hi)*c.weights[j])
			}
		}
	} else {
		for i, ok := range c.feasible {
			if ok {
				c.setContrib(j, i, rn.NormalizeOne(raw[i], lo, hi)*c.weights[j])
			}
		}
	}
	c.lo[j], c.hi[j], c.ranged[j], c.normalized[j] = lo, hi, true, true
}

// setContrib sets plugin j's contribution on node i and keeps its total.
func (c *classCache) setContrib(j, i int, v int64) {
	if v != c.contrib[j][i] {
		c.total[i] += v - c.contrib[j][i]
		c.contrib[j][i] = v
		c.best.changed(i)
	}
}

func (c *classCache) sum(i int) int64 {
	var t int64
	for j := range c.plugins {
		t += c.contrib[j][i]
	}
	return t
}
