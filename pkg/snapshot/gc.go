package snapshot

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// gcState is what this package set the collector to: binary loads pause
// it (pauseGC), and when the last of them is done its next collection is
// held back until the heap has grown as after any collection (hold).
var gcState struct {
	sync.Mutex
	// loads counts the loads that paused the collector.
	loads int
	// percent is the collector's own setting (GOGC) while it is paused or
	// held.
	percent int
	// held is the generation of the hold in force (0: none); a hold ends
	// at the first collection after it (releaseHold). heldPercent is the
	// setting it made: one found changed since was set by someone else,
	// and is theirs to keep.
	held, generation uint64
	heldPercent      int
}

// pauseGC stops the garbage collector until the returned function is
// called (by every load that paused it, when loads run at once). A binary
// load allocates little but the objects it keeps (the records' buffers
// are reused, equal values shared), so collecting while it runs finds
// almost nothing, and only marks the growing heap again and again; its
// peak is the same without (docs/design.md#the-snapshot-file). A memory
// limit (GOMEMLIMIT) still holds.
//
// Resuming does not simply restore the setting: the collector paces itself
// by the heap its last collection marked, a few MiB from before the load,
// so the next goal would be twice that and a collection would start at
// once, marking the whole snapshot, which the verb keeps to its end. So
// the next collection is held where one that had just marked the heap
// would put it (hold).
func pauseGC() (resume func()) {
	gcState.Lock()
	defer gcState.Unlock()
	if gcState.loads == 0 {
		if p := debug.SetGCPercent(-1); gcState.held == 0 || p != gcState.heldPercent {
			gcState.percent = p
		}
		gcState.held = 0
	}
	gcState.loads++
	return func() {
		gcState.Lock()
		defer gcState.Unlock()
		if gcState.loads--; gcState.loads == 0 && !hold(gcState.percent) {
			debug.SetGCPercent(gcState.percent)
		}
	}
}

// hold sets the collector's next goal at the heap's size times (1 +
// percent/100), percent being its own setting (GOGC), as if a collection
// had just marked the heap as it is, by raising GOGC relative to the heap
// last marked; the first collection after brings percent back
// (releaseHold), unless someone else set another since. It says whether
// it set a hold: not with the collector off (percent < 0), nor under a
// memory limit (GOMEMLIMIT: its collections run while the collector is
// paused, and one still marking would end with a goal relative to what it
// marked), nor when the goal is that far already. The caller holds gcState
// and has the collector paused.
func hold(percent int) bool {
	if percent < 0 || memoryLimited() {
		// Off, or under a memory limit, whose collections run while the
		// collector is paused: one may be marking now.
		return false
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}
	metrics.Read(s)
	live, heap, roots := s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()+s[3].Value.Uint64()
	if live < 100 {
		return false
	}
	// The runtime's goal is live + (live + stacks + globals) * GOGC/100,
	// and at least 4 MiB * GOGC/100 (mgcpacer.go): p is the least of the
	// settings that put either at want.
	want := heap + heap/100*uint64(percent)
	if want <= live+(live+roots)/100*uint64(percent) {
		return false
	}
	p := min((want-live)*100/(live+roots), want/(heapMinimum/100))
	if p > 1<<30 || p <= uint64(percent) {
		return false
	}
	gcState.generation++
	gcState.held = gcState.generation
	gcState.heldPercent = int(p)
	debug.SetGCPercent(int(p))
	// The sentinel is freed by the next collection.
	runtime.AddCleanup(new(gcSentinel), releaseHold, gcState.held)
	return true
}

// memoryLimited says whether the process runs under a memory limit
// (GOMEMLIMIT or debug.SetMemoryLimit): neither growHeap nor hold acts
// there.
func memoryLimited() bool { return debug.SetMemoryLimit(-1) != math.MaxInt64 }

// heapMinimum is the runtime's least heap goal at GOGC 100
// (defaultHeapMinimum), scaled by GOGC.
const heapMinimum = 4 << 20

// gcSentinel is an object of its own (not a tiny allocation shared with
// others) whose cleanup ends a hold.
type gcSentinel struct{ _ [4]uintptr }

// releaseHold ends hold's generation gen, if it is still in force: the
// collector's own setting comes back, relative to the heap the collection
// that freed the sentinel marked.
func releaseHold(gen uint64) {
	gcState.Lock()
	defer gcState.Unlock()
	if gcState.held != gen || gcState.loads > 0 {
		return
	}
	gcState.held = 0
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if int(int32(s[0].Value.Uint64())) == gcState.heldPercent {
		debug.SetGCPercent(gcState.percent)
	}
}
