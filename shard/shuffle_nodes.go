package shard

import (
	"gnnrun/collective"
	"gnnrun/graph"
)

// Node shuffle: the rows of every node array (features, labels, masks) go
// from the rank that read them to the rank writing the node's partition,
// with the node's new and original IDs. A rank's nodes of one (partition,
// type) have consecutive new IDs (relabel gives them out in input order),
// so what arrives from one rank in one round is a few runs of consecutive
// rows, each written with one pwrite at its place in the partition's
// array file: node rows never gather in memory beyond one round.

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
// partitions first.. on ranks 0..) and hands what arrives to pw.
func (d *dispatcher) shuffleNodes(pw *partWriter, order []int, first int) error {
	base := d.nodeBase()
	bounds := chunkBounds(len(order), func(k int) int { return 16 + d.nodeRow[typeAt(base, order[k])] }, d.o.budget)
	rounds, err := agreeRounds(d.c, bounds)
	if err != nil {
		return err
	}
	d.res.NodeRounds += rounds
	counts := make([]int, d.P)
	typeCounts := make([][]int, d.T)
	for t := range typeCounts {
		typeCounts[t] = make([]int, d.P)
	}
	recs, recvRecs, rows, recvRows := d.buf.nrecs, d.buf.nrecv, d.buf.rows, d.buf.recv
	defer func() { d.buf.nrecs, d.buf.nrecv, d.buf.rows, d.buf.recv = recs, recvRecs, rows, recvRows }()
	for r := range rounds {
		ch := chunk(order, bounds, r)
		clear(counts)
		for t := range typeCounts {
			clear(typeCounts[t])
		}
		recs = recs[:0]
		for _, x := range ch {
			t := typeAt(base, x)
			i := x - base[t]
			lo, _ := d.g.Nodes.Range(t)
			dst := int(d.a.Parts[t][i]) - first
			counts[dst]++
			typeCounts[t][dst]++
			rec := nodeRec{New: d.newIDs[t][i], Orig: lo + int64(i)}
			recs = append(recs, rec)
			d.sent.nodes.n++
			d.sent.nodes.ids.Add(graph.Mix64(idHash(saltNode, rec.New) ^ uint64(rec.Orig)))
		}
		err = d.comm("nodes", func() (err error) {
			recvRecs, _, err = collective.AlltoallvInto(d.c, recs, counts, recvRecs)
			return err
		})
		if err != nil {
			return err
		}
		if err := pw.acceptNodes(recvRecs); err != nil {
			return err
		}
		for a, arr := range d.nodeArrays {
			rb := arr.data.RowBytes()
			rows = rows[:0]
			byteCounts := make([]int, d.P)
			for k, x := range ch {
				t := typeAt(base, x)
				if t != arr.t {
					continue
				}
				row := arr.data.Row(int64(x - base[t]))
				rows = append(rows, row...)
				byteCounts[int(d.a.Parts[t][x-base[t]])-first] += rb
				d.sent.nodes.rows.Add(arrayRowHash(a, recs[k].New, row))
			}
			d.res.NodeBytes += int64(len(rows))
			err = d.comm("nodes", func() (err error) {
				recvRows, _, err = collective.AlltoallvInto(d.c, rows, byteCounts, recvRows)
				return err
			})
			if err != nil {
				return err
			}
			if err := pw.acceptNodeRows(a, recvRecs, recvRows); err != nil {
				return err
			}
		}
		d.res.NodeBytes += int64(16 * len(recs))
		d.o.progress("nodes", int64(bounds[min(r+1, len(bounds)-1)]), int64(len(order)))
	}
	return nil
}

// arrayRowHash hashes row of array a of node (or edge key) id.
func arrayRowHash(a int, id int64, row []byte) uint64 {
	return graph.Mix64(rowHash(id, row) + uint64(a)*0x9e3779b97f4a7c15)
}
