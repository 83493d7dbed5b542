// Package proc measures the running process: its CPU time, and Go CPU
// and peak-heap profiles of it, for the commands and benchmarks that
// report them.
package proc

import (
	"bytes"
	"fmt"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"syscall"
	"time"
)

// CPU returns the user and system CPU time the process has used so far,
// all its threads (0 where the system will not say): what a stage cost,
// whatever else shares the machine's cores.
func CPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// StartCPUProfile starts a Go CPU profile of the process into
// prefix.<rank> when prefix is not empty, and returns what stops it.
func StartCPUProfile(prefix string, rank int) (stop func(), err error) {
	if prefix == "" {
		return func() {}, nil
	}
	f, err := os.Create(fmt.Sprintf("%s.%d", prefix, rank))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// StartPeakHeapProfile watches the live heap after every garbage
// collection and keeps a Go heap profile taken when it was largest; the
// returned stop writes that profile to prefix.<rank> (for go tool pprof
// -sample_index=inuse_space). It does nothing when prefix is empty. The
// profile shows what held memory at the peak, as of the collection before
// it: where a command's peak RSS goes.
func StartPeakHeapProfile(prefix string, rank int) (stop func() error) {
	if prefix == "" {
		return func() error { return nil }
	}
	done := make(chan struct{})
	finished := make(chan []byte)
	go func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
		var best []byte
		var peak, cycle uint64
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				finished <- best
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			live, n := sample[0].Value.Uint64(), sample[1].Value.Uint64()
			if n == cycle || live <= peak+peak/20 { // a new collection, 5% above the last peak
				continue
			}
			cycle, peak = n, live
			var b bytes.Buffer
			if pprof.Lookup("heap").WriteTo(&b, 0) == nil {
				best = b.Bytes()
			}
		}
	}()
	return func() error {
		close(done)
		best := <-finished
		if best == nil {
			return nil
		}
		return os.WriteFile(fmt.Sprintf("%s.%d", prefix, rank), best, 0o644)
	}
}
