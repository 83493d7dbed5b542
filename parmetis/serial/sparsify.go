package serial

import (
	"cmp"
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
	buf := grow32(&c.ws.wgts, 0)
	for v := range n {
		w := g.Adjwgt[g.Xadj[v]:g.Xadj[v+1]]
		if len(w) <= keep {
			thr[v] = 0
			continue
		}
		buf = append(buf[:0], w...)
		thr[v] = KthLargest(buf, keep, cmpLess[int32])
	}
	c.ws.wgts = buf
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

// KthLargest returns the k-th largest of xs (1-based) under less,
// reordering xs: Hoare's selection, O(len(xs)) on average. Sparsification
// picks the lightest edge a vertex keeps with it, here and in the
// distributed partitioner (package parmetis).
func KthLargest[T any](xs []T, k int, less func(a, b T) bool) T {
	lo, hi, want := 0, len(xs)-1, k-1
	for lo < hi {
		p := xs[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for less(p, xs[i]) {
				i++
			}
			for less(xs[j], p) {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case want <= j:
			hi = j
		case want >= i:
			lo = i
		default:
			return xs[want]
		}
	}
	return xs[want]
}

func cmpLess[T cmp.Ordered](a, b T) bool { return a < b }
