package pack

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Synthetic returns a histogram of bins distinct sizes shaped like
// ogbg-ppa, whose 35,981 distinct sizes the published code could not pack in
// ten minutes: nodes spread over [maxNodes/6, maxNodes], degrees log-uniform
// in [2, 120] so edges (even, both directions) reach maxEdges, 1–3 graphs per
// size, and one graph of the largest size. It is for benchmarks and tests
// of scale, and depends only on its arguments. It fails when the sizes
// cannot hold bins distinct pairs.
func Synthetic(bins, maxNodes, maxEdges int, seed uint64) (Histogram, error) {
	rng := rand.New(rand.NewPCG(seed, 0x9ac7))
	lo := max(1, maxNodes/6)
	seen := map[Tuple]bool{{Nodes: maxNodes, Edges: maxEdges}: true}
	out := []Bin{{Tuple: Tuple{Nodes: maxNodes, Edges: maxEdges}, Count: 1}}
	for tries := 0; len(out) < bins; tries++ {
		if tries > 100*bins {
			return Histogram{}, fmt.Errorf("pack: cannot draw %d distinct sizes of at most %d nodes and %d edges", bins, maxNodes, maxEdges)
		}
		n := lo + rng.IntN(maxNodes-lo+1)
		deg := math.Exp(math.Log(2) + rng.Float64()*(math.Log(120)-math.Log(2)))
		e := min(maxEdges, 2*int(float64(n)*deg/2))
		t := Tuple{Nodes: n, Edges: e}
		if seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, Bin{Tuple: t, Count: 1 + rng.IntN(3)})
	}
	return NewHistogram(out)
}
