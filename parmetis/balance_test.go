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
