package parmetis

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/parmetis/serial"
	"gnnrun/rank"
)

// randomInput is a deterministic edge list with self loops, parallel edges
// and both directions of some edges, split over the ranks by edge index.
func randomInput(n int64, m int, seed uint64, r, p int) Input {
	in := Input{N: n}
	for i := r; i < m; i += p {
		h := graph.Mix(seed, uint64(i))
		s, d := int64(h%uint64(n)), int64((h>>32)%uint64(n))
		if i%17 == 0 {
			d = s // self loop
		}
		if i%5 == 0 && s < 4 {
			s = 0 // a hub
		}
		in.Src = append(in.Src, s)
		in.Dst = append(in.Dst, d)
		in.Weight = append(in.Weight, int64(1+h%3))
	}
	return in
}

func runWorld(t *testing.T, p int, fn func(c *collective.Comm) error) {
	t.Helper()
	if err := rank.RunLocal(p, func(rc rank.Comm) error { return fn(collective.MustNew(rc)) }); err != nil {
		t.Fatal(err)
	}
}

// TestBuildSameGraphAtAnyRankCount builds the same input on 1, 2, 3 and 5
// ranks; the replicated graphs must be equal, valid, and free of self loops.
func TestBuildSameGraphAtAnyRankCount(t *testing.T) {
	var want *serial.Graph
	for _, p := range []int{1, 2, 3, 5} {
		var got *serial.Graph
		runWorld(t, p, func(c *collective.Comm) error {
			g, st, err := Build(c, randomInput(40, 300, 7, c.Rank(), p))
			if err != nil {
				return err
			}
			if st.SelfLoops == 0 || st.Parallel == 0 {
				return fmt.Errorf("stats %+v: the input has self loops and parallel edges", st)
			}
			if g.NLocal() == 0 {
				return fmt.Errorf("rank %d owns no vertex", c.Rank())
			}
			s, err := g.Replicate()
			if err != nil {
				return err
			}
			if c.Rank() == 0 {
				got = s
			}
			return nil
		})
		if err := got.Validate(); err != nil {
			t.Fatalf("P=%d: %v", p, err)
		}
		if want == nil {
			want = got
		} else if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("P=%d differs from P=1:\n%s", p, d)
		}
	}
}

// TestBuildBalancesVerticesPlusEdges puts a hub with most of the edges on
// vertex 0; the ranges must still give every rank a fair share.
func TestBuildBalancesVerticesPlusEdges(t *testing.T) {
	const n, p = 1000, 4
	runWorld(t, p, func(c *collective.Comm) error {
		in := Input{N: n}
		for v := int64(1 + c.Rank()); v < n; v += p {
			in.Src = append(in.Src, 0, v)
			in.Dst = append(in.Dst, v, (v+1)%n)
		}
		g, _, err := Build(c, in)
		if err != nil {
			return err
		}
		load := int64(g.NLocal()) + g.Xadj[g.NLocal()]
		total, err := collective.Sum(c, load)
		if err != nil {
			return err
		}
		// A rank can exceed its share by at most the heaviest vertex.
		if load > total/p+1000 {
			return fmt.Errorf("rank %d holds %d of %d vertices+edges", c.Rank(), load, total)
		}
		return nil
	})
}

func TestBuildRejectsBadEdges(t *testing.T) {
	err := rank.RunLocal(2, func(rc rank.Comm) error {
		c := collective.MustNew(rc)
		in := Input{N: 3, Src: []int64{0}, Dst: []int64{1}, Weight: []int64{-2}}
		_, _, err := Build(c, in)
		return err
	})
	if err == nil {
		t.Fatal("negative weight accepted")
	}
	err = rank.RunLocal(1, func(rc rank.Comm) error {
		_, _, err := Build(collective.MustNew(rc), Input{N: 3, Src: []int64{0}, Dst: []int64{3}})
		return err
	})
	if err == nil {
		t.Fatal("endpoint outside [0,N) accepted")
	}
}

func TestRadixSortPairs(t *testing.T) {
	for _, limit := range []uint64{1, 1000, 1 << 20, 1 << 40} {
		keys := make([]uint64, 5000)
		vals := make([]int32, len(keys))
		for i := range keys {
			keys[i] = graph.Mix(limit, uint64(i)) % limit
			vals[i] = int32(i)
		}
		orig := append([]uint64(nil), keys...)
		radixSortPairs(keys, vals, limit)
		for i := range keys {
			if i > 0 && keys[i] < keys[i-1] {
				t.Fatalf("limit %d: not sorted at %d", limit, i)
			}
			if orig[vals[i]] != keys[i] {
				t.Fatalf("limit %d: value %d does not travel with its key", limit, i)
			}
		}
	}
}
