package main

// A simple seeded Graph500 R-MAT generator, temporary: the bench will use
// `gnnrun gen` once the ingest side has it.

import (
	"math/rand/v2"
	"slices"

	"gnnrun/parmetis/serial"
)

// rmat returns the Graph500 R-MAT graph of 2^scale vertices and
// edgeFactor*2^scale generated edges (a=0.57, b=c=0.19), vertex labels
// scrambled by a random permutation, symmetrised, with self loops and
// duplicate edges removed; isolated vertices are kept. Unit weights.
func rmat(scale, edgeFactor int, seed uint64) *serial.Graph {
	const a, b, c = 0.57, 0.19, 0.19
	n := 1 << scale
	rng := rand.New(rand.NewPCG(seed, 0x524d4154))
	perm := rng.Perm(n)
	m := edgeFactor * n
	arcs := make([]uint64, 0, 2*m)
	for range m {
		var u, v int
		for range scale {
			r := rng.Float64()
			u, v = u<<1, v<<1
			switch {
			case r < a:
			case r < a+b:
				v |= 1
			case r < a+b+c:
				u |= 1
			default:
				u, v = u|1, v|1
			}
		}
		u, v = perm[u], perm[v]
		if u != v {
			arcs = append(arcs, uint64(u)<<32|uint64(v), uint64(v)<<32|uint64(u))
		}
	}
	slices.Sort(arcs)
	arcs = slices.Compact(arcs)
	g := &serial.Graph{NCon: 1, Xadj: make([]int64, n+1), Adjncy: make([]int32, len(arcs)),
		Adjwgt: make([]int32, len(arcs)), Vwgt: make([]int64, n)}
	for i, x := range arcs {
		g.Xadj[x>>32+1]++
		g.Adjncy[i] = int32(uint32(x))
		g.Adjwgt[i] = 1
	}
	for v := range n {
		g.Xadj[v+1] += g.Xadj[v]
		g.Vwgt[v] = 1
	}
	return g
}
