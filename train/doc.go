// Package train hands a rank's mini-batches to the user's trainer process
// (one per rank, i.e. per GPU) and ties their lives together.
//
// The trainer is a child process. Batches reach it without copies on its
// side: the input features are the device buffers themselves (memory of a
// memfd on the host backend, a CUDA IPC handle on a GPU), and the rest of a
// batch (block indices, labels, slots) is written into one of a few shared
// slots, also memfds. A Unix socket of sequenced packets, the child's file
// descriptor 3, carries the control messages: each batch's layout (JSON,
// with the descriptors of buffers the trainer has not seen yet), and back
// the trainer's word that it is done with a batch. Memfds have no name in
// /dev/shm, so whichever side dies, nothing is left behind.
//
// Either side failing ends both: the child dies with its gnnrun rank
// (PR_SET_PDEATHSIG, and the socket's end-of-file in the client), and a
// child that exits non-zero or is killed fails the rank, which fails the
// job. The Python client is python/gnnrun.
package train
