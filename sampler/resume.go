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
		if err == nil && (sg.Ranks < 1 || sg.Done < 0 || sg.Done > int64(len(pl.orderOf(0, e, segs[:i], 0, sg.Ranks)))) {
			err = fmt.Errorf("sampler: epoch %d's segment %d (%d ranks, %d batches done) is not a run of this split", e, i, sg.Ranks, sg.Done)
		}
	}
	if err = collective.Agree(c, err); err != nil {
		return err
	}
	rs := &resumeState{epoch: e, segs: slices.Clone(segs)}
	if n := len(segs); n > 0 && segs[n-1].Ranks == pl.ranks {
		rs.cont = true
		rs.order = pl.orderOf(seed, e, segs[:n-1], pl.rank, pl.ranks)[segs[n-1].Done:]
	} else {
		rs.order = pl.orderOf(seed, e, segs, pl.rank, pl.ranks)
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

// orderOf returns the batch numbers rank r of p runs in epoch e, in run
// order, after the segments prev (none: a fresh epoch, the split's, as
// Epoch runs it); seed keys the shuffles, not which numbers.
func (pl *Plan) orderOf(seed uint64, e int, prev []Segment, r, p int) []int64 {
	var nums []int64
	if len(prev) == 0 {
		nums = pl.numbersOf(r, p)
	} else {
		nums = pl.remnantOf(pl.remaining(seed, e, prev), r, p)
	}
	order := shuffled(NewStream(BatchKey(seed, e, -1), ForShuffle, uint32(1+len(prev)), int64(r)), int64(len(nums)))
	out := make([]int64, len(nums))
	for i, o := range order {
		out[i] = nums[o]
	}
	if pl.limit > 0 && len(prev) == 0 {
		out = out[:min(int64(len(out)), pl.limit)]
	}
	return out
}

// remaining returns, sorted, the batches of the epoch's NB that no
// segment of prev ran.
func (pl *Plan) remaining(seed uint64, e int, prev []Segment) []int64 {
	done := make([]bool, pl.batches)
	for i, sg := range prev {
		for r := range sg.Ranks {
			order := pl.orderOf(seed, e, prev[:i], r, sg.Ranks)
			for _, b := range order[:min(sg.Done, int64(len(order)))] {
				if b < pl.batches {
					done[b] = true
				}
			}
		}
	}
	var out []int64
	for b, d := range done {
		if !d {
			out = append(out, int64(b))
		}
	}
	return out
}

// numbersOf is numbers for rank r of p ranks.
func (pl *Plan) numbersOf(r, p int) []int64 {
	run, left := pl.batches/int64(p), pl.batches%int64(p)
	out := make([]int64, 0, (pl.batches+int64(p)-1)/int64(p))
	for b := int64(r) * run; b < int64(r+1)*run; b++ {
		out = append(out, b)
	}
	switch {
	case left == 0:
	case int64(r) >= int64(p)-left:
		out = append(out, int64(p)*run+int64(r)-(int64(p)-left))
	default:
		out = append(out, pl.batches+int64(r))
	}
	return out
}

// remnantOf returns rank r of p's share of the remaining batches (sorted):
// a contiguous run of floor(R/P), then one of the R mod P left on the last
// ranks, or a padding (or empty) batch, numbered past the epoch's NB, on
// the others.
func (pl *Plan) remnantOf(rem []int64, r, p int) []int64 {
	n := int64(len(rem))
	run, left := n/int64(p), n%int64(p)
	out := slices.Clone(rem[int64(r)*run : int64(r+1)*run])
	switch {
	case left == 0:
	case int64(r) >= int64(p)-left:
		out = append(out, rem[int64(p)*run+int64(r)-(int64(p)-left)])
	default:
		out = append(out, pl.batches+int64(r))
	}
	return out
}
