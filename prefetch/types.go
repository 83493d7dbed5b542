package prefetch

import (
	"fmt"
	"slices"

	"gnnrun/cuda"
	"gnnrun/graph"
	"gnnrun/shard"
)

// Types describes a graph's node and edge types as the batches carry
// them.
type Types struct {
	NodeTypes []string
	EdgeTypes []graph.EdgeType
	// NumNodes is, per node type, how many nodes it has: a node's type ID
	// (Batch.RowTypeIDs) is below it.
	NumNodes []int64
	// FeatureShapes is, per node type, the shape of one of its feature
	// rows; nil for a type without the feature array (its rows in the
	// device buffers are zero).
	FeatureShapes [][]int64
}

// rowLayout is the layout of the device buffers' rows: every node type's
// feature rows in one dtype, a narrower type's row at the start of the
// widest type's, the rest zero.
type rowLayout struct {
	dtype     graph.DType
	shape     []int64   // of one device row
	bytes     int       // of one device row
	shapes    [][]int64 // per node type: its rows' shape, nil without features
	featured  []bool    // per node type: it has the feature array
	anyBlank  bool      // some node type has no feature array
	typeBytes []int     // per node type: the bytes of its own row (0 without)
}

// newRowLayout lays out the rows of node types whose feature rows have
// the given dtypes and shapes (nil shape: the type has no features). The
// types must share one dtype; rows of different shapes must be vectors,
// padded to the longest. It fails naming the types that differ.
func newRowLayout(name string, types []string, dtypes []graph.DType, shapes [][]int64) (rowLayout, error) {
	lay := rowLayout{shapes: shapes, featured: make([]bool, len(types)), typeBytes: make([]int, len(types))}
	first := -1
	for t, sh := range shapes {
		if sh == nil {
			lay.anyBlank = true
			continue
		}
		lay.featured[t] = true
		n := int64(1)
		for _, d := range sh {
			n *= d
		}
		lay.typeBytes[t] = int(n) * dtypes[t].Size()
		if first < 0 {
			first, lay.dtype, lay.shape = t, dtypes[t], slices.Clone(sh)
			continue
		}
		if dtypes[t] != lay.dtype {
			return rowLayout{}, fmt.Errorf("prefetch: node array %q is %s for %s but %s for %s: a batch's feature rows have one dtype",
				name, lay.dtype, types[first], dtypes[t], types[t])
		}
		if slices.Equal(sh, lay.shape) {
			continue
		}
		if len(sh) != 1 || len(lay.shape) != 1 {
			return rowLayout{}, fmt.Errorf("prefetch: node array %q has rows of %v for %s and %v for %s: rows of different shapes must be vectors (padded to the longest)",
				name, shapes[first], types[first], sh, types[t])
		}
		lay.shape[0] = max(lay.shape[0], sh[0])
	}
	if first < 0 {
		return rowLayout{}, fmt.Errorf("prefetch: no node type has the node array %q to gather", name)
	}
	lay.bytes = slices.Max(lay.typeBytes)
	return lay, nil
}

// typeIndex numbers the nodes of every type 0, 1, 2, ... in new-ID order
// (partition by partition): a node's type ID, stable for the run and
// computed from the partition book's (partition, type) ranges alone, with
// no communication.
type typeIndex struct {
	book  *shard.Book
	first [][]int64 // per partition, per type: the type ID of its first node of the type
	count []int64   // per type: its nodes
}

func newTypeIndex(b *shard.Book, ntypes int) *typeIndex {
	x := &typeIndex{book: b, count: make([]int64, ntypes)}
	for p := range b.NumParts() {
		x.first = append(x.first, slices.Clone(x.count))
		for t := range ntypes {
			lo, hi := b.TypeRange(p, t)
			x.count[t] += hi - lo
		}
	}
	return x
}

// of returns node v's type and type ID.
func (x *typeIndex) of(v int64) (int16, int64) {
	p, t, row := x.book.TypeRow(v)
	return int16(t), x.first[p][t] + row
}

// rowTypes returns the node type and type ID of every row of a device
// buffer holding nodes (by row).
func (x *typeIndex) rowTypes(nodes []int64) ([]int16, []int64) {
	types, ids := make([]int16, len(nodes)), make([]int64, len(nodes))
	for r, v := range nodes {
		types[r], ids[r] = x.of(v)
	}
	return types, ids
}

// zeroRows is one zero row on the device that the rows of featureless
// nodes are copied from, on the device: nothing crosses from the host.
type zeroRows struct {
	buf cuda.Buffer
	idx []int32 // all 0: the source row of each copy
}

func newZeroRows(dev cuda.Device, st cuda.Stream, rowBytes int) (*zeroRows, error) {
	b, err := dev.Alloc(int64(rowBytes))
	if err != nil {
		return nil, fmt.Errorf("prefetch: a zero row: %w", err)
	}
	if err := st.CopyToDevice(b, 0, make([]byte, rowBytes)); err == nil {
		err = st.Sync()
	}
	if err != nil {
		b.Free()
		return nil, err
	}
	return &zeroRows{buf: b}, nil
}

// rows returns n source rows, all the zero row.
func (z *zeroRows) rows(n int) []int32 {
	if len(z.idx) < n {
		z.idx = make([]int32, n)
	}
	return z.idx[:n]
}

func (z *zeroRows) free() error {
	if z == nil || z.buf == nil {
		return nil
	}
	err := z.buf.Free()
	z.buf = nil
	return err
}

// zeroFeatureless moves the input nodes of featureless types that the
// update would copy from the host to its zero rows, and returns how many
// input nodes are of featureless types (those held already keep their
// zero rows).
func (lay *rowLayout) zeroFeatureless(up *Update, nodes []int64, book *shard.Book) int {
	if !lay.anyBlank {
		return 0
	}
	blank := 0
	for _, v := range nodes {
		if !lay.featured[book.NodeType(v)] {
			blank++
		}
	}
	fetch, slots := up.Fetch[:0], up.FetchSlots[:0]
	for k, i := range up.Fetch {
		if lay.featured[book.NodeType(nodes[i])] {
			fetch, slots = append(fetch, i), append(slots, up.FetchSlots[k])
		} else {
			up.ZeroSlots = append(up.ZeroSlots, up.FetchSlots[k])
		}
	}
	up.Fetch, up.FetchSlots = fetch, slots
	up.Zero, up.Fetched = len(up.ZeroSlots), len(fetch)
	return blank
}
