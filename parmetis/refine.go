package parmetis

import (
	"fmt"
	"slices"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/rank"
)

// move is a vertex changing part, with the cut it saved (its gain).
type move struct {
	v        int32
	from, to int32
	gain     int64
}

// refiner improves a partition of one level of the hierarchy.
type refiner struct {
	g     *DistGraph
	ctl   *ctrl
	level int
	full  []int32 // part of every owned and ghost vertex
	pb    *partBook
	cut   int64 // global
	conn  []int64
	seen  []int32
	two   *twoWay    // with two parts: gains in O(1)
	tab   *connTable // with more parts: connectivity in O(parts touched)
	// unlocking: balancing takes moves that ease the excess (see unlock).
	unlocking bool
}

// twoWay keeps, for a partition into two parts, each owned vertex's edge
// weight to the other part and in all, so a gain costs O(1) instead of
// O(degree): the hubs of power-law graphs are asked for their gain many
// times in a phase. ext is built (O(arcs)) when a phase first asks, kept
// up to date by apply and by undone moves, and, when settle brings the
// ghosts' new parts, by ghostsMoved over the arcs into the ghosts that
// changed side (found by a sequential scan, see ghostMarks): a level's
// refinement then reads every neighbour's part once rather than once per
// phase. (A phase undone whole, rare, has it built again.)
type twoWay struct {
	ext, deg []int64
	ok       bool
	gm       ghostMarks
}

// newTwoWay returns the gain cache for g when there are two parts, else nil.
func newTwoWay(g *DistGraph, parts int) *twoWay {
	if parts != 2 {
		return nil
	}
	t := &twoWay{ext: make([]int64, g.NLocal()), deg: make([]int64, g.NLocal())}
	for v := range g.NLocal() {
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			t.deg[v] += g.Adjwgt[e]
		}
	}
	return t
}

// rebuild recomputes ext from the parts in full, and lists the arcs into
// the ghosts the first time.
func (t *twoWay) rebuild(g *DistGraph, full []int32) {
	for v := range int32(g.NLocal()) {
		t.ext[v] = external(g, full, v)
	}
	t.ok = true
}

// ghostsMoved updates ext after the ghosts' parts changed from old (one
// entry per ghost) to those in full.
func (t *twoWay) ghostsMoved(g *DistGraph, full []int32, old []int32) {
	t.gm.arcs(g, full, old, func(v int32, w int64, _, now int32) {
		if full[v] == now {
			t.ext[v] -= w
		} else {
			t.ext[v] += w
		}
	})
}

// external is the weight of owned vertex v's edges to other parts than
// its own, summed without a branch on each neighbour's part (a coin toss
// on a power-law graph).
func external(g *DistGraph, full []int32, v int32) int64 {
	lo, hi := g.Xadj[v], g.Xadj[v+1]
	wgt, pv := g.Adjwgt[lo:hi], full[v]
	var x int64
	for i, a := range g.Adj[lo:hi] {
		d := uint32(full[a] ^ pv)
		across := int64((d | -d) >> 31) // 1 where the parts differ
		x += wgt[i] & -across
	}
	return x
}

// verify checks the kept ext against a recount; tests call it (checkCut).
func (t *twoWay) verify(g *DistGraph, full []int32) error {
	kept := slices.Clone(t.ext)
	t.rebuild(g, full)
	for v, x := range kept {
		if x != t.ext[v] {
			return fmt.Errorf("parmetis: vertex %d keeps external weight %d, recounted %d", g.GID(int32(v)), x, t.ext[v])
		}
	}
	return nil
}

// moved updates ext after v changed part (full already says so).
func (t *twoWay) moved(g *DistGraph, full []int32, v int32) {
	t.ext[v] = t.deg[v] - t.ext[v]
	nl := int32(g.NLocal())
	to := full[v]
	for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
		u := g.Adj[e]
		if u >= nl {
			continue
		}
		if full[u] == to {
			t.ext[u] -= g.Adjwgt[e]
		} else {
			t.ext[u] += g.Adjwgt[e]
		}
	}
}

