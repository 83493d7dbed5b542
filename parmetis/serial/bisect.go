package serial

import "math/rand/v2"

// bisect splits g in two, side 0 getting frac0 of every constraint's weight
// within the bounds ub: coarsen, bisect the coarsest graph, then on every
// level back up project, balance and refine with FM.
func (c *ctrl) bisect(g *Graph, frac0 float64, ub []float64, rng *rand.Rand) []int8 {
	t := newBiTarget(g, frac0, ub)
	levels := c.coarsen(g, nil, c.coarsenTo, rng)
	coarsest := levels[len(levels)-1].g
	b := c.newBisection(coarsest, c.initBisection(coarsest, t, rng), nil)
	for l := len(levels) - 2; l >= 0; l-- {
		sparse := levels[l+1].sparse
		side, interior := c.projectSides(levels[l], b, !sparse)
		c.dropCoarser(levels, l)
		b = c.newBisection(levels[l].g, side, interior)
		c.improveBisection(b, t, fmPasses, rng)
		if levelHook != nil {
			levelHook(b, sparse)
		}
	}
	return b.side
}

// levelHook, when set (by tests), sees every level's bisection after
// refinement, and whether the coarser level was sparsified.
var levelHook func(b *bisection, coarserSparse bool)

// improveBisection balances and refines b, with METIS' single-constraint
// FM when there is one constraint and the multi-constraint FM otherwise.
func (c *ctrl) improveBisection(b *bisection, t *biTarget, passes int, rng *rand.Rand) {
	if b.g.NCon == 1 {
		c.balance2WaySingle(b, t)
		c.refine2WaySingle(b, t, passes, rng)
		return
	}
	c.balance2WayMulti(b, t)
	c.refine2WayMulti(b, t, passes)
}
