package serial

import (
	"math/bits"
	"time"
)

// sparsify drops the light edges of dense coarse graphs: every vertex keeps
// its `keep` heaviest edges, and an edge survives if either endpoint keeps
// it, so the graph stays symmetric. On power-law graphs coarse levels get
// nearly complete (R-MAT scale 18 keeps 3.5M of its 3.8M edges down to 7k
// vertices), and their edges, not their vertices, make coarsening and FM
// expensive; the light edges matter little to where the coarse cut goes,
// since finer levels see every edge again (DistDGLv2 keeps coarse degrees
// near their members' average the same way).
func (c *ctrl) sparsify(g *Graph, keep int) {
	defer c.since(PhaseContract, time.Now())
	n := g.N()
	thr := c.ws.arena.get32(n)
	defer c.ws.arena.put32(thr)
	for v := range n {
		w := g.Adjwgt[g.Xadj[v]:g.Xadj[v+1]]
		if len(w) <= keep {
			thr[v] = 0
			continue
		}
		thr[v] = KthLargestWeight(w, keep, &c.ws.wgts)
	}
	var ce int64
	start := int64(0)
	for v := range n {
		end := g.Xadj[v+1]
		for e := start; e < end; e++ {
			u, w := g.Adjncy[e], g.Adjwgt[e]
			if w >= thr[v] || w >= thr[u] {
				g.Adjncy[ce], g.Adjwgt[ce] = u, w
				ce++
			}
		}
		start = end
		g.Xadj[v+1] = ce
	}
	g.Adjncy, g.Adjwgt = g.Adjncy[:ce], g.Adjwgt[:ce]
}

// KthLargestWeight returns the k-th largest (1-based) of xs, edge weights
// or hashes (none negative), leaving them as they are: a radix selection,
// 8 bits a round from the top. A round counts the candidates by those bits
// of theirs; the k-th largest lies in the bucket where the counts from the
// top reach k, whose candidates (gathered into scratch) go to the next
// round with k less the candidates above. One round settles the light
// weights of most coarse levels. (Hoare's selection over a copy of every
// vertex's weights, calling its comparison through a func value, took
// 2.7 s of 55 s on R-MAT scale 20 at K = 64, one rank.)
func KthLargestWeight[T int32 | int64 | uint64](xs []T, k int, scratch *[]T) T {
	var top T
	for _, x := range xs {
		top = max(top, x)
	}
	// Every candidate shares its bits from hi up.
	cand, hi := xs, bits.Len64(uint64(top))
	for {
		lo := max(hi-8, 0)
		mask := uint64(1)<<(hi-lo) - 1
		var count [256]int32
		for _, x := range cand {
			count[uint64(x)>>lo&mask]++
		}
		b := mask
		for int(count[b]) < k {
			k -= int(count[b])
			b--
		}
		if lo == 0 {
			return T(uint64(cand[0])>>hi<<hi | b)
		}
		next := (*scratch)[:0]
		for _, x := range cand {
			if uint64(x)>>lo&mask == b {
				next = append(next, x)
			}
		}
		*scratch, cand, hi = next, next, lo
	}
}
