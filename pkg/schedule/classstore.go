package schedule

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// ClassStore lends the classes of equal pods that sequences found (the
// state their full cycle left, kept up to date node by node: see Sequence)
// to the sequences of later placements, on forks of the same working copy
// and on the copies the placements before them committed (the queue
// simulation, the capacity count: docs/design.md#the-queue). A class is
// brought up to date with the pods added since, as a sequence brings it up
// to date with its own reservations: a gang of a shape placed before costs
// incremental cycles only, no full cycle.
//
// The store keeps, per class, the class as its last sequence left it
// (live: that sequence's reservations included), which a later sequence
// takes over when its working copy holds those reservations (a gang placed
// and committed, a copy after a copy), and a copy as the class was on the
// nodes it was found on, or caught up with (stable), for a working copy
// that does not (a gang that did not start, a fork of the same base).
//
// A class is lent only when that is exact: the working copy has the same
// nodes (the same node objects, in the same order), is confined to no
// domain, holds no nominated pod, and differs from the nodes the class
// follows only by pods added to nodes, none of them with pod
// (anti-)affinity terms (a pod with such terms may change the verdicts and
// scores of nodes in its topology domains, which the class does not
// follow). A removed pod, a replaced node or such terms make the sequence
// run a full cycle, as without a store. Not safe for concurrent use.
type ClassStore struct {
	classes map[string]*storedClass
	live    map[string]*classCache
	// hits counts the classes lent, for tests and benchmarks.
	hits int
}

// storeAgainAfter is how many nodes a class taken from its stable copy
// must have caught up with before it is copied again: a copy costs about
// as much as catching up with that many nodes.
const storeAgainAfter = 64

// storedClass is a class as it was on nodes.
type storedClass struct {
	c     *classCache
	nodes []*framework.NodeInfo
}

// NewClassStore returns an empty store.
func NewClassStore() *ClassStore {
	return &ClassStore{classes: map[string]*storedClass{}, live: map[string]*classCache{}}
}

// Hits is how many classes the store lent.
func (st *ClassStore) Hits() int {
	if st == nil {
		return 0
	}
	return st.hits
}

// NewSequenceIn starts a sequence on the scheduler's working copy that
// takes classes from store and keeps the ones it finds there (nil: none).
func (s *Scheduler) NewSequenceIn(store *ClassStore) *Sequence { return &Sequence{s: s, store: store} }

// lendable reports whether classes of s may be kept or lent.
func (st *ClassStore) lendable(s *Scheduler) bool {
	return st != nil && s.allowed == nil && s.order == nil && len(s.fw.nominator.byNode) == 0
}

// keep keeps c, a class just found on s's nodes, live and as a stable
// copy.
func (st *ClassStore) keep(s *Scheduler, c *classCache) {
	if !st.lendable(s) {
		return
	}
	c.view = slices.Clone(s.nodes)
	st.put(s, c)
	st.live[c.key] = c
}

// put keeps a stable copy of c, which is up to date with s's nodes.
func (st *ClassStore) put(s *Scheduler, c *classCache) {
	if !st.lendable(s) || len(c.dirty) > 0 {
		return
	}
	st.classes[c.key] = &storedClass{c: c.clone(), nodes: slices.Clone(s.nodes)}
}

// forget stops lending c live (its state no longer follows its view).
func (st *ClassStore) forget(c *classCache) {
	if st != nil && c != nil && st.live[c.key] == c {
		delete(st.live, c.key)
	}
}

// take returns the class kept under key for q, brought up to date with
// q's nodes (its next incremental cycle filters and scores the nodes that
// got pods again), for pod, one of the class: the live class, which q then
// owns, when q's working copy holds the pods it follows, else a copy of
// the stable one; nil when there is none or it cannot be lent (see
// ClassStore).
func (st *ClassStore) take(ctx context.Context, q *Sequence, key string, pod *corev1.Pod) (*classCache, error) {
	s := q.s
	if !st.lendable(s) {
		return nil, nil
	}
	if c := st.live[key]; c != nil {
		changed, ok := podsAddedSince(c.view, s.nodes)
		if ok {
			// From here on the class is changed for q: its old owner
			// must not use it, whatever comes of it.
			delete(st.live, key)
			c.owner = nil
			if c.rebind(s.fw) && c.catchUp(ctx, s, pod, changed) {
				c.caughtUp = 0
				return st.lend(q, s, c, pod), nil
			}
		}
	}
	e := st.classes[key]
	if e == nil {
		return nil, nil
	}
	changed, ok := podsAddedSince(e.nodes, s.nodes)
	if !ok {
		delete(st.classes, key)
		return nil, nil
	}
	c := e.c.clone()
	c.view = slices.Clone(e.nodes)
	if !c.rebind(s.fw) || !c.catchUp(ctx, s, pod, changed) {
		delete(st.classes, key)
		return nil, nil
	}
	c.caughtUp = len(changed)
	return st.lend(q, s, c, pod), nil
}

// lend makes c, up to date with s's nodes, q's live class.
func (st *ClassStore) lend(q *Sequence, s *Scheduler, c *classCache, pod *corev1.Pod) *classCache {
	c.owner, c.podInfo = q, nil
	c.notEvaluated = slices.Clip(append(s.cycleNotEvaluated(pod), c.preNotEvaluated...))
	st.live[c.key] = c
	st.hits++
	return c
}

// nodeChange is a node whose NodeInfo gained pods: its index and the pods.
type nodeChange struct {
	i     int
	added []*framework.PodInfo
}

