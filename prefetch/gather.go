package prefetch

import (
	"fmt"

	"gnnrun/shard"
)

// gatheredBatch is a batch with its device update planned and the rows
// the device lacks gathered into one host buffer, in the update's fetch
// order.
type gatheredBatch struct {
	sampled
	up   *Update
	host *hostBuffer
	dev  int     // the device buffer it goes to
	src0 []int32 // block 0's sources before renumbering (Options.Verify)
	// Per device row: its node's type and type ID (several node types).
	rowTypes   []int16
	rowTypeIDs []int64
}

// hostBuffer is a gathered batch's rows; it returns to the pool once
// the device copy that reads it has completed.
type hostBuffer struct {
	rows []byte
}

// gather plans each batch's device update, in order, against the slots its
// device buffer will hold by then (the gather stage keeps that table: the
// device stage applies the updates in the same order), and pulls the rows
// to copy: local ones from this rank's partitions, remote ones over the
// store's transport (collective with alltoall: every rank pulls once per
// batch per node type, in order). The plans and the pulls run side by
// side, one goroutine each, a batch apart: a batch's rows are pulled while
// the next one is classified (on the GPU host's 16 cores the
// classification was about as long as the pull with its copy workers).
func (l *Loader) gather(planned, out chan *gatheredBatch) {
	defer close(out)
	for {
		var g *gatheredBatch
		var ok bool
		select { // the stage's queue is classify's, which receive counts
		case g, ok = <-planned:
		case <-l.ctx.Done():
		}
		if !ok {
			return
		}
		if !step(l, stageGather, out, func() (*gatheredBatch, error) { return g, l.pull(g) }) {
			return
		}
	}
}

// classify is the gather's first half: each batch's classification, in order.
func (l *Loader) classify(from []chan sampled, out chan *gatheredBatch) {
	defer close(out)
	cls := newClassifier()
	pred := make([]Slots, len(l.devs))
	for seq := int64(0); ; seq++ {
		s, ok := receive(l, stageGather, from[seq%int64(len(from))])
		if !ok {
			return
		}
		if !step(l, stageGather, out, func() (*gatheredBatch, error) { return l.planOne(cls, pred, s) }) {
			return
		}
	}
}

// planOne classifies one batch's input nodes against the rows its device
// buffer will hold (pred, which it updates), renumbers the outermost
// block's sources to their rows, and counts the rows.
func (l *Loader) planOne(cls *classifier, pred []Slots, s sampled) (*gatheredBatch, error) {
	if err := l.fault("gather"); err != nil {
		return nil, err
	}
	nodes := s.batch.Blocks[0].Nodes
	dev := int(s.seq % int64(len(pred)))
	prev := pred[dev]
	if l.o.Cache == NoCache {
		prev = nil
	}
	var hot func(int64) (int32, bool)
	if l.hot != nil {
		hot = l.hot.row
	}
	// Block 0's destinations, the first of its nodes, take the first rows.
	up, err := cls.Classify(prev, nodes, s.batch.Blocks[0].NumDst, hot)
	if err != nil {
		return nil, fmt.Errorf("prefetch: batch %d of epoch %d: %w", s.task.Number, s.task.Epoch, err)
	}
	pred[dev] = append(pred[dev][:0], up.After...)
	blank := l.rows.zeroFeatureless(up, nodes, l.served.Book)
	// The outermost block's sources index the device rows from here on;
	// its destinations are rows 0..NumDst-1 already.
	b0 := s.batch.Blocks[0]
	var src0 []int32
	if l.o.Verify {
		src0 = append([]int32(nil), b0.Src...)
	}
	for e, src := range b0.Src {
		b0.Src[e] = up.SlotOf[src]
	}
	l.stats.rows(int64(len(nodes)), int64(up.Reused), int64(up.Hot), int64(up.Fetched), int64(blank), int64(len(up.MovesFrom)), int64(l.rowBytes))
	g := &gatheredBatch{sampled: s, up: up, dev: dev, src0: src0}
	if l.types != nil {
		g.rowTypes, g.rowTypeIDs = l.types.rowTypes(up.After)
	}
	return g, nil
}

