package parmetis

import (
	"gnnrun/collective"
	"gnnrun/rank"
)

// partBook tracks the global weight of every part for every constraint
// and the bound each may not exceed.
type partBook struct {
	k, ncon int
	w       []int64   // k*ncon, global
	max     []float64 // k*ncon: ub[c] * target[p] * total[c]
	total   []int64   // ncon
}

// newPartBook sums over all ranks the part weights of the vertices whose
// nc weights each are vwgt and whose parts are the first len(vwgt)/nc of
// part; o must be normalized. It is collective.
func newPartBook(comm *collective.Comm, nc int, vwgt []int64, part []int32, o Options) (*partBook, error) {
	k := o.Parts
	local := make([]int64, k*nc+nc)
	for v := range len(vwgt) / nc {
		p := int(part[v])
		for c := range nc {
			local[p*nc+c] += vwgt[v*nc+c]
			local[k*nc+c] += vwgt[v*nc+c]
		}
	}
	all, err := collective.Allreduce(comm, local, rank.Sum)
	if err != nil {
		return nil, err
	}
	b := &partBook{k: k, ncon: nc, w: all[:k*nc], total: all[k*nc:], max: make([]float64, k*nc)}
	for p := range k {
		for c := range nc {
			b.max[p*nc+c] = o.Imbalance[c] * o.TargetWeights[p] * float64(b.total[c])
		}
	}
	return b, nil
}

// fits reports whether part p can take weights vw (one per constraint) on
// top of its current weight w (a local view, possibly ahead of the global).
func (b *partBook) fits(w []int64, p int, vw []int64) bool {
	for c := range b.ncon {
		if vw[c] > 0 && float64(w[p*b.ncon+c]+vw[c]) > b.max[p*b.ncon+c] {
			return false
		}
	}
	return true
}

// eases reports whether moving weights vw from part from to part to
// lowers the two parts' excess over their bounds (see excess), on top of
// the weights w, by more than rounding could (a move between two parts
// over in the same constraint only shifts the excess).
func (b *partBook) eases(w []int64, from, to int, vw []int64) bool {
	const rounding = 1e-12
	return b.excess(w, from, vw, -1)+b.excess(w, to, vw, 1) < b.excess(w, from, nil, 0)+b.excess(w, to, nil, 0)-rounding
}

// excess returns how far part p, with sign times vw added to its weights
// w (vw nil: as they are), is above its bounds, summed over the
// constraints, each relative to its bound (a constraint whose bound is 0
// counts its weight).
func (b *partBook) excess(w []int64, p int, vw []int64, sign int64) float64 {
	var e float64
	for c := range b.ncon {
		x := w[p*b.ncon+c]
		if vw != nil {
			x += sign * vw[c]
		}
		if m := b.max[p*b.ncon+c]; m > 0 {
			e += max(0, float64(x)/m-1)
		} else if x > 0 {
			e += float64(x)
		}
	}
	return e
}

// over returns how far part p is above its bound in the constraint where
// it is furthest above, relative to the bound (0 when within bounds).
func (b *partBook) over(w []int64, p int) float64 {
	worst := 0.0
	for c := range b.ncon {
		if m := b.max[p*b.ncon+c]; m > 0 {
			worst = max(worst, float64(w[p*b.ncon+c])/m-1)
		} else if w[p*b.ncon+c] > 0 {
			worst = max(worst, 1)
		}
	}
	return worst
}

// balanced reports whether every part is within its bounds.
func (b *partBook) balanced() bool {
	for p := range b.k {
		if b.over(b.w, p) > 0 {
			return false
		}
	}
	return true
}

// imbalance returns, per constraint, the largest ratio of a part's weight
// to its target share of the total.
func (b *partBook) imbalance(o Options) []float64 {
	out := make([]float64, b.ncon)
	for c := range b.ncon {
		if b.total[c] == 0 {
			out[c] = 1
			continue
		}
		for p := range b.k {
			out[c] = max(out[c], float64(b.w[p*b.ncon+c])/(o.TargetWeights[p]*float64(b.total[c])))
		}
	}
	return out
}

// betterBalanced reports whether moving vw from part a to part b lowers the
// larger of the two parts' relative loads.
func (b *partBook) betterBalanced(w []int64, a, bb int, vw []int64) bool {
	before := max(b.load(w, a, nil, 0), b.load(w, bb, nil, 0))
	after := max(b.load(w, a, vw, -1), b.load(w, bb, vw, 1))
	return after < before
}

// load is part p's heaviest relative load, with vw added sign times.
func (b *partBook) load(w []int64, p int, vw []int64, sign int64) float64 {
	worst := 0.0
	for c := range b.ncon {
		x := w[p*b.ncon+c]
		if vw != nil {
			x += sign * vw[c]
		}
		if m := b.max[p*b.ncon+c]; m > 0 {
			worst = max(worst, float64(x)/m)
		}
	}
	return worst
}
