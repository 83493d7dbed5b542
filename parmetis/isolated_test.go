package parmetis

import (
	"fmt"
	"testing"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/parmetis/serial"
)

// The graph of serial's TestIsolatedVerticesFillTheRoom: two dense blocks
// of 60 and 40 vertices joined by one edge, and 30 vertices without edges.
// The best balanced bisection cuts the one edge. The distributed
// partitioner on one rank, or on a graph it replicates whole, hands it to
// the serial one as it is; with the floor lowered, it sets the isolated
// vertices aside itself (np = 2, 3; every level of it then runs on the 100
// vertices with edges).
func TestIsolatedVerticesFillTheRoomDist(t *testing.T) {
	edges := twoBlocksAndIsolated()
	o := serial.Options{Parts: 2, Seed: 1}
	defer func(f int64) { isolatedFloor = f }(isolatedFloor)
	for _, np := range []int{1, 2, 3} {
		isolatedFloor = replicateFloor
		if np == 3 {
			isolatedFloor = 0
		}
		runWorld(t, np, func(c *collective.Comm) error {
			in := Input{N: 130}
			for i, e := range edges {
				if i%np == c.Rank() {
					in.Src, in.Dst = append(in.Src, int64(e[0])), append(in.Dst, int64(e[1]))
				}
			}
			dg, _, err := Build(c, in)
			if err != nil {
				return err
			}
			res, err := Partition(dg, Options{Options: o, MaxReplicated: 150})
			if err != nil {
				return err
			}
			if res.Cut != 1 || res.Imbalance[0] > 1.03 {
				return fmt.Errorf("np=%d: cut %d, imbalance %v; want 1 within 1.03", np, res.Cut, res.Imbalance)
			}
			return nil
		})
	}
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
