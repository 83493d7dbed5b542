package parmetis

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"time"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/parmetis/serial"
)

// PartitionRB computes a K-way partition by distributed recursive
// bisection: the ranks bisect the graph together with the multilevel
// scheme of Partition, split into two groups in proportion to the parts
// each side will get, move each side's induced subgraph to its group, and
// recurse; a group of one rank partitions its subgraph (about N/P vertices)
// serially. Recursive bisection finds far smaller cuts than direct k-way
// refinement on power-law graphs (METIS' own -ptype=rb does), and each rank
// holds O((N+M)/P) throughout. A final k-way refinement and balancing pass
// on g follows. It is collective.
func PartitionRB(g *DistGraph, o Options) (*Result, error) {
	o, err := o.normalized(g.N(), g.NCon)
	if err != nil {
		return nil, err
	}
	if o.Parts <= 2 {
		return PartitionKway(g, o)
	}
	// The ranks of a host partition their pieces at the same time: share
	// the host's cores among them.
	if o.Threads, err = serialThreads(g.c, o.Threads); err != nil {
		return nil, err
	}
	depth := bisectionLevels(o.Parts)
	arcs, err := g.arcs()
	if err != nil {
		return nil, err
	}
	st := &rbStats{seconds: map[string]float64{}, depth: depth, budget: splitBudget * float64(arcs) / float64(g.c.Size()), core: o.core}
	part, err := rbSplit(g, o, 0, o.TargetWeights, depth, st)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	res, err := finishKway(g, o, part, st)
	st.seconds["finish"] = time.Since(t0).Seconds()
	return res, err
}

// rbStats collects what the recursion measured: the bisections' phases,
// "split" (moving the sides to their groups and the parts back) and
// "pieces" (partitioning pieces serially).
type rbStats struct {
	seconds map[string]float64
	depth   int     // bisection levels of the whole recursion
	budget  float64 // arcs a rank's group may give it: splitBudget of its share
	scope   *pieceScope
	// core: whether the graph hangs on a dense core, so its bisections
	// start from degree splits (1), not (-1), or not decided yet (0; see
	// coreStart).
	core int8
}

func (st *rbStats) since(phase string, t0 time.Time) { st.seconds[phase] += time.Since(t0).Seconds() }

// rbSplit partitions g into len(tp) parts numbered from first, with target
// weights tp (summing to 1), with depth of the st.depth levels of bisection
// left: each level may use 1/st.depth of the imbalance budget (in the
// exponent), so the levels compound to the bound asked for.
func rbSplit(g *DistGraph, o Options, first int, tp []float64, depth int, st *rbStats) ([]int32, error) {
	if st.scope != nil && st.scope.c == g.c {
		return rbRecurse(g, o, first, tp, depth, st)
	}
	// The recursion reached a new communicator: the pieces met on it are
	// deferred to its end (see pieceScope).
	outer := st.scope
	st.scope = newPieceScope(g.c)
	part, err := rbRecurse(g, o, first, tp, depth, st)
	sc := st.scope
	st.scope = outer
	if err != nil {
		return nil, err
	}
	defer st.since("pieces", time.Now())
	return part, sc.close(part)
}

