package shard

import (
	"gnnrun/collective"
	"gnnrun/rank"
)

// pullRMA reads the remote rows with one-sided gets: for each holder, one
// operation whose datatypes list every row's place at the holder and in
// dst, so the ~4 µs an MPI_Get costs is paid per holder, not per row.
func (s *Store) pullRMA(dst []byte, rem []remote) error {
	rb := int64(s.rowBytes)
	n := s.c.Size()
	src := make([][]int64, n)
	at := make([][]int64, n)
	for _, r := range rem {
		src[r.server] = append(src[r.server], r.row*rb)
		at[r.server] = append(at[r.server], int64(r.at)*rb)
	}
	for t := range n {
		if len(src[t]) == 0 {
			continue
		}
		if err := s.win.GetBlocks(dst, at[t], t, src[t], s.rowBytes); err != nil {
			return errorf("store %s: %v", s.what, err)
		}
	}
	if err := s.win.FlushAll(); err != nil {
		return errorf("store %s: %v", s.what, err)
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
	sorted, order := sc.rows, sc.order // row numbers and requests, by holder
	for k, r := range rem {
		order[sc.next[r.server]] = k
		sorted[sc.next[r.server]] = r.row
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
		for i, r := range sc.asked {
			if r < 0 || (r+1)*rb > int64(len(s.data)) {
				return errorf("store %s: asked for row %d of %d", s.what, r, int64(len(s.data))/max(rb, 1))
			}
			copy(sc.reply[int64(i)*rb:], s.data[r*rb:(r+1)*rb])
		}
		for j := range askedCounts {
			askedCounts[j] *= s.rowBytes
		}
		if sc.got, _, err = collective.AlltoallvInto(s.c, sc.reply, askedCounts, sc.got); err != nil {
			return err
		}
		for i, k := range order[a:b] {
			at := int64(rem[k].at) * rb
			copy(dst[at:at+rb], sc.got[int64(i)*rb:int64(i+1)*rb])
		}
		s.stats.Steps++
	}
	return nil
}
