package parmetis

import (
	"fmt"
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
// vertex, the same at any rank count, and reports the cut and imbalance
// they have.
func TestPartitionRandomBalancedAndRankIndependent(t *testing.T) {
	p := newPlanted(3, 101, 3, 5)
	const k = 7
	n := p.n()
	meta := &graph.Meta{NodeTypes: []string{"_N"}, NumNodes: []int64{n}}
	o := Options{Options: serial.Options{Parts: k, Seed: 11}}
	var want []int32
	for _, np := range []int{1, 2, 3} {
		part, res := partitionOn(t, np, func(c *collective.Comm) (*Result, error) {
			res, w, err := PartitionRandom(c, p.input(c.Rank(), np), Balance{Meta: meta}, o)
			if err != nil {
				return nil, err
			}
			if res.Lo != graph.EvenBook(n, np).Bounds[c.Rank()] || w.NCon != 1 || w.Names[0] != "nodes" {
				return nil, fmt.Errorf("np=%d: range from %d, weights %d %v", np, res.Lo, w.NCon, w.Names)
			}
			return res, nil
		})
		m := measure(t, p.input(0, 1), part, o, nodes(n))
		if count := m.Balance[0].Parts; slices.Min(count) < n/k || slices.Max(count) > n/k+1 {
			t.Errorf("np=%d: part sizes %v are not balanced", np, count)
		}
		checkReport(t, fmt.Sprintf("np=%d", np), res, m, "nodes")
		if want == nil {
			want = part
		}
		if !slices.Equal(want, part) {
			t.Errorf("np=%d differs from np=1", np)
		}
	}
}
