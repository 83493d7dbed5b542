package sampler

import (
	"fmt"
	"slices"
	"time"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/shard"
)

// Sampler draws the blocks of mini-batches over the partitions a rank
// serves. Frontier nodes in this rank's partitions are sampled here; the
// others at their owners (alltoall: every rank takes part in each layer's
// exchange, so every rank must call Sample the same number of times) or by
// one-sided reads of the owners' arrays (rma: no other rank takes part).
// Both give the same blocks, at any rank count: every draw is keyed by the
// seed, the epoch, the batch number, the layer, the edge type and the node.
// A Sampler is used by one goroutine at a time; several Samplers, made in
// the same order on every rank, sample side by side on their own
// communicators.
type Sampler struct {
	c       *collective.Comm
	served  *shard.Served
	o       Options
	fanouts [][]int            // [layer][etype]
	views   []*view            // per partition: its view when served here (or, with HostGraph, on this host)
	host    []*shard.Partition // HostGraph: the host's other partitions, mapped here
	table   *edgeTable
	// hostTable says the table was asked for with the host's partitions
	// (HostGraph), hostOff why it holds the served ones alone.
	hostTable bool
	hostOff   string
	draws     nodeDraws
	remote    remoteDraws
	stats     Stats

	link       *linkSampler // link tasks
	labels     *shard.Store // the seeds' labels of node tasks
	labelType  graph.DType  // ... their element type
	labelShape []int64      // ... and row shape

	// per-batch scratch
	ids              graph.IDMap // a link batch's seeds
	numbering        numbering
	lpos             []int64 // edge table entries of a layer's local draws, in frontier order
	lpart, ltype     []int16 // ... their partitions (with Options.OrigEIDs) and edge types
	leid, lorig      []int64 // ... their edge IDs and original edge IDs, when merged with remote ones
	local, far, all  edgeList
	localAt          []int32           // per frontier node: its first edge in lpos, or -1 (drawn elsewhere)
	parts            []int32           // per frontier node: its partition
	sink             int64             // what readChunkRanges touches, kept so that it reads
	ra, rb           [rangeChunk]int64 // per node of a chunk: its in-edge range (readChunkRanges)
	counts, farCount []int32
	farNodes         []int64
	farParts         []int
	excl             exclusionSet
}

// Stats counts what a Sampler did.
type Stats struct {
	Batches, Seeds, Edges int64
	// LocalNodes and RemoteNodes count the frontier nodes whose in-edges
	// were drawn here and at (or read from) other ranks.
	LocalNodes, RemoteNodes int64
	// Bytes sent and received for remote frontier nodes.
	Sent, Received int64
	// Seconds drawing local nodes' edges, and in the remote step (the
	// exchanges, or the one-sided reads, and what they wait for).
	LocalSeconds, RemoteSeconds float64
	// AnswerSeconds is the part of RemoteSeconds spent drawing the nodes
	// other ranks asked of this one (alltoall); the rest is the
	// exchanges, what they wait for, and the requests and replies.
	AnswerSeconds float64
	// ExchangeSeconds is the part of RemoteSeconds in the exchanges
	// (alltoall), waiting for the other ranks included.
	ExchangeSeconds float64
}

// Add returns the field-wise sum of s and t: the stats of two samplers
// together.
func (s Stats) Add(t Stats) Stats {
	return Stats{
		Batches: s.Batches + t.Batches, Seeds: s.Seeds + t.Seeds, Edges: s.Edges + t.Edges,
		LocalNodes: s.LocalNodes + t.LocalNodes, RemoteNodes: s.RemoteNodes + t.RemoteNodes,
		Sent: s.Sent + t.Sent, Received: s.Received + t.Received,
		LocalSeconds: s.LocalSeconds + t.LocalSeconds, RemoteSeconds: s.RemoteSeconds + t.RemoteSeconds,
		AnswerSeconds: s.AnswerSeconds + t.AnswerSeconds, ExchangeSeconds: s.ExchangeSeconds + t.ExchangeSeconds,
	}
}

