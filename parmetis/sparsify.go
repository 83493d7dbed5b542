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
	thr, err := g.thresholds(keep)
	if err != nil {
		return false, err
	}
	// Filter in place. Ghosts no edge refers to any more stay ghosts: the
	// halo keeps working, at the cost of a few idle values per update.
	next := int64(0)
	nl := g.NLocal()
	var es []int64
	for v := range int32(nl) {
		start := next
		es = thr.kept(g, v, es[:0])
		for _, e := range es {
			g.Adj[next], g.Adjwgt[next] = g.Adj[e], g.Adjwgt[e]
			next++
		}
		g.Xadj[v] = start
	}
	dropped := next < int64(len(g.Adj))
	g.Xadj[nl] = next
	g.Adj, g.Adjwgt = g.Adj[:next], g.Adjwgt[:next]
	return collective.Any(g.c, dropped)
}

// thresholds holds, for every owned vertex and ghost, the key of the
// lightest edge it keeps for itself; the zero key keeps every edge.
type thresholds []edgeKey

// thresholds finds the key of every owned vertex v's keep[v]-th heaviest
// edge (none where v keeps all: a keep of 0, or at least its degree) and
// gives the ghosts theirs. It is collective.
func (g *DistGraph) thresholds(keep []int64) (thresholds, error) {
	nl := g.NLocal()
	thr := make(thresholds, nl+len(g.Ghosts))
	var scratch kthScratch
	for v := range int32(nl) {
		deg := g.Xadj[v+1] - g.Xadj[v]
		if deg <= keep[v] || keep[v] <= 0 {
			continue // keeps everything: threshold is the zero key
		}
		thr[v] = g.kthKey(v, int(keep[v]), &scratch)
	}
	return thr, haloUpdate(g, []edgeKey(thr))
}

// kept appends to es the arcs of owned vertex v that survive, those one
// of whose ends keeps them for itself, and returns it. An end that keeps
// everything (the zero key) keeps the edge: no weight is below zero. The
// weight alone decides unless it equals an end's threshold's; only then is
// the hash computed.
func (thr thresholds) kept(g *DistGraph, v int32, es []int64) []int64 {
	tv := thr[v]
	for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
		tu, w := thr[g.Adj[e]], g.Adjwgt[e]
		if tv != (edgeKey{}) && tu != (edgeKey{}) && w <= tv.W && w <= tu.W {
			k := edgeKey{W: w}
			if w == tv.W || w == tu.W {
				k = g.edgeKey(v, e)
			}
			if k.less(tv) && k.less(tu) {
				continue
			}
		}
		es = append(es, e)
	}
	return es
}
