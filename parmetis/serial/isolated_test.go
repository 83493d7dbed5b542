package serial

import (
	"math"
	"testing"

	"gnnrun/graph"
)

// Two dense blocks of 60 and 40 vertices joined by one edge, and 30
// vertices without edges: the best balanced bisection (parts of at most
// 66) cuts the one edge and gives the smaller block most isolated vertices,
// which a bound on the blocks' own weight (60:40 is far outside 1.03) would
// forbid.
func TestIsolatedVerticesFillTheRoom(t *testing.T) {
	edges := twoBlocksAndIsolated()
	g := buildGraph(130, edges)
	o := Options{Parts: 2, Seed: 1}
	if connected(g, 2) == nil {
		t.Fatal("the isolated vertices were not set aside")
	}
	part, st, err := PartitionStats(g, o)
	if err != nil {
		t.Fatal(err)
	}
	m := checkBalanced(t, g, part, o)
	if m.Cut != 1 || st.Cut != m.Cut {
		t.Errorf("cut %d (reported %d), want 1", m.Cut, st.Cut)
	}
	if got, want := st.Imbalance[0], m.Balance[0].Imbalance; math.Abs(got-want) > 1e-12 {
		t.Errorf("reported imbalance %v, measured %v", got, want)
	}
}

func twoBlocksAndIsolated() [][2]int32 {
	var edges [][2]int32
	block := func(lo, n int) {
		for v := range n {
			edges = append(edges, [2]int32{int32(lo + v), int32(lo + (v+1)%n)})
			for j := range 5 {
				u := int(graph.Mix(3, uint64(lo+v), uint64(j)) % uint64(n))
				edges = append(edges, [2]int32{int32(lo + v), int32(lo + u)})
			}
		}
	}
	block(0, 60)
	block(60, 40)
	return append(edges, [2]int32{7, 77})
}

// With uneven target weights and isolated vertices of different weights,
// the filled parts stay within the bound.
func TestFillIsolatedRespectsTargets(t *testing.T) {
	g := rmatGraph(10, 4, 3)
	for v := range g.N() {
		g.Vwgt[v] = 1 + int64(v%3)
	}
	if connected(g, 3) == nil {
		t.Skip("the generated graph has too few isolated vertices")
	}
	o := Options{Parts: 3, TargetWeights: []float64{0.5, 0.3, 0.2}, Imbalance: []float64{1.05}, Seed: 2}
	part, err := Partition(g, o)
	if err != nil {
		t.Fatal(err)
	}
	checkBalanced(t, g, part, o)
}
