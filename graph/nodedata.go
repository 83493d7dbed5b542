package graph

import "sort"

// NodeData is one rank's share of the node data of a distributed graph: for
// each node type t, the rows of the type-wise node IDs [lo, hi) that
// Books[t] gives this rank, for every named array (features, labels, masks,
// original IDs). Books[t] is EvenBook(NumNodes[t], P), so any rank can find
// the owner of a node's row without asking.
type NodeData struct {
	Rank  int
	Books []Book
	// Arrays[t][name] holds Books[t].Size(Rank) rows.
	Arrays []map[string]*Tensor
}

// NewNodeData returns empty node data for the node counts of m on a world of
// parts ranks, as seen by rank.
func NewNodeData(m *Meta, rank, parts int) *NodeData {
	nd := &NodeData{Rank: rank, Books: make([]Book, len(m.NodeTypes)), Arrays: make([]map[string]*Tensor, len(m.NodeTypes))}
	for t, n := range m.NumNodes {
		nd.Books[t] = EvenBook(n, parts)
		nd.Arrays[t] = map[string]*Tensor{}
	}
	return nd
}

// Range returns the type-wise node IDs [lo, hi) of type t held here.
func (nd *NodeData) Range(t int) (lo, hi int64) { return nd.Books[t].Range(nd.Rank) }

// Get returns the named array of node type t, or nil.
func (nd *NodeData) Get(t int, name string) *Tensor {
	if t < 0 || t >= len(nd.Arrays) {
		return nil
	}
	return nd.Arrays[t][name]
}

// Names returns the array names of node type t in sorted order.
func (nd *NodeData) Names(t int) []string {
	var out []string
	for k := range nd.Arrays[t] {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
