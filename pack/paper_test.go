package pack

import (
	"fmt"
	"reflect"
	"testing"
)

// Table 2 of the paper: node and edge efficiencies (%) and pack counts of the
// published longest-pack-first packing, limits = dataset maxima, 256 graphs
// per pack, heuristics in the paper's column order.
var table2 = []struct {
	file  string
	eff   [6][2]string
	packs [6]int
}{
	{"ogbg-molhiv-train.csv",
		[6][2]string{{"95.56", "90.50"}, {"97.52", "92.37"}, {"98.50", "93.29"}, {"98.50", "93.29"}, {"98.78", "93.56"}, {"98.50", "93.29"}},
		[6]int{3917, 3838, 3800, 3800, 3789, 3800}},
	{"ogbg-molpcba-train.csv",
		[6][2]string{{"89.59", "95.10"}, {"85.35", "90.61"}, {"92.58", "98.28"}, {"92.58", "98.28"}, {"91.51", "97.14"}, {"90.64", "96.22"}},
		[6]int{32101, 33694, 31063, 31063, 31427, 31729}},
}

func TestPaperTable2(t *testing.T) {
	for _, tc := range table2 {
		h := mustReadCSV(t, tc.file)
		for i, heur := range Heuristics {
			t.Run(fmt.Sprintf("%s/%v", tc.file, heur), func(t *testing.T) {
				ef := mustPack(t, h, WithAlgo(Reference), WithHeuristic(heur)).Efficiency()
				got := [2]string{fmt.Sprintf("%.2f", ef.PublishedNodes), fmt.Sprintf("%.2f", ef.PublishedEdges)}
				if got != tc.eff[i] || ef.Packs != tc.packs[i] {
					t.Errorf("got %v%% in %d packs, the paper has %v%% in %d", got, ef.Packs, tc.eff[i], tc.packs[i])
				}
			})
		}
	}
}

// The claim: our packer uses fewer packs than the best reference
// heuristic on every histogram, and stays within 1% of the lower bound
// max(⌈N/limit⌉, ⌈E/limit⌉, ⌈G/cap⌉) wherever the bound allows. MUTAG is the
// exception: 144 packs are optimal there (TestMUTAGOptimum), and the
// reference already finds them.
var referenceBest = []struct {
	file  string
	packs int // fewest packs of the six published heuristics
}{
	{"ogbg-molhiv-train.csv", 3789}, {"ogbg-molhiv.csv", 4785},
	{"ogbg-molpcba-train.csv", 31063}, {"ogbg-molpcba.csv", 37006},
	{"tu-NCI1.csv", 1132}, {"tu-NCI109.csv", 1125}, {"tu-ENZYMES.csv", 253},
	{"tu-PROTEINS.csv", 79}, {"tu-IMDB-BINARY.csv", 150}, {"tu-IMDB-MULTI.csv", 229},
	{"tu-MUTAG.csv", 144}, {"tu-PTC_MR.csv", 77},
}

func TestOursBeatsReference(t *testing.T) {
	for _, tc := range referenceBest {
		t.Run(tc.file, func(t *testing.T) {
			h := mustReadCSV(t, tc.file)
			best := 0
			for _, heur := range Heuristics {
				p := mustPack(t, h, WithAlgo(Reference), WithHeuristic(heur))
				if best == 0 || p.Packs() < best {
					best = p.Packs()
				}
			}
			if best != tc.packs {
				t.Fatalf("best reference heuristic: %d packs, the issue has %d", best, tc.packs)
			}
			ours := mustPack(t, h)
			lb := LowerBound(h, ours.Limits)
			gap := float64(ours.Packs()-lb) / float64(lb)
			t.Logf("ours %d packs, reference %d, lower bound %d (gap %.2f%%)", ours.Packs(), best, lb, 100*gap)
			switch {
			case tc.file == "tu-MUTAG.csv" || lb == best:
				if ours.Packs() > best {
					t.Errorf("ours %d packs, more than the reference's %d", ours.Packs(), best)
				}
			case ours.Packs() >= best:
				t.Errorf("ours %d packs, not fewer than the reference's %d", ours.Packs(), best)
			}
			if tc.file != "tu-MUTAG.csv" && gap > 0.01 {
				t.Errorf("ours %d packs is %.2f%% above the lower bound %d", ours.Packs(), 100*gap, lb)
			}
		})
	}
}

// TestMUTAGOptimum proves no packing of MUTAG at its maxima uses fewer than
// 144 packs. No pack holds three graphs (the smallest has 10 nodes, the
// limit is 28), so packs = graphs - pairs, and the pairs are a matching in
// the graph of compatible sizes. A fractional matching bounds it: the max
// flow from every bin to every bin it fits with, capacities the counts, is
// twice the best fractional matching.
func TestMUTAGOptimum(t *testing.T) {
	h := mustReadCSV(t, "tu-MUTAG.csv")
	l := Limits{Nodes: h.MaxNodes(), Edges: h.MaxEdges(), Graphs: DefaultMaxGraphs}
	bins := h.Bins()
	smallest := bins[0].Nodes
	if 3*smallest <= l.Nodes {
		t.Fatalf("three graphs of %d nodes fit in %d: the argument needs packs of at most two", smallest, l.Nodes)
	}
	flow := pairFlow(bins, l)
	packs := h.Graphs() - flow/2
	if packs != 144 {
		t.Fatalf("bound %d packs (flow %d), want 144", packs, flow)
	}
	if p := mustPack(t, h); p.Packs() != packs {
		t.Errorf("ours %d packs, the optimum is %d", p.Packs(), packs)
	}
}

