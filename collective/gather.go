package collective

import (
	"encoding/binary"
	"fmt"

	"gnnrun/rank"
)

// Allgatherv gathers every rank's slice on every rank: it returns them
// concatenated in rank order and the count each rank contributed.
// Contributions above the message limit go in rounds.
func Allgatherv[T any](c *Comm, local []T) ([]T, []int, error) {
	if err := checkPlain[T](); err != nil {
		return nil, nil, err
	}
	n := c.Size()
	sizes, err := allgatherInt64(c.Comm, int64(len(local)))
	if err != nil {
		return nil, nil, err
	}
	counts := make([]int, n)
	total, longest := 0, 0
	for i, s := range sizes {
		counts[i] = int(s)
		total += counts[i]
		longest = max(longest, counts[i])
	}
	all := make([]T, total)
	es := sizeOf[T]()
	lim := max(1, c.o.maxMessage/max(es, 1))
	views := make([][]T, n)
	off := 0
	for i, k := range counts {
		views[i] = all[off : off+k]
		off += k
	}
	recv := make([][]byte, n)
	for lo := 0; lo < longest; lo += lim {
		for i := range n {
			recv[i] = asBytes(clip(views[i], lo, lim))
		}
		if err := c.Comm.Allgatherv(asBytes(clip(local, lo, lim)), recv); err != nil {
			return nil, nil, err
		}
	}
	return all, counts, nil
}

// clip returns s[off:off+size] clipped to s.
func clip[T any](s []T, off, size int) []T {
	lo := min(off, len(s))
	return s[lo:min(off+size, len(s))]
}

// Allgather gathers one value per rank, in rank order.
func Allgather[T any](c *Comm, v T) ([]T, error) {
	all, _, err := Allgatherv(c, []T{v})
	return all, err
}

func allgatherInt64(c rank.Comm, v int64) ([]int64, error) {
	n := c.Size()
	buf := make([]byte, 8*(n+1))
	binary.LittleEndian.PutUint64(buf[8*n:], uint64(v))
	recv := make([][]byte, n)
	for i := range n {
		recv[i] = buf[8*i : 8*i+8]
	}
	if err := c.Allgatherv(buf[8*n:], recv); err != nil {
		return nil, err
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(recv[i]))
	}
	return out, nil
}

// Bcast returns root's data on every rank; other ranks' data is ignored.
func Bcast[T any](c *Comm, data []T, root int) ([]T, error) {
	if err := checkPlain[T](); err != nil {
		return nil, err
	}
	hdr := make([]byte, 8)
	if c.Rank() == root {
		binary.LittleEndian.PutUint64(hdr, uint64(len(data)))
	}
	if err := c.Comm.Bcast(hdr, root); err != nil {
		return nil, err
	}
	k := int(binary.LittleEndian.Uint64(hdr))
	out := data
	if c.Rank() != root {
		out = make([]T, k)
	}
	if len(out) != k {
		return nil, fmt.Errorf("collective: broadcast of %d elements into %d", k, len(out))
	}
	lim := max(1, c.o.maxMessage/max(sizeOf[T](), 1))
	for lo := 0; lo < k; lo += lim {
		if err := c.Comm.Bcast(asBytes(clip(out, lo, lim)), root); err != nil {
			return nil, err
		}
	}
	return out, nil
}
