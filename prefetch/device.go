package prefetch

import (
	"fmt"
	"time"

	"gnnrun/cuda"
)

// deviceBuffer is one of the device stage's buffers: the rows of the last
// batch that used it, in slot order. Batches use the buffers in turn
// (batch k the buffer k mod (DeviceDepth+1)), so the trainer holds one
// while the device stage fills the next; each is updated in place against
// its previous batch — the batch DeviceDepth+1 before, whose overlap with
// a batch drawn from the same epoch is the same as the batch just before's.
type deviceBuffer struct {
	dev     cuda.Device
	buf     cuda.Buffer
	rows    int         // rows in use
	scratch cuda.Buffer // rows in transit when moves overlap
	ident   []int32     // 0, 1, 2, ...: the scratch rows
}

func newDeviceBuffer(dev cuda.Device) *deviceBuffer { return &deviceBuffer{dev: dev} }

// bytes returns the device memory the buffer holds.
func (d *deviceBuffer) bytes() int64 {
	var n int64
	for _, b := range []cuda.Buffer{d.buf, d.scratch} {
		if b != nil {
			n += b.Len()
		}
	}
	return n
}

func (d *deviceBuffer) free() error {
	var first error
	for _, b := range []*cuda.Buffer{&d.buf, &d.scratch} {
		if *b != nil {
			if err := (*b).Free(); err != nil && first == nil {
				first = err
			}
			*b = nil
		}
	}
	return first
}

// ensure makes the buffer hold at least n bytes, keeping its first keep
// bytes; it grows by a quarter beyond n, so growth is rare, and never
// shrinks the memory.
func (d *deviceBuffer) ensure(s cuda.Stream, n, keep int64) error {
	if d.buf != nil && d.buf.Len() >= n {
		return nil
	}
	nb, err := d.dev.Alloc(n + n/4)
	if err != nil {
		return err
	}
	if d.buf != nil {
		if keep > 0 {
			if err := s.CopyDevice(nb, 0, d.buf, 0, keep); err != nil {
				nb.Free()
				return err
			}
		}
		if err := s.Sync(); err != nil {
			nb.Free()
			return err
		}
		d.buf.Free()
	}
	d.buf = nb
	return nil
}

// apply turns the buffer's rows into the batch's: moves within it, rows
// from the hot cache, rows copied from the host. It returns the bytes the
// moves copied on the device.
func (d *deviceBuffer) apply(s cuda.Stream, up *Update, host []byte, rb int, hot *hotCache, zero *zeroRows) (int64, error) {
	rows := max(d.rows, up.Size)
	if err := d.ensure(s, int64(rows)*int64(rb), int64(d.rows)*int64(rb)); err != nil {
		return 0, err
	}
	moved, err := d.move(s, up, rb)
	if err != nil {
		return 0, err
	}
	if err := d.copyIn(s, up, host, rb, hot, zero); err != nil {
		return 0, err
	}
	d.rows = up.Size
	return moved, nil
}

// move applies the update's moves and returns the bytes they copied. The
// moves that read rows other moves write go through scratch rows: their
// sources are copied out first, then the other moves, which read rows no
// move writes, copy directly, then the scratch rows go to their
// destinations. (All of them through scratch, every moved row was copied
// twice: R-MAT 20, one rank, 1.76 GB moved for 1.72 M rows.)
func (d *deviceBuffer) move(s cuda.Stream, up *Update, rb int) (int64, error) {
	n, through := len(up.MovesFrom), up.MovesThrough
	if n == 0 {
		return 0, nil
	}
	if through > 0 {
		if err := d.growScratch(s, int64(through)*int64(rb)); err != nil {
			return 0, fmt.Errorf("prefetch: scratch rows for %d moves: %w", through, err)
		}
		for len(d.ident) < through {
			d.ident = append(d.ident, int32(len(d.ident)))
		}
		if err := s.CopyRows(d.scratch, d.ident[:through], d.buf, up.MovesFrom[:through], rb); err != nil {
			return 0, err
		}
	}
	if through < n {
		if err := s.MoveRows(d.buf, up.MovesFrom[through:], up.MovesTo[through:], rb); err != nil {
			return 0, err
		}
	}
	moved := int64(n+through) * int64(rb)
	if through == 0 {
		return moved, nil
	}
	return moved, s.CopyRows(d.buf, up.MovesTo[:through], d.scratch, d.ident[:through], rb)
}

