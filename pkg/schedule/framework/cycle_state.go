package framework

import (
	"errors"
	"fmt"
)

// ErrNotFound is returned by CycleState.Read for a key never written.
var ErrNotFound = errors.New("not found")

// StateKey names an entry in a CycleState, by convention "PreFilter"+plugin name.
type StateKey string

// StateData is per-cycle data a plugin keeps. Clone must return a copy that
// can be changed (by PreFilter extensions during preemption or gang
// placement) without changing the original.
type StateData interface {
	Clone() StateData
}

// CycleState carries data between a plugin's extension points within one
// scheduling cycle. Writes happen on one goroutine (PreFilter, PreScore);
// Filter and Score run in parallel and only read, so no lock is needed.
type CycleState struct {
	storage map[StateKey]StateData
	// SkipFilterPlugins and SkipScorePlugins hold plugins that returned Skip
	// at PreFilter and PreScore.
	SkipFilterPlugins map[string]bool
	SkipScorePlugins  map[string]bool
}

// NewCycleState returns an empty CycleState.
func NewCycleState() *CycleState {
	return &CycleState{storage: map[StateKey]StateData{}, SkipFilterPlugins: map[string]bool{}, SkipScorePlugins: map[string]bool{}}
}

// Read returns the data stored under key, or ErrNotFound.
func (c *CycleState) Read(key StateKey) (StateData, error) {
	if v, ok := c.storage[key]; ok {
		return v, nil
	}
	return nil, ErrNotFound
}

// ReadState returns the data stored under key as a T. The error names the
// key when it was never written (and wraps ErrNotFound), and the key and
// both types when it holds something else.
func ReadState[T StateData](c *CycleState, key StateKey) (T, error) {
	var zero T
	data, err := c.Read(key)
	if err != nil {
		return zero, fmt.Errorf("reading %q from cycleState: %w", key, err)
	}
	s, ok := data.(T)
	if !ok {
		return zero, fmt.Errorf("invalid state under %q: got type %T, want %T", key, data, zero)
	}
	return s, nil
}

// Write stores data under key.
func (c *CycleState) Write(key StateKey, val StateData) {
	c.storage[key] = val
}

// Delete removes key.
func (c *CycleState) Delete(key StateKey) {
	delete(c.storage, key)
}

// Clone copies the state, cloning every entry.
func (c *CycleState) Clone() *CycleState {
	if c == nil {
		return nil
	}
	out := &CycleState{
		storage:           make(map[StateKey]StateData, len(c.storage)),
		SkipFilterPlugins: make(map[string]bool, len(c.SkipFilterPlugins)),
		SkipScorePlugins:  make(map[string]bool, len(c.SkipScorePlugins)),
	}
	for k, v := range c.storage {
		out.storage[k] = v.Clone()
	}
	for k, v := range c.SkipFilterPlugins {
		out.SkipFilterPlugins[k] = v
	}
	for k, v := range c.SkipScorePlugins {
		out.SkipScorePlugins[k] = v
	}
	return out
}
