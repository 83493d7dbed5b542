// Package rank is the SPMD world every gnnrun process runs in.
//
// A Comm is one communicator: the ranks of a job (or of a sub-group made by
// Split, Dup or SplitShared), with the raw collectives, one-sided windows and
// abort. Two implementations exist. The MPI one (mpi.go) is a thin cgo layer
// over OpenMPI's mpi.h, initialised with MPI_THREAD_MULTIPLE so any goroutine
// may call it; a process started without mpirun is a world of one. The local
// one (local.go) runs the ranks as goroutines of one process, for unit tests.
//
// The raw collectives move bytes and take one slice per peer. Every message
// must fit in an MPI count (MaxMessage bytes); splitting larger payloads into
// rounds, typing them and compressing them is the job of package collective.
package rank
