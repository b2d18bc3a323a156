package schedule

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// newClass runs PreFilter, Filter and raw Score for the class once more and
// keeps everything the incremental cycles reuse. It returns nil when the
// class cannot be scheduled incrementally.
func (q *Sequence) newClass(ctx context.Context, key string, pod *corev1.Pod) (*classCache, error) {
	s := q.s
	state := framework.NewCycleState()
	scratch := &Result{}
	preResult, preStatus, _ := s.runPreFilter(ctx, state, pod, scratch)
	if !preStatus.IsSuccess() || !preResult.AllNodes() {
		return nil, nil
	}
	// Pods nominated to nodes that this pod yields to make Filter run twice
	// there, with a state of its own: full cycles keep that exact.
	if s.fw.nominator.any(pod) {
		return nil, nil
	}
	n := len(s.nodes)
	c := &classCache{key: key, state: state, preNotEvaluated: scratch.NotEvaluated, localOK: make([]bool, n), feasible: make([]bool, n), stale: make([]bool, n), touched: newIndexSet(n)}
	c.notEvaluated = slices.Clip(append(s.cycleNotEvaluated(pod), c.preNotEvaluated...))
	for _, pl := range s.fw.filter {
		if state.SkipFilterPlugins[pl.Name()] {
			continue
		}
		if !s.fw.podDependent(pl.Name()) {
			c.local = append(c.local, pl)
			continue
		}
		dp, ok := pl.(framework.DomainFilterPlugin)
		if !ok {
			return nil, nil
		}
		c.domains = append(c.domains, newDomainFilter(dp, state, s.nodes))
	}
	for i, ni := range s.nodes {
		ok, err := c.runLocal(ctx, s, pod, i, ni)
		if err != nil {
			return nil, err
		}
		c.localOK[i] = ok
	}
	for _, d := range c.domains {
		for g := range d.members {
			if err := d.evaluate(ctx, state, pod, s.nodes, g); err != nil {
				return nil, err
			}
		}
	}
	var feasible []*framework.NodeInfo
	for i, ni := range s.nodes {
		c.feasible[i] = c.feasibleNow(i)
		if c.feasible[i] {
			feasible = append(feasible, ni)
		}
	}
	skip, err := s.fw.runPreScore(ctx, state, pod, feasible)
	if err != nil {
		return nil, err
	}
	for _, pl := range s.fw.score {
		if s.fw.podDependent(pl.Name()) {
			if sp, ok := pl.(framework.StableScorePlugin); !ok || !sp.ScoreStable(pod, skip[pl.Name()]) {
				ip, ok := pl.(framework.IncrementalScorePlugin)
				if !ok || skip[pl.Name()] {
					return nil, nil
				}
				c.scorers = append(c.scorers, newDomainScorer(ip, len(c.plugins), state, s.nodes))
			}
		}
		if !skip[pl.Name()] {
			c.plugins = append(c.plugins, pl)
		}
	}
	c.raw, c.contrib = make([][]int64, len(c.plugins)), make([][]int64, len(c.plugins))
	c.weights, c.normalized = make([]int64, len(c.plugins)), make([]bool, len(c.plugins))
	c.ranged, c.lo, c.hi = make([]bool, len(c.plugins)), make([]int64, len(c.plugins)), make([]int64, len(c.plugins))
	c.ranges = make([]*rangeCount, len(c.plugins))
	for j, pl := range c.plugins {
		c.raw[j], c.contrib[j] = make([]int64, n), make([]int64, n)
		c.weights[j] = s.fw.weights[pl.Name()]
	}
	c.total, c.names, c.allNodes = make([]int64, n), make([]string, n), make([]int, n)
	for i, ni := range s.nodes {
		c.names[i], c.allNodes[i] = ni.Name(), i
		if !c.feasible[i] {
			c.stale[i] = true
			continue
		}
		if err := c.scoreNode(ctx, pod, i, ni); err != nil {
			return nil, err
		}
	}
	if err := c.normalize(ctx, pod, true, nil); err != nil {
		return nil, err
	}
	for i := range c.total {
		c.total[i] = c.sum(i)
	}
	return c, nil
}

