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
// in partition order and cut into batches of BatchSize, the last one
// possibly short. Batch b of epoch e is therefore the same at any rank
// count. Rank r of P takes batches [r*n, (r+1)*n) with n = floor(NB/P):
// a contiguous run of the joined list, so mostly items of its own
// partitions (DistDGLv2's co-located split), and every rank the same
// number, so synchronous SGD never waits on a rank that ran out. The last
// NB - P*n batches of each epoch (fewer than P, the short one among them
// when there is one) are dropped; a different part of the last partition
// is dropped every epoch, since its items are shuffled anew. A rank runs
// its batches in an order shuffled per epoch.

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
	batches   int64 // NB: batches of an epoch before equalising
	perRank   int64 // n
	limit     int64 // batches run per epoch (Truncate): at most n
	complete  bool  // every item in a batch (Complete)
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
	Dropped      int64 // batches dropped per epoch to keep counts equal
	LocalShare   float64
	Partitions   []int64 // training items per partition
	ReachedParts []int   // partitions whose items this rank's batches hold
}

// NewNodePlan splits the nodes of type ntype whose node array mask is
// non-zero (all of them when mask is "") into batches of batchSize. It is
// collective.
func NewNodePlan(c *collective.Comm, s *shard.Served, ntype, mask string, batchSize int, opts ...PlanOption) (*Plan, error) {
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
	return newPlan(c, s, 1, local, batchSize, "nodes of type "+ntype+marked(mask), -1, opts)
}

// PlanOption changes how a plan splits its items.
type PlanOption func(*Plan)

// Complete puts every item in a batch, for evaluation: each rank runs
// ceil(batches/P) batches, and the ranks past the last item run empty
// ones (no seeds), so every rank still runs as many; nothing is dropped,
// and it works with fewer batches than ranks.
func Complete() PlanOption { return func(pl *Plan) { pl.complete = true } }

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
func NewEdgePlan(c *collective.Comm, s *shard.Served, etype, mask string, batchSize int, opts ...PlanOption) (*Plan, error) {
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
	return newPlan(c, s, 4, local, batchSize, "edges of type "+s.Config.EdgeTypes[et].String()+marked(mask), et, opts)
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
// shares the counts, checks the batch count, and fetches the items of the
// other partitions this rank's batches reach. It is collective.
func newPlan(c *collective.Comm, s *shard.Served, width int, local map[int][]int64, batchSize int, what string, etype int, opts []PlanOption) (*Plan, error) {
	k := s.Config.NumParts
	pl := &Plan{batchSize: int64(batchSize), width: width, rank: c.Rank(), ranks: c.Size(), items: make([][]int64, k), etype: etype}
	for _, o := range opts {
		o(pl)
	}
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

// cut derives the batch counts, or fails when the ranks cannot all get a
// batch.
func (pl *Plan) cut(what string) error {
	if pl.batchSize < 1 {
		return fmt.Errorf("sampler: batch size %d must be at least 1", pl.batchSize)
	}
	if pl.total == 0 {
		return fmt.Errorf("sampler: no %s: nothing to train on", what)
	}
	pl.batches = (pl.total + pl.batchSize - 1) / pl.batchSize
	pl.perRank = pl.batches / int64(pl.ranks)
	if pl.complete {
		pl.perRank = (pl.batches + int64(pl.ranks) - 1) / int64(pl.ranks)
	}
	if pl.perRank == 0 {
		return fmt.Errorf("sampler: %d %s make %d batches of %d, fewer than the %d ranks; every rank needs one: lower the batch size to at most %d",
			pl.total, what, pl.batches, pl.batchSize, pl.ranks, pl.total/int64(pl.ranks))
	}
	return nil
}

// span returns the positions [lo, hi) of the joined list this rank's
// batches cover.
func (pl *Plan) span() (int64, int64) {
	lo := min(int64(pl.rank)*pl.perRank*pl.batchSize, pl.total)
	return lo, min(lo+pl.perRank*pl.batchSize, pl.total)
}

// reached lists the partitions whose items lie in this rank's span.
func (pl *Plan) reached() []int {
	lo, hi := pl.span()
	var out []int
	for q := range pl.counts {
		if pl.start[q] < hi && pl.start[q+1] > lo {
			out = append(out, q)
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
	for _, q := range pl.reached() {
		if s.Local(q) != nil {
			lo, hi := pl.span()
			pl.local += min(hi, pl.start[q+1]) - max(lo, pl.start[q])
		}
	}
	return nil
}

// Stats describes the split as this rank sees it.
func (pl *Plan) Stats() PlanStats {
	lo, hi := pl.span()
	return PlanStats{Items: pl.total, Batches: pl.batches, PerRank: pl.perRank, Dropped: max(0, pl.batches-pl.perRank*int64(pl.ranks)),
		LocalShare: float64(pl.local) / float64(max(1, hi-lo)), Partitions: pl.counts, ReachedParts: pl.reached()}
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
	tasks := make([]Task, 0, pl.perRank)
	for b := int64(pl.rank) * pl.perRank; b < int64(pl.rank+1)*pl.perRank; b++ {
		tasks = append(tasks, pl.task(e, b, perms))
	}
	order := shuffled(NewStream(BatchKey(seed, e, -1), ForShuffle, 1, int64(pl.rank)), int64(len(tasks)))
	out := make([]Task, pl.BatchesPerEpoch())
	for i := range out {
		out[i] = tasks[order[i]]
	}
	return out
}

// task builds batch b of epoch e from the shuffled partitions.
func (pl *Plan) task(e int, b int64, perms map[int][]uint32) Task {
	t := Task{Epoch: e, Number: b}
	lo, hi := b*pl.batchSize, min((b+1)*pl.batchSize, pl.total)
	q := 0
	for x := lo; x < hi; x++ {
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
