package parmetis

import (
	"fmt"
	"time"
)

// LevelStats describes one level of the hierarchy.
type LevelStats struct {
	Vertices int64   `json:"vertices"`
	Arcs     int64   `json:"arcs"`
	Seconds  float64 `json:"coarsen_seconds"`
	// The cut when the partition arrived at this level, after greedy
	// refinement (never more), and after balancing.
	ProjectedCut int64 `json:"projected_cut"`
	RefinedCut   int64 `json:"refined_cut"`
	BalancedCut  int64 `json:"balanced_cut"`
}

// Result is a partition of a DistGraph and what it cost.
type Result struct {
	// Part is the part of each vertex this rank owns, the vertices from Lo.
	Lo   int64
	Part []int32
	// Cut is the total weight of edges between parts.
	Cut int64
	// Imbalance per constraint: the heaviest part's weight over its target.
	Imbalance []float64
	// Levels of the distributed hierarchy, finest first; the coarsest was
	// partitioned serially on every rank.
	Levels []LevelStats
	// Seconds spent per phase: coarsen, initial, project, refine; with
	// recursive bisection also split, pieces and finish; isolated when the
	// vertices without edges were set aside.
	Seconds map[string]float64
}

// Method is how a K-way partition is reached.
type Method int

// The methods.
const (
	// MethodAuto is MethodRB for K > 2 on several ranks, else MethodKway,
	// except on graphs with communities (see probeCommunities).
	MethodAuto Method = iota
	// MethodKway partitions into K parts directly and refines k-way.
	MethodKway
	// MethodRB bisects recursively, splitting the ranks with the graph.
	MethodRB
)

var methodNames = []string{"auto", "kway", "rb"}

