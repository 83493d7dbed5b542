package shard

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sort"

	"gnnrun/graph"
)

// The partition's graph: its edges are ordered by (type, input edge ID),
// which gives their new global IDs (the partition's edge range, type by
// type); the sources outside the partition's node range are its halo
// nodes, numbered after the inner nodes in new-ID order; and the edges are
// laid out as a CSC over the inner nodes, the in-edges of each node in
// new-edge-ID order. All of it is a pure function of the partition's edge
// set, so any number of ranks writes the same bytes.

// partEdge is a received edge: new endpoints and key.
type partEdge = edgeRec

// cscLayout is where every edge of a partition goes.
type cscLayout struct {
	n      int64   // inner nodes
	lo     int64   // first inner node's new ID
	halo   []int64 // new IDs of the halo nodes, ascending
	indptr []int64 // n+1 offsets: in-edges of inner node i are [indptr[i], indptr[i+1])
	pos    []int64 // CSC position of the k-th edge in key order
	cut    int64   // edges whose source is a halo node
	// A dense halo (IDs spanning at most haloDense times its length) is
	// looked up in words: bit k of words[w] says whether ID base+64w+k is
	// a halo node, and before counts those of the words below. The words
	// take a quarter byte per ID of the span, a few times less than the
	// list itself, so the lookups of a partition's edges (in random order
	// of source) stay in the cache.
	base  int64
	words []haloWord
	// Otherwise bucket[b] is the first halo index whose ID>>shift is at
	// least b: a lookup scans one bucket of about one halo node instead of
	// searching the whole list.
	bucket []int32
	shift  uint
}

type haloWord struct {
	bits   uint64
	before int64
}

// haloDense bounds the span of the halo IDs, as a multiple of their
// number, for the word index (see cscLayout).
const haloDense = 32

// sortEdges orders a partition's edges by key: type, then input edge ID;
// arr (nil without edge arrays) holds where each edge's rows are and is
// reordered with them.
func sortEdges(es []partEdge, arr []int64) {
	if rotateSorted(es, arr) {
		return
	}
	if arr == nil {
		slices.SortFunc(es, func(a, b partEdge) int { return cmp.Compare(a.Key, b.Key) })
		return
	}
	sort.Sort(edgeSorter{es, arr})
}

// rotateSorted orders es (and arr with it) in place and reports true when
// es is sorted or a rotation of a sorted sequence: two ascending runs, the
// second wholly below the first. That is how a partition's edges of one
// type arrive: the ranks hold ascending ranges of edge IDs and each sends
// its edges in key order, in the staggered order of the ranks that starts
// after the writer and ends with the writer's own. (Keys are unique.)
func rotateSorted(es []partEdge, arr []int64) bool {
	cut := 0
	for i := 1; i < len(es); i++ {
		if es[i].Key < es[i-1].Key {
			if cut > 0 {
				return false
			}
			cut = i
		}
	}
	if cut == 0 {
		return true
	}
	if es[len(es)-1].Key > es[0].Key {
		return false
	}
	rotate(es, cut)
	if arr != nil {
		rotate(arr, cut)
	}
	return true
}

// rotate moves s[cut:] before s[:cut] in place.
func rotate[T any](s []T, cut int) {
	slices.Reverse(s[:cut])
	slices.Reverse(s[cut:])
	slices.Reverse(s)
}

// edgeSorter sorts edges and their row positions together.
type edgeSorter struct {
	es  []partEdge
	arr []int64
}

func (s edgeSorter) Len() int           { return len(s.es) }
func (s edgeSorter) Less(i, j int) bool { return s.es[i].Key < s.es[j].Key }
func (s edgeSorter) Swap(i, j int) {
	s.es[i], s.es[j] = s.es[j], s.es[i]
	s.arr[i], s.arr[j] = s.arr[j], s.arr[i]
}

// buildCSC lays out the edges es (sorted by key, all with destinations in
// [lo, hi)) as a CSC over the inner nodes.
func buildCSC(es []partEdge, lo, hi int64) *cscLayout {
	l := &cscLayout{n: hi - lo, lo: lo, indptr: make([]int64, hi-lo+1), pos: make([]int64, len(es))}
	for _, e := range es {
		l.indptr[e.Dst-lo+1]++
		if e.Src < lo || e.Src >= hi {
			l.cut++
		}
	}
	// Sized first: grown by appends, the list (as long as the cut) would
	// be copied into fresh pages about twice over.
	l.halo = make([]int64, 0, l.cut)
	for _, e := range es {
		if e.Src < lo || e.Src >= hi {
			l.halo = append(l.halo, e.Src)
		}
	}
	sortInt64(l.halo)
	l.halo = append([]int64(nil), slices.Compact(l.halo)...) // drop the duplicates' memory
	l.index()
	for i := range l.n {
		l.indptr[i+1] += l.indptr[i]
	}
	next := make([]int64, l.n)
	copy(next, l.indptr[:l.n])
	for k, e := range es {
		j := e.Dst - lo
		l.pos[k] = next[j]
		next[j]++
	}
	return l
}

