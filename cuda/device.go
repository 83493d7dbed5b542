package cuda

import (
	"errors"
	"fmt"
)

// Kind names a backend.
type Kind int

// The backends.
const (
	// Host keeps device memory in ordinary memory.
	Host Kind = iota
	// CUDA is an NVIDIA GPU through the driver API.
	CUDA
	// Auto is CUDA when a GPU is there for the rank, else Host.
	Auto
)

var kindNames = [...]string{Host: "host", CUDA: "cuda", Auto: "auto"}

// String returns the kind's flag name.
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// ParseKind parses "host", "cuda" or "auto".
func ParseKind(s string) (Kind, error) {
	for k, n := range kindNames {
		if n == s {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("cuda: device %q is not host, cuda or auto", s)
}

// ErrNoGPU is wrapped by Open's error when the CUDA backend cannot run.
var ErrNoGPU = errors.New("no usable GPU")

// Device is one device's memory and streams. Its methods are safe to call
// from several goroutines.
type Device interface {
	// Name says which device it is, for reports.
	Name() string
	// Kind returns its backend.
	Kind() Kind
	// Alloc returns a buffer of n bytes, zeroed on the host backend and
	// uninitialised on a GPU; it fails when the device is out of memory.
	Alloc(n int64) (Buffer, error)
	// NewStream returns a stream: a queue of operations run in order.
	NewStream() (Stream, error)
	// Register makes mem, ordinary host memory, readable by the device's
	// kernels where it lies (page-locked and mapped into the device's
	// address space: on a GPU, cuMemHostRegister, portable and mapped), so
	// Stream.GatherPinned reads rows straight from it over PCIe with no
	// copy to the device first. mem must stay allocated and registered
	// until the gathers reading it completed; on a GPU, a page may belong
	// to one registration only, so register large allocations of their own
	// (a whole page-aligned mmap), not slices that share pages. It fails on
	// empty memory and where the driver refuses (page-locked memory is
	// taken out of the host's pageable RAM). The host backend only keeps
	// the slice.
	Register(mem []byte) (Pinned, error)
	// Close releases the device; its buffers, streams and registered
	// memory must be freed, closed and unregistered first.
	Close() error
}

// Buffer is device memory.
type Buffer interface {
	// Len returns its size in bytes.
	Len() int64
	// Host returns the memory itself on the host backend, nil on a GPU.
	// Reading it is safe only after an Event recorded behind the writes.
	Host() []byte
	// Free releases it; freeing twice is an error.
	Free() error
}

// Pinned is host memory registered with a device (Device.Register).
type Pinned interface {
	// Len returns its size in bytes.
	Len() int64
	// Unregister releases the registration, not the memory; the gathers
	// reading it must have completed (an Event recorded after them), and
	// unregistering twice is an error.
	Unregister() error
}

// Stream runs device operations in the order they were queued. Every
// operation returns once queued, not done: a host slice handed to it must
// stay unchanged, and a buffer it writes must not be read, until an Event
// recorded after it completes (or Sync returns). Errors of validation
// (offsets out of range, a row past a buffer) come back at once; an error
// while running comes back from the next Sync or Event.Wait.
type Stream interface {
	// CopyToDevice copies src to dst at byte off.
	CopyToDevice(dst Buffer, off int64, src []byte) error
	// CopyToHost copies len(dst) bytes of src from byte off into dst.
	CopyToHost(dst []byte, src Buffer, off int64) error
	// CopyDevice copies n bytes from src at srcOff to dst at dstOff.
	CopyDevice(dst Buffer, dstOff int64, src Buffer, srcOff, n int64) error
	// ScatterRows copies row k of host (rows of rowBytes) into row
	// slots[k] of dst: the rows a batch lacks, into the slots they take.
	ScatterRows(dst Buffer, slots []int32, host []byte, rowBytes int) error
	// CopyRows copies row srcRows[k] of src into row dstRows[k] of dst: a
	// gather by index between two buffers (src and dst must differ).
	CopyRows(dst Buffer, dstRows []int32, src Buffer, srcRows []int32, rowBytes int) error
	// MoveRows copies row from[k] of buf into row to[k]; no row may be
	// both read and written.
	MoveRows(buf Buffer, from, to []int32, rowBytes int) error
	// GatherPinned copies row srcRows[k] of the registered host memory src
	// (rows of rowBytes) into row dstRows[k] of dst (no row of dst named
	// twice: rows are copied in parallel): the zero-copy gather,
	// whose kernel reads only the rows it needs from host memory over
	// PCIe, where ScatterRows copies rows gathered on the host. The rows
	// of src are read when the gather runs, not when it is queued: they
	// must stay unchanged until an Event recorded after it completes. src
	// must be registered with the stream's device and stay so until then.
	GatherPinned(dst Buffer, dstRows []int32, src Pinned, srcRows []int32, rowBytes int) error
	// Record returns an event that completes when everything queued
	// before it has.
	Record() (Event, error)
	// Sync waits for everything queued and returns the first error.
	Sync() error
	// Close waits for the queue and releases the stream.
	Close() error
}

// Event marks a point in a stream.
type Event interface {
	// Wait blocks until the stream reached the event; it returns the
	// stream's first error, if any, up to that point.
	Wait() error
	// Close releases the event.
	Close()
}

// OpenOption changes how a device is opened.
type OpenOption func(*openOptions)

type openOptions struct{ shared bool }

// Shared makes every buffer of the device one another process can map
// (Export): on the host backend, memory of a memfd; on a GPU, memory a CUDA
// IPC handle opens.
func Shared() OpenOption { return func(o *openOptions) { o.shared = true } }

// Open opens device ordinal of the kind; Auto opens the CUDA device when
// one is usable and falls back to the host backend otherwise.
func Open(k Kind, ordinal int, opts ...OpenOption) (Device, error) {
	var o openOptions
	for _, opt := range opts {
		opt(&o)
	}
	switch k {
	case Host:
		return newHostDevice(o), nil
	case CUDA:
		return openCUDA(ordinal, o)
	case Auto:
		d, err := openCUDA(ordinal, o)
		if errors.Is(err, ErrNoGPU) {
			return newHostDevice(o), nil
		}
		return d, err
	}
	return nil, fmt.Errorf("cuda: unknown device kind %d", int(k))
}

// Handle lets another process map a buffer of a device opened Shared: on
// the host backend, a file descriptor of the memory (a memfd, passed over
// a Unix socket); on a GPU, a CUDA IPC handle.
type Handle struct {
	Kind Kind
	FD   int    // host: the memfd, owned by the buffer (do not close it)
	IPC  []byte // cuda: the IPC handle
	Size int64
}

// Export returns the handle of a buffer of a device opened Shared.
func Export(b Buffer) (Handle, error) {
	if e, ok := b.(interface{ export() (Handle, error) }); ok {
		return e.export()
	}
	return Handle{}, fmt.Errorf("cuda: this buffer cannot be shared with another process")
}

// checkRows checks that every index of rows is a row of a buffer of n
// bytes in rows of rowBytes.
func checkRows(what string, rows []int32, n int64, rowBytes int) error {
	limit := n / int64(rowBytes)
	for k, r := range rows {
		if r < 0 || int64(r) >= limit {
			return fmt.Errorf("cuda: %s %d is row %d; the buffer holds %d rows of %d bytes", what, k, r, limit, rowBytes)
		}
	}
	return nil
}

// checkSpan checks that [off, off+n) lies in a buffer of size bytes.
func checkSpan(what string, off, n, size int64) error {
	if off < 0 || n < 0 || off+n > size {
		return fmt.Errorf("cuda: %s of %d bytes at %d is outside a buffer of %d bytes", what, n, off, size)
	}
	return nil
}
