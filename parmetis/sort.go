package parmetis

import (
	"math/bits"
)

// arc is a directed edge with its weight, the unit the distributed phases
// ship between ranks.
type arc struct {
	From, To int64
	W        int64
}

// radixSortPairs sorts keys (all below limit) in place, carrying vals
// along, by least-significant-digit radix sort in 16-bit digits: O(n) per
// digit, so about two passes for graphs under 2^32 vertices, where a
// comparison sort of the millions of arcs of one rank costs far more.
func radixSortPairs(keys []uint64, vals []int32, limit uint64) {
	n := len(keys)
	if n < 2 {
		return
	}
	tk, tv := make([]uint64, n), make([]int32, n)
	var count [1 << 16]int
	for shift := uint(0); shift < uint(bits.Len64(limit)); shift += 16 {
		clear(count[:])
		for _, k := range keys {
			count[(k>>shift)&0xffff]++
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for i, k := range keys {
			d := (k >> shift) & 0xffff
			tk[count[d]], tv[count[d]] = k, vals[i]
			count[d]++
		}
		keys, tk = tk, keys
		vals, tv = tv, vals
	}
	if (bits.Len64(limit)+15)/16%2 == 1 {
		copy(tk, keys) // an odd number of passes left the result in the scratch
		copy(tv, vals)
	}
}