// newDomainFilter groups the nodes by their values of the plugin's keys.
func newDomainFilter(pl framework.DomainFilterPlugin, state *framework.CycleState, nodes []*framework.NodeInfo) *domainFilter {
	d := &domainFilter{pl: pl, keys: pl.FilterDomainKeys(state), group: make([]int32, len(nodes))}
	d.global = pl.FilterGlobal(state, nil)
	d.byValue = make([]map[string][]int32, len(d.keys))
	for k := range d.keys {
		d.byValue[k] = map[string][]int32{}
	}
	ids := map[string]int32{}
	var tuple []byte
	for i, ni := range nodes {
		tuple = tuple[:0]
		labels := ni.Node().Labels
		for _, k := range d.keys {
			if v, ok := labels[k]; ok {
				tuple = append(tuple, 1)
				tuple = append(tuple, v...)
			}
			tuple = append(tuple, 0)
		}
		g, ok := ids[string(tuple)]
		if !ok {
			g = int32(len(d.members))
			ids[string(tuple)] = g
			d.members = append(d.members, nil)
			for k, key := range d.keys {
				if v, ok := labels[key]; ok {
					d.byValue[k][v] = append(d.byValue[k][v], g)
				}
			}
		}
		d.group[i] = g
		d.members[g] = append(d.members[g], i)
	}
	d.ok = make([]bool, len(d.members))
	d.seen = newIndexSet(len(d.members))
	return d
}

// evaluate runs the plugin on one node of group g and reports whether the
// group's verdict changed.
func (d *domainFilter) evaluate(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodes []*framework.NodeInfo, g int) error {
	st := d.pl.Filter(ctx, state, pod, nodes[d.members[g][0]])
	if !st.IsSuccess() && !st.IsRejected() {
		return fmt.Errorf("running %q filter plugin: %w", d.pl.Name(), st.AsError())
	}
	d.ok[g] = st.IsSuccess()
	return nil
}

// runLocal runs the local Filter plugins on node i.
func (c *classCache) runLocal(ctx context.Context, s *Scheduler, pod *corev1.Pod, i int, ni *framework.NodeInfo) (bool, error) {
	if s.allowed != nil && !s.allowed[i] {
		return false, nil
	}
	for _, pl := range c.local {
		st := pl.Filter(ctx, c.state, pod, ni)
		if st.IsSuccess() {
			continue
		}
		if !st.IsRejected() {
			return false, fmt.Errorf("running %q filter plugin: %w", pl.Name(), st.AsError())
		}
		return false, nil
	}
	return true, nil
}

func (c *classCache) feasibleNow(i int) bool {
	if !c.localOK[i] {
		return false
	}
	for _, d := range c.domains {
		if !d.ok[d.group[i]] {
			return false
		}
	}
	return true
}

// scoreNode computes a node's raw scores.
func (c *classCache) scoreNode(ctx context.Context, pod *corev1.Pod, i int, ni *framework.NodeInfo) error {
	for j, pl := range c.plugins {
		v, st := pl.Score(ctx, c.state, pod, ni)
		if !st.IsSuccess() {
			return fmt.Errorf("running Score plugin %q: %w", pl.Name(), st.AsError())
		}
		c.setRaw(j, i, v)
	}
	c.stale[i] = false
	return nil
}

// setRaw records plugin j's raw score v on node i and reports whether it
// changed. A plugin without NormalizeScore contributes v times its weight
// at once; a normalizing one is marked to be normalized again.
func (c *classCache) setRaw(j, i int, v int64) bool {
	if c.plugins[j].ScoreExtensions() == nil {
		c.contrib[j][i] = v * c.weights[j]
	}
	if c.raw[j][i] == v {
		return false
	}
	c.raw[j][i] = v
	if c.plugins[j].ScoreExtensions() != nil {
		c.normalized[j] = false
	}
	return true
}
