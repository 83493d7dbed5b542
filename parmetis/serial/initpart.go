package serial

import (
	"math/rand/v2"
	"time"
)

// initBisection bisects the coarsest graph: c.tries greedy graph growings
// from random seed vertices, each balanced and refined by FM; the balanced
// try with the smallest cut wins (the least unbalanced if none is).
func (c *ctrl) initBisection(g *Graph, t *biTarget, rng *rand.Rand) []int8 {
	n := g.N()
	best := make([]int8, n)
	bestCut, bestExcess := int64(-1), 0.0
	side := make([]int8, n)
	for range c.tries {
		b := c.growBisection(g, t, side, rng)
		c.improveBisection(b, t, fmPasses, rng)
		ex := max(t.excess(b.pw), 0)
		if bestCut < 0 || ex < bestExcess || (ex == bestExcess && b.cut < bestCut) {
			bestCut, bestExcess = b.cut, ex
			copy(best, side)
		}
	}
	return best
}

// growBisection grows side 0 from a random vertex, always adding the
// vertex of side 1 with the largest gain among those adjacent to side 0
// (greedy graph growing), jumping to a random vertex when side 0 has no
// neighbour left, until side 1 is down to its target in every constraint.
// A vertex that would push side 0 past its bound is passed over.
func (c *ctrl) growBisection(g *Graph, t *biTarget, side []int8, rng *rand.Rand) *bisection {
	defer c.since(PhaseInitPart, time.Now())
	n := g.N()
	for i := range side {
		side[i] = 1
	}
	b := c.newBisection(g, side, nil)
	q := &c.ws.gainQueuesFor(1, n)[0]
	passed := grow32(&c.ws.mark, n)
	fill32(passed, 0)
	order := make([]int32, n) // where to jump when the frontier is empty
	randomPerm(order, rng)
	next := 0
	for i := 0; i < n && overTarget(t, b.pw, 1); i++ {
		var v int32 = -1
		if q.len() > 0 {
			v = q.pop()
		} else {
			for ; next < n && v < 0; next++ {
				if u := order[next]; side[u] == 1 && passed[u] == 0 {
					v = u
				}
			}
			if v < 0 {
				break
			}
		}
		b.moveWeight(v, 1)
		if overBound(t, b.pw, 0) {
			b.moveWeight(v, 0)
			passed[v] = 1
			continue
		}
		b.flip(v)
		for _, u := range g.Adjncy[g.Xadj[v]:g.Xadj[v+1]] {
			switch {
			case side[u] != 1 || passed[u] != 0:
			case q.contains(u):
				q.update(u, b.ed[u]-b.id[u])
			default:
				q.push(u, b.ed[u]-b.id[u])
			}
		}
	}
	return b
}

// overTarget says whether side s is above its target (load 1) in some
// constraint.
func overTarget(t *biTarget, pw []int64, s int) bool {
	for c := range t.ncon {
		if t.load(pw, s, c) > 1 {
			return true
		}
	}
	return false
}

// overBound says whether side s exceeds its bound in some constraint.
func overBound(t *biTarget, pw []int64, s int) bool {
	for c := range t.ncon {
		if t.load(pw, s, c) > t.ub[c] {
			return true
		}
	}
	return false
}
