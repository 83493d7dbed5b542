package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// biased is a generator a test should catch: each draw is the smaller of
// two, so low values come about twice as often as high ones.
type biased struct{ s Stream }

func (b biased) Uint64(i uint32) uint64 {
	x, y := b.s.Pair(i)
	return min(x, y)
}

// trials draws many independent choices (one stream per subject) and
// counts the outcomes by the key outcome returns.
func trials(n int, gen func(subject int64) drawer, choice func(c *chooser, d drawer) []int64, outcome func([]int64) string) map[string]int {
	c := &chooser{}
	counts := map[string]int{}
	for s := range n {
		counts[outcome(choice(c, gen(int64(s))))]++
	}
	return counts
}

func fair(subject int64) drawer {
	s := NewStream(BatchKey(1, 0, 0), ForNeighbors, Lane(0, 0), subject)
	return &s
}

func unfair(subject int64) drawer {
	return biased{NewStream(BatchKey(1, 0, 0), ForNeighbors, Lane(0, 0), subject)}
}

// pValue is the chance of a chi-square statistic at least as large as the
// observed one, for the expected probability of every outcome.
func pValue(t *testing.T, counts map[string]int, want map[string]float64) float64 {
	t.Helper()
	total := 0
	for _, c := range counts {
		total += c
	}
	stat := 0.0
	for k, p := range want {
		e := p * float64(total)
		if e < 5 {
			t.Fatalf("outcome %s expects %.1f draws: too few for a chi-square test", k, e)
		}
		d := float64(counts[k]) - e
		stat += d * d / e
	}
	for k := range counts {
		if _, ok := want[k]; !ok {
			t.Fatalf("outcome %s has probability 0 but came %d times", k, counts[k])
		}
	}
	return distuv.ChiSquared{K: float64(len(want) - 1)}.Survival(stat)
}

func key(pos []int64) string { return fmt.Sprint(pos) }

// subsets returns every k-subset of [0, n) in ascending order.
func subsets(n, k int) [][]int64 {
	if k == 0 {
		return [][]int64{{}}
	}
	var out [][]int64
	for first := 0; first <= n-k; first++ {
		for _, rest := range subsets(n-first-1, k-1) {
			s := []int64{int64(first)}
			for _, r := range rest {
				s = append(s, int64(first+1)+r)
			}
			out = append(out, s)
		}
	}
	return out
}

// checkLaw runs the choice with the fair generator (the law must hold at
// the 1% level) and with the biased one (it must be rejected).
func checkLaw(t *testing.T, n int, choice func(c *chooser, d drawer) []int64, outcome func([]int64) string, want map[string]float64) {
	t.Helper()
	if p := pValue(t, trials(n, fair, choice, outcome), want); p < 0.01 {
		t.Errorf("fair generator: p = %.4g, the law is rejected at the 1%% level", p)
	}
	if p := pValue(t, trials(n, unfair, choice, outcome), want); p >= 0.01 {
		t.Errorf("biased generator: p = %.4g, the test does not notice the bias", p)
	}
}

// Without replacement every k-subset of the candidates is equally likely.
func TestUniformWithoutReplacementSubsets(t *testing.T) {
	want := map[string]float64{}
	all := subsets(7, 3)
	for _, s := range all {
		want[key(s)] = 1 / float64(len(all))
	}
	checkLaw(t, 20000, func(c *chooser, d drawer) []int64 { return choose(c, d, 7, 3, false, nil, nil, nil) }, key, want)
}

// Floyd's bitmap path (fanouts above floydBitmapFrom) draws uniformly too:
// each position is in the sample with probability k/n.
func TestUniformWithoutReplacementLargeFanout(t *testing.T) {
	const n, k = 200, 100
	want := map[string]float64{}
	for p := range n {
		want[fmt.Sprint(p)] = 1 / float64(n)
	}
	c := &chooser{}
	for _, g := range []struct {
		name string
		gen  func(int64) drawer
		fair bool
	}{{"fair", fair, true}, {"biased", unfair, false}} {
		counts := map[string]int{}
		for s := range 2000 {
			pos := choose(c, g.gen(int64(s)), n, k, false, nil, nil, nil)
			if len(pos) != k || !distinctSorted(pos) {
				t.Fatalf("got %d positions %v, want %d distinct ascending", len(pos), pos, k)
			}
			for _, p := range pos {
				counts[fmt.Sprint(p)]++
			}
		}
		if p := pValue(t, counts, want); (p < 0.01) == g.fair {
			t.Errorf("%s generator: p = %.4g", g.name, p)
		}
	}
}

func distinctSorted(pos []int64) bool {
	for i := 1; i < len(pos); i++ {
		if pos[i] <= pos[i-1] {
			return false
		}
	}
	return true
}

// With replacement each draw is uniform over the candidates.
func TestUniformWithReplacement(t *testing.T) {
	want := map[string]float64{}
	for p := range 9 {
		want[fmt.Sprint(p)] = 1.0 / 9
	}
	checkLaw(t, 20000, func(c *chooser, d drawer) []int64 { return choose(c, d, 9, 1, true, nil, nil, nil) },
		func(p []int64) string { return fmt.Sprint(p[0]) }, want)
}

var testWeights = []float64{1, 0, 3, 0.5, 2, 0, 6.5}

