package sampler

import (
	"math/bits"
	"slices"
	"unsafe"

	"gnnrun/graph"
)

// A block's nodes numbered by sorting instead of by a map: the
// destinations and then the sources, as entry i = (node ID, i), are sorted
// by node ID with a stable radix sort (the IDs' 11-bit digits, 2 passes at
// scale 22), so each node's entries are adjacent with its first
// appearance first; the first entry of each run is the node's first
// appearance, and a pass in entry order numbers the first appearances
// and gives every other entry its run's number. Every pass is sequential
// or within arrays of the block's size, which the cache holds, where a map
// reads (and first clears) a random slot per edge of a table larger than
// the cache.

// numbering is the scratch of buildBlock's numbering, kept between
// blocks. The nodes the rank serves are numbered by their marks (see
// denseMarks), when the sampler set them up, the others by sorting; a
// block too large to number by sorting (see sortable) is numbered with
// the map.
type numbering struct {
	sortNumbering
	dense *denseMarks
	ids   graph.IDMap
	// nodes is a block's nodes as they are numbered, with room for one
	// per entry (the marks' pass writes every entry's node at the end);
	// the block gets a copy of the ones numbered.
	nodes []int64
}

// denseMarks numbers the nodes of a block whose IDs lie in [lo,
// lo+len(mark)): every node of a graph of up to wholeMarks nodes, else
// the span of the inner nodes of the partitions a rank serves (O(N/P)
// entries, and only when they fill at least half of it), by a mark per
// node: the entry of its first appearance in the block. The entries
// (destinations, then sources) write their nodes' marks from the last to
// the first, so each mark ends at its node's first entry, and then read
// them in order: a first appearance is an entry that finds itself. Each
// pass only writes or only reads the marks. (With one pass that read a
// node's mark and wrote it back, the sampler ran at 0.40-0.43 of
// bench/sample's limit on R-MAT 20, against 0.46-0.51 with two: an R-MAT
// block's sources repeat its hubs entries apart, so a load of a mark
// often follows a store to it still in flight.) A mark is 4 bytes: the
// cache holds twice as many as of 8-byte marks. A block's sources cluster
// in R-MAT's hubs and a partition's own nodes, whose marks the cache
// holds; the sort reads and writes every entry four times.
type denseMarks struct {
	lo    int64
	mark  []uint32 // per node: the entry of its first appearance
	words []uint64 // mark's memory
	num   []int32  // per entry: its node's number, at first appearances
	// srcMarks is per source entry: its node's mark (number's scratch)
	srcMarks []int32
}

// maxEntries bounds the entries (destinations and sources) of a block
// numbered by marks: an entry fits an int32 and a mark.
const maxEntries = 1<<31 - 1

// newDenseMarks returns the marks of the nodes [lo, hi), or nil when the
// span is empty or more than twice the inner nodes in it, inner.
func newDenseMarks(lo, hi, inner int64) *denseMarks {
	if hi <= lo || hi-lo > 2*inner || hi-lo >= 1<<32 {
		return nil
	}
	n := int(hi - lo)
	words := hugeWords((n + 1) / 2)
	return &denseMarks{lo: lo, words: words, mark: unsafe.Slice((*uint32)(unsafe.Pointer(&words[0])), n)}
}

// free releases the marks; d must not be used after.
func (d *denseMarks) free() {
	freeHugeWords(d.words)
	d.mark, d.words = nil, nil
}

// covers reports whether every node of dst and src has a mark, and the
// block's entries fit one.
func (d *denseMarks) covers(dst, src []int64) bool {
	if len(dst)+len(src) > maxEntries {
		return false
	}
	span := uint64(len(d.mark))
	for _, v := range dst {
		if uint64(v-d.lo) >= span {
			return false
		}
	}
	for _, v := range src {
		if uint64(v-d.lo) >= span {
			return false
		}
	}
	return true
}

