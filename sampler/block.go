package sampler

import (
	"fmt"

	"gnnrun/graph"
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
// numbering the sources in the order they first appear. ids is the batch's
// scratch map.
func buildBlock(dst []int64, counts []int32, e *edgeList, ids *graph.IDMap, orig bool) (*Block, error) {
	ne := e.len()
	b := &Block{NumDst: len(dst), Nodes: make([]int64, len(dst), len(dst)+ne),
		Src: make([]int32, ne), Dst: make([]int32, ne), EIDs: append([]int64(nil), e.eid...), ETypes: append([]int16(nil), e.etype...)}
	if orig {
		b.OrigEIDs = append([]int64(nil), e.orig...)
	}
	copy(b.Nodes, dst)
	ids.Reset(len(dst) + ne)
	for i, v := range dst {
		if _, had := ids.Insert(v, int32(i)); had {
			return nil, fmt.Errorf("sampler: node %d appears twice among a block's destinations", v)
		}
	}
	k := 0
	for i, c := range counts {
		for range c {
			s, had := ids.Insert(e.src[k], int32(len(b.Nodes)))
			if !had {
				b.Nodes = append(b.Nodes, e.src[k])
			}
			b.Src[k], b.Dst[k] = s, int32(i)
			k++
		}
	}
	if k != ne {
		return nil, fmt.Errorf("sampler: %d edges drawn, the counts of the destinations add up to %d", ne, k)
	}
	return b, nil
}
