package sampler

import (
	"math/bits"
	"slices"
	"sort"
)

// The draws of one destination node's in-edges of one type, as a pure
// function of a stream: which positions of the node's range [0, n) are
// sampled. Which draw decides what is fixed here, and it is the same
// wherever the node is sampled (its own rank, a remote owner, an RMA
// reader, later a GPU kernel), so the batch is the same whatever did it.
// The chosen positions come out ascending (duplicates adjacent when drawn
// with replacement), which is the order of the node's in-edges in the
// partition's CSC: by edge ID.

// drawer gives draw i of a stream. *Stream is the only one outside tests;
// the statistical tests substitute a deliberately biased one to show they
// would notice. The choices are generic over it, so the sampler's calls
// are made on a concrete *Stream: no interface value per node.
type drawer interface{ Uint64(i uint32) uint64 }

// chooser holds the scratch memory of choices, reused node after node.
type chooser struct {
	set   []int64   // Floyd's chosen indices
	bits  []uint64  // Floyd's membership bitmap, when the set is large
	cand  []int64   // candidate positions of a weighted draw
	cum   []float64 // their cumulative weights
	keyed keyHeap   // the k smallest keys of a weighted draw
	draws []uint64  // the draws of a uniform choice
}

// drawBuf returns the chooser's buffer for k draws.
func (c *chooser) drawBuf(k int) []uint64 {
	if cap(c.draws) < k {
		c.draws = make([]uint64, k)
	}
	return c.draws[:k]
}

// fillDraws returns draws 0..k-1 of d.
func fillDraws[D drawer](c *chooser, d D, k int) []uint64 {
	buf := c.drawBuf(k)
	for i := range buf {
		buf[i] = d.Uint64(uint32(i))
	}
	return buf
}

// floydBitmapFrom is the fanout above which Floyd's algorithm tests
// membership in a bitmap instead of scanning its set: a scan of 64 int64s
// costs about as much as clearing the bitmap's touched words.
const floydBitmapFrom = 64

// choose appends to out the positions drawn from [0, n) minus skip (sorted,
// distinct positions excluded from the draw): fanout of them (all when
// fanout < 0 or, without replacement, when there are no more candidates),
// with or without replacement, uniformly or, when w is not nil, with
// probability proportional to w[position] (positions of weight 0 are
// never drawn: none at all when no candidate weighs more than 0).
func choose[D drawer](c *chooser, d D, n int64, fanout int, replace bool, w []float64, skip []int64, out []int64) []int64 {
	if w != nil {
		return chooseWeighted(c, d, n, fanout, replace, w, skip, out)
	}
	m := n - int64(len(skip))
	switch {
	case m <= 0:
		return out
	case fanout < 0 || (!replace && int64(fanout) >= m):
		return appendRange(out, 0, m, skip)
	}
	start := len(out)
	out = choosePositions(c, fillDraws(c, d, fanout), m, replace, out)
	mapSkipped(out[start:], skip)
	return out
}

// choosePositions appends the positions of [0, m) the draws choose: one
// per draw with replacement, ascending; without, Floyd's len(draws)
// distinct ones.
func choosePositions(c *chooser, draws []uint64, m int64, replace bool, out []int64) []int64 {
	if !replace {
		return append(out, floyd(c, draws, m)...)
	}
	start := len(out)
	for _, u := range draws {
		out = append(out, int64(Below(u, uint64(m))))
	}
	slices.Sort(out[start:])
	return out
}

// floyd returns k = len(draws) distinct indices of [0, m), ascending,
// uniformly among all k-subsets (Floyd's algorithm: for j = m-k .. m-1
// draw t in [0, j]; take t, or j when t is taken already). Draw i decides
// the index taken at j = m-k+i.
func floyd(c *chooser, draws []uint64, m int64) []int64 {
	k := len(draws)
	switch {
	case k <= floydBitmapFrom && m <= 64*floydWords:
		return floydSmall(c, draws, m)
	case k <= floydBitmapFrom:
		return floydSorted(c, draws, m)
	}
	c.set = c.set[:0]
	if words := int((m + 63) / 64); len(c.bits) < words {
		c.bits = make([]uint64, words)
	}
	for i, u := range draws {
		j := m - int64(k) + int64(i)
		t := int64(Below(u, uint64(j+1)))
		if c.bits[t>>6]&(1<<(t&63)) != 0 {
			t = j
		}
		c.set = append(c.set, t)
		c.bits[t>>6] |= 1 << (t & 63)
	}
	for _, x := range c.set {
		c.bits[x>>6] = 0
	}
	slices.Sort(c.set)
	return c.set
}

// floydWords is the words of floydSmall's bitmap: ranges of up to 512
// positions, most of a sample's nodes on R-MAT.
const floydWords = 8

// floydSmall is floyd for a small set of a small range: membership in a
// bitmap on the stack, and the set read from it in ascending order (a
// sorted set's insertions took a fifth of the draws' time).
func floydSmall(c *chooser, draws []uint64, m int64) []int64 {
	var taken [floydWords]uint64
	k := len(draws)
	for i, u := range draws {
		j := m - int64(k) + int64(i)
		t := int64(Below(u, uint64(j+1)))
		if taken[t>>6&(floydWords-1)]&(1<<(t&63)) != 0 {
			t = j
		}
		taken[t>>6&(floydWords-1)] |= 1 << (t & 63)
	}
	set := c.set[:0]
	for w := range (m + 63) / 64 {
		for x := taken[w&(floydWords-1)]; x != 0; x &= x - 1 {
			set = append(set, w*64+int64(bits.TrailingZeros64(x)))
		}
	}
	c.set = set
	return set
}

