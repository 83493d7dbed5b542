package sampler

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/rank"
)

// rmaDraws samples remote frontier nodes by one-sided reads of their
// owners' arrays, exposed in MPI windows (one per array and slot, see
// shard.Served.Slot); the owners' CPUs take no part, and no other rank
// waits on this one. Per layer it reads, in rounds of batched gets: each
// remote node's typed indptr entries; the whole in-edge ranges of the
// nodes whose plan needs them (weights, exclusions); then the entries of
// the owners' edge tables at the positions drawn (global source and edge
// ID in one), with the original edge IDs when asked for. It plans the
// draws with the same code and inputs as the owner would.
type rmaDraws struct {
	sm                            *Sampler
	stride                        int // typed indptr entries per node: max(edge types, 1)
	wSize                         int // bytes of one weight: 4 or 8
	tptr, idx, l2g, eids, orig, w []rank.Window
	// table is every rank's edge table exposed (the same window for every
	// slot), tableBase per partition its first entry in its server's.
	table     []rank.Window
	tableBase []int64
	slots     int
	// scratch of a layer
	ptr   []int64 // per node, its stride+1 typed indptr entries
	full  []*rmaNode
	reads gatherScratch
	asked rmaAsk
	at    []drawn
	// arena holds the bytes a layer's reads land in, from arenaUsed on;
	// each draw starts it over (nothing read outlives the draw).
	arena     []byte
	arenaUsed int
}

// alloc returns n bytes of the arena for a read to fill.
func (r *rmaDraws) alloc(n int) []byte {
	if r.arenaUsed+n > len(r.arena) {
		// The slices already handed out keep the old arena.
		r.arena, r.arenaUsed = make([]byte, max(2*len(r.arena), n, 1<<20)), 0
	}
	b := r.arena[r.arenaUsed : r.arenaUsed+n : r.arenaUsed+n]
	r.arenaUsed += n
	return b
}

// arrays lists the windows of one served partition, in creation order.
func (r *rmaDraws) arrays() []*[]rank.Window {
	out := []*[]rank.Window{&r.tptr, &r.idx, &r.l2g, &r.eids}
	if r.sm.o.OrigEIDs {
		out = append(out, &r.orig)
	}
	if r.sm.draws.weighted {
		out = append(out, &r.w)
	}
	return out
}

