//go:build !linux

package snapshot

// growHeap does nothing where transparent huge pages are not advised
// (docs/design.md#the-snapshot-file).
func growHeap(int64) (start, end uintptr) { return 0, 0 }
