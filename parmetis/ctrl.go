package parmetis

import (
	"math"
	"time"

	"gnnrun/collective"
)

// ctrl carries the options, the per-level tuning and the measurements
// through the phases of one distributed partitioning.
type ctrl struct {
	fm bool // refine by FM local search rather than greedy moves
	// A level's refinement stops after a pass that lowered the cut by less
	// than this fraction (refineGain; finishGain for PartitionRB's last).
	passGain   float64
	coarsening Coarsening // CoarsenMatch or CoarsenStars, once PartitionKway resolved it
	o          Options    // normalized
	seed       uint64
	maxVwgt    []int64 // heaviest coarse vertex, per constraint
	seconds    map[string]float64
}

// newCtrl normalizes o for g and sets the coarse-vertex weight limit from
// g's total weights. It is collective.
func newCtrl(g *DistGraph, o Options) (*ctrl, error) {
	o, err := o.normalized(g.N(), g.NCon)
	if err != nil {
		return nil, err
	}
	local := make([]int64, g.NCon)
	for v := range g.NLocal() {
		for c := range g.NCon {
			local[c] += g.Vwgt[v*g.NCon+c]
		}
	}
	total, err := collective.Allreduce(g.c, local, 0)
	if err != nil {
		return nil, err
	}
	ctl := &ctrl{fm: true, passGain: refineGain, o: o, seed: o.Seed, maxVwgt: make([]int64, g.NCon), seconds: map[string]float64{}}
	for c, t := range total {
		ctl.maxVwgt[c] = int64(math.Ceil(coarseVertexSlack * float64(t) / float64(coarsenPerPart*o.Parts)))
	}
	return ctl, nil
}

// since adds the time elapsed from t0 to phase: defer c.since(p, time.Now()).
func (c *ctrl) since(phase string, t0 time.Time) { c.seconds[phase] += time.Since(t0).Seconds() }
