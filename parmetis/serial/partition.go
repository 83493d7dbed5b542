package serial

import (
	"errors"
	"fmt"
	"math"
)

// ErrUnbalanced is wrapped by the errors of Partition and RefineKway
// when some part stays above ub times its target weight in some constraint.
// They still return the partition, the best they found, so a caller that
// can balance later (the distributed partitioner on a coarse graph whose
// vertices are too heavy to balance exactly) may use it.
var ErrUnbalanced = errors.New("serial: partition exceeds the balance bound")

// Stats describes one serial partitioning.
type Stats struct {
	// Cut is the total weight of the edges between parts.
	Cut int64
	// Imbalance is, per constraint, the largest part weight relative to its
	// target (1 is perfect balance).
	Imbalance []float64
	// Timers holds the time of every phase, summed over goroutines.
	Timers Timers
}

// Partition returns the part of every vertex of g for a K-way partition
// with small edge cut and every part within Imbalance times its target
// weight in every constraint. It is deterministic for a given graph, options
// and seed, whatever Options.Threads.
//
// The method is multilevel recursive bisection: each bisection coarsens the
// graph by heavy-edge and 2-hop matching, bisects the coarsest graph by
// greedy graph growing from several seeds (max(Tries, 6)), and refines with
// 2-way FM on every level back up, under a per-bisection bound that
// compounds to the requested one; then k-way balancing and greedy
// refinement use the whole bound. On power-law graphs this is much better
// than direct k-way (METIS' own recursive bisection cuts 7x less than its
// k-way on R-MAT at K=2). On other graphs (largest degree at most 10x the
// average) a METIS-style direct k-way partition is computed as well, in
// parallel when Threads allow, and the better one is refined further by a
// multilevel k-way cycle; this costs about twice the time and gains a few
// percent on meshes.
//
// It fails on invalid options or a malformed graph (see Graph; symmetry is
// not checked here, Graph.Validate does that), with an error wrapping
// ErrUnbalanced, together with the partition, when it cannot meet the bound,
// and with a *PanicError when it panicked, on any of its goroutines.
func Partition(g *Graph, o Options) ([]int32, error) {
	part, _, err := PartitionStats(g, o)
	return part, err
}

// PartitionStats is Partition that also returns the cut, the imbalance and
// the time of each phase.
func PartitionStats(g *Graph, o Options) (part []int32, st *Stats, err error) {
	defer catch(&err)
	return partitionStats(g, o)
}

func partitionStats(g *Graph, o Options) ([]int32, *Stats, error) {
	if err := checkInput(g); err != nil {
		return nil, nil, err
	}
	o, err := o.Normalized(g.N(), g.NCon)
	if err != nil {
		return nil, nil, err
	}
	if o.Parts > 1 && !o.MixIsolated {
		if keep := connected(g, o.Parts); keep != nil {
			part, st, ok, err := partitionAroundIsolated(g, keep, o)
			if err != nil || ok {
				return part, st, err
			}
		}
	}
	c := newCtrl(o, g.NCon)
	part, cut := make([]int32, g.N()), int64(0)
	if o.Parts > 1 {
		part, cut, err = c.partition(g)
	}
	st := &Stats{Cut: cut, Imbalance: Imbalance(g, part, o), Timers: c.timers}
	return part, st, err
}

// candidate is a partition with the error of its balancing.
type candidate struct {
	part []int32
	err  error
}

// partition computes the candidates Partition describes and returns
// the best, and its cut.
func (c *ctrl) partition(g *Graph) ([]int32, int64, error) {
	ub := make([]float64, g.NCon)
	for i, u := range c.o.Imbalance {
		ub[i] = levelBound(u, ceilLog2(c.o.Parts))
	}
	powerLaw := skewed(g)
	var rb, direct candidate
	var rbCut int64
	c.parallel(func(c *ctrl) {
		rb.part = make([]int32, g.N())
		label := make([]int32, g.N())
		for i := range label {
			label[i] = int32(i)
		}
		c.recursiveBisect(g, label, 0, c.o.Parts, ub, rb.part)
		rbCut, rb.err = c.refineAndBalance(g, rb.part)
	}, func(c *ctrl) {
		if !powerLaw {
			direct.part, direct.err = c.directKway(g, ub, newRand(c.o.Seed, 3))
		}
	})
	if powerLaw {
		return rb.part, rbCut, rb.err
	}
	best := rb
	if better(direct.err, EdgeCut(g, direct.part), rb.err, rbCut) {
		best = direct
	}
	best.err = c.kwayCycle(g, best.part, newRand(c.o.Seed, 4))
	return best.part, EdgeCut(g, best.part), best.err
}

