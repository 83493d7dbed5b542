package shard

import (
	"slices"
	"testing"
)

// TestStaggered checks that the staggered order visits every position of
// every group once, starts with the group after the rank's own, and that
// the segments of any chunk cover exactly the chunk.
func TestStaggered(t *testing.T) {
	for _, gb := range [][]int{{0}, {0, 5}, {0, 3, 3, 9}, {0, 0, 4, 4, 10}, {0, 2, 4, 6, 8}} {
		g := len(gb) - 1
		n := gb[g]
		for me := range 6 {
			st := newStaggered(gb, me)
			var seen []int
			for i := range n {
				seen = append(seen, st.at(i))
			}
			if n > 0 && g > 0 {
				first := (me + 1) % g
				for gb[first] == gb[first+1] {
					first = (first + 1) % g
				}
				if seen[0] != gb[first] {
					t.Errorf("gb %v rank %d: first position %d, want %d (group %d)", gb, me, seen[0], gb[first], first)
				}
			}
			if me < g {
				for _, p := range seen[st.remote(me):] {
					if p < gb[me] || p >= gb[me+1] {
						t.Errorf("gb %v rank %d: position %d after remote() is not in the rank's own group", gb, me, p)
					}
				}
				if got := n - st.remote(me); got != gb[me+1]-gb[me] {
					t.Errorf("gb %v rank %d: %d items after remote(), own group has %d", gb, me, got, gb[me+1]-gb[me])
				}
			}
			sorted := slices.Sorted(slices.Values(seen))
			for i, p := range sorted {
				if p != i {
					t.Fatalf("gb %v rank %d: positions %v are not a permutation of 0..%d", gb, me, seen, n-1)
				}
			}
			for lo := 0; lo <= n; lo++ {
				for hi := lo; hi <= n; hi++ {
					var got []int
					for k := range g {
						a, b := st.segment(k, lo, hi)
						if a < b && (a < gb[k] || b > gb[k+1]) {
							t.Fatalf("gb %v rank %d: segment [%d,%d) of group %d outside it", gb, me, a, b, k)
						}
						for p := a; p < b; p++ {
							got = append(got, p)
						}
					}
					want := slices.Sorted(slices.Values(seen[lo:hi]))
					if !slices.Equal(slices.Sorted(slices.Values(got)), want) {
						t.Fatalf("gb %v rank %d chunk [%d,%d): segments give %v, want %v", gb, me, lo, hi, got, want)
					}
				}
			}
		}
	}
}
