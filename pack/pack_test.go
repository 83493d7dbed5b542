package pack

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Every packing of every histogram, by every packer, is valid: each bin's
// count used exactly, no pack over a limit or the cap.
func TestEveryPackingIsValid(t *testing.T) {
	for _, file := range histograms(t) {
		h := mustReadCSV(t, file)
		t.Run(file, func(t *testing.T) {
			for _, heur := range Heuristics {
				for _, ord := range []Order{LongestFirst, ShortestFirst} {
					mustPack(t, h, WithAlgo(Reference), WithHeuristic(heur), WithOrder(ord))
				}
			}
			// Tight caps and larger packs stress the cap and the lookahead;
			// the improvement phase runs where it is fast (the default effort
			// on every file is in TestOursBeatsReference).
			effort := Thorough
			if h.Graphs() > 50000 {
				effort = Quick
			}
			mustPack(t, h, WithEffort(Quick))
			mustPack(t, h, MaxGraphs(3), WithEffort(effort))
			mustPack(t, h, MaxNodes(2*h.MaxNodes()), MaxEdges(3*h.MaxEdges()), MaxGraphs(7), WithEffort(effort))
			mustPack(t, h, WithAlgo(Reference), MaxGraphs(3))
		})
	}
}

// TestRandomHistograms packs random histograms under random limits with
// both packers and checks validity, the lower bound, and that ours is never
// worse than the cap alone allows.
func TestRandomHistograms(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 300 {
		bins := make([]Bin, 1+rng.IntN(40))
		for k := range bins {
			n := 1 + rng.IntN(30)
			bins[k] = Bin{Tuple{n, rng.IntN(3 * n)}, 1 + rng.IntN(20)}
		}
		h := mustHistogram(t, bins)
		l := Limits{Nodes: h.MaxNodes() + rng.IntN(40), Edges: h.MaxEdges() + rng.IntN(90), Graphs: 1 + rng.IntN(12)}
		name := fmt.Sprintf("case %d %v", i, l)
		ours := mustPack(t, h, WithLimits(l))
		ref := mustPack(t, h, WithLimits(l), WithAlgo(Reference), WithHeuristic(Heuristics[i%6]))
		lb := LowerBound(h, l)
		if ours.Packs() < lb || ref.Packs() < lb {
			t.Fatalf("%s: %d and %d packs, below the lower bound %d", name, ours.Packs(), ref.Packs(), lb)
		}
		if ours.Packs() > h.Graphs() {
			t.Fatalf("%s: %d packs for %d graphs", name, ours.Packs(), h.Graphs())
		}
	}
}

