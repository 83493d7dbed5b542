//go:build nompi

package rank

import (
	"fmt"
	"sync"

	"gnnrun/launch"
)

// MPI reports whether this build runs over an MPI library. It is false in a
// build with the tag nompi, which needs no MPI library (nor cgo) and whose
// World is always a world of one.
const MPI = false

var (
	soloOnce  sync.Once
	soloWorld *soloComm
	soloErr   error
)

// World returns the world of one this build runs in. It fails when a
// launcher (mpirun, srun, MPICH's hydra) started this process as one of
// several ranks: without MPI they cannot talk, so each would run the whole
// job alone and write over the others' outputs.
func World() (Comm, error) {
	soloOnce.Do(func() {
		if soloErr = checkAlone(); soloErr == nil {
			soloWorld = newSolo(soloHost())
		}
	})
	if soloErr != nil {
		return nil, soloErr
	}
	return soloWorld, nil
}

// checkAlone fails when the launcher's variables say this process is one
// rank of several.
func checkAlone() error {
	const advice = "this gnnrun is built without MPI (tag nompi) and runs as a world of one, so each rank would do the whole job alone and overwrite the others' outputs: run the MPI build of gnnrun for several ranks, or start this one as a single process"
	if n, v := launch.EnvWorldSize(); n > 1 {
		return fmt.Errorf("rank: the launcher started %d ranks (%s=%d), but %s", n, v, n, advice)
	}
	if r := launch.EnvWorldRank(); r > 0 {
		return fmt.Errorf("rank: the launcher started this process as rank %d, but %s", r, advice)
	}
	return nil
}

// Finalize implements the MPI build's Finalize: there is nothing to shut
// down, so it returns nil.
func Finalize() error { return nil }

// ThreadLevel returns "none": there is no MPI library to grant a thread
// level, and any goroutine may call the world of one.
func ThreadLevel() string { return "none" }

// LibraryVersion returns "none (tag nompi)": this build has no MPI library.
func LibraryVersion() string { return "none (tag nompi)" }
