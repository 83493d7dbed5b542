package shard

import (
	"math"
	"slices"

	"gnnrun/collective"
	"gnnrun/graph"
)

// Edge shuffle: every edge goes to the partition of its destination node
// (DGL's rule: a partition holds all in-edges of its inner nodes, so
// sampling a node's neighbours is local to its owner), with its data rows.
// On the wire an edge is its new endpoints and a key holding its type and
// type-wise input ID; its rows follow in a second all-to-all, the arrays of
// its type concatenated in name order.

// edgeRec is an edge on the wire.
type edgeRec struct {
	Src, Dst int64
	Key      int64 // type<<keyShift | type-wise input edge ID
}

// keyShift leaves 47 bits for type-wise edge IDs.
const keyShift = 48

func edgeKey(t int16, id int64) int64 { return int64(t)<<keyShift | id }

func keyType(k int64) int16 { return int16(k >> keyShift) }

func keyID(k int64) int64 { return k & (1<<keyShift - 1) }

// saltEdge salts the hashes of edges.
const saltEdge = 0x65646765

// edgeHash hashes an edge's key and endpoints.
func edgeHash(r edgeRec) uint64 {
	return graph.Mix64(graph.Mix64(uint64(r.Key)^saltEdge^uint64(r.Src)*0x9e3779b97f4a7c15) ^ uint64(r.Dst)*0xc2b2ae3d27d4eb4f)
}

// edgeArraysOf returns, per edge type, the indices of its arrays in
// d.edgeArrays.
func (d *dispatcher) edgeArraysOf() [][]int {
	out := make([][]int, d.E)
	for a, arr := range d.edgeArrays {
		out[arr.t] = append(out[arr.t], a)
	}
	return out
}

// edgeOrder is this rank's edges grouped by partition (stable), as int32
// indices when they fit (half the memory), and the groups' bounds.
type edgeOrder struct {
	small  []int32
	large  []int64
	bounds []int
}

func (d *dispatcher) edgeOrder() *edgeOrder {
	n := d.g.Edges.Len()
	o := &edgeOrder{bounds: make([]int, d.K+1)}
	for _, p := range d.epart {
		o.bounds[p+1]++
	}
	for p := range d.K {
		o.bounds[p+1] += o.bounds[p]
	}
	next := append([]int(nil), o.bounds[:d.K]...)
	if n <= math.MaxInt32 {
		o.small = make([]int32, n)
		for k, p := range d.epart {
			o.small[next[p]] = int32(k)
			next[p]++
		}
	} else {
		o.large = make([]int64, n)
		for k, p := range d.epart {
			o.large[next[p]] = int64(k)
			next[p]++
		}
	}
	return o
}

// at returns the i-th edge in partition order.
func (o *edgeOrder) at(i int) int {
	if o.small != nil {
		return int(o.small[i])
	}
	return int(o.large[i])
}

// shuffleEdges sends this rank's edges of the wave of partitions [first,
// last) (positions [a, b) of the order, grouped by destination), staggered
// by rank, in rounds, and hands what arrives to pw. Like the nodes, the
// edges of the rank's own partition skip the rounds.
func (d *dispatcher) shuffleEdges(pw *partWriter, o *edgeOrder, first, last int) error {
	e := d.g.Edges
	a := o.bounds[first]
	gb := waveGroups(o.bounds, first, last)
	plan, err := planWave(d.c, gb, func(p int) int { return 24 + d.edgeRow[e.TypeOf(o.at(a+p))] }, uniformSize(24, d.edgeRow), d.o.budget)
	if err != nil {
		return err
	}
	st := plan.st
	d.res.EdgeRounds += plan.rounds
	arraysOf := d.edgeArraysOf()
	counts := make([]int, d.P)
	byteCounts := make([]int, d.P)
	recs, recvRecs, rows, recvRows := d.buf.erecs, d.buf.erecv, d.buf.rows, d.buf.recv
	defer func() { d.buf.erecs, d.buf.erecv, d.buf.rows, d.buf.recv = recs, recvRecs, rows, recvRows }()
	// pack fills recs and rows with the edges [lo, hi) in sending order,
	// each destination's in turn. The checksums of edges the rank keeps
	// are counted as sent and as received at once (they never move).
	pack := func(lo, hi int, kept bool) {
		clear(counts)
		clear(byteCounts)
		recs, rows = slices.Grow(recs[:0], plan.longest()), rows[:0]
		if len(d.edgeArrays) > 0 {
			rows = slices.Grow(rows, plan.heaviest)
		}
		for dst := range len(gb) - 1 {
			sa, sb := st.segment(dst, lo, hi)
			for i := a + sa; i < a+sb; i++ {
				k := o.at(i)
				t := e.TypeOf(k)
				rec := edgeRec{Src: e.Src[k], Dst: e.Dst[k], Key: edgeKey(t, e.ID[k])}
				counts[dst]++
				byteCounts[dst] += d.edgeRow[t]
				recs = append(recs, rec)
				d.sent.edges.n++
				h := edgeHash(rec)
				d.sent.edges.ids.Add(h)
				if kept {
					d.got.edges.ids.Add(h)
				}
				for _, ai := range arraysOf[t] {
					row := d.edgeArrays[ai].data.Row(int64(k))
					rows = append(rows, row...)
					h := arrayRowHash(ai, rec.Key, row)
					d.sent.edges.rows.Add(h)
					if kept {
						d.got.edges.rows.Add(h)
					}
				}
			}
		}
		d.res.EdgeBytes += int64(24*len(recs) + len(rows))
	}
	for r := range plan.rounds {
		lo, hi := chunkRange(plan.bounds, r)
		pack(lo, hi, false)
		err := d.comm("edges", func() (err error) {
			if recvRecs, _, err = collective.AlltoallvInto(d.c, recs, counts, recvRecs); err != nil {
				return err
			}
			recvRows = recvRows[:0]
			if len(d.edgeArrays) > 0 {
				recvRows, _, err = collective.AlltoallvInto(d.c, rows, byteCounts, recvRows)
			}
			return err
		})
		if err != nil {
			return err
		}
		if err := pw.acceptEdges(recvRecs, recvRows, arraysOf, false); err != nil {
			return err
		}
		d.o.progress("edges", int64(a+hi), int64(e.Len()))
	}
	for r := range len(plan.own) - 1 {
		pack(plan.own[r], plan.own[r+1], true)
		if err := pw.acceptEdges(recs, rows, arraysOf, true); err != nil {
			return err
		}
		d.o.progress("edges", int64(a+plan.own[r+1]), int64(e.Len()))
	}
	return nil
}