// markFirsts writes the mark of every entry's node that has one (dst's
// entries, then src's), from the last entry to the first: each mark ends
// at its node's first entry.
func (d *denseMarks) markFirsts(dst, src []int64) {
	mark, lo, span, nd := d.mark, d.lo, uint64(len(d.mark)), len(dst)
	for k := len(src) - 1; k >= 0; k-- {
		if u := uint64(src[k] - lo); u < span {
			mark[u] = uint32(nd + k)
		}
	}
	for i := nd - 1; i >= 0; i-- {
		if u := uint64(dst[i] - lo); u < span {
			mark[u] = uint32(i)
		}
	}
}

// number is numbering.number for a block whose nodes all have marks.
func (d *denseMarks) number(dst, src []int64, idx []int32, nodes []int64) ([]int64, int) {
	mark, lo, nd := d.mark, d.lo, len(dst)
	d.markFirsts(dst, src)
	for i, v := range dst {
		if mark[v-lo] != uint32(i) {
			return nodes, i
		}
	}
	num := grow32(d.num, nd+len(src))
	d.num = num
	for i := range nd {
		num[i] = int32(i)
	}
	// The sources' marks first, in a loop of independent loads and little
	// else, which the CPU keeps many of in flight (the marks are larger
	// than its L2 cache). Read inside the numbering's loop, beside its
	// random read of num and three stores an entry, fewer fitted the CPU's
	// window: R-MAT 20, one rank, two sets of 8 alternated pairs, medians
	// 0.507 and 0.521 of bench/sample's limit this way against 0.467 and
	// 0.490.
	srcMarks := grow32(d.srcMarks, len(src))
	d.srcMarks = srcMarks
	for k, v := range src {
		srcMarks[k] = int32(mark[v-lo])
	}
	// Without branches on what the marks hold (two source entries in five
	// are a node new to the block on R-MAT 20, too often for the CPU to
	// guess): every entry writes its node at the end of nodes, which only a
	// first appearance moves past, and the number it would have as one,
	// which only a first appearance's later entries read.
	n := len(nodes)
	nodes = slices.Grow(nodes, len(src))[:n+len(src)]
	idx, numSrc := idx[:len(src)], num[nd:nd+len(src)]
	for k, v := range src {
		e := uint32(nd + k)
		f := uint32(srcMarks[k])
		numSrc[k] = int32(n)
		nodes[n] = v
		n += int((e ^ f - 1) >> 31) // 1 when f == e (entries are below 2^31)
		idx[k] = num[f]
	}
	return nodes[:n], -1
}

// firsts puts in first[e] the entry of the first appearance of entry e's
// node (dst's entries, then src's) for the nodes that have marks, and
// appends the others' sort keys to keys. It returns the keys, the largest
// of their IDs, and the index of a repeated destination (or -1).
func (d *denseMarks) firsts(dst, src []int64, first []int32, keys []uint64) ([]uint64, int64, int) {
	mark, lo, span, nd := d.mark, d.lo, uint64(len(d.mark)), len(dst)
	d.markFirsts(dst, src)
	var maxID int64
	for i, v := range dst {
		if u := uint64(v - lo); u < span {
			if mark[u] != uint32(i) {
				return keys, 0, i
			}
			first[i] = int32(i)
			continue
		}
		keys = append(keys, uint64(v)<<idBits|uint64(i))
		maxID |= v
	}
	for k, v := range src {
		e := nd + k
		if u := uint64(v - lo); u < span {
			first[e] = int32(mark[u])
			continue
		}
		keys = append(keys, uint64(v)<<idBits|uint64(e))
		maxID |= v
	}
	return keys, maxID, -1
}

// sortNumbering is the scratch of the numbering by sorting.
type sortNumbering struct {
	keys, tmp []uint64 // node ID<<idBits | entry
	first     []int32  // per entry: the entry of its node's first appearance
	num       []int32  // per first appearance: its number
}

// idBits is the bits of an entry's index in a sort key: a block numbered
// by sorting has fewer than 2^idBits destinations and edges together, and
// node IDs below 2^(64-idBits).
const idBits = 24

// sortable reports whether a block of n entries whose node IDs are at most
// maxID can be numbered by sorting.
func sortable(n int, maxID int64) bool {
	return n < 1<<idBits && maxID < 1<<(64-idBits)
}