func TestPackErrors(t *testing.T) {
	h := mustReadCSV(t, "ogbg-molhiv-train.csv")
	for _, tc := range []struct {
		name string
		opts []Option
		want string
	}{
		{"graph too large", []Option{MaxNodes(200)}, "graph(s) of 202 nodes and 408 edges do not fit in a pack of 200 nodes and 502 edges"},
		{"zero nodes", []Option{MaxNodes(0)}, "max nodes per pack must be >= 1"},
		{"negative edges", []Option{MaxEdges(-3)}, "max edges per pack must be >= 1"},
		{"zero cap", []Option{MaxGraphs(0)}, "max graphs per pack must be >= 1"},
		{"bad limits", []Option{WithLimits(Limits{10, 10, 0})}, "limits must be at least"},
		{"bad algo", []Option{WithAlgo(Algo(7))}, "invalid algorithm"},
		{"bad heuristic", []Option{WithHeuristic(Heuristic(-1))}, "invalid heuristic"},
		{"bad order", []Option{WithOrder(Order(2))}, "invalid order"},
		{"bad effort", []Option{WithEffort(Effort(5))}, "invalid effort"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Pack(h, tc.opts...)
			if err == nil || !strings.HasPrefix(err.Error(), "pack: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
	if err := CheckSizes([]Tuple{{3, 4}, {30, 4}}, Limits{10, 10, 2}); err == nil ||
		!strings.Contains(err.Error(), "graph 1 has 30 nodes and 4 edges, more than the pack limits of 10 nodes and 10 edges") {
		t.Errorf("CheckSizes: %v", err)
	}
}

func TestValidateCatchesBadPackings(t *testing.T) {
	h := mustHistogram(t, []Bin{{Tuple{2, 2}, 2}, {Tuple{3, 1}, 1}})
	l := Limits{Nodes: 5, Edges: 5, Graphs: 2}
	for _, tc := range []struct {
		name   string
		groups []Group
		want   string
	}{
		{"good", []Group{{1, []Tuple{{3, 1}, {2, 2}}}, {1, []Tuple{{2, 2}}}}, ""},
		{"missing graph", []Group{{1, []Tuple{{3, 1}, {2, 2}}}}, "bin (2 nodes, 2 edges) has 2 graphs but 1 were packed"},
		{"extra graph", []Group{{2, []Tuple{{3, 1}, {2, 2}}}}, "bin (3 nodes, 1 edges) has 1 graphs but 2 were packed"},
		{"over nodes", []Group{{1, []Tuple{{3, 1}, {2, 2}, {2, 2}}}}, "3 graphs exceed the cap of 2"},
		{"over limit", []Group{{1, []Tuple{{3, 1}, {2, 2}}}, {1, []Tuple{{2, 2}, {9, 9}}}}, "11 nodes and 11 edges exceed the limits"},
		{"unknown size", []Group{{1, []Tuple{{3, 1}, {2, 2}}}, {1, []Tuple{{2, 2}}}, {1, []Tuple{{1, 1}}}}, "size (1 nodes, 1 edges) were packed but the dataset has none"},
		{"zero count", []Group{{0, []Tuple{{3, 1}}}}, "count 0 is not positive"},
		{"empty pack", []Group{{1, nil}}, "empty pack"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Packing{Limits: l, Groups: tc.groups}.Validate(h)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// The filling phase repeats a pack while the counts allow; the result must
// equal filling one pack at a time.
func TestFillRepeatsEqualOneAtATime(t *testing.T) {
	h := mustReadCSV(t, "tu-NCI1.csv")
	l := Limits{Nodes: h.MaxNodes(), Edges: h.MaxEdges(), Graphs: DefaultMaxGraphs}
	for _, st := range strategies(h, l) {
		groups, _ := fill(h, l, strategy{axis: st.axis, w: st.w}, math.MaxInt)
		x := newBinIndex(h, st.axis, st.w)
		lp, ls := st.axis.split(Tuple{Nodes: l.Nodes, Edges: l.Edges})
		var one []Group
		for remaining := h.Graphs(); remaining > 0; {
			items := fillOne(x, nil, lp, ls, l.Graphs)
			g := Group{Count: 1}
			for _, b := range items {
				g.Graphs = append(g.Graphs, x.tuple[b])
			}
			one = append(one, g)
			remaining -= len(items)
		}
		if a, b := canonical(groups), canonical(one); fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("strategy %v: repeated groups differ from one pack at a time", st)
		}
	}
}

func TestEfficiencyAndLowerBound(t *testing.T) {
	h := mustHistogram(t, []Bin{{Tuple{4, 6}, 3}, {Tuple{2, 1}, 1}})
	groups := []Group{{1, []Tuple{{4, 6}, {4, 6}}}, {1, []Tuple{{4, 6}, {2, 1}}}} // loads (8, 12) and (6, 7)
	for _, tc := range []struct {
		l                  Limits
		lb                 int
		nodes, edges       float64 // true
		pubNodes, pubEdges float64 // published
	}{
		// N = 14, E = 19, G = 4; the first pack reaches both limits.
		{Limits{8, 12, 2}, 2, 100 * 14.0 / 16, 100 * 19.0 / 24, 100 * 14.0 / 16, 100 - 100*5.0/24},
		// No pack reaches 20 edges: the published metric measures against
		// the largest pack built, (8, 12), in both dimensions.
		{Limits{8, 20, 3}, 2, 100 * 14.0 / 16, 100 * 19.0 / 40, 100 * 14.0 / 16, 100 - 100*5.0/24},
		// ⌈G/cap⌉ decides.
		{Limits{8, 12, 1}, 4, 100 * 14.0 / 16, 100 * 19.0 / 24, 100 * 14.0 / 16, 100 - 100*5.0/24},
	} {
		if lb := LowerBound(h, tc.l); lb != tc.lb {
			t.Errorf("%v: lower bound %d, want %d", tc.l, lb, tc.lb)
		}
		ef := Packing{Limits: tc.l, Groups: groups}.Efficiency()
		if ef.Packs != 2 || !near(ef.Nodes, tc.nodes) || !near(ef.Edges, tc.edges) ||
			!near(ef.PublishedNodes, tc.pubNodes) || !near(ef.PublishedEdges, tc.pubEdges) ||
			!near(ef.Harmonic, 2/(1/tc.nodes+1/tc.edges)) {
			t.Errorf("%v: got %+v", tc.l, ef)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
