package serial

// recursiveBisect assigns parts lo..hi-1 to the vertices of g (labels are
// their indices in the input graph): bisect g with the first half of the
// parts' target weight on side 0, split, and recurse on both halves, in
// parallel when a goroutine slot is free. Parts lo..mid-1 take side 0, with
// mid = lo + (hi-lo)/2, so K need not be a power of two, and uneven target
// weights carry through the fractions. Each bisection draws from its own
// generator keyed by (seed, lo, hi), so the result does not depend on the
// scheduling.
func (c *ctrl) recursiveBisect(g *Graph, label []int32, lo, hi int, ub []float64, part []int32) {
	if hi-lo == 1 || g.N() == 0 {
		for _, l := range label {
			part[l] = int32(lo)
		}
		return
	}
	mid := lo + (hi-lo)/2
	var w0, w float64
	for p := lo; p < hi; p++ {
		w += c.o.TargetWeights[p]
		if p < mid {
			w0 += c.o.TargetWeights[p]
		}
	}
	side := c.bisect(g, w0/w, ub, newRand(c.o.Seed, 1, uint64(lo), uint64(hi)))
	// A side that is one part needs no graph of its own.
	first := [2]int32{int32(lo), int32(mid)}
	more := [2]bool{mid-lo > 1, hi-mid > 1}
	for v, s := range side {
		if !more[s] {
			part[label[v]] = first[s]
		}
	}
	if !more[0] && !more[1] {
		return
	}
	gs, labels := c.split(g, label, side, more)
	half := func(s, lo, hi int) func(*ctrl) {
		return func(c *ctrl) {
			if !more[s] {
				return
			}
			c.recursiveBisect(gs[s], labels[s], lo, hi, ub, part)
			c.ws.arena.freeGraph(gs[s])
			c.ws.arena.put32(labels[s])
		}
	}
	c.parallel(half(0, lo, mid), half(1, mid, hi))
}
