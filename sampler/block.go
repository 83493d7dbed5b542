package sampler

import (
	"fmt"
	"slices"
)

// Block is one layer of a mini-batch (DGL's message-flow graph): sampled
// edges from source nodes into destination nodes. Nodes lists the source
// nodes, the NumDst destination nodes first, so the destinations of one
// block are the first nodes of the next block out and a layer's output for
// its destinations is the first NumDst rows of its input. Edge i runs from
// Nodes[Src[i]] to Nodes[Dst[i]]; a destination's edges are contiguous and
// in the order of Nodes.
type Block struct {
	Nodes  []int64 // new global node IDs
	NumDst int
	Src    []int32 // per edge, index into Nodes
	Dst    []int32 // per edge, index into Nodes (< NumDst)
	EIDs   []int64 // per edge, new global edge ID
	ETypes []int16 // per edge, edge type
	// OrigEIDs are the input's type-wise edge IDs (with Options.OrigEIDs).
	OrigEIDs []int64
}

// NumEdges returns the number of sampled edges.
func (b *Block) NumEdges() int { return len(b.Src) }

// buildBlock turns the edges drawn for the destination nodes dst (the
// edges of dst[i] are the counts[i] after those of dst[:i]) into a block,
// numbering the sources in the order they first appear. The block takes
// e's edge IDs, types and original edge IDs as they are (e.src is only
// read). nb is the sampler's scratch.
func buildBlock(dst []int64, counts []int32, e *edgeList, nb *numbering, orig bool) (*Block, error) {
	ne := e.len()
	b := &Block{NumDst: len(dst), Src: make([]int32, ne), Dst: make([]int32, ne)}
	b.EIDs, b.ETypes = taken(e.eid), taken(e.etype)
	if orig {
		b.OrigEIDs = taken(e.orig)
	}
	k := 0
	for i, c := range counts {
		if k+int(c) > ne {
			break
		}
		for j := range int(c) {
			b.Dst[k+j] = int32(i)
		}
		k += int(c)
	}
	if k != ne || k != sum(counts) {
		return nil, fmt.Errorf("sampler: %d edges drawn, the counts of the destinations add up to %d", ne, sum(counts))
	}
	nodes := append(nb.nodes[:0], dst...)
	var twice int
	if nb.dense != nil && nb.dense.covers(dst, e.src) {
		nodes, twice = nb.dense.number(dst, e.src, b.Src, nodes)
	} else if maxID := maxOf(dst, e.src); sortable(len(dst)+ne, maxID) {
		nodes, twice = nb.number(dst, e.src, b.Src, nodes, maxID, nb.dense)
	} else {
		nodes, twice = nb.numberByMap(dst, e.src, b.Src, nodes)
	}
	nb.nodes = nodes
	if twice >= 0 {
		return nil, fmt.Errorf("sampler: node %d appears twice among a block's destinations", dst[twice])
	}
	// A copy of the nodes numbered, not the scratch: a block's sources
	// repeat (two source entries in five are new nodes on R-MAT 20), and an
	// array with room for every entry took several times the memory, zeroed
	// at every block.
	b.Nodes = slices.Clone(nodes)
	return b, nil
}

func sum(counts []int32) int {
	n := 0
	for _, c := range counts {
		n += int(c)
	}
	return n
}

// taken is s as a block holds it: nil when empty, else capped, so that
// appending to it never writes past it.
func taken[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s[:len(s):len(s)]
}
