package shard

import (
	"slices"

	"gnnrun/collective"
	"gnnrun/graph"
)

// Node shuffle: the rows of every node array (features, labels, masks) go
// from the rank that read them to the rank writing the node's partition,
// with the node's new and original IDs. A rank's nodes of one (partition,
// type) have consecutive new IDs (relabel gives them out in input order),
// so what arrives from one rank in one round is a few runs of consecutive
// rows, each written with one pwrite at its place in the partition's
// array file: node rows never gather in memory beyond one round. One
// all-to-all carries the records of a round, one more the rows of all its
// arrays (to each rank: array by array, the rows of the nodes sent there),
// so the ranks meet twice a round whatever the number of arrays.

// nodeRec is a node on the wire: its new global ID and type-wise input ID.
type nodeRec struct{ New, Orig int64 }

// nodeIndex addresses this rank's nodes across types: node x is row
// x - base[t] of type t, where base[t] <= x < base[t+1].
func (d *dispatcher) nodeBase() []int {
	base := make([]int, d.T+1)
	for t := range d.T {
		base[t+1] = base[t] + len(d.newIDs[t])
	}
	return base
}

func typeAt(base []int, x int) int {
	t := 0
	for x >= base[t+1] {
		t++
	}
	return t
}

// nodeOrder returns this rank's nodes grouped by partition, each group in
// type then input order, and the groups' bounds.
func (d *dispatcher) nodeOrder() ([]int, []int) {
	base := d.nodeBase()
	return groupOrder(base[d.T], d.K, func(x int) int {
		t := typeAt(base, x)
		return int(d.a.Parts[t][x-base[t]])
	})
}

// shuffleNodes sends the nodes of one wave (order: grouped by partition,
// partitions first.. on ranks 0.., group g at order[gb[g]:gb[g+1]]),
// staggered by rank, and hands what arrives to pw. The nodes of the rank's
// own partition, last in the staggered order, never enter an all-to-all:
// they are written after the rounds, so no round waits for a rank writing
// its own rows.
func (d *dispatcher) shuffleNodes(pw *partWriter, order []int, gb []int, first int) error {
	base := d.nodeBase()
	plan, err := planWave(d.c, gb, func(p int) int { return 16 + d.nodeRow[typeAt(base, order[p])] }, uniformSize(16, d.nodeRow), d.o.budget)
	if err != nil {
		return err
	}
	st := plan.st
	d.res.NodeRounds += plan.rounds
	counts := make([]int, d.P)
	byteCounts := make([]int, d.P)
	recs, recvRecs, rows, recvRows := d.buf.nrecs, d.buf.nrecv, d.buf.rows, d.buf.recv
	defer func() { d.buf.nrecs, d.buf.nrecv, d.buf.rows, d.buf.recv = recs, recvRecs, rows, recvRows }()
	// pack fills recs and rows with the items [lo, hi) in sending order:
	// records, then rows array by array, each destination's in turn. Rows
	// the rank keeps never move: their checksums are counted as sent and
	// as received at once, not computed again on arrival.
	pack := func(lo, hi int, kept bool) {
		clear(counts)
		clear(byteCounts)
		recs, rows = slices.Grow(recs[:0], plan.longest()), slices.Grow(rows[:0], plan.heaviest)
		for dst := range len(gb) - 1 {
			a, b := st.segment(dst, lo, hi)
			counts[dst] = b - a
			r0 := len(recs)
			for _, x := range order[a:b] {
				t := typeAt(base, x)
				i := x - base[t]
				tlo, _ := d.g.Nodes.Range(t)
				rec := nodeRec{New: d.newIDs[t][i], Orig: tlo + int64(i)}
				recs = append(recs, rec)
				d.sent.nodes.n++
				d.sent.nodes.ids.Add(graph.Mix64(idHash(saltNode, rec.New) ^ uint64(rec.Orig)))
			}
			start := len(rows)
			for ai, arr := range d.nodeArrays {
				for k, x := range order[a:b] {
					if t := typeAt(base, x); t == arr.t {
						row := arr.data.Row(int64(x - base[t]))
						rows = append(rows, row...)
						h := arrayRowHash(ai, recs[r0+k].New, row)
						d.sent.nodes.rows.Add(h)
						if kept {
							d.got.nodes.rows.Add(h)
						}
					}
				}
			}
			byteCounts[dst] = len(rows) - start
		}
		d.res.NodeBytes += int64(16*len(recs) + len(rows))
	}
	for r := range plan.rounds {
		lo, hi := chunkRange(plan.bounds, r)
		pack(lo, hi, false)
		var recCounts, rowCounts []int
		err = d.comm("nodes", func() (err error) {
			if recvRecs, recCounts, err = collective.AlltoallvInto(d.c, recs, counts, recvRecs); err != nil {
				return err
			}
			recvRows, rowCounts, err = collective.AlltoallvInto(d.c, rows, byteCounts, recvRows)
			return err
		})
		if err != nil {
			return err
		}
		if err := pw.acceptNodes(recvRecs); err != nil {
			return err
		}
		if err := pw.acceptRound(recvRecs, recCounts, recvRows, rowCounts, false); err != nil {
			return err
		}
		d.o.progress("nodes", int64(plan.bounds[min(r+1, len(plan.bounds)-1)]), int64(len(order)))
	}
	for r := range len(plan.own) - 1 {
		pack(plan.own[r], plan.own[r+1], true)
		if err := pw.acceptNodes(recs); err != nil {
			return err
		}
		if err := pw.acceptRound(recs, counts, rows, byteCounts, true); err != nil {
			return err
		}
		d.o.progress("nodes", int64(plan.own[r+1]), int64(len(order)))
	}
	return nil
}

// acceptRound writes the rows that came in one round: from each source,
// array by array, the rows of the records it sent (counted: see
// acceptNodeRows).
func (pw *partWriter) acceptRound(recs []nodeRec, recCounts []int, rows []byte, rowCounts []int, counted bool) error {
	var ri, bi int
	for src, n := range recCounts {
		from, seg := recs[ri:ri+n], rows[bi:bi+rowCounts[src]]
		for a := range pw.d.nodeArrays {
			took, err := pw.acceptNodeRows(a, from, seg, counted)
			if err != nil {
				return err
			}
			seg = seg[took:]
		}
		if len(seg) > 0 {
			return errorf("node shuffle: rank %d sent %d bytes more than the rows of its %d nodes", src, len(seg), n)
		}
		ri, bi = ri+n, bi+rowCounts[src]
	}
	return nil
}

// arrayRowHash hashes row of array a of node (or edge key) id.
func arrayRowHash(a int, id int64, row []byte) uint64 {
	return graph.Mix64(rowHash(id, row) + uint64(a)*0x9e3779b97f4a7c15)
}
