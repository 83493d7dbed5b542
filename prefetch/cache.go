package prefetch

import (
	"fmt"

	"gnnrun/graph"
)

// Slots lists the node held by each row of a device buffer, by row.
type Slots []int64

// Update turns a device buffer holding one batch's input rows into the
// next batch's: which rows stay, which move, and which are copied in, and
// where every input node of the new batch then sits.
//
// The new batch's input nodes are classified against the buffer's: a node
// already held (shared) keeps its row; the others (non-shared) take the
// rows of the nodes that left, in ascending row order, then rows past the
// old end when the batch is larger. When the batch is smaller the buffer
// shrinks to it: shared nodes held past the new end move down into free
// rows first. Every row below Size is then used exactly once.
type Update struct {
	// Size is the buffer's rows after the update: the new batch's input
	// nodes.
	Size int
	// SlotOf[i] is the row of input node i.
	SlotOf []int32
	// After is the node of every row after the update.
	After Slots
	// Rows moved within the buffer: row MovesFrom[k] to MovesTo[k].
	MovesFrom, MovesTo []int32
	// Rows copied from the hot cache: its row HotRows[k] into HotSlots[k].
	HotSlots, HotRows []int32
	// Rows copied from the host: the row of input node Fetch[k] into
	// FetchSlots[k], in ascending slot order.
	Fetch, FetchSlots []int32
	// Input nodes kept from before, copied from the hot cache, copied from
	// the host; they add up to Size.
	Reused, Hot, Fetched int
}

// classifier keeps the scratch memory of Classify between batches; its
// memory is O(batch), never O(graph).
type classifier struct {
	index graph.IDMap // inverted index: node -> row of the old buffer
	kept  []bool      // per old row: its node is in the new batch
	moves []int32     // input nodes held past the new end
	news  []int32     // input nodes the buffer does not hold
}

// notHeld marks, in the index, a new node already seen in the batch.
const notHeld = -1

func newClassifier() *classifier { return &classifier{} }

// Classify plans the update from a buffer holding prev (by row) to the
// input nodes nodes, which must be distinct. hot, when set, says where a
// node's row is in the hot cache; a node not held is copied from there
// when it is, else from the host. It is a pure function of its arguments
// (the classifier only lends scratch memory).
func (c *classifier) Classify(prev Slots, nodes []int64, hot func(int64) (int32, bool)) (*Update, error) {
	size := len(nodes)
	up := &Update{Size: size, SlotOf: make([]int32, size), After: make(Slots, size)}
	c.index.Reset(len(prev) + size)
	for r, v := range prev {
		c.index.Insert(v, int32(r))
	}
	c.kept = append(c.kept[:0], make([]bool, len(prev))...)
	c.moves, c.news = c.moves[:0], c.news[:0]
	for i, v := range nodes {
		r, held := c.index.Insert(v, notHeld)
		switch {
		case !held:
			c.news = append(c.news, int32(i))
			continue
		case r == notHeld || c.kept[r]:
			return nil, fmt.Errorf("prefetch: input node %d appears twice in a batch", v)
		}
		c.kept[r] = true
		if int(r) < size {
			up.SlotOf[i] = r
			up.After[r] = v
		} else {
			c.moves = append(c.moves, int32(i))
		}
	}
	up.Reused = size - len(c.news)
	// The free rows below the new end, ascending: rows of departed nodes,
	// then rows past the old end. Moves take the first ones.
	free := 0
	nextFree := func() int32 {
		for free < len(prev) && c.kept[free] {
			free++
		}
		free++
		return int32(free - 1)
	}
	for _, i := range c.moves {
		to := nextFree()
		from, _ := c.index.Get(nodes[i])
		up.MovesFrom = append(up.MovesFrom, from)
		up.MovesTo = append(up.MovesTo, to)
		up.SlotOf[i], up.After[to] = to, nodes[i]
	}
	for _, i := range c.news {
		to := nextFree()
		v := nodes[i]
		up.SlotOf[i], up.After[to] = to, v
		if hot != nil {
			if hr, ok := hot(v); ok {
				up.HotSlots, up.HotRows = append(up.HotSlots, to), append(up.HotRows, hr)
				continue
			}
		}
		up.Fetch, up.FetchSlots = append(up.Fetch, i), append(up.FetchSlots, to)
	}
	up.Hot, up.Fetched = len(up.HotSlots), len(up.Fetch)
	return up, nil
}
