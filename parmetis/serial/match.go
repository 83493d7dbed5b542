package serial

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"time"
)

// match computes a heavy-edge matching of g and returns cmap, the coarse
// vertex of every vertex of g, and the number of coarse vertices. Matched
// pairs may not exceed maxv in any constraint and, when part is not nil,
// must lie in the same part, so part carries over to the coarse graph.
//
// Vertices are visited in random order sorted by degree, so low-degree
// vertices choose first (METIS' SHEM). On the input level of a skewed
// unweighted graph the order is plainly random (METIS' RM): on R-MAT the
// finest-level FM then finds much more to gain and the 2-way cut ends about
// a third lower (253k against 187k at scale 18), while on meshes degree
// order is slightly better. Isolated vertices
// pair with the next unmatched vertex in visit order.
//
// When more than 10% of the vertices stay unmatched because all their
// neighbours are taken (the leaves of hubs in power-law graphs), unmatched
// vertices that share a neighbour are matched with each other (2-hop
// matching), which keeps coarsening from stalling.
func (c *ctrl) match(g *Graph, rng *rand.Rand, maxv []int64, part []int32) (cmap []int32, cn int) {
	defer c.since(PhaseMatch, time.Now())
	n := g.N()
	var perm []int32
	if uniformEdges(g) && skewed(g) {
		perm = grow32(&c.ws.perm, n)
		randomPerm(perm, rng)
	} else {
		perm = c.visitOrder(g, rng)
	}
	match := grow32(&c.ws.match, n)
	fill32(match, -1)
	unmatched := 0
	next := 0 // scan position for partners of isolated vertices
	for pi, v := range perm {
		if match[v] >= 0 {
			continue
		}
		u := v
		if fitsAlone(g, v, maxv) {
			if g.Xadj[v] == g.Xadj[v+1] {
				next = max(next, pi+1)
				for ; next < n; next++ {
					if w := perm[next]; match[w] < 0 && (part == nil || part[w] == part[v]) {
						u = w
						break
					}
				}
			} else {
				u = heaviestFit(g, v, match, maxv, part)
				if u == v && smallEnoughFor2Hop(g, v, maxv) {
					unmatched++
					continue
				}
			}
		}
		match[v], match[u] = u, v
	}
	if float64(unmatched) > unmatchedFor2Hop*float64(n) {
		c.match2Hop(g, perm, match, unmatched, part)
	}
	return numberCoarse(match, c.ws.arena.get32(n))
}

// numberCoarse makes every unmatched vertex its own partner and numbers the
// coarse vertices in the order of their first fine vertex, which keeps the
// coarse graph's memory access close to the fine graph's.
func numberCoarse(match, cmap []int32) ([]int32, int) {
	cn := int32(0)
	for v := range match {
		if match[v] < 0 {
			match[v] = int32(v)
		}
		if int32(v) <= match[v] {
			cmap[v] = cn
			cmap[match[v]] = cn
			cn++
		}
	}
	return cmap, int(cn)
}

