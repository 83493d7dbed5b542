// Package cuda is gnnrun's device layer: the memory a trainer's batches
// land in, and the operations the pipeline's device stage needs on it —
// allocate and free, copy from the host and back, scatter host rows into
// slots, copy rows between buffers by index, move rows within one, and
// gather rows straight from registered host memory.
//
// Two backends implement Device. The host backend (Host) keeps "device"
// memory in ordinary memory; it runs everywhere and carries every test.
// Its streams execute their operations in order on a goroutine of their
// own, as a GPU stream does, so a caller that reads a buffer or reuses a
// host slice before waiting on the right Event is wrong here as it would be
// on a GPU. The CUDA backend loads the driver at run time and the kernels
// of kernels/*.cu as PTX built ahead of time (make kernels, clang-16, no
// CUDA SDK), embedded and JIT-compiled by the driver; the same sources run
// on the CPU in the harnesses the tests check against the host backend.
//
// Only this package touches a GPU; everything above it speaks Device,
// Buffer, Stream and Event.
package cuda
