package parmetis

import (
	"fmt"
	"slices"
	"testing"

	"gnnrun/collective"
)

// sortedKeys returns owned vertex v's edge keys, largest first, as plainly
// as they can be had: every edge's key, sorted.
func sortedKeys(g *DistGraph, v int32) []edgeKey {
	var keys []edgeKey
	for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
		keys = append(keys, g.edgeKey(v, e))
	}
	slices.SortFunc(keys, func(a, b edgeKey) int {
		switch {
		case b.less(a):
			return -1
		case a.less(b):
			return 1
		}
		return 0
	})
	return keys
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
