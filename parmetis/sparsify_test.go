package parmetis

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/parmetis/serial"
)

// sortedKeys returns owned vertex v's edge keys, largest first, as plainly
// as they can be had: every edge's key, sorted.
func sortedKeys(g *DistGraph, v int32) []edgeKey {
	var keys []edgeKey
	for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
		keys = append(keys, g.edgeKey(v, e))
	}
	sortLargestFirst(keys)
	return keys
}

func sortLargestFirst(keys []edgeKey) {
	slices.SortFunc(keys, func(a, b edgeKey) int {
		switch {
		case b.less(a):
			return -1
		case a.less(b):
			return 1
		}
		return 0
	})
}

// A vertex's threshold is its keep-th key among all its edges' keys sorted,
// and sparsify keeps exactly the edges one of whose ends has it at or above
// its threshold: checked on one rank, where every end's keys are at hand,
// over weights with many ties (1 to 3) and a hub.
func TestSparsifyKeepsHeaviestKeys(t *testing.T) {
	runWorld(t, 1, func(c *collective.Comm) error {
		g, _, err := Build(c, randomInput(300, 6000, 11, 0, 1))
		if err != nil {
			return err
		}
		nl := int32(g.NLocal())
		keep := make([]int64, nl)
		thr := make([]edgeKey, nl)
		var s kthScratch
		for v := range nl {
			keys := sortedKeys(g, v)
			keep[v] = int64(1 + int(v)%7)
			for k := 1; k <= len(keys); k++ {
				if got := g.kthKey(v, k, &s); got != keys[k-1] {
					return fmt.Errorf("vertex %d, %d edges: key %d is %+v, want %+v", v, len(keys), k, got, keys[k-1])
				}
			}
			if int64(len(keys)) > keep[v] {
				thr[v] = keys[keep[v]-1]
			}
		}
		type arc struct{ v, u int32 }
		var want []arc
		for v := range nl {
			for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
				u, k := g.Adj[e], g.edgeKey(v, e)
				if thr[v] == (edgeKey{}) || thr[u] == (edgeKey{}) || !k.less(thr[v]) || !k.less(thr[u]) {
					want = append(want, arc{v, u})
				}
			}
		}
		arcs := len(g.Adj)
		if len(want) == arcs {
			return fmt.Errorf("no arc of %d below both its ends' thresholds: the test drops nothing", arcs)
		}
		if _, err := g.sparsify(keep); err != nil {
			return err
		}
		var got []arc
		for v := range nl {
			for _, u := range g.Adj[g.Xadj[v]:g.Xadj[v+1]] {
				got = append(got, arc{v, u})
			}
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("sparsify kept %d of %d arcs, want %d (or other ones)", len(got), arcs, len(want))
		}
		return nil
	})
}

// The replica the serial runs get of a coarsest graph (replicate with
// thresholds) holds exactly the arcs an end of which ranks them among its
// keep heaviest: checked at 1, 2 and 3 ranks against the whole replica,
// every vertex's keys sorted there, by global ID (weights 1 to 3, a hub).
func TestReplicaKeepsHeaviestKeys(t *testing.T) {
	keepOf := func(gid int64) int { return 1 + int(gid%7) }
	for _, p := range []int{1, 2, 3} {
		runWorld(t, p, func(c *collective.Comm) error {
			g, _, err := Build(c, randomInput(300, 6000, 11, c.Rank(), c.Size()))
			if err != nil {
				return err
			}
			whole, err := g.Replicate()
			if err != nil {
				return err
			}
			keep := make([]int64, g.NLocal())
			for v := range keep {
				keep[v] = int64(keepOf(g.GID(int32(v))))
			}
			thr, err := g.thresholds(keep)
			if err != nil {
				return err
			}
			got, err := g.replicate(thr)
			if err != nil {
				return err
			}
			// The reference: each vertex's keep-th key among its sorted keys.
			key := func(x int64, e int64) edgeKey {
				y := int64(whole.Adjncy[e])
				return edgeKey{int64(whole.Adjwgt[e]), graph.Mix(uint64(min(x, y)), uint64(max(x, y)))}
			}
			n := int64(whole.N())
			cut := make([]*edgeKey, n)
			for x := range n {
				var keys []edgeKey
				for e := whole.Xadj[x]; e < whole.Xadj[x+1]; e++ {
					keys = append(keys, key(x, e))
				}
				sortLargestFirst(keys)
				if k := keepOf(x); len(keys) > k {
					cut[x] = &keys[k-1]
				}
			}
			want := &serial.Graph{NCon: whole.NCon, Xadj: []int64{0}, Vwgt: whole.Vwgt}
			for x := range n {
				for e := whole.Xadj[x]; e < whole.Xadj[x+1]; e++ {
					y, k := int64(whole.Adjncy[e]), key(x, e)
					if cut[x] == nil || cut[y] == nil || !k.less(*cut[x]) || !k.less(*cut[y]) {
						want.Adjncy, want.Adjwgt = append(want.Adjncy, int32(y)), append(want.Adjwgt, whole.Adjwgt[e])
					}
				}
				want.Xadj = append(want.Xadj, int64(len(want.Adjncy)))
			}
			if len(want.Adjncy) == len(whole.Adjncy) || len(want.Adjncy) == 0 {
				return fmt.Errorf("the reference keeps %d of %d arcs: the test checks no selection", len(want.Adjncy), len(whole.Adjncy))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				return fmt.Errorf("%d ranks: replica of %d arcs, want %d (-want +got):\n%s", c.Size(), len(got.Adjncy), len(want.Adjncy), diff)
			}
			return nil
		})
	}
}