// visitOrder returns a random permutation of g's vertices stably sorted by
// degree, the degree capped at four times the average so hubs do not spread
// the buckets.
func (c *ctrl) visitOrder(g *Graph, rng *rand.Rand) []int32 {
	n := g.N()
	tperm := grow32(&c.ws.tperm, n)
	randomPerm(tperm, rng)
	limit := 4*len(g.Adjncy)/max(n, 1) + 1
	start := make([]int32, limit+2)
	for v := range n {
		start[min(int(g.Xadj[v+1]-g.Xadj[v]), limit)+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	perm := grow32(&c.ws.perm, n)
	for _, v := range tperm {
		k := min(int(g.Xadj[v+1]-g.Xadj[v]), limit)
		perm[start[k]] = v
		start[k]++
	}
	return perm
}

func fitsAlone(g *Graph, v int32, maxv []int64) bool {
	w := g.Vwgt[int(v)*g.NCon : int(v+1)*g.NCon]
	for i, x := range w {
		if x > maxv[i] {
			return false
		}
	}
	return true
}

func fitsPair(g *Graph, v, u int32, maxv []int64) bool {
	nc := g.NCon
	a, b := g.Vwgt[int(v)*nc:int(v+1)*nc], g.Vwgt[int(u)*nc:int(u+1)*nc]
	for i := range a {
		if a[i]+b[i] > maxv[i] {
			return false
		}
	}
	return true
}

// smallEnoughFor2Hop says whether v is light enough to be paired in the
// 2-hop matching: three times its weight fits under maxv, as in METIS.
func smallEnoughFor2Hop(g *Graph, v int32, maxv []int64) bool {
	w := g.Vwgt[int(v)*g.NCon : int(v+1)*g.NCon]
	for i, x := range w {
		if 3*x >= maxv[i] && maxv[i] > 0 {
			return false
		}
	}
	return true
}

// heaviestFit returns v's unmatched neighbour across the heaviest edge whose
// pair with v fits under maxv (and lies in v's part, if part is not nil), or
// v itself when there is none. An arc's weight, read in order, is tested
// before the neighbour's state and weights, read at random: once a
// neighbour that fits is found, the arcs no heavier skip those reads (on a
// level of equal weights, all the arcs after it).
func heaviestFit(g *Graph, v int32, match []int32, maxv []int64, part []int32) int32 {
	best, bestw := v, int32(-1)
	if part != nil {
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			u := g.Adjncy[e]
			if g.Adjwgt[e] > bestw && match[u] < 0 && part[u] == part[v] && fitsPair(g, v, u, maxv) {
				best, bestw = u, g.Adjwgt[e]
			}
		}
		return best
	}
	if g.NCon == 1 {
		wv, lim := g.Vwgt[v], maxv[0]
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			u := g.Adjncy[e]
			if g.Adjwgt[e] > bestw && match[u] < 0 && wv+g.Vwgt[u] <= lim {
				best, bestw = u, g.Adjwgt[e]
			}
		}
		return best
	}
	for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
		u := g.Adjncy[e]
		if g.Adjwgt[e] > bestw && match[u] < 0 && fitsPair(g, v, u, maxv) {
			best, bestw = u, g.Adjwgt[e]
		}
	}
	return best
}

// match2Hop pairs unmatched vertices through a common neighbour, in METIS'
// order: leaves of the same vertex, then vertices with identical
// neighbourhoods, then vertices of degree up to 2, then any.
func (c *ctrl) match2Hop(g *Graph, perm, match []int32, unmatched int, part []int32) {
	n := float64(g.N())
	unmatched = c.match2HopAny(g, perm, match, unmatched, 2, part)
	unmatched = c.match2HopAll(g, match, unmatched, 64, part)
	if float64(unmatched) > 1.5*unmatchedFor2Hop*n {
		unmatched = c.match2HopAny(g, perm, match, unmatched, 3, part)
	}
	if float64(unmatched) > 2*unmatchedFor2Hop*n {
		c.match2HopAny(g, perm, match, unmatched, g.N(), part)
	}
}