func newRefiner(g *DistGraph, ctl *ctrl, level int, part []int32) (*refiner, error) {
	r := &refiner{g: g, ctl: ctl, level: level, full: make([]int32, g.NLocal()+len(g.Ghosts)), conn: make([]int64, ctl.o.Parts), two: newTwoWay(g, ctl.o.Parts), tab: newConnTable(g, ctl.o.Parts)}
	copy(r.full, part)
	if err := haloUpdate(g, r.full); err != nil {
		return nil, err
	}
	return r, r.sync()
}

// sync recomputes the global part weights and cut; it is collective.
func (r *refiner) sync() error {
	pb, err := newPartBook(r.g.c, r.g.NCon, r.g.Vwgt, r.full, r.ctl.o)
	if err != nil {
		return err
	}
	r.pb = pb
	// The gain cache (two parts) or the connectivity table (other counts)
	// holds every vertex's external weight: one scan of the arcs builds it
	// and gives the cut.
	if t := r.two; t != nil {
		t.rebuild(r.g, r.full)
	} else {
		r.tab.rebuild(r.g, r.full)
	}
	cut, err := r.cachedCut()
	r.cut = cut
	return err
}

// cachedCut returns the global cut from the kept external weights (the
// gain cache with two parts, else the connectivity table), which must be
// up to date, in O(owned vertices). It is collective.
func (r *refiner) cachedCut() (int64, error) {
	var local int64
	if t := r.two; t != nil {
		for _, x := range t.ext {
			local += x
		}
	} else {
		for v := range int32(r.g.NLocal()) {
			local += r.tab.external(v, r.full[v])
		}
	}
	sum, err := collective.Sum(r.g.c, local)
	return sum / 2, err
}

// globalCut sums the weights of edges whose ends lie in different parts.
func (r *refiner) globalCut() (int64, error) {
	g := r.g
	var local int64
	for v := range int32(g.NLocal()) {
		local += external(g, r.full, v)
	}
	sum, err := collective.Sum(g.c, local)
	return sum / 2, err // every cut edge is seen from both ends
}

// gains returns the two-part gain cache, built if a phase undone whole
// left it stale, or nil with more parts.
func (r *refiner) gains() *twoWay {
	if t := r.two; t != nil && !t.ok {
		t.rebuild(r.g, r.full)
	}
	return r.two
}

// table returns the connectivity table of more (or fewer) than two parts,
// built if a phase undone whole left it stale, or nil with two parts.
func (r *refiner) table() *connTable {
	if t := r.tab; t != nil && !t.ok {
		t.rebuild(r.g, r.full)
	}
	return r.tab
}

// connectivity fills r.conn with v's edge weight to each part and returns
// the parts it touches (its own included).
func (r *refiner) connectivity(v int32) []int32 {
	for _, p := range r.seen {
		r.conn[p] = 0
	}
	r.seen = r.seen[:0]
	if t := r.gains(); t != nil {
		a := r.full[v]
		if in := t.deg[v] - t.ext[v]; in > 0 {
			r.conn[a] = in
			r.seen = append(r.seen, a)
		}
		if t.ext[v] > 0 {
			r.conn[1-a] = t.ext[v]
			r.seen = append(r.seen, 1-a)
		}
		return r.seen
	}
	parts, ws := r.table().row(v)
	for i, p := range parts {
		r.conn[p] = ws[i]
	}
	r.seen = append(r.seen, parts...)
	return r.seen
}

// partOrder is a permutation of the parts that every rank derives from the
// seed, level and pass; a phase only moves vertices up (or only down) it,
// so two neighbours on different ranks never swap parts on stale views.
func (r *refiner) partOrder(pass int) []int32 {
	k := r.ctl.o.Parts
	rankOf := make([]int32, k)
	ids := make([]int32, k)
	for i := range ids {
		ids[i] = int32(i)
	}
	slices.SortFunc(ids, func(a, b int32) int {
		x, y := graph.Mix(r.ctl.seed, uint64(r.level), uint64(pass), uint64(a)), graph.Mix(r.ctl.seed, uint64(r.level), uint64(pass), uint64(b))
		if x < y {
			return -1
		}
		if x > y {
			return 1
		}
		return int(a - b)
	})
	for i, p := range ids {
		rankOf[p] = int32(i)
	}
	return rankOf
}