// better says whether a partition with balance error aErr and cut aCut
// beats one with bErr and bCut: balanced first, then the smaller cut.
func better(aErr error, aCut int64, bErr error, bCut int64) bool {
	if (aErr == nil) != (bErr == nil) {
		return aErr == nil
	}
	return aCut < bCut
}

// RefineKway improves the k-way partition part of g in place: it first
// moves vertices out of parts above their bound (allowing the cut to grow)
// until every part is within bound in every constraint, then runs greedy
// refinement passes that never increase the cut nor break the bound: the
// last step of Partition, for a partition found some other way. It fails
// on invalid options, a malformed graph or part
// values outside [0, Parts), with an error wrapping ErrUnbalanced when
// balance cannot be reached (part is still refined), and with a *PanicError
// when it panicked.
func RefineKway(g *Graph, part []int32, o Options) (err error) {
	defer catch(&err)
	return refineKway(g, part, o)
}

func refineKway(g *Graph, part []int32, o Options) error {
	if err := checkInput(g); err != nil {
		return err
	}
	o, err := o.Normalized(g.N(), g.NCon)
	if err != nil {
		return err
	}
	if len(part) != g.N() {
		return fmt.Errorf("serial: %d parts given for %d vertices", len(part), g.N())
	}
	for v, p := range part {
		if p < 0 || int(p) >= o.Parts {
			return fmt.Errorf("serial: vertex %d is in part %d, outside [0,%d)", v, p, o.Parts)
		}
	}
	_, err = newCtrl(o, g.NCon).refineAndBalance(g, part)
	return err
}

// refineAndBalance balances part, then refines it greedily, on g's level
// only, and returns its cut, which the k-way bookkeeping keeps (a recount
// over every edge cost a two-rank run on R-MAT 20 at K = 64 0.4 s a rank,
// once per bisection of its replicated coarsest graphs).
func (c *ctrl) refineAndBalance(g *Graph, part []int32) (int64, error) {
	if c.o.Parts == 1 {
		return 0, nil
	}
	s := newKway(g, part, c.o)
	err := c.balanceKway(s)
	c.refineKway(s, newRand(c.o.Seed, 2), kwayPasses)
	return s.cut, err
}

// checkInput checks what the partitioner relies on in O(n+m): CSR
// shape, neighbour range, no self loops, positive edge weights and
// non-negative vertex weights.
func checkInput(g *Graph) error {
	if g == nil || len(g.Xadj) == 0 {
		return errors.New("serial: no graph (xadj must have n+1 entries)")
	}
	if g.NCon < 1 {
		return fmt.Errorf("serial: %d balance constraints, need at least 1", g.NCon)
	}
	n := g.N()
	if n > math.MaxInt32 {
		return fmt.Errorf("serial: %d vertices, more than a serial graph's int32 indices hold", n)
	}
	if g.Xadj[0] != 0 || g.Xadj[n] != int64(len(g.Adjncy)) || len(g.Adjwgt) != len(g.Adjncy) || len(g.Vwgt) != n*g.NCon {
		return fmt.Errorf("serial: inconsistent CSR: %d vertices, xadj from %d to %d, %d neighbours, %d edge weights, %d vertex weights",
			n, g.Xadj[0], g.Xadj[n], len(g.Adjncy), len(g.Adjwgt), len(g.Vwgt))
	}
	for v := range n {
		if g.Xadj[v+1] < g.Xadj[v] {
			return fmt.Errorf("serial: xadj decreases at vertex %d", v)
		}
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			if u := g.Adjncy[e]; u < 0 || int(u) >= n || int(u) == v {
				return fmt.Errorf("serial: vertex %d has neighbour %d (self loops and indices outside [0,%d) are not allowed)", v, u, n)
			}
			if g.Adjwgt[e] <= 0 {
				return fmt.Errorf("serial: edge %d-%d has non-positive weight %d", v, g.Adjncy[e], g.Adjwgt[e])
			}
		}
	}
	for i, w := range g.Vwgt {
		if w < 0 {
			return fmt.Errorf("serial: vertex %d has negative weight %d in constraint %d", i/g.NCon, w, i%g.NCon)
		}
	}
	return nil
}
