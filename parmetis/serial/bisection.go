package serial

// bisection is a 2-way partition of a graph with the bookkeeping that
// refinement and balancing need: the side of every vertex, the weight of its
// edges inside its side (id) and across (ed), the boundary (vertices with
// ed > 0, and isolated vertices, which can move for free), the weight of each
// side per constraint (pw[side*ncon+c]) and the cut.
type bisection struct {
	g      *Graph
	side   []int8
	id, ed []int64
	boundary
	pw  []int64
	cut int64
}

// newBisection computes the bookkeeping of side on g in the ctrl's reusable
// buffers; only one bisection built this way may be live at a time. Where
// interior (if not nil) is 1, the vertex is known to have no edge across.
func (c *ctrl) newBisection(g *Graph, side, interior []int8) *bisection {
	n := g.N()
	b := &bisection{
		g: g, side: side,
		id: grow64(&c.ws.id, n), ed: grow64(&c.ws.ed, n),
		boundary: boundary{bndPtr: grow32(&c.ws.bndPtr, n), bndInd: grow32(&c.ws.bndInd, n)[:0]},
		pw:       make([]int64, 2*g.NCon),
	}
	b.compute(interior)
	return b
}

func (b *bisection) compute(interior []int8) {
	g, nc := b.g, b.g.NCon
	clear(b.pw)
	b.cut = 0
	b.bndInd = b.bndInd[:0]
	for v := range int32(g.N()) {
		s := b.side[v]
		for i := range nc {
			b.pw[int(s)*nc+i] += g.Vwgt[int(v)*nc+i]
		}
		var id, ed int64
		if interior != nil && interior[v] != 0 {
			for _, w := range g.Adjwgt[g.Xadj[v]:g.Xadj[v+1]] {
				id += int64(w)
			}
		} else {
			// Without a branch on the neighbour's side, which a power-law
			// graph's neighbours make a coin toss: across is 1 where the
			// sides differ (sides are 0 and 1), and -across masks w.
			for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
				w, across := int64(g.Adjwgt[e]), int64(b.side[g.Adjncy[e]]^s)
				id += w
				ed += w & -across
			}
			id -= ed
		}
		b.id[v], b.ed[v] = id, ed
		b.cut += ed
		b.bndPtr[v] = -1
		if ed > 0 || g.Xadj[v] == g.Xadj[v+1] {
			b.bndInsert(v)
		}
	}
	b.cut /= 2
}

// moveWeight moves v's weights from side `from` to the other side without
// touching anything else, so a move can be tried on the balance first.
func (b *bisection) moveWeight(v int32, from int) {
	nc := b.g.NCon
	to := 1 - from
	for i, w := range b.g.Vwgt[int(v)*nc : int(v+1)*nc] {
		b.pw[from*nc+i] -= w
		b.pw[to*nc+i] += w
	}
}

// flip puts v on the other side and updates the cut, the degrees and the
// boundary; the side weights are moveWeight's job.
func (b *bisection) flip(v int32) {
	g := b.g
	to := b.flipSelf(v)
	for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
		u, w := g.Adjncy[e], int64(g.Adjwgt[e])
		if b.side[u] == to {
			b.id[u] += w
			b.ed[u] -= w
		} else {
			b.id[u] -= w
			b.ed[u] += w
		}
		b.bndSet(u, b.ed[u] > 0)
	}
}

// flipSelf puts v on the other side and updates its own degrees, the cut
// and its boundary membership; it returns v's new side.
func (b *bisection) flipSelf(v int32) int8 {
	to := 1 - b.side[v]
	b.side[v] = to
	b.cut += b.id[v] - b.ed[v]
	b.id[v], b.ed[v] = b.ed[v], b.id[v]
	b.bndSet(v, b.ed[v] > 0 || b.g.Xadj[v] == b.g.Xadj[v+1])
	return to
}