// newRMADraws exposes every served partition's arrays; it is collective.
func newRMADraws(sm *Sampler) (*rmaDraws, error) {
	if err := collective.CheckOneSided(sm.c); err != nil {
		return nil, err
	}
	r := &rmaDraws{sm: sm, stride: max(len(sm.served.Config.EdgeTypes), 1), slots: sm.served.Slots()}
	if sm.draws.weighted {
		// Every partition of one input holds its weights alike; agree on
		// the element size all the same, as a reader must know it.
		size := int64(8)
		if len(sm.served.Parts) > 0 && sm.views[sm.served.Parts[0].ID].w32 != nil {
			size = 4
		}
		lo, err := collective.Min(sm.c, size)
		if err != nil {
			return nil, err
		}
		hi, err := collective.Max(sm.c, size)
		if err != nil {
			return nil, err
		}
		if lo != hi {
			return nil, fmt.Errorf("sampler: --prob weights are float32 in some partitions and float64 in others")
		}
		r.wSize = int(hi)
	}
	for slot := range r.slots {
		var v *view
		if slot < len(sm.served.Parts) {
			v = sm.views[sm.served.Parts[slot].ID]
		}
		for k, ws := range r.arrays() {
			var buf []byte
			if v != nil {
				buf = r.exposed(v, k)
			}
			w, err := sm.c.CreateWindow(buf)
			if err != nil {
				r.close()
				return nil, err
			}
			*ws = append(*ws, w)
			if err := w.LockAll(); err != nil {
				r.close()
				return nil, err
			}
		}
	}
	if err := r.exposeTable(); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// exposeTable exposes this rank's edge table, from which a drawn edge's
// global source and edge ID are one read (the partition's arrays take
// two, and a third of local2global for a halo source); it is collective.
func (r *rmaDraws) exposeTable() error {
	sm := r.sm
	k := len(sm.table.base)
	all, _, err := collective.Allgatherv(sm.c, sm.table.base)
	if err != nil {
		return err
	}
	if len(all) != k*sm.c.Size() {
		return fmt.Errorf("sampler: %d edge table bases from %d ranks of %d partitions", len(all), sm.c.Size(), k)
	}
	r.tableBase = make([]int64, k)
	for q := range r.tableBase {
		r.tableBase[q] = all[sm.served.Server(q)*k+q]
	}
	w, err := sm.c.CreateWindow(graph.AsBytes(sm.table.servedWords()))
	if err != nil {
		return err
	}
	r.table = make([]rank.Window, r.slots)
	for slot := range r.table {
		r.table[slot] = w
	}
	return w.LockAll()
}

// exposed returns the bytes of array k (in arrays' order) of view v.
func (r *rmaDraws) exposed(v *view, k int) []byte {
	p := v.p
	switch k {
	case 0:
		return graph.AsBytes(v.tptr)
	case 1:
		if p.Indices32 != nil {
			return graph.AsBytes(p.Indices32)
		}
		return graph.AsBytes(p.Indices64)
	case 2:
		return graph.AsBytes(p.Local2Global)
	case 3:
		return graph.AsBytes(p.EdgeIDs)
	}
	if k == 4 && r.sm.o.OrigEIDs {
		return graph.AsBytes(p.OrigEIDs)
	}
	if v.w32 != nil {
		return graph.AsBytes(v.w32)
	}
	return graph.AsBytes(v.w64)
}

func (r *rmaDraws) close() error {
	var first error
	for _, ws := range r.arrays() {
		for _, w := range *ws {
			if err := w.UnlockAll(); err != nil && first == nil {
				first = err
			}
			if err := w.Free(); err != nil && first == nil {
				first = err
			}
		}
		*ws = nil
	}
	if len(r.table) > 0 {
		if err := r.table[0].UnlockAll(); err != nil && first == nil {
			first = err
		}
		if err := r.table[0].Free(); err != nil && first == nil {
			first = err
		}
		r.table = nil
	}
	return first
}

// target is where partition q's arrays are read: a rank and a slot.
func (r *rmaDraws) target(q int) (server, slot int) {
	return r.sm.served.Server(q), r.sm.served.Slot(q)
}

// ask notes the nodes: their owners take no part, so nothing goes out
// before collect reads them.
func (r *rmaDraws) ask(epoch int, batch int64, layer int, nodes []int64, parts []int, excl *exclusionSet, failed bool) error {
	r.asked = rmaAsk{epoch: epoch, batch: batch, layer: layer, nodes: nodes, parts: parts, excl: excl}
	return nil
}

// rmaAsk is a layer's nodes to read, from ask to collect.
type rmaAsk struct {
	epoch, layer int
	batch        int64
	nodes        []int64
	parts        []int
	excl         *exclusionSet
}

func (r *rmaDraws) collect(out *edgeList, counts []int32, failed bool) ([]int32, error) {
	q := r.asked
	r.asked = rmaAsk{}
	return r.draw(q.epoch, q.batch, q.layer, q.nodes, q.parts, q.excl, out, counts, failed)
}

// draw reads the nodes' edges (see rmaDraws).
func (r *rmaDraws) draw(epoch int, batch int64, layer int, nodes []int64, parts []int, excl *exclusionSet, out *edgeList, counts []int32, failed bool) ([]int32, error) {
	if failed || len(nodes) == 0 {
		return counts, nil
	}
	sm := r.sm
	r.arenaUsed = 0
	if err := r.readPtrs(nodes, parts); err != nil {
		return nil, err
	}
	local, err := r.localExclusions(nodes, parts, excl)
	if err != nil {
		return nil, err
	}
	if err := r.readRanges(nodes, parts, layer, local); err != nil {
		return nil, err
	}
	// Plan every node's draws as its owner would (sources compared as the
	// owner's local IDs, see localExclusions).
	key := BatchKey(sm.o.Seed, epoch, batch)
	at := r.at[:0]
	for i, v := range nodes {
		n := r.full[i]
		if n == nil {
			n = &rmaNode{ptr: r.ptr[i*(r.stride+1) : (i+1)*(r.stride+1)]}
		}
		pos, types := sm.draws.plan(n, v, key, layer, local[i])
		for k, q := range pos {
			at = append(at, drawn{node: i, part: parts[i], pos: q, etype: types[k]})
		}
		counts = append(counts, int32(len(pos)))
	}
	r.at = at
	if err := r.materialize(at, out); err != nil {
		return nil, err
	}
	sm.stats.Received += r.reads.bytes
	r.reads.bytes = 0
	return counts, nil
}

// localExclusions returns each node's exclusions with the sources of
// reverse exclusions turned into the owner partition's local IDs (what an
// RMA reader holds of a range without resolving every halo source); an
// exclusion whose source is no local node of the partition removes
// nothing and is dropped. The halo nodes of a partition are numbered in
// ascending global ID, so a source is found by binary search over the
// owner's local2global, all searches in lockstep rounds of reads.
func (r *rmaDraws) localExclusions(nodes []int64, parts []int, excl *exclusionSet) ([][]Exclusion, error) {
	book := r.sm.served.Book
	out := make([][]Exclusion, len(nodes))
	type query struct{ node, k int }
	var qs []query
	var qparts []int
	var qids []int64
	for i, v := range nodes {
		xs := excl.of(v)
		if len(xs) == 0 {
			continue
		}
		out[i] = append([]Exclusion(nil), xs...)
		lo, hi := book.PartRange(parts[i])
		for k, x := range out[i] {
			switch {
			case x.EID >= 0:
			case x.Src >= lo && x.Src < hi:
				out[i][k].Src = x.Src - lo
			default:
				qs, qparts, qids = append(qs, query{i, k}), append(qparts, parts[i]), append(qids, x.Src)
			}
		}
	}
	found, err := r.haloLocal(qparts, qids)
	if err != nil {
		return nil, err
	}
	for j, q := range qs {
		out[q.node][q.k].Src = found[j] // -1 matches no local ID
	}
	return out, nil
}

// haloLocal returns, for each ids[j], its local ID among the halo nodes of
// partition parts[j], or -1.
func (r *rmaDraws) haloLocal(parts []int, ids []int64) ([]int64, error) {
	lo, hi := make([]int64, len(ids)), make([]int64, len(ids))
	for j, q := range parts {
		pf := r.sm.served.Config.Parts[q]
		lo[j], hi[j] = pf.InnerNodes, pf.InnerNodes+pf.HaloNodes
	}
	for {
		var act []int
		var ps []int
		var offs []int64
		for j := range ids {
			if lo[j] < hi[j] {
				act, ps, offs = append(act, j), append(ps, parts[j]), append(offs, 8*((lo[j]+hi[j])/2))
			}
		}
		if len(act) == 0 {
			break
		}
		got := make([]int64, len(act))
		if err := r.reads.gather(r, r.l2g, ps, offs, 8, graph.AsBytes(got)); err != nil {
			return nil, err
		}
		for n, j := range act {
			if mid := (lo[j] + hi[j]) / 2; got[n] < ids[j] {
				lo[j] = mid + 1
			} else {
				hi[j] = mid
			}
		}
	}
	// lo is where the ID would be; check that it is there.
	out := make([]int64, len(ids))
	var act []int
	var ps []int
	var offs []int64
	for j := range ids {
		out[j] = -1
		if pf := r.sm.served.Config.Parts[parts[j]]; lo[j] < pf.InnerNodes+pf.HaloNodes {
			act, ps, offs = append(act, j), append(ps, parts[j]), append(offs, 8*lo[j])
		}
	}
	got := make([]int64, len(act))
	if err := r.reads.gather(r, r.l2g, ps, offs, 8, graph.AsBytes(got)); err != nil {
		return nil, err
	}
	for n, j := range act {
		if got[n] == ids[j] {
			out[j] = lo[j]
		}
	}
	return out, nil
}

// drawn is an edge drawn for a remote node: its CSC position in the
// node's partition.
type drawn struct {
	node  int
	part  int
	pos   int64
	etype int16
}

// readPtrs reads each node's stride+1 typed indptr entries into r.ptr.
func (r *rmaDraws) readPtrs(nodes []int64, parts []int) error {
	book := r.sm.served.Book
	w := int64(r.stride + 1) // entries a node reads
	r.ptr = growInt64(r.ptr, len(nodes)*int(w))
	first := make([]int64, len(nodes)) // each node's first entry in its partition's array
	order := make([]int32, len(nodes))
	for i, v := range nodes {
		lo, _ := book.PartRange(parts[i])
		first[i], order[i] = (v-lo)*int64(r.stride), int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(parts[a], parts[b]); c != 0 {
			return c
		}
		return cmp.Compare(first[a], first[b])
	})
	var spans []posSpan
	spanOf := make([]int32, len(nodes))
	for _, i := range order {
		n := len(spans)
		if n > 0 && spans[n-1].part == parts[i] && first[i]-spans[n-1].end() < ptrGap {
			spans[n-1].n = int(max(spans[n-1].end(), first[i]+w) - spans[n-1].start)
		} else {
			spans = append(spans, posSpan{part: parts[i], start: first[i], n: int(w)})
		}
		spanOf[i] = int32(len(spans) - 1)
	}
	arrays := []spanRead{{win: r.tptr, size: func(int) int { return 8 }}}
	if err := r.readSpans(arrays, spans); err != nil {
		return err
	}
	for i := range nodes {
		sp := spans[spanOf[i]]
		raw := arrays[0].raw[spanOf[i]][(first[i]-sp.start)*8:]
		for j := range w {
			r.ptr[int64(i)*w+j] = int64(binary.LittleEndian.Uint64(raw[8*j:]))
		}
	}
	return nil
}

