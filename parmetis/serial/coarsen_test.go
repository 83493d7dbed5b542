package serial

import (
	"slices"
	"testing"
)

// TestCoarsenLevelsAreValid checks every coarse graph: symmetric, no self
// loops, positive weights, vertex weight conserved, and, as long as no
// level above the input was sparsified, the cut of a coarse partition equal
// to the cut of its projection on the input.
func TestCoarsenLevelsAreValid(t *testing.T) {
	for name, g := range map[string]*Graph{"grid": gridGraph(50, 50), "rmat": rmatGraph(12, 16, 2), "3 constraints": trainingGraph(40, 40)} {
		o, _ := Options{Parts: 2}.Normalized(g.N(), g.NCon)
		c := newCtrl(o, g.NCon)
		levels := c.coarsen(g, nil, c.coarsenTo, newRand(1, 1))
		if len(levels) < 3 {
			t.Errorf("%s: only %d levels", name, len(levels))
		}
		want := constraintTotals(g)
		exact := true
		for l, lev := range levels {
			if err := lev.g.Validate(); err != nil {
				t.Fatalf("%s level %d: %v", name, l, err)
			}
			if got := constraintTotals(lev.g); !slices.Equal(got, want) {
				t.Errorf("%s level %d: vertex weights %v, want %v", name, l, got, want)
			}
			if exact = exact && !lev.sparse; !exact || l == 0 {
				continue
			}
			coarse := roundRobin(lev.g.N(), 2, uint64(l))
			fine := coarse
			for k := l - 1; k >= 0; k-- {
				proj := make([]int32, levels[k].g.N())
				for v, cv := range levels[k].cmap {
					proj[v] = fine[cv]
				}
				fine = proj
			}
			two := Options{Parts: 2}
			if cc, fc := measure(t, lev.g, coarse, two).Cut, measure(t, g, fine, two).Cut; cc != fc {
				t.Errorf("%s level %d: coarse cut %d, projected cut %d", name, l, cc, fc)
			}
		}
	}
}
