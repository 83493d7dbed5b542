package parmetis

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"gnnrun/collective"
)

// degreeSplit's side 1 is the smallest run of vertices, by degree from the
// highest and then by global ID, that reaches its share of the weight, and
// its cut fraction is the cut of that side recounted on the whole graph:
// checked at 1, 2 and 3 ranks against a plain sort of the replicated graph
// (R-MAT scale 16, whose many vertices of equal degree take the tie rule).
// Plain R-MAT's split cuts under coreSplitCut and the planted graph's
// above it, as on scale 20 (see coreSplitCut).
func TestDegreeSplitTakesHighestDegrees(t *testing.T) {
	for _, planted := range []float64{0, 0.7} {
		for _, p := range []int{1, 2, 3} {
			for _, share := range []float64{0.5, 0.3} {
				runWorld(t, p, func(c *collective.Comm) error {
					g, _, err := Build(c, rmatInput(t, planted, c.Rank(), c.Size()))
					if err != nil {
						return err
					}
					part, err := g.degreeSplit(share)
					if err != nil {
						return err
					}
					frac, err := g.cutFraction(part)
					if err != nil {
						return err
					}
					got, _, err := collective.Allgatherv(c, part)
					if err != nil {
						return err
					}
					whole, err := g.Replicate()
					if err != nil {
						return err
					}
					n := whole.N()
					deg := func(v int) int64 { return whole.Xadj[v+1] - whole.Xadj[v] }
					order := make([]int, n)
					var total int64
					for v := range order {
						order[v] = v
						total += whole.Vwgt[v]
					}
					slices.SortFunc(order, func(a, b int) int {
						return cmp.Or(cmp.Compare(deg(b), deg(a)), cmp.Compare(a, b))
					})
					want := make([]int32, n)
					var taken int64
					for _, v := range order {
						if taken >= int64(share*float64(total)) {
							break
						}
						want[v], taken = 1, taken+whole.Vwgt[v]
					}
					var cut, all int64
					for v := range n {
						for e := whole.Xadj[v]; e < whole.Xadj[v+1]; e++ {
							all += int64(whole.Adjwgt[e])
							if want[v] != want[whole.Adjncy[e]] {
								cut += int64(whole.Adjwgt[e])
							}
						}
					}
					what := fmt.Sprintf("planted %v, %d ranks, share %v", planted, p, share)
					if !slices.Equal(got, want) {
						return fmt.Errorf("%s: side 1 differs from the highest degrees' run", what)
					}
					if f := float64(cut) / float64(all); frac != f {
						return fmt.Errorf("%s: cut fraction %v, recounted %v", what, frac, f)
					}
					if share == 0.5 && (frac <= coreSplitCut) != (planted == 0) {
						return fmt.Errorf("%s: the split cuts %.3f of the edges, against coreSplitCut %v", what, frac, coreSplitCut)
					}
					return nil
				})
			}
		}
	}
}
