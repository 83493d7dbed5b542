package parmetis

import (
	"testing"

	"gnnrun/collective"
)

func TestFeistelIsAPermutation(t *testing.T) {
	for _, n := range []int64{1, 2, 7, 100, 1000, 4097} {
		f := newFeistel(n, 5)
		seen := make([]bool, n)
		for x := range n {
			y := f.apply(x)
			if y < 0 || y >= n || seen[y] {
				t.Fatalf("n=%d: %d maps to %d, out of range or repeated", n, x, y)
			}
			seen[y] = true
		}
	}
}

func TestRandomPartsBalancedAndRankIndependent(t *testing.T) {
	p := newPlanted(3, 101, 3, 5)
	var want []int32
	for _, np := range []int{1, 2, 3} {
		runWorld(t, np, func(c *collective.Comm) error {
			g, _, err := Build(c, p.input(c.Rank(), np))
			if err != nil {
				return err
			}
			parts, _, err := collective.Allgatherv(c, RandomParts(g, 7, 11))
			if err != nil {
				return err
			}
			if c.Rank() != 0 {
				return nil
			}
			count := make([]int, 7)
			for _, x := range parts {
				count[x]++
			}
			for _, k := range count {
				if k < 303/7 || k > 303/7+1 {
					t.Errorf("np=%d: part sizes %v are not balanced", np, count)
				}
			}
			if want == nil {
				want = parts
			}
			for i := range want {
				if want[i] != parts[i] {
					t.Fatalf("np=%d differs from np=1 at vertex %d", np, i)
				}
			}
			return nil
		})
	}
}
