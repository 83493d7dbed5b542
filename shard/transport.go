package shard

import (
	"gnnrun/collective"
	"gnnrun/rank"
)

// pullRMA reads the remote rows with one-sided gets: for each holder and
// slot, one operation whose datatypes list every row's place at the holder
// and in dst, so the ~4 µs an MPI_Get costs is paid per holder, not per
// row.
func (s *Store) pullRMA(dst []byte, rem []remote) error {
	rb := int64(s.rowBytes)
	slots := len(s.wins)
	sc := &s.scratch
	// Targets are (holder, slot) pairs, numbered holder*slots+slot.
	n := s.c.Size() * slots
	if len(sc.src) < n {
		sc.src, sc.dst = make([][]int64, n), make([][]int64, n)
	}
	for k := range n {
		sc.src[k], sc.dst[k] = sc.src[k][:0], sc.dst[k][:0]
	}
	for _, r := range rem {
		k := r.server*slots + s.served.Slot(r.part)
		sc.src[k] = append(sc.src[k], r.row*rb)
		sc.dst[k] = append(sc.dst[k], int64(r.at)*rb)
	}
	for k := range n {
		if len(sc.src[k]) == 0 {
			continue
		}
		if err := s.wins[k%slots].GetBlocks(dst, sc.dst[k], k/slots, sc.src[k], s.rowBytes); err != nil {
			return errorf("store %s: %v", s.what, err)
		}
	}
	for _, w := range s.wins {
		if err := w.FlushAll(); err != nil {
			return errorf("store %s: %v", s.what, err)
		}
	}
	return nil
}

// pullAlltoall fetches the remote rows in steps: each rank sends the row
// numbers it wants to their holders, which answer with the rows. Every
// rank runs as many steps as the rank with the most rows to fetch; a step
// brings at most budget bytes to each rank. bad, a request error found on
// this rank, is reported after the ranks agree, so none is left waiting.
func (s *Store) pullAlltoall(dst []byte, rem []remote, bad error) error {
	n := s.c.Size()
	rb := int64(s.rowBytes)
	perStep := max(1, s.budget/max(s.rowBytes, 1))
	failed := int64(0)
	if bad != nil {
		failed = 1
	}
	agreed, err := collective.Allreduce(s.c, []int64{int64((len(rem) + perStep - 1) / perStep), failed}, rank.Max)
	if err != nil {
		return err
	}
	if agreed[1] > 0 {
		if bad != nil {
			return bad
		}
		return errorf("store %s: another rank's Pull failed", s.what)
	}
	// Order the requests by holder (stable, by counting), so each step's
	// share goes out as one message per holder.
	sc := &s.scratch
	sc.counts, sc.next = grow(sc.counts, n), grow(sc.next, n)
	clear(sc.counts)
	for _, r := range rem {
		sc.counts[r.server]++
	}
	at := 0
	for j, c := range sc.counts {
		sc.next[j] = at
		at += c
	}
	sc.rows, sc.order = grow(sc.rows, len(rem)), grow(sc.order, len(rem))
	sorted, order := sc.rows, sc.order // rows asked for and requests, by holder
	for k, r := range rem {
		order[sc.next[r.server]] = k
		sorted[sc.next[r.server]] = rowKey(r.part, r.row)
		sc.next[r.server]++
	}
	counts := sc.next // reused: per-holder counts of one step
	for st := range agreed[0] {
		a, b := min(int(st)*perStep, len(rem)), min(int(st+1)*perStep, len(rem))
		clear(counts)
		for _, k := range order[a:b] {
			counts[rem[k].server]++
		}
		var askedCounts []int
		if sc.asked, askedCounts, err = collective.AlltoallvInto(s.c, sorted[a:b], counts, sc.asked); err != nil {
			return err
		}
		sc.reply = grow(sc.reply, len(sc.asked)*s.rowBytes)
		if err := s.answer(sc.asked, sc.reply); err != nil {
			return err
		}
		for j := range askedCounts {
			askedCounts[j] *= s.rowBytes
		}
		if sc.got, _, err = collective.AlltoallvInto(s.c, sc.reply, askedCounts, sc.got); err != nil {
			return err
		}
		step := order[a:b]
		s.inRanges(len(step), s.copySplit(len(step)), func(_, lo, hi int) {
			for i, k := range step[lo:hi] {
				at, from := int64(rem[k].at)*rb, int64(lo+i)*rb
				copy(dst[at:at+rb], sc.got[from:from+rb])
			}
		})
		s.stats.Steps++
	}
	return nil
}

// answer copies the rows asked (row keys) into reply, in order, split over
// the copy workers, or fails on a row this rank does not hold.
func (s *Store) answer(asked []int64, reply []byte) error {
	rb := int64(s.rowBytes)
	w := s.copySplit(len(asked))
	bads := make([]error, w)
	s.inRanges(len(asked), w, func(k, lo, hi int) {
		for i, key := range asked[lo:hi] {
			part, r := splitRowKey(key)
			var data []byte
			if part < len(s.local) {
				data = s.local[part]
			}
			if r < 0 || (r+1)*rb > int64(len(data)) {
				bads[k] = errorf("store %s: asked for row %d of partition %d, which has %d here", s.what, r, part, int64(len(data))/max(rb, 1))
				return
			}
			at := int64(lo+i) * rb
			copy(reply[at:at+rb], data[r*rb:(r+1)*rb])
		}
	})
	for _, err := range bads {
		if err != nil {
			return err
		}
	}
	return nil
}

// A row asked for by the all-to-all transport travels as one int64: its
// partition in the top 16 bits, its row in the low 48 (2.8e14 rows of one
// partition).
const rowKeyBits = 48

func rowKey(part int, row int64) int64 { return int64(part)<<rowKeyBits | row }

func splitRowKey(k int64) (int, int64) { return int(k >> rowKeyBits), k & (1<<rowKeyBits - 1) }
