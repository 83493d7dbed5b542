package sampler

import (
	"fmt"
	"math"
	"slices"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/rank"
	"gnnrun/shard"
)

// The training split. Every partition's training items (nodes of the
// target type with the training mask set, or edges of the target type)
// are listed in new-ID order and shuffled each epoch, by a stream keyed by
// the seed, the epoch and the partition; the partitions' lists are joined
// in partition order and cut into NB batches of BatchSize, the last one
// possibly short. Batch b of epoch e is therefore the same at any rank
// count. Rank r of P takes batches [r*f, (r+1)*f) with f = floor(NB/P): a
// contiguous run of the joined list, so mostly items of its own
// partitions (DistDGLv2's co-located split). The NB - P*f batches left
// (fewer than P, items of the last partitions) go one each to the last
// ranks, which serve those partitions, and every other rank runs an empty
// batch instead (no seeds, numbered past the last): every item is in a
// batch every epoch, and every rank runs the same number, ceil(NB/P), so
// synchronous SGD never waits on a rank that ran out; an empty batch adds
// nothing to its step's mean gradient. A rank runs its batches in an
// order shuffled per epoch.
//
// A padded plan (Pad, as PyTorch's DistributedSampler pads) runs, in
// place of each empty batch, a full batch of items repeated from the
// epoch's start: padding batch j (numbered NB+j, as the empty batch it
// replaces) holds the items at positions [j*BatchSize, (j+1)*BatchSize)
// of the joined list, modulo its length, and never more items than the
// list has, so no item is in it twice. Those items are trained twice in
// the epoch; every rank's step has a full batch.

// Task is one mini-batch to sample.
type Task struct {
	Epoch  int
	Number int64      // the batch's number in its epoch, the same at any rank count
	Seeds  []int64    // node task: seed nodes (new IDs)
	Pos    []Positive // link task: positive edges
}

// Positive is a training edge (new IDs).
type Positive struct {
	Src, Dst, EID int64
	EType         int
}

// Plan is the training split of one rank.
type Plan struct {
	batchSize int64
	width     int     // int64s per item: 1 (node) or 4 (edge: src, dst, eid, type)
	counts    []int64 // per partition, its training items
	start     []int64 // per partition, where its items start in the joined list
	total     int64
	batches   int64 // NB: batches of an epoch that hold items
	perRank   int64 // ceil(NB/P)
	limit     int64 // batches run per epoch (Truncate): at most perRank
	pad       bool  // batches past the last repeat items (Pad) rather than run empty
	resume    *resumeState
	rank      int
	ranks     int
	items     [][]int64 // per partition this rank's batches reach: its items
	local     int64     // items of this rank's batches in its own partitions
	etype     int       // edge plans: the edge type trained on; -1 for node plans
}

// PlanStats describes a split.
type PlanStats struct {
	Items        int64 // training items of the whole graph
	Batches      int64 // batches an epoch cuts them into
	PerRank      int64 // batches each rank runs per epoch
	Empty        int64 // empty batches per epoch that pad the last ranks to PerRank
	Padded       int64 // batches per epoch of repeated items that pad them instead (Pad)
	LocalShare   float64
	Partitions   []int64 // training items per partition
	ReachedParts []int   // partitions whose items this rank's batches hold
}

// NewNodePlan splits the nodes of type ntype whose node array mask is
// non-zero (all of them when mask is "") into batches of batchSize. It is
// collective.
func NewNodePlan(c *collective.Comm, s *shard.Served, ntype, mask string, batchSize int) (*Plan, error) {
	ti := slices.Index(s.Config.NodeTypes, ntype)
	if ti < 0 {
		return nil, fmt.Errorf("sampler: no node type %q (the graph has %v)", ntype, s.Config.NodeTypes)
	}
	local := map[int][]int64{}
	var err error
	for _, p := range s.Parts {
		if local[p.ID], err = trainNodes(p, ntype, ti, mask); err != nil {
			break
		}
	}
	if err := collective.Agree(c, err); err != nil {
		return nil, err
	}
	return newPlan(c, s, 1, local, batchSize, "nodes of type "+ntype+marked(mask), -1)
}

// marked says which items a mask keeps, for messages.
func marked(mask string) string {
	if mask == "" {
		return ""
	}
	return " with " + mask + " set"
}

