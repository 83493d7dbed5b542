package parmetis

import (
	"fmt"
	"iter"
	"runtime"

	"gnnrun/collective"
	"gnnrun/graph"
)

// contract builds the coarse graph in which every group of owned vertices
// with the same leader becomes one vertex, owned by the leader's rank, with
// the summed vertex weights and the merged edges of its members (parallel
// edges summed, edges inside the group dropped). It returns the coarse graph
// and the coarse vertex of every owned fine vertex. It is collective.
func (g *DistGraph) contract(leader []int64, sparse bool) (*DistGraph, []int64, error) {
	c, nl, lo := g.c, g.NLocal(), g.Lo()
	var leaders int64
	for v, l := range leader {
		if l == lo+int64(v) {
			leaders++
		}
	}
	before, _, err := collective.Offset(c, leaders)
	if err != nil {
		return nil, nil, err
	}
	counts, err := collective.Allgather(c, leaders)
	if err != nil {
		return nil, nil, err
	}
	book := graph.BookFromCounts(counts)
	cmap, err := g.coarseIDs(leader, before)
	if err != nil {
		return nil, nil, err
	}
	// Ghosts learn their coarse IDs from their owners.
	full := make([]int64, nl+len(g.Ghosts))
	copy(full, cmap)
	if err := haloUpdate(g, full); err != nil {
		return nil, nil, err
	}
	// Size the buffers first: appending would overshoot by up to 2x, and
	// these hold a rank's share of the arcs. The arcs this rank keeps (most
	// of them: a group's leader is usually on its members' rank) are not
	// copied into records; assembleCoarse reads them from g (localCoarseArcs).
	me := c.Rank()
	nArcs, nRecs := make([]int, c.Size()), make([]int, c.Size())
	for v := range nl {
		o := book.Owner(cmap[v])
		nRecs[o] += 2 + g.NCon
		if o == me {
			continue
		}
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			if full[g.Adj[e]] != cmap[v] {
				nArcs[o]++
			}
		}
	}
	arcs := make([][]arc, c.Size())
	weights := make([][]int64, c.Size())
	for o := range arcs {
		arcs[o], weights[o] = make([]arc, 0, nArcs[o]), make([]int64, 0, nRecs[o])
	}
	for v := range nl {
		cv := cmap[v]
		o := book.Owner(cv)
		weights[o] = append(weights[o], cv, g.Xadj[v+1]-g.Xadj[v])
		weights[o] = append(weights[o], g.Vwgt[v*g.NCon:(v+1)*g.NCon]...)
		if o == me {
			continue
		}
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			if cu := full[g.Adj[e]]; cu != cv {
				arcs[o] = append(arcs[o], arc{cv, cu, g.Adjwgt[e]})
			}
		}
	}
	gotW, err := collective.Exchange(c, weights)
	if err != nil {
		return nil, nil, err
	}
	gotA, err := collective.Exchange(c, arcs)
	if err != nil {
		return nil, nil, err
	}
	arcs = nil
	runtime.GC() // the send buffers' memory serves the coarse rows
	clo, chi := book.Range(me)
	local := localCoarseArcs{g: g, cmap: cmap, full: full, lo: clo, hi: chi}
	cg, keep, err := assembleCoarse(c, book, g.NCon, gotW, gotA, local.all)
	if err != nil {
		return nil, nil, err
	}
	if sparse {
		if _, err := cg.sparsify(keep); err != nil {
			return nil, nil, err
		}
	}
	return cg, cmap, nil
}

// coarseIDs numbers this rank's leaders from before, in order, and finds
// the coarse ID of every owned vertex, asking the owners of remote leaders.
func (g *DistGraph) coarseIDs(leader []int64, before int64) ([]int64, error) {
	lo, hi := g.Lo(), g.Lo()+int64(g.NLocal())
	cmap := make([]int64, len(leader))
	next := before
	for v, l := range leader {
		if l == lo+int64(v) {
			cmap[v] = next
			next++
		}
	}
	var remote []int64
	for v, l := range leader {
		if l < lo || l >= hi {
			remote = append(remote, l)
		} else {
			cmap[v] = cmap[l-lo]
		}
	}
	ids, err := collective.Request(g.c, remote, g.Dist.Owner, func(_ int, keys []int64) ([]int64, error) {
		out := make([]int64, len(keys))
		for i, l := range keys {
			if l < lo || l >= hi || leader[l-lo] != l {
				return nil, fmt.Errorf("parmetis: vertex %d is asked for as a leader but is not one", l)
			}
			out[i] = cmap[l-lo]
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	k := 0
	for v, l := range leader {
		if l < lo || l >= hi {
			cmap[v] = ids[k]
			k++
		}
	}
	return cmap, nil
}

// assembleCoarse builds this rank's part of the coarse graph from the
// members' records (coarse ID, degree, NCon weights), the arcs it received
// and those local yields (iterated twice, see rowsFromArcs).
// It also returns each coarse vertex's mean member degree, rounded up: the
// degree sparsify lets it keep.
func assembleCoarse(c *collective.Comm, book graph.Book, ncon int, weights [][]int64, arcs [][]arc, local iter.Seq[arc]) (*DistGraph, []int64, error) {
	lo, hi := book.Range(c.Rank())
	n := hi - lo
	vw := make([]int64, n*int64(ncon))
	members, degs := make([]int64, n), make([]int64, n)
	for _, ws := range weights {
		for i := 0; i < len(ws); i += 2 + ncon {
			v := ws[i] - lo
			if v < 0 || v >= n {
				return nil, nil, fmt.Errorf("parmetis: coarse vertex %d sent to rank %d, which owns [%d,%d)", ws[i], c.Rank(), lo, hi)
			}
			members[v]++
			degs[v] += ws[i+1]
			for k := range ncon {
				vw[v*int64(ncon)+int64(k)] += ws[i+2+k]
			}
		}
	}
	r, _ := rowsFromArcs(lo, n, arcs, local)
	cg, err := r.toGraph(c, book)
	if err != nil {
		return nil, nil, err
	}
	cg.NCon, cg.Vwgt, cg.InDeg = ncon, vw, nil
	for v := range degs {
		degs[v] = (degs[v] + members[v] - 1) / max(members[v], 1)
	}
	return cg, degs, nil
}

// localCoarseArcs are the coarse arcs of a contraction whose tail this rank
// owns, read from the fine graph g where contract would have copied them
// into 24-byte records sent to itself: on R-MAT scale 20 at np = 2 nearly
// all of a rank's arcs at every level.
type localCoarseArcs struct {
	g      *DistGraph
	cmap   []int64 // coarse vertex of every owned fine vertex
	full   []int64 // coarse vertex of every owned vertex and ghost
	lo, hi int64   // the coarse vertices this rank owns
}

// all yields the arcs, as contract records them for other ranks.
func (l localCoarseArcs) all(yield func(arc) bool) {
	g := l.g
	for v, cv := range l.cmap {
		if cv < l.lo || cv >= l.hi {
			continue
		}
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			if cu := l.full[g.Adj[e]]; cu != cv && !yield(arc{cv, cu, g.Adjwgt[e]}) {
				return
			}
		}
	}
}