// Sub returns the field-wise difference s - t: what a sampler did since
// it had the stats t.
func (s Stats) Sub(t Stats) Stats {
	return s.Add(Stats{
		Batches: -t.Batches, Seeds: -t.Seeds, Edges: -t.Edges,
		LocalNodes: -t.LocalNodes, RemoteNodes: -t.RemoteNodes,
		Sent: -t.Sent, Received: -t.Received,
		LocalSeconds: -t.LocalSeconds, RemoteSeconds: -t.RemoteSeconds,
		AnswerSeconds: -t.AnswerSeconds, ExchangeSeconds: -t.ExchangeSeconds,
	})
}

// remoteDraws samples frontier nodes whose partitions this rank does not
// serve, in two steps with the layer's local draws between them: ask
// sends for them (and, with alltoall, draws what the other ranks ask of
// this one), collect brings their edges.
type remoteDraws interface {
	// ask starts drawing nodes (parts[i] is the partition of nodes[i]).
	// failed says this rank failed already: it takes part without asking
	// (alltoall), so the others learn of the failure and none waits. An
	// error from ask ends the layer: collect is not called.
	ask(epoch int, batch int64, layer int, nodes []int64, parts []int, excl *exclusionSet, failed bool) error
	// collect appends the edges of the nodes asked for to out, and the
	// count of each node's edges to counts.
	collect(out *edgeList, counts []int32, failed bool) ([]int32, error)
	close() error
}

// nothingRemote is the remote draws of a world whose every rank samples
// every partition itself (one rank, or one host with HostGraph): nothing
// to ask, and no exchange, which with alltoall would make the ranks wait
// for each other twice a layer (at 4 ranks on this VM's 2 cores, 961
// batches/s in all of a small graph's with the empty exchanges, 3,720
// with rma's none).
type nothingRemote struct{}

func (nothingRemote) ask(int, int64, int, []int64, []int, *exclusionSet, bool) error {
	return nil
}

func (nothingRemote) collect(_ *edgeList, counts []int32, _ bool) ([]int32, error) {
	return counts, nil
}

func (nothingRemote) close() error { return nil }

// everyNodeHere says whether every rank of c has a view of every
// partition (views, this rank's): then no frontier node is remote
// anywhere. It is collective.
func everyNodeHere(c *collective.Comm, views []*view) (bool, error) {
	return collective.All(c, !slices.Contains(views, nil))
}

// New returns a sampler over the partitions s serves, on its own duplicate
// of c. It is collective; every rank must pass the same options.
func New(c *collective.Comm, s *shard.Served, o Options) (*Sampler, error) {
	fanouts, err := o.layerFanouts(s.Config.EdgeTypes)
	if err == nil && o.Transport != shard.Alltoall && o.Transport != shard.RMA {
		err = fmt.Errorf("sampler: unknown transport %v", o.Transport)
	}
	if o.Budget == 0 {
		o.Budget = 256 << 20
	}
	sm := &Sampler{served: s, o: o, fanouts: fanouts, views: make([]*view, s.Config.NumParts)}
	sm.draws = nodeDraws{fanouts: fanouts, replace: o.Replace, weighted: o.Prob != "", orig: o.OrigEIDs}
	if err == nil && o.HostGraph {
		sm.host, err = shard.OpenHostParts(c, s)
	}
	for _, p := range append(slices.Clip(s.Parts), sm.host...) {
		if err != nil {
			break
		}
		sm.views[p.ID], err = newView(p, &o)
	}
	if err := collective.Agree(c, err); err != nil {
		sm.closeHost()
		return nil, err
	}
	sm.hostTable = len(sm.host) > 0
	if sm.table, sm.hostOff, err = acquireEdgeTable(c, s, sm.host); err != nil {
		sm.closeHost()
		return nil, err
	}
	if sm.hostOff != "" {
		// The host's shared memory cannot hold its partitions' edges:
		// their nodes are asked of their ranks, as without HostGraph.
		for _, p := range sm.host {
			sm.views[p.ID] = nil
		}
		sm.closeHost()
	}
	sm.numbering.dense = servedMarks(s)
	if sm.c, err = c.Dup(); err != nil {
		releaseEdgeTable(s, sm.hostTable)
		sm.closeHost()
		return nil, err
	}
	switch o.Transport {
	case shard.Alltoall:
		var here bool
		if here, err = everyNodeHere(sm.c, sm.views); err == nil {
			sm.remote = &alltoallDraws{sm: sm}
			if here {
				sm.remote = nothingRemote{}
			}
		}
	case shard.RMA:
		var r *rmaDraws
		if r, err = newRMADraws(sm); err == nil {
			sm.remote = r
		}
	}
	if err == nil {
		err = sm.openTasks()
	}
	if err != nil {
		sm.Close()
		return nil, err
	}
	return sm, nil
}