// index builds the bucket index of the halo list.
func (l *cscLayout) index() {
	h := len(l.halo)
	if h == 0 || h >= math.MaxInt32 {
		return
	}
	if span := l.halo[h-1] - l.halo[0] + 1; span/haloDense <= int64(h) {
		l.base = l.halo[0]
		l.words = make([]haloWord, (span+63)/64)
		for _, id := range l.halo {
			k := id - l.base
			l.words[k>>6].bits |= 1 << (k & 63)
		}
		var n int64
		for w := range l.words {
			l.words[w].before = n
			n += int64(bits.OnesCount64(l.words[w].bits))
		}
		return
	}
	top := uint64(l.halo[h-1])
	for top>>l.shift >= uint64(h) {
		l.shift++
	}
	l.bucket = make([]int32, top>>l.shift+2)
	b := 0
	for i, id := range l.halo {
		for ; b <= int(uint64(id)>>l.shift); b++ {
			l.bucket[b] = int32(i)
		}
	}
	for ; b < len(l.bucket); b++ {
		l.bucket[b] = int32(h)
	}
}

// local returns the local ID of node id: inner nodes first, then halo.
func (l *cscLayout) local(id int64) int64 {
	if id >= l.lo && id < l.lo+l.n {
		return id - l.lo
	}
	if l.words != nil {
		k := id - l.base
		w := l.words[k>>6]
		return l.n + w.before + int64(bits.OnesCount64(w.bits&(1<<(k&63)-1)))
	}
	lo, hi := 0, len(l.halo)
	if b := uint64(id) >> l.shift; l.bucket != nil && b+1 < uint64(len(l.bucket)) {
		lo, hi = int(l.bucket[b]), int(l.bucket[b+1])
	}
	for lo < hi { // binary search in [lo, hi)
		m := int(uint(lo+hi) >> 1)
		if l.halo[m] < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return l.n + int64(lo)
}

// sortInt64 sorts s: a radix sort by bytes for long slices (the halo
// candidates of a partition are as many as its edges), pdqsort otherwise.
func sortInt64(s []int64) {
	if len(s) < 1<<16 {
		slices.Sort(s)
		return
	}
	var top uint64
	for _, v := range s {
		if v < 0 {
			slices.Sort(s)
			return
		}
		top = max(top, uint64(v))
	}
	buf := make([]int64, len(s))
	src, dst := s, buf
	for shift := uint(0); shift < 64 && top>>shift > 0; shift += 8 {
		var count [257]int
		for _, v := range src {
			count[(uint64(v)>>shift)&0xff+1]++
		}
		for i := 1; i < 257; i++ {
			count[i] += count[i-1]
		}
		for _, v := range src {
			b := (uint64(v) >> shift) & 0xff
			dst[count[b]] = v
			count[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
}

// indexDType is the type of a partition's indices: int32 when its local
// IDs fit.
func indexDType(localNodes int64) graph.DType {
	if localNodes <= math.MaxInt32 {
		return graph.Int32
	}
	return graph.Int64
}

// indices returns the local source ID of every CSC entry, as int32 or
// int64 data.
func (l *cscLayout) indices(es []partEdge) *graph.Tensor {
	if indexDType(l.n+int64(len(l.halo))) == graph.Int32 {
		out := make([]int32, len(es))
		for k, e := range es {
			out[l.pos[k]] = int32(l.local(e.Src))
		}
		return graph.TensorOf(out, 0)
	}
	out := make([]int64, len(es))
	for k, e := range es {
		out[l.pos[k]] = l.local(e.Src)
	}
	return graph.TensorOf(out, 0)
}

// scatter returns f of every edge at its CSC position.
func scatter[T any](l *cscLayout, es []partEdge, f func(k int, e partEdge) T) []T {
	out := make([]T, len(es))
	for k, e := range es {
		out[l.pos[k]] = f(k, e)
	}
	return out
}

// inverse returns the key-order index of the edge at each CSC position.
func (l *cscLayout) inverse() []int64 {
	inv := make([]int64, len(l.pos))
	for k, q := range l.pos {
		inv[q] = int64(k)
	}
	return inv
}