// ptrGap is the distance in indptr entries below which the entries of two
// remote nodes of a partition are read in one span: the nodes of a layer
// asked of a partition lie a few entries apart, and a block of a get costs
// microseconds where the bytes between them cost next to nothing (R-MAT
// 20, 2 ranks: 10.2-11.1 us per remote node reading each node's entries
// as a block, 8.0-8.9 with a gap of 64 entries, 7.5-8.1 with 512).
const ptrGap = 512

// readRanges fetches, for the nodes whose plan reads more than their
// ranges, what it reads of the whole ranges of the types drawn at layer:
// the weights when weighted, the edge IDs when an exclusion names an edge,
// the sources (as the owner's local IDs) when one names a source.
func (r *rmaDraws) readRanges(nodes []int64, parts []int, layer int, excl [][]Exclusion) error {
	sm := r.sm
	r.full = r.full[:0]
	for range nodes {
		r.full = append(r.full, nil)
	}
	var gets []rangeGet
	for i := range nodes {
		byEID, bySrc := false, false
		for _, x := range excl[i] {
			byEID, bySrc = byEID || x.EID >= 0, bySrc || x.EID < 0
		}
		if !sm.draws.weighted && !byEID && !bySrc {
			continue
		}
		n := &rmaNode{ptr: r.ptr[i*(r.stride+1) : (i+1)*(r.stride+1)], types: make([]rmaRange, r.stride)}
		r.full[i] = n
		is := int64(r.indexSize(parts[i]))
		for t, f := range sm.fanouts[layer] {
			a, b := n.rangeOf(t)
			if f == 0 || a == b {
				continue
			}
			tr := &n.types[t]
			if byEID {
				gets = append(gets, rangeGet{part: parts[i], win: r.eids, off: a * 8, n: int(b-a) * 8, into: &tr.rawEIDs})
			}
			if bySrc {
				gets = append(gets, rangeGet{part: parts[i], win: r.idx, off: a * is, n: int((b - a) * is), into: &tr.rawIdx})
			}
			if sm.draws.weighted {
				gets = append(gets, rangeGet{part: parts[i], win: r.w, off: a * int64(r.wSize), n: int(b-a) * r.wSize, into: &tr.rawW})
			}
		}
	}
	if err := r.getRanges(gets); err != nil {
		return err
	}
	for i, n := range r.full {
		if n == nil {
			continue
		}
		for t := range n.types {
			tr := &n.types[t]
			tr.eids = decodeIndices(tr.rawEIDs, 8)
			tr.srcs = decodeIndices(tr.rawIdx, r.indexSize(parts[i]))
			tr.w = decodeWeights(tr.rawW, r.wSize)
		}
	}
	return nil
}

