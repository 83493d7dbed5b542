package parmetis

import (
	"fmt"
	"testing"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/parmetis/serial"
	"gnnrun/parteval"
)

// The graph of serial's TestIsolatedVerticesFillTheRoom: two dense blocks
// of 60 and 40 vertices joined by one edge, and 30 vertices without edges.
// The best balanced bisection cuts the one edge. The distributed
// partitioner on one rank, or on a graph it replicates whole, hands it to
// the serial one as it is; with the floor lowered, it sets the isolated
// vertices aside itself (np = 2, 3; every level of it then runs on the 100
// vertices with edges).
func TestIsolatedVerticesFillTheRoomDist(t *testing.T) {
	const n = 130
	edges := twoBlocksAndIsolated()
	o := Options{Options: serial.Options{Parts: 2, Seed: 1}, MaxReplicated: 150}
	defer func(f int64) { isolatedFloor = f }(isolatedFloor)
	for _, np := range []int{1, 2, 3} {
		isolatedFloor = replicateFloor
		if np == 3 {
			isolatedFloor = 0
		}
		what := fmt.Sprintf("np=%d", np)
		m := partitionEdges(t, what, n, edges, np, o)
		if m.Cut != 1 {
			t.Errorf("%s: cut %d, want 1", what, m.Cut)
		}
		checkBounded(t, what, m, 1.03)
	}
}

// partitionEdges partitions the graph of n vertices and edges on np ranks,
// each building from its share of the edges, checks that the driver
// reports the cut and balance measured independently, and returns that
// measure.
func partitionEdges(t *testing.T, what string, n int64, edges [][2]int32, np int, o Options) *parteval.Result {
	t.Helper()
	part, res := partitionOn(t, np, func(c *collective.Comm) (*Result, error) {
		dg, _, err := Build(c, edgeShare(n, edges, c.Rank(), np))
		if err != nil {
			return nil, err
		}
		return Partition(dg, o)
	})
	m := measure(t, edgeShare(n, edges, 0, 1), part, o, nodes(n))
	checkReport(t, what, res, m, "nodes")
	return m
}

// edgeShare returns rank r's share (of np) of the edges of a graph of n
// vertices, every np-th edge.
func edgeShare(n int64, edges [][2]int32, r, np int) Input {
	in := Input{N: n}
	for i, e := range edges {
		if i%np == r {
			in.Src, in.Dst = append(in.Src, int64(e[0])), append(in.Dst, int64(e[1]))
		}
	}
	return in
}

// twoBlocksAndIsolated is serial's test graph of the same name: the edges
// of the two blocks and the one between them (vertices 100-129 have none).
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
