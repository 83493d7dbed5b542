// Package rank is the SPMD world every gnnrun process runs in.
//
// A Comm is one communicator: the ranks of a job (or of a sub-group made by
// Split, Dup or SplitShared), with the raw collectives, one-sided windows and
// abort. Three implementations exist. The MPI one (mpi.go) is a thin cgo
// layer over OpenMPI's mpi.h, initialised with MPI_THREAD_MULTIPLE so any
// goroutine may call it; a process started without mpirun is a world of
// one. The local one (local.go) runs the ranks as goroutines of one process,
// for unit tests. The build tag nompi replaces the MPI one with a world of
// one that needs no MPI library and no cgo (solo.go, nompi.go): a local
// world of a single member whose Abort exits the process, for machines
// without MPI; it refuses to start when a launcher ran several ranks. MPI
// tells the two builds apart.
//
// The raw collectives move bytes and take one slice per peer. Every message
// must fit in an MPI count (MaxMessage bytes); splitting larger payloads into
// rounds, typing them and compressing them is the job of package collective.
package rank
