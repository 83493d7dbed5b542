package parmetis

import (
	"fmt"
	"slices"
	"testing"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/parmetis/serial"
)

// planted is a graph of k blocks of b vertices, each vertex linked to deg
// random vertices of its own block, plus `links` edges between consecutive
// blocks; vertex IDs are scrambled so blocks are not ID ranges. Its best
// k-way cut is the links.
type planted struct {
	k, b, deg, links int
	perm             []int64 // scrambled ID of block-order vertex i
}

func newPlanted(k, b, deg, links int) planted {
	n := k * b
	p := planted{k: k, b: b, deg: deg, links: links, perm: make([]int64, n)}
	for i := range p.perm {
		p.perm[i] = int64(i)
	}
	slices.SortFunc(p.perm, func(x, y int64) int {
		hx, hy := graph.Mix(99, uint64(x)), graph.Mix(99, uint64(y))
		if hx < hy {
			return -1
		}
		return 1
	})
	return p
}

func (p planted) n() int64 { return int64(p.k * p.b) }

// input returns rank r's share (of P) of the edges.
func (p planted) input(r, np int) Input {
	in := Input{N: p.n()}
	i := 0
	add := func(s, d int) {
		if i%np == r {
			in.Src = append(in.Src, p.perm[s])
			in.Dst = append(in.Dst, p.perm[d])
		}
		i++
	}
	for blk := range p.k {
		for v := range p.b {
			// A ring keeps each block connected; random chords make it dense.
			add(blk*p.b+v, blk*p.b+(v+1)%p.b)
			for j := range p.deg {
				u := int(graph.Mix(7, uint64(blk), uint64(v), uint64(j)) % uint64(p.b))
				if u != v {
					add(blk*p.b+v, blk*p.b+u)
				}
			}
		}
	}
	for l := range p.links {
		blk := l % p.k
		v := int(graph.Mix(8, uint64(l)) % uint64(p.b))
		u := int(graph.Mix(9, uint64(l)) % uint64(p.b))
		add(blk*p.b+v, ((blk+1)%p.k)*p.b+u)
	}
	return in
}

// partitionPlanted partitions p on np ranks and returns the cut, the
// imbalance and the gathered partition in global ID order. It checks that
// greedy refinement never raised the cut on any level.
func partitionPlanted(t *testing.T, p planted, np int, o Options) (int64, []float64, []int32) {
	t.Helper()
	var cut int64
	var imb []float64
	var all []int32
	var levels []LevelStats
	runWorld(t, np, func(c *collective.Comm) error {
		g, _, err := Build(c, p.input(c.Rank(), np))
		if err != nil {
			return err
		}
		res, err := Partition(g, o)
		if err != nil {
			return err
		}
		parts, _, err := collective.Allgatherv(c, res.Part)
		if err != nil {
			return err
		}
		if c.Rank() == 0 {
			cut, imb, all, levels = res.Cut, res.Imbalance, parts, res.Levels
		}
		return nil
	})
	for l, st := range levels {
		if st.RefinedCut > st.ProjectedCut {
			t.Errorf("np=%d level %d: refinement raised the cut from %d to %d", np, l, st.ProjectedCut, st.RefinedCut)
		}
	}
	if o.Method == MethodKway && len(levels) < 3 {
		t.Errorf("np=%d: only %d levels; the test means to exercise distributed coarsening", np, len(levels))
	}
	return cut, imb, all
}

func TestPartitionFindsPlantedCut(t *testing.T) {
	p := newPlanted(4, 200, 6, 12)
	for _, np := range []int{1, 2, 4} {
		for _, m := range []Method{MethodKway, MethodRB} {
			// A tiny ceiling forces several distributed levels.
			o := Options{Options: serial.Options{Parts: 4, Seed: 1}, MaxReplicated: 2000, Method: m}
			cut, imb, part := partitionPlanted(t, p, np, o)
			if cut != int64(p.links) {
				t.Errorf("np=%d %v: cut %d, planted %d", np, m, cut, p.links)
			}
			if imb[0] > 1.03 {
				t.Errorf("np=%d: imbalance %v", np, imb)
			}
			for blk := range p.k {
				first := part[p.perm[blk*p.b]]
				for v := range p.b {
					if part[p.perm[blk*p.b+v]] != first {
						t.Fatalf("np=%d %v: block %d is split", np, m, blk)
					}
				}
			}
		}
	}
}

func TestPartitionDeterministic(t *testing.T) {
	p := newPlanted(3, 150, 4, 30)
	o := Options{Options: serial.Options{Parts: 5, Seed: 3}, MaxReplicated: 1500, Method: MethodKway}
	for _, m := range []Method{MethodKway, MethodRB} {
		o.Method = m
		c1, _, p1 := partitionPlanted(t, p, 3, o)
		c2, _, p2 := partitionPlanted(t, p, 3, o)
		if c1 != c2 || !slices.Equal(p1, p2) {
			t.Fatalf("%v: reruns differ: cuts %d and %d", m, c1, c2)
		}
	}
}

func TestPartitionBalancesEveryConstraint(t *testing.T) {
	p := newPlanted(2, 300, 5, 40)
	for _, np := range []int{1, 3} {
		runWorld(t, np, func(c *collective.Comm) error {
			g, _, err := Build(c, p.input(c.Rank(), np))
			if err != nil {
				return err
			}
			// Constraints: nodes, a "train" mask on a quarter of the IDs, degree.
			vw := make([]int64, 3*g.NLocal())
			for v := range g.NLocal() {
				id := g.Lo() + int64(v)
				vw[3*v] = 1
				if id < p.n()/4 {
					vw[3*v+1] = 1
				}
				vw[3*v+2] = g.Xadj[v+1] - g.Xadj[v]
			}
			if err := g.SetVertexWeights(3, vw); err != nil {
				return err
			}
			res, err := Partition(g, Options{Options: serial.Options{Parts: 6, Seed: 2}, MaxReplicated: 2500})
			if err != nil {
				return err
			}
			for k, x := range res.Imbalance {
				if x > 1.03+1e-9 {
					return fmt.Errorf("np=%d: constraint %d imbalance %.4f", np, k, x)
				}
			}
			return nil
		})
	}
}