// podsAddedSince lists the nodes whose NodeInfo in now is not the one in
// was, with the pods each gained, and reports whether each differs by added
// pods only (podsAdded).
func podsAddedSince(was, now []*framework.NodeInfo) ([]nodeChange, bool) {
	if len(was) != len(now) {
		return nil, false
	}
	var changed []nodeChange
	for i, ni := range now {
		if ni == was[i] {
			continue
		}
		added, ok := podsAdded(was[i], ni)
		if !ok {
			return nil, false
		}
		changed = append(changed, nodeChange{i: i, added: added})
	}
	return changed, true
}

// catchUp brings c's state from its view to s's nodes on the changed
// nodes, as Sequence.Reserve does for each pod added there, and reports
// whether it could.
func (c *classCache) catchUp(ctx context.Context, s *Scheduler, pod *corev1.Pod, changed []nodeChange) bool {
	for _, ch := range changed {
		i, ni := ch.i, s.nodes[ch.i]
		for _, pi := range ch.added {
			if stat := s.fw.runPreFilterExtensionAddPod(ctx, c.state, pod, pi, ni); !stat.IsSuccess() {
				return false
			}
			for _, d := range c.scorers {
				if stat := d.pl.ScoreAddPod(ctx, c.state, pod, pi, ni); !stat.IsSuccess() {
					return false
				}
			}
		}
		for _, d := range c.scorers {
			d.added(i, ni)
		}
		c.dirty = append(c.dirty, i)
		c.view[i] = ni
	}
	return true
}

// podsAdded returns the pods now has that was has not, and whether now is
// was with pods added only (its pods first, in order; the same node
// object), none of them with pod (anti-)affinity terms.
func podsAdded(was, now *framework.NodeInfo) ([]*framework.PodInfo, bool) {
	if was.Node() != now.Node() || len(now.Pods) < len(was.Pods) {
		return nil, false
	}
	for k, pi := range was.Pods {
		if q := now.Pods[k]; q != pi && !sameIdentity(q.Pod, pi.Pod) {
			return nil, false
		}
	}
	added := now.Pods[len(was.Pods):]
	for _, pi := range added {
		if len(pi.RequiredAffinityTerms)+len(pi.RequiredAntiAffinityTerms)+len(pi.PreferredAffinityTerms)+len(pi.PreferredAntiAffinityTerms) > 0 {
			return nil, false
		}
	}
	return added, true
}

// sameIdentity: the same namespace, name and UID.
func sameIdentity(a, b *corev1.Pod) bool {
	return a.Namespace == b.Namespace && a.Name == b.Name && a.UID == b.UID
}

// clone copies the class: what incremental cycles change is copied, what
// they only read (the node names and domains) is shared.
func (c *classCache) clone() *classCache {
	n := len(c.localOK)
	out := *c
	out.state = c.state.Clone()
	out.local = slices.Clone(c.local)
	out.domains = make([]*domainFilter, len(c.domains))
	for k, d := range c.domains {
		dd := *d
		dd.global = slices.Clone(d.global)
		dd.ok = slices.Clone(d.ok)
		dd.seen = newIndexSet(len(d.members))
		out.domains[k] = &dd
	}
	out.scorers = make([]*domainScorer, len(c.scorers))
	for k, d := range c.scorers {
		dd := *d
		dd.dirty = newIndexSet(n)
		for _, i := range d.dirty.list {
			dd.dirty.add(i)
		}
		out.scorers[k] = &dd
	}
	out.localOK, out.feasible, out.stale = slices.Clone(c.localOK), slices.Clone(c.feasible), slices.Clone(c.stale)
	out.rescored = nil
	out.plugins = slices.Clone(c.plugins)
	out.raw, out.contrib = make([][]int64, len(c.raw)), make([][]int64, len(c.contrib))
	for j := range c.raw {
		out.raw[j], out.contrib[j] = slices.Clone(c.raw[j]), slices.Clone(c.contrib[j])
	}
	out.total = slices.Clone(c.total)
	out.best = bestTree{} // built at the copy's first pick
	out.dirty = slices.Clone(c.dirty)
	out.normalized, out.ranged = slices.Clone(c.normalized), slices.Clone(c.ranged)
	out.lo, out.hi = slices.Clone(c.lo), slices.Clone(c.hi)
	out.ranges = make([]*rangeCount, len(c.ranges))
	for j, r := range c.ranges {
		out.ranges[j] = r.clone()
	}
	out.podInfo = nil
	out.list = nil
	out.touched = newIndexSet(n)
	out.changedNodes = nil
	out.owner, out.view = nil, nil
	return &out
}

// rebind points the class's plugins at fw's, of the same profile (a fork
// instantiates its own): the state they wrote is the class's, the
// snapshot they may read is fw's.
func (c *classCache) rebind(fw *frameworkImpl) bool {
	filters := map[string]framework.FilterPlugin{}
	for _, pl := range fw.filter {
		filters[pl.Name()] = pl
	}
	scores := map[string]framework.ScorePlugin{}
	for _, pl := range fw.score {
		scores[pl.Name()] = pl
	}
	for k, pl := range c.local {
		if c.local[k] = filters[pl.Name()]; c.local[k] == nil {
			return false
		}
	}
	for _, d := range c.domains {
		dp, ok := filters[d.pl.Name()].(framework.DomainFilterPlugin)
		if !ok {
			return false
		}
		d.pl = dp
	}
	for j, pl := range c.plugins {
		if c.plugins[j] = scores[pl.Name()]; c.plugins[j] == nil {
			return false
		}
		if c.weights[j] != fw.weights[pl.Name()] {
			return false
		}
	}
	for _, d := range c.scorers {
		ip, ok := c.plugins[d.j].(framework.IncrementalScorePlugin)
		if !ok {
			return false
		}
		d.pl = ip
	}
	return true
}