// openTasks prepares what SampleTask adds to the blocks: negatives, and
// the label store. It is collective.
func (s *Sampler) openTasks() error {
	var err error
	if s.o.Link != nil {
		if s.link, err = newLinkSampler(s.c, s.served, *s.o.Link, s.o.Transport); err != nil {
			return err
		}
	}
	if s.o.Labels.Name == "" {
		return nil
	}
	if s.labels, err = shard.NewStore(s.c, s.served, s.o.Labels.NType, s.o.Labels.Name, s.o.Transport, shard.StoreBudget(s.o.Budget)); err != nil {
		return err
	}
	// NewStore checked that every served partition has the array, alike.
	t := s.served.Parts[0].NodeFeat(s.o.Labels.NType, s.o.Labels.Name)
	s.labelType, s.labelShape = t.DType, t.RowShape()
	return nil
}

// closeHost unmaps the host's partitions (HostGraph).
func (s *Sampler) closeHost() {
	shard.CloseAll(s.host)
	s.host = nil
}

// HostGraphOff says why the host's other partitions are not sampled here
// although HostGraph asked for them ("" when they are, or were not asked
// for): their edge table did not fit the host's shared memory.
func (s *Sampler) HostGraphOff() string { return s.hostOff }

// Layers returns the number of layers (blocks) of every batch.
func (s *Sampler) Layers() int { return len(s.fanouts) }

// Stats returns what the sampler did so far.
func (s *Sampler) Stats() Stats { return s.stats }

// Close releases the sampler's stores, windows and communicator; it is
// collective.
func (s *Sampler) Close() error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	if s.link != nil {
		keep(s.link.close())
	}
	if s.labels != nil {
		keep(s.labels.Close())
	}
	if s.remote != nil {
		keep(s.remote.close())
	}
	if s.c != nil {
		keep(s.c.Free())
	}
	if s.table != nil {
		releaseEdgeTable(s.served, s.hostTable)
		s.table = nil
	}
	s.closeHost()
	if s.numbering.dense != nil {
		s.numbering.dense.free()
		s.numbering.dense = nil
	}
	return first
}

// Sample draws the blocks of batch number batch of epoch from the seeds
// (distinct new node IDs), without the edges excl removes. Blocks[0] is
// the outermost layer (its source nodes are the batch's input nodes), the
// last block's destinations are the seeds in their order. With the
// alltoall transport it is collective.
func (s *Sampler) Sample(epoch int, batch int64, seeds []int64, excl []Exclusion) ([]*Block, error) {
	key := BatchKey(s.o.Seed, epoch, batch)
	s.excl.reset()
	clear(s.draws.srcPos)
	for _, x := range excl {
		s.excl.add(x)
	}
	blocks := make([]*Block, len(s.fanouts))
	frontier := seeds
	for layer := range s.fanouts {
		b, err := s.layer(epoch, batch, key, layer, frontier)
		if err != nil {
			return nil, err
		}
		blocks[len(blocks)-1-layer] = b
		frontier = b.Nodes
		s.stats.Edges += int64(b.NumEdges())
	}
	s.stats.Batches++
	s.stats.Seeds += int64(len(seeds))
	return blocks, nil
}

