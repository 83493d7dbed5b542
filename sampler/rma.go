package sampler

import (
	"encoding/binary"
	"fmt"
	"math"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/rank"
)

// rmaDraws samples remote frontier nodes by one-sided reads of their
// owners' arrays, exposed in MPI windows (one per array and slot, see
// shard.Served.Slot); the owners' CPUs take no part, and no other rank
// waits on this one. Per layer it reads, in rounds of batched gets: each
// remote node's typed indptr entries; the whole in-edge ranges of the
// nodes whose plan needs them (weights, exclusions); then the sources and
// edge IDs at the positions drawn, and the global IDs of halo sources. It
// plans the draws with the same code and inputs as the owner would.
type rmaDraws struct {
	sm                            *Sampler
	stride                        int // typed indptr entries per node: max(edge types, 1)
	wSize                         int // bytes of one weight: 4 or 8
	tptr, idx, l2g, eids, orig, w []rank.Window
	slots                         int
	// scratch of a layer
	ptr   []int64 // per node, its stride+1 typed indptr entries
	full  []*rmaNode
	reads gatherScratch
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
	return r, nil
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
	return first
}

// target is where partition q's arrays are read: a rank and a slot.
func (r *rmaDraws) target(q int) (server, slot int) {
	return r.sm.served.Server(q), r.sm.served.Slot(q)
}

func (r *rmaDraws) draw(epoch int, batch int64, layer int, nodes []int64, parts []int, excl map[int64][]Exclusion, out *edgeList, counts []int32, failed bool) ([]int32, error) {
	if failed || len(nodes) == 0 {
		return counts, nil
	}
	sm := r.sm
	if err := r.readPtrs(nodes, parts); err != nil {
		return nil, err
	}
	if err := r.readRanges(nodes, parts, layer, excl); err != nil {
		return nil, err
	}
	// Plan every node's draws as its owner would.
	key := BatchKey(sm.o.Seed, epoch, batch)
	var at []drawn
	for i, v := range nodes {
		n := r.full[i]
		if n == nil {
			n = &rmaNode{ptr: r.ptr[i*(r.stride+1) : (i+1)*(r.stride+1)]}
		}
		pos, types, err := sm.draws.plan(n, v, key, layer, excl[v])
		if err != nil {
			return nil, fmt.Errorf("%w (partition %d, read by RMA)", err, parts[i])
		}
		for k, q := range pos {
			at = append(at, drawn{node: i, part: parts[i], pos: q, etype: types[k]})
		}
		counts = append(counts, int32(len(pos)))
	}
	if err := r.materialize(at, out); err != nil {
		return nil, err
	}
	sm.stats.Received += r.reads.bytes
	r.reads.bytes = 0
	return counts, nil
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
	size := (r.stride + 1) * 8
	r.ptr = growInt64(r.ptr, len(nodes)*(r.stride+1))
	off := make([]int64, len(nodes))
	for i, v := range nodes {
		lo, _ := book.PartRange(parts[i])
		off[i] = (v - lo) * int64(r.stride) * 8
	}
	return r.reads.gather(r, r.tptr, parts, off, size, graph.AsBytes(r.ptr))
}

// readRanges fetches the whole in-edge ranges (of the types drawn at
// layer) of the nodes whose plan reads more than their ranges: all of
// them when weighted, those named by exclusions otherwise.
func (r *rmaDraws) readRanges(nodes []int64, parts []int, layer int, excl map[int64][]Exclusion) error {
	sm := r.sm
	r.full = r.full[:0]
	for range nodes {
		r.full = append(r.full, nil)
	}
	var gets []rangeGet
	for i, v := range nodes {
		if !sm.draws.weighted && len(excl[v]) == 0 {
			continue
		}
		n := &rmaNode{ptr: r.ptr[i*(r.stride+1) : (i+1)*(r.stride+1)], types: make([]rmaRange, r.stride)}
		r.full[i] = n
		for t, f := range sm.fanouts[layer] {
			a, b := n.rangeOf(t)
			if f == 0 || a == b {
				continue
			}
			tr := &n.types[t]
			tr.eids = make([]int64, b-a)
			gets = append(gets, rangeGet{part: parts[i], win: r.eids, dst: graph.AsBytes(tr.eids), off: a * 8})
			tr.rawIdx = make([]byte, (b-a)*int64(r.indexSize(parts[i])))
			gets = append(gets, rangeGet{part: parts[i], win: r.idx, dst: tr.rawIdx, off: a * int64(r.indexSize(parts[i]))})
			if sm.draws.weighted {
				tr.rawW = make([]byte, (b-a)*int64(r.wSize))
				gets = append(gets, rangeGet{part: parts[i], win: r.w, dst: tr.rawW, off: a * int64(r.wSize)})
			}
		}
	}
	if err := r.getRanges(gets); err != nil {
		return err
	}
	// Sources as global IDs: halo sources need the owner's local2global.
	var halo []*int64
	var haloParts []int
	var haloOff []int64
	for i, n := range r.full {
		if n == nil {
			continue
		}
		lo, hi := sm.served.Book.PartRange(parts[i])
		for t := range n.types {
			tr := &n.types[t]
			if tr.rawIdx == nil {
				continue
			}
			tr.srcs = decodeIndices(tr.rawIdx, r.indexSize(parts[i]))
			tr.w = decodeWeights(tr.rawW, r.wSize)
			for k, l := range tr.srcs {
				if l < hi-lo {
					tr.srcs[k] = lo + l
				} else {
					halo, haloParts, haloOff = append(halo, &tr.srcs[k]), append(haloParts, parts[i]), append(haloOff, l*8)
				}
			}
		}
	}
	return r.resolveHalo(halo, haloParts, haloOff)
}

