package main

import (
	"os"
	"runtime"
	"strings"
	"syscall"
)

// freedPagesStay restarts the process, once, with madvdontneed=0 added to
// GODEBUG, unless GODEBUG names madvdontneed already. Go then returns the
// heap's freed pages to the kernel with MADV_FREE, which the kernel
// reclaims only under memory pressure, instead of MADV_DONTNEED, after
// which a reused page is faulted in and zeroed again. The stages free and
// allocate arrays of a rank's share of the graph one after the other. On
// the VM of bench/results, on a day its host made a fresh 4 KiB page cost
// 16 us (2.7 us on another), 2 ranks partitioning R-MAT scale 20 with
// planted communities (K = 4) spent 13.8-21.7 s in the partition stage
// with MADV_DONTNEED, 11.4-18.4 s with MADV_FREE (four pairs, alternated),
// at the same peak RSS. The runtime reads the setting only at start (a
// //go:debug line does not accept it), hence the exec; it happens before
// MPI is initialised, in the same process. Where the exec fails the
// process goes on as it is. GODEBUG=madvdontneed=1 keeps MADV_DONTNEED.
func freedPagesStay() {
	godebug := os.Getenv("GODEBUG")
	if runtime.GOOS != "linux" || strings.Contains(godebug, "madvdontneed=") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	setting := "madvdontneed=0"
	if godebug != "" {
		setting += "," + godebug
	}
	if os.Setenv("GODEBUG", setting) != nil {
		return
	}
	_ = syscall.Exec(exe, os.Args, os.Environ())
	os.Setenv("GODEBUG", godebug) // the exec failed: as it was
}
