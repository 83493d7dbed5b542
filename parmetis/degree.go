package parmetis

import (
	"time"

	"gnnrun/collective"
	"gnnrun/rank"
)

// degreeSplit bisects g by degree: side 1 takes the vertices of highest
// degree, ties to the lower global ID, until it holds tp1 of the vertex
// weight (one constraint), side 0 the rest. On a power-law graph without
// communities this separates the dense core from the periphery, which
// hangs on it: R-MAT 20's first bisection cut 4.4% of the edges this way,
// where the multilevel scheme's coarsest graph (stars around the hubs,
// each holding core and periphery) projected a cut of 46% that refinement
// brought to 10%. It returns the part of every owned vertex. It is
// collective.
func (g *DistGraph) degreeSplit(tp1 float64) ([]int32, error) {
	nl := g.NLocal()
	var top int64
	for v := range nl {
		top = max(top, g.Xadj[v+1]-g.Xadj[v])
	}
	top, err := collective.Max(g.c, top)
	if err != nil {
		return nil, err
	}
	// The weight of each degree, over all ranks.
	hist := make([]int64, top+1)
	for v := range nl {
		hist[g.Xadj[v+1]-g.Xadj[v]] += g.Vwgt[v*g.NCon]
	}
	if hist, err = collective.Allreduce(g.c, hist, rank.Sum); err != nil {
		return nil, err
	}
	var total int64
	for _, w := range hist {
		total += w
	}
	want := int64(tp1 * float64(total))
	// cut: the degree whose vertices side 1 takes only in part, need of
	// their weight, in global ID order (the ranks' order).
	cut, need := top, want
	for ; cut > 0 && hist[cut] < need; cut-- {
		need -= hist[cut]
	}
	var mine int64
	for v := range nl {
		if g.Xadj[v+1]-g.Xadj[v] == cut {
			mine += g.Vwgt[v*g.NCon]
		}
	}
	before, _, err := collective.Offset(g.c, mine)
	if err != nil {
		return nil, err
	}
	part := make([]int32, nl)
	for v := range nl {
		switch d := g.Xadj[v+1] - g.Xadj[v]; {
		case d > cut:
			part[v] = 1
		case d == cut && before < need:
			part[v] = 1
			before += g.Vwgt[v*g.NCon]
		}
	}
	return part, nil
}

// cutFraction returns the fraction of g's edge weight that the bisection
// part (of every owned vertex) cuts. It is collective.
func (g *DistGraph) cutFraction(part []int32) (float64, error) {
	full := make([]int32, g.NLocal()+len(g.Ghosts))
	copy(full, part)
	if err := haloUpdate(g, full); err != nil {
		return 0, err
	}
	sums := make([]int64, 2)
	for _, w := range g.Adjwgt {
		sums[0] += w
	}
	for v := range int32(g.NLocal()) {
		sums[1] += external(g, full, v)
	}
	sums, err := collective.Allreduce(g.c, sums, rank.Sum)
	if err != nil || sums[0] == 0 {
		return 0, err
	}
	return float64(sums[1]) / float64(sums[0]), nil
}

// hangsOnCore reports whether the first bisection of g's recursive
// bisection into o.Parts parts would start from a degree split (see
// coreStart): where it does, one rank bisects g as several do, where
// otherwise it partitions g serially. It is collective.
func (g *DistGraph) hangsOnCore(o Options) (bool, error) {
	arcs, err := g.arcs()
	if err != nil || g.N()+arcs <= replicateFloor {
		return false, err
	}
	if o, err = o.normalized(g.N(), g.NCon); err != nil {
		return false, err
	}
	o.TargetWeights = bisectionTargets(o.TargetWeights)
	part, err := g.coreStart(o, &rbStats{seconds: map[string]float64{}})
	return part != nil, err
}

// coreStart returns the degree split of g, a side of a recursive
// bisection, to start its bisection from (see coreSplitCut), deciding at
// the recursion's first bisection whether the graph hangs on a dense core;
// or nil, where it does not, or g is not power-law or has several
// constraints. It is collective.
func (g *DistGraph) coreStart(o Options, st *rbStats) ([]int32, error) {
	if st.core < 0 || g.NCon != 1 {
		return nil, nil
	}
	defer st.since("core", time.Now())
	if c, err := o.Coarsening.resolve(g); err != nil || c != CoarsenStars {
		return nil, err
	}
	part, err := g.degreeSplit(o.TargetWeights[1])
	if err != nil {
		return nil, err
	}
	if st.core == 0 {
		frac, err := g.cutFraction(part)
		if err != nil {
			return nil, err
		}
		st.core = -1
		if frac <= coreSplitCut {
			st.core = 1
		}
	}
	if st.core < 0 {
		return nil, nil
	}
	return part, nil
}
