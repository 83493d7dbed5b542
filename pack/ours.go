package pack

import (
	"fmt"
	"math"
	"strings"
)

// Effort says how hard our packer works.
type Effort int

const (
	// Thorough fills packs under every strategy and then runs the
	// improvement phase: the default for packing a dataset.
	Thorough Effort = iota
	// Quick fills packs under the two most promising strategies and keeps
	// the better, without the improvement phase: several times faster, a few
	// packs more at most on the datasets we measured. Sweeps use it to rank
	// shapes.
	Quick
)

var effortNames = [...]string{"thorough", "quick"}

// String returns the name ParseEffort reads.
func (e Effort) String() string {
	if e < 0 || int(e) >= len(effortNames) {
		return fmt.Sprintf("Effort(%d)", int(e))
	}
	return effortNames[e]
}

// ParseEffort returns the effort named s: thorough or quick.
func ParseEffort(s string) (Effort, error) {
	for i, n := range effortNames {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return Effort(i), nil
		}
	}
	return 0, fmt.Errorf("pack: unknown effort %q (want thorough or quick)", s)
}

// The improvement phase looks at up to improvePerGraph candidate swaps per
// graph (a few ns each), and never more than improveMost: about 0.3 s of CPU
// on ogbg-molpcba, which it takes from 36,640 packs to 36,637.
const (
	improvePerGraph = 64
	improveMost     = 1 << 24
)

// strategyBudget bounds the work of every strategy after the first, as a
// multiple of the first's: a strategy whose index walks are long (edges
// first on data where nodes decide) is dropped, with the others of its axis,
// rather than let it dominate.
const strategyBudget = 1

// packOurs fills packs under the strategies of its effort until one reaches
// the lower bound, keeps the packing with the fewest packs, and with
// Thorough effort improves it while it is above the bound.
func packOurs(h Histogram, l Limits, effort Effort) []Group {
	var best []Group
	bestPacks, budget := 0, math.MaxInt
	lb := LowerBound(h, l)
	sts := strategies(h, l)
	if effort == Quick {
		sts = sts[:2]
	}
	aborted := map[axis]bool{}
	for _, st := range sts {
		if aborted[st.axis] {
			continue
		}
		g, work := fill(h, l, st, budget)
		if best == nil {
			budget = strategyBudget*work + 1<<16
		}
		aborted[st.axis] = g == nil
		if n := countPacks(g); g != nil && (best == nil || n < bestPacks) {
			best, bestPacks = g, n
		}
		if bestPacks == lb {
			break
		}
	}
	if effort == Thorough && bestPacks > lb {
		budget := min(improvePerGraph*h.graphs, improveMost)
		best = newImprover(h, l, best, budget).run(lb)
	}
	return canonical(best)
}

func countPacks(groups []Group) int {
	n := 0
	for _, g := range groups {
		n += g.Count
	}
	return n
}