// String returns the method's name.
func (m Method) String() string {
	if int(m) < len(methodNames) {
		return methodNames[m]
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// ParseMethod parses "auto", "kway" or "rb".
func ParseMethod(s string) (Method, error) {
	for i, n := range methodNames {
		if n == s {
			return Method(i), nil
		}
	}
	return 0, fmt.Errorf("parmetis: method %q: want auto, kway or rb", s)
}

// Partition computes a K-way partition of g with minimum edge cut under the
// balance constraints, by distributed recursive bisection (PartitionRB) when
// K > 2 on several ranks, or on one rank for a graph that hangs on a dense
// core (hangsOnCore), and by the direct multilevel scheme (PartitionKway)
// otherwise or on a graph with communities (probeCommunities), unless
// o.Method says which. It is collective and
// deterministic for a given seed and rank count.
func Partition(g *DistGraph, o Options) (*Result, error) {
	if res, ok, err := partitionAroundIsolatedDist(g, o); err != nil || ok {
		return res, err
	}
	m := o.Method
	if m == MethodAuto {
		m = MethodKway
		if o.Parts > 2 && g.c.Size() > 1 {
			m = MethodRB
		}
		communities, err := probeCommunities(g, &o)
		if err != nil {
			return nil, err
		}
		switch {
		case communities:
			m = MethodKway
		case o.Parts > 2 && g.c.Size() == 1:
			core, err := g.hangsOnCore(o)
			if err != nil {
				return nil, err
			}
			if core {
				// Bisected from degree splits, as on several ranks,
				// not serially (see rbRecurse).
				m, o.core = MethodRB, 1
			}
		}
	}
	if m == MethodRB {
		return PartitionRB(g, o)
	}
	return PartitionKway(g, o)
}

// probeCommunities looks for communities, where recursive bisection costs
// more than it gains: on a power-law graph above the replication floor,
// partitioned in 3 to probeMaxParts parts (neither set by o), it builds
// the first level's stars and reports whether they collapse the graph.
// Then the graph is partitioned k-way. On one rank the stars are those
// PartitionKway would build, and o keeps them for it to contract, with
// the ceiling of the floor; on several, each rank builds its own over the
// arcs between its own vertices (localStars), without requests, which
// the distributed ones need to collapse a graph: planted R-MAT 16 at two
// ranks kept one vertex in 4.6 with them, as plain R-MAT did. It is
// collective.
//
// Recursive bisection cuts R-MAT best, whose first star level keeps a
// quarter of the vertices around its dense core: coarsened to the floor
// on one rank, R-MAT 20 was cut 4.2x more at K = 4. Where stars collapse
// communities (planted R-MAT 20 keeps one vertex in 105), the k-way
// scheme's levels cost less than the bisections, each of which coarsens
// its side again, for the same cut: on one rank 22 s against 37 s at
// K = 4, 30 s against 47 s at K = 8 (the serial bisections); on two ranks
// 13 s against 25 s at K = 4 (the distributed ones). Above probeMaxParts,
// parts split the communities and the k-way refinement cut 2% more on one
// rank (K = 16 and 64).
func probeCommunities(g *DistGraph, o *Options) (bool, error) {
	if o.Parts <= 2 || o.Parts > probeMaxParts || o.MaxReplicated != 0 || o.Coarsening == CoarsenMatch {
		return false, nil
	}
	arcs, err := g.arcs()
	if err != nil || g.N()+arcs <= withSlack(replicateFloor) {
		return false, err
	}
	ctl, err := newCtrl(g, *o)
	if err != nil {
		return false, err
	}
	if ctl.coarsening, err = o.Coarsening.resolve(g); err != nil || ctl.coarsening != CoarsenStars {
		return false, err
	}
	if g.c.Size() > 1 {
		return g.collapses(g.localStars(ctl))
	}
	leader, err := g.match(ctl, 1)
	if err != nil {
		return false, err
	}
	collapsed, err := g.collapses(leader)
	if err != nil || !collapsed {
		return false, err
	}
	o.firstLeader, o.MaxReplicated = leader, withSlack(replicateFloor)
	return true, nil
}

// PartitionKway computes a K-way partition of g directly: distributed
// coarsening down to a graph every rank can hold, serial multilevel
// partitions of it with a different seed on each rank (the best balanced
// cut wins), then projection and distributed refinement level by level
// (FM local search on the finest), ending with balancing. It is collective.
func PartitionKway(g *DistGraph, o Options) (*Result, error) {
	ctl, err := newCtrl(g, o)
	if err != nil {
		return nil, err
	}
	if ctl.coarsening, err = o.Coarsening.resolve(g); err != nil {
		return nil, err
	}
	var levels []*DistGraph
	var cmaps [][]int64
	var stats []LevelStats
	part := o.start
	if part != nil {
		// Refined on g itself: no hierarchy.
		arcs, err := g.arcs()
		if err != nil {
			return nil, err
		}
		levels, stats = []*DistGraph{g}, []LevelStats{{Vertices: g.N(), Arcs: arcs}}
	} else {
		if levels, cmaps, stats, err = coarsen(g, ctl); err != nil {
			return nil, err
		}
		if part, err = initialPartition(levels[len(levels)-1], ctl, len(levels) > 1); err != nil {
			return nil, err
		}
	}
	var r *refiner
	for l := len(levels) - 1; l >= 0; l-- {
		if l < len(levels)-1 {
			t0 := time.Now()
			if part, err = project(levels[l], levels[l+1], cmaps[l], part); err != nil {
				return nil, err
			}
			ctl.since("project", t0)
		}
		t0 := time.Now()
		if r, err = newRefiner(levels[l], ctl, l, part); err != nil {
			return nil, err
		}
		stats[l].ProjectedCut = r.cut
		// The serial partitioner refined the coarsest graph; a start
		// given is refined here.
		if l < len(levels)-1 || o.start != nil {
			if err := r.refine(); err != nil {
				return nil, err
			}
		}
		stats[l].RefinedCut = r.cut
		if err := r.balance(l == 0 && !o.bisection); err != nil {
			return nil, err
		}
		stats[l].BalancedCut = r.cut
		part = r.full[:levels[l].NLocal()]
		ctl.since("refine", t0)
	}
	return &Result{Lo: g.Lo(), Part: part, Cut: r.cut, Imbalance: r.pb.imbalance(ctl.o), Levels: stats, Seconds: ctl.seconds}, nil
}

// Evaluate returns the cut and per-constraint imbalance of a partition of
// g given by the part of each owned vertex. It is collective.
func Evaluate(g *DistGraph, part []int32, o Options) (int64, []float64, error) {
	ctl, err := newCtrl(g, o)
	if err != nil {
		return 0, nil, err
	}
	r, err := newRefiner(g, ctl, 0, part)
	if err != nil {
		return 0, nil, err
	}
	return r.cut, r.pb.imbalance(ctl.o), nil
}
