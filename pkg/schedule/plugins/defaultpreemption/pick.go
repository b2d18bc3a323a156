package defaultpreemption

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// pick is what a dry run that weighed every node (numCandidates at least
// the nodes where preemption might help: a gang's what-if,
// minCandidateNodesPercentage 100) found, kept in the Memo for the next
// pod of the class: each node's status code and NodeInfo as they were, its
// candidate, and the candidates in pickOneCandidate's order. The next
// pod's PostFilter then tries again only the nodes that changed (a
// member's victims gone, a member reserved) and moves their candidates in
// the order, where a full Evaluate walks every node, builds a candidate for
// each and compares them all: on 65,000 nodes, a gang's 5,000 members made
// that most of explain.
//
// When every node is weighed, the dry run's candidates are all the nodes
// whose outcome has victims, and the pick is the best rank, the first by
// name among equal ones, the others equally good (pickOneCandidate); that is
// what the order gives. The rank's last criterion, the earliest start of
// the most important victims, depends on the moment for victims that have
// not started; the order holds at any later moment as long as every
// started time it compares is before the moment the pick was made (then an
// unstarted victim's start, the moment, is later than any of them), which
// is checked for every candidate that enters.
type pick struct {
	mu sync.Mutex
	// now is the moment the pick was made; later cycles must not come
	// before it.
	now   time.Time
	nodes []*framework.NodeInfo
	codes []framework.Code
	// potential counts the nodes whose code is Unschedulable.
	potential int
	cands     []*Candidate // per node, nil when not a candidate
	// order holds the candidates best first, names their nodes' names.
	// Neither is changed in place once a result shares names: a change
	// makes new slices, except dropping the first.
	order []*Candidate
	names []string
	// version names the statuses (TrackedNodeToStatus) nodes and codes
	// were last brought up to date with; 0 when they were not tracked.
	version uint64
}

// startKey is the rank's earliest start as the pick compares it: a victim
// that has not started, as kube-scheduler takes it, starts at the moment
// of the pick, after every started time the pick holds.
func startKey(r *rank) int64 {
	if !r.hasStarted {
		return math.MaxInt64
	}
	return r.started.UnixNano()
}

// before orders candidates as the pick does: better rank first
// (compareRanks), then by node name.
func before(a, b *Candidate) int {
	d := cmp.Or(cmp.Compare(a.rank.pdb, b.rank.pdb), cmp.Compare(a.rank.highest, b.rank.highest), cmp.Compare(a.rank.sum, b.rank.sum),
		cmp.Compare(a.rank.count, b.rank.count), cmp.Compare(startKey(a.rank), startKey(b.rank)))
	if d != 0 {
		return -d
	}
	return strings.Compare(a.NodeName, b.NodeName)
}

// sameRank says a and b rank equal (the pick's ties).
func sameRank(a, b *Candidate) bool {
	return a.rank.pdb == b.rank.pdb && a.rank.highest == b.rank.highest && a.rank.sum == b.rank.sum &&
		a.rank.count == b.rank.count && startKey(a.rank) == startKey(b.rank)
}

// admits says c's rank keeps the order valid at any moment from now on.
func (p *pick) admits(c *Candidate) bool {
	return c.rank != nil && (!c.rank.hasStarted || c.rank.started.Before(p.now))
}

// remove takes c out of the order; false when it is not there.
func (p *pick) remove(c *Candidate) bool {
	i, found := slices.BinarySearchFunc(p.order, c, before)
	if !found || p.order[i] != c {
		return false
	}
	if i == 0 {
		p.order, p.names = p.order[1:], p.names[1:]
		return true
	}
	p.order = append(slices.Clip(p.order[:i]), p.order[i+1:]...)
	p.names = append(slices.Clip(p.names[:i]), p.names[i+1:]...)
	return true
}

// insert puts c in the order.
func (p *pick) insert(c *Candidate) {
	i, _ := slices.BinarySearchFunc(p.order, c, before)
	p.order = slices.Insert(slices.Clip(p.order), i, c)
	p.names = slices.Insert(slices.Clip(p.names), i, c.NodeName)
}

// reorder builds the order from the candidates.
func (p *pick) reorder() {
	p.order = p.order[:0:0]
	for _, c := range p.cands {
		if c != nil {
			p.order = append(p.order, c)
		}
	}
	slices.SortFunc(p.order, before)
	p.names = make([]string, len(p.order))
	for i, c := range p.order {
		p.names[i] = c.NodeName
	}
}

// best is the pick: the first candidate, with the others of its rank as
// equally good (sharing names, which is never changed in place).
func (p *pick) best() *Candidate {
	k := 1 + sort.Search(len(p.order)-1, func(j int) bool { return !sameRank(p.order[j+1], p.order[0]) })
	best := *p.order[0]
	if k > 1 {
		best.EquallyGood = p.names[1:k:k]
	}
	return &best
}

