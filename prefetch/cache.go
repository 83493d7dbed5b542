package prefetch

import (
	"fmt"
	"slices"

	"gnnrun/graph"
)

// Slots lists the node held by each row of a device buffer, by row.
type Slots []int64

// Update turns a device buffer holding one batch's input rows into the
// next batch's: which rows stay, which move, and which are copied in, and
// where every input node of the new batch then sits.
//
// The first Pinned input nodes (the outermost block's destinations) take
// rows 0..Pinned-1 in input order, the layout DGL's and PyG's layers
// expect (x[:num_dst] are the destinations' rows): a pinned node already
// held elsewhere moves there on the device, any other is copied in. The
// other input nodes are classified against the buffer: a node already
// held (shared) at a row in [Pinned, Size) keeps it; a shared node held
// below Pinned (its row now a pinned node's) or past the new end moves
// into a free row; a node not held (non-shared) is copied in. Free rows
// are those of [Pinned, Size) that no kept node holds, taken in
// ascending order, moves first. Every row below Size is then used
// exactly once.
type Update struct {
	// Size is the buffer's rows after the update: the new batch's input
	// nodes.
	Size int
	// Pinned is how many input nodes sit at the row of their own index.
	Pinned int
	// SlotOf[i] is the row of input node i.
	SlotOf []int32
	// After is the node of every row after the update.
	After Slots
	// Rows moved within the buffer: row MovesFrom[k] to MovesTo[k], all
	// read before any is written. The first MovesThrough of them read rows
	// that other moves write (block 0's destinations swapping places, say),
	// so they must go through scratch memory; the others read rows no move
	// writes and may move directly once those are read.
	MovesFrom, MovesTo []int32
	MovesThrough       int
	// Rows copied from the hot cache: its row HotRows[k] into HotSlots[k].
	HotSlots, HotRows []int32
	// Rows copied from the host: the row of input node Fetch[k] into
	// FetchSlots[k].
	Fetch, FetchSlots []int32
	// Rows of input nodes of types without features that were not held:
	// set to zero on the device (Classify leaves them in Fetch; the
	// loader moves them here).
	ZeroSlots []int32
	// Input nodes kept from before (in place or moved), copied from the
	// hot cache, copied from the host, zeroed; they add up to Size.
	Reused, Hot, Fetched, Zero int
}

// classifier keeps the scratch memory of Classify between batches; its
// memory is O(batch), never O(graph).
type classifier struct {
	index graph.IDMap // inverted index: node -> row of the old buffer
	kept  []bool      // per old row: its node is in the new batch
	taken []bool      // per new row below Size: a node already has it
	moved []bool      // per row: a move writes it (see throughFirst)
	held  []int32     // per input node: its old row, or notHeld
	later []int32     // unpinned input nodes without a row yet: moves, then new ones
	news  []int32     // input nodes not held, in input order
	sink  int64       // keeps IDMap.Touch's reads
}

// touchChunk is how many keys Classify touches in the index (IDMap.Touch)
// before inserting them.
const touchChunk = 256

// notHeld marks, in the index, a new node already seen in the batch.
const notHeld = -1

func newClassifier() *classifier { return &classifier{} }

