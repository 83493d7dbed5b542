package pack

import (
	"errors"
	"fmt"
	"slices"
)

// Tuple is the size of one graph: its number of nodes and of edges, edges
// counted as stored (both directions of an undirected edge, as PyG does).
type Tuple struct {
	Nodes, Edges int
}

// String returns "(n nodes, e edges)".
func (t Tuple) String() string { return fmt.Sprintf("(%d nodes, %d edges)", t.Nodes, t.Edges) }

// less orders tuples by nodes, then edges.
func (t Tuple) less(u Tuple) bool {
	if t.Nodes != u.Nodes {
		return t.Nodes < u.Nodes
	}
	return t.Edges < u.Edges
}

// Bin is one cell of a histogram: Count graphs of the same size.
type Bin struct {
	Tuple
	Count int
}

// Histogram is the 2-D histogram of the graph sizes of a dataset: one bin per
// distinct (nodes, edges), sorted by nodes then edges, every count positive.
// The zero Histogram is empty; build one with NewHistogram or
// HistogramOf.
type Histogram struct {
	bins                 []Bin
	graphs, nodes, edges int
	maxNodes, maxEdges   int
}

// NewHistogram returns the histogram of the given bins. Bins of the same size
// are merged and bins of count 0 dropped. It fails on a negative size or
// count, on a graph without nodes, and when no graph is left.
func NewHistogram(bins []Bin) (Histogram, error) {
	sorted := make([]Bin, 0, len(bins))
	for _, b := range bins {
		if err := checkBin(b); err != nil {
			return Histogram{}, fmt.Errorf("pack: bin %v: %w", b.Tuple, err)
		}
		if b.Count > 0 {
			sorted = append(sorted, b)
		}
	}
	slices.SortFunc(sorted, func(a, b Bin) int {
		if a.Tuple.less(b.Tuple) {
			return -1
		}
		if b.Tuple.less(a.Tuple) {
			return 1
		}
		return 0
	})
	var h Histogram
	for _, b := range sorted {
		if n := len(h.bins); n > 0 && h.bins[n-1].Tuple == b.Tuple {
			h.bins[n-1].Count += b.Count
		} else {
			h.bins = append(h.bins, b)
		}
		h.add(b)
	}
	if h.graphs == 0 {
		return Histogram{}, fmt.Errorf("pack: empty dataset: no graphs in the histogram")
	}
	return h, nil
}

// checkBin says what is wrong with a bin, without naming it.
func checkBin(b Bin) error {
	switch {
	case b.Nodes < 1:
		return errors.New("a graph needs at least one node")
	case b.Edges < 0:
		return errors.New("negative edge count")
	case b.Count < 0:
		return fmt.Errorf("negative graph count %d", b.Count)
	}
	return nil
}

func (h *Histogram) add(b Bin) {
	h.graphs += b.Count
	h.nodes += b.Count * b.Nodes
	h.edges += b.Count * b.Edges
	h.maxNodes = max(h.maxNodes, b.Nodes)
	h.maxEdges = max(h.maxEdges, b.Edges)
}

// HistogramOf returns the histogram of the sizes of individual graphs. It
// fails like NewHistogram, naming the offending graph by its index.
func HistogramOf(sizes []Tuple) (Histogram, error) {
	counts := make(map[Tuple]int)
	for i, s := range sizes {
		if err := checkBin(Bin{Tuple: s, Count: 1}); err != nil {
			return Histogram{}, fmt.Errorf("pack: graph %d %v: %w", i, s, err)
		}
		counts[s]++
	}
	bins := make([]Bin, 0, len(counts))
	for t, c := range counts {
		bins = append(bins, Bin{Tuple: t, Count: c})
	}
	return NewHistogram(bins)
}

// Bins returns the bins, sorted by nodes then edges. The slice is shared:
// do not modify it.
func (h Histogram) Bins() []Bin { return h.bins }

// Graphs returns the number of graphs.
func (h Histogram) Graphs() int { return h.graphs }

// Nodes returns the total number of nodes of all graphs.
func (h Histogram) Nodes() int { return h.nodes }

// Edges returns the total number of edges of all graphs.
func (h Histogram) Edges() int { return h.edges }

// MaxNodes returns the number of nodes of the largest graph by nodes.
func (h Histogram) MaxNodes() int { return h.maxNodes }

// MaxEdges returns the number of edges of the largest graph by edges.
func (h Histogram) MaxEdges() int { return h.maxEdges }

// Len returns the number of distinct sizes.
func (h Histogram) Len() int { return len(h.bins) }