// pull gathers the rows a planned batch lacks into a host buffer.
func (l *Loader) pull(g *gatheredBatch) error {
	g.host = l.getHostBuffer(len(g.up.Fetch) * l.rowBytes)
	return l.pullRows(g.batch.Blocks[0].Nodes, g.up.Fetch, g.host.rows)
}

// pullRows pulls the feature rows of nodes[fetch[k]] into rows at k and
// counts where they were found.
func (l *Loader) pullRows(nodes []int64, fetch []int32, rows []byte) error {
	ids := make([]int64, len(fetch))
	for k, i := range fetch {
		ids[k] = nodes[i]
	}
	local, remote, host, err := pullTyped(l.served, l.stores, ids, rows, l.rowBytes)
	l.stats.pulled(local, remote, host)
	return err
}

// pullTyped pulls the feature row of every node of ids into rows (row k
// for ids[k], rows of rowBytes) from the stores, one per node type, and
// returns how many rows were local and remote, and how many of the local
// ones came from partitions other ranks of this host serve. A type's row
// narrower than rowBytes goes at the start of its row, the rest zero; a
// node of a type without a store gets a zero row. It pulls once per store,
// with or without IDs of its type: the alltoall pulls are collective.
func pullTyped(s *shard.Served, stores []*shard.Store, ids []int64, rows []byte, rowBytes int) (local, remote, host int64, err error) {
	rb := int64(rowBytes)
	count := func(before, after shard.StoreStats) {
		local += after.LocalRows - before.LocalRows
		remote += after.RemoteRows - before.RemoteRows
		host += after.HostRows - before.HostRows
	}
	if len(stores) == 1 && stores[0] != nil && stores[0].RowBytes() == rowBytes {
		// One node type whose rows are the buffer's: straight into rows,
		// where a Pull would fill a buffer of its own (fresh pages for
		// every batch) to be copied again.
		st := stores[0]
		before := st.Stats()
		if err := st.PullInto(rows[:int64(len(ids))*rb], ids); err != nil {
			return 0, 0, 0, err
		}
		count(before, st.Stats())
		return local, remote, host, nil
	}
	byType := make([][]int64, len(stores))
	at := make([][]int, len(stores))
	for k, v := range ids {
		t := s.Book.NodeType(v)
		if stores[t] == nil {
			clear(rows[int64(k)*rb : int64(k+1)*rb])
			continue
		}
		byType[t], at[t] = append(byType[t], v), append(at[t], k)
	}
	for t, st := range stores {
		if st == nil {
			continue
		}
		before := st.Stats()
		got, err := st.Pull(byType[t])
		if err != nil {
			return 0, 0, 0, err
		}
		count(before, st.Stats())
		w := int64(st.RowBytes())
		for n, k := range at[t] {
			row := rows[int64(k)*rb : int64(k+1)*rb]
			copy(row, got[int64(n)*w:int64(n+1)*w])
			clear(row[w:])
		}
	}
	return local, remote, host, nil
}

// getHostBuffer returns a buffer of n bytes, reusing a pooled one when it
// is large enough.
func (l *Loader) getHostBuffer(n int) *hostBuffer {
	select {
	case h := <-l.hostPool:
		if cap(h.rows) >= n {
			h.rows = h.rows[:n]
			return h
		}
		l.stats.hostAlloc(-int64(cap(h.rows)))
	default:
	}
	for len(l.spare) > 0 {
		h := l.spare[len(l.spare)-1]
		l.spare = l.spare[:len(l.spare)-1]
		if cap(h.rows) >= n {
			h.rows = h.rows[:n]
			return h
		}
		l.stats.hostAlloc(-int64(cap(h.rows)))
	}
	h := &hostBuffer{rows: make([]byte, n, n+n/8)}
	l.stats.hostAlloc(int64(cap(h.rows)))
	return h
}

// putHostBuffer returns a buffer to the pool, or drops it when the pool
// is full.
func (l *Loader) putHostBuffer(h *hostBuffer) {
	select {
	case l.hostPool <- h:
	default:
		l.stats.hostAlloc(-int64(cap(h.rows)))
	}
}
