package parmetis

import (
	"fmt"
	"math"
	"testing"

	"gnnrun/collective"
	"gnnrun/parteval"
)

// The tests judge a partition by what parteval measures of the parts
// gathered from the ranks and the input edges, never by Result.Cut and
// Result.Imbalance, which come from the driver's own bookkeeping (the
// refiner's cut, partBook): a bug shared by the partitioner and its
// bookkeeping would pass a test that asks them. checkReport holds the
// reported numbers to the measured ones.

// partitionOn runs fn, which partitions this rank's share of a graph, on a
// world of np ranks, and returns the parts of all vertices in ID order and
// rank 0's Result.
func partitionOn(t *testing.T, np int, fn func(c *collective.Comm) (*Result, error)) ([]int32, *Result) {
	t.Helper()
	var part []int32
	var res0 *Result
	runWorld(t, np, func(c *collective.Comm) error {
		res, err := fn(c)
		if err != nil {
			return err
		}
		all, counts, err := collective.Allgatherv(c, res.Part)
		if err != nil {
			return err
		}
		los, err := collective.Allgather(c, res.Lo)
		if err != nil || c.Rank() != 0 {
			return err
		}
		var at int64
		for r, lo := range los {
			if lo != at {
				return fmt.Errorf("rank %d's parts start at vertex %d, want %d", r, lo, at)
			}
			at += int64(counts[r])
		}
		part, res0 = all, res
		return nil
	})
	return part, res0
}

// measure returns parteval's measure of part, a part for each of in.N
// vertices, on the graph whose edges are in (all ranks' edges together):
// the cut, and the balance of each of cons against o's target weights.
func measure(t *testing.T, in Input, part []int32, o Options, cons ...parteval.Constraint) *parteval.Result {
	t.Helper()
	g := parteval.Graph{N: in.N, Src: in.Src, Dst: in.Dst, Weight: in.Weight, Symmetric: in.Symmetric}
	m, err := parteval.Evaluate(g, part, o.Parts, o.TargetWeights, cons)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// column returns the constraint name in which vertex v of n weighs w(v).
func column(name string, n int64, w func(v int64) int64) parteval.Constraint {
	c := parteval.Constraint{Name: name, Weight: make([]int64, n)}
	for v := range n {
		c.Weight[v] = w(v)
	}
	return c
}

// nodes returns the constraint in which each of n vertices weighs 1.
func nodes(n int64) parteval.Constraint {
	return column("nodes", n, func(int64) int64 { return 1 })
}

// b2i is 1 for true and 0 for false, a vertex's weight in a mask.
func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// checkBounded fails the test when a constraint m measured is above ub.
func checkBounded(t *testing.T, what string, m *parteval.Result, ub float64) {
	t.Helper()
	for _, b := range m.Balance {
		if b.Imbalance > ub+1e-9 {
			t.Errorf("%s: %s imbalance %.4f above %.4f (part weights %v)", what, b.Name, b.Imbalance, ub, b.Parts)
		}
	}
}

// checkReport fails the test unless res reports the cut m measured and,
// for each of the partitioner's constraints, named names in its order, the
// imbalance m measured.
func checkReport(t *testing.T, what string, res *Result, m *parteval.Result, names ...string) {
	t.Helper()
	if res.Cut != m.Cut {
		t.Errorf("%s: reported cut %d, measured %d", what, res.Cut, m.Cut)
	}
	if len(res.Imbalance) != len(names) {
		t.Fatalf("%s: %d imbalances reported for the %d constraints %v", what, len(res.Imbalance), len(names), names)
	}
	for c, name := range names {
		b := m.Of(name)
		if b == nil {
			t.Fatalf("%s: constraint %s was not measured", what, name)
		}
		if math.Abs(res.Imbalance[c]-b.Imbalance) > 1e-12 {
			t.Errorf("%s: reported %s imbalance %v, measured %v (part weights %v)", what, name, res.Imbalance[c], b.Imbalance, b.Parts)
		}
	}
}
