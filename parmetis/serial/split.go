package serial

import "time"

// split returns the subgraphs induced by the sides s of a bisection with
// want[s], with the edges between the sides dropped, and for each the
// label (the vertex of the original graph) of every vertex; the others are
// nil. Their arrays come from the arena.
func (c *ctrl) split(g *Graph, label []int32, side []int8, want [2]bool) (gs [2]*Graph, labels [2][]int32) {
	defer c.since(PhaseSplit, time.Now())
	n, nc := g.N(), g.NCon
	rename := grow32(&c.ws.rename, n)
	var nv [2]int32
	var ne [2]int64
	for v := range n {
		s := side[v]
		rename[v] = nv[s]
		nv[s]++
		if !want[s] {
			continue
		}
		for _, u := range g.Adjncy[g.Xadj[v]:g.Xadj[v+1]] {
			if side[u] == s {
				ne[s]++
			}
		}
	}
	for s := range 2 {
		if want[s] {
			gs[s] = c.ws.arena.newGraph(int(nv[s]), ne[s], nc)
			labels[s] = c.ws.arena.get32(int(nv[s]))
		}
	}
	var ce [2]int64
	for v := range n {
		s := side[v]
		if !want[s] {
			continue
		}
		sg, sv := gs[s], rename[v]
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			if u := g.Adjncy[e]; side[u] == s {
				sg.Adjncy[ce[s]], sg.Adjwgt[ce[s]] = rename[u], g.Adjwgt[e]
				ce[s]++
			}
		}
		sg.Xadj[sv+1] = ce[s]
		copy(sg.Vwgt[int(sv)*nc:int(sv+1)*nc], g.Vwgt[v*nc:(v+1)*nc])
		labels[s][sv] = label[v]
	}
	return gs, labels
}
