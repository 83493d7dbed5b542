package shard

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSortInt64(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 5, 1 << 16, 100000} {
		for _, top := range []int64{3, 1 << 20, 1 << 62} {
			s := make([]int64, n)
			for i := range s {
				s[i] = rng.Int64N(top)
			}
			want := slices.Clone(s)
			slices.Sort(want)
			sortInt64(s)
			if !slices.Equal(s, want) {
				t.Fatalf("n=%d top=%d: not sorted", n, top)
			}
		}
	}
}

// TestCSCLayout checks the CSC of a small partition by hand: inner nodes
// [10, 13), halo sources found by the bucket index, in-edges in key order.
func TestCSCLayout(t *testing.T) {
	es := []partEdge{
		{Src: 11, Dst: 10, Key: edgeKey(0, 0)},
		{Src: 500, Dst: 12, Key: edgeKey(0, 1)},
		{Src: 3, Dst: 10, Key: edgeKey(0, 2)},
		{Src: 500, Dst: 10, Key: edgeKey(1, 0)},
		{Src: 12, Dst: 12, Key: edgeKey(1, 1)},
	}
	l := buildCSC(es, 10, 13)
	if !slices.Equal(l.halo, []int64{3, 500}) || l.cut != 3 {
		t.Fatalf("halo %v cut %d", l.halo, l.cut)
	}
	if !slices.Equal(l.indptr, []int64{0, 3, 3, 5}) {
		t.Fatalf("indptr %v", l.indptr)
	}
	ind, _ := graphView32(l.indices(es).Data)
	// Node 10's in-edges in key order: from 11 (local 1), 3 (halo 3), 500 (halo 4).
	if !slices.Equal(ind, []int32{1, 3, 4, 4, 2}) {
		t.Fatalf("indices %v", ind)
	}
	for _, id := range []int64{3, 500} {
		if got := l.local(id); l.halo[got-l.n] != id {
			t.Errorf("local(%d) = %d", id, got)
		}
	}
	// Halos sparse (bucket index) and dense (word index), with the inner
	// nodes counted first.
	for _, step := range []int64{37, 3, 1} {
		big := &cscLayout{n: 7, lo: 0}
		rng := rand.New(rand.NewPCG(5, uint64(step)))
		for id := int64(1000); len(big.halo) < 100000; id += 1 + rng.Int64N(2*step-1) {
			big.halo = append(big.halo, id)
		}
		big.index()
		if dense := big.words != nil; dense != (step < haloDense/2) {
			t.Errorf("step %d: word index %v", step, dense)
		}
		for i, id := range big.halo {
			if got := big.local(id); got != 7+int64(i) {
				t.Fatalf("step %d: local(%d) = %d, want %d", step, id, got, 7+i)
			}
		}
	}
}

func graphView32(b []byte) ([]int32, error) {
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return out, nil
}

// sortEdges orders edges by key and carries their row positions along.
func TestSortEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var es []partEdge
	for ty, n := range []int64{5000, 1, 7000} {
		for id := range n {
			es = append(es, partEdge{Src: rng.Int64N(100), Dst: rng.Int64N(100), Key: edgeKey(int16(ty), id)})
		}
	}
	rng.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
	arr := make([]int64, len(es))
	for i := range arr {
		arr[i] = es[i].Key*3 + 1 // tied to its edge
	}
	sortEdges(es, arr)
	for i := range es {
		if i > 0 && es[i-1].Key >= es[i].Key {
			t.Fatalf("edges %d and %d out of order", i-1, i)
		}
		if arr[i] != es[i].Key*3+1 {
			t.Fatalf("row position %d did not follow its edge", i)
		}
	}
}

// TestSortEdgesArrivalOrders sorts edges in the orders they arrive in
// (sorted; a rotation of sorted, as the staggered ranks send them) and in
// orders the rotation must refuse (three runs; two overlapping runs),
// carrying each edge's row position along.
func TestSortEdgesArrivalOrders(t *testing.T) {
	const n = 1000
	sorted := make([]partEdge, n)
	for i := range sorted {
		sorted[i] = partEdge{Src: int64(i % 7), Dst: int64(i % 11), Key: edgeKey(0, int64(3*i))}
	}
	rotation := append(slices.Clone(sorted[600:]), sorted[:600]...)
	threeRuns := append(append(slices.Clone(sorted[600:]), sorted[300:600]...), sorted[:300]...)
	var overlap []partEdge // evens then odds: two runs, not a rotation
	for i := 0; i < n; i += 2 {
		overlap = append(overlap, sorted[i])
	}
	for i := 1; i < n; i += 2 {
		overlap = append(overlap, sorted[i])
	}
	for name, c := range map[string]struct {
		es     []partEdge
		rotate bool
	}{"sorted": {sorted, true}, "rotation": {rotation, true}, "three runs": {threeRuns, false}, "overlapping runs": {overlap, false}} {
		for _, withArr := range []bool{false, true} {
			es := slices.Clone(c.es)
			var arr []int64
			if withArr {
				for _, e := range es {
					arr = append(arr, e.Key+5)
				}
			}
			if got := rotateSorted(slices.Clone(es), slices.Clone(arr)); got != c.rotate {
				t.Errorf("%s: rotateSorted says %v", name, got)
			}
			sortEdges(es, arr)
			if !slices.Equal(es, sorted) {
				t.Fatalf("%s (row positions %v): not sorted", name, withArr)
			}
			for i := range arr {
				if arr[i] != es[i].Key+5 {
					t.Fatalf("%s: row position %d did not follow its edge", name, i)
				}
			}
		}
	}
}
