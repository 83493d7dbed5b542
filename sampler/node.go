package sampler

import "slices"

// Exclusion removes in-edges of node Dst of edge type EType from every
// draw of a batch: the edge with ID EID, or, when EID < 0, every edge from
// Src (the reverse edges of a positive edge Src <- Dst). IDs are new
// global IDs.
type Exclusion struct {
	Dst   int64
	EType int
	EID   int64
	Src   int64
}

// exclusionSet is a batch's exclusions by destination node, with a
// filter of its keys: a node whose hashed bit is clear has none, and most
// nodes of a link batch's layers find theirs clear in 8 KiB the cache
// holds rather than in the map.
type exclusionSet struct {
	byDst map[int64][]Exclusion
	bits  [exclWords]uint64
}

// exclWords is the words of exclusionSet's filter.
const exclWords = 1 << 10

// exclBit returns node v's word and bit in exclusionSet's filter.
func exclBit(v int64) (int, uint64) {
	h := uint64(v) * 0x9e3779b97f4a7c15 >> (64 - 16) // 2^16 bits
	return int(h >> 6), 1 << (h & 63)
}

// reset empties x.
func (x *exclusionSet) reset() {
	if len(x.byDst) > 0 {
		clear(x.byDst)
		clear(x.bits[:])
	}
}

// add adds e.
func (x *exclusionSet) add(e Exclusion) {
	if x.byDst == nil {
		x.byDst = map[int64][]Exclusion{}
	}
	x.byDst[e.Dst] = append(x.byDst[e.Dst], e)
	w, bit := exclBit(e.Dst)
	x.bits[w] |= bit
}

// len returns the nodes with exclusions.
func (x *exclusionSet) len() int { return len(x.byDst) }

// of returns node v's exclusions.
func (x *exclusionSet) of(v int64) []Exclusion {
	if len(x.byDst) == 0 {
		return nil
	}
	if w, bit := exclBit(v); x.bits[w]&bit == 0 {
		return nil
	}
	return x.byDst[v]
}

// edgeList is a growing list of sampled edges.
type edgeList struct {
	src, eid, orig []int64
	etype          []int16
}

func (e *edgeList) reset() {
	e.src, e.eid, e.orig, e.etype = e.src[:0], e.eid[:0], e.orig[:0], e.etype[:0]
}

func (e *edgeList) len() int { return len(e.src) }

// inEdges is what the draws of one destination node read: the CSC
// positions of its in-edges of each type, and, only when weighted or when
// exclusions name the node, their weights, edge IDs and sources. The local
// view reads them from the partition; the RMA transport from what it
// fetched from the owner. The plan drawn from the same inEdges is the same
// wherever it is made.
type inEdges interface {
	rangeOf(t int) (a, b int64)
	// weights of the type-t range as float64: a view, or converted into
	// *buf (which it may grow). The result must not be written.
	weights(t int, buf *[]float64) []float64
	// eids of the type-t range, ascending.
	eids(t int) []int64
	// srcPositions appends to skip the positions, relative to the start
	// of the type-t range, of the in-edges from src.
	srcPositions(t int, src int64, skip []int64) []int64
}

// nodeDraws draws the in-edges of single nodes. It holds scratch memory;
// one per goroutine.
type nodeDraws struct {
	fanouts  [][]int // [layer][etype]
	replace  bool
	weighted bool
	orig     bool // record original edge IDs
	ch       chooser
	pos      []int64 // plan's results
	types    []int16
	skip     []int64
	wbuf     []float64

	// ahead holds the uniform draws of the chunk of nodes being drawn
	ahead drawsAhead
	// srcPos remembers the positions of a local node's in-edges from a
	// source that a reverse exclusion scanned its range for: a link
	// batch's seeds are in every layer's frontier, and a hub's range is
	// long. Positions are the graph's, so any entry stays right; the
	// sampler empties it every batch to bound it.
	srcPos map[srcKey][]int64
}

// srcKey names the in-edges of type t of inner node local of a view from
// global node src.
type srcKey struct {
	v          *view
	local, src int64
	t          int
}

// drawsFor says whether a uniform choice of fanout f of n in-edges draws
// (else it takes them all, or there are none).
func (d *nodeDraws) drawsFor(n int64, f int) bool {
	return n > 0 && f > 0 && (d.replace || n > int64(f))
}

// drawnAhead says whether the uniform draws of a fanout of f are made
// ahead (drawsAhead): fanouts under 16, whose 8 or fewer counters leave
// lanes of a node's own vector call empty. Larger ones fill them, and
// their draws made ahead would only take memory (a chunk's nodes times
// the fanout).
func drawnAhead(f int) bool { return f < 16 }