// materialize reads the sources and edge IDs (one entry of the owner's
// edge table) and the original edge IDs of the positions drawn, and
// appends the edges to out in order. A node's
// distinct positions come in ascending order; those less than spanGap
// apart are read as one span, one block of a read: a node with up to a
// few hundred in-edges costs one block per array, not one per edge drawn
// (a block of an MPI get costs microseconds, a few hundred bytes more in
// it do not: at scale 20, 2 ranks, a gap of 1, 8, 32, 64, 256 gave 37,
// 32, 26, 24, 21 µs per remote node, 1024 and 4096 no better than 256
// beyond the noise).
// The arrays' reads go out together and complete in one flush.
func (r *rmaDraws) materialize(at []drawn, out *edgeList) error {
	if len(at) == 0 {
		return nil
	}
	sm := r.sm
	// Distinct positions, in order, and the spans that cover them.
	slot := make([]int, len(at)) // per drawn edge, its distinct position
	var upos []int64
	var spanOf []int32 // per distinct position, its span
	var spans []posSpan
	for k, d := range at {
		if k > 0 && at[k-1].node == d.node && at[k-1].pos == d.pos {
			slot[k] = slot[k-1]
			continue
		}
		slot[k] = len(upos)
		n := len(spans)
		if n > 0 && at[k-1].node == d.node && d.pos >= spans[n-1].start && d.pos-spans[n-1].end() < spanGap {
			spans[n-1].n = int(max(spans[n-1].end(), d.pos+1) - spans[n-1].start)
		} else {
			spans = append(spans, posSpan{part: d.part, start: d.pos, n: 1})
		}
		upos, spanOf = append(upos, d.pos), append(spanOf, int32(len(spans)-1))
	}
	entry := 8
	if sm.table.wide {
		entry = 16
	}
	arrays := []spanRead{{win: r.table, size: func(int) int { return entry }, base: r.tableBase}}
	if sm.o.OrigEIDs {
		arrays = append(arrays, spanRead{win: r.orig, size: func(int) int { return 8 }})
	}
	if err := r.readSpans(arrays, spans); err != nil {
		return err
	}
	srcs, eids := arrays[0].entries(sm.table, spans, spanOf, upos)
	var orig []int64
	if sm.o.OrigEIDs {
		orig = arrays[1].pick(spans, spanOf, upos)
	}
	for k, d := range at {
		u := slot[k]
		out.src = append(out.src, srcs[u])
		out.eid = append(out.eid, eids[u])
		out.etype = append(out.etype, d.etype)
		if orig != nil {
			out.orig = append(out.orig, orig[u])
		}
	}
	return nil
}

