package serial

import "math/rand/v2"

// directKway partitions g the way METIS' k-way scheme does: coarsen the
// whole graph to max(n/(20·log2 K), 30·K) vertices, partition the coarsest
// graph by recursive bisection, then project, balance and refine greedily
// on every level back up. It is cheap on meshes, where it often beats
// recursive bisection at the finest level; on power-law graphs it is far
// worse and not used.
func (c *ctrl) directKway(g *Graph, ub []float64, rng *rand.Rand) ([]int32, error) {
	coarsenTo := max(g.N()/(20*max(ceilLog2(c.o.Parts), 1)), 30*c.o.Parts)
	levels := c.coarsen(g, nil, coarsenTo, rng)
	cg := levels[len(levels)-1].g
	part := make([]int32, cg.N())
	label := make([]int32, cg.N())
	for i := range label {
		label[i] = int32(i)
	}
	c.recursiveBisect(cg, label, 0, c.o.Parts, ub, part)
	var err error
	for l := len(levels) - 1; l >= 0; l-- {
		if l < len(levels)-1 {
			part = c.projectParts(levels[l], part)
			c.dropCoarser(levels, l)
		}
		s := newKway(levels[l].g, part, c.o)
		err = c.balanceKway(s)
		c.refineKway(s, rng, kwayPasses)
	}
	return part, err
}