// drawsAhead holds the uniform draws of a chunk of frontier nodes,
// computed before their choices: the Philox counters of all the chunk's
// nodes go eight to a call on the vector unit, where a node's own stream
// fills a call's eight lanes with only 3 counters at a fanout of 5 (a
// counter gives two draws). A draw is the same number either way, a
// function of its counter alone; the choices take the draws job by job,
// in the order the jobs were added, and a node that was not added draws
// from its stream as before.
type drawsAhead struct {
	in     philox8In
	lanes  int      // counters set in in
	base   int      // where in's draws go in draws
	draws  []uint64 // every job's draws, 2·⌈f/2⌉ of them, one after another
	jobs   []aheadJob
	next   int   // the job take returns next
	missed int64 // uniform choices drawnAhead that drew from their stream (tests)
}

// aheadJob is one node's draws over its in-edges of one type at a layer:
// those of its stream with word 1 word1.
type aheadJob struct {
	node  int64
	word1 uint32
	at    int32 // its first draw in draws
}

// reset empties a under key.
func (a *drawsAhead) reset(key Key) {
	a.in = newPhilox8In(key)
	a.lanes, a.base, a.next = 0, 0, 0
	a.jobs = a.jobs[:0]
}

// add computes the f draws of node's stream over its in-edges of type t
// at layer (the first f of NewStream(key, ForNeighbors, Lane(layer, t),
// node)), whose word 1 is word1 (streamWord1), eight counters at a time.
func (a *drawsAhead) add(node int64, word1 uint32, f int) {
	l := a.lanes
	a.jobs = append(a.jobs, aheadJob{node: node, word1: word1, at: int32(a.base + 2*l)})
	lo, hi := uint32(node), uint32(uint64(node)>>32)
	for j := range uint32((f + 1) / 2) {
		a.in.setLane(l, [4]uint32{j, word1, lo, hi})
		if l++; l == 8 {
			a.run()
			l = 0
		}
	}
	a.lanes = l
}

// run computes the draws of the counters set in a.in (unused lanes give
// draws no job reads) at a.base.
func (a *drawsAhead) run() {
	if end := a.base + 16; len(a.draws) < end {
		a.draws = append(a.draws, make([]uint64, end-len(a.draws))...)
	}
	a.in.run((*[16]uint64)(a.draws[a.base:]))
	a.base += 16
}

// done computes the last counters added.
func (a *drawsAhead) done() {
	if a.lanes > 0 {
		a.run()
		a.lanes = 0
	}
}

// take returns the draws of node's stream with word 1 word1 when they are
// the next job, else nil.
func (a *drawsAhead) take(node int64, word1 uint32) []uint64 {
	if a.next == len(a.jobs) {
		return nil
	}
	j := a.jobs[a.next]
	if j.node != node || j.word1 != word1 {
		return nil
	}
	a.next++
	return a.draws[j.at:]
}

// plan returns the CSC positions drawn for node at layer under key, and
// the edge type of each, none of those excl names. Weighted, a node with
// no in-edge of positive weight left after excl draws nothing, as DGL's
// sample_neighbors does: an edge mask as --prob keeps held-out edges out
// of every neighbourhood, a node's whole neighbourhood if need be.
func (d *nodeDraws) plan(e inEdges, node int64, key Key, layer int, excl []Exclusion) ([]int64, []int16) {
	d.pos, d.types = d.pos[:0], d.types[:0]
	for t, f := range d.fanouts[layer] {
		if f == 0 {
			continue
		}
		a, b := e.rangeOf(t)
		if a == b {
			continue
		}
		d.skip = d.skip[:0]
		if len(excl) > 0 {
			d.skip = excludedPositions(e, t, excl, d.skip)
		}
		var w []float64
		if d.weighted {
			w = e.weights(t, &d.wbuf)
		}
		start := len(d.pos)
		st := NewStream(key, ForNeighbors, Lane(layer, t), node)
		d.pos = choose(&d.ch, &st, b-a, f, d.replace, w, d.skip, d.pos)
		for k := start; k < len(d.pos); k++ {
			d.pos[k] += a
			d.types = append(d.types, int16(t))
		}
	}
	return d.pos, d.types
}

