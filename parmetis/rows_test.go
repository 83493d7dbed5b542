package parmetis

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortByHead checks the insertion and radix paths against a stable
// library sort, on rows short and long, with narrow and wide ID ranges.
func TestSortByHead(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var scratch []neighbour
	for _, n := range []int{0, 1, 2, radixRow, radixRow + 1, 1000, 70000} {
		for _, span := range []int64{1, 3, 300, 1 << 20, 1 << 62} {
			base := rng.Int64N(1 << 40)
			row := make([]neighbour, n)
			for i := range row {
				row[i] = neighbour{To: base + rng.Int64N(span), W: int64(i)}
			}
			want := slices.Clone(row)
			slices.SortStableFunc(want, func(x, y neighbour) int { return cmp.Compare(x.To, y.To) })
			scratch = sortByHead(row, scratch)
			if n > radixRow && !slices.Equal(row, want) {
				t.Fatalf("n=%d span=%d: radix sort is not the stable sort", n, span)
			}
			if !slices.IsSortedFunc(row, func(x, y neighbour) int { return cmp.Compare(x.To, y.To) }) {
				t.Fatalf("n=%d span=%d: not sorted", n, span)
			}
		}
	}
}
