package collective

import (
	"fmt"
)

// Exchange sends send[j] to rank j and returns what every rank sent here,
// indexed by source. len(send) must equal the communicator's size. What a
// rank sends itself is not copied: the result's slice for this rank is
// send[rank] itself.
func Exchange[T any](c *Comm, send [][]T) ([][]T, error) {
	return exchange(c, send, nil, false)
}

// ExchangeInto is Exchange receiving what rank i sends into bufs[i]'s
// memory when its capacity suffices (else into a new slice with an eighth
// to spare), as AlltoallvInto does: the result's slices alias bufs then,
// and passing the last result back as bufs reuses its memory. bufs may be
// nil or shorter than the communicator. (The sampler's two exchanges a
// layer, fresh slices each time, spent most of their time faulting in the
// new pages: R-MAT 20, 2 ranks, 0.50-0.68 s of 100 batches; reused,
// 0.13-0.24 s.)
func ExchangeInto[T any](c *Comm, send [][]T, bufs [][]T) ([][]T, error) {
	return exchange(c, send, bufs, true)
}

// exchange is Exchange into bufs, allocating with room to spare when
// spare says so.
func exchange[T any](c *Comm, send [][]T, bufs [][]T, spare bool) ([][]T, error) {
	if err := checkPlain[T](); err != nil {
		return nil, err
	}
	if len(send) != c.Size() {
		return nil, fmt.Errorf("collective: %d destinations for %d ranks", len(send), c.Size())
	}
	me := c.Rank()
	sb := make([][]byte, len(send))
	for j, s := range send {
		if j != me {
			sb[j] = asBytes(s)
		}
	}
	p, err := c.newPlan(sb)
	if err != nil {
		return nil, err
	}
	recv := make([][]T, c.Size())
	rb := make([][]byte, c.Size())
	for i, raw := range p.recvRaw {
		k, err := elements[T](raw, i)
		if err != nil {
			return nil, err
		}
		switch {
		case i < len(bufs) && i != me && cap(bufs[i]) >= k:
			recv[i] = bufs[i][:k]
		case spare:
			recv[i] = make([]T, k, k+k/8)
		default:
			recv[i] = make([]T, k)
		}
		rb[i] = asBytes(recv[i])
	}
	if err := c.transfer(p, rb); err != nil {
		return nil, err
	}
	recv[me] = send[me]
	return recv, nil
}

// Alltoallv is the flat form of Exchange: send holds the elements for rank 0,
// then rank 1, and so on, counts[j] of them for rank j. It returns the
// elements received, grouped by source in rank order, and how many came from
// each.
func Alltoallv[T any](c *Comm, send []T, counts []int) ([]T, []int, error) {
	return AlltoallvInto(c, send, counts, nil)
}

// AlltoallvInto is Alltoallv receiving into buf's memory when its capacity
// suffices (else into a new slice with an eighth to spare): a loop that
// exchanges similar volumes each step can reuse one buffer instead of
// faulting in fresh pages every time. The result aliases buf in that case.
// (Without the spare, volumes that drift up by a fraction of a percent a
// step, as the endpoint lookups' do, reallocated the buffer every step: the
// first all-to-all of each lookup round took 30-50 ms for 17 MB per peer,
// the same all-to-all repeated into the same buffer 10 ms.)
func AlltoallvInto[T any](c *Comm, send []T, counts []int, buf []T) ([]T, []int, error) {
	if err := checkPlain[T](); err != nil {
		return nil, nil, err
	}
	n := c.Size()
	if len(counts) != n {
		return nil, nil, fmt.Errorf("collective: alltoallv needs %d counts, got %d", n, len(counts))
	}
	sb := make([][]byte, n)
	off := 0
	for j, k := range counts {
		if k < 0 || off+k > len(send) {
			return nil, nil, fmt.Errorf("collective: alltoallv counts %v do not fit %d elements", counts, len(send))
		}
		sb[j] = asBytes(send[off : off+k])
		off += k
	}
	if off != len(send) {
		return nil, nil, fmt.Errorf("collective: alltoallv counts sum to %d, send holds %d", off, len(send))
	}
	p, err := c.newPlan(sb)
	if err != nil {
		return nil, nil, err
	}
	rc := make([]int, n)
	total := 0
	for i, raw := range p.recvRaw {
		if rc[i], err = elements[T](raw, i); err != nil {
			return nil, nil, err
		}
		total += rc[i]
	}
	recv := buf[:0]
	if cap(recv) >= total {
		recv = recv[:total]
	} else {
		recv = make([]T, total, total+total/8)
	}
	rb := make([][]byte, n)
	off = 0
	for i, k := range rc {
		rb[i] = asBytes(recv[off : off+k])
		off += k
	}
	if err := c.transfer(p, rb); err != nil {
		return nil, nil, err
	}
	return recv, rc, nil
}

// elements converts a byte count from rank src into a count of T.
func elements[T any](bytes, src int) (int, error) {
	es := sizeOf[T]()
	if es == 0 {
		return 0, fmt.Errorf("collective: zero-size element type cannot be sent")
	}
	if bytes%es != 0 {
		return 0, fmt.Errorf("collective: rank %d sent %d bytes, not a whole number of %d-byte elements", src, bytes, es)
	}
	return bytes / es, nil
}
