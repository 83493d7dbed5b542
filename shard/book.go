package shard

import (
	"fmt"

	"gnnrun/graph"
)

// Book is the partition book: where every global node and edge ID of a
// partitioned graph lives. New IDs are partition-major, then type, so each
// (partition, type) pair owns one contiguous range; the book keeps the K*T
// range bounds and finds an ID's range by binary search. It costs
// O(K*types), never O(IDs).
type Book struct {
	parts, ntypes, etypes int
	nodes                 graph.Book // segment p*ntypes+t
	edges                 graph.Book // segment p*etypes+t
	partNodes             graph.Book // segment p: Part without a division by ntypes
}

// NewBook returns the book of nodeCounts[p][t] nodes and edgeCounts[p][t]
// edges of type t in partition p.
func NewBook(nodeCounts, edgeCounts [][]int64) *Book {
	b := &Book{parts: len(nodeCounts)}
	var nc, ec []int64
	for p := range nodeCounts {
		b.ntypes = len(nodeCounts[p])
		nc = append(nc, nodeCounts[p]...)
	}
	for p := range edgeCounts {
		b.etypes = len(edgeCounts[p])
		ec = append(ec, edgeCounts[p]...)
	}
	b.nodes = graph.BookFromCounts(nc)
	b.edges = graph.BookFromCounts(ec)
	b.partNodes = graph.Book{Bounds: make([]int64, b.parts+1)}
	for p := range b.parts {
		b.partNodes.Bounds[p+1] = b.nodes.Bounds[(p+1)*b.ntypes]
	}
	return b
}

// NumParts returns the number of partitions K.
func (b *Book) NumParts() int { return b.parts }

// NumNodes returns the number of nodes of all partitions.
func (b *Book) NumNodes() int64 { return b.nodes.Total() }

// NumEdges returns the number of edges of all partitions.
func (b *Book) NumEdges() int64 { return b.edges.Total() }

// PartRange returns the new node IDs [lo, hi) of partition p: its inner
// nodes, whose local IDs are 0..hi-lo-1 in the same order.
func (b *Book) PartRange(p int) (lo, hi int64) {
	return b.nodes.Bounds[p*b.ntypes], b.nodes.Bounds[(p+1)*b.ntypes]
}

// TypeRange returns the new IDs [lo, hi) of the nodes of type t in
// partition p.
func (b *Book) TypeRange(p, t int) (lo, hi int64) { return b.nodes.Range(p*b.ntypes + t) }

// EdgePartRange returns the new edge IDs [lo, hi) of partition p.
func (b *Book) EdgePartRange(p int) (lo, hi int64) {
	return b.edges.Bounds[p*b.etypes], b.edges.Bounds[(p+1)*b.etypes]
}

// EdgeTypeRange returns the new IDs [lo, hi) of the edges of type t in
// partition p.
func (b *Book) EdgeTypeRange(p, t int) (lo, hi int64) { return b.edges.Range(p*b.etypes + t) }

// checkNode panics on an ID outside the book: callers validate user input
// first, so this is a bug.
func (b *Book) checkNode(id int64) {
	if id < 0 || id >= b.nodes.Total() {
		panic(fmt.Sprintf("shard: node ID %d outside [0,%d)", id, b.nodes.Total()))
	}
}

// Part returns the partition that owns node id.
func (b *Book) Part(id int64) int {
	b.checkNode(id)
	return b.partNodes.Owner(id)
}

// Parts puts the partition of node ids[i] in parts[i] (as long as ids),
// or fails on a node outside the graph.
func (b *Book) Parts(ids []int64, parts []int32) error {
	if i := b.partNodes.Owners(ids, parts); i >= 0 {
		return fmt.Errorf("node %d outside the graph's [0, %d)", ids[i], b.NumNodes())
	}
	return nil
}

// Locate returns the partition of node id and its local ID there.
func (b *Book) Locate(id int64) (part int, local int64) {
	p := b.Part(id)
	return p, id - b.nodes.Bounds[p*b.ntypes]
}

// TypeRow returns the partition of node id, its node type, and its row
// among the nodes of that type in the partition: its row in the
// partition's node_feat/<ntype>/*.npy arrays.
func (b *Book) TypeRow(id int64) (part, ntype int, row int64) {
	b.checkNode(id)
	s := b.nodes.Owner(id)
	return s / b.ntypes, s % b.ntypes, id - b.nodes.Bounds[s]
}

// NodeType returns the node type of node id.
func (b *Book) NodeType(id int64) int {
	_, t, _ := b.TypeRow(id)
	return t
}

// EdgeLocate returns the partition of edge id, its edge type, and its row
// among the edges of that type in the partition.
func (b *Book) EdgeLocate(id int64) (part, etype int, row int64) {
	if id < 0 || id >= b.edges.Total() {
		panic(fmt.Sprintf("shard: edge ID %d outside [0,%d)", id, b.edges.Total()))
	}
	s := b.edges.Owner(id)
	return s / b.etypes, s % b.etypes, id - b.edges.Bounds[s]
}
