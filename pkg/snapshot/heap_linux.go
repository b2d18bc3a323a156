//go:build linux

package snapshot

import (
	"os"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePageSize is the size of a transparent huge page on the platforms Go
// supports on Linux (x86-64, arm64 with 4 KiB pages).
const hugePageSize = 2 << 20

// growChunk is the size of growHeap's allocations.
const growChunk = 8 << 20

// growHeap makes the heap n bytes larger, in memory the kernel backs with
// transparent huge pages where it can (docs/design.md#the-snapshot-file):
// it allocates n bytes in chunks of 8 MiB (new address space, never
// touched: the runtime does not clear memory fresh from the system; a
// chunk that reuses memory the heap freed is cleared, so no more than that
// memory is touched, where one allocation of n bytes was cleared whole
// whenever its first pages had been used), advises their range
// MADV_HUGEPAGE, and frees them again with a collection (of a heap that
// holds little yet), so the load's objects are allocated in those pages.
// A 2 MiB page is one fault where 4 KiB pages are 512, and on machines
// where a fault is dear (virtual machines: 12 µs a page here) that was most
// of a binary load. It is advice only: with transparent huge pages off
// ("never") the kernel ignores it, with "always" it changes nothing, and a
// failure is ignored. n is capped at half the machine's memory so the
// address space asked for is never refused, and nothing is grown where
// growing could cost more than it saves: 32-bit address spaces, strict
// overcommit (vm.overcommit_memory 2 charges mapped heap against the
// commit limit, and the runtime stops when refused), or a memory limit
// (GOMEMLIMIT: every chunk past it would start a collection). It returns
// the advised range (none: start == end).
func growHeap(n int64) (start, end uintptr) {
	var info unix.Sysinfo_t
	if err := unix.Sysinfo(&info); err == nil {
		n = min(n, int64(info.Totalram)*int64(info.Unit)/2)
	}
	if n < minHeapGrowth || unsafe.Sizeof(uintptr(0)) < 8 || memoryLimited() {
		return 0, 0
	}
	if mode, err := os.ReadFile("/proc/sys/vm/overcommit_memory"); err != nil || strings.TrimSpace(string(mode)) == "2" {
		return 0, 0
	}
	chunks := make([][]byte, 0, n/growChunk+1)
	var lo, hi uintptr
	for got := int64(0); got < n; got += growChunk {
		b := make([]byte, growChunk)
		p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		if lo == 0 || p < lo {
			lo = p
		}
		hi = max(hi, p+growChunk)
		chunks = append(chunks, b)
	}
	// The chunks' range, in whole huge pages; the heap's other spans in it
	// are advised too, and a hole (not mapped) leaves ENOMEM, with the
	// advice taken where it is mapped.
	lo = (lo + hugePageSize - 1) / hugePageSize * hugePageSize
	hi = hi / hugePageSize * hugePageSize
	if lo < hi {
		_, _, errno := unix.Syscall(unix.SYS_MADVISE, lo, hi-lo, unix.MADV_HUGEPAGE)
		if errno == 0 || errno == unix.ENOMEM {
			start, end = lo, hi
		}
	}
	runtime.KeepAlive(chunks) // dead after this: the collection frees them
	runtime.GC()
	return start, end
}
