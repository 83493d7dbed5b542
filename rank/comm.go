package rank

import (
	"errors"
	"fmt"
	"math"
)

// MaxMessage is the largest message, in bytes, a raw collective accepts for
// one peer: MPI counts are C ints.
const MaxMessage = math.MaxInt32

// ErrAborted is returned by collectives of a local world after one of its
// ranks failed or aborted; the MPI world never returns it, because MPI_Abort
// ends every process.
var ErrAborted = errors.New("rank: world aborted")

// Op is a reduction operator of Allreduce.
type Op int

// The reduction operators.
const (
	Sum Op = iota
	Min
	Max
)

// String returns the operator's name.
func (o Op) String() string {
	switch o {
	case Sum:
		return "sum"
	case Min:
		return "min"
	case Max:
		return "max"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Traffic counts the payload bytes a rank sent to and received from other
// ranks through a communicator and the ones derived from it (messages to
// itself are not counted).
type Traffic struct {
	Sent, Received int64
}

// Comm is a communicator: a group of ranks that take part in collectives
// together. Every collective must be called by every rank of the group, in
// the same order; a Comm may be used by several goroutines, but two
// goroutines must not run collectives on the same Comm at the same time.
type Comm interface {
	// Rank returns this rank's index in the group, 0 <= Rank < Size.
	Rank() int
	// Size returns the number of ranks in the group.
	Size() int
	// Host returns the name of the machine this rank runs on.
	Host() string

	// Alltoallv sends send[j] to rank j and receives rank i's message into
	// recv[i]. len(send) and len(recv) must equal Size, and len(recv[i]) must
	// equal what rank i sends here (callers exchange sizes first). No message
	// may exceed MaxMessage bytes.
	Alltoallv(send, recv [][]byte) error
	// Allgatherv sends send to every rank and receives rank i's contribution
	// into recv[i], whose length must equal it.
	Allgatherv(send []byte, recv [][]byte) error
	// AllreduceInt64 combines in element-wise over all ranks into out (which
	// may alias in); every rank passes slices of the same length.
	AllreduceInt64(in, out []int64, op Op) error
	// AllreduceFloat64 is AllreduceInt64 for float64.
	AllreduceFloat64(in, out []float64, op Op) error
	// Bcast copies root's buf into buf on every other rank; all ranks pass
	// slices of the same length.
	Bcast(buf []byte, root int) error
	// Barrier returns once every rank has entered it.
	Barrier() error

	// Split partitions the group by color; ranks of one color form a new
	// communicator ordered by key, then by old rank.
	Split(color, key int) (Comm, error)
	// Dup returns a communicator with the same group and its own message
	// space, so a library can talk on it without colliding with its caller.
	Dup() (Comm, error)
	// SplitShared returns the node-local communicator: the ranks of this
	// group that share memory with this rank (MPI_COMM_TYPE_SHARED).
	SplitShared() (Comm, error)

	// CreateWindow exposes buf to one-sided reads by every rank of the group.
	// It is collective; buf must not move or be freed until Window.Free.
	CreateWindow(buf []byte) (Window, error)

	// Traffic returns the bytes this rank has moved through this
	// communicator and those derived from it.
	Traffic() Traffic
	// Free releases the communicator; it is collective.
	Free() error
	// Abort ends every rank of the job with the exit code. In a local world
	// it ends the calling goroutine and fails the world's other ranks.
	Abort(code int)
}

// PlainAlltoallv is one blocking MPI_Alltoallv of send and recv, whose
// slices must lie within 2 GiB of each other, where c is an MPI
// communicator (c's own Alltoallv elsewhere): the library's all-to-all
// as it comes, for benchmarks to measure against. Call it from one
// goroutine at a time (see gn_alltoallv).
func PlainAlltoallv(c Comm, send, recv [][]byte) error {
	if p, ok := c.(interface {
		plainAlltoallv(send, recv [][]byte) error
	}); ok {
		return p.plainAlltoallv(send, recv)
	}
	return c.Alltoallv(send, recv)
}

// Window is memory every rank of a communicator exposed for one-sided reads
// (an MPI window). Reads happen in a passive-target epoch: LockAll, any
// number of Gets, Flush, UnlockAll. The target's CPU takes no part.
type Window interface {
	// LockAll starts a shared access epoch to every rank's memory.
	LockAll() error
	// Get starts a read of len(dst) bytes from target's memory at offset.
	// dst must not be read or reused until Flush(target) or FlushAll.
	Get(dst []byte, target int, offset int64) error
	// GetBlocks starts reading len(src) blocks of size bytes from target's
	// memory, block i from byte src[i], into dst at byte dst[i]: one
	// operation however many rows, where a Get per row would pay the
	// per-operation latency each time. mem must not be read or reused until
	// the flush.
	GetBlocks(mem []byte, dst []int64, target int, src []int64, size int) error
	// GetRanges is GetBlocks with blocks of their own lengths: block i is
	// sizes[i] bytes from target's byte src[i] into mem at dst[i].
	GetRanges(mem []byte, dst []int64, target int, src []int64, sizes []int) error
	// Flush completes every Get to target.
	Flush(target int) error
	// FlushAll completes every outstanding Get.
	FlushAll() error
	// UnlockAll ends the access epoch, completing outstanding Gets.
	UnlockAll() error
	// Free releases the window; it is collective.
	Free() error
}

// checkBlocks validates the block lists of a GetBlocks into mem.
func checkBlocks(mem []byte, dst, src []int64, size int) error {
	if len(dst) != len(src) {
		return fmt.Errorf("rank: %d destination and %d source offsets", len(dst), len(src))
	}
	if size < 0 || size > MaxMessage {
		return fmt.Errorf("rank: block size %d outside [0,%d]", size, MaxMessage)
	}
	for i, d := range dst {
		if d < 0 || d+int64(size) > int64(len(mem)) || src[i] < 0 {
			return fmt.Errorf("rank: block %d: destination [%d,%d) outside %d bytes, or source offset %d negative", i, d, d+int64(size), len(mem), src[i])
		}
	}
	return nil
}

// checkRanges validates the block lists of a GetRanges into mem.
func checkRanges(mem []byte, dst, src []int64, sizes []int) error {
	if len(dst) != len(src) || len(dst) != len(sizes) {
		return fmt.Errorf("rank: %d destination offsets, %d source offsets and %d sizes", len(dst), len(src), len(sizes))
	}
	for i, d := range dst {
		if n := sizes[i]; n < 0 || n > MaxMessage || d < 0 || d+int64(n) > int64(len(mem)) || src[i] < 0 {
			return fmt.Errorf("rank: range %d: destination [%d,%d) outside %d bytes, or source offset %d negative", i, d, d+int64(n), len(mem), src[i])
		}
	}
	return nil
}

// checkMessages validates the per-peer slices of a raw collective.
func checkMessages(size int, send, recv [][]byte) error {
	if len(send) != size || len(recv) != size {
		return fmt.Errorf("rank: alltoallv needs %d send and receive slices, got %d and %d", size, len(send), len(recv))
	}
	for j := range size {
		if len(send[j]) > MaxMessage || len(recv[j]) > MaxMessage {
			return fmt.Errorf("rank: message of %d bytes to/from rank %d exceeds the MPI limit of %d", max(len(send[j]), len(recv[j])), j, MaxMessage)
		}
	}
	return nil
}
