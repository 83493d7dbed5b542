package pack

import "fmt"

// Shape is the static shape every batch of a packing is padded to. It has
// one node and one graph more than the limits: the dummy node that padding
// edges join, and the dummy graph padding nodes belong to, so a model's
// scatter over graphs never mixes padding into a real graph.
type Shape struct {
	Nodes, Edges, Graphs, Features int
}

// ShapeOf returns the shape of batches of packs under l with features
// values per node.
func ShapeOf(l Limits, features int) Shape {
	return Shape{Nodes: l.Nodes + 1, Edges: l.Edges, Graphs: l.Graphs + 1, Features: features}
}

// Graph is one small graph: Features holds Nodes rows of node features, row
// by row; edge i goes from node Src[i] to node Dst[i], in [0, Nodes).
type Graph struct {
	Nodes    int
	Features []float32
	Src, Dst []int32
}

// Batch is the graphs of one pack padded to a Shape. Real nodes, edges and
// graphs come first, in the order of the graphs; padding fills the rest.
type Batch struct {
	Shape     Shape
	Graphs    int       // real graphs
	Features  []float32 // Shape.Nodes × Shape.Features; padding rows are zero
	Src, Dst  []int32   // Shape.Edges; padding edges join the dummy node to itself
	NodeGraph []int32   // graph of every node; padding nodes are in the dummy graph
	NodeMask  []bool    // real nodes
	EdgeMask  []bool    // real edges
	GraphMask []bool    // real graphs
}

// DummyNode returns the node padding edges join: the last one.
func (s Shape) DummyNode() int32 { return int32(s.Nodes - 1) }

// DummyGraph returns the graph padding nodes belong to: the last one.
func (s Shape) DummyGraph() int32 { return int32(s.Graphs - 1) }

// NewBatch pads graphs to shape s. It fails when they do not fit (more
// nodes, edges or graphs than the shape holds besides the dummies) or a
// graph is malformed (features not nodes × s.Features, an edge outside the
// graph).
func NewBatch(s Shape, graphs []Graph) (*Batch, error) {
	if err := checkBatch(s, graphs); err != nil {
		return nil, err
	}
	b := &Batch{
		Shape: s, Graphs: len(graphs),
		Features:  make([]float32, s.Nodes*s.Features),
		Src:       make([]int32, s.Edges),
		Dst:       make([]int32, s.Edges),
		NodeGraph: make([]int32, s.Nodes),
		NodeMask:  make([]bool, s.Nodes),
		EdgeMask:  make([]bool, s.Edges),
		GraphMask: make([]bool, s.Graphs),
	}
	node, edge := 0, 0
	for gi, g := range graphs {
		copy(b.Features[node*s.Features:], g.Features)
		for i := range g.Src {
			b.Src[edge], b.Dst[edge] = g.Src[i]+int32(node), g.Dst[i]+int32(node)
			b.EdgeMask[edge] = true
			edge++
		}
		for range g.Nodes {
			b.NodeGraph[node], b.NodeMask[node] = int32(gi), true
			node++
		}
		b.GraphMask[gi] = true
	}
	for ; node < s.Nodes; node++ {
		b.NodeGraph[node] = s.DummyGraph()
	}
	for ; edge < s.Edges; edge++ {
		b.Src[edge], b.Dst[edge] = s.DummyNode(), s.DummyNode()
	}
	return b, nil
}

func checkBatch(s Shape, graphs []Graph) error {
	if s.Nodes < 1 || s.Edges < 0 || s.Graphs < 1 || s.Features < 0 {
		return fmt.Errorf("pack: batch: invalid shape %+v", s)
	}
	nodes, edges := 0, 0
	for i, g := range graphs {
		if g.Nodes < 1 {
			return fmt.Errorf("pack: batch: graph %d has no nodes", i)
		}
		if len(g.Features) != g.Nodes*s.Features {
			return fmt.Errorf("pack: batch: graph %d has %d nodes but %d feature values, want %d per node", i, g.Nodes, len(g.Features), s.Features)
		}
		if len(g.Src) != len(g.Dst) {
			return fmt.Errorf("pack: batch: graph %d has %d sources but %d destinations", i, len(g.Src), len(g.Dst))
		}
		for k := range g.Src {
			if g.Src[k] < 0 || int(g.Src[k]) >= g.Nodes || g.Dst[k] < 0 || int(g.Dst[k]) >= g.Nodes {
				return fmt.Errorf("pack: batch: graph %d: edge %d (%d→%d) leaves its %d nodes", i, k, g.Src[k], g.Dst[k], g.Nodes)
			}
		}
		nodes += g.Nodes
		edges += len(g.Src)
	}
	if nodes > s.Nodes-1 || edges > s.Edges || len(graphs) > s.Graphs-1 {
		return fmt.Errorf("pack: batch: %d graphs of %d nodes and %d edges do not fit the shape %d nodes, %d edges, %d graphs (one node and one graph are the padding's)",
			len(graphs), nodes, edges, s.Nodes, s.Edges, s.Graphs)
	}
	return nil
}

// Unbatch returns the real graphs of b, as NewBatch received them.
func (b *Batch) Unbatch() []Graph {
	out := make([]Graph, b.Graphs)
	first := make([]int32, b.Graphs) // first node of every graph
	for v := len(b.NodeMask) - 1; v >= 0; v-- {
		if b.NodeMask[v] {
			g := b.NodeGraph[v]
			out[g].Nodes++
			first[g] = int32(v)
		}
	}
	f := b.Shape.Features
	for g := range out {
		lo := int(first[g]) * f
		out[g].Features = append([]float32(nil), b.Features[lo:lo+out[g].Nodes*f]...)
	}
	for e, real := range b.EdgeMask {
		if real {
			g := b.NodeGraph[b.Src[e]]
			out[g].Src = append(out[g].Src, b.Src[e]-first[g])
			out[g].Dst = append(out[g].Dst, b.Dst[e]-first[g])
		}
	}
	return out
}
