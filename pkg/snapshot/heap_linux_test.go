//go:build linux

package snapshot

import (
	"bufio"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"unsafe"
)

// TestGrowHeapAdvisesHugePages checks growHeap against the kernel's own
// account (/proc/self/smaps): the range it returns is mapped with the
// huge-page advice ("hg" in VmFlags), and the heap's next allocations are
// made in it.
func TestGrowHeapAdvisesHugePages(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("this kernel has no transparent huge pages")
	}
	if start, end := growHeap(minHeapGrowth - 1); start != end {
		t.Fatalf("growHeap below minHeapGrowth advised %#x-%#x", start, end)
	}
	n := int64(4 * minHeapGrowth)
	before := residentBytes(t)
	start, end := growHeap(n)
	if start == end {
		t.Skip("growHeap advises nothing here (strict overcommit, a memory limit, little memory, or no madvise)")
	}
	// Advice, not memory: the pages are not touched (a chunk that reuses
	// memory the heap freed is cleared, and that memory was resident).
	if grown := residentBytes(t) - before; grown > n/4 {
		t.Errorf("growHeap(%d) made the process %d bytes larger", n, grown)
	}
	if end-start < uintptr(n)-hugePageSize {
		t.Fatalf("growHeap(%d) advised %d bytes (%#x-%#x)", n, end-start, start, end)
	}
	advised, err := advisedHuge(start, end)
	if err != nil {
		t.Fatal(err)
	}
	if !advised {
		t.Fatalf("%#x-%#x is not all mapped with the huge-page advice", start, end)
	}
	// growHeap grows nothing under a memory limit.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 40))
	if s, e := growHeap(n); s != e {
		t.Errorf("growHeap under a memory limit advised %#x-%#x", s, e)
	}
	// Allocate what a load does (many small objects) until one lands in the
	// range: the collection freed it, so it is the heap's free memory.
	var kept [][]*[64]byte
	for allocated := int64(0); ; allocated += 64 << 10 {
		if allocated > n {
			t.Fatalf("%d bytes allocated after growHeap and none in %#x-%#x", allocated, start, end)
		}
		batch := make([]*[64]byte, 1024)
		for i := range batch {
			batch[i] = new([64]byte)
		}
		kept = append(kept, batch)
		if p := uintptr(unsafe.Pointer(batch[len(batch)-1])); start <= p && p < end {
			break
		}
	}
	_ = kept
}

// advisedHuge says whether every mapping that overlaps [start, end) has the
// huge-page advice, and that some do.
func advisedHuge(start, end uintptr) (bool, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return false, err
	}
	defer f.Close()
	var lo, hi uintptr
	overlaps, seen, flags := false, false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if vmFlags, ok := strings.CutPrefix(line, "VmFlags:"); ok {
			flags = true
			if overlaps {
				seen = true
				if !strings.Contains(" "+vmFlags+" ", " hg ") {
					return false, nil
				}
			}
			continue
		}
		if _, err := fmt.Sscanf(line, "%x-%x ", &lo, &hi); err == nil && strings.Contains(line, " ") {
			overlaps = lo < end && start < hi
		}
	}
	if !flags {
		return false, fmt.Errorf("/proc/self/smaps says no VmFlags: this kernel cannot be asked")
	}
	return seen, sc.Err()
}

// residentBytes is the process's resident memory (/proc/self/statm).
func residentBytes(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatal(err)
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(data), &size, &resident); err != nil {
		t.Fatal(err)
	}
	return resident * int64(os.Getpagesize())
}
