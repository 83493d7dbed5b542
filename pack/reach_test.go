package pack

import (
	"math/rand/v2"
	"testing"
)

// TestReach checks both kinds of reach table against a brute-force bounded
// knapsack over the individual graphs.
func TestReach(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for i := range 200 {
		bins := make([]Bin, 1+rng.IntN(8))
		for k := range bins {
			bins[k] = Bin{Tuple{1 + rng.IntN(12), rng.IntN(20)}, 1 + rng.IntN(4)}
		}
		switch i % 3 {
		case 0: // many small graphs: the table fills early
			bins = append(bins, Bin{Tuple{2 + rng.IntN(3), 1}, 60}, Bin{Tuple{3 + rng.IntN(3), 2}, 60})
		case 1: // sizes with a common factor: gaps count in its units
			for k := range bins {
				bins[k].Nodes *= 3
			}
		}
		h := mustHistogram(t, bins)
		limit := 1 + rng.IntN(70)
		x := newBinIndex(h, nodesFirst, weights{1, 1})
		want := bruteReach(h, limit)
		for _, secondary := range []bool{false, true} {
			r := newReach(x, limit)
			r.secondary = secondary
			r.update(x)
			// Gaps keep the remainder of the limit modulo the unit.
			for g := limit % r.unit; g <= limit; g += r.unit {
				w := want[g-limit%r.unit]
				if !secondary && w != unreachable {
					w = 0
				}
				if got := r.gapCost(g); got != w {
					t.Fatalf("case %d %v limit %d secondary %v: gap %d costs %d, want %d", i, h.Bins(), limit, secondary, g, got, w)
				}
			}
		}
	}
}

// bruteReach returns, for every gap, the least edges of a multiset of the
// graphs of h with exactly that many nodes, or unreachable.
func bruteReach(h Histogram, limit int) []int {
	cost := make([]int, limit+1)
	for i := range cost {
		cost[i] = unreachable
	}
	cost[0] = 0
	for _, g := range Expand(h) { // 0/1 knapsack, one graph at a time
		for s := limit; s >= g.Nodes; s-- {
			if c := cost[s-g.Nodes]; c != unreachable && c+g.Edges < cost[s] {
				cost[s] = c + g.Edges
			}
		}
	}
	return cost
}