// layer draws the in-edges of the frontier's nodes at one layer and builds
// its block: local nodes here, the others through the remote transport,
// merged in frontier order. The remote nodes are asked for first and the
// local ones drawn while they are away: with alltoall, the ranks meet in
// the exchange of requests with nothing done since the last layer, and in
// the exchange of replies with all their drawing done (their own nodes
// and those asked of them), so a rank waits once per layer for the others'
// share of the drawing, not twice.
func (s *Sampler) layer(epoch int, batch int64, key Key, layer int, frontier []int64) (*Block, error) {
	s.far.reset()
	s.farNodes, s.farParts = s.farNodes[:0], s.farParts[:0]
	s.localAt = grow32(s.localAt, len(frontier))
	s.counts = grow32(s.counts, len(frontier))
	s.parts = grow32(s.parts, len(frontier))
	t0 := time.Now()
	err := s.partsOf(frontier, s.parts)
	if err == nil {
		for i, v := range frontier {
			if s.views[s.parts[i]] == nil {
				s.farNodes, s.farParts = append(s.farNodes, v), append(s.farParts, int(s.parts[i]))
			}
		}
	}
	t1 := time.Now()
	// Every rank takes part in the remote steps, failed or not, so none
	// is left waiting in a collective; the error is reported after them.
	if err != nil {
		s.farNodes, s.farParts = s.farNodes[:0], s.farParts[:0]
	}
	if askErr := s.remote.ask(epoch, batch, layer, s.farNodes, s.farParts, &s.excl, err != nil); askErr != nil {
		return nil, askErr
	}
	t2 := time.Now()
	allLocal := len(s.farNodes) == 0
	if err == nil {
		s.localPositions(key, layer, frontier)
		s.readLocal(allLocal)
	}
	t3 := time.Now()
	var remoteErr error
	s.farCount, remoteErr = s.remote.collect(&s.far, s.farCount[:0], err != nil)
	t4 := time.Now()
	s.stats.LocalSeconds += t1.Sub(t0).Seconds() + t3.Sub(t2).Seconds()
	s.stats.RemoteSeconds += t2.Sub(t1).Seconds() + t4.Sub(t3).Seconds()
	if err == nil {
		err = remoteErr
	}
	if err != nil {
		return nil, err
	}
	s.stats.LocalNodes += int64(len(frontier) - len(s.farNodes))
	s.stats.RemoteNodes += int64(len(s.farNodes))
	if allLocal {
		// Every node was drawn here, in frontier order already.
		return buildBlock(frontier, s.counts, &s.local, &s.numbering, s.o.OrigEIDs)
	}
	s.mergeInOrder(frontier)
	s.stats.LocalSeconds += time.Since(t4).Seconds()
	return buildBlock(frontier, s.counts, &s.all, &s.numbering, s.o.OrigEIDs)
}

// servedMarks returns the marks that number the nodes of a block: every
// node of a graph of up to wholeMarks nodes, else the inner nodes of the
// partitions s serves (nil when they are too scattered).
func servedMarks(s *shard.Served) *denseMarks {
	if n := s.Book.NumNodes(); n <= wholeMarks {
		return newDenseMarks(0, n, n)
	}
	if len(s.Parts) == 0 {
		return nil
	}
	lo, hi, inner := s.Parts[0].Lo, s.Parts[0].Hi, int64(0)
	for _, p := range s.Parts {
		lo, hi, inner = min(lo, p.Lo), max(hi, p.Hi), inner+p.Hi-p.Lo
	}
	return newDenseMarks(lo, hi, inner)
}

// wholeMarks is the most nodes a graph may have for a sampler to keep a
// mark for each (4 bytes a node, 64 MiB at most): its blocks are numbered
// by the marks alone at any rank count. Above it a sampler keeps marks
// for the nodes it serves (O(N/P)) and sorts the others: at 2 ranks on
// R-MAT 20 (where half a block's sources are other ranks' nodes) that
// took 0.28-0.35 s of 1.25-1.51 per rank over 64 batches, the marks
// alone 0.15-0.23 of 1.06-1.31.
const wholeMarks = 1 << 24

// partsOf puts the partition of each node of nodes in parts, or fails on a
// node outside the graph.
func (s *Sampler) partsOf(nodes []int64, parts []int32) error {
	if err := s.served.Book.Parts(nodes, parts); err != nil {
		return fmt.Errorf("sampler: %w", err)
	}
	return nil
}

// localPositions draws the edges of the frontier's nodes this rank serves
// (s.parts holds every node's partition), in frontier order, into s.lpos
// as edge table entries (with each one's edge type, and its partition
// when original edge IDs are read). It goes chunk by chunk: first a read
// of each local node's indptr entry, loads the CPU keeps many of in
// flight, then the draws, which find them in the cache (each node's draws
// branch too much for the CPU to run ahead to the next node's indptr).
func (s *Sampler) localPositions(key Key, layer int, frontier []int64) {
	s.lpos, s.lpart, s.ltype = s.lpos[:0], s.lpart[:0], s.ltype[:0]
	for c := 0; c < len(frontier); c += rangeChunk {
		chunk := frontier[c:min(c+rangeChunk, len(frontier))]
		parts := s.parts[c : c+len(chunk)]
		s.readChunkRanges(chunk, parts)
		s.drawAhead(chunk, parts, key, layer, &s.excl)
		if s.plainDraws() {
			s.localChunkPlain(c, chunk, parts, key, layer)
			continue
		}
		for j, v := range chunk {
			s.localNode(c+j, v, int(parts[j]), key, layer)
		}
	}
}

