package graphio

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gnnrun/collective"
	"gnnrun/graph"
)

func TestRadixSorts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]uint64, 100000)
	for i := range x {
		x[i] = r.Uint64()
	}
	want := slices.Clone(x)
	slices.Sort(want)
	radixSort(x)
	if !slices.Equal(x, want) {
		t.Fatal("radixSort")
	}
	k := make([]key128, 50000)
	for i := range k {
		k[i] = key128{r.Uint64() % 7, r.Uint64()}
	}
	radixSort128(k)
	for i := 1; i < len(k); i++ {
		if k[i].Hi < k[i-1].Hi || (k[i].Hi == k[i-1].Hi && k[i].Lo < k[i-1].Lo) {
			t.Fatal("radixSort128")
		}
	}
}

// TestDuplicatesWide counts duplicates with node IDs too wide to pack two
// into a word, which takes the two-word path.
func TestDuplicatesWide(t *testing.T) {
	world(t, 2, func(c *collective.Comm) error {
		e := &graph.Edges{Src: []int64{1 << 40, 5, 1 << 40}, Dst: []int64{3, 1 << 41, 3}}
		if c.Rank() == 1 {
			e = &graph.Edges{Src: []int64{1 << 40, 5}, Dst: []int64{3, 6}}
		}
		n, err := countDuplicates(c, e, 1<<42, 1)
		if err == nil && n != 2 {
			t.Errorf("%d duplicates, want 2", n)
		}
		return err
	})
}