// refine runs the greedy passes at this level. A phase whose moves, taken
// together, raised the cut is undone, so the cut never grows.
func (r *refiner) refine() error {
	order := r.g.visitOrder(r.ctl.seed, uint64(0x7e1+r.level))
	for pass := range refinePasses {
		perm := r.partOrder(pass)
		movedAny := false
		before := r.cut
		for phase := range 2 {
			var moved bool
			var err error
			// FM on the finest level, where it pays: its hill climbing
			// recovers what coarsening hid; greedy moves above it.
			if r.ctl.fm && r.level == 0 {
				if phase == 1 {
					continue
				}
				moved, err = r.fmPhase(order, nil, phase)
			} else {
				moved, err = r.phase(order, perm, phase)
			}
			if err != nil {
				return err
			}
			movedAny = movedAny || moved
		}
		// Stop when nothing moved or a pass gained under ctl.passGain.
		if !movedAny || before-r.cut < int64(float64(before)*r.ctl.passGain) {
			break
		}
	}
	return nil
}

// phase moves boundary vertices to the neighbouring part with the best
// positive gain that keeps within the bounds (or zero gain that improves
// balance), in one direction of perm; it reports whether any rank moved.
func (r *refiner) phase(order []int32, perm []int32, phase int) (bool, error) {
	nc := r.g.NCon
	w := slices.Clone(r.pb.w)
	var moves []move
	for _, v := range order {
		a := r.full[v]
		b, gain := r.bestMove(v, perm, phase, w, nil)
		if b < 0 || gain < 0 || (gain == 0 && !r.pb.betterBalanced(w, int(a), int(b), r.g.Vwgt[int(v)*nc:int(v+1)*nc])) {
			continue
		}
		m := move{v, a, b, gain}
		r.apply(w, m)
		moves = append(moves, m)
	}
	return r.settle(moves, true)
}

// apply moves vertex m.v in r.full and in the local weight view w.
func (r *refiner) apply(w []int64, m move) {
	nc := r.g.NCon
	r.full[m.v] = m.to
	r.movedCaches(m.v, m.from, m.to)
	for c := range nc {
		x := r.g.Vwgt[int(m.v)*nc+c]
		w[int(m.from)*nc+c] -= x
		w[int(m.to)*nc+c] += x
	}
}

// movedCaches updates the gain caches after v moved (full already says so).
func (r *refiner) movedCaches(v, from, to int32) {
	if r.two != nil && r.two.ok {
		r.two.moved(r.g, r.full, v)
	}
	if r.tab != nil && r.tab.ok {
		r.tab.moved(r.g, v, from, to)
	}
}

// settle makes this rank's moves global: it undoes each rank's share of
// the moves into parts that ended above their bound, updates the ghosts,
// and, when guard is set, undoes every move if the cut grew. It reports
// whether any rank kept a move.
func (r *refiner) settle(moves []move, guard bool) (bool, error) {
	anyMoves, err := collective.Any(r.g.c, len(moves) > 0)
	if err != nil || !anyMoves {
		return false, err
	}
	if !r.unlocking { // (unlocking, one rank moves, knowing every weight)
		if moves, err = r.undoOverflow(moves); err != nil {
			return false, err
		}
	}
	nl := r.g.NLocal()
	oldGhosts := slices.Clone(r.full[nl:])
	if err := haloUpdate(r.g, r.full); err != nil {
		return false, err
	}
	if r.two != nil && r.two.ok {
		r.two.ghostsMoved(r.g, r.full, oldGhosts)
		if checkCut {
			if err := r.two.verify(r.g, r.full); err != nil {
				return false, err
			}
		}
	}
	if r.tab != nil && r.tab.ok {
		r.tab.ghostsMoved(r.g, r.full, oldGhosts)
		if checkCut {
			if err := r.tab.verify(r.g, r.full); err != nil {
				return false, err
			}
		}
	}
	// The new cut from the kept external weights, brought up to date if
	// an undone phase left them stale: O(owned vertices). Counting the
	// change over the moved vertices' arcs cost a two-rank run on R-MAT
	// 20 at K = 64 1.1 s a rank, the hubs' arcs above all.
	r.gains()
	r.table()
	before, oldBook := r.cut, r.pb
	cut, err := r.cachedCut()
	if err != nil {
		return false, err
	}
	if r.pb, err = newPartBook(r.g.c, r.g.NCon, r.g.Vwgt, r.full, r.ctl.o); err != nil {
		return false, err
	}
	r.cut = cut
	if checkCut {
		if err := r.verifyCut(); err != nil {
			return false, err
		}
	}
	if guard && r.cut > before {
		// Every rank sees the same global cut and undoes all its moves, so
		// the partition, its weights and its cut are as before.
		for _, m := range moves {
			r.full[m.v] = m.from
		}
		if err := haloUpdate(r.g, r.full); err != nil {
			return false, err
		}
		if r.two != nil {
			r.two.ok = false
		}
		if r.tab != nil {
			r.tab.ok = false
		}
		r.cut, r.pb = before, oldBook
		return false, nil
	}
	return true, nil
}

