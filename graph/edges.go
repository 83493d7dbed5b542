package graph

// Edges is one rank's share of a distributed edge list. Src and Dst are
// homogeneous node IDs; the optional columns are nil or as long as Src.
type Edges struct {
	Src, Dst []int64
	// Type is the edge type index of each edge (nil: all of type 0).
	Type []int16
	// ID is each edge's type-wise ID: its position among the edges of its
	// type in the input (nil: not tracked).
	ID []int64
	// Weight is each edge's weight (nil: all 1).
	Weight []float32
}

// Len returns the number of edges held.
func (e *Edges) Len() int { return len(e.Src) }

// TypeOf returns the edge type of edge i.
func (e *Edges) TypeOf(i int) int16 {
	if e.Type == nil {
		return 0
	}
	return e.Type[i]
}