// flipQueued is flip for FM: in the same pass over v's edges it brings the
// queue entries of v's unmoved neighbours up to date (new gains, new
// boundary vertices in, interior ones out). One pass instead of two matters
// on power-law graphs, where moved vertices have hundreds of neighbours.
func (b *bisection) flipQueued(v int32, qs []gainQueue, qnum []int32, moved []int32) {
	g := b.g
	nc := g.NCon
	to := b.flipSelf(v)
	lo, hi := g.Xadj[v], g.Xadj[v+1]
	wgt := g.Adjwgt[lo:hi]
	for i, u := range g.Adjncy[lo:hi] {
		w := int64(wgt[i])
		su := b.side[u]
		if su == to {
			w = -w
		}
		id, ed := b.id[u]-w, b.ed[u]+w
		b.id[u], b.ed[u] = id, ed
		b.bndSet(u, ed > 0)
		if moved[u] >= 0 {
			continue
		}
		q := &qs[queueIndex(qnum, nc, su, u)]
		switch {
		case ed > 0 && q.loc[u] >= 0:
			q.update(u, ed-id)
		case ed > 0:
			q.push(u, ed-id)
		case q.loc[u] >= 0:
			q.remove(u)
		}
	}
}

// rollback ends an FM pass: it undoes the moves swaps made after the best
// prefix swaps[:best+1], newest first, and marks every vertex unmoved.
func (b *bisection) rollback(swaps []int32, best int, moved []int32) {
	for i := len(swaps) - 1; i > best; i-- {
		b.move(swaps[i])
	}
	for _, v := range swaps {
		moved[v] = -1
	}
}

// move moves v to the other side, weights included.
func (b *bisection) move(v int32) {
	b.moveWeight(v, int(b.side[v]))
	b.flip(v)
}

// biTarget is the balance goal of a bisection: side s should get frac[s] of
// each constraint's total weight, and no side may exceed ub[c] times that.
type biTarget struct {
	ncon  int
	frac0 float64
	mult  []float64 // [s*ncon+c] = 1/(frac[s]*total[c]), 0 for a zero total
	ub    []float64
}

func newBiTarget(g *Graph, frac0 float64, ub []float64) *biTarget {
	nc := g.NCon
	inv := inverseTotals(constraintTotals(g))
	t := &biTarget{ncon: nc, frac0: frac0, mult: make([]float64, 2*nc), ub: ub}
	for i := range nc {
		t.mult[i] = inv[i] / frac0
		t.mult[nc+i] = inv[i] / (1 - frac0)
	}
	return t
}

// load returns side s's weight in constraint c relative to its target.
func (t *biTarget) load(pw []int64, s, c int) float64 {
	return float64(pw[s*t.ncon+c]) * t.mult[s*t.ncon+c]
}

// excess returns the largest amount by which a side's load exceeds its
// bound; zero or less means balanced.
func (t *biTarget) excess(pw []int64) float64 {
	m := -1e300
	for s := range 2 {
		for c := range t.ncon {
			m = max(m, t.load(pw, s, c)-t.ub[c])
		}
	}
	return m
}

// worst returns the side and constraint of the largest excess, or -1, -1
// when balanced.
func (t *biTarget) worst(pw []int64) (side, con int) {
	side, con = -1, -1
	m := 0.0
	for s := range 2 {
		for c := range t.ncon {
			if x := t.load(pw, s, c) - t.ub[c]; x > m {
				m, side, con = x, s, c
			}
		}
	}
	return side, con
}

// queueOf returns, for several constraints, the constraint in which each
// vertex is heaviest relative to the totals: refinement and balancing keep
// one queue per side and constraint and take vertices from the queue of the
// constraint that needs to lose weight (METIS' multi-constraint FM). It
// returns nil for one constraint.
func (c *ctrl) queueOf(g *Graph) []int32 {
	nc := g.NCon
	if nc == 1 {
		return nil
	}
	inv := inverseTotals(constraintTotals(g))
	q := grow32(&c.ws.qnum, g.N())
	for v := range q {
		best, bw := 0, -1.0
		for i, w := range g.Vwgt[v*nc : (v+1)*nc] {
			if x := float64(w) * inv[i]; x > bw {
				best, bw = i, x
			}
		}
		q[v] = int32(best)
	}
	return q
}

// queueIndex returns the queue of vertex v on side s.
func queueIndex(qnum []int32, ncon int, s int8, v int32) int {
	if qnum == nil {
		return int(s)
	}
	return int(s)*ncon + int(qnum[v])
}
