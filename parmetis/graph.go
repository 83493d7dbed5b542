package parmetis

import (
	"fmt"
	"math"
	"sync/atomic"

	"gnnrun/collective"
	"gnnrun/graph"
)

// DistGraph is one rank's share of a symmetric graph spread over the ranks
// of a communicator by contiguous vertex ranges (ParMETIS' vtxdist). Rank r
// owns the vertices [Dist.Bounds[r], Dist.Bounds[r+1]). Neighbours are local
// indices: [0, NLocal) are owned vertices, [NLocal, NLocal+len(Ghosts)) the
// ghosts, remote vertices whose global IDs are Ghosts (sorted, so ghosts are
// grouped by owner).
type DistGraph struct {
	Dist   graph.Book
	NCon   int
	Xadj   []int64
	Adj    []int32
	Adjwgt []int64
	Vwgt   []int64 // NLocal*NCon
	Ghosts []int64

	// InDeg is the number of input edges into each owned vertex, kept for
	// the edges balance constraint (nil on coarse levels).
	InDeg []int64

	c    *collective.Comm
	halo *halo

	// scratch marks a subgraph the recursive bisection built for itself
	// (a side rbSequential induced): once its own sides are induced it
	// drops its arcs (see rbSequential).
	scratch bool
}

// dropArcs lets the collector have g's arcs and halo: a scratch subgraph
// whose sides are induced needs only its vertices' count and
// communicator after.
func (g *DistGraph) dropArcs() {
	if keepScratch {
		return
	}
	g.Adj, g.Adjwgt, g.Ghosts, g.halo = nil, nil, nil, nil
	scratchDrops.Add(1)
}

// keepScratch (tests) keeps the arcs dropArcs would drop, and
// scratchDrops counts the drops: a partition must not depend on them.
var (
	keepScratch  bool
	scratchDrops atomic.Int64
)

// NLocal returns the number of vertices this rank owns.
func (g *DistGraph) NLocal() int { return len(g.Xadj) - 1 }

// Lo returns the global ID of this rank's first vertex.
func (g *DistGraph) Lo() int64 { return g.Dist.Bounds[g.c.Rank()] }

// N returns the global number of vertices.
func (g *DistGraph) N() int64 { return g.Dist.Total() }

// GID returns the global ID of local index i (owned or ghost).
func (g *DistGraph) GID(i int32) int64 {
	if int(i) < g.NLocal() {
		return g.Lo() + int64(i)
	}
	return g.Ghosts[int(i)-g.NLocal()]
}

// Comm returns the communicator the graph is spread over.
func (g *DistGraph) Comm() *collective.Comm { return g.c }

// localIndexer maps the global IDs of an adjacency to local indices in
// out: owned vertices [lo, hi) to [0, hi-lo), the others, made
// ghosts, to hi-lo onwards in the order of their IDs. It returns the ghosts'
// global IDs, sorted. Remote IDs are radix-sorted with their positions, so
// the cost is linear in the arcs.
func localIndexer(lo, hi int64, adj []neighbour, out []int32) (ghosts []int64, err error) {
	// Count the ghost entries first: grown by appending, the two lists were
	// copied over and over (a second of a rank's CPU on R-MAT scale 20,
	// K = 64, np = 2).
	remote := 0
	for _, e := range adj {
		if e.To < lo || e.To >= hi {
			remote++
		}
	}
	keys, pos := make([]uint64, 0, remote), make([]int32, 0, remote)
	limit := uint64(1)
	for i, e := range adj {
		u := e.To
		if u >= lo && u < hi {
			out[i] = int32(u - lo)
			continue
		}
		keys = append(keys, uint64(u))
		pos = append(pos, int32(i))
		limit = max(limit, uint64(u))
	}
	radixSortPairs(keys, pos, limit)
	n := hi - lo
	for i, k := range keys {
		if i == 0 || k != keys[i-1] {
			ghosts = append(ghosts, int64(k))
		}
		out[pos[i]] = int32(n) + int32(len(ghosts)-1)
	}
	if n+int64(len(ghosts)) > math.MaxInt32 {
		return nil, fmt.Errorf("parmetis: %d owned and %d ghost vertices on one rank exceed 32-bit local indices; use more ranks", n, len(ghosts))
	}
	return ghosts, nil
}

// searchInt64 returns the index of x in the sorted xs, which must hold it.
func searchInt64(xs []int64, x int64) int {
	lo, hi := 0, len(xs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if xs[m] < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
