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
	mu       sync.Mutex
	outcomes map[*framework.NodeInfo]nodeOutcome
}

// NewMemo returns an empty Memo.
func NewMemo() *Memo { return &Memo{outcomes: map[*framework.NodeInfo]nodeOutcome{}} }

// Clone returns the memo itself: it is shared by every copy of the state.
func (m *Memo) Clone() framework.StateData { return m }

func (m *Memo) get(ni *framework.NodeInfo) (nodeOutcome, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.outcomes[ni]
	return o, ok
}

func (m *Memo) put(ni *framework.NodeInfo, o nodeOutcome) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.outcomes[ni] = o
}

// memoOf returns the state's Memo, or nil.
func memoOf(state *framework.CycleState) *Memo {
	m, err := framework.ReadState[*Memo](state, MemoStateKey)
	if err != nil {
		return nil
	}
	return m
}
