package pack

import "fmt"

// DefaultMaxGraphs is the cap on graphs per pack the paper uses.
const DefaultMaxGraphs = 256

// Limits is the static shape of a pack: at most Nodes nodes, Edges edges and
// Graphs graphs.
type Limits struct {
	Nodes, Edges, Graphs int
}

// String returns "n nodes, e edges, g graphs".
func (l Limits) String() string {
	return fmt.Sprintf("%d nodes, %d edges, %d graphs", l.Nodes, l.Edges, l.Graphs)
}

// DefaultLimits returns l with its zero limits filled in from h: nodes and
// edges per pack those of the largest graph (at least one edge), graphs per
// pack min(nodes, edges), the published code's "max".
func DefaultLimits(h Histogram, l Limits) Limits {
	if l.Nodes == 0 {
		l.Nodes = h.MaxNodes()
	}
	if l.Edges == 0 {
		l.Edges = max(h.MaxEdges(), 1)
	}
	if l.Graphs == 0 {
		l.Graphs = min(l.Nodes, l.Edges)
	}
	return l
}

// check reports an error unless every limit is positive.
func (l Limits) check() error {
	if l.Nodes < 1 || l.Edges < 1 || l.Graphs < 1 {
		return fmt.Errorf("pack: limits must be at least 1 node, 1 edge and 1 graph per pack, got %v", l)
	}
	return nil
}

// fits reports whether a graph of size t fits in an empty pack.
func (l Limits) fits(t Tuple) bool { return t.Nodes <= l.Nodes && t.Edges <= l.Edges }

// checkFits fails, naming the bin, when some graph of h is larger than l.
func (l Limits) checkFits(h Histogram) error {
	for _, b := range h.bins {
		if !l.fits(b.Tuple) {
			return fmt.Errorf("pack: %d graph(s) of %d nodes and %d edges do not fit in a pack of %d nodes and %d edges",
				b.Count, b.Nodes, b.Edges, l.Nodes, l.Edges)
		}
	}
	return nil
}

// CheckSizes fails, naming the first graph by its index and size, when a
// graph of sizes does not fit in a pack of limits l.
func CheckSizes(sizes []Tuple, l Limits) error {
	for i, s := range sizes {
		if !l.fits(s) {
			return fmt.Errorf("pack: graph %d has %d nodes and %d edges, more than the pack limits of %d nodes and %d edges",
				i, s.Nodes, s.Edges, l.Nodes, l.Edges)
		}
	}
	return nil
}

// LowerBound returns max(⌈N/limit nodes⌉, ⌈E/limit edges⌉, ⌈G/limit graphs⌉)
// for the N nodes, E edges and G graphs of h: no packing under l uses fewer
// packs.
func LowerBound(h Histogram, l Limits) int {
	return max(ceilDiv(h.nodes, l.Nodes), ceilDiv(h.edges, l.Edges), ceilDiv(h.graphs, l.Graphs))
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
