package parmetis

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gnnrun/collective"
	"gnnrun/rank"
)

// balance moves vertices out of parts above their bound, best gain first
// (negative gains allowed), until every part is within its bounds for every
// constraint. On the finest level (final) it fails if that cannot be done.
//
// Shared rounds split the excess and the room among all ranks; when a share
// is under one vertex's weight they move nothing, and the ranks then take
// turns, one rank with the whole excess and room per round.
func (r *refiner) balance(final bool) error {
	turn := -1 // shared rounds until they stall
	for round := 0; round < balanceRounds && !r.pb.balanced(); round++ {
		moved, err := r.settle(r.balanceMoves(turn), false)
		if err != nil {
			return err
		}
		if !moved {
			if turn == r.g.c.Size()-1 {
				break // every rank had its turn in vain
			}
			turn++
		}
	}
	if final && !r.pb.balanced() && r.g.NCon > 1 {
		if err := r.unlock(); err != nil {
			return err
		}
	}
	if final && !r.pb.balanced() {
		return r.unbalancedError()
	}
	return nil
}

// unlock balances several constraints that lock each other: every part
// over in one of them, and every move that fits refused (R-MAT 20
// unpermuted, K = 4, balanced on nodes, training nodes and in-edges at 2
// ranks: one part over in nodes could give only to parts over in edges,
// and those could give their edges only to it, full in nodes). The ranks
// take turns, each with the whole excess and room, and a move is taken
// when it lowers its two parts' total excess over their bounds (eases),
// though it may put the receiving part over in a constraint: the excess
// summed over all parts falls with every move, so the turns end. The
// bounds are tightened meanwhile to unlockKeep of their allowance: a part
// exactly at its bound in one constraint, owing nothing, would block the
// parts that need its room in another (in that R-MAT run, nodes at the
// bound and edges 0.5 M under it, while two parts stayed 1 and 4 edges
// over theirs); tightened, it gives up some of the first and takes theirs.
func (r *refiner) unlock() error {
	o := r.ctl.o
	tight := make([]float64, len(o.Imbalance))
	for c, u := range o.Imbalance {
		tight[c] = 1 + (u-1)*unlockKeep
	}
	r.ctl.o.Imbalance, r.unlocking = tight, true
	defer func() { r.ctl.o.Imbalance, r.unlocking = o.Imbalance, false }()
	var err error
	if r.pb, err = newPartBook(r.g.c, r.g.NCon, r.g.Vwgt, r.full, r.ctl.o); err != nil {
		return err
	}
	np := r.g.c.Size()
	idle := 0 // turns in a row that moved nothing
	for round := 0; round < balanceRounds*np && idle < np && !r.pb.balanced(); round++ {
		moved, err := r.settle(r.balanceMoves(round%np), false)
		if err != nil {
			return err
		}
		idle++
		if moved {
			idle = 0
		}
	}
	r.pb, err = newPartBook(r.g.c, r.g.NCon, r.g.Vwgt, r.full, o)
	return err
}

// unbalancedError describes a partition balancing could not bring within
// its bounds: the part and constraint furthest above, and, when the
// vertices' weights alone make the bound unreachable (the heaviest vertex
// outweighs a part's bound, or equal weights cannot split evenly enough),
// the smallest bound that could be met. It is collective.
func (r *refiner) unbalancedError() error {
	g, pb, o := r.g, r.pb, r.ctl.o
	nc := g.NCon
	heavy := make([]int64, nc)
	light := make([]int64, nc)
	for c := range nc {
		light[c] = math.MaxInt64
	}
	for v := range g.NLocal() {
		for c := range nc {
			heavy[c] = max(heavy[c], g.Vwgt[v*nc+c])
			light[c] = min(light[c], g.Vwgt[v*nc+c])
		}
	}
	heavy, err := collective.Allreduce(g.c, heavy, rank.Max)
	if err != nil {
		return err
	}
	if light, err = collective.Allreduce(g.c, light, rank.Min); err != nil {
		return err
	}
	worst, wp, wc := 0.0, 0, 0
	for p := range pb.k {
		for c := range nc {
			if m := pb.max[p*nc+c]; m > 0 && float64(pb.w[p*nc+c])/m > worst {
				worst, wp, wc = float64(pb.w[p*nc+c])/m, p, c
			}
		}
	}
	msg := fmt.Sprintf("parmetis: could not balance the parts within %v: part %d weighs %d in constraint %d, above its bound %.1f (%v x its target)",
		o.Imbalance, wp, pb.w[wp*nc+wc], wc, pb.max[wp*nc+wc], o.Imbalance[wc])
	// The least reachable bound: a part must take the heaviest vertex; with
	// equal weights and equal targets, some part takes ceil(n/K) vertices.
	c := wc
	target := o.TargetWeights[wp] * float64(pb.total[c])
	need := float64(heavy[c]) / target
	if light[c] == heavy[c] && heavy[c] > 0 && !slices.ContainsFunc(o.TargetWeights, func(t float64) bool { return t != o.TargetWeights[0] }) {
		n := pb.total[c] / heavy[c]
		need = max(need, float64((n+int64(pb.k)-1)/int64(pb.k)*heavy[c])/target)
	}
	if need > o.Imbalance[c] {
		msg += fmt.Sprintf("; no partition can meet it: the vertices' weights need an imbalance of at least %.3f in constraint %d (raise --imbalance or use fewer parts)", need, c)
	}
	return errors.New(msg)
}