// floydSorted is floyd for a small set, kept ascending as it grows: the
// scan that tests whether t is taken finds where it goes, and j, when
// taken instead, is above every index taken before it.
func floydSorted(c *chooser, draws []uint64, m int64) []int64 {
	k := len(draws)
	set := c.set[:0]
	for i, u := range draws {
		j := m - int64(k) + int64(i)
		t := int64(Below(u, uint64(j+1)))
		p := len(set)
		for p > 0 && set[p-1] > t {
			p--
		}
		if p > 0 && set[p-1] == t {
			set = append(set, j)
			continue
		}
		set = append(set, 0)
		copy(set[p+1:], set[p:])
		set[p] = t
	}
	c.set = set
	return set
}

// appendRange appends the candidates [0, m) of a range with skip removed,
// as positions.
func appendRange(out []int64, lo, m int64, skip []int64) []int64 {
	start := len(out)
	for i := lo; i < m; i++ {
		out = append(out, i)
	}
	mapSkipped(out[start:], skip)
	return out
}

// mapSkipped turns ascending candidate indices into positions of the range
// that skip (sorted) was removed from: candidate i is the i-th position not
// in skip.
func mapSkipped(idx []int64, skip []int64) {
	s := 0
	for k, i := range idx {
		// The position is i plus the skipped positions at or below it.
		for s < len(skip) && skip[s] <= i+int64(s) {
			s++
		}
		idx[k] = i + int64(s)
	}
}

// chooseWeighted is choose with weights. Without replacement it draws the
// fanout candidates of smallest Exp(1)/w (Efraimidis and Spirakis' weighted
// reservoir: the same law as drawing one at a time in proportion to the
// weights left), draw p deciding the key of position p; with replacement,
// draw i picks the candidate whose cumulative weight interval holds
// Unit*total.
func chooseWeighted[D drawer](c *chooser, d D, n int64, fanout int, replace bool, w []float64, skip []int64, out []int64) []int64 {
	c.cand = c.cand[:0]
	s := 0
	for p := range n {
		if s < len(skip) && skip[s] == p {
			s++
			continue
		}
		if w[p] > 0 {
			c.cand = append(c.cand, p)
		}
	}
	m := len(c.cand)
	switch {
	case m == 0:
		return out
	case fanout < 0 || (!replace && fanout >= m):
		return append(out, c.cand...)
	case replace:
		return drawCumulative(c, d, fanout, w, out)
	}
	c.keyed = c.keyed[:0]
	for _, p := range c.cand {
		k := keyedPos{key: Exp(d.Uint64(uint32(p))) / w[p], pos: p}
		if len(c.keyed) < fanout {
			c.keyed.push(k)
		} else if k.less(c.keyed[0]) {
			c.keyed[0] = k
			c.keyed.down(0)
		}
	}
	start := len(out)
	for _, k := range c.keyed {
		out = append(out, k.pos)
	}
	slices.Sort(out[start:])
	return out
}

// drawCumulative draws fanout candidates with replacement in proportion to
// their weights.
func drawCumulative[D drawer](c *chooser, d D, fanout int, w []float64, out []int64) []int64 {
	c.cum = c.cum[:0]
	total := 0.0
	for _, p := range c.cand {
		total += w[p]
		c.cum = append(c.cum, total)
	}
	start := len(out)
	for i := range fanout {
		u := Unit(d.Uint64(uint32(i))) * total
		j := sort.SearchFloat64s(c.cum, u) // first cumulative weight >= u
		out = append(out, c.cand[min(j, len(c.cand)-1)])
	}
	slices.Sort(out[start:])
	return out
}

// keyedPos is a candidate with its reservoir key.
type keyedPos struct {
	key float64
	pos int64
}

// less orders by key, then position (ties of 53-bit keys are all but
// impossible, but the order must not depend on the heap's history).
func (a keyedPos) less(b keyedPos) bool {
	return a.key < b.key || (a.key == b.key && a.pos < b.pos)
}

// keyHeap is a max-heap of keyed positions: its root is the largest of the
// k smallest keys seen. (Typed, not container/heap, which boxes every
// pushed element.)
type keyHeap []keyedPos

func (h *keyHeap) push(k keyedPos) {
	*h = append(*h, k)
	s := *h
	for i := len(s) - 1; i > 0; {
		up := (i - 1) / 2
		if !s[up].less(s[i]) {
			break
		}
		s[up], s[i] = s[i], s[up]
		i = up
	}
}

// down restores the heap below i after s[i] got smaller.
func (h keyHeap) down(i int) {
	for {
		big := i
		for _, ch := range [2]int{2*i + 1, 2*i + 2} {
			if ch < len(h) && h[big].less(h[ch]) {
				big = ch
			}
		}
		if big == i {
			return
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}