// maxOf returns a number at least as large as every ID of a and b (their
// bits ORed).
func maxOf(a, b []int64) int64 {
	var m int64
	for _, v := range a {
		m |= v
	}
	for _, v := range b {
		m |= v
	}
	return m
}

// numberByMap is number with a map: the numbering of blocks too large to
// sort.
func (nb *numbering) numberByMap(dst, src []int64, idx []int32, nodes []int64) ([]int64, int) {
	nb.ids.Reset(len(dst) + len(src))
	for i, v := range dst {
		if _, had := nb.ids.Insert(v, int32(i)); had {
			return nodes, i
		}
	}
	for k, v := range src {
		i, had := nb.ids.Insert(v, int32(len(nodes)))
		if !had {
			nodes = append(nodes, v)
		}
		idx[k] = i
	}
	return nodes, -1
}

// number numbers the nodes of dst (distinct) and src: dst[i] is i, and
// src[k]'s number goes in idx[k]. It returns nodes with the sources not in
// dst appended in order of first appearance, and the index of a repeated
// destination (or -1). dense, when not nil, numbers the nodes it has
// marks for.
func (sn *sortNumbering) number(dst, src []int64, idx []int32, nodes []int64, maxID int64, dense *denseMarks) ([]int64, int) {
	n := len(dst) + len(src)
	sn.first = grow32(sn.first, n)
	var keys []uint64
	if dense != nil {
		var twice int
		if keys, maxID, twice = dense.firsts(dst, src, sn.first, sn.keys[:0]); twice >= 0 {
			return nodes, twice
		}
	} else {
		keys = growU64(sn.keys, n)
		for i, v := range dst {
			keys[i] = uint64(v)<<idBits | uint64(i)
		}
		for k, v := range src {
			keys[len(dst)+k] = uint64(v)<<idBits | uint64(len(dst)+k)
		}
	}
	sn.keys, sn.tmp = keys, growU64(sn.tmp, len(keys))
	if twice := sn.sortFirsts(radixSort(keys, sn.tmp, bits.Len64(uint64(maxID))), len(dst)); twice >= 0 {
		return nodes, twice
	}
	sn.num = grow32(sn.num, n)
	for i := range dst {
		sn.num[i] = int32(i)
	}
	for k, v := range src {
		e := int32(len(dst) + k)
		f := sn.first[e]
		if f == e {
			sn.num[e] = int32(len(nodes))
			nodes = append(nodes, v)
		}
		idx[k] = sn.num[f]
	}
	return nodes, -1
}

// sortFirsts puts in first[e] the entry of the first appearance of entry
// e's node for the entries of keys, sorted by node ID with each node's
// entries in entry order, and returns the index of a destination (an entry
// below nDst) that is a node's second entry, or -1.
func (sn *sortNumbering) sortFirsts(keys []uint64, nDst int) int {
	const mask = 1<<idBits - 1
	for j := 0; j < len(keys); {
		head := int32(keys[j] & mask)
		v := keys[j] >> idBits
		sn.first[head] = head
		for j++; j < len(keys) && keys[j]>>idBits == v; j++ {
			e := int32(keys[j] & mask)
			if int(e) < nDst {
				return int(e) // a second entry of v among the destinations
			}
			sn.first[e] = head
		}
	}
	return -1
}

// radixSort sorts keys stably by their bits [idBits, idBits+width),
// using tmp (as long) as scratch, and returns the one of the two that
// holds the result.
func radixSort(keys, tmp []uint64, width int) []uint64 {
	const digit = 11
	var count [1 << digit]int
	for shift := idBits; shift < idBits+width; shift += digit {
		clear(count[:])
		for _, k := range keys {
			count[k>>shift&(1<<digit-1)]++
		}
		at := 0
		for d, c := range count {
			count[d] = at
			at += c
		}
		for _, k := range keys {
			d := k >> shift & (1<<digit - 1)
			tmp[count[d]] = k
			count[d]++
		}
		keys, tmp = tmp, keys
	}
	return keys
}

func growU64(s []uint64, n int) []uint64 {
	if cap(s) < n {
		return make([]uint64, n)
	}
	return s[:n]
}
