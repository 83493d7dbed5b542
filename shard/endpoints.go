package shard

import (
	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/rank"
)

// Endpoint mapping: the new ID of a node lives on the rank holding the
// node's even range, so each edge's endpoints are looked up there by
// request/reply: the keys go to their owners in one all-to-all, each owner
// answers from its newIDs, and the answers come back in a second one (a
// rank answers the keys it holds itself without sending them). The
// edges are taken in rounds of at most budget/16 edges (two 8-byte keys
// each), every rank running the same number of rounds; the buffers of one
// round are reused by the next.

// lookupBufs are the buffers of one lookup round, kept across rounds.
type lookupBufs struct {
	flat, asked, got []int64
	pos              []int32
	counts, next     []int
}

// mapEndpoints replaces the endpoints of this rank's edges by their new
// IDs, finds each edge's partition (its destination's), and counts the
// edges of every (partition, edge type) over all ranks.
func (d *dispatcher) mapEndpoints() error {
	e := d.g.Edges
	n := e.Len()
	per := max(1, d.o.budget/16)
	rounds, err := collective.Max(d.c, int64((n+per-1)/per))
	if err != nil {
		return err
	}
	b := &lookupBufs{counts: make([]int, d.P), next: make([]int, d.P)}
	for r := range int(rounds) {
		lo, hi := min(r*per, n), min((r+1)*per, n)
		if err := d.lookupRound(e.Src[lo:hi], e.Dst[lo:hi], b); err != nil {
			return err
		}
		d.o.progress("endpoints", int64(hi), int64(n))
	}
	d.res.LookupRounds = int(rounds)
	d.epart = make([]int32, n)
	local := make([]int64, d.K*d.E)
	parts := graph.Book{Bounds: d.partStart}
	for i, v := range e.Dst {
		p := parts.Owner(v)
		d.epart[i] = int32(p)
		local[p*d.E+int(e.TypeOf(i))]++
	}
	all, err := collective.Allreduce(d.c, local, rank.Sum)
	if err != nil {
		return err
	}
	d.edgeCounts = make([][]int64, d.K)
	var total int64
	for p := range d.K {
		d.edgeCounts[p] = all[p*d.E : (p+1)*d.E]
		for _, v := range d.edgeCounts[p] {
			total += v
		}
	}
	if total != d.m.TotalEdges() {
		return errorf("endpoints: %d edges mapped, the graph has %d", total, d.m.TotalEdges())
	}
	d.book = NewBook(d.nodeCounts, d.edgeCounts)
	return nil
}

// lookupRound maps the keys src and dst (homogeneous input IDs) to new IDs
// in place.
func (d *dispatcher) lookupRound(src, dst []int64, b *lookupBufs) error {
	n := len(src) + len(dst)
	key := func(i int) int64 {
		if i < len(src) {
			return src[i]
		}
		return dst[i-len(src)]
	}
	clear(b.counts)
	b.pos = grow(b.pos, n)
	for i := range n {
		o := d.ownerOf(key(i))
		b.pos[i] = int32(o)
		b.counts[o]++
	}
	// The keys go to their owners in rank order, except this rank's own,
	// which are answered here after the others: flat holds them last.
	me := d.c.Rank()
	b.next[me] = n - b.counts[me]
	b.counts[me] = 0
	remote := 0
	for j := range d.P {
		if j != me {
			b.next[j] = remote
			remote += b.counts[j]
		}
	}
	b.flat = grow(b.flat, n)
	for i := range n {
		o := b.pos[i]
		b.pos[i] = int32(b.next[o])
		b.flat[b.next[o]] = key(i)
		b.next[o]++
	}
	var asked []int64
	var askedCounts []int
	err := d.comm("endpoints", func() (err error) {
		asked, askedCounts, err = collective.AlltoallvInto(d.c, b.flat[:remote], b.counts, b.asked)
		return err
	})
	if err != nil {
		return err
	}
	b.asked = asked
	if err := d.answer(asked); err != nil {
		return err
	}
	if err := d.answer(b.flat[remote:n]); err != nil {
		return err
	}
	var got []int64
	err = d.comm("endpoints", func() (err error) {
		got, _, err = collective.AlltoallvInto(d.c, asked, askedCounts, b.got)
		return err
	})
	if err != nil {
		return err
	}
	b.got = got
	answerOf := func(p int32) int64 {
		if int(p) < remote {
			return got[p]
		}
		return b.flat[p]
	}
	for i := range src {
		src[i] = answerOf(b.pos[i])
	}
	for i := range dst {
		dst[i] = answerOf(b.pos[len(src)+i])
	}
	return nil
}

// typeOf returns the node type of homogeneous input ID h and its
// type-wise ID.
func (d *dispatcher) typeOf(h int64) (int, int64) {
	for t, n := range d.m.NumNodes {
		if h < n {
			return t, h
		}
		h -= n
	}
	return -1, h
}

// ownerOf returns the rank holding node h's even range.
func (d *dispatcher) ownerOf(h int64) int {
	t, i := d.typeOf(h)
	if t < 0 || h < 0 {
		return -1 // the all-to-all refuses it with the key in the message
	}
	return evenOwner(i, d.m.NumNodes[t], d.P)
}

// answer replaces every key (a homogeneous input ID this rank holds) by
// its new ID. The keys come in random order, so this is a stream of cache
// misses: keep the loop tight.
func (d *dispatcher) answer(keys []int64) error {
	if d.T == 1 {
		lo, _ := d.g.Nodes.Range(0)
		ids := d.newIDs[0]
		for i, h := range keys {
			k := h - lo
			if uint64(k) >= uint64(len(ids)) {
				_, err := d.newIDOf(h)
				return err
			}
			keys[i] = ids[k]
		}
		return nil
	}
	for i, h := range keys {
		v, err := d.newIDOf(h)
		if err != nil {
			return err
		}
		keys[i] = v
	}
	return nil
}

// newIDOf answers a lookup of node h, which this rank must hold.
func (d *dispatcher) newIDOf(h int64) (int64, error) {
	t, i := d.typeOf(h)
	if t < 0 || h < 0 {
		return 0, errorf("endpoints: node %d outside the graph's %d nodes", h, d.m.TotalNodes())
	}
	lo, _ := d.g.Nodes.Range(t)
	k := i - lo
	if k < 0 || k >= int64(len(d.newIDs[t])) {
		return 0, errorf("endpoints: rank %d was asked for node %d of type %q, which it does not hold", d.c.Rank(), i, d.m.NodeTypes[t])
	}
	return d.newIDs[t][k], nil
}

// grow returns s with length n, reusing its memory when it can.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