// keepPick remembers, after a full Evaluate that weighed every node where
// preemption might help and found a candidate, what it found, for the next
// pod of the memo's class. It keeps nothing when a node's outcome is not in
// the memo (an error) or a candidate's rank could change order later.
func (pl *DefaultPreemption) keepPick(memo *Memo, nodeStatuses framework.NodeToStatus, now time.Time) {
	memo.setPick(nil)
	allNodes := pl.handle.NodeInfos().List()
	indexed, _ := nodeStatuses.(IndexedNodeToStatus)
	if indexed == nil || indexed.Len() != len(allNodes) {
		return
	}
	p := &pick{now: now, nodes: slices.Clone(allNodes), codes: make([]framework.Code, len(allNodes)), cands: make([]*Candidate, len(allNodes))}
	known := memo.entriesNow()
	for i, ni := range allNodes {
		code := indexed.StatusAt(i).Code()
		p.codes[i] = code
		if code != framework.Unschedulable {
			continue
		}
		p.potential++
		o, ok := known.get(i, ni)
		if !ok {
			return
		}
		if c, ok := o.candidateOrNot(); !ok {
			return
		} else if c != nil {
			if !p.admits(c) {
				return
			}
			p.cands[i] = c
		}
	}
	if int(pl.args.numCandidates(int32(p.potential))) < p.potential {
		return
	}
	p.reorder()
	if len(p.order) == 0 {
		return
	}
	if t, ok := nodeStatuses.(TrackedNodeToStatus); ok {
		p.version, _, _ = t.Versions()
	}
	memo.setPick(p)
}

// candidateOrNot is the outcome as the dry run counts it: a candidate (its
// victims found), nil (a verdict), or false for an outcome the dry run
// turns into an error (success without victims) or an error.
func (o *nodeOutcome) candidateOrNot() (*Candidate, bool) {
	switch {
	case o.status.Code() == framework.Error:
		return nil, false
	case o.status.IsSuccess() && len(o.victims) == 0:
		return nil, false
	case o.status.IsSuccess():
		return o.candidate(), true
	}
	return nil, true
}

// pickAgain answers PostFilter for the next pod of the memo's class from
// the pick the memo keeps: the nodes whose NodeInfo or status changed are
// tried again (from the memo when it knows them) and their candidates moved
// in the order. It reports false, dropping the pick, when the answer needs
// a full Evaluate: the statuses are not indexed, a node's outcome is an
// error, a rank could change order, no candidate is left (the diagnosis
// counts every node's verdict), or fewer candidates than nodes would be
// weighed.
func (pl *DefaultPreemption) pickAgain(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodeStatuses framework.NodeToStatus) (*Candidate, *framework.Status, bool) {
	memo := memoOf(state)
	p := memo.pickNow()
	if p == nil {
		return nil, nil, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	allNodes := pl.handle.NodeInfos().List()
	indexed, _ := nodeStatuses.(IndexedNodeToStatus)
	if indexed == nil || indexed.Len() != len(allNodes) || len(p.nodes) != len(allNodes) {
		memo.setPick(nil)
		return nil, nil, false
	}
	if ok, msg := pl.eligibleToPreemptOthers(pod, nodeStatuses); !ok {
		return nil, framework.NewStatus(framework.Unschedulable, msg), true
	}
	now := pl.now()
	if now.Before(p.now) {
		memo.setPick(nil)
		return nil, nil, false
	}
	// The nodes to compare: only those the statuses say changed when they
	// were made from the ones the pick was last brought up to date with.
	var maybe []int
	all := true
	version := uint64(0)
	if t, ok := nodeStatuses.(TrackedNodeToStatus); ok {
		var from uint64
		version, from, maybe = t.Versions()
		all = from == 0 || from != p.version
	}
	if all {
		maybe = make([]int, len(allNodes))
		for i := range maybe {
			maybe[i] = i
		}
	}
	var changed []int
	potential := p.potential
	for _, i := range maybe {
		ni := allNodes[i]
		code := indexed.StatusAt(i).Code()
		if ni == p.nodes[i] && code == p.codes[i] {
			continue
		}
		changed = append(changed, i)
		if p.codes[i] == framework.Unschedulable {
			potential--
		}
		if code == framework.Unschedulable {
			potential++
		}
		p.codes[i] = code
	}
	if int(pl.args.numCandidates(int32(potential))) < potential {
		memo.setPick(nil)
		return nil, nil, false
	}
	p.potential = potential
	run := &dryRun{pl: pl, state: state, preemptor: pod, priority: corev1helpers.PodPriority(pod),
		pdbs: newPDBChecker(pl.handle.PodDisruptionBudgets()), now: now, numCandidates: potential}
	outcomes := make([]nodeOutcome, len(changed))
	known := memo.entriesNow()
	var tries []int
	for k, i := range changed {
		if p.codes[i] != framework.Unschedulable {
			continue
		}
		if o, ok := known.get(i, allNodes[i]); ok {
			outcomes[k] = o
		} else {
			tries = append(tries, k)
		}
	}
	pl.handle.Parallelizer().Until(ctx, len(tries), func(j int) {
		k := tries[j]
		outcomes[k] = run.outcome(ctx, allNodes[changed[k]], changed[k], memo)
	})
	if err := ctx.Err(); err != nil {
		memo.setPick(nil)
		return nil, framework.AsStatus(err), true
	}
	for k, i := range changed {
		var c *Candidate
		if p.codes[i] == framework.Unschedulable {
			var ok bool
			if c, ok = outcomes[k].candidateOrNot(); !ok || (c != nil && !p.admits(c)) {
				memo.setPick(nil)
				return nil, nil, false
			}
		}
		if old := p.cands[i]; old != nil && !p.remove(old) {
			memo.setPick(nil)
			return nil, nil, false
		}
		p.nodes[i], p.cands[i] = allNodes[i], c
		if c != nil {
			p.insert(c)
		}
	}
	if len(p.order) == 0 {
		memo.setPick(nil)
		return nil, nil, false
	}
	p.version = version
	best := p.best()
	memo.mu.Lock()
	memo.picks++
	memo.mu.Unlock()
	return best, framework.NewStatus(framework.Success,
		fmt.Sprintf("found a potential placement for pod on node %v, preempting %d victims", best.NodeName, len(best.Victims))), true
}
