package serial

import (
	"testing"

	"gnnrun/parteval"
)

// The tests judge a partition by what parteval measures of it from the
// graph and the parts alone, never by EdgeCut, PartWeights or Imbalance: a
// bug the partitioner shares with its own metrics (part weights summed
// wrong, say) would pass a test that asks them. TestMetricsMatchParteval
// checks the metrics themselves against parteval.

// measure returns parteval's measure of the partition part of g into
// o.Parts parts: the cut, and the balance of every constraint of g against
// o's target weights.
func measure(tb testing.TB, g *Graph, part []int32, o Options) *parteval.Result {
	tb.Helper()
	wgt := make([]int64, len(g.Adjwgt))
	for e, w := range g.Adjwgt {
		wgt[e] = int64(w)
	}
	pg, err := parteval.FromCSR(g.Xadj, g.Adjncy, wgt)
	if err != nil {
		tb.Fatal(err)
	}
	cons, err := parteval.SplitWeights(g.Vwgt, g.NCon)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := parteval.Evaluate(pg, part, o.Parts, o.TargetWeights, cons)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// checkBalanced fails the test when parteval finds a constraint of g above
// its bound in o, and returns the measure.
func checkBalanced(tb testing.TB, g *Graph, part []int32, o Options) *parteval.Result {
	tb.Helper()
	m := measure(tb, g, part, o)
	for c, b := range m.Balance {
		if ub := bound(o, c); b.Imbalance > ub+1e-9 {
			tb.Errorf("constraint %d: imbalance %.4f above bound %.4f (part weights %v)", c, b.Imbalance, ub, b.Parts)
		}
	}
	return m
}

// bound returns constraint c's imbalance bound in o as Options documents
// it (one for all constraints, one each, or 1.03), read here rather than
// through Normalized so that a wrong default there shows.
func bound(o Options, c int) float64 {
	switch len(o.Imbalance) {
	case 0:
		return 1.03
	case 1:
		return o.Imbalance[0]
	}
	return o.Imbalance[c]
}

// imbalances returns the measured imbalance of every constraint, in order.
func imbalances(m *parteval.Result) []float64 {
	out := make([]float64, len(m.Balance))
	for c, b := range m.Balance {
		out[c] = b.Imbalance
	}
	return out
}

// sideParts returns a bisection's sides as parts 0 and 1.
func sideParts(side []int8) []int32 {
	part := make([]int32, len(side))
	for v, s := range side {
		part[v] = int32(s)
	}
	return part
}