// plainDraws says whether the layer's local draws are uniform, without
// replacement or original edge IDs: localChunkPlain's case, the node
// task's and the link task's nodes without exclusions.
func (s *Sampler) plainDraws() bool {
	d := &s.draws
	return !d.weighted && !d.replace && !s.o.OrigEIDs
}

// localChunkPlain is localNode for every node of chunk (frontier nodes
// c.., parts[j] the partition of chunk[j]) when plainDraws: the same
// positions as positions and tableDraws make, in one loop per node and
// edge type that takes a range whole or chooses from it, offsets the
// positions by the range's start and the partition's base in the table,
// and records their type, where those went over each node's positions
// three times.
func (s *Sampler) localChunkPlain(c int, chunk []int64, parts []int32, key Key, layer int) {
	d := &s.draws
	if s.oneTypeLayer(layer) {
		s.localChunkOneType(c, chunk, parts, key, layer, d.fanouts[layer][0])
		return
	}
	lpos, ltype := s.lpos, s.ltype
	for j, v := range chunk {
		part := parts[j]
		vw := s.views[part]
		if vw == nil || s.excl.of(v) != nil {
			lpos, ltype = s.notPlain(c+j, v, part, vw, key, layer, lpos, ltype)
			continue
		}
		start := len(lpos)
		s.localAt[c+j] = int32(start)
		local, base := v-vw.p.Lo, s.table.base[part]
		for t, f := range d.fanouts[layer] {
			if f == 0 {
				continue
			}
			a, b := s.chunkRange(j, vw, local, t)
			if f < 0 || b-a <= int64(f) { // all of them (or none)
				for q := a + base; q < b+base; q++ {
					lpos, ltype = append(lpos, q), append(ltype, int16(t))
				}
				continue
			}
			for _, x := range floyd(&d.ch, d.uniformDraws(v, key, layer, t, f), b-a) {
				lpos, ltype = append(lpos, x+a+base), append(ltype, int16(t))
			}
		}
		s.counts[c+j] = int32(len(lpos) - start)
	}
	s.lpos, s.ltype = lpos, ltype
}

// notPlain settles frontier node i, v of partition part (view vw), which
// a chunk's loop does not draw: not served here (vw nil: localAt -1), or
// with exclusions (localNode draws it, after the loop's positions and
// types, which it appends to, are handed over). It returns them as they
// are after.
func (s *Sampler) notPlain(i int, v int64, part int32, vw *view, key Key, layer int, lpos []int64, ltype []int16) ([]int64, []int16) {
	if vw == nil {
		s.localAt[i] = -1
		return lpos, ltype
	}
	s.lpos, s.ltype = lpos, ltype
	s.localNode(i, v, int(part), key, layer)
	return s.lpos, s.ltype
}

// oneTypeChunks says whether localChunkPlain hands a graph of one edge
// type to localChunkOneType (a variable for the test that compares the
// two).
var oneTypeChunks = true

// localChunkOneType is localChunkPlain for a graph of one edge type, at a
// fanout of f: the chunk's ranges as readChunkRanges read them, without
// the loop over edge types, and the positions' types (all 0) written in
// one go at the end, where an append per position wrote each. R-MAT 20,
// one rank, three sets of 8 alternated pairs: medians 0.481, 0.489 and
// 0.485 of bench/sample's limit against 0.464, 0.456 and 0.472.
func (s *Sampler) localChunkOneType(c int, chunk []int64, parts []int32, key Key, layer, f int) {
	lpos := s.lpos
	for j, v := range chunk {
		part := parts[j]
		vw := s.views[part]
		if vw == nil || s.excl.of(v) != nil {
			lpos, s.ltype = s.notPlain(c+j, v, part, vw, key, layer, lpos, zeroTypes(s.ltype, len(lpos)))
			continue
		}
		start := len(lpos)
		s.localAt[c+j] = int32(start)
		lpos = s.appendOneType(lpos, j, v, part, key, layer, f)
		s.counts[c+j] = int32(len(lpos) - start)
	}
	s.lpos, s.ltype = lpos, zeroTypes(s.ltype, len(lpos))
}

