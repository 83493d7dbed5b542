package cuda

import (
	"fmt"
	"math"
	"time"
)

// CSC is one partition's in-edges as GPUGraph samples them (the arrays of
// a served shard.Partition, and the sampler's typed indptr).
type CSC struct {
	// TypedIndptr holds EdgeTypes entries per inner node and one more:
	// the in-edges of inner node v of edge type t are the CSC positions
	// [TypedIndptr[v*EdgeTypes+t], TypedIndptr[v*EdgeTypes+t+1]). With one
	// edge type it is the partition's indptr.
	TypedIndptr []int64
	EdgeTypes   int
	// Indices32 or Indices64 (one of them) hold the local ID of each CSC
	// position's source, below len(Local2Global) (a served partition's
	// are: shard checks them at open).
	Indices32 []int32
	Indices64 []int64
	// Local ID l < NumInner is global ID Lo+l; the others are
	// Local2Global[l].
	NumInner, Lo int64
	Local2Global []int64
}

// SampledBlock is one sampled layer as the Go sampler's Block numbers it:
// Nodes lists the NumDst destinations (the frontier) first, then every
// source not among them in the order of its first edge; edge i runs from
// Nodes[Src[i]] to Nodes[Dst[i]], a destination's edges contiguous and in
// frontier order. Pos[i] is edge i's CSC position, from which its edge ID
// and type are read.
type SampledBlock struct {
	Nodes    []int64
	NumDst   int
	Src, Dst []int32
	Pos      []int64
}

// LayerTimes is where a GPUGraph's SampleLayer calls spent their time,
// summed over the calls: drawing the edges (until their count is back on
// the host), numbering the block's nodes (until its size is back), and
// copying the block to the host. Each phase ends in a wait for the
// stream, so the three add up to the calls' time.
type LayerTimes struct {
	Draw, Compact, CopyBack time.Duration
	BytesBack               int64 // the blocks' bytes copied to the host
}

// check says what is wrong with c's array lengths.
func (c *CSC) check() error {
	e := int64(c.EdgeTypes)
	switch {
	case c.EdgeTypes < 1 || c.EdgeTypes > math.MaxUint16+1:
		return fmt.Errorf("cuda: a CSC of %d edge types", c.EdgeTypes)
	case c.NumInner < 0 || int64(len(c.TypedIndptr)) != c.NumInner*e+1:
		return fmt.Errorf("cuda: a typed indptr of %d entries for %d inner nodes of %d edge types (want %d)", len(c.TypedIndptr), c.NumInner, e, c.NumInner*e+1)
	case (c.Indices32 == nil) == (c.Indices64 == nil):
		return fmt.Errorf("cuda: a CSC needs its indices as int32 or as int64 (one of them)")
	case int64(len(c.Local2Global)) < c.NumInner:
		return fmt.Errorf("cuda: %d local nodes for %d inner nodes", len(c.Local2Global), c.NumInner)
	}
	edges := c.TypedIndptr[len(c.TypedIndptr)-1]
	if n := int64(max(len(c.Indices32), len(c.Indices64))); n != edges {
		return fmt.Errorf("cuda: %d indices for the indptr's %d edges", n, edges)
	}
	return nil
}

// checkLayer says what is wrong with a layer's frontier and fanouts over
// c: every frontier node must be an inner node, and fanouts one per edge
// type, each -1 (all in-edges), 0 (none) or positive.
func (c *CSC) checkLayer(frontier []int64, fanouts []int) error {
	if len(fanouts) != c.EdgeTypes {
		return fmt.Errorf("cuda: %d fanouts for %d edge types", len(fanouts), c.EdgeTypes)
	}
	for t, f := range fanouts {
		if f < -1 || f > math.MaxInt32 {
			return fmt.Errorf("cuda: fanout %d of edge type %d: each must be -1 (all in-edges), 0 (none) or positive", f, t)
		}
	}
	for _, v := range frontier {
		if v < c.Lo || v >= c.Lo+c.NumInner {
			return fmt.Errorf("cuda: frontier node %d is not among the partition's inner nodes [%d, %d)", v, c.Lo, c.Lo+c.NumInner)
		}
	}
	return nil
}
