//go:build !nompi

package rank

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A window's reads of a rank on the same host go straight to that rank's
// memory with process_vm_readv (cross-memory attach), up to cmaIovecs
// blocks per system call, instead of through the MPI library: OpenMPI's
// osc/rdma over its shared-memory transport reads each block of a get
// with a call of its own, microseconds apiece, and the sampler's reads
// are hundreds of thousands of small blocks a batch. The exposed memory
// is read-only for the window's life (the partitions' arrays and the
// sampler's edge table), so a read needs no MPI epoch of its own; Flush
// still completes the gets that went through MPI.
//
// A peer is read so only when this rank reaches it: at the window's
// creation every rank publishes its process ID, its memory's address and
// length, and the address of 16 random bytes, and a peer counts only when
// reading those bytes through its process ID gives them back (a process
// on another host, in another PID namespace, or one whose memory the
// kernel will not let this one read, fails that test and is read through
// MPI). GNNRUN_CMA=off turns the path off on the ranks that see it.

// cmaIovecs is how many blocks one process_vm_readv call reads (the
// kernel's IOV_MAX).
const cmaIovecs = 1024

// cmaPeer is a rank whose window memory this rank reads directly.
type cmaPeer struct {
	pid  int
	base uintptr
	size int64
}

// cmaRecord is what every rank publishes at a window's creation.
const cmaRecord = 4*8 + 16

// setupCMA publishes this rank's window memory and returns, per rank, the
// peers it can read directly (nil where it reads through MPI). token must
// stay reachable, at its address, for the window's life. It is collective.
func (c *mpiComm) setupCMA(buf, token []byte) ([]*cmaPeer, error) {
	if _, err := rand.Read(token); err != nil {
		return nil, fmt.Errorf("rank: the window's token: %w", err)
	}
	rec := make([]byte, cmaRecord)
	var base uintptr
	if len(buf) > 0 {
		base = uintptr(unsafe.Pointer(&buf[0]))
	}
	binary.LittleEndian.PutUint64(rec[0:], uint64(os.Getpid()))
	binary.LittleEndian.PutUint64(rec[8:], uint64(base))
	binary.LittleEndian.PutUint64(rec[16:], uint64(len(buf)))
	binary.LittleEndian.PutUint64(rec[24:], uint64(uintptr(unsafe.Pointer(&token[0]))))
	copy(rec[32:], token)
	all := make([][]byte, c.size)
	for i := range all {
		all[i] = make([]byte, cmaRecord)
	}
	if err := c.Allgatherv(rec, all); err != nil {
		return nil, err
	}
	peers := make([]*cmaPeer, c.size)
	if os.Getenv("GNNRUN_CMA") == "off" {
		return peers, nil
	}
	for q, r := range all {
		if q == c.rank {
			continue // MPI reads a rank's own memory with a copy
		}
		p := &cmaPeer{pid: int(binary.LittleEndian.Uint64(r[0:])), base: uintptr(binary.LittleEndian.Uint64(r[8:])),
			size: int64(binary.LittleEndian.Uint64(r[16:]))}
		got := make([]byte, 16)
		at := uintptr(binary.LittleEndian.Uint64(r[24:]))
		if err := p.readv([]unix.Iovec{iovec(got)}, []unix.RemoteIovec{{Base: at, Len: 16}}, 16); err == nil && bytes.Equal(got, r[32:]) {
			peers[q] = p
		}
	}
	return peers, nil
}

func iovec(b []byte) unix.Iovec {
	v := unix.Iovec{Base: &b[0]}
	v.SetLen(len(b))
	return v
}

// readv reads the remote blocks into the local ones, want bytes in all.
func (p *cmaPeer) readv(local []unix.Iovec, remote []unix.RemoteIovec, want int) error {
	n, err := unix.ProcessVMReadv(p.pid, local, remote, 0)
	if err != nil {
		return fmt.Errorf("rank: process_vm_readv of %d blocks from process %d: %w", len(remote), p.pid, err)
	}
	if n != want {
		return fmt.Errorf("rank: process_vm_readv of %d blocks from process %d read %d of %d bytes", len(remote), p.pid, n, want)
	}
	return nil
}

// get reads count blocks, block i of size(i) bytes from byte src[i] of
// the peer's window memory into mem at byte dst[i], cmaIovecs blocks per
// call, and returns the bytes read. The callers have checked the blocks
// against mem.
func (p *cmaPeer) get(mem []byte, dst, src []int64, count int, size func(i int) int) (int64, error) {
	local := make([]unix.Iovec, 0, min(count, cmaIovecs))
	remote := make([]unix.RemoteIovec, 0, min(count, cmaIovecs))
	want, read := 0, int64(0)
	flush := func() error {
		if len(local) == 0 {
			return nil
		}
		err := p.readv(local, remote, want)
		if err == nil {
			read += int64(want)
		}
		local, remote, want = local[:0], remote[:0], 0
		return err
	}
	for i := range count {
		n := size(i)
		if n == 0 {
			continue
		}
		if src[i]+int64(n) > p.size {
			return read, fmt.Errorf("rank: window get of bytes [%d,%d) of a window of %d bytes", src[i], src[i]+int64(n), p.size)
		}
		local = append(local, iovec(mem[dst[i]:dst[i]+int64(n)]))
		remote = append(remote, unix.RemoteIovec{Base: p.base + uintptr(src[i]), Len: n})
		want += n
		if len(local) == cmaIovecs {
			if err := flush(); err != nil {
				return read, err
			}
		}
	}
	err := flush()
	return read, err
}