// oneTypeLayer says whether a layer's plain draws (plainDraws) can go
// through appendOneType: a graph of one edge type, one fanout.
func (s *Sampler) oneTypeLayer(layer int) bool {
	return oneTypeChunks && s.plainDraws() && len(s.draws.fanouts[layer]) == 1 && len(s.served.Config.EdgeTypes) <= 1
}

// appendOneType appends to pos the edge table entries drawn at fanout f
// for node j of the chunk whose ranges readChunkRanges read, v of
// partition part: the range whole where f takes all of it, else Floyd's
// choice from it (the same positions as tableDraws makes).
func (s *Sampler) appendOneType(pos []int64, j int, v int64, part int32, key Key, layer, f int) []int64 {
	base := s.table.base[part]
	a, b := s.ra[j]+base, s.rb[j]+base
	switch {
	case f == 0:
	case f < 0 || b-a <= int64(f): // all of them (or none)
		for q := a; q < b; q++ {
			pos = append(pos, q)
		}
	default:
		d := &s.draws
		for _, x := range floyd(&d.ch, d.uniformDraws(v, key, layer, 0, f), b-a) {
			pos = append(pos, x+a)
		}
	}
	return pos
}

// zeroTypes returns types extended to n entries with type 0.
func zeroTypes(types []int16, n int) []int16 {
	k := len(types)
	types = slices.Grow(types, n-k)[:n]
	clear(types[k:])
	return types
}

// rangeChunk is the frontier nodes whose indptr entries are read ahead of
// their draws: their cache lines stay in L1.
const rangeChunk = 256

// readChunkRanges reads the in-edge ranges of the nodes of chunk served here
// (parts[j] is the partition of chunk[j]) ahead of their draws, in one
// loop of independent loads: into s.ra and s.rb for a partition of one
// edge type, which drawAhead and localChunkPlain then take from there
// (chunkRange) where each read the indptr again; the first indptr entry
// of a node of several types is only touched, its lines left in L1.
func (s *Sampler) readChunkRanges(chunk []int64, parts []int32) {
	var sink int64
	for j, v := range chunk {
		switch vw := s.views[parts[j]]; {
		case vw == nil:
		case vw.etypes <= 1:
			l := v - vw.p.Lo
			s.ra[j], s.rb[j] = vw.tptr[l], vw.tptr[l+1]
		default:
			sink += vw.tptr[(v-vw.p.Lo)*int64(vw.etypes)]
		}
	}
	s.sink += sink
}

// chunkRange returns the in-edge range of type t of node j of the chunk
// readChunkRanges read, local ID local of view vw.
func (s *Sampler) chunkRange(j int, vw *view, local int64, t int) (int64, int64) {
	if vw.etypes <= 1 {
		return s.ra[j], s.rb[j]
	}
	return vw.rangeOf(local, t)
}

// drawAhead computes the uniform draws of the nodes of chunk served here
// (parts[j] is the partition of chunk[j]) that excl does not name, for
// their choices to take (nodeDraws.ahead), in the order those make them.
// The chunk's ranges are readChunkRanges' of it.
func (s *Sampler) drawAhead(chunk []int64, parts []int32, key Key, layer int, excl *exclusionSet) {
	d := &s.draws
	d.ahead.reset(key)
	if d.weighted {
		return
	}
	for j, v := range chunk {
		vw := s.views[parts[j]]
		if vw == nil || excl.of(v) != nil {
			continue
		}
		for t, f := range d.fanouts[layer] {
			if a, b := s.chunkRange(j, vw, v-vw.p.Lo, t); drawnAhead(f) && d.drawsFor(b-a, f) {
				d.ahead.add(v, streamWord1(ForNeighbors, Lane(layer, t)), f)
			}
		}
	}
	d.ahead.done()
}

