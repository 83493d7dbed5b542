package graphio

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// reference applies the normalisation steps to an edge list sequentially:
// the specification the distributed code must match, edge IDs included.
func reference(edges [][2]int64, dropLoops, undirected, dedup bool) []string {
	type edge struct {
		u, v int64
		id   int64
	}
	var es []edge
	for i, e := range edges {
		if dropLoops && e[0] == e[1] {
			continue
		}
		es = append(es, edge{e[0], e[1], int64(i)})
	}
	if undirected {
		n := len(es)
		for _, e := range es[:n] {
			if e.u != e.v {
				es = append(es, edge{e.v, e.u, int64(len(edges)) + e.id})
			}
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].id < es[j].id })
	if dedup {
		seen := map[[2]int64]bool{}
		var kept []edge
		for _, e := range es {
			if !seen[[2]int64{e.u, e.v}] {
				seen[[2]int64{e.u, e.v}] = true
				kept = append(kept, e)
			}
		}
		es = kept
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = fmt.Sprintf("%d-%d", e.u, e.v)
	}
	return out
}

func TestNormalisationMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var edges [][2]int64
	var b strings.Builder
	for range 3000 {
		e := [2]int64{r.Int64N(60), r.Int64N(60)}
		edges = append(edges, e)
		fmt.Fprintf(&b, "%d %d\n", e[0], e[1])
	}
	path := writeFile(t, t.TempDir(), "g.txt", b.String())
	for _, opt := range [][3]bool{{true, false, false}, {false, true, false}, {false, false, true}, {true, true, true}, {false, true, true}} {
		want := reference(edges, opt[0], opt[1], opt[2])
		for _, p := range []int{1, 2, 5} {
			got, g := edgesOf(t, p, path, DropSelfLoops(opt[0]), Undirected(opt[1]), Dedup(opt[2]))
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("options %v P=%d: %d edges differ from the reference's %d", opt, p, len(got), len(want))
			}
			if g.Meta.NumEdges[0] != int64(len(want)) {
				t.Fatalf("options %v P=%d: meta says %d edges", opt, p, g.Meta.NumEdges[0])
			}
		}
	}
}

func TestCompact(t *testing.T) {
	text := "1000 7\n7 3\n3 1000\n99999999999 7\n"
	path := writeFile(t, t.TempDir(), "sparse.txt", text)
	for _, p := range []int{1, 2, 3} {
		got, g := edgesOf(t, p, path, Compact(true))
		// Original IDs 3, 7, 1000, 99999999999 become 0..3 in order.
		if strings.Join(got, " ") != "2-1 1-0 0-2 3-1" || g.Meta.NumNodes[0] != 4 {
			t.Fatalf("P=%d: %v, %d nodes", p, got, g.Meta.NumNodes[0])
		}
		var orig []string
		for _, h := range readAll(t, p, path, Compact(true)) {
			o := h.Nodes.Get(0, "orig_id")
			for i := range o.Rows() {
				orig = append(orig, fmt.Sprint(int64(o.Float64At(i, 0))))
			}
		}
		if strings.Join(orig, " ") != "3 7 1000 99999999999" {
			t.Fatalf("P=%d: orig_id %v", p, orig)
		}
	}
	wantErr(t, readErr(smallChunked(t, nil), 1, Compact(true)), "compaction applies to edge lists")
}

func TestUndirectedNeedsSameEndpointTypes(t *testing.T) {
	dir := t.TempDir()
	generate(t, 1, GenSpec{Scale: 4, Hetero: true, Seed: 3}, dir)
	wantErr(t, readErr(dir, 2, Undirected(true)), "cannot make edge type user:buys:item undirected")
}
