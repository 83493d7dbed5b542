// Package parallel runs a rank's tasks side by side on its share of the
// host's cores.
package parallel

import (
	"math"
	"sync"
	"sync/atomic"
)

// Run calls do(w, i) for every i in [0, n) on min(workers, n)
// goroutines, w being the goroutine's number, taking i in increasing order
// as goroutines come free. It returns the error of the lowest i that
// failed, the same whatever the timing: after a failure at i no task past
// i starts, and every task before it has already started.
func Run(workers, n int, do func(w, i int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var failed atomic.Int64
	failed.Store(math.MaxInt64)
	var wg sync.WaitGroup
	for w := range max(1, min(workers, n)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || i > failed.Load() {
					return
				}
				if errs[i] = do(w, int(i)); errs[i] != nil {
					for f := failed.Load(); i < f && !failed.CompareAndSwap(f, i); f = failed.Load() {
					}
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
