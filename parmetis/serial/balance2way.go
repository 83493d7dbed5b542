package serial

import "time"

// balance2WayMulti moves vertices off the most overweight side, best gain first
// and whatever the gain, until both sides are within their bounds. Every
// vertex of that side is a candidate, not just the boundary, so it also
// works on disconnected graphs. A move is made only if it lowers the excess;
// a vertex too heavy to help is skipped. It may stop short of balance when
// no single move helps (a vertex heavier than the slack); refinement then
// keeps preferring balancing moves.
func (c *ctrl) balance2WayMulti(b *bisection, t *biTarget) {
	from, _ := t.worst(b.pw)
	if from < 0 {
		return
	}
	defer c.since(PhaseBalance2Way, time.Now())
	g := b.g
	n, nc := g.N(), g.NCon
	qnum := c.queueOf(g)
	qs := c.ws.gainQueuesFor(nc, n)
	for v := range int32(n) {
		if int(b.side[v]) == from {
			qs[queueIndex(qnum, nc, 0, v)].push(v, b.ed[v]-b.id[v])
		}
	}
	for {
		excess := t.excess(b.pw)
		if excess <= 0 {
			return
		}
		qi := t.neediest(b.pw, from)
		if qs[qi].len() == 0 {
			if qi = bestQueue(qs, 0); qi < 0 {
				return
			}
		}
		v := qs[qi].pop()
		b.moveWeight(v, from)
		if t.excess(b.pw) >= excess {
			b.moveWeight(v, 1-from)
			continue
		}
		b.flip(v)
		for _, u := range g.Adjncy[g.Xadj[v]:g.Xadj[v+1]] {
			if q := &qs[queueIndex(qnum, nc, 0, u)]; int(b.side[u]) == from && q.contains(u) {
				q.update(u, b.ed[u]-b.id[u])
			}
		}
	}
}

// neediest returns the constraint in which side s exceeds its bound most.
func (t *biTarget) neediest(pw []int64, s int) int {
	best, m := 0, -1e300
	for c := range t.ncon {
		if x := t.load(pw, s, c) - t.ub[c]; x > m {
			best, m = c, x
		}
	}
	return best
}

// balance2WaySingle balances a bisection with one constraint (METIS'
// Balance2Way): nothing happens while both sides are within their bounds or
// the deviation from the target is under three average vertex weights
// (coarse levels cannot do better); otherwise vertices move from the heavy
// side, best gain first, until the light side reaches its target. Only
// boundary vertices are candidates when there is a boundary, all vertices of
// the heavy side otherwise.
func (c *ctrl) balance2WaySingle(b *bisection, t *biTarget) {
	if t.excess(b.pw) <= 0 {
		return
	}
	g := b.g
	n := g.N()
	tot := b.pw[0] + b.pw[1]
	tp0 := int64(t.frac0 * float64(tot))
	tp := [2]int64{tp0, tot - tp0}
	if abs64(tp[0]-b.pw[0]) < 3*tot/int64(max(n, 1)) {
		return
	}
	defer c.since(PhaseBalance2Way, time.Now())
	from := int8(0)
	if b.pw[0] < tp[0] {
		from = 1
	}
	to := 1 - from
	mindiff := abs64(tp[0] - b.pw[0])
	q := &c.ws.gainQueuesFor(1, n)[0]
	eligible := func(v int32) bool { return b.side[v] == from && g.Vwgt[v] <= mindiff }
	boundaryOnly := len(b.bndInd) > 0
	if boundaryOnly {
		for _, v := range b.bndInd {
			if eligible(v) {
				q.push(v, b.ed[v]-b.id[v])
			}
		}
	} else {
		for v := range int32(n) {
			if eligible(v) {
				q.push(v, b.ed[v]-b.id[v])
			}
		}
	}
	for q.len() > 0 {
		v := q.pop()
		if b.pw[to]+g.Vwgt[v] > tp[to] {
			break
		}
		b.move(v)
		for _, u := range g.Adjncy[g.Xadj[v]:g.Xadj[v+1]] {
			switch {
			case !eligible(u):
			case q.contains(u):
				q.update(u, b.ed[u]-b.id[u])
			case !boundaryOnly || b.bndPtr[u] >= 0:
				q.push(u, b.ed[u]-b.id[u])
			}
		}
	}
}
