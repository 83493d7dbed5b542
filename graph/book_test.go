package graph

import (
	"sort"
	"testing"
)

func TestEvenBookOwners(t *testing.T) {
	b := EvenBook(10, 4) // 3 3 2 2
	want := []int{0, 0, 0, 1, 1, 1, 2, 2, 3, 3}
	for id, w := range want {
		if got := b.Owner(int64(id)); got != w {
			t.Errorf("Owner(%d) = %d, want %d", id, got, w)
		}
	}
	if b.Total() != 10 || b.Size(0) != 3 || b.Size(3) != 2 {
		t.Errorf("bad book %v", b.Bounds)
	}
	e := BookFromCounts([]int64{2, 0, 0, 3})
	if e.Owner(1) != 0 || e.Owner(2) != 3 {
		t.Errorf("empty ranges not skipped: %v", e.Bounds)
	}
}

// TestBookOwnerSearch checks Owner against sort.Search, with empty ranges
// at the start, in the middle and at the end.
func TestBookOwnerSearch(t *testing.T) {
	b := Book{Bounds: []int64{0, 0, 5, 5, 9, 20, 20, 21, 21}}
	for id := int64(0); id < b.Total(); id++ {
		want := sort.Search(len(b.Bounds), func(i int) bool { return b.Bounds[i] > id }) - 1
		if got := b.Owner(id); got != want {
			t.Errorf("Owner(%d) = %d, want %d", id, got, want)
		}
	}
}

// TestBookOwners checks Owners against sort.Search on the same book, and
// that it stops at the first ID outside the range.
func TestBookOwners(t *testing.T) {
	b := Book{Bounds: []int64{3, 3, 5, 5, 9, 20, 20, 21, 21}}
	var ids []int64
	for id := int64(3); id < b.Total(); id++ {
		ids = append(ids, id, 23-id)
	}
	owners := make([]int32, len(ids))
	if at := b.Owners(ids, owners); at != -1 {
		t.Fatalf("Owners stopped at %d (ID %d), inside the range", at, ids[at])
	}
	for i, id := range ids {
		want := sort.Search(len(b.Bounds), func(i int) bool { return b.Bounds[i] > id }) - 1
		if int(owners[i]) != want {
			t.Errorf("Owners: ID %d owned by %d, want %d", id, owners[i], want)
		}
	}
	for _, bad := range []int64{2, 21, -1, 1 << 62, -1 << 63} {
		if at := b.Owners([]int64{4, 20, bad, 5}, owners); at != 2 {
			t.Errorf("Owners with ID %d third: stopped at %d, want 2", bad, at)
		}
	}
}

func TestMetaOffsetsAndTypes(t *testing.T) {
	m := Meta{Name: "g", NodeTypes: []string{"a", "b"}, NumNodes: []int64{5, 7},
		EdgeTypes: []EdgeType{{"a", "r", "b"}}, NumEdges: []int64{3}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if m.NodeOffset(1) != 5 || m.TotalNodes() != 12 {
		t.Errorf("offsets wrong")
	}
	if ty, l := m.NodeTypeOf(6); ty != 1 || l != 1 {
		t.Errorf("NodeTypeOf(6) = %d,%d", ty, l)
	}
	if _, err := ParseEdgeType("a:b"); err == nil {
		t.Error("bad edge type parsed")
	}
	m.EdgeTypes[0].Dst = "c"
	if err := m.Validate(); err == nil {
		t.Error("unknown node type accepted")
	}
}