// growScratch makes the scratch rows at least need bytes.
func (d *deviceBuffer) growScratch(s cuda.Stream, need int64) error {
	if d.scratch != nil && d.scratch.Len() >= need {
		return nil
	}
	if d.scratch != nil {
		if err := s.Sync(); err != nil { // earlier moves may still read it
			return err
		}
		if err := d.scratch.Free(); err != nil {
			return err
		}
		d.scratch = nil
	}
	b, err := d.dev.Alloc(need + need/4)
	if err != nil {
		return err
	}
	d.scratch = b
	return nil
}

// copyIn copies the rows the buffer lacks: from the hot cache, the zero
// row (featureless nodes), the host.
func (d *deviceBuffer) copyIn(s cuda.Stream, up *Update, host []byte, rb int, hot *hotCache, zero *zeroRows) error {
	if len(up.HotSlots) > 0 {
		if err := s.CopyRows(d.buf, up.HotSlots, hot.buf, up.HotRows, rb); err != nil {
			return err
		}
	}
	if len(up.ZeroSlots) > 0 {
		if err := s.CopyRows(d.buf, up.ZeroSlots, zero.buf, zero.rows(len(up.ZeroSlots)), rb); err != nil {
			return err
		}
	}
	if len(up.FetchSlots) > 0 {
		if err := s.ScatterRows(d.buf, up.FetchSlots, host, rb); err != nil {
			return err
		}
	}
	return nil
}

// device applies each gathered batch's update to its buffer, once the
// trainer released the buffer's previous batch, and hands the batch on.
func (l *Loader) device(in chan *gatheredBatch) {
	defer close(l.out)
	for {
		g, ok := receive(l, stageDevice, in)
		if !ok {
			return
		}
		select { // the trainer released this buffer's previous batch
		case <-l.free[g.dev]:
		case <-l.ctx.Done():
			return
		}
		t1 := time.Now()
		b, err := l.copyOne(g)
		l.stats.busy(stageDevice, time.Since(t1))
		if err != nil {
			l.fail(err)
			return
		}
		if !send(l, l.out, b) {
			return
		}
	}
}

// copyOne applies one batch's update, waits until the device has it (the
// device stage's goroutine waits on the stream's event; the trainer, one
// batch behind, is not held up), and makes the trainer's batch.
func (l *Loader) copyOne(g *gatheredBatch) (*Batch, error) {
	if err := l.fault("device"); err != nil {
		return nil, err
	}
	d := l.devs[g.dev]
	before := d.bytes()
	moved, err := d.apply(l.stream, g.up, g.host.rows, l.rowBytes, l.hot, l.zero)
	if err == nil {
		err = l.stream.Sync()
	}
	if err != nil {
		return nil, fmt.Errorf("prefetch: batch %d of epoch %d to the device: %w", g.task.Number, g.task.Epoch, err)
	}
	l.putHostBuffer(g.host)
	l.stats.copied(int64(len(g.up.FetchSlots))*int64(l.rowBytes), moved, d.bytes()-before)
	free := l.free[g.dev]
	b := &Batch{Batch: g.batch, Features: d.buf, Buffer: g.dev, Rows: g.up.Size, RowBytes: l.rowBytes, InputSlots: g.up.SlotOf,
		Kind: l.kindName(g.kind), EndOfEpoch: g.endOfEpoch, LastOfEpoch: g.lastOfEpoch, Seq: g.seq, Reused: g.up.Reused, Hot: g.up.Hot, Fetched: g.up.Fetched, Zero: g.up.Zero, src0: g.src0,
		RowTypes: g.rowTypes, RowTypeIDs: g.rowTypeIDs, Update: g.up, Checkpoint: g.checkpoint, index: g.index}
	b.release = func() { free <- struct{}{} }
	return b, nil
}

// kindName names a batch's kind.
func (l *Loader) kindName(kind int) string {
	if kind == 0 {
		return TrainKind
	}
	return l.o.Eval[kind-1].Name
}
