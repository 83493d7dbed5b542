package parmetis

import (
	"fmt"
	"slices"
)

// connTable keeps, for a partition into more than two parts, each owned
// vertex's edge weight to every part, so that a vertex's connectivity costs
// O(K) instead of a scan of its arcs with a random read of each neighbour's
// part: a k-way refinement phase asks it of every vertex, and on graphs
// with communities nearly every vertex is on the boundary. It is kept as
// twoWay is: built once, updated by every move (apply, undone moves) and
// by the ghosts' new parts (settle), built again after a phase undone
// whole. It holds K entries per vertex, so newConnTable keeps it only where
// that is at most half the arcs.
type connTable struct {
	k  int
	w  []int64 // w[v*k+p]: owned vertex v's edge weight to part p
	ok bool
	// The arcs into each ghost, as twoWay lists them.
	ghostStart []int64
	ghostArcs  []ghostArc
}

// newConnTable returns the table for g and k parts, or nil when k is 2
// (twoWay serves) or the table would take more than half the arcs' count.
func newConnTable(g *DistGraph, k int) *connTable {
	if k <= 2 || int64(g.NLocal())*int64(k) > int64(len(g.Adj))/2 {
		return nil
	}
	return &connTable{k: k, w: make([]int64, g.NLocal()*k)}
}

// rebuild recounts the table from the parts in full, and lists the arcs
// into the ghosts the first time.
func (t *connTable) rebuild(g *DistGraph, full []int32) {
	clear(t.w)
	for v := range g.NLocal() {
		row := t.w[v*t.k : (v+1)*t.k]
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			row[full[g.Adj[e]]] += g.Adjwgt[e]
		}
	}
	t.ok = true
	if t.ghostStart == nil {
		t.ghostStart, t.ghostArcs = listGhostArcs(g)
	}
}

// external is owned vertex v's edge weight to other parts than a, its own.
func (t *connTable) external(v, a int32) int64 {
	var x int64
	for p, w := range t.w[int(v)*t.k : int(v+1)*t.k] {
		if int32(p) != a {
			x += w
		}
	}
	return x
}

// moved updates the table after v moved from one part to another: only
// its owned neighbours' rows change.
func (t *connTable) moved(g *DistGraph, v, from, to int32) {
	nl := int32(g.NLocal())
	for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
		if u := g.Adj[e]; u < nl {
			t.w[int(u)*t.k+int(from)] -= g.Adjwgt[e]
			t.w[int(u)*t.k+int(to)] += g.Adjwgt[e]
		}
	}
}

// ghostsMoved updates the table after the ghosts' parts changed from old
// (one entry per ghost) to those in full.
func (t *connTable) ghostsMoved(g *DistGraph, full []int32, old []int32) {
	nl := g.NLocal()
	for i, was := range old {
		now := full[nl+i]
		if now == was {
			continue
		}
		for _, a := range t.ghostArcs[t.ghostStart[i]:t.ghostStart[i+1]] {
			t.w[int(a.v)*t.k+int(was)] -= a.w
			t.w[int(a.v)*t.k+int(now)] += a.w
		}
	}
}

// verify checks the kept table against a recount; tests call it (checkCut).
func (t *connTable) verify(g *DistGraph, full []int32) error {
	kept := slices.Clone(t.w)
	t.rebuild(g, full)
	for i, x := range kept {
		if x != t.w[i] {
			return fmt.Errorf("parmetis: vertex %d keeps edge weight %d to part %d, recounted %d", g.GID(int32(i/t.k)), x, i%t.k, t.w[i])
		}
	}
	return nil
}

// listGhostArcs lists the arcs into each ghost of g as (owned end,
// weight), ghost i's at arcs[start[i]:start[i+1]].
func listGhostArcs(g *DistGraph) (start []int64, arcs []ghostArc) {
	nl := int32(g.NLocal())
	start = make([]int64, len(g.Ghosts)+1)
	for _, u := range g.Adj {
		if u >= nl {
			start[u-nl+1]++
		}
	}
	for i := range len(g.Ghosts) {
		start[i+1] += start[i]
	}
	arcs = make([]ghostArc, start[len(g.Ghosts)])
	next := slices.Clone(start[:len(g.Ghosts)])
	for v := range nl {
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			if u := g.Adj[e]; u >= nl {
				arcs[next[u-nl]] = ghostArc{v, g.Adjwgt[e]}
				next[u-nl]++
			}
		}
	}
	return start, arcs
}
