package parmetis

import (
	"fmt"
	"testing"

	"gnnrun/collective"
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

// cliquesInput returns rank r's share (of np) of n/8 cliques of 8
// vertices, each tied to the next by one edge: communities that a level
// of coarsening shrinks to a fraction.
func cliquesInput(n, r, np int) Input {
	in := Input{N: int64(n)}
	i := 0
	add := func(s, d int) {
		if i%np == r {
			in.Src, in.Dst = append(in.Src, int64(s)), append(in.Dst, int64(d))
		}
		i++
	}
	for c := 0; c < n; c += 8 {
		for u := c; u < c+8; u++ {
			for v := u + 1; v < c+8; v++ {
				add(u, v)
			}
		}
		add(c, (c+8)%n)
	}
	return in
}

// A graph above replicateFloor but under its replication ceiling is
// replicated as it is, unless coarsenFirst asks for one distributed level
// first (as a bisection inside PartitionRB does) and that level halves it:
// then the graph replicated is the coarser one. A level that keeps more
// than half (a random graph's) is not taken.
func TestCoarsenFirstUnderCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("graphs above the replication floor: a few seconds")
	}
	cases := []struct {
		name   string
		input  func(r, np int) Input
		shrink bool // whether a level halves the graph
	}{
		{"cliques", func(r, np int) Input { return cliquesInput(160_000, r, np) }, true},
		{"random", func(r, np int) Input { return randomInput(200_000, 600_000, 5, r, np) }, false},
	}
	for _, tc := range cases {
		for _, first := range []bool{false, true} {
			var sizes []int64
			runWorld(t, 2, func(c *collective.Comm) error {
				g, _, err := Build(c, tc.input(c.Rank(), c.Size()))
				if err != nil {
					return err
				}
				o := Options{Options: serial.Options{Parts: 2, Seed: 1}, MaxReplicated: 1 << 40, coarsenFirst: first}
				ctl, err := newCtrl(g, o)
				if err != nil {
					return err
				}
				if ctl.coarsening, err = o.Coarsening.resolve(g); err != nil {
					return err
				}
				_, _, stats, err := coarsen(g, ctl)
				if err != nil {
					return err
				}
				if c.Rank() == 0 {
					for _, s := range stats {
						sizes = append(sizes, s.Vertices+s.Arcs)
					}
				}
				return nil
			})
			if sizes[0] <= replicateFloor {
				t.Fatalf("%s: the graph's size %d is not above the floor %d; the test means it to be", tc.name, sizes[0], replicateFloor)
			}
			want := 1
			if first && tc.shrink {
				want = 2
			}
			if len(sizes) != want || (want == 2 && sizes[1]*2 > sizes[0]) {
				t.Errorf("%s, coarsenFirst %v: level sizes %v, want %d level(s), the second at most half the first", tc.name, first, sizes, want)
			}
		}
	}
}
