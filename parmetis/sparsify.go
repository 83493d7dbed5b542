package parmetis

import (
	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/parmetis/serial"
)

// edgeKey ranks the edges of a vertex: heavier first, ties broken by a hash
// of the two ends that both ends compute alike.
type edgeKey struct {
	W int64
	H uint64
}

func (a edgeKey) less(b edgeKey) bool { return a.W < b.W || (a.W == b.W && a.H < b.H) }

func (g *DistGraph) edgeKey(v int32, e int64) edgeKey {
	a, b := g.GID(v), g.GID(g.Adj[e])
	return edgeKey{g.Adjwgt[e], graph.Mix(uint64(min(a, b)), uint64(max(a, b)))}
}

// kthScratch is kthKey's scratch memory.
type kthScratch struct {
	ws       []int64
	hs, hsel []uint64
}

// kthKey returns the keep-th largest key of owned vertex v's edges
// (1 <= keep <= its degree): the keep-th largest weight, and among the
// edges of that weight the hash that makes it the keep-th, so only those
// edges' hashes are computed (every edge's key, then Hoare's selection
// over them, took 1.2 s of a rank's 35 on R-MAT 20 at K = 64, 2 ranks).
func (g *DistGraph) kthKey(v int32, keep int, s *kthScratch) edgeKey {
	lo, hi := g.Xadj[v], g.Xadj[v+1]
	w := serial.KthLargestWeight(g.Adjwgt[lo:hi], keep, &s.ws)
	heavier := 0
	s.hs = s.hs[:0]
	for e := lo; e < hi; e++ {
		switch {
		case g.Adjwgt[e] > w:
			heavier++
		case g.Adjwgt[e] == w:
			s.hs = append(s.hs, g.edgeKey(v, e).H)
		}
	}
	return edgeKey{W: w, H: serial.KthLargestWeight(s.hs, keep-heavier, &s.hsel)}
}

// sparsify keeps, for every owned vertex v, only its keep[v] heaviest edges
// and the edges its neighbours keep for themselves (so the result stays
// symmetric): DistDGLv2's remedy for coarse vertices of power-law graphs,
// which inherit the edges of all their members and make the coarse graph
// barely smaller than the fine one. It reports whether any edge went.
func (g *DistGraph) sparsify(keep []int64) (bool, error) {
	nl := g.NLocal()
	thr := make([]edgeKey, nl+len(g.Ghosts))
	var scratch kthScratch
	for v := range int32(nl) {
		deg := g.Xadj[v+1] - g.Xadj[v]
		if deg <= keep[v] || keep[v] <= 0 {
			continue // keeps everything: threshold is the zero key
		}
		thr[v] = g.kthKey(v, int(keep[v]), &scratch)
	}
	if err := haloUpdate(g, thr); err != nil {
		return false, err
	}
	// Filter in place. Ghosts no edge refers to any more stay ghosts: the
	// halo keeps working, at the cost of a few idle values per update.
	dropped := false
	next := int64(0)
	for v := range int32(nl) {
		start := next
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			// An end that keeps everything (the zero key) keeps the edge:
			// no weight is below zero, so no hash is needed. Nor is one
			// where the weight alone decides: only a weight equal to an
			// end's threshold's needs the hash to compare.
			tv, tu := thr[v], thr[g.Adj[e]]
			if w := g.Adjwgt[e]; tv != (edgeKey{}) && tu != (edgeKey{}) && w <= tv.W && w <= tu.W {
				k := edgeKey{W: w}
				if w == tv.W || w == tu.W {
					k = g.edgeKey(v, e)
				}
				if k.less(tv) && k.less(tu) {
					dropped = true
					continue
				}
			}
			g.Adj[next], g.Adjwgt[next] = g.Adj[e], g.Adjwgt[e]
			next++
		}
		g.Xadj[v] = start
	}
	g.Xadj[nl] = next
	g.Adj, g.Adjwgt = g.Adj[:next], g.Adjwgt[:next]
	return collective.Any(g.c, dropped)
}
