package parmetis

import (
	"fmt"
	"testing"

	"gnnrun/parmetis/serial"
)

// TestCoarseningKeepsEnoughVertices partitions stars (four hubs in a ring,
// each with 150 leaves) under a replication ceiling no coarsening of them
// meets: star contraction, its weight limit relaxed level after level,
// would collapse the graph to fewer vertices than parts; the coarsening
// stops at the last level with enough of them instead (it left one vertex
// for two parts and failed).
func TestCoarseningKeepsEnoughVertices(t *testing.T) {
	const hubs, leaves = 4, 150
	n := int64(hubs * (leaves + 1))
	var edges [][2]int32
	for h := range int32(hubs) {
		edges = append(edges, [2]int32{h, (h + 1) % hubs})
		for l := range int32(leaves) {
			edges = append(edges, [2]int32{h, hubs + h*leaves + l})
		}
	}
	o := Options{Options: serial.Options{Parts: 2, Seed: 1}, MaxReplicated: 10, Coarsening: CoarsenStars, Method: MethodKway}
	for _, np := range []int{2, 3} {
		what := fmt.Sprintf("np=%d", np)
		m := partitionEdges(t, what, n, edges, np, o)
		checkBounded(t, what, m, 1.03)
	}
}