// rbRecurse is rbSplit within the scope of g's communicator.
func rbRecurse(g *DistGraph, o Options, first int, tp []float64, depth int, st *rbStats) ([]int32, error) {
	k := len(tp)
	if k == 1 {
		part := make([]int32, g.NLocal())
		for i := range part {
			part[i] = int32(first)
		}
		return part, nil
	}
	arcs, err := g.arcs()
	if err != nil {
		return nil, err
	}
	serialHere := func() ([]int32, error) {
		defer st.since("pieces", time.Now())
		return rbSerial(g, o, first, tp, scaleBounds(o.Imbalance, depth, st.depth))
	}
	one := g.c.Size() == 1
	if one && g.N()+arcs <= replicateFloor {
		return serialHere()
	}
	if !one && depth < st.depth && g.N()+arcs <= replicateFloor {
		// (A whole graph this small keeps the path below: bisected with
		// seeded tries on every rank, then split, it gets the serial
		// partitioner's quality on both halves.)
		defer st.since("pieces", time.Now())
		return st.scope.deferPiece(g, arcs, o, first, tp, scaleBounds(o.Imbalance, depth, st.depth))
	}
	k0 := k / 2
	bi := o
	bi.Parts, bi.TargetWeights = 2, bisectionTargets(tp)
	bi.Imbalance = scaleBounds(o.Imbalance, 1, st.depth)
	bi.bisection = true
	if bi.MaxReplicated == 0 {
		// A rank may partition a piece of st.budget arcs alone (see
		// splitBudget); a replicated coarsest graph of that size costs every
		// rank the same, and saves the coarsening levels below it (on
		// R-MAT, where they shrink the graph little, they cost time and
		// cut). But a side that arrives under the budget uncoarsened gets
		// one distributed level first: replicated as it is, every rank
		// repeated the serial partitioner's whole multilevel run on it
		// (planted communities, scale 20, K = 4, 2 ranks: a 14 M-arc side,
		// 6 s and 0.5 GB a rank), where one star contraction, divided
		// among the ranks, shrinks it to a tenth.
		bi.MaxReplicated = withSlack(max(replicateFloor, int64(st.budget)))
		bi.coarsenFirst = true
	}
	if bi.start, err = g.coreStart(bi, st); err != nil {
		return nil, err
	}
	if one && bi.start == nil {
		// One rank runs the serial partitioner, threaded over the host's
		// cores, on everything but a graph that hangs on a dense core,
		// bisected from degree splits as on several ranks (R-MAT 20, K =
		// 4: cut 1,037,567 against the serial scheme's 1,878,248, 14 s
		// against 34-40 s; K = 64: 10,285,080 against 11,527,258).
		return serialHere()
	}
	res, err := PartitionKway(g, bi)
	if err != nil {
		return nil, err
	}
	for ph, s := range res.Seconds {
		st.seconds[ph] += s
	}
	p0 := int(math.Round(float64(g.c.Size()) * float64(k0) / float64(k)))
	p0 = min(max(p0, 1), g.c.Size()-1)
	// The bisection's hierarchy is garbage now: collect it before the deeper
	// levels allocate theirs.
	runtime.GC()
	split := false
	if !one {
		if split, err = g.splitPays(res.Part, p0, st.budget); err != nil {
			return nil, err
		}
	}
	halves := [2]struct {
		tp    []float64
		first int
	}{{tp[:k0], first}, {tp[k0:], first + k0}}
	if !split || k == 2 {
		// Two parts left: each side is a part, and nothing moves.
		return g.rbSequential(res.Part, halves, o, depth, st)
	}
	t0 := time.Now()
	ind, err := g.induce(res.Part, p0)
	if err != nil {
		return nil, err
	}
	runtime.GC()
	st.since("split", t0)
	h := halves[ind.side]
	subPart, err := rbSplit(ind.sub, o, h.first, normalize(h.tp), depth-1, st)
	if err != nil {
		return nil, err
	}
	defer st.since("split", time.Now())
	return ind.back(res.Part, subPart)
}

// bisectionTargets returns the target weights of the bisection that
// splits parts with target weights tp: side 0 takes the first half of the
// parts (len(tp)/2 of them), side 1 the rest.
func bisectionTargets(tp []float64) []float64 {
	w0 := 0.0
	for _, w := range tp[:len(tp)/2] {
		w0 += w
	}
	return []float64{w0, 1 - w0}
}

// splitPays reports whether splitting the ranks p0 : P-p0 between the two
// sides of a bisection keeps every rank within its budget of arcs (see
// splitBudget). On
// power-law graphs one side (the dense core) can hold most arcs; its group
// would then hold far more than O(M/P), and both sides are better
// partitioned one after the other by all ranks, until the pieces are small
// enough to split. It is collective.
func (g *DistGraph) splitPays(side []int32, p0 int, budget float64) (bool, error) {
	local := make([]int64, 2)
	for v := range g.NLocal() {
		local[side[v]] += g.Xadj[v+1] - g.Xadj[v]
	}
	arcs, err := collective.Allreduce(g.c, local, 0)
	if err != nil {
		return false, err
	}
	np := float64(g.c.Size())
	worst := max(float64(arcs[0])/float64(p0), float64(arcs[1])/(np-float64(p0)))
	return worst <= budget, nil
}

