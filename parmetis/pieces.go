package parmetis

import (
	"cmp"
	"fmt"
	"slices"

	"gnnrun/collective"
	"gnnrun/parmetis/serial"
)

// Pieces of a recursive bisection that are small enough to replicate (see
// replicateFloor) are partitioned serially by one rank each. Solving each
// as the recursion meets it keeps the other ranks of the group waiting:
// on R-MAT the dense core is bisected by all ranks level after level, and
// each level leaves a piece of periphery that one rank partitions alone.
// So the pieces met while one communicator's ranks recurse together are
// deferred: each gets a solver (the rank with the least piece work so far),
// its vertices get placeholder parts, and when the recursion on that
// communicator ends the solvers partition their pieces side by side and
// the placeholders are replaced by the parts they found. The parts are
// those the first rank would have found: a piece's seed depends only on
// its first part number.

// pieceScope holds the deferred pieces of one communicator's recursion.
type pieceScope struct {
	c       *collective.Comm
	pieces  []*piece
	pending int64      // work of the pieces not solved yet (see deferPiece)
	refs    []pieceRef // placeholder -1-j stands for refs[j]
}

// piece is one deferred piece: its distributed graph until it is solved,
// what serialPiece needs, the rank solving it and the solver's result.
type piece struct {
	g      *DistGraph
	cost   int64
	o      Options
	first  int
	tp, ub []float64
	solver int
	part   []int32
}

// pieceRef names vertex V of piece Piece.
type pieceRef struct{ Piece, V int64 }

func newPieceScope(c *collective.Comm) *pieceScope { return &pieceScope{c: c} }

// deferPiece defers the piece g (with arcs arcs) and returns placeholder
// parts for its owned vertices. It is collective.
func (sc *pieceScope) deferPiece(g *DistGraph, arcs int64, o Options, first int, tp, ub []float64) ([]int32, error) {
	// Recursive bisection of the piece into k parts runs over its vertices
	// log2 k times and over its arcs about twice (pieces of periphery have
	// many vertices and few arcs): the solvers' work is balanced on that.
	cost := g.N()*int64(bisectionLevels(len(tp))) + 2*arcs
	id := int64(len(sc.pieces))
	sc.pieces = append(sc.pieces, &piece{g: g, cost: cost, o: o, first: first, tp: tp, ub: ub})
	part := make([]int32, g.NLocal())
	for v := range part {
		part[v] = -1 - int32(len(sc.refs))
		sc.refs = append(sc.refs, pieceRef{id, g.Lo() + int64(v)})
	}
	if sc.pending += cost; sc.pending > pendingCeiling {
		return part, sc.solve()
	}
	return part, nil
}

// solve partitions the pending pieces: each goes whole to a solver, the
// costliest first to the least loaded rank, and the solvers partition
// theirs side by side. It is collective.
func (sc *pieceScope) solve() error {
	var todo []*piece
	for _, p := range sc.pieces {
		if p.g != nil {
			todo = append(todo, p)
		}
	}
	byCost := slices.Clone(todo)
	slices.SortStableFunc(byCost, func(a, b *piece) int { return cmp.Compare(b.cost, a.cost) })
	load := make([]int64, sc.c.Size())
	for _, p := range byCost {
		p.solver = 0
		for r, l := range load {
			if l < load[p.solver] {
				p.solver = r
			}
		}
		load[p.solver] += p.cost
	}
	mine := make([]*serial.Graph, len(todo)) // the replicas of this rank's pieces
	for i, p := range todo {
		s, err := p.g.Replicate()
		if err != nil {
			return err
		}
		if sc.c.Rank() == p.solver {
			mine[i] = s
		}
		p.g = nil
	}
	var err error
	for i, p := range todo {
		if mine[i] != nil && err == nil {
			p.part, err = serialPiece(mine[i], p.o, p.first, p.tp, p.ub)
			mine[i] = nil
		}
	}
	sc.pending = 0
	return collective.Agree(sc.c, err)
}

// close solves the pending pieces and replaces the placeholders in part
// (the parts of the scope's top graph's owned vertices) by the solvers'
// parts. It is collective.
func (sc *pieceScope) close(part []int32) error {
	if len(sc.pieces) == 0 {
		return nil
	}
	if err := sc.solve(); err != nil {
		return err
	}
	var keys []pieceRef
	var at []int
	for i, x := range part {
		if x < 0 {
			keys, at = append(keys, sc.refs[-1-x]), append(at, i)
		}
	}
	got, err := collective.Request(sc.c, keys, func(k pieceRef) int { return sc.pieces[k.Piece].solver },
		func(_ int, ks []pieceRef) ([]int32, error) {
			out := make([]int32, len(ks))
			for i, k := range ks {
				out[i] = sc.pieces[k.Piece].part[k.V]
			}
			return out, nil
		})
	if err != nil {
		return err
	}
	for i, j := range at {
		part[j] = got[i]
	}
	if slices.ContainsFunc(part, func(x int32) bool { return x < 0 }) {
		return fmt.Errorf("parmetis: a deferred piece left a vertex without a part")
	}
	return nil
}
