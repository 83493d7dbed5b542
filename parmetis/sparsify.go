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

// sparsify keeps, for every owned vertex v, only its keep[v] heaviest edges
// and the edges its neighbours keep for themselves (so the result stays
// symmetric): DistDGLv2's remedy for coarse vertices of power-law graphs,
// which inherit the edges of all their members and make the coarse graph
// barely smaller than the fine one. It reports whether any edge went.
func (g *DistGraph) sparsify(keep []int64) (bool, error) {
	nl := g.NLocal()
	thr := make([]edgeKey, nl+len(g.Ghosts))
	var keys []edgeKey
	for v := range int32(nl) {
		deg := g.Xadj[v+1] - g.Xadj[v]
		if deg <= keep[v] || keep[v] <= 0 {
			continue // keeps everything: threshold is the zero key
		}
		keys = keys[:0]
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			keys = append(keys, g.edgeKey(v, e))
		}
		thr[v] = serial.KthLargest(keys, int(keep[v]), edgeKey.less)
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
			// no weight is below zero, so no hash is needed.
			if tu := thr[g.Adj[e]]; thr[v] != (edgeKey{}) && tu != (edgeKey{}) {
				if k := g.edgeKey(v, e); k.less(thr[v]) && k.less(tu) {
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
