package sampler

import (
	"math/bits"

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
// blocks: a block too large to number by sorting (see sortable) is
// numbered with the map.
type numbering struct {
	sortNumbering
	ids graph.IDMap
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
// destination (or -1).
func (sn *sortNumbering) number(dst, src []int64, idx []int32, nodes []int64, maxID int64) ([]int64, int) {
	n := len(dst) + len(src)
	sn.keys, sn.tmp = growU64(sn.keys, n), growU64(sn.tmp, n)
	for i, v := range dst {
		sn.keys[i] = uint64(v)<<idBits | uint64(i)
	}
	for k, v := range src {
		sn.keys[len(dst)+k] = uint64(v)<<idBits | uint64(len(dst)+k)
	}
	keys := radixSort(sn.keys, sn.tmp, bits.Len64(uint64(maxID)))
	sn.first = grow32(sn.first, n)
	const mask = 1<<idBits - 1
	for j := 0; j < n; {
		head := int32(keys[j] & mask)
		v := keys[j] >> idBits
		sn.first[head] = head
		for j++; j < n && keys[j]>>idBits == v; j++ {
			e := int32(keys[j] & mask)
			if int(e) < len(dst) {
				return nodes, int(e) // a second entry of v among the destinations
			}
			sn.first[e] = head
		}
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