// materialize reads the sources, edge IDs (and original edge IDs) of the
// positions drawn, and appends the edges to out in order.
func (r *rmaDraws) materialize(at []drawn, out *edgeList) error {
	if len(at) == 0 {
		return nil
	}
	sm := r.sm
	parts := make([]int, len(at))
	off8 := make([]int64, len(at))
	for k, d := range at {
		parts[k], off8[k] = d.part, d.pos*8
	}
	eids := make([]int64, len(at))
	if err := r.reads.gather(r, r.eids, parts, off8, 8, graph.AsBytes(eids)); err != nil {
		return err
	}
	var orig []int64
	if sm.o.OrigEIDs {
		orig = make([]int64, len(at))
		if err := r.reads.gather(r, r.orig, parts, off8, 8, graph.AsBytes(orig)); err != nil {
			return err
		}
	}
	srcs := make([]int64, len(at))
	// Index sizes differ between partitions (int32 or int64): read each
	// size apart, into 8-byte slots, and widen.
	for _, size := range []int{4, 8} {
		var ks []int
		for k, d := range at {
			if r.indexSize(d.part) == size {
				ks = append(ks, k)
			}
		}
		if len(ks) == 0 {
			continue
		}
		ps, offs := make([]int, len(ks)), make([]int64, len(ks))
		for j, k := range ks {
			ps[j], offs[j] = at[k].part, at[k].pos*int64(size)
		}
		raw := make([]byte, len(ks)*size)
		if err := r.reads.gather(r, r.idx, ps, offs, size, raw); err != nil {
			return err
		}
		for j, l := range decodeIndices(raw, size) {
			srcs[ks[j]] = l
		}
	}
	var halo []*int64
	var haloParts []int
	var haloOff []int64
	for k, d := range at {
		lo, hi := sm.served.Book.PartRange(d.part)
		if l := srcs[k]; l < hi-lo {
			srcs[k] = lo + l
		} else {
			halo, haloParts, haloOff = append(halo, &srcs[k]), append(haloParts, d.part), append(haloOff, l*8)
		}
	}
	if err := r.resolveHalo(halo, haloParts, haloOff); err != nil {
		return err
	}
	for k, d := range at {
		out.src = append(out.src, srcs[k])
		out.eid = append(out.eid, eids[k])
		out.etype = append(out.etype, d.etype)
		if orig != nil {
			out.orig = append(out.orig, orig[k])
		}
	}
	return nil
}

// resolveHalo replaces each *ids[k] (a halo local ID of partition parts[k],
// at byte offset off[k] of its local2global) by its global ID.
func (r *rmaDraws) resolveHalo(ids []*int64, parts []int, off []int64) error {
	if len(ids) == 0 {
		return nil
	}
	got := make([]int64, len(ids))
	if err := r.reads.gather(r, r.l2g, parts, off, 8, graph.AsBytes(got)); err != nil {
		return err
	}
	for k, p := range ids {
		*p = got[k]
	}
	return nil
}

// indexSize returns the bytes of one source index of partition q.
func (r *rmaDraws) indexSize(q int) int {
	if r.sm.served.Config.Parts[q].IndexDType == "int32" {
		return 4
	}
	return 8
}

// rangeGet is one variable-length read.
type rangeGet struct {
	part int
	win  []rank.Window
	dst  []byte
	off  int64
}

// getRanges issues the reads and completes them.
func (r *rmaDraws) getRanges(gets []rangeGet) error {
	used := map[rank.Window]bool{}
	for _, g := range gets {
		if len(g.dst) == 0 {
			continue
		}
		server, slot := r.target(g.part)
		w := g.win[slot]
		if err := w.Get(g.dst, server, g.off); err != nil {
			return fmt.Errorf("sampler: rma read of partition %d: %w", g.part, err)
		}
		used[w] = true
		r.reads.bytes += int64(len(g.dst))
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
	eids, srcs   []int64
	w            []float64
	rawIdx, rawW []byte
}

func (n *rmaNode) rangeOf(t int) (int64, int64) { return n.ptr[t], n.ptr[t+1] }

func (n *rmaNode) weights(t int, _ *[]float64) []float64 { return n.types[t].w }

func (n *rmaNode) eids(t int) []int64 { return n.types[t].eids }

func (n *rmaNode) srcAt(t int, i int64) int64 { return n.types[t].srcs[i] }

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
