package framework

import (
	"context"
	"sync"
	"sync/atomic"
)

// DefaultParallelism is kube-scheduler's default number of workers.
const DefaultParallelism = 16

// parallelizer hands out pieces of work to a fixed number of goroutines in
// chunks, so that thousands of nodes do not start thousands of goroutines.
type parallelizer struct {
	workers int
}

// NewParallelizer returns a Parallelizer with a bounded number of workers.
func NewParallelizer(workers int) Parallelizer {
	if workers < 1 {
		workers = 1
	}
	return parallelizer{workers: workers}
}

// Until runs work(i) for every i in [0, pieces), stopping early when ctx ends.
func (p parallelizer) Until(ctx context.Context, pieces int, work func(piece int)) {
	if pieces <= 0 {
		return
	}
	workers := min(p.workers, pieces)
	if workers == 1 {
		for i := range pieces {
			if ctx.Err() != nil {
				return
			}
			work(i)
		}
		return
	}
	// Chunks of about sqrt(pieces) keep the shared counter cold.
	chunk := 1
	for chunk*chunk < pieces {
		chunk++
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				start := int(next.Add(int64(chunk))) - chunk
				if start >= pieces {
					return
				}
				for i := start; i < min(start+chunk, pieces); i++ {
					work(i)
				}
			}
		})
	}
	wg.Wait()
}