// pairFlow is the max flow source → bin i (capacity count) → bin j where
// i and j fit together (unbounded) → sink (capacity count), by augmenting
// paths.
func pairFlow(bins []Bin, l Limits) int {
	n := len(bins)
	src, dst := 2*n, 2*n+1
	capa := make([][]int, 2*n+2)
	for i := range capa {
		capa[i] = make([]int, 2*n+2)
	}
	for i, a := range bins {
		capa[src][i], capa[n+i][dst] = a.Count, a.Count
		for j, b := range bins {
			if a.Nodes+b.Nodes <= l.Nodes && a.Edges+b.Edges <= l.Edges {
				capa[i][n+j] = 1 << 30
			}
		}
	}
	flow := 0
	for {
		prev := make([]int, len(capa))
		for i := range prev {
			prev[i] = -1
		}
		prev[src] = src
		queue := []int{src}
		for len(queue) > 0 && prev[dst] < 0 {
			u := queue[0]
			queue = queue[1:]
			for v := range capa {
				if prev[v] < 0 && capa[u][v] > 0 {
					prev[v] = u
					queue = append(queue, v)
				}
			}
		}
		if prev[dst] < 0 {
			return flow
		}
		push := 1 << 30
		for v := dst; v != src; v = prev[v] {
			push = min(push, capa[prev[v]][v])
		}
		for v := dst; v != src; v = prev[v] {
			capa[prev[v]][v] -= push
			capa[v][prev[v]] += push
		}
		flow += push
	}
}

// TestReferenceQuirks checks the published quirks on histograms small enough
// to follow by hand.
func TestReferenceQuirks(t *testing.T) {
	t.Run("exact fit skipped after a placement", func(t *testing.T) {
		// Two packs of 6 nodes wait in the bucket of 4 nodes left. The first
		// 4-node graph goes into one; the search then starts above 4 and
		// opens a new pack for the second instead of filling the other.
		h := mustHistogram(t, []Bin{{Tuple{6, 10}, 1}, {Tuple{6, 20}, 1}, {Tuple{4, 5}, 2}})
		p := mustPack(t, h, WithAlgo(Reference), WithHeuristic(NodesOnly), MaxNodes(10), MaxEdges(100))
		if p.Packs() != 3 {
			t.Errorf("reference: %d packs, the published code makes 3: %v", p.Packs(), p.Groups)
		}
		if q := mustPack(t, h, MaxNodes(10), MaxEdges(100)); q.Packs() != 2 {
			t.Errorf("ours: %d packs, want 2", q.Packs())
		}
	})
	t.Run("min is max", func(t *testing.T) {
		h := mustReadCSV(t, "tu-ENZYMES.csv")
		pmin := mustPack(t, h, WithAlgo(Reference), WithHeuristic(Min))
		pmax := mustPack(t, h, WithAlgo(Reference), WithHeuristic(Max))
		if !reflect.DeepEqual(pmin.Groups, pmax.Groups) {
			t.Error(`reference "min" packs differently from "max"; the published code computes max for both`)
		}
		if Min.Eval(3, 7) != 3 {
			t.Error("Heuristic Min must be the true minimum outside the reference packer")
		}
	})
	t.Run("graphs of one size never share a pack", func(t *testing.T) {
		// A bin fills the packs of earlier bins, then opens one pack for
		// each of its graphs left: three graphs of 5 nodes take three packs
		// of 100 nodes. No pack reaches the limits, so the published metric
		// measures against the largest pack built and reads 100%.
		h := mustHistogram(t, []Bin{{Tuple{5, 8}, 3}})
		ef := mustPack(t, h, WithAlgo(Reference), MaxNodes(100), MaxEdges(100)).Efficiency()
		want := Efficiency{Packs: 3, Nodes: 5, Edges: 8, Harmonic: harmonic(5, 8), PublishedNodes: 100, PublishedEdges: 100}
		if ef != want {
			t.Errorf("got %+v, want %+v", ef, want)
		}
		if p := mustPack(t, h, MaxNodes(100), MaxEdges(100)); p.Packs() != 1 {
			t.Errorf("ours: %d packs, want 1", p.Packs())
		}
	})
	t.Run(`max graphs "max" is min of the limits`, func(t *testing.T) {
		// (2,0) opens a pack; one (1,0) joins it, a second one fills it to
		// the cap of 3; the eight left open a pack each.
		h := mustHistogram(t, []Bin{{Tuple{2, 0}, 1}, {Tuple{1, 0}, 10}})
		p := mustPack(t, h, WithAlgo(Reference), MaxNodes(10), MaxEdges(3), MaxGraphsFromLimits())
		if p.Limits.Graphs != 3 || p.Packs() != 9 {
			t.Errorf("cap %d, %d packs; want cap 3, 9 packs", p.Limits.Graphs, p.Packs())
		}
	})
}
