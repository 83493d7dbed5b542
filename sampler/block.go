package sampler

import "fmt"

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
func buildBlock(dst []int64, counts []int32, e *edgeList, ids *idMap, orig bool) (*Block, error) {
	ne := e.len()
	b := &Block{NumDst: len(dst), Nodes: make([]int64, len(dst), len(dst)+ne),
		Src: make([]int32, ne), Dst: make([]int32, ne), EIDs: append([]int64(nil), e.eid...), ETypes: append([]int16(nil), e.etype...)}
	if orig {
		b.OrigEIDs = append([]int64(nil), e.orig...)
	}
	copy(b.Nodes, dst)
	ids.reset(len(dst) + ne)
	for i, v := range dst {
		if _, had := ids.insert(v, int32(i)); had {
			return nil, fmt.Errorf("sampler: node %d appears twice among a block's destinations", v)
		}
	}
	k := 0
	for i, c := range counts {
		for range c {
			s, had := ids.insert(e.src[k], int32(len(b.Nodes)))
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

// idMap maps node IDs (>= 0) to int32 indices: open addressing with linear
// probing over entries that hold key and value together (one cache line a
// probe), sized by the batch, reused batch after batch. A Go map costs
// about three times as much per insert here.
type idMap struct {
	slots []idSlot
	shift uint
	n     int
}

// idSlot is one entry: key+1 (0 marks an empty slot) and its value.
type idSlot struct {
	key int64
	val int32
}

// reset empties the map for about expect keys.
func (m *idMap) reset(expect int) {
	size := 16
	for size < 2*expect {
		size *= 2
	}
	if len(m.slots) < size {
		m.slots = make([]idSlot, size)
	} else {
		clear(m.slots)
	}
	m.shift = uint(64 - log2(len(m.slots)))
	m.n = 0
}

func log2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

// insert maps k to v unless k is mapped already; it returns k's value and
// whether k was there before.
func (m *idMap) insert(k int64, v int32) (int32, bool) {
	if 2*(m.n+1) > len(m.slots) {
		m.grow()
	}
	mask := len(m.slots) - 1
	for i := int(uint64(k+1) * 0x9E3779B97F4A7C15 >> m.shift); ; i = (i + 1) & mask {
		e := &m.slots[i]
		switch e.key {
		case 0:
			e.key, e.val = k+1, v
			m.n++
			return v, false
		case k + 1:
			return e.val, true
		}
	}
}

// get returns k's value and whether k is mapped.
func (m *idMap) get(k int64) (int32, bool) {
	mask := len(m.slots) - 1
	for i := int(uint64(k+1) * 0x9E3779B97F4A7C15 >> m.shift); ; i = (i + 1) & mask {
		switch e := m.slots[i]; e.key {
		case 0:
			return 0, false
		case k + 1:
			return e.val, true
		}
	}
}

func (m *idMap) grow() {
	old := m.slots
	m.slots = nil
	m.reset(len(old))
	for _, e := range old {
		if e.key != 0 {
			m.insert(e.key-1, e.val)
		}
	}
}
