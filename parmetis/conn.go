package parmetis

import (
	"fmt"
	"slices"
)

// connTable keeps, for a partition into other than two parts, each owned
// vertex's edge weight to every part it touches, so that a vertex's
// connectivity costs O(parts it touches) instead of a scan of its arcs with
// a random read of each neighbour's part: a k-way refinement phase asks it
// of every vertex, and on graphs with communities nearly every vertex is
// on the boundary. Vertex v's entries are part[start[v]:start[v]+n[v]]
// with their weights in w, unordered, with room for min(degree, K), as
// METIS keeps them; so the table holds at most one entry per arc. It is
// kept as twoWay is: built once, updated by every move (apply, undone
// moves) and by the ghosts' new parts (settle), built again after a phase
// undone whole.
type connTable struct {
	k     int
	start []int64
	n     []int32
	part  []int32
	w     []int64
	sum   []int64 // k, zero between uses: rebuild's per-vertex tally
	parts []int32 // rebuild's scratch: a vertex's neighbours' parts
	sink  int32   // what moved reads ahead, kept so the reads are not dropped
	ok    bool
	gm    ghostMarks
}

// newConnTable returns the table for g and k parts, or nil when k is 2
// (twoWay serves).
func newConnTable(g *DistGraph, k int) *connTable {
	if k == 2 {
		return nil
	}
	nl := g.NLocal()
	t := &connTable{k: k, start: make([]int64, nl+1), n: make([]int32, nl), sum: make([]int64, k)}
	for v := range nl {
		t.start[v+1] = t.start[v] + min(g.Xadj[v+1]-g.Xadj[v], int64(k))
	}
	t.part, t.w = make([]int32, t.start[nl]), make([]int64, t.start[nl])
	return t
}

// rebuild recounts the table from the parts in full.
func (t *connTable) rebuild(g *DistGraph, full []int32) {
	for v := range g.NLocal() {
		// The neighbours' parts first, loads the CPU keeps many of in
		// flight, then the tally. Read inside the tally, each part was
		// waited for before the next arc's (planted R-MAT 20, K = 4, one
		// rank: 2.8 s of 3.0 s per rebuild of the finest level).
		a, b := g.Xadj[v], g.Xadj[v+1]
		t.parts = slices.Grow(t.parts[:0], int(b-a))[:b-a]
		for i, u := range g.Adj[a:b] {
			t.parts[i] = full[u]
		}
		s, n := t.start[v], int64(0)
		for i, p := range t.parts {
			if t.sum[p] == 0 {
				t.part[s+n] = p
				n++
			}
			t.sum[p] += g.Adjwgt[a+int64(i)]
		}
		for i := s; i < s+n; i++ {
			t.w[i] = t.sum[t.part[i]]
			t.sum[t.part[i]] = 0
		}
		t.n[v] = int32(n)
	}
	t.ok = true
}

// row returns v's parts and its edge weight to each.
func (t *connTable) row(v int32) ([]int32, []int64) {
	s, e := t.start[v], t.start[v]+int64(t.n[v])
	return t.part[s:e], t.w[s:e]
}

// external is owned vertex v's edge weight to other parts than a, its own.
func (t *connTable) external(v, a int32) int64 {
	var x int64
	parts, ws := t.row(v)
	for i, p := range parts {
		if p != a {
			x += ws[i]
		}
	}
	return x
}

// add adds x to owned vertex v's edge weight to part p, dropping the entry
// when it reaches zero.
func (t *connTable) add(v, p int32, x int64) {
	s, n := t.start[v], int64(t.n[v])
	for i := s; i < s+n; i++ {
		if t.part[i] == p {
			if t.w[i] += x; t.w[i] == 0 {
				t.part[i], t.w[i] = t.part[s+n-1], t.w[s+n-1]
				t.n[v]--
			}
			return
		}
	}
	t.part[s+n], t.w[s+n] = p, x
	t.n[v]++
}

// moved updates the table after v moved from one part to another: only
// its owned neighbours' rows change.
func (t *connTable) moved(g *DistGraph, v, from, to int32) {
	nl := int32(g.NLocal())
	// The neighbours' rows are read first, loads the CPU keeps many of in
	// flight, so the updates, whose searches branch on what they read,
	// find them in the cache.
	var sink int32
	for _, u := range g.Adj[g.Xadj[v]:g.Xadj[v+1]] {
		if u < nl {
			sink += t.part[t.start[u]] + t.n[u]
		}
	}
	t.sink += sink
	for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
		if u := g.Adj[e]; u < nl {
			t.add(u, from, -g.Adjwgt[e])
			t.add(u, to, g.Adjwgt[e])
		}
	}
}

// ghostsMoved updates the table after the ghosts' parts changed from old
// (one entry per ghost) to those in full.
func (t *connTable) ghostsMoved(g *DistGraph, full []int32, old []int32) {
	t.gm.arcs(g, full, old, func(v int32, w int64, was, now int32) {
		t.add(v, was, -w)
		t.add(v, now, w)
	})
}

// verify checks the kept table against a recount; tests call it (checkCut).
func (t *connTable) verify(g *DistGraph, full []int32) error {
	kept := make([]map[int32]int64, g.NLocal())
	for v := range kept {
		kept[v] = map[int32]int64{}
		parts, ws := t.row(int32(v))
		for i, p := range parts {
			kept[v][p] = ws[i]
		}
	}
	t.rebuild(g, full)
	for v := range kept {
		parts, ws := t.row(int32(v))
		if len(parts) != len(kept[v]) {
			return fmt.Errorf("parmetis: vertex %d keeps edge weights to %d parts, recounted %d", g.GID(int32(v)), len(kept[v]), len(parts))
		}
		for i, p := range parts {
			if kept[v][p] != ws[i] {
				return fmt.Errorf("parmetis: vertex %d keeps edge weight %d to part %d, recounted %d", g.GID(int32(v)), kept[v][p], p, ws[i])
			}
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
	some := false
	for i, was := range old {
		m.changed[i] = full[int(nl)+i] != was
		some = some || m.changed[i]
	}
	if !some {
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
