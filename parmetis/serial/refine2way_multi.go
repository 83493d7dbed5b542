package serial

import "time"

// refine2WayMulti is 2-way FM for several constraints (METIS'
// FM_Mc2WayCutRefine). A pass moves boundary vertices one at a time, each at
// most once, even at a negative gain, and then rolls back to the best
// balanced cut seen; climbing out of local minima this way is what makes FM
// much better than greedy moves. Each side keeps one queue per constraint,
// a vertex sitting in the queue of the constraint it is heaviest in; the
// next vertex comes from the queue of the most overweight side and
// constraint, or, when both sides are within bounds, from the queue with
// the best gain. A pass gives up after `limit` moves without a new best;
// passes stop when one brings no gain.
func (c *ctrl) refine2WayMulti(b *bisection, t *biTarget, passes int) {
	defer c.since(PhaseRefine2Way, time.Now())
	g := b.g
	n, nc := g.N(), g.NCon
	qnum := c.queueOf(g)
	nq := 2 * nc
	qs := c.ws.gainQueuesFor(nq, n)
	moved := grow32(&c.ws.moved, n)
	fill32(moved, -1)
	swaps := grow32(&c.ws.swaps, n)
	limit := min(max(n/100, 25), 150)
	for range passes {
		for i := range qs {
			qs[i].clear()
		}
		for _, v := range b.bndInd {
			qs[queueIndex(qnum, nc, b.side[v], v)].push(v, b.ed[v]-b.id[v])
		}
		initcut, mincut := b.cut, b.cut
		minbal := t.excess(b.pw)
		best, nswaps := -1, 0
		for ; nswaps < n; nswaps++ {
			qi := selectQueue(t, b.pw, qs)
			if qi < 0 {
				break
			}
			v := qs[qi].pop()
			from := int(b.side[v])
			newcut := b.cut - (b.ed[v] - b.id[v])
			b.moveWeight(v, from)
			newbal := t.excess(b.pw)
			if (newcut < mincut && newbal <= 0) || (newcut == mincut && newbal < minbal) || (minbal > 0 && newbal < minbal) {
				mincut, minbal, best = newcut, newbal, nswaps
			} else if nswaps-best > limit {
				b.moveWeight(v, 1-from)
				break
			}
			moved[v] = int32(nswaps)
			swaps[nswaps] = v
			b.flipQueued(v, qs, qnum, moved)
		}
		b.rollback(swaps[:nswaps], best, moved)
		if best <= 0 || mincut == initcut {
			break
		}
	}
}

// selectQueue returns the queue to move a vertex from: that of the most
// overweight side and constraint (or, when it is empty, the one of that side
// with the best gain), or when balanced the queue with the best gain
// overall. It returns -1 when there is nothing to move.
func selectQueue(t *biTarget, pw []int64, qs []gainQueue) int {
	nc := t.ncon
	side, con := t.worst(pw)
	if side >= 0 {
		if qs[side*nc+con].len() > 0 {
			return side*nc + con
		}
		return bestQueue(qs[side*nc:(side+1)*nc], side*nc)
	}
	return bestQueue(qs, 0)
}

// bestQueue returns off plus the index of the non-empty queue with the
// largest top key, or -1.
func bestQueue(qs []gainQueue, off int) int {
	best := -1
	for i := range qs {
		if qs[i].len() > 0 && (best < 0 || qs[i].topKey() > qs[best].topKey()) {
			best = i
		}
	}
	if best < 0 {
		return -1
	}
	return off + best
}