// balanceMoves picks this rank's moves out of overweight parts: it owes
// each such part its share of the excess, in proportion to the part's
// weight it holds, and pays it with the moves that lose the least cut. With
// turn >= 0 only rank turn moves, owing the whole excess, with all the room.
func (r *refiner) balanceMoves(turn int) []move {
	g, pb := r.g, r.pb
	k, nc := pb.k, g.NCon
	np := float64(g.c.Size())
	if turn >= 0 {
		if g.c.Rank() != turn {
			return nil
		}
		np = 1
	}
	mine := make([]int64, k*nc)
	for v := range g.NLocal() {
		for c := range nc {
			mine[int(r.full[v])*nc+c] += g.Vwgt[v*nc+c]
		}
	}
	owe := make([]float64, k*nc)
	for i, w := range pb.w {
		if ex := float64(w) - pb.max[i]; ex > 0 && w > 0 {
			owe[i] = ex * float64(mine[i]) / float64(w)
			if turn >= 0 {
				owe[i] = ex
			}
		}
	}
	// Every rank may fill a part only up to its 1/P share of the room left,
	// or all ranks together would overfill the part they all like best.
	w := slices.Clone(pb.w)
	for i := range w {
		if room := pb.max[i] - float64(pb.w[i]); room > 0 {
			w[i] = int64(math.Ceil(pb.max[i] - room/np))
		}
	}
	var cands []move
	for v := range int32(g.NLocal()) {
		a := r.full[v]
		if !r.helps(owe, a, v) {
			continue
		}
		if b, gain := r.bestTarget(w, v, a); b >= 0 {
			cands = append(cands, move{v, a, b, gain})
		}
	}
	slices.SortStableFunc(cands, func(x, y move) int { return int(y.gain - x.gain) })
	var moves []move
	for _, m := range cands {
		vw := g.Vwgt[int(m.v)*nc : int(m.v+1)*nc]
		if !r.helps(owe, m.from, m.v) || !r.takes(w, m.from, m.to, vw) || !r.unlocking && pb.over(w, int(m.to)) > 0 {
			continue
		}
		r.apply(w, m)
		for c := range nc {
			owe[int(m.from)*nc+c] -= float64(vw[c])
		}
		moves = append(moves, m)
	}
	return moves
}

// helps reports whether moving v out of part a reduces a constraint in
// which a still owes weight.
func (r *refiner) helps(owe []float64, a, v int32) bool {
	nc := r.g.NCon
	for c := range nc {
		if owe[int(a)*nc+c] > 0 && r.g.Vwgt[int(v)*nc+c] > 0 {
			return true
		}
	}
	return false
}

// bestTarget returns the part v should move to from a: the neighbouring
// part with the strongest connection that takes it (the lower of equals),
// else the least loaded part that takes it; and the gain of the move.
func (r *refiner) bestTarget(w []int64, v, a int32) (int32, int64) {
	pb, nc := r.pb, r.g.NCon
	vw := r.g.Vwgt[int(v)*nc : int(v+1)*nc]
	parts := r.connectivity(v)
	best := int32(-1)
	for _, b := range parts {
		if b != a && r.takes(w, a, b, vw) && (best < 0 || r.conn[b] > r.conn[best] || (r.conn[b] == r.conn[best] && b < best)) {
			best = b
		}
	}
	if best >= 0 {
		return best, r.conn[best] - r.conn[a]
	}
	for b := range int32(pb.k) {
		if b != a && r.takes(w, a, b, vw) && (best < 0 || pb.load(w, int(b), nil, 0) < pb.load(w, int(best), nil, 0)) {
			best = b
		}
	}
	return best, -r.conn[a]
}

// takes reports whether balancing may move weights vw from part a to part
// b, on top of the weights w: where b has room for them, or, while
// unlocking, where the move eases the two parts' excess.
func (r *refiner) takes(w []int64, a, b int32, vw []int64) bool {
	if r.unlocking {
		return r.pb.eases(w, int(a), int(b), vw)
	}
	return r.pb.fits(w, int(b), vw)
}