// match2HopAny pairs unmatched vertices of degree below maxdeg that share a
// neighbour (and a part, if part is not nil), using an inverted index from
// each vertex to its unmatched low-degree neighbours. It returns the number
// still unmatched.
func (c *ctrl) match2HopAny(g *Graph, perm, match []int32, unmatched, maxdeg int, part []int32) int {
	n := g.N()
	small := func(v int32) bool {
		return match[v] < 0 && g.Xadj[v+1]-g.Xadj[v] < int64(maxdeg)
	}
	colptr := make([]int64, n+1)
	for v := range int32(n) {
		if small(v) {
			for _, u := range g.Adjncy[g.Xadj[v]:g.Xadj[v+1]] {
				colptr[u+1]++
			}
		}
	}
	for i := 1; i <= n; i++ {
		colptr[i] += colptr[i-1]
	}
	rowind := grow32(&c.ws.tperm, int(colptr[n]))
	for _, v := range perm {
		if small(v) {
			for _, u := range g.Adjncy[g.Xadj[v]:g.Xadj[v+1]] {
				rowind[colptr[u]] = v
				colptr[u]++
			}
		}
	}
	for i := n; i > 0; i-- {
		colptr[i] = colptr[i-1]
	}
	colptr[0] = 0
	// waiting[p] is a vertex of part p seen under the current neighbour and
	// not yet paired.
	waiting := grow32(&c.ws.htable, c.o.Parts+1)
	fill32(waiting, -1)
	for _, k := range perm {
		lo, hi := colptr[k], colptr[k+1]
		if hi-lo < 2 {
			continue
		}
		for _, a := range rowind[lo:hi] {
			if match[a] >= 0 {
				continue
			}
			p := 0
			if part != nil {
				p = int(part[a])
			}
			if b := waiting[p]; b >= 0 && match[b] < 0 {
				match[a], match[b] = b, a
				unmatched -= 2
				waiting[p] = -1
			} else {
				waiting[p] = a
			}
		}
		for _, a := range rowind[lo:hi] {
			if part != nil {
				waiting[part[a]] = -1
			} else {
				waiting[0] = -1
			}
		}
	}
	return unmatched
}

// match2HopAll pairs unmatched vertices of degree 2..maxdeg-1 whose
// neighbourhoods are identical, found by sorting on a key of the
// neighbourhood. It returns the number still unmatched.
func (c *ctrl) match2HopAll(g *Graph, match []int32, unmatched, maxdeg int, part []int32) int {
	type cand struct {
		key int64
		v   int32
	}
	var cands []cand
	for v := range int32(g.N()) {
		d := g.Xadj[v+1] - g.Xadj[v]
		if match[v] >= 0 || d <= 1 || d >= int64(maxdeg) {
			continue
		}
		var k int64
		for _, u := range g.Adjncy[g.Xadj[v]:g.Xadj[v+1]] {
			k += int64(u)
		}
		if part != nil {
			k += int64(part[v]) << 40
		}
		cands = append(cands, cand{k, v})
	}
	slices.SortFunc(cands, func(a, b cand) int {
		return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.v, b.v))
	})
	mark := grow32(&c.ws.mark, g.N())
	fill32(mark, -1)
	for i := 0; i < len(cands); i++ {
		v := cands[i].v
		if match[v] >= 0 {
			continue
		}
		for _, u := range g.Adjncy[g.Xadj[v]:g.Xadj[v+1]] {
			mark[u] = v
		}
		for j := i + 1; j < len(cands) && cands[j].key == cands[i].key; j++ {
			if u := cands[j].v; match[u] < 0 && (part == nil || part[u] == part[v]) && sameNeighbours(g, v, u, mark) {
				match[v], match[u] = u, v
				unmatched -= 2
				break
			}
		}
	}
	return unmatched
}

// sameNeighbours says whether u has v's degree and only neighbours marked v.
func sameNeighbours(g *Graph, v, u int32, mark []int32) bool {
	if g.Xadj[u+1]-g.Xadj[u] != g.Xadj[v+1]-g.Xadj[v] {
		return false
	}
	for _, w := range g.Adjncy[g.Xadj[u]:g.Xadj[u+1]] {
		if mark[w] != v {
			return false
		}
	}
	return true
}

// uniformEdges says whether all edges of g weigh the same, as on the input
// level of an unweighted graph.
func uniformEdges(g *Graph) bool {
	for _, w := range g.Adjwgt {
		if w != g.Adjwgt[0] {
			return false
		}
	}
	return true
}

// skewed says whether g's degrees are spread like a power-law graph's: the
// largest degree is over skewFactor times the average. Meshes stay far
// below (their largest degree is a small multiple of the average).
func skewed(g *Graph) bool {
	n := g.N()
	if n == 0 {
		return false
	}
	avg := float64(len(g.Adjncy)) / float64(n)
	for v := range n {
		if float64(g.Xadj[v+1]-g.Xadj[v]) > skewFactor*avg+skewFactor {
			return true
		}
	}
	return false
}