// localNode draws frontier node i, v of partition part, when it is local,
// and marks it as drawn elsewhere otherwise.
func (s *Sampler) localNode(i int, v int64, part int, key Key, layer int) {
	vw := s.views[part]
	if vw == nil {
		s.localAt[i] = -1
		return
	}
	start := len(s.lpos)
	s.localAt[i] = int32(start)
	s.lpos, s.ltype, s.lpart = s.tableDraws(vw, part, v, key, layer, s.excl.of(v), s.lpos, s.ltype, s.lpart)
	s.counts[i] = int32(len(s.lpos) - start)
}

// tableDraws appends to pos the edge table entries drawn for node v of
// partition part (served here as vw) at layer under key, none of those
// excl names, their edge types to types and, with original edge IDs,
// their partition to parts: the draws of a local node and of a node
// another rank asks for alike.
func (s *Sampler) tableDraws(vw *view, part int, v int64, key Key, layer int, excl []Exclusion, pos []int64, types, parts []int16) ([]int64, []int16, []int16) {
	start := len(pos)
	pos, types = s.draws.positions(vw, v-vw.p.Lo, v, key, layer, excl, pos, types)
	base := s.table.base[part]
	for k := start; k < len(pos); k++ {
		pos[k] += base
	}
	if s.o.OrigEIDs {
		for range len(pos) - start {
			parts = append(parts, int16(part))
		}
	}
	return pos, types, parts
}

// readLocal reads the sources and edge IDs (and original edge IDs) of the
// local draws from the edge table into s.local, in one pass of
// independent loads, which the CPU keeps many of in flight. When every
// node of the layer is local (block), s.local becomes the block's edges as
// it is (its edge IDs and types are new slices, not scratch); otherwise it
// is scratch that mergeInOrder copies into place among the remote edges.
// (Read node by node into place, runs of 5 edges on average, the same
// reads took twice as long.)
func (s *Sampler) readLocal(block bool) {
	n := len(s.lpos)
	s.local.src = growInt64(s.local.src, n)
	if block {
		s.local.eid, s.local.etype = make([]int64, n), slices.Clone(s.ltype)
	} else {
		s.local.eid, s.local.etype = growInt64(s.leid, n), s.ltype
		s.leid = s.local.eid
	}
	s.table.read(s.lpos, s.local.src, s.local.eid)
	s.local.orig = nil
	if s.o.OrigEIDs {
		if block {
			s.local.orig = make([]int64, n)
		} else {
			s.lorig = growInt64(s.lorig, n)
			s.local.orig = s.lorig
		}
		s.readOrig(s.lpos, s.lpart, s.local.orig)
	}
}

// mergeInOrder puts the local and remote edges of the frontier's nodes
// together in frontier order, into new slices of s.all (the block's): each
// node's run copied from s.local or s.far, and the count of each node's
// edges.
func (s *Sampler) mergeInOrder(frontier []int64) {
	n := s.local.len() + s.far.len()
	all := &s.all
	all.src = growInt64(all.src, n)
	all.eid, all.etype, all.orig = make([]int64, n), make([]int16, n), nil
	if s.o.OrigEIDs {
		all.orig = make([]int64, n)
	}
	// A run of frontier nodes drawn here, or of nodes drawn elsewhere, is
	// one run of edges in s.local or s.far, copied in one go.
	k, f, farAt := 0, 0, 0
	for i := 0; i < len(frontier); {
		from, at, c, j := &s.local, int(s.localAt[i]), 0, i
		if at >= 0 {
			for ; j < len(frontier) && s.localAt[j] >= 0; j++ {
				c += int(s.counts[j])
			}
		} else {
			from, at = &s.far, farAt
			for ; j < len(frontier) && s.localAt[j] < 0; j++ {
				n := int(s.farCount[f])
				f++
				s.counts[j] = int32(n)
				c += n
			}
			farAt += c
		}
		copy(all.src[k:k+c], from.src[at:at+c])
		copy(all.eid[k:k+c], from.eid[at:at+c])
		copy(all.etype[k:k+c], from.etype[at:at+c])
		if s.o.OrigEIDs {
			copy(all.orig[k:k+c], from.orig[at:at+c])
		}
		k += c
		i = j
	}
}

// readOrig puts the original edge IDs of edge table entries pos (of
// partitions parts) into orig.
func (s *Sampler) readOrig(pos []int64, parts []int16, orig []int64) {
	for k, i := range pos {
		part := parts[k]
		orig[k] = s.views[part].p.OrigEIDs[i-s.table.base[part]]
	}
}

func grow32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}
