package pack

import "math/bits"

// keySet is an ordered set of integers in [0, limit] with successor and
// predecessor queries in O(log64 limit): a hierarchy of bitmaps where bit b
// of level l+1 says word b of level l is not zero. The bottom level is a map
// when a dense bitmap would be large (keys of the product heuristic reach
// limit nodes × limit edges, 1.3e9 for ogbg-code2's shape); the levels above
// are 64 times smaller and always dense.
//
// The reference packer needs it because the published code rebuilds the list
// of open keys at every step, which is what makes it quadratic.
type keySet struct {
	limit  int
	dense  []uint64       // level 0 when small
	sparse map[int]uint64 // level 0 when large
	upper  [][]uint64     // levels 1.. up to a single word
	nbits  []int          // number of bits of each level, level 0 first
	words0 int            // number of words of level 0
}

// denseLimit is the largest level 0, in words, kept as a slice (8 MiB).
const denseLimit = 1 << 20

func newKeySet(limit int) *keySet {
	s := &keySet{limit: limit}
	n := limit + 1
	for {
		s.nbits = append(s.nbits, n)
		words := (n + 63) / 64
		if len(s.nbits) == 1 {
			s.words0 = words
		} else {
			s.upper = append(s.upper, make([]uint64, words))
		}
		if words == 1 {
			break
		}
		n = words
	}
	if s.words0 <= denseLimit {
		s.dense = make([]uint64, s.words0)
	} else {
		s.sparse = make(map[int]uint64)
	}
	return s
}

func (s *keySet) word(l, i int) uint64 {
	switch {
	case l > 0:
		return s.upper[l-1][i]
	case s.dense != nil:
		return s.dense[i]
	}
	return s.sparse[i]
}

func (s *keySet) setWord(l, i int, w uint64) {
	switch {
	case l > 0:
		s.upper[l-1][i] = w
	case s.dense != nil:
		s.dense[i] = w
	case w == 0:
		delete(s.sparse, i)
	default:
		s.sparse[i] = w
	}
}

// add inserts k, 0 <= k <= limit.
func (s *keySet) add(k int) {
	for l := range s.nbits {
		i := k >> 6
		w := s.word(l, i)
		s.setWord(l, i, w|1<<(k&63))
		if w != 0 {
			return
		}
		k = i
	}
}

// remove deletes k if present.
func (s *keySet) remove(k int) {
	for l := range s.nbits {
		i := k >> 6
		w := s.word(l, i) &^ (1 << (k & 63))
		s.setWord(l, i, w)
		if w != 0 {
			return
		}
		k = i
	}
}

// next returns the smallest key >= k, or -1 when there is none.
func (s *keySet) next(k int) int { return s.nextAt(0, max(k, 0)) }

func (s *keySet) nextAt(l, b int) int {
	if b >= s.nbits[l] {
		return -1
	}
	i := b >> 6
	if w := s.word(l, i) >> (b & 63); w != 0 {
		return b + bits.TrailingZeros64(w)
	}
	if l+1 == len(s.nbits) {
		return -1
	}
	j := s.nextAt(l+1, i+1)
	if j < 0 {
		return -1
	}
	return j<<6 + bits.TrailingZeros64(s.word(l, j))
}

// prev returns the largest key <= k, or -1 when there is none.
func (s *keySet) prev(k int) int { return s.prevAt(0, min(k, s.limit)) }

func (s *keySet) prevAt(l, b int) int {
	if b < 0 {
		return -1
	}
	i := b >> 6
	if w := s.word(l, i) << (63 - b&63); w != 0 {
		return b - bits.LeadingZeros64(w)
	}
	if l+1 == len(s.nbits) {
		return -1
	}
	j := s.prevAt(l+1, i-1)
	if j < 0 {
		return -1
	}
	return j<<6 + 63 - bits.LeadingZeros64(s.word(l, j))
}
