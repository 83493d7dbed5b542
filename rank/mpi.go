//go:build !nompi

package rank

/*
#cgo !mpich pkg-config: ompi-c
#cgo mpich pkg-config: mpich
#include <stdlib.h>
#include "mpi_c.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"
)

// MPI reports whether this build runs over an MPI library: true here, false
// in a build with the tag nompi.
const MPI = true

var (
	initOnce  sync.Once
	mpiWorld  *mpiComm
	initErr   error
	provided  int
	finalOnce sync.Once
)

// World initialises MPI with MPI_THREAD_MULTIPLE on first use and returns the
// world communicator; a process started without mpirun is a world of one.
// It fails if the library cannot give full thread support, which gnnrun needs
// because goroutines call MPI from whichever thread they run on.
func World() (Comm, error) {
	initOnce.Do(func() {
		// OpenMPI's own handlers for SIGSEGV and friends would replace the Go
		// runtime's, turning a recoverable nil dereference into an abort.
		if _, ok := os.LookupEnv("OMPI_MCA_opal_signal"); !ok {
			os.Setenv("OMPI_MCA_opal_signal", "")
		}
		var p C.int
		if rc := C.gn_init(&p); rc != C.MPI_SUCCESS {
			initErr = fmt.Errorf("rank: MPI_Init_thread: %w", mpiError(rc))
			return
		}
		provided = int(p)
		if p != C.MPI_THREAD_MULTIPLE {
			initErr = fmt.Errorf("rank: the MPI library provides thread level %s, gnnrun needs MPI_THREAD_MULTIPLE (rebuild or pick an MPI with thread support)", threadLevelName(provided))
			C.gn_abort(C.gn_world(), 1)
			return
		}
		mpiWorld, initErr = newMPIComm(C.gn_world(), &trafficCounter{})
	})
	if initErr != nil {
		return nil, initErr
	}
	return mpiWorld, nil
}

// Finalize shuts MPI down if it was initialised; call it once, at exit.
func Finalize() error {
	var err error
	finalOnce.Do(func() {
		var ini, fin C.int
		if C.gn_state(&ini, &fin) == C.MPI_SUCCESS && ini != 0 && fin == 0 {
			if rc := C.gn_finalize(); rc != C.MPI_SUCCESS {
				err = fmt.Errorf("rank: MPI_Finalize: %w", mpiError(rc))
			}
		}
	})
	return err
}

// ThreadLevel returns the thread support MPI granted, e.g. "MPI_THREAD_MULTIPLE".
func ThreadLevel() string { return threadLevelName(provided) }

func threadLevelName(level int) string {
	switch C.int(level) {
	case C.MPI_THREAD_SINGLE:
		return "MPI_THREAD_SINGLE"
	case C.MPI_THREAD_FUNNELED:
		return "MPI_THREAD_FUNNELED"
	case C.MPI_THREAD_SERIALIZED:
		return "MPI_THREAD_SERIALIZED"
	case C.MPI_THREAD_MULTIPLE:
		return "MPI_THREAD_MULTIPLE"
	}
	return fmt.Sprintf("thread level %d", level)
}

// LibraryVersion returns the MPI library's version string, first line only.
func LibraryVersion() string {
	buf := make([]byte, C.MPI_MAX_LIBRARY_VERSION_STRING)
	var n C.int
	if C.gn_library_version((*C.char)(unsafe.Pointer(&buf[0])), &n) != C.MPI_SUCCESS {
		return "unknown"
	}
	s := string(buf[:n])
	for i, r := range s {
		if r == '\n' || r == ',' {
			return s[:i]
		}
	}
	return s
}

func mpiError(rc C.int) error {
	buf := make([]byte, C.MPI_MAX_ERROR_STRING)
	var n C.int
	C.gn_error_string(rc, (*C.char)(unsafe.Pointer(&buf[0])), &n)
	return fmt.Errorf("MPI error %d: %s", int(rc), string(buf[:n]))
}

// mpiComm is a communicator of the MPI world, held as a Fortran handle.
type mpiComm struct {
	h       C.MPI_Fint
	rank    int
	size    int
	host    string
	traffic *trafficCounter
}

func newMPIComm(h C.MPI_Fint, t *trafficCounter) (*mpiComm, error) {
	var r, s C.int
	if rc := C.gn_comm_rank(h, &r); rc != C.MPI_SUCCESS {
		return nil, fmt.Errorf("rank: MPI_Comm_rank: %w", mpiError(rc))
	}
	if rc := C.gn_comm_size(h, &s); rc != C.MPI_SUCCESS {
		return nil, fmt.Errorf("rank: MPI_Comm_size: %w", mpiError(rc))
	}
	buf := make([]byte, C.MPI_MAX_PROCESSOR_NAME)
	var n C.int
	host := "unknown"
	if C.gn_processor_name((*C.char)(unsafe.Pointer(&buf[0])), &n) == C.MPI_SUCCESS {
		host = string(buf[:n])
	}
	return &mpiComm{h: h, rank: int(r), size: int(s), host: host, traffic: t}, nil
}

func (c *mpiComm) Rank() int    { return c.rank }
func (c *mpiComm) Size() int    { return c.size }
func (c *mpiComm) Host() string { return c.host }
func (c *mpiComm) Traffic() Traffic {
	return Traffic{Sent: c.traffic.sent.Load(), Received: c.traffic.received.Load()}
}

func check(what string, rc C.int) error {
	if rc != C.MPI_SUCCESS {
		return fmt.Errorf("rank: %s: %w", what, mpiError(rc))
	}
	return nil
}

// addresses pins every non-empty buffer and returns C arrays of their
// addresses and lengths, which MPI may hold until the call returns.
func addresses(p *runtime.Pinner, bufs [][]byte) ([]C.uintptr_t, []C.int) {
	ptrs := make([]C.uintptr_t, len(bufs))
	counts := make([]C.int, len(bufs))
	for i, b := range bufs {
		counts[i] = C.int(len(b))
		if len(b) > 0 {
			p.Pin(&b[0])
			ptrs[i] = C.uintptr_t(uintptr(unsafe.Pointer(&b[0])))
		}
	}
	return ptrs, counts
}

// Alltoallv implements Comm, with point-to-point messages (see
// gn_alltoallv for why not MPI_Ialltoallv).
func (c *mpiComm) Alltoallv(send, recv [][]byte) error {
	if err := c.alltoallv(send, recv, false); err != nil {
		return err
	}
	c.traffic.add(peerBytes(send, c.rank), peerBytes(recv, c.rank))
	return nil
}

// plainAlltoallv is one blocking MPI_Alltoallv (see PlainAlltoallv).
func (c *mpiComm) plainAlltoallv(send, recv [][]byte) error { return c.alltoallv(send, recv, true) }

// alltoallv hands the messages to gn_alltoallv, or with plain to
// gn_alltoallv_plain.
func (c *mpiComm) alltoallv(send, recv [][]byte, plain bool) error {
	if err := checkMessages(c.size, send, recv); err != nil {
		return err
	}
	var p runtime.Pinner
	defer p.Unpin()
	sp, sc := addresses(&p, send)
	rp, rc := addresses(&p, recv)
	n := C.int(c.size)
	if plain {
		return check("MPI_Alltoallv", C.gn_alltoallv_plain(c.h, n, &sp[0], &sc[0], &rp[0], &rc[0]))
	}
	return check("MPI_Alltoallv", C.gn_alltoallv(c.h, n, &sp[0], &sc[0], &rp[0], &rc[0]))
}

// Allgatherv implements Comm.
func (c *mpiComm) Allgatherv(send []byte, recv [][]byte) error {
	if len(recv) != c.size {
		return fmt.Errorf("rank: allgatherv needs %d receive slices, got %d", c.size, len(recv))
	}
	if len(send) > MaxMessage {
		return fmt.Errorf("rank: allgatherv contribution of %d bytes exceeds the MPI limit of %d", len(send), MaxMessage)
	}
	if len(recv[c.rank]) != len(send) {
		return fmt.Errorf("rank: allgatherv: rank %d contributes %d bytes but reserves %d for itself", c.rank, len(send), len(recv[c.rank]))
	}
	var p runtime.Pinner
	defer p.Unpin()
	rp, rc := addresses(&p, recv)
	sp, _ := addresses(&p, [][]byte{send})
	if err := check("MPI_Allgatherv", C.gn_allgatherv(c.h, C.int(c.size), sp[0], C.int(len(send)), &rp[0], &rc[0])); err != nil {
		return err
	}
	c.traffic.add(int64(len(send))*int64(c.size-1), peerBytes(recv, c.rank))
	return nil
}

// reduceChunk bounds one MPI_Allreduce call to well under 2^31 elements.
const reduceChunk = 1 << 24

// AllreduceInt64 implements Comm.
func (c *mpiComm) AllreduceInt64(in, out []int64, op Op) error {
	return allreduceMPI(c, in, out, op, 0)
}

// AllreduceFloat64 implements Comm.
func (c *mpiComm) AllreduceFloat64(in, out []float64, op Op) error {
	return allreduceMPI(c, in, out, op, 1)
}

func allreduceMPI[T int64 | float64](c *mpiComm, in, out []T, op Op, isFloat C.int) error {
	if len(in) != len(out) {
		return fmt.Errorf("rank: allreduce of %d values into %d", len(in), len(out))
	}
	// The slices may lie inside objects that hold pointers (a counter in a
	// struct), which cgo refuses to see; pinned, they go as addresses.
	var p runtime.Pinner
	defer p.Unpin()
	for lo := 0; lo < len(in); lo += reduceChunk {
		hi := min(lo+reduceChunk, len(in))
		p.Pin(&in[lo])
		p.Pin(&out[lo])
		ip, op2 := C.uintptr_t(uintptr(unsafe.Pointer(&in[lo]))), C.uintptr_t(uintptr(unsafe.Pointer(&out[lo])))
		if err := check("MPI_Allreduce", C.gn_allreduce(c.h, isFloat, ip, op2, C.int(hi-lo), C.int(op))); err != nil {
			return err
		}
	}
	if c.size > 1 {
		c.traffic.add(int64(len(in))*8, int64(len(in))*8)
	}
	return nil
}

// Bcast implements Comm, in pieces of at most MaxMessage bytes.
func (c *mpiComm) Bcast(buf []byte, root int) error {
	if root < 0 || root >= c.size {
		return fmt.Errorf("rank: broadcast root %d out of range [0,%d)", root, c.size)
	}
	for lo := 0; lo < len(buf); lo += MaxMessage {
		hi := min(lo+MaxMessage, len(buf))
		if err := check("MPI_Bcast", C.gn_bcast(c.h, unsafe.Pointer(&buf[lo]), C.int(hi-lo), C.int(root))); err != nil {
			return err
		}
	}
	if c.rank == root {
		c.traffic.add(int64(len(buf))*int64(c.size-1), 0)
	} else {
		c.traffic.add(0, int64(len(buf)))
	}
	return nil
}

// Barrier implements Comm.
func (c *mpiComm) Barrier() error { return check("MPI_Barrier", C.gn_barrier(c.h)) }

// Split implements Comm.
func (c *mpiComm) Split(color, key int) (Comm, error) {
	if color < 0 {
		return nil, fmt.Errorf("rank: split color must be non-negative, got %d", color)
	}
	var h C.MPI_Fint
	if err := check("MPI_Comm_split", C.gn_split(c.h, C.int(color), C.int(key), &h)); err != nil {
		return nil, err
	}
	return newMPIComm(h, c.traffic)
}

// Dup implements Comm.
func (c *mpiComm) Dup() (Comm, error) {
	var h C.MPI_Fint
	if err := check("MPI_Comm_dup", C.gn_dup(c.h, &h)); err != nil {
		return nil, err
	}
	return newMPIComm(h, c.traffic)
}

// SplitShared implements Comm.
func (c *mpiComm) SplitShared() (Comm, error) {
	var h C.MPI_Fint
	if err := check("MPI_Comm_split_type", C.gn_split_shared(c.h, &h)); err != nil {
		return nil, err
	}
	return newMPIComm(h, c.traffic)
}

// Free implements Comm.
func (c *mpiComm) Free() error {
	if c == mpiWorld {
		return fmt.Errorf("rank: the world communicator cannot be freed")
	}
	return check("MPI_Comm_free", C.gn_comm_free(c.h))
}

// Abort implements Comm: MPI_Abort ends every process of the job.
func (c *mpiComm) Abort(code int) {
	C.gn_abort(c.h, C.int(code))
	os.Exit(code)
}

// CreateWindow implements Comm.
func (c *mpiComm) CreateWindow(buf []byte) (Window, error) {
	if c.size == 1 {
		// OpenMPI 4.1 has no one-sided component for a lone process (osc/rdma
		// needs a second rank's BTL), and a read of one's own memory is a copy.
		return &localWindow{mem: [][]byte{buf}, traffic: c.traffic, free: func() error { return nil }}, nil
	}
	w := &mpiWindow{c: c, pins: map[int]*runtime.Pinner{}}
	var base unsafe.Pointer
	if len(buf) > 0 {
		w.mem.Pin(&buf[0])
		base = unsafe.Pointer(&buf[0])
	}
	if err := check("MPI_Win_create", C.gn_win_create(c.h, base, C.int64_t(len(buf)), &w.h)); err != nil {
		w.mem.Unpin()
		return nil, err
	}
	w.token = make([]byte, 16)
	var err error
	if w.cma, err = c.setupCMA(buf, w.token); err != nil {
		return nil, errors.Join(err, w.Free())
	}
	return w, nil
}

// mpiWindow is an MPI window. The exposed memory stays pinned until Free,
// and each Get's destination until the flush that completes it.
type mpiWindow struct {
	c    *mpiComm
	h    C.MPI_Fint
	mem  runtime.Pinner
	pins map[int]*runtime.Pinner
	// cma holds, per rank, the peer this rank reads directly (cma.go), nil
	// where reads go through MPI; token is what peers read to prove it.
	cma   []*cmaPeer
	token []byte
}

func (w *mpiWindow) LockAll() error { return check("MPI_Win_lock_all", C.gn_win_lock_all(w.h)) }

func (w *mpiWindow) Get(dst []byte, target int, offset int64) error {
	if target < 0 || target >= w.c.size {
		return fmt.Errorf("rank: window get from rank %d of %d", target, w.c.size)
	}
	if offset < 0 {
		return fmt.Errorf("rank: window get at negative offset %d", offset)
	}
	if len(dst) == 0 {
		return nil
	}
	if peer := w.cmaPeer(target); peer != nil {
		return w.getDirect(peer, dst, []int64{0}, []int64{offset}, 1, func(int) int { return len(dst) })
	}
	p := w.pins[target]
	if p == nil {
		p = new(runtime.Pinner)
		w.pins[target] = p
	}
	p.Pin(&dst[0])
	for lo := 0; lo < len(dst); lo += MaxMessage {
		hi := min(lo+MaxMessage, len(dst))
		if err := check("MPI_Get", C.gn_win_get(w.h, unsafe.Pointer(&dst[lo]), C.int(hi-lo), C.int(target), C.int64_t(offset+int64(lo)))); err != nil {
			return err
		}
	}
	if target != w.c.rank {
		w.c.traffic.add(0, int64(len(dst)))
	}
	return nil
}

// getBlocksChunk bounds the blocks of one MPI_Get, keeping its datatypes'
// displacement arrays small.
const getBlocksChunk = 1 << 16

func (w *mpiWindow) GetBlocks(mem []byte, dst []int64, target int, src []int64, size int) error {
	if err := checkBlocks(mem, dst, src, size); err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
	if peer := w.cmaPeer(target); peer != nil {
		return w.getDirect(peer, mem, dst, src, len(dst), func(int) int { return size })
	}
	return w.getChunked(mem, target, len(dst), int64(len(dst))*int64(size), func(addr C.uintptr_t, lo, hi int) C.int {
		return C.gn_win_get_blocks(w.h, addr, (*C.int64_t)(unsafe.Pointer(&dst[lo])), C.int(target),
			(*C.int64_t)(unsafe.Pointer(&src[lo])), C.int(hi-lo), C.int(size))
	})
}

func (w *mpiWindow) GetRanges(mem []byte, dst []int64, target int, src []int64, sizes []int) error {
	if err := checkRanges(mem, dst, src, sizes); err != nil {
		return err
	}
	if peer := w.cmaPeer(target); peer != nil {
		return w.getDirect(peer, mem, dst, src, len(dst), func(i int) int { return sizes[i] })
	}
	// Empty ranges need no datatype entry.
	var d, s []int64
	var lens []C.int
	total := int64(0)
	for i, n := range sizes {
		if n > 0 {
			d, s, lens = append(d, dst[i]), append(s, src[i]), append(lens, C.int(n))
			total += int64(n)
		}
	}
	return w.getChunked(mem, target, len(d), total, func(addr C.uintptr_t, lo, hi int) C.int {
		return C.gn_win_get_ranges(w.h, addr, (*C.int64_t)(unsafe.Pointer(&d[lo])), C.int(target),
			(*C.int64_t)(unsafe.Pointer(&s[lo])), (*C.int)(unsafe.Pointer(&lens[lo])), C.int(hi-lo))
	})
}

// getChunked starts the get of count blocks (bytes in all) into mem from
// target, in operations of at most getBlocksChunk blocks that get issues:
// it checks the target, pins mem until the flush and counts the traffic.
func (w *mpiWindow) getChunked(mem []byte, target, count int, bytes int64, get func(addr C.uintptr_t, lo, hi int) C.int) error {
	if target < 0 || target >= w.c.size {
		return fmt.Errorf("rank: window get from rank %d of %d", target, w.c.size)
	}
	if count == 0 || bytes == 0 {
		return nil
	}
	p := w.pins[target]
	if p == nil {
		p = new(runtime.Pinner)
		w.pins[target] = p
	}
	p.Pin(&mem[0])
	addr := C.uintptr_t(uintptr(unsafe.Pointer(&mem[0])))
	for lo := 0; lo < count; lo += getBlocksChunk {
		if err := check("MPI_Get", get(addr, lo, min(lo+getBlocksChunk, count))); err != nil {
			return err
		}
	}
	if target != w.c.rank {
		w.c.traffic.add(0, bytes)
	}
	return nil
}

// getDirect reads blocks from a peer on this host (cmaPeer.get) and
// counts the bytes as traffic, as getChunked does for MPI's gets.
func (w *mpiWindow) getDirect(peer *cmaPeer, mem []byte, dst, src []int64, count int, size func(int) int) error {
	n, err := peer.get(mem, dst, src, count, size)
	w.c.traffic.add(0, n)
	return err
}

// cmaPeer returns target when this rank reads its memory directly, else
// nil (a target out of range included: the MPI path reports it).
func (w *mpiWindow) cmaPeer(target int) *cmaPeer {
	if target < 0 || target >= len(w.cma) {
		return nil
	}
	return w.cma[target]
}

func (w *mpiWindow) Flush(target int) error {
	err := check("MPI_Win_flush", C.gn_win_flush(w.h, C.int(target)))
	if p := w.pins[target]; p != nil && err == nil {
		p.Unpin()
	}
	return err
}

func (w *mpiWindow) unpinAll() {
	for _, p := range w.pins {
		p.Unpin()
	}
}

func (w *mpiWindow) FlushAll() error {
	err := check("MPI_Win_flush_all", C.gn_win_flush_all(w.h))
	if err == nil {
		w.unpinAll()
	}
	return err
}

func (w *mpiWindow) UnlockAll() error {
	err := check("MPI_Win_unlock_all", C.gn_win_unlock_all(w.h))
	if err == nil {
		w.unpinAll()
	}
	return err
}

func (w *mpiWindow) Free() error {
	err := check("MPI_Win_free", C.gn_win_free(w.h))
	w.mem.Unpin()
	return err
}
