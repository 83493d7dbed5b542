package sampler

import (
	"fmt"
	"slices"

	"gnnrun/collective"
	"gnnrun/shard"
)

// Resuming an epoch. A checkpoint records how far its epoch got as
// segments: each a run of the epoch at some rank count, every rank of
// which ran the first Done batches of its run order. The first segment's
// orders are the split's (Epoch); a later segment's are those of the
// batches the earlier segments left (the remnant), split over its ranks.
// So the batches of an epoch are known at any rank count from the
// segments alone, and a run resumed at the same rank count continues the
// last segment exactly: the batches that follow are those of a run never
// stopped. At another rank count, the remnant (every batch of the epoch's
// NB no segment ran) is sorted and cut as the split cuts the joined list:
// rank r of P takes a contiguous run of floor(R/P), the R mod P left go
// one each to the last ranks, and the others pad (Pad) or run empty, so
// every remaining item is trained exactly once and every rank runs as
// many batches. Each segment shuffles its ranks' orders with a lane of
// its own.

// Segment is one run's progress through an epoch: at Ranks ranks, every
// rank ran the first Done batches of its order.
type Segment struct {
	Ranks int   `json:"ranks"`
	Done  int64 `json:"done"`
}

// resumeState is the epoch a resumed plan starts in, and this rank's
// batches of it, in run order.
type resumeState struct {
	epoch int
	segs  []Segment
	order []int64
	cont  bool // this run continues the last segment (same rank count)
}

// Resume makes the plan start epoch e where segs left it (the batches
// drawn with seed, as Epoch's), fetching the
// items its batches reach; with no segments (or none done) the epoch
// starts afresh. It fails when a segment is not a run of this split (more
// batches done than its ranks had), or when the rank count changed on a
// truncated plan (Truncate: the remnant would hold batches the epoch was
// never to run). Every rank must call it, after Pad: it is collective.
func (pl *Plan) Resume(c *collective.Comm, s *shard.Served, seed uint64, e int, segs []Segment) error {
	var err error
	switch {
	case e < 0:
		err = fmt.Errorf("sampler: resuming at epoch %d", e)
	case len(segs) > 0 && segs[len(segs)-1].Ranks != pl.ranks && pl.limit > 0:
		err = fmt.Errorf("sampler: a run of at most %d batches per epoch (--batches-per-epoch) resumes only at its rank count, %d, not %d",
			pl.limit, segs[len(segs)-1].Ranks, pl.ranks)
	}
	for i, sg := range segs {
		if err == nil && (sg.Ranks < 1 || sg.Done < 0) {
			err = fmt.Errorf("sampler: epoch %d's segment %d (%d ranks, %d batches done) is not a run of this split", e, i, sg.Ranks, sg.Done)
		}
	}
	var rems [][]int64
	if err == nil {
		rems = pl.remnants(seed, e, segs)
		for i, sg := range segs { // every rank of a segment runs as many batches
			if n := int64(len(pl.orderIn(seed, e, rems[i], i, 0, sg.Ranks))); err == nil && sg.Done > n {
				err = fmt.Errorf("sampler: epoch %d's segment %d (%d ranks, %d batches done) is not a run of this split: its ranks had %d batches", e, i, sg.Ranks, sg.Done, n)
			}
		}
	}
	if err = collective.Agree(c, err); err != nil {
		return err
	}
	rs := &resumeState{epoch: e, segs: slices.Clone(segs)}
	if n := len(segs); n > 0 && segs[n-1].Ranks == pl.ranks {
		rs.cont = true
		rs.order = pl.orderIn(seed, e, rems[n-1], n-1, pl.rank, pl.ranks)[segs[n-1].Done:]
	} else {
		rs.order = pl.orderIn(seed, e, rems[n], n, pl.rank, pl.ranks)
	}
	pl.resume = rs
	return pl.fetchReached(c, s)
}

// Progress returns how far epoch e got once this rank ran the first k of
// its batches of it in this run (Epoch's tasks): the segments a
// checkpoint records.
func (pl *Plan) Progress(e int, k int64) []Segment {
	rs := pl.resume
	if rs == nil || rs.epoch != e {
		return []Segment{{Ranks: pl.ranks, Done: k}}
	}
	segs := slices.Clone(rs.segs)
	if rs.cont {
		segs[len(segs)-1].Done += k
		return segs
	}
	return append(segs, Segment{Ranks: pl.ranks, Done: k})
}

// BatchesIn returns how many batches every rank runs in epoch e: fewer
// in the epoch a resumed plan starts in.
func (pl *Plan) BatchesIn(e int) int64 {
	if rs := pl.resume; rs != nil && rs.epoch == e {
		return int64(len(rs.order))
	}
	return pl.BatchesPerEpoch()
}

// orderIn returns the batch numbers rank r of p runs in epoch e, in run
// order, in the epoch's run number segment: the split's for the first
// (segment 0, as Epoch runs it), else a cut of rem, the batches the runs
// before it left (remnants); seed keys the shuffles, not which numbers.
func (pl *Plan) orderIn(seed uint64, e int, rem []int64, segment, r, p int) []int64 {
	nums := pl.numbersOf(r, p)
	if segment > 0 {
		nums = cutFor(int64(len(rem)), r, p, pl.batches, func(i int64) int64 { return rem[i] })
	}
	order := shuffled(NewStream(BatchKey(seed, e, -1), ForShuffle, uint32(1+segment), int64(r)), int64(len(nums)))
	out := make([]int64, len(nums))
	for i, o := range order {
		out[i] = nums[o]
	}
	if pl.limit > 0 && segment == 0 {
		out = out[:min(int64(len(out)), pl.limit)]
	}
	return out
}

// remnants returns, for i in 0..len(segs), the batches of the epoch's NB
// that the runs segs[:i] left, sorted (out[0] is nil: segment 0 runs the
// split). Each segment's orders are made once, from the remnant before it.
func (pl *Plan) remnants(seed uint64, e int, segs []Segment) [][]int64 {
	out := [][]int64{nil}
	done := make([]bool, pl.batches)
	for i, sg := range segs {
		for r := range sg.Ranks {
			order := pl.orderIn(seed, e, out[i], i, r, sg.Ranks)
			for _, b := range order[:min(sg.Done, int64(len(order)))] {
				if b < pl.batches {
					done[b] = true
				}
			}
		}
		var rem []int64
		for b, d := range done {
			if !d {
				rem = append(rem, int64(b))
			}
		}
		out = append(out, rem)
	}
	return out
}

// numbersOf is numbers for rank r of p ranks: the split's cut of the
// epoch's NB batches.
func (pl *Plan) numbersOf(r, p int) []int64 {
	return cutFor(pl.batches, r, p, pl.batches, func(i int64) int64 { return i })
}

// cutFor returns rank r of p's share of n batches (batch i is at(i)), as
// the split cuts them: a contiguous run of floor(n/p), then one of the n
// mod p left on the last ranks, or on the others a padding (or empty)
// batch, numbered past the epoch's nb batches.
func cutFor(n int64, r, p int, nb int64, at func(int64) int64) []int64 {
	run, left := n/int64(p), n%int64(p)
	out := make([]int64, 0, run+1)
	for i := int64(r) * run; i < int64(r+1)*run; i++ {
		out = append(out, at(i))
	}
	switch {
	case left == 0:
	case int64(r) >= int64(p)-left:
		out = append(out, at(int64(p)*run+int64(r)-(int64(p)-left)))
	default:
		out = append(out, nb+int64(r))
	}
	return out
}