// checkCut makes settle recompute the whole cut (and the two-part gain
// cache) after every phase and fail if the incremental one differs; tests
// set it.
var checkCut = false

func (r *refiner) verifyCut() error {
	full, err := r.globalCut()
	if err == nil && full != r.cut {
		err = fmt.Errorf("parmetis: incremental cut %d, recomputed %d", r.cut, full)
	}
	return err
}

// undoOverflow finds the parts the moves of all ranks pushed above their
// bounds and undoes, on every rank, the same fraction of its moves into
// them, lowest gains first. It returns the moves kept.
func (r *refiner) undoOverflow(moves []move) ([]move, error) {
	g, o := r.g, r.ctl.o
	k, nc := o.Parts, g.NCon
	// Global part weights after the moves, and each part's inflow.
	local := make([]int64, 2*k*nc)
	for v := range g.NLocal() {
		p := int(r.full[v])
		for c := range nc {
			local[p*nc+c] += g.Vwgt[v*nc+c]
		}
	}
	for _, m := range moves {
		for c := range nc {
			local[k*nc+int(m.to)*nc+c] += g.Vwgt[int(m.v)*nc+c]
		}
	}
	all, err := collective.Allreduce(g.c, local, rank.Sum)
	if err != nil {
		return nil, err
	}
	w, inflow := all[:k*nc], all[k*nc:]
	frac := make([]float64, k)
	anyOver := false
	for p := range k {
		for c := range nc {
			over := float64(w[p*nc+c]) - r.pb.max[p*nc+c]
			if over > 0 && inflow[p*nc+c] > 0 {
				frac[p] = max(frac[p], min(1, over/float64(inflow[p*nc+c])))
				anyOver = true
			}
		}
	}
	if !anyOver {
		return moves, nil
	}
	return r.undoShare(moves, frac), nil
}

// undoShare undoes, for each part p, the lowest-gain moves into p until at
// least frac[p] of this rank's inflow into p (summing the constraints) is
// undone.
func (r *refiner) undoShare(moves []move, frac []float64) []move {
	byGain := slices.Clone(moves)
	slices.SortStableFunc(byGain, func(a, b move) int { return int(a.gain - b.gain) })
	in := make([]int64, len(frac))
	for _, m := range moves {
		in[m.to] += r.weightSum(m.v)
	}
	undone := make([]int64, len(frac))
	keep := make(map[int32]bool, len(moves))
	for _, m := range byGain {
		if frac[m.to] > 0 && float64(undone[m.to]) < frac[m.to]*float64(in[m.to]) {
			undone[m.to] += r.weightSum(m.v)
			r.full[m.v] = m.from
			r.movedCaches(m.v, m.to, m.from)
			continue
		}
		keep[m.v] = true
	}
	out := moves[:0]
	for _, m := range moves {
		if keep[m.v] {
			out = append(out, m)
		}
	}
	return out
}

// weightSum is the sum of v's weights over the constraints.
func (r *refiner) weightSum(v int32) int64 {
	nc := r.g.NCon
	var s int64
	for c := range nc {
		s += r.g.Vwgt[int(v)*nc+c]
	}
	return max(s, 1)
}
