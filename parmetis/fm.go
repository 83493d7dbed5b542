package parmetis

import (
	"slices"

	"gnnrun/graph"
)

// gainItem is a candidate move in the FM heap: moving v with at most gain.
// Entries are lazy: gain may be an upper bound, and an entry whose version
// is not v's current one is stale.
type gainItem struct {
	gain int64
	key  uint64 // tie-break, keyed by seed and vertex
	v    int32
	ver  uint32
}

// gainHeap is a binary max-heap of gainItems by (gain, then lower key).
// (container/heap would box every item pushed; FM pushes one per
// neighbour of every moved vertex.)
type gainHeap []gainItem

func (h gainHeap) less(i, j int) bool {
	if h[i].gain != h[j].gain {
		return h[i].gain > h[j].gain
	}
	return h[i].key < h[j].key
}

func (h *gainHeap) push(it gainItem) {
	*h = append(*h, it)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if !a.less(i, p) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *gainHeap) pop() gainItem {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && a.less(c+1, c) {
			c++
		}
		if !a.less(c, i) {
			break
		}
		a[i], a[c] = a[c], a[i]
		i = c
	}
	*h = a
	return top
}

// fmQueue is the lazy priority queue of one FM phase: each vertex has at
// most one live entry, whose gain bounds its best move from above.
type fmQueue struct {
	h      gainHeap
	ver    []uint32
	bound  []int64
	queued []bool
	seed   uint64
}

func newFMQueue(n int, seed uint64) *fmQueue {
	return &fmQueue{ver: make([]uint32, n), bound: make([]int64, n), queued: make([]bool, n), seed: seed}
}

func (q *fmQueue) push(v int32, gain int64) {
	q.ver[v]++
	q.bound[v], q.queued[v] = gain, true
	q.h.push(gainItem{gain, graph.Mix(q.seed, uint64(v)), v, q.ver[v]})
}

// pop returns the live entry with the highest bound, or false when empty.
func (q *fmQueue) pop() (gainItem, bool) {
	for len(q.h) > 0 {
		it := q.h.pop()
		if it.ver == q.ver[it.v] && q.queued[it.v] {
			q.queued[it.v] = false
			return it, true
		}
	}
	return gainItem{}, false
}

// bestMove returns v's best move that fits the weight view w and the
// inflow budget (nil: none), and its gain; -1 when there is none. With a
// part order perm, only moves in the phase's direction count; among equal
// gains the less loaded part wins, then the lower.
func (r *refiner) bestMove(v int32, perm []int32, phase int, w, budget []int64) (int32, int64) {
	pb, nc := r.pb, r.g.NCon
	a := r.full[v]
	parts := r.connectivity(v)
	vw := r.g.Vwgt[int(v)*nc : int(v+1)*nc]
	best, bestGain := int32(-1), int64(0)
	for _, b := range parts {
		if b == a || (perm != nil && (phase == 0) != (perm[a] < perm[b])) || !pb.fits(w, int(b), vw) || !withinBudget(budget, int(b), vw) {
			continue
		}
		g := r.conn[b] - r.conn[a]
		if best < 0 || g > bestGain || (g == bestGain && lessLoaded(pb, w, b, best)) {
			best, bestGain = b, g
		}
	}
	return best, bestGain
}

// lessLoaded reports whether part b is less loaded than part c in the
// weight view w, the lower index breaking ties: the parts of a vertex come
// in no particular order.
func lessLoaded(pb *partBook, w []int64, b, c int32) bool {
	lb, lc := pb.load(w, int(b), nil, 0), pb.load(w, int(c), nil, 0)
	return lb < lc || (lb == lc && b < c)
}

func withinBudget(budget []int64, p int, vw []int64) bool {
	if budget == nil {
		return true
	}
	nc := len(vw)
	for c := range nc {
		if vw[c] > budget[p*nc+c] {
			return false
		}
	}
	return true
}

// fmPhase is a Fiduccia-Mattheyses local search over this rank's vertices
// with the ghosts held fixed: it repeatedly moves the vertex with the best
// gain, negative gains included, so it can climb out of local minima, and
// then rolls back to the best prefix of moves. Gains are kept lazily: a move
// raises its neighbours' bounds by what it can add to their gains, and a
// vertex's exact gain is computed only when it reaches the top. Each rank
// may fill a part only up to its 1/P share of the room left, so the moves of
// all ranks together stay within the bounds.
func (r *refiner) fmPhase(order []int32, perm []int32, phase int) (bool, error) {
	g, pb := r.g, r.pb
	nc, np, nl := g.NCon, int64(g.c.Size()), g.NLocal()
	w := slices.Clone(pb.w)
	budget := make([]int64, len(w))
	for i := range budget {
		budget[i] = max(0, int64(pb.max[i]-float64(pb.w[i]))/np)
	}
	moved := make([]bool, nl)
	q := newFMQueue(nl, r.ctl.seed)
	exact := func(v int32) {
		if b, gain := r.bestMove(v, perm, phase, w, budget); b >= 0 {
			q.push(v, gain)
		}
	}
	for _, v := range order {
		if r.isBoundary(v) {
			exact(v)
		}
	}
	var moves []move
	var sum, bestSum int64
	bestLen := 0
	for len(moves)-bestLen < fmFruitless {
		it, ok := q.pop()
		if !ok {
			break
		}
		b, gain := r.bestMove(it.v, perm, phase, w, budget)
		if b < 0 {
			continue
		}
		if gain < it.gain {
			q.push(it.v, gain) // the bound was loose
			continue
		}
		m := move{it.v, r.full[it.v], b, gain}
		r.apply(w, m)
		for c := range nc {
			budget[int(b)*nc+c] -= g.Vwgt[int(it.v)*nc+c]
			budget[int(m.from)*nc+c] += g.Vwgt[int(it.v)*nc+c]
		}
		moved[it.v] = true
		moves = append(moves, m)
		if sum += gain; sum > bestSum {
			bestSum, bestLen = sum, len(moves)
		}
		r.raiseBounds(q, m, moved, exact)
	}
	for i := len(moves) - 1; i >= bestLen; i-- {
		m := moves[i]
		r.apply(w, move{m.v, m.to, m.from, -m.gain})
	}
	return r.settle(moves[:bestLen], true)
}

// raiseBounds updates the queue after move m: a neighbour left behind in
// m's old part may gain up to twice the edge weight, one in a third part up
// to the weight, one in m's new part nothing; a neighbour with no entry gets
// its exact gain, as it may just have reached the boundary.
func (r *refiner) raiseBounds(q *fmQueue, m move, moved []bool, exact func(int32)) {
	g := r.g
	for e := g.Xadj[m.v]; e < g.Xadj[m.v+1]; e++ {
		u := g.Adj[e]
		if int(u) >= g.NLocal() || moved[u] {
			continue
		}
		if !q.queued[u] {
			exact(u)
			continue
		}
		switch r.full[u] {
		case m.from:
			q.push(u, q.bound[u]+2*g.Adjwgt[e])
		case m.to:
		default:
			q.push(u, q.bound[u]+g.Adjwgt[e])
		}
	}
}

// isBoundary reports whether v has a neighbour in another part: in O(1)
// with two parts (edge weights are positive, so an external weight says
// so), else from the connectivity table in O(parts v touches).
func (r *refiner) isBoundary(v int32) bool {
	if t := r.gains(); t != nil {
		return t.ext[v] > 0
	}
	return r.table().external(v, r.full[v]) > 0
}
