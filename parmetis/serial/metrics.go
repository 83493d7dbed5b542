package serial

// EdgeCut returns the total weight of the edges of g whose endpoints are in
// different parts (each undirected edge counted once).
func EdgeCut(g *Graph, part []int32) int64 {
	var cut int64
	for v := range g.N() {
		p := part[v]
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			if part[g.Adjncy[e]] != p {
				cut += int64(g.Adjwgt[e])
			}
		}
	}
	return cut / 2
}

// PartWeights returns the weight of every part in every constraint, part p's
// weight in constraint c at [p*g.NCon+c]. Part values must lie in [0,k).
func PartWeights(g *Graph, part []int32, k int) []int64 {
	nc := g.NCon
	pw := make([]int64, k*nc)
	for v, p := range part {
		for i := range nc {
			pw[int(p)*nc+i] += g.Vwgt[v*nc+i]
		}
	}
	return pw
}

// Imbalance returns, per constraint, the largest ratio over the parts of a
// part's weight to its target weight (o.TargetWeights[p] times the total, or
// an equal share when TargetWeights is nil): 1 is perfect balance, and a
// partition meets the options when every value is at most the constraint's
// Imbalance bound. A constraint with total weight 0 counts as 1. Part values
// must lie in [0,o.Parts).
func Imbalance(g *Graph, part []int32, o Options) []float64 {
	nc, k := g.NCon, o.Parts
	pw := PartWeights(g, part, k)
	tot := constraintTotals(g)
	r := make([]float64, nc)
	for i := range nc {
		if tot[i] == 0 {
			r[i] = 1
			continue
		}
		for p := range k {
			t := 1 / float64(k)
			if o.TargetWeights != nil {
				t = o.TargetWeights[p]
			}
			r[i] = max(r[i], float64(pw[p*nc+i])/(t*float64(tot[i])))
		}
	}
	return r
}

// Within reports whether every imbalance of imb is at most its bound in ub
// (with 1e-9 to spare for the rounding of the ratios).
func Within(imb, ub []float64) bool {
	for c := range imb {
		if imb[c] > ub[c]+1e-9 {
			return false
		}
	}
	return true
}