// rbSequential partitions both sides of a bisection with all ranks, one
// after the other. A subgraph the recursion built (g.scratch) induces both
// sides first and drops its arcs before partitioning them: on a power-law
// graph one side (the dense core) keeps most arcs level after level, and
// each level holding its graph while the next partitions its core kept the
// whole chain alive (R-MAT 20, K = 64, 2 ranks: 0.6-0.7 GB of 1.2 GB live
// at the peak). g itself, the caller's graph at the top, stays whole,
// and its sides are induced one at a time.
func (g *DistGraph) rbSequential(side []int32, halves [2]struct {
	tp    []float64
	first int
}, o Options, depth int, st *rbStats) ([]int32, error) {
	final := make([]int32, g.NLocal())
	var subs [2]*subgraph
	induce := func(s int) error {
		t0 := time.Now()
		defer st.since("split", t0)
		var err error
		if subs[s], err = g.induceOnAll(side, int32(s)); err == nil {
			subs[s].g.scratch = true // no one else holds it
		}
		return err
	}
	for s, h := range halves {
		if len(h.tp) == 1 {
			// One part: nothing to partition, so no subgraph to build
			// (on a power-law graph, one side holds most of g's arcs).
			for v, sd := range side {
				if sd == int32(s) {
					final[v] = int32(h.first)
				}
			}
		} else if g.scratch {
			if err := induce(s); err != nil {
				return nil, err
			}
		}
	}
	if g.scratch {
		g.dropArcs()
	}
	for s, h := range halves {
		if len(h.tp) == 1 {
			continue
		}
		if subs[s] == nil {
			if err := induce(s); err != nil {
				return nil, err
			}
		}
		subPart, err := rbSplit(subs[s].g, o, h.first, normalize(h.tp), depth-1, st)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		got, err := subs[s].back(subPart)
		if err != nil {
			return nil, err
		}
		for i, v := range subs[s].mine {
			final[v] = got[i]
		}
		subs[s] = nil
		runtime.GC()
		st.since("split", t0)
	}
	return final, nil
}

// rbSerial partitions the whole of g, held by one rank, serially, within
// the imbalance bounds ub.
func rbSerial(g *DistGraph, o Options, first int, tp []float64, ub []float64) ([]int32, error) {
	s, err := g.Replicate()
	if err != nil {
		return nil, err
	}
	return serialPiece(s, o, first, tp, ub)
}

// serialPiece partitions the piece s of a recursive bisection serially
// into the len(tp) parts numbered from first. A piece left unbalanced is
// no error: the final k-way balancing mends it.
func serialPiece(s *serial.Graph, o Options, first int, tp []float64, ub []float64) ([]int32, error) {
	so := o.Options
	so.Parts, so.TargetWeights, so.Imbalance = len(tp), tp, ub
	so.Seed = graph.Mix(o.Seed, 0x5e71a1, uint64(first))
	part, err := serial.Partition(s, so)
	if err != nil && !errors.Is(err, serial.ErrUnbalanced) {
		return nil, err
	}
	for i := range part {
		part[i] += int32(first)
	}
	return part, nil
}

// scaleBounds returns, per constraint, the share of the imbalance bound ub
// that `levels` of the `depth` levels of a recursive bisection may use, so
// that the bounds of all levels compound to ub.
func scaleBounds(ub []float64, levels, depth int) []float64 {
	out := make([]float64, len(ub))
	for i, u := range ub {
		out[i] = math.Pow(u, float64(levels)/float64(max(depth, 1)))
	}
	return out
}

