package snapshot

// heapPerFileByte is how many bytes of heap a load is made ready for per
// byte of the snapshot's files (growHeap): a binary file's objects take
// about 3.5 times its size, a JSON file's about 2.4 times, and the verb's
// work after the load more. Too much costs address space only.
const heapPerFileByte = 5

// minHeapGrowth is the least growth worth a collection: below it the load
// is small enough that its page faults do not matter.
const minHeapGrowth = 64 << 20
