package graph

import (
	"fmt"
	"strings"
)

// EdgeType is a canonical edge type: source node type, relation, destination
// node type, written "src:rel:dst".
type EdgeType struct {
	Src, Rel, Dst string
}

// String returns the canonical "src:rel:dst" form.
func (e EdgeType) String() string { return e.Src + ":" + e.Rel + ":" + e.Dst }

// ParseEdgeType parses "src:rel:dst"; it fails unless there are exactly
// three non-empty fields.
func ParseEdgeType(s string) (EdgeType, error) {
	f := strings.Split(s, ":")
	if len(f) != 3 || f[0] == "" || f[1] == "" || f[2] == "" {
		return EdgeType{}, fmt.Errorf("graph: edge type %q is not of the form src:rel:dst", s)
	}
	return EdgeType{f[0], f[1], f[2]}, nil
}

// Meta is what every rank knows of a graph: its name, node and edge types,
// and how many nodes and edges each type has. It is small: O(types).
type Meta struct {
	Name      string
	NodeTypes []string
	NumNodes  []int64 // per node type
	EdgeTypes []EdgeType
	NumEdges  []int64 // per edge type
}

// TotalNodes returns the number of nodes of all types.
func (m *Meta) TotalNodes() int64 { return sum(m.NumNodes) }

// TotalEdges returns the number of edges of all types.
func (m *Meta) TotalEdges() int64 { return sum(m.NumEdges) }

// NodeOffset returns the homogeneous ID of type t's first node.
func (m *Meta) NodeOffset(t int) int64 { return sum(m.NumNodes[:t]) }

// EdgeOffset returns the homogeneous ID of edge type t's first edge.
func (m *Meta) EdgeOffset(t int) int64 { return sum(m.NumEdges[:t]) }

// NodeType returns the index of the named node type, or -1.
func (m *Meta) NodeType(name string) int {
	for i, n := range m.NodeTypes {
		if n == name {
			return i
		}
	}
	return -1
}

// NodeTypeOf returns the type of homogeneous node ID id and its type-wise ID.
func (m *Meta) NodeTypeOf(id int64) (t int, local int64) {
	for t, n := range m.NumNodes {
		if id < n {
			return t, id
		}
		id -= n
	}
	return -1, id
}

// Homogeneous reports whether the graph has one node type and one edge type.
func (m *Meta) Homogeneous() bool { return len(m.NodeTypes) == 1 && len(m.EdgeTypes) <= 1 }

// Validate checks that the types and counts agree.
func (m *Meta) Validate() error {
	if len(m.NodeTypes) == 0 {
		return fmt.Errorf("graph %q: no node types", m.Name)
	}
	if len(m.NumNodes) != len(m.NodeTypes) || len(m.NumEdges) != len(m.EdgeTypes) {
		return fmt.Errorf("graph %q: %d node types with %d counts, %d edge types with %d counts", m.Name, len(m.NodeTypes), len(m.NumNodes), len(m.EdgeTypes), len(m.NumEdges))
	}
	seen := map[string]bool{}
	for i, t := range m.NodeTypes {
		if seen[t] {
			return fmt.Errorf("graph %q: node type %q appears twice", m.Name, t)
		}
		seen[t] = true
		if m.NumNodes[i] < 0 {
			return fmt.Errorf("graph %q: node type %q has %d nodes", m.Name, t, m.NumNodes[i])
		}
	}
	for i, e := range m.EdgeTypes {
		if !seen[e.Src] || !seen[e.Dst] {
			return fmt.Errorf("graph %q: edge type %s names a node type that does not exist", m.Name, e)
		}
		if m.NumEdges[i] < 0 {
			return fmt.Errorf("graph %q: edge type %s has %d edges", m.Name, e, m.NumEdges[i])
		}
	}
	return nil
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}
