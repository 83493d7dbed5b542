package serial

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// roundRobin returns a perfectly balanced random partition of g's n unit
// weight vertices into k parts.
func roundRobin(n, k int, seed uint64) []int32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	part := make([]int32, n)
	for i, v := range rng.Perm(n) {
		part[v] = int32(i % k)
	}
	return part
}

func TestRefineKwayNeverIncreasesCut(t *testing.T) {
	for name, g := range map[string]*Graph{"grid": gridGraph(40, 40), "rmat": rmatGraph(11, 8, 2)} {
		for _, k := range []int{2, 5, 16} {
			o := Options{Parts: k, Seed: 3}
			random := roundRobin(g.N(), k, 9)
			good, err := Partition(g, o)
			if err != nil {
				t.Fatal(err)
			}
			for start, part := range map[string][]int32{"random": random, "partitioned": good} {
				before := measure(t, g, part, o).Cut
				if err := RefineKway(g, part, o); err != nil {
					t.Fatalf("%s k=%d %s: %v", name, k, start, err)
				}
				if after := checkBalanced(t, g, part, o).Cut; after > before {
					t.Errorf("%s k=%d %s: cut rose from %d to %d", name, k, start, before, after)
				}
			}
		}
	}
}

func TestRefineKwayBalances(t *testing.T) {
	g := gridGraph(30, 30)
	part := make([]int32, g.N()) // everything in part 0
	for v := range part {
		if v%7 == 0 {
			part[v] = int32(v % 4)
		}
	}
	o := Options{Parts: 4, Seed: 1}
	if err := RefineKway(g, part, o); err != nil {
		t.Fatal(err)
	}
	checkBalanced(t, g, part, o)
}

func TestRefineKwayBadInput(t *testing.T) {
	g := gridGraph(3, 3)
	for _, c := range []struct {
		part []int32
		want string
	}{
		{make([]int32, 8), "8 parts given for 9 vertices"},
		{[]int32{0, 1, 2, 0, 1, 2, 0, 1, 5}, "vertex 8 is in part 5, outside [0,3)"},
		{[]int32{0, 1, 2, 0, 1, 2, 0, 1, -1}, "outside [0,3)"},
	} {
		err := RefineKway(g, c.part, Options{Parts: 3})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("part %v: error %v, want %q", c.part, err, c.want)
		}
	}
}

// checkBisection compares b's cut and side weights with parteval's measure
// of its sides, and the rest of its bookkeeping with a recount from
// scratch.
func checkBisection(t *testing.T, b *bisection) {
	t.Helper()
	g := b.g
	m := measure(t, g, sideParts(b.side), Options{Parts: 2})
	pw := make([]int64, 2*g.NCon) // side s's weight in constraint c at [s*NCon+c], as b.pw
	for c, bal := range m.Balance {
		pw[c], pw[g.NCon+c] = bal.Parts[0], bal.Parts[1]
	}
	if m.Cut != b.cut || !slices.Equal(pw, b.pw) {
		t.Fatalf("bookkeeping drifted: cut %d (measured %d), weights %v (measured %v)", b.cut, m.Cut, b.pw, pw)
	}
	want := &bisection{g: g, side: b.side, id: make([]int64, g.N()), ed: make([]int64, g.N()),
		boundary: boundary{bndPtr: make([]int32, g.N())}, pw: make([]int64, 2*g.NCon)}
	want.compute(nil)
	if !slices.Equal(want.id, b.id) || !slices.Equal(want.ed, b.ed) {
		t.Fatalf("bookkeeping drifted: internal or external degrees differ from a recount")
	}
	bnd := slices.Sorted(slices.Values(slices.Clone(b.bndInd)))
	if !slices.Equal(bnd, slices.Sorted(slices.Values(want.bndInd))) {
		t.Fatalf("boundary drifted: %d vertices, true %d", len(bnd), len(want.bndInd))
	}
}

func TestRefine2WayNeverIncreasesCut(t *testing.T) {
	for name, g := range map[string]*Graph{"grid": gridGraph(30, 30), "rmat": rmatGraph(10, 8, 4), "3 constraints": trainingGraph(30, 30)} {
		o, _ := Options{Parts: 2}.Normalized(g.N(), g.NCon)
		c := newCtrl(o, g.NCon)
		ub := slices.Repeat([]float64{1.03}, g.NCon)
		t2 := newBiTarget(g, 0.5, ub)
		rng := newRand(1, 2)
		for trial := range 5 {
			side := make([]int8, g.N())
			for i, v := range rng.Perm(g.N()) {
				side[v] = int8(i % 2)
			}
			before := measure(t, g, sideParts(side), Options{Parts: 2}).Cut
			b := c.newBisection(g, side, nil)
			c.improveBisection(b, t2, fmPasses, rng)
			checkBisection(t, b)
			m := checkBalanced(t, g, sideParts(b.side), Options{Parts: 2, Imbalance: ub})
			if m.Cut > before {
				t.Errorf("%s trial %d: FM raised the cut from %d to %d", name, trial, before, m.Cut)
			}
		}
	}
}

func TestKwayBookkeeping(t *testing.T) {
	g := rmatGraph(11, 8, 6)
	o, _ := Options{Parts: 7, Seed: 2}.Normalized(g.N(), g.NCon)
	c := newCtrl(o, g.NCon)
	part := roundRobin(g.N(), 7, 3)
	part[0], part[1], part[2] = 0, 0, 0 // slightly unbalanced
	s := newKway(g, part, o)
	if err := c.balanceKway(s); err != nil {
		t.Fatal(err)
	}
	c.refineKway(s, newRand(1, 1), kwayPasses)
	m := measure(t, g, part, o)
	for c, bal := range m.Balance {
		for p, w := range bal.Parts {
			if s.pw[p*g.NCon+c] != w {
				t.Fatalf("k-way bookkeeping drifted: part %d weighs %d in constraint %d, measured %d", p, s.pw[p*g.NCon+c], c, w)
			}
		}
	}
	fresh := newKway(g, slices.Clone(part), o)
	if m.Cut != s.cut || !slices.Equal(fresh.id, s.id) || !slices.Equal(fresh.ed, s.ed) {
		t.Fatalf("k-way bookkeeping drifted: cut %d (measured %d), or degrees differ from a recount", s.cut, m.Cut)
	}
}

// TestBisectionBookkeepingAcrossLevels checks the incremental bookkeeping
// of every level of multilevel bisections, including levels under a
// sparsified coarse graph, where the interior shortcut of projection must
// not be taken.
func TestBisectionBookkeepingAcrossLevels(t *testing.T) {
	sparse, levels := 0, 0
	levelHook = func(b *bisection, coarserSparse bool) {
		checkBisection(t, b)
		levels++
		if coarserSparse {
			sparse++
		}
	}
	defer func() { levelHook = nil }()
	for _, g := range []*Graph{rmatGraph(13, 32, 8), gridGraph(60, 60), trainingGraph(30, 30)} {
		if _, err := Partition(g, Options{Parts: 8, Seed: 1, Threads: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if sparse == 0 {
		t.Errorf("no level under a sparsified graph among %d; the test graph is too sparse", levels)
	}
}
