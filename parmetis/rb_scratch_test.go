package parmetis

import (
	"slices"
	"testing"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/parmetis/serial"
)

// coreInput returns rank r's share (of np) of a graph whose arcs sit in a
// dense core: core vertices with deg random neighbours among themselves,
// and a ring of ring vertices, each tied to one core vertex. A vertex-
// balanced bisection puts the core on one side with most of the arcs, so
// both sides are partitioned one after the other (rbSequential), level
// after level, as on R-MAT.
func coreInput(core, deg, ring, r, np int) Input {
	in := Input{N: int64(core + ring)}
	i := 0
	add := func(s, d int) {
		if i%np == r {
			in.Src, in.Dst = append(in.Src, int64(s)), append(in.Dst, int64(d))
		}
		i++
	}
	for v := range core {
		for j := range deg {
			if u := int(graph.Mix(3, uint64(v), uint64(j)) % uint64(core)); u != v {
				add(v, u)
			}
		}
	}
	for v := range ring {
		add(core+v, core+(v+1)%ring)
		add(core+v, int(graph.Mix(4, uint64(v))%uint64(core)))
	}
	return in
}

// A side of a recursive bisection that the recursion built drops its arcs
// once its own sides are induced (the dense core's chain of sides no
// longer lives all at once), and the partition is the one kept arcs give.
func TestRBDropsScratchSidesSamePartition(t *testing.T) {
	if testing.Short() {
		t.Skip("a graph above the replication floor: a few seconds")
	}
	const core, deg, ring = 3000, 400, 40000
	o := Options{Options: serial.Options{Parts: 16, Seed: 3}, Method: MethodRB}
	for _, np := range []int{2} {
		run := func() []int32 {
			part, _ := partitionOn(t, np, func(c *collective.Comm) (*Result, error) {
				g, _, err := Build(c, coreInput(core, deg, ring, c.Rank(), np))
				if err != nil {
					return nil, err
				}
				return Partition(g, o)
			})
			return part
		}
		before := scratchDrops.Load()
		dropped := run()
		if scratchDrops.Load() == before {
			t.Fatalf("np=%d: no side dropped its arcs; the test means to exercise that", np)
		}
		keepScratch = true
		kept := run()
		keepScratch = false
		if !slices.Equal(dropped, kept) {
			t.Errorf("np=%d: the partition changes when the sides keep their arcs", np)
		}
	}
}
