package snapshot

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// gcMetrics reads the runtime's own account of the collector.
func gcMetrics() (percent int, heap, goal, cycles uint64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/goal:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return int(int32(s[0].Value.Uint64())), s[1].Value.Uint64(), s[2].Value.Uint64(), s[3].Value.Uint64()
}

// TestPauseGCHoldsTheNextCollection checks the collector's settings
// around a binary load against the runtime's own account
// (runtime/metrics): when the load resumes the collector it paused, the next collection's goal is the
// heap's size times (1 + GOGC/100), as if a collection had just marked
// it, where restoring GOGC alone put it at twice the heap marked before
// the load and started a collection at once; allocating a quarter of the
// heap more starts none; the first collection after brings GOGC back.
func TestPauseGCHoldsTheNextCollection(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	runtime.GC()
	resume := pauseGC()
	// 64 MiB of small objects, live to the end, as a snapshot is.
	keep := make([]*[256]byte, 64<<20/256)
	for i := range keep {
		keep[i] = new([256]byte)
	}
	resume()
	percent, heap, goal, cycles := gcMetrics()
	if percent <= 100 {
		t.Errorf("after the load GOGC is %d, want it raised above 100 until the next collection", percent)
	}
	if lo, hi := heap*19/10, heap*21/10; goal < lo || goal > hi {
		t.Errorf("after a load of %d MiB the next collection's goal is %d MiB, want %d-%d MiB (the heap as if marked, at GOGC 100)", heap>>20, goal>>20, lo>>20, hi>>20)
	}
	garbage := 0
	for range heap / 4 / 4096 {
		garbage += len(make([]byte, 4096, 4096+garbage%2))
	}
	if _, _, _, after := gcMetrics(); after != cycles {
		t.Errorf("allocating %d MiB after a load of %d MiB ran %d collection(s), want none", garbage>>20, heap>>20, after-cycles)
	}
	runtime.GC()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if percent, _, _, _ = gcMetrics(); percent == 100 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if percent != 100 {
		t.Errorf("after a collection GOGC is %d, want it back at 100", percent)
	}
	runtime.KeepAlive(keep)

	// With the collector off it stays off.
	debug.SetGCPercent(-1)
	resume = pauseGC()
	resume()
	if percent, _, _, _ = gcMetrics(); percent != -1 {
		t.Errorf("a load with GOGC=off set GOGC to %d", percent)
	}
}
