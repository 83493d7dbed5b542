package serial

import (
	"cmp"
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
		thr[v] = kthLargestWeight(w, keep, &c.ws.wgts)
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

// kthLargestWeight returns the k-th largest (1-based) of the edge weights
// ws (positive), leaving them as they are: a radix selection. One pass
// finds the largest, a second counts the weights by their top 8 bits, and
// the k-th largest lies in the bucket where the counts from the top reach
// k: it is that bucket where a bucket holds one weight (the light weights
// of most coarse levels), else the bucket's weights, gathered into
// scratch, go through KthLargest. (KthLargest over a copy of every vertex's
// weights, calling its comparison through a func value, took 2.7 s of
// 55 s on R-MAT scale 20 at K = 64.)
func kthLargestWeight(ws []int32, k int, scratch *[]int32) int32 {
	var top int32
	for _, w := range ws {
		top = max(top, w)
	}
	shift := uint(max(bits.Len32(uint32(top))-8, 0))
	var count [256]int32
	for _, w := range ws {
		count[uint32(w)>>shift&255]++
	}
	b, above := 255, 0
	for above+int(count[b]) < k {
		above += int(count[b])
		b--
	}
	if shift == 0 {
		return int32(b)
	}
	in := (*scratch)[:0]
	for _, w := range ws {
		if uint32(w)>>shift == uint32(b) {
			in = append(in, w)
		}
	}
	*scratch = in
	return KthLargest(in, k-above, cmpLess[int32])
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