func normalize(tp []float64) []float64 {
	s := 0.0
	for _, w := range tp {
		s += w
	}
	out := make([]float64, len(tp))
	for i, w := range tp {
		out[i] = w / s
	}
	return out
}

// finishKway refines the assembled partition with greedy k-way moves (the
// cut never grows) and balances it, on the original graph.
func finishKway(g *DistGraph, o Options, part []int32, st *rbStats) (*Result, error) {
	ctl, err := newCtrl(g, o)
	if err != nil {
		return nil, err
	}
	ctl.fm, ctl.passGain = false, finishGain
	r, err := newRefiner(g, ctl, 0, part)
	if err != nil {
		return nil, err
	}
	final := LevelStats{Vertices: g.N(), ProjectedCut: r.cut}
	if final.Arcs, err = g.arcs(); err != nil {
		return nil, err
	}
	if err := r.refine(); err != nil {
		return nil, err
	}
	final.RefinedCut = r.cut
	if err := r.balance(true); err != nil {
		return nil, err
	}
	final.BalancedCut = r.cut
	// The hierarchy of the top bisection is not the k-way result's; report
	// the assembled partition as the one level.
	levels := []LevelStats{final}
	return &Result{Lo: g.Lo(), Part: r.full[:g.NLocal()], Cut: r.cut, Imbalance: r.pb.imbalance(ctl.o), Levels: levels, Seconds: st.seconds}, nil
}

// induced is one rank's view of a graph split in two: the subgraph of its
// own group's side, on the group's communicator, and how to map results
// back to the vertices of the graph it came from.
type induced struct {
	g     *DistGraph
	sub   *DistGraph
	side  int     // the side this rank's group took
	newID []int64 // ID of every owned vertex of g in its side's subgraph
	first [2]int  // first rank in g's communicator of each group
	books [2]graph.Book
}

// induce moves the subgraph induced by the vertices on side 0 of side[] to
// ranks [0, p0) of g's communicator and the rest to ranks [p0, P), and
// builds each on its group's communicator. It is collective.
func (g *DistGraph) induce(side []int32, p0 int) (*induced, error) {
	c, nl := g.c, g.NLocal()
	np := c.Size()
	ind := &induced{g: g, first: [2]int{0, p0}, newID: make([]int64, nl)}
	var counts [2]int64
	for v := range nl {
		counts[side[v]]++
	}
	var start, total [2]int64
	for s := range 2 {
		var err error
		if start[s], total[s], err = collective.Offset(c, counts[s]); err != nil {
			return nil, err
		}
	}
	if total[0] == 0 || total[1] == 0 {
		return nil, fmt.Errorf("parmetis: a bisection left one side empty (%d and %d vertices)", total[0], total[1])
	}
	full := make([]int64, nl+len(g.Ghosts))
	fullSide := make([]int32, nl+len(g.Ghosts))
	for v := range nl {
		s := side[v]
		full[v], fullSide[v] = start[s], s
		start[s]++
		ind.newID[v] = full[v]
	}
	if err := haloUpdate(g, full); err != nil {
		return nil, err
	}
	if err := haloUpdate(g, fullSide); err != nil {
		return nil, err
	}
	sizes := [2]int{p0, np - p0}
	spread := [2]graph.Book{graph.EvenBook(total[0], sizes[0]), graph.EvenBook(total[1], sizes[1])}
	dest := func(s int32, id int64) int { return ind.first[s] + spread[s].Owner(id) }
	nArcs, nRecs := make([]int, np), make([]int, np)
	for v := range int32(nl) {
		s := fullSide[v]
		d := dest(s, full[v])
		nRecs[d] += 1 + g.NCon
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			if fullSide[g.Adj[e]] == s {
				nArcs[d]++
			}
		}
	}
	arcs := make([][]arc, np)
	recs := make([][]int64, np)
	for d := range np {
		arcs[d], recs[d] = make([]arc, 0, nArcs[d]), make([]int64, 0, nRecs[d])
	}
	for v := range int32(nl) {
		s := fullSide[v]
		d := dest(s, full[v])
		recs[d] = append(recs[d], full[v])
		recs[d] = append(recs[d], g.Vwgt[int(v)*g.NCon:int(v+1)*g.NCon]...)
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			if u := g.Adj[e]; fullSide[u] == s {
				arcs[d] = append(arcs[d], arc{full[v], full[u], g.Adjwgt[e]})
			}
		}
	}
	gotA, err := collective.Exchange(c, arcs)
	if err != nil {
		return nil, err
	}
	gotR, err := collective.Exchange(c, recs)
	if err != nil {
		return nil, err
	}
	ind.side = 0
	if c.Rank() >= p0 {
		ind.side = 1
	}
	gc, err := c.Split(ind.side, c.Rank())
	if err != nil {
		return nil, err
	}
	in := Input{N: total[ind.side], Symmetric: true}
	m := 0
	for _, as := range gotA {
		m += len(as)
	}
	in.Src, in.Dst, in.Weight = make([]int64, 0, m), make([]int64, 0, m), make([]int64, 0, m)
	for i, as := range gotA {
		for _, a := range as {
			in.Src, in.Dst, in.Weight = append(in.Src, a.From), append(in.Dst, a.To), append(in.Weight, a.W)
		}
		gotA[i] = nil
	}
	if ind.sub, _, err = Build(gc, in); err != nil {
		return nil, err
	}
	if err := ind.sub.placeWeights(g.NCon, gotR); err != nil {
		return nil, err
	}
	return ind, ind.shareBooks()
}