// trainNodes lists the new IDs of partition p's nodes of type ti with mask
// set.
func trainNodes(p *shard.Partition, ntype string, ti int, mask string) ([]int64, error) {
	lo, hi := p.Book.TypeRange(p.ID, ti)
	var out []int64
	if mask == "" {
		for v := lo; v < hi; v++ {
			out = append(out, v)
		}
		return out, nil
	}
	m := p.NodeFeat(ntype, mask)
	if m == nil {
		return nil, fmt.Errorf("sampler: partition %d has no node array %s/%s to take training nodes from", p.ID, ntype, mask)
	}
	for i := range hi - lo {
		if m.Float64At(i, 0) != 0 {
			out = append(out, lo+i)
		}
	}
	return out, nil
}

// NewEdgePlan splits the edges of type etype ("src:rel:dst" or a unique
// relation; "" when the graph has one edge type) whose edge array mask is
// non-zero (all of them when mask is "") into batches of batchSize. It is
// collective.
func NewEdgePlan(c *collective.Comm, s *shard.Served, etype, mask string, batchSize int) (*Plan, error) {
	et, err := targetEtype(s.Config.EdgeTypes, etype)
	if err != nil {
		return nil, err
	}
	local := map[int][]int64{}
	for _, p := range s.Parts {
		if local[p.ID], err = trainEdges(p, et, mask); err != nil {
			break
		}
	}
	if err := collective.Agree(c, err); err != nil {
		return nil, err
	}
	return newPlan(c, s, 4, local, batchSize, "edges of type "+s.Config.EdgeTypes[et].String()+marked(mask), et)
}

// targetEtype resolves the edge type of a link task.
func targetEtype(etypes []graph.EdgeType, name string) (int, error) {
	if name != "" {
		return findEtype(etypes, name)
	}
	switch len(etypes) {
	case 0:
		return 0, fmt.Errorf("sampler: the graph has no edges to train on")
	case 1:
		return 0, nil
	}
	return 0, fmt.Errorf("sampler: the graph has %d edge types; name the one to train on", len(etypes))
}

// trainEdges lists partition p's edges of type et with mask set, as
// (source, destination, edge ID, type).
func trainEdges(p *shard.Partition, et int, mask string) ([]int64, error) {
	etypes := len(p.Config.EdgeTypes)
	var m *graph.Tensor
	if mask != "" {
		key := p.Config.EdgeTypes[et].String() + "/" + mask
		if m = p.EdgeFeats[key]; m == nil {
			return nil, fmt.Errorf("sampler: partition %d has no edge array %s to take training edges from", p.ID, key)
		}
	}
	var out []int64
	row := int64(0) // the edge's row among its type's, in CSC order
	for v := range p.NumInner {
		for q := p.Indptr[v]; q < p.Indptr[v+1]; q++ {
			if etypes > 1 && int(p.EdgeType[q]) != et {
				continue
			}
			if m == nil || m.Float64At(row, 0) != 0 {
				l := p.Index(q)
				src := p.Lo + l
				if l >= p.NumInner {
					src = p.Local2Global[l]
				}
				out = append(out, src, p.Lo+v, p.EdgeIDs[q], int64(et))
			}
			row++
		}
	}
	return out, nil
}

// newPlan completes a plan from the items of this rank's partitions: it
// shares the counts, cuts them into batches, and fetches the items of the
// other partitions this rank's batches reach. It is collective.
func newPlan(c *collective.Comm, s *shard.Served, width int, local map[int][]int64, batchSize int, what string, etype int) (*Plan, error) {
	k := s.Config.NumParts
	pl := &Plan{batchSize: int64(batchSize), width: width, rank: c.Rank(), ranks: c.Size(), items: make([][]int64, k), etype: etype}
	counts := make([]int64, k)
	for q := range counts {
		counts[q] = -1
		if items, ok := local[q]; ok {
			counts[q] = int64(len(items) / width)
		}
	}
	counts, err := collective.Allreduce(c, counts, rank.Max)
	if err != nil {
		return nil, err
	}
	pl.counts = counts
	pl.start = make([]int64, k+1)
	for q, n := range counts {
		pl.start[q+1] = pl.start[q] + n
		if n >= math.MaxUint32 {
			return nil, fmt.Errorf("sampler: partition %d has %d training items; the epoch shuffle takes at most 2^32-1 per partition", q, n)
		}
	}
	pl.total = pl.start[k]
	if err := pl.cut(what); err != nil {
		return nil, err
	}
	for q, items := range local {
		pl.items[q] = items
	}
	return pl, pl.fetchReached(c, s)
}

