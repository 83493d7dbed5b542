package parallel

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// Run returns the failure of the lowest task, whatever the timing,
// and runs every task when none fails.
func TestRunLowestError(t *testing.T) {
	for range 50 {
		var mu sync.Mutex
		ran := map[int]bool{}
		err := Run(4, 40, func(_, i int) error {
			mu.Lock()
			ran[i] = true
			mu.Unlock()
			if i == 9 || i == 21 || i == 30 {
				return fmt.Errorf("task %d", i)
			}
			return nil
		})
		if err == nil || err.Error() != "task 9" {
			t.Fatalf("got %v, want task 9's error", err)
		}
		for i := range 10 {
			if !ran[i] {
				t.Fatalf("task %d before the failure did not run", i)
			}
		}
	}
	var n atomic.Int64
	if err := Run(3, 17, func(_, i int) error { n.Add(1); return nil }); err != nil || n.Load() != 17 {
		t.Fatalf("err %v after %d tasks", err, n.Load())
	}
}
