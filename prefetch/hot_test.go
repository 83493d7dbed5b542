package prefetch

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"testing"

	"gnnrun/collective"
	"gnnrun/cuda"
	"gnnrun/internal/testgraph"
	"gnnrun/shard"
)

// hotByDegree returns the input's nodes (new IDs) in the order the hot
// cache takes them, counted plainly: in-degree over every input edge of
// every type, highest first, ties to the lower new ID; and each node's
// in-degree.
func hotByDegree(g *testgraph.Graph) ([]int64, map[int64]int) {
	newID := g.NewIDs()
	indeg := map[int64]int{}
	for et := range g.Dst {
		for _, d := range g.Dst[et] {
			indeg[newID[d]]++
		}
	}
	nodes := make([]int64, 0, len(newID))
	for _, v := range newID {
		nodes = append(nodes, v)
	}
	sort.Slice(nodes, func(i, j int) bool {
		a, b := nodes[i], nodes[j]
		if indeg[a] != indeg[b] {
			return indeg[a] > indeg[b]
		}
		return a < b
	})
	return nodes, indeg
}

// The hot cache holds the n nodes of highest in-degree, ties to the lower
// ID, as an independent count over the input's edges says, at 1, 2, 4 and
// 8 ranks over both node types, for budgets of no node, all of them, more,
// and cuts through a run of equal degrees; its rows are the nodes' feature
// rows.
func TestHotCacheHoldsHighestInDegree(t *testing.T) {
	g := testgraph.Get(t, testgraph.Spec{Hetero: true, K: 4, FeatDim: 5})
	order, indeg := hotByDegree(g)
	sizes := []int64{0, 1, 17, int64(len(order)), int64(len(order)) + 9}
	ties := 0
	for n := 1; n < len(order) && ties < 3; n++ {
		if indeg[order[n-1]] == indeg[order[n]] && indeg[order[n]] != indeg[order[0]] {
			sizes = append(sizes, int64(n)) // the cut splits nodes of equal degree
			ties++
		}
	}
	if ties == 0 {
		t.Fatal("no run of equal in-degrees to cut through; the test checks the tie rule on one")
	}
	want := func(n int64) []int64 {
		top := slices.Clone(order[:min(n, int64(len(order)))])
		slices.Sort(top)
		return top
	}
	for _, p := range []int{1, 2, 4, 8} {
		testgraph.World(t, p, func(c *collective.Comm) error {
			s, err := shard.Serve(c, g.Parts)
			if err != nil {
				return err
			}
			defer s.Close()
			stores, err := openStores(c, s, "feat", shard.Alltoall)
			if err != nil {
				return err
			}
			defer func() {
				for _, st := range stores {
					st.Close()
				}
			}()
			for _, n := range sizes {
				got, err := hottest(c, s, stores, n)
				if err != nil {
					return err
				}
				if !slices.Equal(got, want(n)) {
					return fmt.Errorf("P=%d, n=%d: the hot nodes are %v, the highest in-degrees %v", p, n, got, want(n))
				}
			}
			return checkHotRows(c, s, stores, g, want(40))
		})
	}
}

// checkHotRows makes a hot cache of len(nodes) rows and checks that it
// holds nodes, each in a row holding its input feature row.
func checkHotRows(c *collective.Comm, s *shard.Served, stores []*shard.Store, g *testgraph.Graph, nodes []int64) error {
	dev, err := cuda.Open(cuda.Host, 0)
	if err != nil {
		return err
	}
	defer dev.Close()
	st, err := dev.NewStream()
	if err != nil {
		return err
	}
	defer st.Close()
	rb := stores[0].RowBytes()
	h, err := newHotCache(c, s, stores, rb, int64(len(nodes)*rb), dev, st)
	if err != nil {
		return err
	}
	defer h.free()
	if len(h.rows) != len(nodes) {
		return fmt.Errorf("a hot cache of %d rows holds %d nodes", len(nodes), len(h.rows))
	}
	for _, v := range nodes {
		r, ok := h.row(v)
		if !ok {
			return fmt.Errorf("node %d of highest in-degree is not in the hot cache", v)
		}
		if row := h.buf.Host()[int(r)*rb : int(r+1)*rb]; !bytes.Equal(row, g.Feat[g.Orig[v]]) {
			return fmt.Errorf("hot row %d of node %d is not its feature row", r, v)
		}
	}
	return nil
}