// cut derives the batch counts, or fails when there is nothing to cut.
func (pl *Plan) cut(what string) error {
	if pl.batchSize < 1 {
		return fmt.Errorf("sampler: batch size %d must be at least 1", pl.batchSize)
	}
	if pl.total == 0 {
		return fmt.Errorf("sampler: no %s: nothing to train on", what)
	}
	pl.batches = (pl.total + pl.batchSize - 1) / pl.batchSize
	pl.perRank = (pl.batches + int64(pl.ranks) - 1) / int64(pl.ranks)
	return nil
}

// numbers returns the numbers of this rank's batches: its run of
// floor(NB/P), then, when P does not divide NB, one of the batches left
// on the last ranks and an empty one (or a padding one), numbered past the
// last, on the others; and those of the epoch a resumed plan starts in.
func (pl *Plan) numbers() []int64 {
	out := pl.numbersOf(pl.rank, pl.ranks)
	if pl.resume != nil {
		out = append(out, pl.resume.order...)
	}
	return out
}

// ranges returns the ranges [lo, hi) of the joined list batch b holds:
// none for an empty batch, two for a padding batch that wraps around.
func (pl *Plan) ranges(b int64) [][2]int64 {
	if b < pl.batches {
		return [][2]int64{{b * pl.batchSize, min((b+1)*pl.batchSize, pl.total)}}
	}
	if !pl.pad {
		return nil
	}
	n := min(pl.batchSize, pl.total)
	lo := (b - pl.batches) * pl.batchSize % pl.total
	if lo+n <= pl.total {
		return [][2]int64{{lo, lo + n}}
	}
	return [][2]int64{{lo, pl.total}, {0, lo + n - pl.total}}
}

// spans returns the ranges [lo, hi) of the joined list this rank's
// batches cover.
func (pl *Plan) spans() [][2]int64 {
	var out [][2]int64
	for _, b := range pl.numbers() {
		for _, r := range pl.ranges(b) {
			switch n := len(out); {
			case n > 0 && out[n-1][1] == r[0]:
				out[n-1][1] = r[1]
			case r[0] < r[1]:
				out = append(out, r)
			}
		}
	}
	return out
}

// reached lists the partitions whose items lie in this rank's spans.
func (pl *Plan) reached() []int {
	var out []int
	spans := pl.spans()
	for q := range pl.counts {
		for _, sp := range spans {
			if pl.start[q] < sp[1] && pl.start[q+1] > sp[0] {
				out = append(out, q)
				break
			}
		}
	}
	return out
}

// fetchReached asks the servers of the partitions this rank's batches
// reach, and does not serve, for their items. It is collective.
func (pl *Plan) fetchReached(c *collective.Comm, s *shard.Served) error {
	ask := make([][]int64, c.Size())
	for _, q := range pl.reached() {
		if pl.items[q] == nil && pl.counts[q] > 0 {
			r := s.Server(q)
			ask[r] = append(ask[r], int64(q))
		}
	}
	asked, err := collective.Exchange(c, ask)
	if err != nil {
		return err
	}
	reply := make([][]int64, c.Size())
	var bad error
	for r, qs := range asked {
		for _, q := range qs {
			if q < 0 || int(q) >= len(pl.items) || s.Local(int(q)) == nil {
				bad = fmt.Errorf("sampler: rank %d asked for the training items of partition %d, not served here", r, q)
				continue
			}
			reply[r] = append(reply[r], pl.items[q]...)
		}
	}
	if err := collective.Agree(c, bad); err != nil {
		return err
	}
	got, err := collective.Exchange(c, reply)
	if err != nil {
		return err
	}
	for r, qs := range ask {
		at := int64(0)
		for _, q := range qs {
			n := pl.counts[q] * int64(pl.width)
			if at+n > int64(len(got[r])) {
				return fmt.Errorf("sampler: rank %d sent %d training values, fewer than partition %d's %d", r, len(got[r]), q, n)
			}
			pl.items[q] = got[r][at : at+n]
			at += n
		}
	}
	pl.local = 0
	for _, sp := range pl.spans() {
		for q := range pl.counts {
			if s.Local(q) != nil {
				pl.local += max(0, min(sp[1], pl.start[q+1])-max(sp[0], pl.start[q]))
			}
		}
	}
	return nil
}

