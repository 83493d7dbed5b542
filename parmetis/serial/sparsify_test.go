package serial

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// weightRuns returns arrays of positive edge weights of the kinds coarse
// levels have: a few distinct light weights, weights spread up to 2^16,
// weights up to the int32 limit (where contraction saturates), and one
// weight repeated.
func weightRuns(rng *rand.Rand) [][]int32 {
	var runs [][]int32
	for _, top := range []int32{1, 3, 255, 256, 1 << 16, math.MaxInt32} {
		for range 40 {
			ws := make([]int32, 1+rng.IntN(600))
			for i := range ws {
				ws[i] = 1 + rng.Int32N(top)
				if rng.IntN(4) == 0 {
					ws[i] = top // ties at the top
				}
			}
			runs = append(runs, ws)
		}
	}
	return runs
}

// KthLargestWeight gives the k-th of the values sorted largest first, for
// every k, and leaves them as they were: the serial partitioner's int32
// weights, the distributed one's int64 weights and uint64 hashes.
func TestKthLargestWeight(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, ws := range weightRuns(rng) {
		checkKth(t, ws)
		wide := make([]int64, len(ws))
		hashes := make([]uint64, len(ws))
		for i, w := range ws {
			wide[i] = int64(w) << uint(rng.IntN(32))
			hashes[i] = rng.Uint64() >> uint(rng.IntN(3)*20)
			if i > 0 && rng.IntN(5) == 0 {
				hashes[i] = hashes[i-1] // equal hashes
			}
		}
		checkKth(t, wide)
		checkKth(t, hashes)
	}
}

func checkKth[T int32 | int64 | uint64](t *testing.T, xs []T) {
	t.Helper()
	var scratch []T
	was := slices.Clone(xs)
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	slices.Reverse(sorted)
	for k := 1; k <= len(xs); k++ {
		if got := KthLargestWeight(xs, k, &scratch); got != sorted[k-1] {
			t.Fatalf("%T: %d values up to %d: k = %d gives %d, want %d", xs, len(xs), sorted[0], k, got, sorted[k-1])
		}
	}
	if !slices.Equal(xs, was) {
		t.Fatalf("%T: %d values: reordered", xs, len(xs))
	}
}

func BenchmarkKthLargestWeight(b *testing.B) {
	runs := weightRuns(rand.New(rand.NewPCG(7, 8)))
	var scratch []int32
	b.Run("radix", func(b *testing.B) {
		for b.Loop() {
			for _, ws := range runs {
				KthLargestWeight(ws, (len(ws)+3)/4, &scratch)
			}
		}
	})
	b.Run("sort-copy", func(b *testing.B) {
		for b.Loop() {
			for _, ws := range runs {
				scratch = append(scratch[:0], ws...)
				slices.Sort(scratch)
				_ = scratch[len(ws)-(len(ws)+3)/4]
			}
		}
	})
}
