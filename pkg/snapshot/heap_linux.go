//go:build linux

package snapshot

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePageSize is the size of a transparent huge page on the platforms Go
// supports on Linux (x86-64, arm64 with 4 KiB pages).
const hugePageSize = 2 << 20

// growHeap makes the heap n bytes larger, in memory the kernel backs with
// transparent huge pages where it can (docs/design.md#the-snapshot-file):
// it allocates one object of n bytes (new address space, never touched:
// the runtime does not clear memory fresh from the system), advises its
// pages MADV_HUGEPAGE, and frees it again with a collection (of a heap
// that holds little yet), so the load's objects are allocated in those
// pages. A 2 MiB page is one fault where 4 KiB pages are 512, and on
// machines where a fault is dear (virtual machines: 12 µs a page here) that
// was most of a binary load. It is advice only: with transparent huge
// pages off ("never") the kernel ignores it, with "always" it changes
// nothing, and a failure is ignored. n is capped at half the machine's
// memory so the address space asked for is never refused. It returns the
// advised range (none: start == end).
func growHeap(n int64) (start, end uintptr) {
	var info unix.Sysinfo_t
	if err := unix.Sysinfo(&info); err == nil {
		n = min(n, int64(info.Totalram)*int64(info.Unit)/2)
	}
	if n < minHeapGrowth || int64(int(n)) != n {
		return 0, 0
	}
	b := make([]byte, int(n))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	off := int((hugePageSize - base%hugePageSize) % hugePageSize)
	if whole := (len(b) - off) / hugePageSize * hugePageSize; whole > 0 {
		if unix.Madvise(b[off:off+whole], unix.MADV_HUGEPAGE) == nil {
			start, end = base+uintptr(off), base+uintptr(off+whole)
		}
	}
	runtime.KeepAlive(b) // b is dead after this: the collection frees it
	runtime.GC()
	return start, end
}