// Pad makes the plan run, in place of each rank's empty batch, a batch of
// items repeated from the epoch's start (see the split above), and fetches
// the items those batches reach. Every rank must call it, on a plan that
// is not padded yet: it is collective.
func (pl *Plan) Pad(c *collective.Comm, s *shard.Served) error {
	if pl.pad {
		return fmt.Errorf("sampler: the plan is padded already")
	}
	pl.pad = true
	return pl.fetchReached(c, s)
}

// IsPadding reports whether batch number b of an epoch repeats items to
// pad a rank (Pad) or is empty: it is not one of the epoch's NB batches.
func (pl *Plan) IsPadding(b int64) bool { return b >= pl.batches }

// Filled returns how many of this rank's batches of an epoch hold items:
// BatchesPerEpoch, less the empty one of an unpadded plan that has one
// (all of a truncated plan's, which may or may not run it, counted).
func (pl *Plan) Filled() int64 {
	n := int64(0)
	for _, b := range pl.numbers() {
		if len(pl.ranges(b)) > 0 {
			n++
		}
	}
	return min(n, pl.BatchesPerEpoch())
}

// Stats describes the split as this rank sees it.
func (pl *Plan) Stats() PlanStats {
	var mine int64
	for _, sp := range pl.spans() {
		mine += sp[1] - sp[0]
	}
	st := PlanStats{Items: pl.total, Batches: pl.batches, PerRank: pl.perRank, Empty: pl.perRank*int64(pl.ranks) - pl.batches,
		LocalShare: float64(pl.local) / float64(max(1, mine)), Partitions: pl.counts, ReachedParts: pl.reached()}
	if pl.pad {
		st.Padded, st.Empty = st.Empty, 0
	}
	return st
}

// EdgeType returns the edge type an edge plan trains on, or -1 for a node
// plan.
func (pl *Plan) EdgeType() int { return pl.etype }

// BatchesPerEpoch returns how many batches every rank runs per epoch.
func (pl *Plan) BatchesPerEpoch() int64 {
	if pl.limit > 0 {
		return min(pl.limit, pl.perRank)
	}
	return pl.perRank
}

// Truncate makes every rank run at most n batches per epoch (n > 0): the
// first n of its epoch's shuffled order, a different subset every epoch.
// It shortens epochs for tests and benchmarks; the split is unchanged.
func (pl *Plan) Truncate(n int64) error {
	if n < 1 {
		return fmt.Errorf("sampler: %d batches per epoch; at least 1", n)
	}
	pl.limit = n
	return nil
}

// Epoch returns this rank's tasks of epoch e under seed, in the order to
// run them.
func (pl *Plan) Epoch(seed uint64, e int) []Task {
	perms := map[int][]uint32{}
	for _, q := range pl.reached() {
		perms[q] = shuffled(NewStream(BatchKey(seed, e, -1), ForShuffle, 0, int64(q)), pl.counts[q])
	}
	order := pl.orderIn(seed, e, nil, 0, pl.rank, pl.ranks)
	if rs := pl.resume; rs != nil && rs.epoch == e {
		order = rs.order
	}
	out := make([]Task, len(order))
	for i, b := range order {
		out[i] = pl.task(e, b, perms)
	}
	return out
}

// task builds batch b of epoch e from the shuffled partitions.
func (pl *Plan) task(e int, b int64, perms map[int][]uint32) Task {
	t := Task{Epoch: e, Number: b}
	for _, r := range pl.ranges(b) {
		q := 0
		for x := r[0]; x < r[1]; x++ {
			for pl.start[q+1] <= x {
				q++
			}
			i := int64(perms[q][x-pl.start[q]]) * int64(pl.width)
			item := pl.items[q][i : i+int64(pl.width)]
			if pl.width == 1 {
				t.Seeds = append(t.Seeds, item[0])
			} else {
				t.Pos = append(t.Pos, Positive{Src: item[0], Dst: item[1], EID: item[2], EType: int(item[3])})
			}
		}
	}
	return t
}

// shuffled returns a permutation of [0, n) drawn by Fisher-Yates from s:
// draw i decides where position i swaps to.
func shuffled(s Stream, n int64) []uint32 {
	p := make([]uint32, n)
	for i := range p {
		p[i] = uint32(i)
	}
	for i := n - 1; i > 0; i-- {
		j := Below(s.Uint64(uint32(i)), uint64(i+1))
		p[i], p[j] = p[j], p[i]
	}
	return p
}
