package pack

import (
	"cmp"
	"slices"
)

// refPack is one entry of the published code's strategy lists: count packs
// holding the same graphs, in the order they were added.
type refPack struct {
	graphs       []Tuple
	nodes, edges int
	count        int
}

// refState is the published algorithm's working set: open packs bucketed by
// the heuristic of their remaining space, and closed packs.
type refState struct {
	h       Heuristic // as evaluated: the published "min" is max
	lim     Limits
	maxSize int
	keys    *keySet
	open    map[int][]*refPack
	closed  []*refPack
}

// packReference is the published longest-pack-first histogram packing
// (pack_using_dlpfhp of Graphcore's tuple-packing notebook), reproduced with
// its quirks so that the paper's Table 2 comes out digit for digit:
//
//   - the "min" heuristic evaluates max;
//   - bins are taken in descending (heuristic, nodes, edges, count) order;
//   - a bin goes to the bucket with the smallest key >= its heuristic plus
//     an offset, to the first pack there that fits in nodes and edges;
//   - after a placement the offset restarts at 0 but is still incremented
//     once before the next search, so the exact-fit bucket is skipped for the
//     rest of that bin;
//   - a pack closes when the heuristic of its remaining space is 0 or it
//     holds the cap of graphs;
//   - the graphs of a bin left over after filling earlier bins' packs open
//     one pack each, so graphs of one size never share a pack they opened.
//
// Only the search for the smallest key differs: an ordered keySet instead of
// a list rebuilt at every step, the same answer without the quadratic time.
// With ShortestFirst the search runs from the largest key down and restarts
// there after every placement.
func packReference(hist Histogram, o options) []Group {
	s := &refState{
		h:       o.heuristic.published(),
		lim:     o.limits,
		maxSize: o.heuristic.published().Eval(o.limits.Nodes, o.limits.Edges),
		open:    make(map[int][]*refPack),
	}
	s.keys = newKeySet(s.maxSize)
	for _, b := range s.order(hist) {
		if o.order == ShortestFirst {
			s.placeShortestFirst(b)
		} else {
			s.placeLongestFirst(b)
		}
	}
	return s.groups()
}

// order returns the bins in the published processing order: descending
// (heuristic, nodes, edges, count).
func (s *refState) order(hist Histogram) []Bin {
	bins := slices.Clone(hist.bins)
	slices.SortFunc(bins, func(a, b Bin) int {
		return cmp.Or(
			cmp.Compare(s.h.Eval(b.Nodes, b.Edges), s.h.Eval(a.Nodes, a.Edges)),
			cmp.Compare(b.Nodes, a.Nodes),
			cmp.Compare(b.Edges, a.Edges),
			cmp.Compare(b.Count, a.Count),
		)
	})
	return bins
}

func (s *refState) placeLongestFirst(b Bin) {
	size := s.h.Eval(b.Nodes, b.Edges)
	left := b.Count
	offset := 0
	for left > 0 {
		if k := s.keys.next(size + offset); k < 0 {
			offset = s.maxSize + 1
		} else {
			offset = k - size
			if taken := s.tryBucket(k, b.Tuple, left); taken > 0 {
				left -= taken
				offset = 0
			}
		}
		offset++ // also after a placement: the published quirk
		if offset+size > s.maxSize {
			s.openPack(b.Tuple, left)
			return
		}
	}
}

func (s *refState) placeShortestFirst(b Bin) {
	size := s.h.Eval(b.Nodes, b.Edges)
	left := b.Count
	for left > 0 {
		taken := 0
		for k := s.keys.prev(s.maxSize); k >= size && taken == 0; k = s.keys.prev(k - 1) {
			taken = s.tryBucket(k, b.Tuple, left)
		}
		if taken == 0 {
			s.openPack(b.Tuple, left)
			return
		}
		left -= taken
	}
}

// tryBucket adds up to left graphs of size t to the first pack group of
// bucket k that fits them, splitting the group by count, and returns how
// many it added (0 when no pack of the bucket fits).
func (s *refState) tryBucket(k int, t Tuple, left int) int {
	bucket := s.open[k]
	for i, p := range bucket {
		if p.nodes+t.Nodes > s.lim.Nodes || p.edges+t.Edges > s.lim.Edges {
			continue
		}
		bucket = slices.Delete(bucket, i, i+1)
		taken := min(p.count, left)
		grown := &refPack{
			graphs: append(slices.Clip(p.graphs), t),
			nodes:  p.nodes + t.Nodes,
			edges:  p.edges + t.Edges,
			count:  taken,
		}
		if p.count > taken {
			p.count -= taken
			bucket = append(bucket, p)
		}
		s.setBucket(k, bucket)
		s.file(grown)
		return taken
	}
	return 0
}

// openPack starts count new packs holding one graph of size t.
func (s *refState) openPack(t Tuple, count int) {
	s.file(&refPack{graphs: []Tuple{t}, nodes: t.Nodes, edges: t.Edges, count: count})
}

// file closes p when its remaining space has heuristic 0 or it is at the cap,
// and otherwise appends it to the bucket of its remaining space.
func (s *refState) file(p *refPack) {
	k := s.h.Eval(s.lim.Nodes-p.nodes, s.lim.Edges-p.edges)
	if k == 0 || len(p.graphs) == s.lim.Graphs {
		s.closed = append(s.closed, p)
		return
	}
	s.setBucket(k, append(s.open[k], p))
}

func (s *refState) setBucket(k int, bucket []*refPack) {
	if len(bucket) == 0 {
		delete(s.open, k)
		s.keys.remove(k)
		return
	}
	if _, ok := s.open[k]; !ok {
		s.keys.add(k)
	}
	s.open[k] = bucket
}

func (s *refState) groups() []Group {
	var out []Group
	add := func(p *refPack) { out = append(out, Group{Graphs: p.graphs, Count: p.count}) }
	for _, p := range s.closed {
		add(p)
	}
	for _, bucket := range s.open {
		for _, p := range bucket {
			add(p)
		}
	}
	return canonical(out)
}
