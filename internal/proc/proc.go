// Package proc measures the running process: its CPU time, and a Go CPU
// profile of it, for the commands and benchmarks that report either.
package proc

import (
	"fmt"
	"os"
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
