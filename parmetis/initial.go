package parmetis

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/parmetis/serial"
)

// Replicate gathers the whole distributed graph on every rank as a serial
// Graph whose vertex i is global vertex i. It is meant for the coarsest
// graph, whose size the caller bounds; it is collective.
func (g *DistGraph) Replicate() (*serial.Graph, error) { return g.replicate(nil) }

// replicate is Replicate of the arcs thr keeps (see thresholds.kept), or of
// all arcs where thr is nil.
func (g *DistGraph) replicate(thr thresholds) (*serial.Graph, error) {
	if g.N() > math.MaxInt32 {
		return nil, fmt.Errorf("parmetis: cannot replicate a graph of %d vertices", g.N())
	}
	if g.c.Size() == 1 && thr == nil {
		// One rank: local indices are global IDs; share the arrays but
		// the edge weights.
		return &serial.Graph{NCon: g.NCon, Xadj: g.Xadj, Adjncy: g.Adj, Adjwgt: serialWeights(g.Adjwgt), Vwgt: g.Vwgt}, nil
	}
	nl := g.NLocal()
	deg := make([]int64, nl)
	adj, wgt := make([]int32, 0, len(g.Adj)), make([]int32, 0, len(g.Adj))
	var es []int64
	for v := range int32(nl) {
		before := len(adj)
		if thr == nil {
			for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
				adj, wgt = append(adj, int32(g.GID(g.Adj[e]))), append(wgt, serialWeight(g.Adjwgt[e]))
			}
		} else {
			es = thr.kept(g, v, es[:0])
			for _, e := range es {
				adj, wgt = append(adj, int32(g.GID(g.Adj[e]))), append(wgt, serialWeight(g.Adjwgt[e]))
			}
		}
		deg[v] = int64(len(adj) - before)
	}
	degs, _, err := collective.Allgatherv(g.c, deg)
	if err != nil {
		return nil, err
	}
	s := &serial.Graph{NCon: g.NCon, Xadj: make([]int64, len(degs)+1)}
	for v, d := range degs {
		s.Xadj[v+1] = s.Xadj[v] + d
	}
	if s.Adjncy, _, err = collective.Allgatherv(g.c, adj); err != nil {
		return nil, err
	}
	if s.Adjwgt, _, err = collective.Allgatherv(g.c, wgt); err != nil {
		return nil, err
	}
	if s.Vwgt, _, err = collective.Allgatherv(g.c, g.Vwgt); err != nil {
		return nil, err
	}
	return s, nil
}

// serialWeights returns edge weights as the serial partitioner holds
// them (see serialWeight).
func serialWeights(w []int64) []int32 {
	s := make([]int32, len(w))
	for e, x := range w {
		s[e] = serialWeight(x)
	}
	return s
}

// serialWeight is an edge weight in 32 bits, as the serial partitioner
// holds it: one above math.MaxInt32 (a coarse edge merging edges of more
// than 2^31 in weight) is kept at it, as the serial partitioner's own
// coarse edges are.
func serialWeight(w int64) int32 { return int32(min(w, math.MaxInt32)) }

// initialPartition partitions the coarsest graph: every rank computes a
// serial multilevel partition of the whole of it with its own seed (of
// each vertex's replicaKeep heaviest edges, where coarse); the
// balanced partition with the smallest cut wins (ties to the lower rank)
// and every rank keeps the parts of its own vertices. coarse says whether
// g is coarser than the input (finer levels will refine the partition).
func initialPartition(g *DistGraph, ctl *ctrl, coarse bool) ([]int32, error) {
	t0 := time.Now()
	defer ctl.since("initial", t0)
	c := g.c
	var thr thresholds
	if coarse {
		// Finer levels will refine with every edge.
		keep := make([]int64, g.NLocal())
		for v := range keep {
			keep[v] = replicaKeep
		}
		var err error
		if thr, err = g.thresholds(keep); err != nil {
			return nil, err
		}
	}
	s, err := g.replicate(thr)
	if err != nil {
		return nil, err
	}
	o := ctl.o.Options
	o.MixIsolated = coarse // see serial.Options.MixIsolated
	if o.Threads, err = serialThreads(c, o.Threads); err != nil {
		return nil, err
	}
	// Whole multilevel runs differ more between seeds than the tries within
	// one, so a small coarsest graph gets initialRuns of them, spread over
	// the ranks.
	runs := 1
	if int64(s.N())+int64(len(s.Adjncy)) <= smallCoarsest {
		runs = (initialRuns + c.Size() - 1) / c.Size()
	}
	var part []int32
	score := int64(math.MaxInt64)
	for run := range runs {
		o.Seed = graph.Mix(ctl.seed, 0x1417, uint64(c.Rank()), uint64(run))
		// Heavy coarse vertices may keep the coarsest graph from
		// balancing; the balancing phase of the finer levels fixes that.
		p, pst, err := serial.PartitionStats(s, o)
		if err != nil && !errors.Is(err, serial.ErrUnbalanced) {
			return nil, err
		}
		sc := pst.Cut
		if !serial.Within(pst.Imbalance, o.Imbalance) {
			sc = math.MaxInt64 / 2
		}
		if sc < score {
			part, score = p, sc
		}
	}
	scores, err := collective.Allgather(c, score)
	if err != nil {
		return nil, err
	}
	win := 0
	for r, sc := range scores {
		if sc < scores[win] {
			win = r
		}
	}
	best, err := collective.Bcast(c, part, win)
	if err != nil {
		return nil, err
	}
	lo := g.Lo()
	return append([]int32(nil), best[lo:lo+int64(g.NLocal())]...), nil
}

// serialThreads is how many goroutines a rank's serial partitioner may
// run: the cores of its host shared among the ranks on it, unless the user
// said. It is collective.
func serialThreads(c *collective.Comm, asked int) (int, error) {
	if asked > 0 {
		return asked, nil
	}
	node, err := c.SplitShared()
	if err != nil {
		return 0, err
	}
	local := node.Size()
	if err := node.Free(); err != nil {
		return 0, err
	}
	return max(1, runtime.GOMAXPROCS(0)/local), nil
}
