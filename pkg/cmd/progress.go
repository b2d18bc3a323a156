package cmd

import (
	"fmt"
	"io"
	"sync"
	"time"

	"k8s.io/cli-runtime/pkg/printers"
)

// progressDelay is how long an operation runs before it earns a progress line.
const progressDelay = time.Second

// showProgress writes status() as a self-overwriting line on w while an
// operation runs, starting only after progressDelay and only when w is a
// terminal, so scripts and logs never see it. The returned stop clears the
// line and waits for the writer to finish.
func showProgress(w io.Writer, status func() string) (stop func()) {
	if !printers.IsTerminal(w) {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		timer := time.NewTimer(progressDelay)
		defer timer.Stop()
		select {
		case <-done:
			return
		case <-timer.C:
		}
		ticker := time.NewTicker(200 * time.Millisecond)
		defer ticker.Stop()
		for {
			fmt.Fprintf(w, "\r\033[K%s", status())
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-ticker.C:
			}
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
}
