package pack_test

import (
	"fmt"
	"strings"

	"gnnrun/pack"
)

// Pack a histogram with both packers and compare them.
func Example() {
	h, err := pack.ReadHistogramCSV(strings.NewReader(`nodes,edges,count
20,40,30
12,26,50
7,12,40
3,4,25
`), "example.csv")
	if err != nil {
		panic(err)
	}
	for _, algo := range []pack.Algo{pack.Reference, pack.Ours} {
		p, err := pack.Pack(h, pack.MaxNodes(40), pack.MaxEdges(80), pack.WithAlgo(algo))
		if err != nil {
			panic(err)
		}
		ef := p.Efficiency()
		fmt.Printf("%-9v %d packs (lower bound %d), nodes %.1f%%, edges %.1f%%\n",
			algo, ef.Packs, pack.LowerBound(h, p.Limits), ef.Nodes, ef.Edges)
	}
	// Output:
	// reference 50 packs (lower bound 39), nodes 77.8%, edges 77.0%
	// ours      40 packs (lower bound 39), nodes 97.2%, edges 96.2%
}

// Assign graphs to the packs of one epoch and pad one pack to its static
// shape.
func ExampleAssign() {
	sizes := []pack.Tuple{{Nodes: 2, Edges: 2}, {Nodes: 1, Edges: 0}, {Nodes: 2, Edges: 2}}
	h, _ := pack.HistogramOf(sizes)
	p, _ := pack.Pack(h, pack.MaxNodes(3), pack.MaxEdges(4))
	a, _ := pack.Assign(p, sizes, 1, 0)
	fmt.Println(a.Packs(), "packs")

	graphs := []pack.Graph{ // the graphs of a pack, with one feature per node
		{Nodes: 2, Features: []float32{1, 2}, Src: []int32{0, 1}, Dst: []int32{1, 0}},
		{Nodes: 1, Features: []float32{3}},
	}
	b, _ := pack.NewBatch(pack.ShapeOf(p.Limits, 1), graphs)
	fmt.Println("src", b.Src, "dst", b.Dst)
	fmt.Println("node graph", b.NodeGraph)
	// Output:
	// 2 packs
	// src [0 1 3 3] dst [1 0 3 3]
	// node graph [0 0 1 256]
}
