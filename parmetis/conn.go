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
	gm ghostMarks
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
	t.gm.arcs(g, full, old, func(v int32, w int64, was, now int32) {
		t.w[int(v)*t.k+int(was)] -= w
		t.w[int(v)*t.k+int(now)] += w
	})
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

// ghostMarks finds the arcs into the ghosts whose parts changed, for the
// gain caches: it marks those ghosts and scans the arcs, reading a mark
// for each arc into a ghost: a sequential pass over Adj per settle. A list
// of each ghost's arcs, built once per refiner, made each update
// O(changed ghosts' arcs), but building it wrote every ghost arc to a
// scattered place. On planted R-MAT scale 20 at np = 2 (K = 4), where many
// arcs go to ghosts, building the lists took 2.0 s of rank 0's 22.5 s; the
// scans take 0.5 s. The lists were also a rank's peak memory on R-MAT.
type ghostMarks struct{ changed []bool }

// arcs calls fn for every arc from an owned vertex v, of weight w, into a
// ghost whose part went from was (in old, one entry per ghost) to now (in
// full).
func (m *ghostMarks) arcs(g *DistGraph, full, old []int32, fn func(v int32, w int64, was, now int32)) {
	nl := int32(g.NLocal())
	if m.changed == nil {
		m.changed = make([]bool, len(old))
	}
	any := false
	for i, was := range old {
		m.changed[i] = full[int(nl)+i] != was
		any = any || m.changed[i]
	}
	if !any {
		return
	}
	for v := range nl {
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			if u := g.Adj[e]; u >= nl && m.changed[u-nl] {
				fn(v, g.Adjwgt[e], old[u-nl], full[u])
			}
		}
	}
}
