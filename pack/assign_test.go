package pack

import (
	"slices"
	"strings"
	"testing"
)

func TestAssign(t *testing.T) {
	h := mustReadCSV(t, "tu-ENZYMES.csv")
	sizes := Expand(h)
	p := mustPack(t, h)
	a, err := Assign(p, sizes, 42, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.Packs() != p.Packs() {
		t.Fatalf("%d packs assigned, the packing has %d", a.Packs(), p.Packs())
	}
	seen := make([]int, len(sizes))
	for i := range a.Packs() {
		var n, e int
		for _, g := range a.Pack(i) {
			seen[g]++
			n += sizes[g].Nodes
			e += sizes[g].Edges
		}
		if n > p.Limits.Nodes || e > p.Limits.Edges || len(a.Pack(i)) > p.Limits.Graphs {
			t.Fatalf("pack %d: %d graphs, %d nodes, %d edges over %v", i, len(a.Pack(i)), n, e, p.Limits)
		}
	}
	for g, n := range seen {
		if n != 1 {
			t.Fatalf("graph %d assigned %d times", g, n)
		}
	}
	again, _ := Assign(p, sizes, 42, 0)
	next, _ := Assign(p, sizes, 42, 1)
	if !slices.Equal(a.Graphs, again.Graphs) || !slices.Equal(a.Offsets, again.Offsets) {
		t.Error("same seed and epoch, different assignment")
	}
	if slices.Equal(a.Graphs, next.Graphs) {
		t.Error("epochs 0 and 1 have the same assignment")
	}
}

func TestAssignMismatch(t *testing.T) {
	h := mustHistogram(t, []Bin{{Tuple{2, 2}, 2}})
	p := mustPack(t, h)
	if _, err := Assign(p, []Tuple{{2, 2}}, 1, 0); err == nil || !strings.Contains(err.Error(), "more graphs of size (2 nodes, 2 edges) than the dataset") {
		t.Errorf("too few graphs: %v", err)
	}
	if _, err := Assign(p, []Tuple{{2, 2}, {2, 2}, {1, 0}}, 1, 0); err == nil || !strings.Contains(err.Error(), "1 graphs of size (1 nodes, 0 edges) are in the dataset but not in the packing") {
		t.Errorf("graph left over: %v", err)
	}
}

func TestShare(t *testing.T) {
	for _, tc := range []struct{ packs, size int }{{10, 3}, {2, 4}, {0, 2}, {7, 1}, {100, 7}} {
		next := 0
		for r := range tc.size {
			lo, hi := Share(tc.packs, r, tc.size)
			if lo != next || hi-lo < tc.packs/tc.size || hi-lo > (tc.packs+tc.size-1)/tc.size {
				t.Fatalf("%d packs over %d: rank %d gets [%d, %d)", tc.packs, tc.size, r, lo, hi)
			}
			next = hi
		}
		if next != tc.packs {
			t.Fatalf("%d packs over %d: shares end at %d", tc.packs, tc.size, next)
		}
	}
}
