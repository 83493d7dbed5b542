package parmetis

import (
	"math/bits"

	"gnnrun/graph"
)

// RandomParts returns a balanced random partition of the vertices this rank
// owns: vertex v goes to part floor(pi(v) * k / N) for a pseudo-random
// permutation pi of [0, N) keyed by the seed, so parts differ in size by at
// most one vertex and the result does not depend on the rank count. It is
// the baseline every cut is compared with.
func RandomParts(g *DistGraph, k int, seed uint64) []int32 {
	partOf := RandomAssigner(g.N(), k, seed)
	part := make([]int32, g.NLocal())
	lo := g.Lo()
	for v := range part {
		part[v] = partOf(lo + int64(v))
	}
	return part
}

// RandomAssigner returns the part RandomParts gives each vertex ID of a
// graph of n vertices, as a function any rank can evaluate for any ID.
func RandomAssigner(n int64, k int, seed uint64) func(id int64) int32 {
	perm := newFeistel(n, seed)
	return func(id int64) int32 {
		hi, lo := bits.Mul64(uint64(perm.apply(id)), uint64(k))
		q, _ := bits.Div64(hi, lo, uint64(n))
		return int32(q)
	}
}

// feistel is a pseudo-random permutation of [0, n): a 4-round Feistel
// network over the smallest even number of bits covering n, with cycle
// walking to stay below n (under 4 steps on average).
type feistel struct {
	n    int64
	half uint
	mask uint64
	keys [4]uint64
}

func newFeistel(n int64, seed uint64) feistel {
	b := uint(bits.Len64(uint64(max(n-1, 1))))
	b += b & 1
	f := feistel{n: n, half: b / 2, mask: 1<<(b/2) - 1}
	for i := range f.keys {
		f.keys[i] = graph.Mix(seed, 0xfe157e1, uint64(i))
	}
	return f
}

func (f feistel) apply(x int64) int64 {
	for {
		x = int64(f.round(uint64(x)))
		if x < f.n {
			return x
		}
	}
}

func (f feistel) round(x uint64) uint64 {
	l, r := x>>f.half, x&f.mask
	for _, k := range f.keys {
		l, r = r, l^(graph.Mix(k, r)&f.mask)
	}
	return l<<f.half | r
}
