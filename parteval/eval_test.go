package parteval

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// directed is a 4-node graph given one direction at a time: 0->1 and 1->0
// (together 2), 1->2 weighing 3, 2->3, a self loop 3->3 weighing 5, and
// 0->3 weighing 2.
func directed() Graph {
	return Graph{N: 4, Src: []int64{0, 1, 1, 2, 3, 0}, Dst: []int64{1, 0, 2, 3, 3, 3}, Weight: []int64{1, 1, 3, 1, 5, 2}}
}

func TestCutByHand(t *testing.T) {
	cases := []struct {
		part []int32
		want int64
	}{
		{[]int32{0, 0, 1, 1}, 3 + 2},             // 1->2, 0->3
		{[]int32{0, 1, 0, 1}, 1 + 1 + 3 + 1 + 2}, // all but the self loop
		{[]int32{0, 1, 1, 1}, 1 + 1 + 2},         // 0->1, 1->0, 0->3
		{[]int32{1, 1, 1, 1}, 0},
	}
	for _, c := range cases {
		res, err := Evaluate(directed(), c.part, 2, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Cut != c.want {
			t.Errorf("parts %v: cut %d, want %d", c.part, res.Cut, c.want)
		}
	}
	unweighted := directed()
	unweighted.Weight = nil
	res, err := Evaluate(unweighted, []int32{0, 1, 0, 1}, 2, nil, nil)
	if err != nil || res.Cut != 5 {
		t.Errorf("unweighted cut %v (%v), want 5: every edge but the self loop", res, err)
	}
}

// A METIS-style triangle lists each edge from both ends: 0-1 weighing 2,
// 1-2 weighing 1, 0-2 weighing 4. Each edge counts once.
func TestCutSymmetric(t *testing.T) {
	g, err := FromCSR([]int64{0, 2, 4, 6}, []int32{1, 2, 0, 2, 0, 1}, []int64{2, 4, 2, 1, 4, 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		part []int32
		want int64
	}{{[]int32{0, 0, 1}, 1 + 4}, {[]int32{0, 1, 1}, 2 + 4}, {[]int32{0, 1, 0}, 2 + 1}, {[]int32{2, 2, 2}, 0}} {
		res, err := Evaluate(g, c.part, 3, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Cut != c.want {
			t.Errorf("parts %v: cut %d, want %d", c.part, res.Cut, c.want)
		}
	}
	oneWay := Graph{N: 2, Src: []int64{0}, Dst: []int64{1}, Symmetric: true}
	if _, err := Evaluate(oneWay, []int32{0, 1}, 2, nil, nil); err == nil || !strings.Contains(err.Error(), "odd") {
		t.Errorf("an edge listed from one end of a symmetric graph: %v", err)
	}
	if _, err := FromCSR([]int64{0, 2}, []int32{1}, nil); err == nil {
		t.Error("FromCSR accepted xadj ending past adjncy")
	}
}

func TestBalanceByHand(t *testing.T) {
	cons := []Constraint{
		{Name: "nodes", Weight: []int64{1, 1, 1, 1}},
		{Name: "heavy", Weight: []int64{3, 1, 0, 0}},
		{Name: "none", Weight: []int64{0, 0, 0, 0}},
	}
	res, err := Evaluate(directed(), []int32{0, 0, 1, 1}, 2, nil, cons)
	if err != nil {
		t.Fatal(err)
	}
	want := []Balance{
		{Name: "nodes", Parts: []int64{2, 2}, Total: 4, Imbalance: 1},
		{Name: "heavy", Parts: []int64{4, 0}, Total: 4, Imbalance: 2}, // 4 over a target of 2
		{Name: "none", Parts: []int64{0, 0}, Total: 0, Imbalance: 1},
	}
	checkBalance(t, res, want)
	if res.Of("heavy") != &res.Balance[1] || res.Of("train") != nil {
		t.Error("Of does not find constraints by name")
	}
	// Three parts, one empty: the heaviest of 3 nodes over a target of 4/3.
	res, err = Evaluate(directed(), []int32{0, 0, 0, 1}, 3, nil, cons[:1])
	if err != nil {
		t.Fatal(err)
	}
	checkBalance(t, res, []Balance{{Name: "nodes", Parts: []int64{3, 1, 0}, Total: 4, Imbalance: 3 / (4.0 / 3)}})
}

func TestBalanceTargets(t *testing.T) {
	nodes := []Constraint{{Name: "nodes", Weight: []int64{1, 1, 1, 1}}}
	// Part 0 should get a quarter (1 node) and holds 2: imbalance 2.
	res, err := Evaluate(directed(), []int32{0, 0, 1, 1}, 2, []float64{0.25, 0.75}, nodes)
	if err != nil {
		t.Fatal(err)
	}
	checkBalance(t, res, []Balance{{Name: "nodes", Parts: []int64{2, 2}, Total: 4, Imbalance: 2}})
	// A zero share is met by an empty part and broken by any weight.
	res, err = Evaluate(directed(), []int32{1, 1, 1, 1}, 2, []float64{0, 1}, nodes)
	if err != nil || res.Balance[0].Imbalance != 1 {
		t.Errorf("empty part with a zero share: %v %v", res, err)
	}
	res, err = Evaluate(directed(), []int32{0, 1, 1, 1}, 2, []float64{0, 1}, nodes)
	if err != nil || !math.IsInf(res.Balance[0].Imbalance, 1) {
		t.Errorf("a node in a part with a zero share: %v %v", res, err)
	}
}

func checkBalance(t *testing.T, res *Result, want []Balance) {
	t.Helper()
	if len(res.Balance) != len(want) {
		t.Fatalf("%d constraints measured, want %d", len(res.Balance), len(want))
	}
	for i, w := range want {
		g := res.Balance[i]
		if g.Name != w.Name || !slices.Equal(g.Parts, w.Parts) || g.Total != w.Total || math.Abs(g.Imbalance-w.Imbalance) > 1e-12 {
			t.Errorf("constraint %d: got %+v, want %+v", i, g, w)
		}
	}
}

func TestEvaluateRejects(t *testing.T) {
	g := directed()
	nodes := []Constraint{{Name: "nodes", Weight: []int64{1, 1, 1, 1}}}
	outside := directed()
	outside.Dst[2] = 4
	negative := directed()
	negative.Weight[0] = -1
	cases := []struct {
		name   string
		g      Graph
		part   []int32
		k      int
		target []float64
		cons   []Constraint
		want   string
	}{
		{"no parts", g, []int32{0, 0, 0, 0}, 0, nil, nil, "0 parts"},
		{"part outside K", g, []int32{0, 2, 0, 0}, 2, nil, nil, "node 1 is in part 2"},
		{"negative part", g, []int32{0, 0, -1, 0}, 2, nil, nil, "node 2 is in part -1"},
		{"short partition", g, []int32{0, 0, 0}, 2, nil, nil, "3 parts given for 4 nodes"},
		{"endpoint outside", outside, []int32{0, 0, 0, 0}, 1, nil, nil, "edge 2 (1 -> 4)"},
		{"negative edge weight", negative, []int32{0, 0, 0, 0}, 1, nil, nil, "negative weight -1"},
		{"short constraint", g, []int32{0, 0, 0, 0}, 1, nil, []Constraint{{Name: "x", Weight: []int64{1}}}, "constraint x has 1 weights"},
		{"negative node weight", g, []int32{0, 0, 0, 0}, 1, nil, []Constraint{{Name: "x", Weight: []int64{1, -2, 1, 1}}}, "node 1 weighs -2"},
		{"targets for other K", g, []int32{0, 0, 0, 0}, 2, []float64{1}, nodes, "1 target shares for 2 parts"},
		{"negative target", g, []int32{0, 0, 0, 0}, 2, []float64{-0.5, 1.5}, nodes, "part 0 has target share -0.5"},
		{"NaN target", g, []int32{0, 0, 0, 0}, 2, []float64{math.NaN(), 1}, nodes, "part 0 has target share NaN"},
	}
	for _, c := range cases {
		_, err := Evaluate(c.g, c.part, c.k, c.target, c.cons)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "parteval: ") {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

func TestSplitWeights(t *testing.T) {
	cons, err := SplitWeights([]int64{1, 10, 2, 20, 3, 30}, 2, "nodes")
	if err != nil {
		t.Fatal(err)
	}
	if len(cons) != 2 || cons[0].Name != "nodes" || cons[1].Name != "c1" ||
		!slices.Equal(cons[0].Weight, []int64{1, 2, 3}) || !slices.Equal(cons[1].Weight, []int64{10, 20, 30}) {
		t.Errorf("split into %+v", cons)
	}
	if _, err := SplitWeights([]int64{1, 2, 3}, 2); err == nil {
		t.Error("3 weights split into 2 columns")
	}
}
