package shard

import "time"

// Write-behind of node rows: the rows that came in one round of the node
// shuffle are written to their files by a goroutine while the next round
// is packed and exchanged, and the last round's while the edges are
// shuffled. A write that the kernel throttles (dirty pages beyond its
// limit) sleeps in the goroutine instead of stalling the shuffle, so the
// disk and the all-to-all work at the same time. At most one batch is in
// flight: the shuffle alternates between two row buffers, and a buffer is
// filled again only after the batch that wrote it ended.

// rowWrite is one write of consecutive rows of a file, from data or, if
// it is nil, gathered from rows.
type rowWrite struct {
	f    *rowFile
	row  int64
	data []byte
	rows [][]byte
}

func (w rowWrite) do() error {
	if w.rows != nil {
		return w.f.gatherRows(w.row, w.rows)
	}
	return w.f.writeRows(w.row, w.data)
}

// writeBehind runs batches of row writes in the background, one at a time.
type writeBehind struct {
	next []rowWrite // the batch being collected
	done chan error // the batch in flight's outcome; nil when none is
	// waited is the time spent waiting for batches in flight.
	waited time.Duration
}

// add queues a write in the batch being collected. data must stay
// unchanged until the batch has been written (see submit).
func (wb *writeBehind) add(f *rowFile, row int64, data []byte) {
	wb.next = append(wb.next, rowWrite{f: f, row: row, data: data})
}

// addGather queues a write of consecutive rows starting at row from the
// buffers rows, one row each, which must stay unchanged until the batch
// has been written.
func (wb *writeBehind) addGather(f *rowFile, row int64, rows [][]byte) {
	wb.next = append(wb.next, rowWrite{f: f, row: row, rows: rows})
}

// submit waits for the batch in flight, then starts writing the queued
// one. The buffers of the batch that was in flight are free on return;
// those of the batch it starts are free after the next submit or wait.
// It returns the error of the batch it waited for.
func (wb *writeBehind) submit() error {
	if err := wb.wait(); err != nil {
		return err
	}
	if len(wb.next) == 0 {
		return nil
	}
	batch := wb.next
	wb.next = nil
	done := make(chan error, 1)
	wb.done = done
	go func() {
		for _, w := range batch {
			if err := w.do(); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	return nil
}

// wait waits for the batch in flight, if any, and returns its error.
// Queued writes not yet submitted stay queued.
func (wb *writeBehind) wait() error {
	if wb.done == nil {
		return nil
	}
	t0 := time.Now()
	err := <-wb.done
	wb.done = nil
	wb.waited += time.Since(t0)
	return err
}

// flush writes everything queued and waits for it.
func (wb *writeBehind) flush() error {
	if err := wb.submit(); err != nil {
		return err
	}
	return wb.wait()
}
