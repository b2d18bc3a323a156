package defaultpreemption

import (
	"sync"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// MemoStateKey is where a cycle finds a Memo in its cycle state.
const MemoStateKey framework.StateKey = "PostFilter" + Name + "Memo"

// Memo remembers the dry run's outcome on each node for one class of equal
// pods (equal in everything the plugins read) whose fit on a node depends
// on that node alone: a gang's members, tried one after another as victims
// go and members are placed. A node's outcome is kept with the NodeInfo it
// was computed on; a NodeInfo is never changed once built (a reservation or
// an eviction replaces it), so an outcome is reused exactly while its node
// has not changed. The caller (a Sequence) makes sure the class and its
// PreFilter state stay the same.
type Memo struct {
	// entries are kept by the node's place in the handle's list: the dry
	// run tries each node on its own goroutine, so no two touch one entry
	// at once, and a growing slice is guarded by mu.
	mu      sync.Mutex
	entries []memoEntry
	// pick is what the last dry run that weighed every node picked from
	// (see pick), nil when none is kept; picks counts the PostFilters it
	// answered.
	pick  *pick
	picks int
}

// Picks is how many PostFilters the memo's pick answered without a full
// Evaluate, for tests and benchmarks.
func (m *Memo) Picks() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.picks
}

// pickNow returns the pick kept, or nil (for a nil Memo too).
func (m *Memo) pickNow() *pick {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pick
}

// setPick keeps p (nil: none).
func (m *Memo) setPick(p *pick) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pick = p
}

type memoEntry struct {
	ni      *framework.NodeInfo
	outcome nodeOutcome
}

// NewMemo returns an empty Memo.
func NewMemo() *Memo { return &Memo{} }

// Clone returns the memo itself: it is shared by every copy of the state.
func (m *Memo) Clone() framework.StateData { return m }

// memoEntries are the entries as they were at one moment: read them while
// no put runs (the dry run reads before it tries nodes in parallel).
type memoEntries []memoEntry

// entriesNow returns the entries as they are now (none for a nil Memo).
func (m *Memo) entriesNow() memoEntries {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.entries
}

// get returns the outcome kept for the node at place, if it was computed
// on ni itself.
func (e memoEntries) get(place int, ni *framework.NodeInfo) (nodeOutcome, bool) {
	if place < len(e) && e[place].ni == ni {
		return e[place].outcome, true
	}
	return nodeOutcome{}, false
}

func (m *Memo) put(place int, ni *framework.NodeInfo, o nodeOutcome) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if place >= len(m.entries) {
		m.entries = append(m.entries, make([]memoEntry, place+1-len(m.entries))...)
	}
	m.entries[place] = memoEntry{ni: ni, outcome: o}
}

// memoOf returns the state's Memo, or nil.
func memoOf(state *framework.CycleState) *Memo {
	m, err := framework.ReadState[*Memo](state, MemoStateKey)
	if err != nil {
		return nil
	}
	return m
}
