package serial

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// A path 0-1-2-3 with edge weights 5, 1, 7 and two constraints.
func pathGraph() *Graph {
	return &Graph{
		NCon:   2,
		Xadj:   []int64{0, 1, 3, 5, 6},
		Adjncy: []int32{1, 0, 2, 1, 3, 2},
		Adjwgt: []int32{5, 5, 1, 1, 7, 7},
		Vwgt:   []int64{1, 0, 2, 1, 3, 0, 4, 1},
	}
}

func TestEdgeCut(t *testing.T) {
	g := pathGraph()
	for _, c := range []struct {
		part []int32
		want int64
	}{
		{[]int32{0, 0, 0, 0}, 0},
		{[]int32{0, 0, 1, 1}, 1},
		{[]int32{0, 1, 0, 1}, 13},
		{[]int32{0, 1, 2, 3}, 13},
	} {
		if got := EdgeCut(g, c.part); got != c.want {
			t.Errorf("part %v: cut %d, want %d", c.part, got, c.want)
		}
	}
}

func TestPartWeights(t *testing.T) {
	g := pathGraph()
	got := PartWeights(g, []int32{0, 0, 1, 2}, 3)
	want := []int64{3, 1, 3, 0, 4, 1}
	if !slices.Equal(got, want) {
		t.Errorf("weights %v, want %v", got, want)
	}
}

func TestImbalance(t *testing.T) {
	g := pathGraph() // totals: 10 and 2
	part := []int32{0, 0, 1, 1}
	got := Imbalance(g, part, Options{Parts: 2})
	// Part 1 weighs 7 of 10 (target 5); the second constraint splits 1:1.
	want := []float64{1.4, 1}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("imbalance %v, want %v", got, want)
		}
	}
	got = Imbalance(g, part, Options{Parts: 2, TargetWeights: []float64{0.3, 0.7}})
	want = []float64{1, 1 / 0.6}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("uneven targets: imbalance %v, want %v", got, want)
		}
	}
	zero := &Graph{NCon: 1, Xadj: []int64{0, 0}, Vwgt: []int64{0}}
	if got := Imbalance(zero, []int32{0}, Options{Parts: 1}); got[0] != 1 {
		t.Errorf("zero total: imbalance %v, want 1", got)
	}
}

// The partitioner's own metrics agree with parteval's on random
// partitions, balanced or not, of graphs with weighted edges, several
// constraints and uneven targets.
func TestMetricsMatchParteval(t *testing.T) {
	weighted := gridGraph(20, 20)
	for e := range weighted.Adjwgt {
		u := slices.IndexFunc(weighted.Xadj, func(x int64) bool { return x > int64(e) }) - 1
		weighted.Adjwgt[e] = int32(1 + (u+int(weighted.Adjncy[e]))%5)
	}
	rng := rand.New(rand.NewPCG(4, 5))
	for name, g := range map[string]*Graph{"path": pathGraph(), "weighted grid": weighted, "rmat": rmatGraph(10, 8, 1), "3 constraints": trainingGraph(30, 30)} {
		for _, o := range []Options{{Parts: 2}, {Parts: 4}, {Parts: 3, TargetWeights: []float64{0.5, 0.3, 0.2}}} {
			part := make([]int32, g.N())
			for v := range part {
				part[v] = int32(rng.IntN(o.Parts))
			}
			m := measure(t, g, part, o)
			if got := EdgeCut(g, part); got != m.Cut {
				t.Errorf("%s k=%d: EdgeCut %d, measured %d", name, o.Parts, got, m.Cut)
			}
			pw, imb := PartWeights(g, part, o.Parts), Imbalance(g, part, o)
			for c, b := range m.Balance {
				for p, w := range b.Parts {
					if pw[p*g.NCon+c] != w {
						t.Errorf("%s k=%d: PartWeights gives part %d %d in constraint %d, measured %d", name, o.Parts, p, pw[p*g.NCon+c], c, w)
					}
				}
				if math.Abs(imb[c]-b.Imbalance) > 1e-12 {
					t.Errorf("%s k=%d %v: Imbalance %v in constraint %d, measured %v", name, o.Parts, o.TargetWeights, imb[c], c, b.Imbalance)
				}
			}
		}
	}
}

// A coarse edge merging edges of more than 2^31-1 in weight keeps
// math.MaxInt32 (see Graph), never a wrapped negative weight.
func TestAddWeightSaturates(t *testing.T) {
	for _, c := range []struct{ a, b, want int32 }{
		{1, 2, 3},
		{math.MaxInt32 - 5, 5, math.MaxInt32},
		{math.MaxInt32 - 5, 6, math.MaxInt32},
		{math.MaxInt32, math.MaxInt32, math.MaxInt32},
	} {
		if got := addWeight(c.a, c.b); got != c.want {
			t.Errorf("addWeight(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