// excludedPositions appends to skip the positions, relative to the start
// of the type-t range, of the in-edges excl removes: sorted and distinct.
func excludedPositions(e inEdges, t int, excl []Exclusion, skip []int64) []int64 {
	for _, x := range excl {
		if x.EType != t {
			continue
		}
		if x.EID >= 0 {
			// A node's in-edges are in edge ID order.
			if i, found := slices.BinarySearch(e.eids(t), x.EID); found {
				skip = append(skip, int64(i))
			}
			continue
		}
		skip = e.srcPositions(t, x.Src, skip)
	}
	slices.Sort(skip)
	return slices.Compact(skip)
}

// positions appends to pos the CSC positions drawn for inner node local of
// v (global ID node) at layer under key, none of those excl names, and
// their edge types to types.
func (d *nodeDraws) positions(v *view, local, node int64, key Key, layer int, excl []Exclusion, pos []int64, types []int16) ([]int64, []int16) {
	if d.weighted || len(excl) > 0 {
		p, t := d.plan(localNode{v, local, d}, node, key, layer, excl)
		return append(pos, p...), append(types, t...)
	}
	// Uniform draws of a node no exclusion names, plan's choices made
	// straight on the view (no interface calls, nothing to skip): most of
	// the sampler's time.
	for t, f := range d.fanouts[layer] {
		if f == 0 {
			continue
		}
		a, b := v.rangeOf(local, t)
		n := b - a
		if n == 0 {
			continue
		}
		start := len(pos)
		if !d.drawsFor(n, f) {
			for q := a; q < b; q++ {
				pos = append(pos, q)
			}
		} else {
			pos = choosePositions(&d.ch, d.uniformDraws(node, key, layer, t, f), n, d.replace, pos)
			for k := start; k < len(pos); k++ {
				pos[k] += a
			}
		}
		for range len(pos) - start {
			types = append(types, int16(t))
		}
	}
	return pos, types
}

// uniformDraws returns the f uniform draws of node's stream over its
// in-edges of type t at layer under key: those made ahead (drawsAhead)
// when they are the next job taken, else the stream's, computed now in one
// loop of independent Philox calls, which the CPU overlaps, before the
// choice's branches use them (the stream stays on this stack: no
// interface value).
func (d *nodeDraws) uniformDraws(node int64, key Key, layer, t, f int) []uint64 {
	if drawnAhead(f) {
		if draws := d.ahead.take(node, streamWord1(ForNeighbors, Lane(layer, t))); draws != nil {
			return draws[:f]
		}
		d.ahead.missed++
	}
	st := NewStream(key, ForNeighbors, Lane(layer, t), node)
	draws := d.ch.drawBuf(f)
	st.fill(draws)
	return draws
}

// localNode is an inner node of a served partition, as inEdges.
type localNode struct {
	v     *view
	local int64
	d     *nodeDraws // its srcPos
}

func (n localNode) rangeOf(t int) (int64, int64) { return n.v.rangeOf(n.local, t) }

func (n localNode) weights(t int, buf *[]float64) []float64 {
	a, b := n.rangeOf(t)
	return n.v.weights(a, b, buf)
}

func (n localNode) eids(t int) []int64 {
	a, b := n.rangeOf(t)
	return n.v.p.EdgeIDs[a:b]
}

// srcPositions gives the positions scanSrc finds, once per node, type and
// source in a batch (nodeDraws.srcPos).
func (n localNode) srcPositions(t int, src int64, skip []int64) []int64 {
	k := srcKey{v: n.v, local: n.local, src: src, t: t}
	if p, ok := n.d.srcPos[k]; ok {
		return append(skip, p...)
	}
	start := len(skip)
	skip = n.scanSrc(t, src, skip)
	if n.d.srcPos == nil {
		n.d.srcPos = map[srcKey][]int64{}
	}
	n.d.srcPos[k] = slices.Clone(skip[start:])
	return skip
}

// scanSrc finds src among the partition's local nodes once and scans the
// range's local source indices for it: one sequential pass, where
// resolving every in-edge's source to its global ID reads the halo's IDs
// at random (a hub's range is most of a reverse exclusion's cost).
func (n localNode) scanSrc(t int, src int64, skip []int64) []int64 {
	l, ok := n.v.localID(src)
	if !ok {
		return skip // no in-edge of this partition comes from src
	}
	a, b := n.rangeOf(t)
	p := n.v.p
	if p.Indices32 != nil {
		return appendPositionsOf(skip, p.Indices32[a:b], l)
	}
	return appendPositionsOf(skip, p.Indices64[a:b], l)
}

// appendPositionsOf appends to out the positions of xs that hold x.
func appendPositionsOf[T int32 | int64](out []int64, xs []T, x int64) []int64 {
	for i, v := range xs {
		if int64(v) == x {
			out = append(out, int64(i))
		}
	}
	return out
}
