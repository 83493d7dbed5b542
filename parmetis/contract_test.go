package parmetis

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gnnrun/collective"
	"gnnrun/parmetis/serial"
)

// TestContractMatchesReference contracts a random graph with self loops,
// parallel edges and a hub on 1, 2 and 3 ranks, grouping triples of
// consecutive vertices in one half and, in the other, vertices ten apart
// (groups that span every rank, so members send their arcs and ask for
// their coarse IDs across ranks). The coarse graph must be the one written
// out plainly from the replicated fine graph: a coarse vertex per leader,
// numbered in the leaders' order, its members' summed weights, and every
// fine arc between groups added to its groups' arc.
func TestContractMatchesReference(t *testing.T) {
	const n = 60
	leaderOf := func(v int64) int64 {
		if v < n/2 {
			return v - v%3
		}
		return n/2 + v%10
	}
	for _, p := range []int{1, 2, 3} {
		var fine, coarse *serial.Graph
		var cmaps []int64
		runWorld(t, p, func(c *collective.Comm) error {
			g, _, err := Build(c, randomInput(n, 500, 11, c.Rank(), p))
			if err != nil {
				return err
			}
			vw := make([]int64, 2*g.NLocal())
			for v := range g.NLocal() {
				vw[2*v], vw[2*v+1] = 1, (g.Lo()+int64(v))%4
			}
			if err := g.SetVertexWeights(2, vw); err != nil {
				return err
			}
			leader := make([]int64, g.NLocal())
			for v := range leader {
				leader[v] = leaderOf(g.Lo() + int64(v))
			}
			f, err := g.Replicate()
			if err != nil {
				return err
			}
			cg, cmap, err := g.contract(leader, false)
			if err != nil {
				return err
			}
			s, err := cg.Replicate()
			if err != nil {
				return err
			}
			all, _, err := collective.Allgatherv(c, cmap)
			if err != nil {
				return err
			}
			if c.Rank() == 0 {
				fine, coarse, cmaps = f, s, all
			}
			return nil
		})
		what := fmt.Sprintf("P=%d", p)
		// The reference: leaders numbered in order, rows as maps.
		id := map[int64]int64{}
		for v := range int64(n) {
			if leaderOf(v) == v {
				id[v] = int64(len(id))
			}
		}
		want := make([]map[int32]int32, len(id))
		wantW := make([]int64, 2*len(id))
		for v := range int64(n) {
			cv := id[leaderOf(v)]
			if cmaps[v] != cv {
				t.Fatalf("%s: vertex %d maps to coarse %d, want %d", what, v, cmaps[v], cv)
			}
			wantW[2*cv] += fine.Vwgt[2*v]
			wantW[2*cv+1] += fine.Vwgt[2*v+1]
			if want[cv] == nil {
				want[cv] = map[int32]int32{}
			}
			for e := fine.Xadj[v]; e < fine.Xadj[v+1]; e++ {
				if cu := id[leaderOf(int64(fine.Adjncy[e]))]; cu != cv {
					want[cv][int32(cu)] += fine.Adjwgt[e]
				}
			}
		}
		if err := coarse.Validate(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got := make([]map[int32]int32, len(id))
		for v := range got {
			got[v] = map[int32]int32{}
			for e := coarse.Xadj[v]; e < coarse.Xadj[v+1]; e++ {
				if e > coarse.Xadj[v] && coarse.Adjncy[e] <= coarse.Adjncy[e-1] {
					t.Fatalf("%s: coarse row %d is not sorted by head: %v", what, v, coarse.Adjncy[coarse.Xadj[v]:coarse.Xadj[v+1]])
				}
				got[v][coarse.Adjncy[e]] = coarse.Adjwgt[e]
			}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("%s: coarse rows differ from the reference (-want +got):\n%s", what, d)
		}
		if d := cmp.Diff(wantW, coarse.Vwgt); d != "" {
			t.Fatalf("%s: coarse vertex weights differ (-want +got):\n%s", what, d)
		}
	}
}