// placeWeights sends vertex records (ID, then ncon weights) to the owners
// of the IDs in g and sets them as g's vertex weights. It is collective.
func (g *DistGraph) placeWeights(ncon int, recs [][]int64) error {
	send := make([][]int64, g.c.Size())
	for _, rs := range recs {
		for i := 0; i < len(rs); i += 1 + ncon {
			o := g.Dist.Owner(rs[i])
			send[o] = append(send[o], rs[i:i+1+ncon]...)
		}
	}
	got, err := collective.Exchange(g.c, send)
	if err != nil {
		return err
	}
	vw := make([]int64, g.NLocal()*ncon)
	lo := g.Lo()
	for _, rs := range got {
		for i := 0; i < len(rs); i += 1 + ncon {
			copy(vw[(rs[i]-lo)*int64(ncon):], rs[i+1:i+1+ncon])
		}
	}
	return g.SetVertexWeights(ncon, vw)
}

// shareBooks tells every rank of the parent communicator how both sides'
// subgraphs are spread over their groups.
func (ind *induced) shareBooks() error {
	his, err := collective.Allgather(ind.g.c, ind.sub.Lo()+int64(ind.sub.NLocal()))
	if err != nil {
		return err
	}
	for s := range 2 {
		end := len(his)
		if s == 0 {
			end = ind.first[1]
		}
		b := graph.Book{Bounds: []int64{0}}
		b.Bounds = append(b.Bounds, his[ind.first[s]:end]...)
		ind.books[s] = b
	}
	return nil
}

// back returns the part of every owned vertex of the parent graph, asking
// the owners of their subgraph vertices (subPart holds the parts of this
// rank's own subgraph vertices).
func (ind *induced) back(side, subPart []int32) ([]int32, error) {
	type key struct {
		Side int64
		ID   int64
	}
	keys := make([]key, len(ind.newID))
	for v, id := range ind.newID {
		keys[v] = key{int64(side[v]), id}
	}
	owner := func(k key) int { return ind.first[k.Side] + ind.books[k.Side].Owner(k.ID) }
	lo := ind.sub.Lo()
	return collective.Request(ind.g.c, keys, owner, func(_ int, ks []key) ([]int32, error) {
		out := make([]int32, len(ks))
		for i, k := range ks {
			out[i] = subPart[k.ID-lo]
		}
		return out, nil
	})
}

// bisectionLevels returns the levels of recursive bisection that make k
// parts: ceil(log2 k).
func bisectionLevels(k int) int { return bits.Len(uint(k - 1)) }
