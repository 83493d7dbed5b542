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
	dev  cuda.Device
	buf  cuda.Buffer
	rows int // rows in use
}

func newDeviceBuffer(dev cuda.Device) *deviceBuffer { return &deviceBuffer{dev: dev} }

// bytes returns the device memory the buffer holds.
func (d *deviceBuffer) bytes() int64 {
	if d.buf == nil {
		return 0
	}
	return d.buf.Len()
}

func (d *deviceBuffer) free() error {
	if d.buf == nil {
		return nil
	}
	err := d.buf.Free()
	d.buf = nil
	return err
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

// apply turns the buffer's rows into the batch's: relocations (when it
// shrinks), rows from the hot cache, rows copied from the host.
func (d *deviceBuffer) apply(s cuda.Stream, up *Update, host []byte, rb int, hot *hotCache) error {
	rows := max(d.rows, up.Size)
	if err := d.ensure(s, int64(rows)*int64(rb), int64(d.rows)*int64(rb)); err != nil {
		return err
	}
	if len(up.MovesFrom) > 0 {
		if err := s.MoveRows(d.buf, up.MovesFrom, up.MovesTo, rb); err != nil {
			return err
		}
	}
	if len(up.HotSlots) > 0 {
		if err := s.CopyRows(d.buf, up.HotSlots, hot.buf, up.HotRows, rb); err != nil {
			return err
		}
	}
	if len(up.FetchSlots) > 0 {
		if err := s.ScatterRows(d.buf, up.FetchSlots, host, rb); err != nil {
			return err
		}
	}
	d.rows = up.Size
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
	err := d.apply(l.stream, g.up, g.host.rows, l.rowBytes, l.hot)
	if err == nil {
		err = l.stream.Sync()
	}
	if err != nil {
		return nil, fmt.Errorf("prefetch: batch %d of epoch %d to the device: %w", g.task.Number, g.task.Epoch, err)
	}
	l.putHostBuffer(g.host)
	l.stats.copied(int64(len(g.up.FetchSlots))*int64(l.rowBytes), d.bytes()-before)
	free := l.free[g.dev]
	b := &Batch{Batch: g.batch, Features: d.buf, Buffer: g.dev, Rows: g.up.Size, RowBytes: l.rowBytes, InputSlots: g.up.SlotOf,
		Kind: l.kindName(g.kind), EndOfEpoch: g.endOfEpoch, Reused: g.up.Reused, Hot: g.up.Hot, Fetched: g.up.Fetched, src0: g.src0}
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
