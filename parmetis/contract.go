package parmetis

import (
	"fmt"
	"runtime"
	"slices"

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
	// these hold a rank's share of the arcs. The members' degrees bound the
	// arcs sent (only arcs inside a group are not), without reading every
	// neighbour's coarse ID twice. The arcs this rank keeps (most of them: a
	// group's leader is usually on its members' rank) are not copied into
	// records; assembleCoarse reads them from g (localCoarseArcs).
	me := c.Rank()
	nArcs, nRecs := make([]int64, c.Size()), make([]int, c.Size())
	for v := range nl {
		o := book.Owner(cmap[v])
		nRecs[o] += 2 + g.NCon
		if o != me {
			nArcs[o] += g.Xadj[v+1] - g.Xadj[v]
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
	cg, keep, err := assembleCoarse(c, book, g.NCon, gotW, gotA, local)
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
// and those local reads from the fine graph (see localCoarseArcs.rows).
// It also returns each coarse vertex's mean member degree, rounded up: the
// degree sparsify lets it keep.
func assembleCoarse(c *collective.Comm, book graph.Book, ncon int, weights [][]int64, arcs [][]arc, local localCoarseArcs) (*DistGraph, []int64, error) {
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
	for _, p := range arcs {
		for _, a := range p {
			if a.From < lo || a.From >= hi {
				return nil, nil, fmt.Errorf("parmetis: coarse arc from %d sent to rank %d, which owns [%d,%d)", a.From, c.Rank(), lo, hi)
			}
		}
	}
	cg, err := local.rows(arcs).toGraph(c, book)
	if err != nil {
		return nil, nil, err
	}
	cg.NCon, cg.Vwgt, cg.InDeg = ncon, vw, nil
	for v := range degs {
		degs[v] = (degs[v] + members[v] - 1) / max(members[v], 1)
	}
	return cg, degs, nil
}

// localCoarseArcs is what the coarse rows this rank owns are made of,
// besides the arcs other ranks send: the fine graph g, whose arcs from
// vertices with an owned coarse vertex contract would otherwise have copied
// into 24-byte records sent to itself (on R-MAT scale 20 at np = 2, nearly
// all of a rank's arcs at every level).
type localCoarseArcs struct {
	g      *DistGraph
	cmap   []int64 // coarse vertex of every owned fine vertex
	full   []int64 // coarse vertex of every owned vertex and ghost
	lo, hi int64   // the coarse vertices this rank owns
}

// rows builds the rows of the coarse vertices [lo, hi) one at a time, as
// METIS contracts: the arcs of the vertex's fine members, mapped to coarse
// heads, and its row of the arcs remote sent (few: rowsFromArcs builds
// them) are gathered at the end of the rows built so far and merged in
// place (mergeRow). The rows are those rowsFromArcs builds from the same
// arcs, entry for entry. Each fine arc is read once, where a counting sort
// by tail reads it twice and writes it to a scattered place in between.
// remote is consumed.
func (l localCoarseArcs) rows(remote [][]arc) rows {
	g, n := l.g, l.hi-l.lo
	// The fine members of each coarse vertex, by a counting sort.
	first := make([]int64, n+1)
	bound := int64(0) // the arcs gathered for all rows: an upper bound on the entries
	for v, cv := range l.cmap {
		if cv >= l.lo && cv < l.hi {
			first[cv-l.lo+1]++
			bound += g.Xadj[v+1] - g.Xadj[v]
		}
	}
	for v := range n {
		first[v+1] += first[v]
	}
	members := make([]int32, first[n])
	next := slices.Clone(first[:n])
	for v, cv := range l.cmap {
		if cv >= l.lo && cv < l.hi {
			members[next[cv-l.lo]] = int32(v)
			next[cv-l.lo]++
		}
	}
	// The remote arcs, as rows of their own.
	rem, _ := rowsFromArcs(l.lo, n, remote, nil)
	bound += int64(len(rem.nbr))

	xadj := make([]int64, n+1)
	nbr := make([]neighbour, bound)
	var scratch []neighbour
	out := int64(0)
	for v := range n {
		cv, end := l.lo+v, out
		for _, f := range members[first[v]:first[v+1]] {
			for e := g.Xadj[f]; e < g.Xadj[f+1]; e++ {
				if cu := l.full[g.Adj[e]]; cu != cv {
					nbr[end] = neighbour{cu, g.Adjwgt[e]}
					end++
				}
			}
		}
		end += int64(copy(nbr[end:], rem.nbr[rem.xadj[v]:rem.xadj[v+1]]))
		xadj[v] = out
		out, _, scratch = mergeRow(nbr, out, end, out, cv, scratch)
	}
	xadj[n] = out
	return rows{lo: l.lo, xadj: xadj, nbr: nbr[:out:out]}
}
