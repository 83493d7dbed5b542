package serial

import "time"

// Contraction merges the edges of a coarse vertex through a table from
// coarse neighbour to position. A small table indexed by the low bits of
// the neighbour (METIS' trick) stays in the L1 cache; vertices whose members
// have many edges use a table over all coarse vertices instead, where a
// collision scan would cost too much.
const (
	htMask      = 1<<13 - 1
	htMaxDeg    = htMask / 8
	htMinCoarse = 8 * htMask
)

// contract builds the coarse graph of g under the matching: coarse vertex
// cmap[v] takes the weights of v and its partner, the edge between them
// disappears, and parallel edges to the same coarse neighbour merge into one
// whose weight is their sum. The coarse graph's arrays come from the arena,
// sized for the fine graph's edges.
func (c *ctrl) contract(g *Graph, cmap []int32, cn int) *Graph {
	defer c.since(PhaseContract, time.Now())
	n, nc := g.N(), g.NCon
	match := c.ws.match[:n]
	cg := c.ws.arena.newGraph(cn, int64(len(g.Adjncy)), nc)
	dense := grow32(&c.ws.htable, cn)
	fill32(dense, -1)
	small := grow32(&c.ws.hsmall, htMask+1)
	fill32(small, -1)
	useSmall := cn >= htMinCoarse
	var ce int64
	for v := range int32(n) {
		u := match[v]
		if u < v {
			continue
		}
		cv := cmap[v]
		for i := range nc {
			cg.Vwgt[int(cv)*nc+i] = g.Vwgt[int(v)*nc+i]
			if u != v {
				cg.Vwgt[int(cv)*nc+i] += g.Vwgt[int(u)*nc+i]
			}
		}
		deg := g.Xadj[v+1] - g.Xadj[v]
		if u != v {
			deg += g.Xadj[u+1] - g.Xadj[u]
		}
		if useSmall && deg <= htMaxDeg {
			ce = mergeSmall(g, cg, cmap, v, u, cv, ce, small, &c.ws.heads)
		} else {
			ce = mergeDense(g, cg, cmap, v, u, cv, ce, dense, &c.ws.heads)
		}
		cg.Xadj[cv+1] = ce
	}
	cg.Adjncy, cg.Adjwgt = cg.Adjncy[:ce], cg.Adjwgt[:ce]
	return cg
}

// mergeDense appends the merged edges of coarse vertex cv (fine vertices v
// and u) at ce, using a table over all coarse vertices, and returns the new
// end. Coarse neighbours are gathered first (coarseHeads).
func mergeDense(g, cg *Graph, cmap []int32, v, u, cv int32, ce int64, ht []int32, heads *[]int32) int64 {
	start := ce
	adjncy, adjwgt := cg.Adjncy, cg.Adjwgt
	for _, x := range [2]int32{v, u} {
		cus, wgt := coarseHeads(g, cmap, x, heads)
		for i, cu := range cus {
			if cu == cv {
				continue
			}
			if h := ht[cu]; h >= 0 {
				adjwgt[start+int64(h)] = addWeight(adjwgt[start+int64(h)], wgt[i])
			} else {
				ht[cu] = int32(ce - start)
				adjncy[ce], adjwgt[ce] = cu, wgt[i]
				ce++
			}
		}
		if u == v {
			break
		}
	}
	for _, cu := range adjncy[start:ce] {
		ht[cu] = -1
	}
	return ce
}

// coarseHeads returns fine vertex x's coarse neighbours, gathered into
// heads (grown as needed), and its edge weights. A loop of nothing but
// those random reads of cmap keeps many of them in flight, where the
// merge's branches between them would hold each back.
func coarseHeads(g *Graph, cmap []int32, x int32, heads *[]int32) ([]int32, []int32) {
	lo, hi := g.Xadj[x], g.Xadj[x+1]
	cus := grow32(heads, int(hi-lo))
	for i, a := range g.Adjncy[lo:hi] {
		cus[i] = cmap[a]
	}
	return cus, g.Adjwgt[lo:hi]
}

// mergeSmall is mergeDense with a small table indexed by the low bits of
// the coarse neighbour; on a collision it scans the vertex's edges so far.
func mergeSmall(g, cg *Graph, cmap []int32, v, u, cv int32, ce int64, ht []int32, heads *[]int32) int64 {
	start := ce
	adjncy, adjwgt := cg.Adjncy, cg.Adjwgt
	for _, x := range [2]int32{v, u} {
		cus, wgt := coarseHeads(g, cmap, x, heads)
		for i, cu := range cus {
			if cu == cv {
				continue
			}
			h := ht[cu&htMask]
			switch {
			case h < 0:
				ht[cu&htMask] = int32(ce - start)
				adjncy[ce], adjwgt[ce] = cu, wgt[i]
				ce++
			case adjncy[start+int64(h)] == cu:
				adjwgt[start+int64(h)] = addWeight(adjwgt[start+int64(h)], wgt[i])
			default:
				ce = addScanning(adjncy, adjwgt, start, ce, cu, wgt[i])
			}
		}
		if u == v {
			break
		}
	}
	for _, cu := range adjncy[start:ce] {
		ht[cu&htMask] = -1
	}
	return ce
}

// addScanning adds weight w to the edge to cu among adjncy[start:ce], or
// appends it, and returns the new end.
func addScanning(adjncy, adjwgt []int32, start, ce int64, cu int32, w int32) int64 {
	for j := start; j < ce; j++ {
		if adjncy[j] == cu {
			adjwgt[j] = addWeight(adjwgt[j], w)
			return ce
		}
	}
	adjncy[ce], adjwgt[ce] = cu, w
	return ce + 1
}
