package graphio

import (
	"fmt"
	"math"

	"gnnrun/graph"
)

// RMAT is a Graph500-style R-MAT (stochastic Kronecker) edge generator:
// edge e picks one quadrant of the adjacency matrix per bit of the node IDs
// with probabilities a, b, c and d = 1-a-b-c. Its randomness is a function
// of (seed, e) only, so any rank can generate any edge and the graph does
// not depend on how many ranks generate it.
type RMAT struct {
	scale int
	seed  uint64
	// Cumulative quadrant thresholds per level, scaled to 2^32: after the
	// noise of Seshadhri, Pinar and Kolda's "noisy SKG", each level has its
	// own probabilities, which smooths the oscillating degree distribution
	// of plain R-MAT.
	ta, tb, tc []uint64
	permute    bool
	perm       permutation
}

// NewRMAT returns a generator of graphs with 2^scale nodes. noise in
// [0, 1) shifts each level's probabilities by mu, |mu| <= noise *
// min((a+d)/2, b, c) (0: plain R-MAT); permute relabels the nodes by a
// pseudo-random bijection, as Graph500 does, so that a node's ID does not
// predict its degree.
func NewRMAT(scale int, a, b, c, noise float64, seed uint64, permute bool) (*RMAT, error) {
	d := 1 - a - b - c
	switch {
	case scale < 1 || scale > 40:
		return nil, fmt.Errorf("graphio: R-MAT scale %d outside 1..40", scale)
	case a <= 0 || b < 0 || c < 0 || d < 0 || a+b+c > 1:
		return nil, fmt.Errorf("graphio: R-MAT probabilities a=%g b=%g c=%g must be >= 0 (a > 0) with a+b+c <= 1", a, b, c)
	case noise < 0 || noise >= 1:
		return nil, fmt.Errorf("graphio: R-MAT noise %g outside [0, 1)", noise)
	}
	r := &RMAT{scale: scale, seed: seed, permute: permute, perm: newPermutation(scale, seed)}
	for l := range scale {
		// mu in [-noise*m, noise*m] with m = min((a+d)/2, b, c) keeps every
		// probability non-negative.
		m := math.Min((a+d)/2, math.Min(b, c))
		u := float64(graph.Mix64(seed^0x5eed0f4e015e^uint64(l)*0x9e3779b97f4a7c15)>>11) / (1 << 53)
		mu := noise * m * (2*u - 1)
		al, bl, cl := a-2*mu*a/(a+d), b+mu, c+mu
		r.ta = append(r.ta, uint64(al*(1<<32)))
		r.tb = append(r.tb, uint64((al+bl)*(1<<32)))
		r.tc = append(r.tc, uint64((al+bl+cl)*(1<<32)))
	}
	return r, nil
}

// Nodes returns 2^scale.
func (r *RMAT) Nodes() int64 { return 1 << r.scale }

// Edge returns edge e's source and destination.
func (r *RMAT) Edge(e int64) (u, v int64) {
	st := graph.Mix64(r.seed ^ graph.Mix64(uint64(e)+0x632be59bd9b4e019))
	var x uint64
	for l := range r.scale {
		if l%2 == 0 {
			st += 0x9e3779b97f4a7c15
			x = graph.Mix64(st)
		} else {
			x >>= 32
		}
		p := x & 0xffffffff
		bit := int64(1) << (r.scale - 1 - l)
		switch {
		case p < r.ta[l]:
		case p < r.tb[l]:
			v |= bit
		case p < r.tc[l]:
			u |= bit
		default:
			u |= bit
			v |= bit
		}
	}
	if r.permute {
		u, v = r.perm.apply(u), r.perm.apply(v)
	}
	return u, v
}

// permutation is a keyed bijection of [0, 2^bits): rounds of
// multiplication by an odd number, addition and xor-shift, each invertible
// modulo 2^bits. It costs O(1) memory, where Graph500's shuffled array
// would cost O(N) on every rank.
type permutation struct {
	bits       int
	mask       uint64
	mul, add   [4]uint64
	shiftRight int
}

func newPermutation(bits int, seed uint64) permutation {
	p := permutation{bits: bits, mask: 1<<bits - 1, shiftRight: max(bits/2, 1)}
	for k := range p.mul {
		p.mul[k] = graph.Mix64(seed^0x7065726d^uint64(k)<<32) | 1
		p.add[k] = graph.Mix64(seed ^ 0x616464 ^ uint64(k)<<40)
	}
	return p
}

func (p permutation) apply(x int64) int64 {
	y := uint64(x)
	for k := range p.mul {
		y = (y*p.mul[k] + p.add[k]) & p.mask
		y ^= y >> p.shiftRight
	}
	return int64(y)
}

// unitFloat returns a uniform float in [0, 1) from a hash.
func unitFloat(h uint64) float64 { return float64(h>>11) / (1 << 53) }
