package serial

import "testing"

// trainingGraph returns a w x h grid with three constraints per vertex: 1
// (nodes), 1 for training nodes (the leftmost fifth of the columns) and 0
// otherwise, and the vertex degree (edges).
func trainingGraph(w, h int) *Graph {
	g := gridGraph(w, h)
	g.NCon = 3
	g.Vwgt = make([]int64, 3*g.N())
	for v := range g.N() {
		g.Vwgt[3*v] = 1
		if v%w < w/5 {
			g.Vwgt[3*v+1] = 1
		}
		g.Vwgt[3*v+2] = g.Xadj[v+1] - g.Xadj[v]
	}
	return g
}

func TestPartitionMultiConstraint(t *testing.T) {
	g := trainingGraph(60, 60)
	single := gridGraph(60, 60)
	for _, k := range []int{2, 3, 8, 16} {
		o := Options{Parts: k, Seed: 3}
		part, err := Partition(g, o)
		if err != nil {
			t.Fatalf("k=%d: %v", k, err)
		}
		m := checkBalanced(t, g, part, o)
		sp, err := Partition(single, o)
		if err != nil {
			t.Fatalf("k=%d single: %v", k, err)
		}
		mc, sc := m.Cut, measure(t, single, sp, o).Cut
		t.Logf("k=%d: cut %d with nodes+train+degree (imbalance %.4f), %d with nodes only", k, mc, imbalances(m), sc)
		// Spreading the training columns over all parts costs cut, but
		// a sane partitioner stays within a small factor of the
		// single-constraint cut on a grid.
		if mc > 4*sc {
			t.Errorf("k=%d: multi-constraint cut %d more than 4x the single-constraint cut %d", k, mc, sc)
		}
	}
}