// spanGap is the distance in positions below which two positions of a
// node drawn are read in one span.
const spanGap = 256

// posSpan is n consecutive CSC positions of a partition from start.
type posSpan struct {
	part  int
	start int64
	n     int
}

func (s posSpan) end() int64 { return s.start + int64(s.n) }

// spanRead is the read of one array at every span: its windows, its
// element size per partition, the element where each partition starts
// (nil: 0), and the bytes read per span.
type spanRead struct {
	win  []rank.Window
	size func(part int) int
	base []int64
	raw  [][]byte
}

// readSpans reads every array at every span, all in one round.
func (r *rmaDraws) readSpans(arrays []spanRead, spans []posSpan) error {
	var gets []rangeGet
	for j := range arrays {
		a := &arrays[j]
		a.raw = make([][]byte, len(spans))
		for k, sp := range spans {
			es, first := a.size(sp.part), sp.start
			if a.base != nil {
				first += a.base[sp.part]
			}
			gets = append(gets, rangeGet{part: sp.part, win: a.win, off: first * int64(es), n: sp.n * es, into: &a.raw[k]})
		}
	}
	return r.getRanges(gets)
}

// pick returns the array's element at every distinct position, widened
// to int64.
func (a *spanRead) pick(spans []posSpan, spanOf []int32, upos []int64) []int64 {
	out := make([]int64, len(upos))
	for u, q := range upos {
		sp := spans[spanOf[u]]
		raw, i := a.raw[spanOf[u]], q-sp.start
		if a.size(sp.part) == 4 {
			out[u] = int64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
		} else {
			out[u] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	}
	return out
}

// entries returns the global sources and edge IDs of the edge table
// entries read at every distinct position.
func (a *spanRead) entries(t *edgeTable, spans []posSpan, spanOf []int32, upos []int64) (srcs, eids []int64) {
	srcs, eids = make([]int64, len(upos)), make([]int64, len(upos))
	for u, q := range upos {
		raw, i := a.raw[spanOf[u]], q-spans[spanOf[u]].start
		if t.wide {
			srcs[u], eids[u] = int64(binary.LittleEndian.Uint64(raw[16*i:])), int64(binary.LittleEndian.Uint64(raw[16*i+8:]))
			continue
		}
		w := binary.LittleEndian.Uint64(raw[8*i:])
		srcs[u], eids[u] = int64(w>>t.shift), int64(w&t.mask)
	}
	return srcs, eids
}

// indexSize returns the bytes of one source index of partition q.
func (r *rmaDraws) indexSize(q int) int {
	if r.sm.served.Config.Parts[q].IndexDType == "int32" {
		return 4
	}
	return 8
}

// rangeGet is one variable-length read: n bytes at off of one array of
// partition part (the array's windows, win, per slot), into a slice *into
// gets.
type rangeGet struct {
	part int
	win  []rank.Window
	off  int64
	n    int
	into *[]byte
}

// arrayOf names an array by its windows: the windows of one slot are
// distinct for distinct arrays.
func arrayOf(win []rank.Window) rank.Window { return win[0] }

// getRanges issues the reads, one operation per array and target, each
// into one buffer of its own, completes them, and hands every read its
// part of the buffer.
func (r *rmaDraws) getRanges(gets []rangeGet) error {
	type group struct {
		array        rank.Window
		server, slot int
	}
	var order []group
	wins := map[rank.Window][]rank.Window{}
	members := map[group][]int{}
	for k, g := range gets {
		if g.n == 0 {
			*g.into = []byte{}
			continue
		}
		server, slot := r.target(g.part)
		key := group{arrayOf(g.win), server, slot}
		wins[key.array] = g.win
		if _, seen := members[key]; !seen {
			order = append(order, key)
		}
		members[key] = append(members[key], k)
	}
	used := map[rank.Window]bool{}
	for _, key := range order {
		ks := members[key]
		dst, src, sizes := make([]int64, len(ks)), make([]int64, len(ks)), make([]int, len(ks))
		total := 0
		for j, k := range ks {
			dst[j], src[j], sizes[j] = int64(total), gets[k].off, gets[k].n
			total += gets[k].n
		}
		buf := r.alloc(total)
		w := wins[key.array][key.slot]
		if err := w.GetRanges(buf, dst, key.server, src, sizes); err != nil {
			return fmt.Errorf("sampler: rma read of rank %d: %w", key.server, err)
		}
		used[w] = true
		for j, k := range ks {
			*gets[k].into = buf[dst[j] : dst[j]+int64(sizes[j])]
		}
		r.reads.bytes += int64(total)
	}
	for w := range used {
		if err := w.FlushAll(); err != nil {
			return fmt.Errorf("sampler: rma flush: %w", err)
		}
	}
	return nil
}

// gatherScratch batches fixed-size reads per target.
type gatherScratch struct {
	src, dst [][]int64
	bytes    int64
}

// gather reads size bytes at byte offset off[i] of array wins of
// partition parts[i] into mem[i*size:], one operation per (rank, slot).
func (g *gatherScratch) gather(r *rmaDraws, wins []rank.Window, parts []int, off []int64, size int, mem []byte) error {
	n := r.sm.c.Size() * r.slots
	if len(g.src) < n {
		g.src, g.dst = make([][]int64, n), make([][]int64, n)
	}
	for k := range n {
		g.src[k], g.dst[k] = g.src[k][:0], g.dst[k][:0]
	}
	for i, q := range parts {
		server, slot := r.target(q)
		k := server*r.slots + slot
		g.src[k] = append(g.src[k], off[i])
		g.dst[k] = append(g.dst[k], int64(i*size))
	}
	for k := range n {
		if len(g.src[k]) == 0 {
			continue
		}
		if err := wins[k%r.slots].GetBlocks(mem, g.dst[k], k/r.slots, g.src[k], size); err != nil {
			return fmt.Errorf("sampler: rma read: %w", err)
		}
	}
	for _, w := range wins {
		if err := w.FlushAll(); err != nil {
			return fmt.Errorf("sampler: rma flush: %w", err)
		}
	}
	g.bytes += int64(len(parts) * size)
	return nil
}

// rmaNode is a remote node's in-edges as read: its typed indptr entries
// and, when fetched, the whole range of each type.
type rmaNode struct {
	ptr   []int64 // stride+1 entries
	types []rmaRange
}

// rmaRange is one type's in-edges of a remote node.
type rmaRange struct {
	eids, srcs            []int64
	w                     []float64
	rawEIDs, rawIdx, rawW []byte
}

func (n *rmaNode) rangeOf(t int) (int64, int64) { return n.ptr[t], n.ptr[t+1] }

func (n *rmaNode) weights(t int, _ *[]float64) []float64 { return n.types[t].w }

func (n *rmaNode) eids(t int) []int64 { return n.types[t].eids }

func (n *rmaNode) srcPositions(t int, src int64, skip []int64) []int64 {
	for i, s := range n.types[t].srcs {
		if s == src {
			skip = append(skip, int64(i))
		}
	}
	return skip
}

// decodeIndices widens little-endian indices of size bytes to int64.
func decodeIndices(raw []byte, size int) []int64 {
	out := make([]int64, len(raw)/size)
	for i := range out {
		if size == 4 {
			out[i] = int64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
		} else {
			out[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	}
	return out
}

// decodeWeights converts little-endian float32 or float64 weights to
// float64, as the view does (nil stays nil).
func decodeWeights(raw []byte, size int) []float64 {
	if raw == nil {
		return nil
	}
	out := make([]float64, len(raw)/size)
	for i := range out {
		if size == 4 {
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
		} else {
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	}
	return out
}

func growInt64(s []int64, n int) []int64 {
	if cap(s) < n {
		return make([]int64, n)
	}
	return s[:n]
}
