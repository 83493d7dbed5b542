package graphio

import (
	"encoding/binary"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/rank"
)

// EdgeHash returns the hash of one edge: its type and its endpoints'
// homogeneous IDs.
func EdgeHash(t int16, u, v int64) uint64 {
	return graph.Mix64(graph.Mix64(uint64(u)^0x243f6a8885a308d3) ^ (uint64(v)*0x9e3779b97f4a7c15 + uint64(uint16(t))<<48 + 0x13198a2e03707344))
}

// Checksum accumulates an order-independent checksum: the sum of hashes
// modulo 2^64, kept as four 16-bit limbs so the cross-rank sum of int64s
// never overflows (up to 2^47 hashes).
type Checksum struct{ limbs [4]int64 }

// Add adds one hash.
func (s *Checksum) Add(h uint64) {
	for k := range s.limbs {
		s.limbs[k] += int64(h >> (16 * k) & 0xffff)
	}
}

// AddEdges adds the hashes of every edge of e.
func (s *Checksum) AddEdges(e *graph.Edges) {
	for i := range e.Src {
		s.Add(EdgeHash(e.TypeOf(i), e.Src[i], e.Dst[i]))
	}
}

// Total combines the checksums of all ranks; it is collective.
func (s *Checksum) Total(c *collective.Comm) (uint64, error) {
	all, err := collective.Allreduce(c, s.limbs[:], rank.Sum)
	if err != nil {
		return 0, err
	}
	var h uint64
	for k, l := range all {
		h += uint64(l) << (16 * k)
	}
	return h, nil
}

// EdgeChecksum returns the checksum of the edge set held by all ranks: the
// same whatever the ranks and the order. It is collective.
func EdgeChecksum(c *collective.Comm, e *graph.Edges) (uint64, error) {
	var s Checksum
	s.AddEdges(e)
	return s.Total(c)
}

// rowHash hashes one row of an array with its global row index.
func rowHash(kind uint64, row int64, data []byte) uint64 {
	h := graph.Mix64(kind ^ uint64(row)*0x9e3779b97f4a7c15)
	for len(data) >= 8 {
		h = graph.Mix64(h ^ binary.LittleEndian.Uint64(data))
		data = data[8:]
	}
	var tail [8]byte
	copy(tail[:], data)
	return graph.Mix64(h ^ binary.LittleEndian.Uint64(tail[:]) ^ uint64(len(data)))
}

// addRows adds the hashes of the rows of t, the first of which has global
// index first.
func (s *Checksum) addRows(t *graph.Tensor, first int64) {
	rb := int64(t.RowBytes())
	for i := range t.Rows() {
		s.Add(rowHash(0x6e6f6465, first+i, t.Data[i*rb:(i+1)*rb]))
	}
}