// Weighted without replacement: the pair {a, b} comes with probability
// w_a/W * w_b/(W-w_a) + w_b/W * w_a/(W-w_b), as when drawing one at a time
// in proportion to the weights left; zero weights never come.
func TestWeightedWithoutReplacementPairs(t *testing.T) {
	total := 0.0
	for _, w := range testWeights {
		total += w
	}
	want := map[string]float64{}
	n := len(testWeights)
	for a := range n {
		for b := a + 1; b < n; b++ {
			wa, wb := testWeights[a], testWeights[b]
			if wa == 0 || wb == 0 {
				continue
			}
			want[key([]int64{int64(a), int64(b)})] = wa/total*wb/(total-wa) + wb/total*wa/(total-wb)
		}
	}
	checkLaw(t, 40000, func(c *chooser, d drawer) []int64 { return choose(c, d, int64(n), 2, false, testWeights, nil, nil) }, key, want)
}

// Weighted with replacement: each draw comes in proportion to the weights.
func TestWeightedWithReplacement(t *testing.T) {
	total := 0.0
	for _, w := range testWeights {
		total += w
	}
	want := map[string]float64{}
	for p, w := range testWeights {
		if w > 0 {
			want[fmt.Sprint(p)] = w / total
		}
	}
	checkLaw(t, 20000, func(c *chooser, d drawer) []int64 {
		return choose(c, d, int64(len(testWeights)), 1, true, testWeights, nil, nil)
	},
		func(p []int64) string { return fmt.Sprint(p[0]) }, want)
}

// Exclusions remove positions before the draw: the rest stay uniform, and
// an excluded position never comes.
func TestSkipIsExcludedBeforeTheDraw(t *testing.T) {
	skip := []int64{0, 3, 4, 8}
	rest := []int64{1, 2, 5, 6, 7, 9}
	want := map[string]float64{}
	for _, p := range rest {
		want[fmt.Sprint(p)] = 1 / float64(len(rest))
	}
	checkLaw(t, 20000, func(c *chooser, d drawer) []int64 { return choose(c, d, 10, 1, false, nil, skip, nil) },
		func(p []int64) string { return fmt.Sprint(p[0]) }, want)
	c := &chooser{}
	for _, replace := range []bool{false, true} {
		for _, w := range [][]float64{nil, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}} {
			got := choose(c, fair(5), 10, -1, replace, w, skip, nil)
			if !slices.Equal(got, rest) {
				t.Errorf("fanout -1, replace %v, weighted %v: %v, want %v", replace, w != nil, got, rest)
			}
			got = choose(c, fair(5), 10, 4, replace, w, skip, nil)
			for _, p := range got {
				if slices.Contains(skip, p) {
					t.Errorf("replace %v, weighted %v: excluded position %d drawn", replace, w != nil, p)
				}
			}
		}
	}
}

// The counts: without replacement min(fanout, candidates) distinct
// positions; with replacement exactly fanout; -1 all; nothing from an
// empty range.
func TestChooseCounts(t *testing.T) {
	c := &chooser{}
	for _, n := range []int64{0, 1, 5, 20} {
		for _, k := range []int{-1, 1, 3, 5, 30} {
			for _, replace := range []bool{false, true} {
				got := choose(c, fair(n), n, k, replace, nil, nil, nil)
				want := int64(k)
				switch {
				case k < 0:
					want = n
				case n == 0:
					want = 0
				case !replace:
					want = min(int64(k), n)
				}
				if int64(len(got)) != want {
					t.Errorf("n %d fanout %d replace %v: %d positions, want %d", n, k, replace, len(got), want)
				}
				if !replace && !distinctSorted(got) {
					t.Errorf("n %d fanout %d: %v not distinct and ascending", n, k, got)
				}
				for _, p := range got {
					if p < 0 || p >= n {
						t.Errorf("n %d: position %d outside the range", n, p)
					}
				}
			}
		}
	}
	if got := choose(c, fair(1), 4, 2, false, []float64{0, 0, 0, 0}, nil, nil); len(got) != 0 {
		t.Errorf("all-zero weights drew %v", got)
	}
	if got := choose(c, fair(1), 4, 9, true, []float64{0, 2, 0, 0}, nil, nil); !slices.Equal(got, []int64{1, 1, 1, 1, 1, 1, 1, 1, 1}) {
		t.Errorf("one positive weight, with replacement: %v", got)
	}
}

func TestMapSkipped(t *testing.T) {
	idx := []int64{0, 1, 2, 3}
	mapSkipped(idx, []int64{0, 2, 3, 7})
	if want := []int64{1, 4, 5, 6}; !slices.Equal(idx, want) {
		t.Errorf("got %v, want %v", idx, want)
	}
	if math.IsNaN(Exp(0)) {
		t.Error("Exp(0) is NaN")
	}
}

// refFloyd is Floyd's algorithm written plainly, with a map for the set:
// draw i decides the index taken at j = m-k+i.
func refFloyd(draws []uint64, m int64) []int64 {
	k := int64(len(draws))
	taken := map[int64]bool{}
	for i, u := range draws {
		j := m - k + int64(i)
		t := int64(Below(u, uint64(j+1)))
		if taken[t] {
			t = j
		}
		taken[t] = true
	}
	set := make([]int64, 0, len(taken))
	for t := range taken {
		set = append(set, t)
	}
	slices.Sort(set)
	return set
}

// Every path of floyd (the small range's bitmap, the sorted set, the large
// bitmap) takes the same set as the plain algorithm, on both sides of each
// switch.
func TestFloydPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := &chooser{}
	for _, m := range []int64{1, 2, 7, 63, 64, 65, 200, 511, 512, 513, 5000} {
		for _, k := range []int{1, 2, 5, 15, 64, 65, 200} {
			if int64(k) > m {
				continue
			}
			for range 50 {
				draws := make([]uint64, k)
				for i := range draws {
					draws[i] = rng.Uint64()
				}
				if got, want := floyd(c, draws, m), refFloyd(draws, m); !slices.Equal(got, want) {
					t.Fatalf("m = %d, k = %d: %v, want %v", m, k, got, want)
				}
			}
		}
	}
}
