package serial

import (
	"fmt"
	"math"
)

// Graph is a symmetric, weighted graph in CSR form with local vertex indices:
// the neighbours of v are Adjncy[Xadj[v]:Xadj[v+1]] with edge weights at the
// same positions of Adjwgt, and v's weights for the NCon balance constraints
// are Vwgt[v*NCon:(v+1)*NCon]. Every edge appears in both directions with the
// same weight, and there are no self loops.
//
// Edge weights are 32 bits, as in METIS's default build: the coarse
// levels hold most of the partitioner's memory, most of it their edges,
// and 4-byte weights take a third off them. A coarse edge's weight is the
// sum of the fine ones it merges, kept at math.MaxInt32 where the sum
// would pass it (only where the graph's edges weigh more than 2^31 in
// all; the cuts reported are summed in 64 bits).
type Graph struct {
	NCon   int
	Xadj   []int64
	Adjncy []int32
	Adjwgt []int32
	Vwgt   []int64
}

// addWeight returns the weight of an edge merging edges of weights a and b:
// their sum, or math.MaxInt32 where it would pass it.
func addWeight(a, b int32) int32 {
	if s := int64(a) + int64(b); s < math.MaxInt32 {
		return int32(s)
	}
	return math.MaxInt32
}

// N returns the number of vertices.
func (g *Graph) N() int { return len(g.Xadj) - 1 }

// Validate checks the shape, weights and symmetry of g; it costs O(n + m)
// time and O(n) memory.
func (g *Graph) Validate() error {
	if g.NCon < 1 {
		return fmt.Errorf("serial: %d balance constraints, need at least 1", g.NCon)
	}
	n := g.N()
	if n < 0 || g.Xadj[0] != 0 || g.Xadj[n] != int64(len(g.Adjncy)) || len(g.Adjwgt) != len(g.Adjncy) || len(g.Vwgt) != n*g.NCon {
		return fmt.Errorf("serial: inconsistent CSR: %d vertices, xadj ends at %d, %d neighbours, %d edge weights, %d vertex weights", n, g.Xadj[max(n, 0)], len(g.Adjncy), len(g.Adjwgt), len(g.Vwgt))
	}
	for i, w := range g.Vwgt {
		if w < 0 {
			return fmt.Errorf("serial: vertex %d has negative weight %d", i/g.NCon, w)
		}
	}
	// Count each (u,v,w) against (v,u,w) with a per-vertex scratch map.
	mark := make([]int64, n)
	for i := range mark {
		mark[i] = -1
	}
	for v := range n {
		if g.Xadj[v+1] < g.Xadj[v] {
			return fmt.Errorf("serial: xadj decreases at vertex %d", v)
		}
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			u := g.Adjncy[e]
			if u < 0 || int(u) >= n {
				return fmt.Errorf("serial: vertex %d has neighbour %d outside [0,%d)", v, u, n)
			}
			if int(u) == v {
				return fmt.Errorf("serial: vertex %d has a self loop", v)
			}
			if g.Adjwgt[e] <= 0 {
				return fmt.Errorf("serial: edge %d-%d has non-positive weight %d", v, u, g.Adjwgt[e])
			}
		}
	}
	for v := range n {
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			mark[g.Adjncy[e]] = int64(g.Adjwgt[e])
		}
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			u := g.Adjncy[e]
			found := false
			for f := g.Xadj[u]; f < g.Xadj[u+1]; f++ {
				if int(g.Adjncy[f]) == v {
					if int64(g.Adjwgt[f]) != mark[u] {
						return fmt.Errorf("serial: edge %d-%d has weight %d one way and %d the other", v, u, mark[u], g.Adjwgt[f])
					}
					found = true
					break
				}
			}
			if !found {
				return fmt.Errorf("serial: edge %d-%d has no reverse edge", v, u)
			}
		}
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			mark[g.Adjncy[e]] = -1
		}
	}
	return nil
}
