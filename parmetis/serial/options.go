package serial

import "fmt"

// Options are the parameters of a partitioning. The distributed partitioner
// (package parmetis) takes the same ones, and more.
type Options struct {
	// Parts is the number of parts K, 1 <= K <= vertices.
	Parts int
	// Imbalance bounds each constraint: part weight <= Imbalance[c] *
	// target weight. One value applies to every constraint. Default 1.03.
	Imbalance []float64
	// TargetWeights is the fraction of the total weight each part should
	// get (ParMETIS' tpwgts, the same for every constraint); nil means equal
	// parts. It must have Parts positive entries summing to 1 (within 1e-6).
	TargetWeights []float64
	// Seed makes the result reproducible: the same graph, options and seed
	// give the same partition.
	Seed uint64
	// Tries is how many seeded initial partitions to compute; the best
	// balanced cut wins. Default 4.
	Tries int
	// Threads bounds the goroutines the serial partitioner runs at once
	// (the halves of a recursive bisection are independent); 0 means
	// GOMAXPROCS. The partition does not depend on it.
	Threads int

	// MixIsolated keeps Partition from setting the vertices without edges
	// aside (see AsidePays and isolated.go): the distributed
	// partitioner asks so for its coarsest graph, whose partition its
	// refinement carries on. That refinement moves vertices with edges
	// only, and a part the isolated vertices filled to its bound leaves it
	// no room: rmat20 K = 2 at np = 2 cut 0.47 M with them mixed, 0.77 M
	// with them set aside.
	MixIsolated bool
}

// Normalized returns o with the defaults filled in (an imbalance bound of
// 1.03, one bound per constraint, equal target weights, 4 tries) for a graph
// of n vertices and ncon constraints. It fails on options no partition can
// meet: fewer than one part or more parts than vertices, bounds not above 1
// or not one per constraint, target weights that are not Parts positive
// fractions summing to 1, fewer than one try, negative threads. Partition
// calls it; callers that compute with the bounds and targets call it too.
func (o Options) Normalized(n, ncon int) (Options, error) {
	if o.Parts < 1 {
		return o, fmt.Errorf("serial: number of parts must be at least 1, got %d", o.Parts)
	}
	if int64(o.Parts) > int64(n) && n > 0 {
		return o, fmt.Errorf("serial: %d parts for %d vertices", o.Parts, n)
	}
	switch len(o.Imbalance) {
	case 0:
		o.Imbalance = []float64{1.03}
	case 1, ncon:
	default:
		return o, fmt.Errorf("serial: %d imbalance bounds for %d constraints", len(o.Imbalance), ncon)
	}
	if len(o.Imbalance) == 1 && ncon > 1 {
		ub := o.Imbalance[0]
		o.Imbalance = make([]float64, ncon)
		for i := range o.Imbalance {
			o.Imbalance[i] = ub
		}
	}
	for _, ub := range o.Imbalance {
		if !(ub > 1) {
			return o, fmt.Errorf("serial: imbalance bound must be above 1, got %v", ub)
		}
	}
	if o.TargetWeights == nil {
		o.TargetWeights = make([]float64, o.Parts)
		for i := range o.TargetWeights {
			o.TargetWeights[i] = 1 / float64(o.Parts)
		}
	} else {
		if len(o.TargetWeights) != o.Parts {
			return o, fmt.Errorf("serial: %d target weights for %d parts", len(o.TargetWeights), o.Parts)
		}
		s := 0.0
		for p, w := range o.TargetWeights {
			if !(w > 0) {
				return o, fmt.Errorf("serial: target weight of part %d must be positive, got %v", p, w)
			}
			s += w
		}
		if s < 1-1e-6 || s > 1+1e-6 {
			return o, fmt.Errorf("serial: target weights sum to %v, not 1", s)
		}
	}
	if o.Tries == 0 {
		o.Tries = 4
	}
	if o.Threads < 0 {
		return o, fmt.Errorf("serial: threads must not be negative, got %d", o.Threads)
	}
	if o.Tries < 1 {
		return o, fmt.Errorf("serial: tries must be at least 1, got %d", o.Tries)
	}
	return o, nil
}