// Classify plans the update from a buffer holding prev (by row) to the
// input nodes nodes, which must be distinct, with the first pin of them at
// the rows of their index. hot, when set, says where a node's row is in
// the hot cache; a node not held is copied from there when it is, else
// from the host. It is a pure function of its arguments (the classifier
// only lends scratch memory).
func (c *classifier) Classify(prev Slots, nodes []int64, pin int, hot func(int64) (int32, bool)) (*Update, error) {
	size := len(nodes)
	if pin < 0 || pin > size {
		return nil, fmt.Errorf("prefetch: %d pinned rows of a batch of %d input nodes", pin, size)
	}
	up := &Update{Size: size, Pinned: pin, SlotOf: make([]int32, size), After: make(Slots, size)}
	// The index outgrows the cache (4 MiB for batches of 49 k input
	// nodes), and the other stages' copies keep evicting it: every chunk
	// of keys has its slots read first in a loop of independent loads
	// (IDMap.Touch), so the inserts after find them in the cache. R-MAT
	// 20, one rank, 128 batches, three alternated pairs: Classify 1.41-1.56
	// -> 0.93-1.08 s, the gather stage 3.9-4.3 -> 3.4 s, 31.4-34.7 ->
	// 27.2-27.6 ms a batch.
	c.index.Reset(len(prev) + size)
	for lo := 0; lo < len(prev); lo += touchChunk {
		hi := min(lo+touchChunk, len(prev))
		c.sink += c.index.Touch(prev[lo:hi])
		for r, v := range prev[lo:hi] {
			c.index.Insert(v, int32(lo+r))
		}
	}
	c.kept = resetBools(c.kept, len(prev))
	c.taken = resetBools(c.taken, size)
	c.later = c.later[:0]
	c.held = slices.Grow(c.held[:0], size)[:size] // every entry is set below
	held, news := c.held, c.news[:0]
	for i, v := range nodes {
		if i%touchChunk == 0 {
			c.sink += c.index.Touch(nodes[i:min(i+touchChunk, len(nodes))])
		}
		r, ok := c.index.Insert(v, notHeld)
		switch {
		case !ok:
			held[i] = notHeld
			continue
		case r == notHeld || c.kept[r]:
			return nil, fmt.Errorf("prefetch: input node %d appears twice in a batch", v)
		}
		c.kept[r], held[i] = true, r
	}
	for i, v := range nodes {
		r := held[i]
		switch {
		case i < pin:
			c.place(up, i, int32(i), v)
			if r == notHeld {
				news = append(news, int32(i))
			} else if r != int32(i) {
				up.MovesFrom, up.MovesTo = append(up.MovesFrom, r), append(up.MovesTo, int32(i))
			}
		case r != notHeld && int(r) >= pin && int(r) < size:
			c.place(up, i, r, v)
		case r != notHeld:
			c.later = append(c.later, int32(i))
		}
	}
	nMoves := len(c.later)
	for i := pin; i < size; i++ {
		if held[i] == notHeld {
			c.later = append(c.later, int32(i))
		}
	}
	free := pin
	for k, i := range c.later {
		for c.taken[free] {
			free++
		}
		c.place(up, int(i), int32(free), nodes[i])
		if k < nMoves {
			up.MovesFrom, up.MovesTo = append(up.MovesFrom, held[i]), append(up.MovesTo, int32(free))
		} else {
			news = append(news, i)
		}
	}
	up.Reused = size - len(news)
	for _, i := range news {
		to, v := up.SlotOf[i], nodes[i]
		if hot != nil {
			if hr, ok := hot(v); ok {
				up.HotSlots, up.HotRows = append(up.HotSlots, to), append(up.HotRows, hr)
				continue
			}
		}
		up.Fetch, up.FetchSlots = append(up.Fetch, i), append(up.FetchSlots, to)
	}
	c.news = news
	up.Hot, up.Fetched = len(up.HotSlots), len(up.Fetch)
	up.MovesThrough = c.throughFirst(up, max(len(prev), size))
	return up, nil
}

// place gives input node i (node v) row r.
func (c *classifier) place(up *Update, i int, r int32, v int64) {
	up.SlotOf[i], up.After[r] = r, v
	c.taken[r] = true
}

// throughFirst puts first the moves that read a row another move writes
// and returns how many there are. The order within each group does not
// matter: every source of the first group is read before any move writes,
// and the others read rows no move writes.
func (c *classifier) throughFirst(up *Update, rows int) int {
	if len(up.MovesTo) == 0 {
		return 0
	}
	c.moved = resetBools(c.moved, rows)
	for _, r := range up.MovesTo {
		c.moved[r] = true
	}
	from, to := up.MovesFrom, up.MovesTo
	n := 0
	for k, r := range from {
		if c.moved[r] {
			from[n], from[k] = from[k], from[n]
			to[n], to[k] = to[k], to[n]
			n++
		}
	}
	return n
}

// resetBools returns s resized to n, all false.
func resetBools(s []bool, n int) []bool {
	if cap(s) < n {
		return make([]bool, n)
	}
	s = s[:n]
	clear(s)
	return s
}
