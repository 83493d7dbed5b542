package parmetis

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"gnnrun/collective"
	"gnnrun/parmetis/serial"
)

// TestBalanceSmallExcessOnManyRanks overfills a part by less than a vertex
// while the other part's room, split among 3 ranks, is under a vertex per
// rank: the shared rounds cannot move anything, and balancing must still
// succeed by letting the ranks move in turn.
func TestBalanceSmallExcessOnManyRanks(t *testing.T) {
	const n = 30
	o := Options{Options: serial.Options{Parts: 2, Seed: 1, Imbalance: []float64{1.02}}}
	var part []int32
	var book []int64
	runWorld(t, 3, func(c *collective.Comm) error {
		g, _, err := Build(c, ring(n, c.Rank(), c.Size()))
		if err != nil {
			return err
		}
		// Bounds 15.3 per part; part 0 gets 16 vertices, part 1 14.
		ctl, err := newCtrl(g, o)
		if err != nil {
			return err
		}
		local := make([]int32, g.NLocal())
		for v := range local {
			if g.GID(int32(v)) >= 16 {
				local[v] = 1
			}
		}
		r, err := newRefiner(g, ctl, 0, local)
		if err != nil {
			return err
		}
		if r.pb.balanced() {
			return fmt.Errorf("weights %v within %v before balancing", r.pb.w, r.pb.max)
		}
		if err := r.balance(true); err != nil {
			return err
		}
		if err := r.verifyCut(); err != nil {
			return err
		}
		all, _, err := collective.Allgatherv(c, r.full[:g.NLocal()])
		if c.Rank() == 0 {
			part, book = all, r.pb.w
		}
		return err
	})
	m := measure(t, ring(n, 0, 1), part, o, nodes(n))
	if got := m.Balance[0].Parts; !slices.Equal(got, []int64{15, 15}) {
		t.Errorf("part weights %v, want [15 15]", got)
	}
	if !slices.Equal(book, m.Balance[0].Parts) {
		t.Errorf("the refiner's part weights %v, measured %v", book, m.Balance[0].Parts)
	}
}

// ring returns rank r's share (of np) of the edges of a ring of n vertices.
func ring(n, r, np int) Input {
	in := Input{N: int64(n)}
	for v := r; v < n; v += np {
		in.Src = append(in.Src, int64(v))
		in.Dst = append(in.Dst, int64((v+1)%n))
	}
	return in
}

// A bound no partition can meet (13 unit vertices in 4 parts need one part
// of 4, 1.23 times its target) fails on every rank with the smallest bound
// that could be met.
func TestBalanceFailureNamesReachableBound(t *testing.T) {
	const n = 13
	for _, np := range []int{1, 2} {
		runWorld(t, np, func(c *collective.Comm) error {
			g, _, err := Build(c, ring(n, c.Rank(), c.Size()))
			if err != nil {
				return err
			}
			_, err = Partition(g, Options{Options: serial.Options{Parts: 4, Seed: 1, Imbalance: []float64{1.1}}})
			want := "no partition can meet it: the vertices' weights need an imbalance of at least 1.231 in constraint 0"
			if err == nil || !strings.Contains(err.Error(), want) {
				return fmt.Errorf("np=%d: error %v, want one saying %q", np, err, want)
			}
			return nil
		})
	}
}

// TestBalanceUnlocksConstraints starts from partitions of two constraints
// where every move that fits is refused, and checks that balancing brings
// every part within both bounds, counted here from the vertices' parts and
// weights. Each vertex weighs 1 in the first constraint and 0, 1 or 10 in
// the second; targets 100 and 200 a part, bounds 103 and 206.
//   - Every part over: part 0 in the first (its vertices may go only to
//     parts over in the second, where its light ones weigh nothing), parts
//     1 and 2 in the second (their heavy vertices fit only part 0).
//   - Part 0 exactly at its bound in the first and well under in the
//     second, parts 1 and 2 one over in the second: a move into part 0
//     puts it over by more than it takes off the others, and part 0,
//     within its bounds, owes nothing; only bounds tightened while
//     unlocking make it give up room.
func TestBalanceUnlocksConstraints(t *testing.T) {
	type layout struct{ light, units, heavy int } // a part's vertices by weight in the second constraint
	for _, c := range []struct {
		name  string
		parts [3]layout
	}{
		{"all over", [3]layout{{100, 0, 6}, {70, 0, 27}, {70, 0, 27}}},
		{"one full", [3]layout{{79, 6, 18}, {72, 7, 20}, {71, 7, 20}}},
	} {
		var partOf []int32
		var second []int64
		for p, l := range c.parts {
			for i := range l.light + l.units + l.heavy {
				w := int64(0)
				switch {
				case i < l.units:
					w = 1
				case i < l.units+l.heavy:
					w = 10
				}
				partOf, second = append(partOf, int32(p)), append(second, w)
			}
		}
		n := len(partOf)
		o := Options{Options: serial.Options{Parts: 3, Seed: 1, Imbalance: []float64{1.03, 1.03}}}
		for _, np := range []int{1, 2} {
			var part []int32
			runWorld(t, np, func(cm *collective.Comm) error {
				g, _, err := Build(cm, ring(n, cm.Rank(), cm.Size()))
				if err != nil {
					return err
				}
				w := make([]int64, 2*g.NLocal())
				local := make([]int32, g.NLocal())
				for v := range local {
					gid := g.GID(int32(v))
					local[v], w[2*v], w[2*v+1] = partOf[gid], 1, second[gid]
				}
				if err := g.SetVertexWeights(2, w); err != nil {
					return err
				}
				ctl, err := newCtrl(g, o)
				if err != nil {
					return err
				}
				r, err := newRefiner(g, ctl, 0, local)
				if err != nil {
					return err
				}
				if r.pb.balanced() {
					return fmt.Errorf("%s: weights %v within %v before balancing", c.name, r.pb.w, r.pb.max)
				}
				if err := r.balance(true); err != nil {
					return fmt.Errorf("%s: %v", c.name, err)
				}
				if err := r.verifyCut(); err != nil {
					return err
				}
				all, _, err := collective.Allgatherv(cm, r.full[:g.NLocal()])
				part = all
				return err
			})
			var first, sec [3]int64
			for v, p := range part {
				first[p]++
				sec[p] += second[v]
			}
			for p := range 3 {
				if first[p] > 103 || sec[p] > 206 {
					t.Errorf("%s, np = %d: part %d weighs %d and %d, bounds 103 and 206", c.name, np, p, first[p], sec[p])
				}
			}
		}
	}
}
