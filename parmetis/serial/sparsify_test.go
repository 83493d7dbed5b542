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

// kthLargestWeight gives the k-th of the weights sorted heaviest first,
// for every k, and leaves them as they were.
func TestKthLargestWeight(t *testing.T) {
	var scratch []int32
	for _, ws := range weightRuns(rand.New(rand.NewPCG(7, 8))) {
		was := slices.Clone(ws)
		sorted := slices.Clone(ws)
		slices.SortFunc(sorted, func(a, b int32) int { return int(b) - int(a) })
		for k := 1; k <= len(ws); k++ {
			if got := kthLargestWeight(ws, k, &scratch); got != sorted[k-1] {
				t.Fatalf("%d weights up to %d: k = %d gives %d, want %d", len(ws), slices.Max(ws), k, got, sorted[k-1])
			}
		}
		if !slices.Equal(ws, was) {
			t.Fatalf("%d weights: reordered", len(ws))
		}
	}
}

func BenchmarkKthLargestWeight(b *testing.B) {
	runs := weightRuns(rand.New(rand.NewPCG(7, 8)))
	var scratch []int32
	b.Run("radix", func(b *testing.B) {
		for b.Loop() {
			for _, ws := range runs {
				kthLargestWeight(ws, (len(ws)+3)/4, &scratch)
			}
		}
	})
	b.Run("hoare-copy", func(b *testing.B) {
		for b.Loop() {
			for _, ws := range runs {
				scratch = append(scratch[:0], ws...)
				KthLargest(scratch, (len(ws)+3)/4, cmpLess[int32])
			}
		}
	})
}
