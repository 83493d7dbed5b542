package parmetis

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/parmetis/serial"
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

// The random baseline gives parts that differ in size by at most one
// vertex, the same at any rank count, with the cut and imbalance they have.
func TestPartitionRandomBalancedAndRankIndependent(t *testing.T) {
	p := newPlanted(3, 101, 3, 5)
	const k = 7
	n := p.n()
	meta := &graph.Meta{NodeTypes: []string{"_N"}, NumNodes: []int64{n}}
	partOf := RandomAssigner(n, k, 11)
	var wantCut int64
	all := p.input(0, 1)
	for i, s := range all.Src {
		if d := all.Dst[i]; s != d && partOf(s) != partOf(d) {
			wantCut++
		}
	}
	var want []int32
	for _, np := range []int{1, 2, 3} {
		runWorld(t, np, func(c *collective.Comm) error {
			o := Options{Options: serial.Options{Parts: k, Seed: 11}}
			res, w, err := PartitionRandom(c, p.input(c.Rank(), np), Balance{Meta: meta}, o)
			if err != nil {
				return err
			}
			if res.Lo != graph.EvenBook(n, np).Bounds[c.Rank()] || w.NCon != 1 || w.Names[0] != "nodes" {
				return fmt.Errorf("np=%d: range from %d, weights %d %v", np, res.Lo, w.NCon, w.Names)
			}
			parts, _, err := collective.Allgatherv(c, res.Part)
			if err != nil || c.Rank() != 0 {
				return err
			}
			count := make([]int, k)
			for _, x := range parts {
				count[x]++
			}
			if slices.Min(count) < int(n)/k || slices.Max(count) > int(n)/k+1 {
				t.Errorf("np=%d: part sizes %v are not balanced", np, count)
			}
			if imb := float64(slices.Max(count)) * k / float64(n); math.Abs(res.Imbalance[0]-imb) > 1e-12 {
				t.Errorf("np=%d: imbalance %v, want %v", np, res.Imbalance, imb)
			}
			if res.Cut != wantCut {
				t.Errorf("np=%d: cut %d, want %d", np, res.Cut, wantCut)
			}
			if want == nil {
				want = parts
			}
			if !slices.Equal(want, parts) {
				t.Errorf("np=%d differs from np=1", np)
			}
			return nil
		})
	}
}
