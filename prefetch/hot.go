package prefetch

import (
	"fmt"
	"slices"

	"gnnrun/collective"
	"gnnrun/cuda"
	"gnnrun/rank"
	"gnnrun/shard"
)

// hotCache is a static device cache of the feature rows of the nodes with
// the highest in-degree (the ones sampling reaches most often), as many as
// fit a byte budget, the same on every rank. A batch's node found there is
// copied on the device instead of from the host.
type hotCache struct {
	buf  cuda.Buffer
	rows map[int64]int32 // node -> row of buf
}

// row returns node v's row in the cache.
func (h *hotCache) row(v int64) (int32, bool) {
	r, ok := h.rows[v]
	return r, ok
}

func (h *hotCache) free() error {
	if h.buf == nil {
		return nil
	}
	err := h.buf.Free()
	h.buf = nil
	return err
}

// newHotCache chooses the hottest nodes with features, fetches their rows
// and puts them on the device. It is collective.
func newHotCache(c *collective.Comm, s *shard.Served, stores []*shard.Store, rowBytes int, budget int64, dev cuda.Device, st cuda.Stream) (*hotCache, error) {
	n := budget / int64(rowBytes)
	ids, err := hottest(c, s, stores, n)
	if err != nil {
		return nil, err
	}
	h := &hotCache{rows: make(map[int64]int32, len(ids))}
	rows := make([]byte, int64(len(ids))*int64(rowBytes))
	if _, _, _, err := pullTyped(s, stores, ids, rows, rowBytes); err != nil {
		return nil, err
	}
	for i, v := range ids {
		h.rows[v] = int32(i)
	}
	if h.buf, err = dev.Alloc(int64(len(rows))); err != nil {
		return nil, fmt.Errorf("prefetch: hot cache of %d rows: %w", len(ids), err)
	}
	if err := st.CopyToDevice(h.buf, 0, rows); err != nil {
		h.free()
		return nil, err
	}
	if err := st.Sync(); err != nil {
		h.free()
		return nil, err
	}
	return h, nil
}

// hottest returns the n nodes with features of highest in-degree (ties
// to the lower ID), ascending, on every rank: a histogram of degrees
// summed over the partitions finds the threshold degree, every node above
// it is in, and of the nodes at it the ones of lowest ID, counted across
// ranks in partition order. It is collective; memory is O(partition +
// n + highest degree).
func hottest(c *collective.Comm, s *shard.Served, stores []*shard.Store, n int64) ([]int64, error) {
	type cand struct{ id, deg int64 }
	var cands []cand
	var top int64
	for _, p := range s.Parts {
		if !s.Primary(p.ID) {
			continue
		}
		for t, st := range stores {
			if st == nil {
				continue
			}
			lo, hi := s.Book.TypeRange(p.ID, t)
			for v := lo; v < hi; v++ {
				l := v - p.Lo
				d := p.Indptr[l+1] - p.Indptr[l]
				cands = append(cands, cand{v, d})
				top = max(top, d)
			}
		}
	}
	top, err := collective.Max(c, top)
	if err != nil {
		return nil, err
	}
	hist := make([]int64, top+1)
	for _, x := range cands {
		hist[x.deg]++
	}
	if hist, err = collective.Allreduce(c, hist, rank.Sum); err != nil {
		return nil, err
	}
	// The threshold: every degree above it fits, its own does not wholly.
	thr, above := int64(-1), int64(0)
	for d := top; d >= 0; d-- {
		if above+hist[d] > n {
			thr = d
			break
		}
		above += hist[d]
	}
	var mine, ties []int64
	for _, x := range cands {
		switch {
		case x.deg > thr:
			mine = append(mine, x.id)
		case x.deg == thr:
			ties = append(ties, x.id)
		}
	}
	slices.Sort(ties)
	// Ranks hold ascending ID ranges in rank order: the ties before this
	// rank's come from lower ranks.
	before, _, err := collective.Offset(c, int64(len(ties)))
	if err != nil {
		return nil, err
	}
	take := min(max(n-above-before, 0), int64(len(ties)))
	mine = append(mine, ties[:take]...)
	all, _, err := collective.Allgatherv(c, mine)
	if err != nil {
		return nil, err
	}
	slices.Sort(all)
	return all, nil
}
