package graph

import (
	"fmt"
)

// Book maps IDs to owners by contiguous ranges: owner p holds
// [Bounds[p], Bounds[p+1]). It is the partition book of DistDGL and the
// vtxdist of ParMETIS, and it costs O(owners), never O(IDs).
type Book struct {
	Bounds []int64
}

// EvenBook splits [0, n) into parts ranges whose sizes differ by at most one,
// the larger ones first.
func EvenBook(n int64, parts int) Book {
	b := Book{Bounds: make([]int64, parts+1)}
	for p := 0; p <= parts; p++ {
		b.Bounds[p] = n/int64(parts)*int64(p) + min(int64(p), n%int64(parts))
	}
	return b
}

// BookFromCounts returns the book whose owner p holds counts[p] IDs.
func BookFromCounts(counts []int64) Book {
	b := Book{Bounds: make([]int64, len(counts)+1)}
	for p, c := range counts {
		b.Bounds[p+1] = b.Bounds[p] + c
	}
	return b
}

// Parts returns the number of owners.
func (b Book) Parts() int { return len(b.Bounds) - 1 }

// Total returns the number of IDs covered.
func (b Book) Total() int64 { return b.Bounds[len(b.Bounds)-1] }

// Range returns owner p's range [lo, hi).
func (b Book) Range(p int) (lo, hi int64) { return b.Bounds[p], b.Bounds[p+1] }

// Size returns how many IDs owner p holds.
func (b Book) Size(p int) int64 { return b.Bounds[p+1] - b.Bounds[p] }

// Owners puts the owner of ids[i] in owners[i] (as long as ids), by
// Owner's search run in one loop, with nothing checked per ID but its
// range. It returns the index of the first ID outside [Bounds[0],
// Total), the owners before it filled, or -1 when there is none. A
// sampler finds the partition of every frontier node this way: a call of
// Owner per node checked each one's range three times and did not
// inline.
func (b Book) Owners(ids []int64, owners []int32) int {
	bounds := b.Bounds
	lo, span := bounds[0], uint64(b.Total()-bounds[0])
	owners = owners[:len(ids)]
	for i, id := range ids {
		if uint64(id-lo) >= span {
			return i
		}
		owners[i] = int32(search(bounds, id))
	}
	return -1
}

// Owner returns the owner of id by binary search; it panics when id is
// outside [0, Total), which is a bug in the caller, not bad input.
func (b Book) Owner(id int64) int {
	if id < b.Bounds[0] || id >= b.Total() {
		panic(fmt.Sprintf("graph: ID %d outside the book's range [%d,%d)", id, b.Bounds[0], b.Total()))
	}
	return search(b.Bounds, id)
}

// search returns the last index of bounds whose bound is at or below id,
// in [0, len(bounds)-1) (empty ranges are skipped: of equal bounds the
// last one is taken), by a search without branches on the bounds: IDs of
// random owners mispredicted about half of a branchy search's steps, 19
// ns an ID over 8 owners against 5 (BenchmarkOwner).
func search(bounds []int64, id int64) int {
	base, n := 0, len(bounds)-1 // the answer is in [base, base+n)
	for n > 1 {
		half := n >> 1
		base += half & int((bounds[base+half]-id-1)>>63) // half when the bound is at or below id
		n -= half
	}
	return base
}
