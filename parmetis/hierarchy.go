package parmetis

import (
	"fmt"

	"gnnrun/collective"
	"gnnrun/graph"
)

// PartitionHierarchical partitions g into a groups (machines), then the
// vertices of each group into b parts (the GPUs of a machine), so that the
// cut between machines, the expensive one, is minimised first. Vertex v
// ends in part group*b + local part. Target weights, if given for the a*b
// parts, are summed per group for the first level. It is collective.
func PartitionHierarchical(g *DistGraph, o Options, a, b int) (*Result, error) {
	if a < 1 || b < 1 || a*b != o.Parts {
		return nil, fmt.Errorf("parmetis: hierarchy %dx%d does not make %d parts", a, b, o.Parts)
	}
	top := o
	top.Parts = a
	top.TargetWeights = groupTargets(o.TargetWeights, a, b)
	res, err := Partition(g, top)
	if err != nil {
		return nil, err
	}
	final := make([]int32, g.NLocal())
	for m := range a {
		sub := o
		sub.Parts = b
		sub.TargetWeights = localTargets(o.TargetWeights, m, b)
		if err := g.partitionInduced(res.Part, int32(m), sub, final); err != nil {
			return nil, fmt.Errorf("parmetis: machine %d of %d: %w", m, a, err)
		}
	}
	cut, imb, err := Evaluate(g, final, o)
	if err != nil {
		return nil, err
	}
	return &Result{Lo: g.Lo(), Part: final, Cut: cut, Imbalance: imb, Levels: res.Levels, Seconds: res.Seconds}, nil
}

func groupTargets(tp []float64, a, b int) []float64 {
	if tp == nil {
		return nil
	}
	out := make([]float64, a)
	for p, w := range tp {
		out[p/b] += w
	}
	return out
}

func localTargets(tp []float64, m, b int) []float64 {
	if tp == nil {
		return nil
	}
	out := append([]float64(nil), tp[m*b:(m+1)*b]...)
	s := 0.0
	for _, w := range out {
		s += w
	}
	for i := range out {
		out[i] /= s
	}
	return out
}

// partitionInduced partitions the subgraph induced by the vertices in part
// m into o.Parts parts and writes m*o.Parts + its part into final for
// those of them this rank owns.
func (g *DistGraph) partitionInduced(part []int32, m int32, o Options, final []int32) error {
	sub, err := g.induceOnAll(part, m)
	if err != nil {
		return err
	}
	if sub.g.N() < int64(o.Parts) {
		return fmt.Errorf("%d vertices for %d parts", sub.g.N(), o.Parts)
	}
	res, err := Partition(sub.g, o)
	if err != nil {
		return err
	}
	got, err := sub.back(res.Part)
	if err != nil {
		return err
	}
	for i, v := range sub.mine {
		final[v] = m*int32(o.Parts) + got[i]
	}
	return nil
}

// subgraph is the subgraph induced by one part of a DistGraph, spread over
// the same ranks, and the way back from its vertices to their originals.
type subgraph struct {
	parent *DistGraph
	g      *DistGraph
	mine   []int32 // the parent's owned vertices in the subgraph
	ids    []int64 // their IDs in the subgraph
	// ghostOf is, per ghost of the subgraph, its index among the parent's.
	ghostOf []int32
}

// parentAdj returns the parent's adjacency, rebuilt from the subgraph's,
// of a subgraph that keeps every arc of its parent (see induceOnAll): the
// same arcs in the same order, each neighbour back in the parent's local
// indices. A caller may so drop the parent's adjacency while it works on
// the subgraph.
func (sub *subgraph) parentAdj() []int32 {
	nl, snl := int32(sub.parent.NLocal()), int32(len(sub.mine))
	adj := make([]int32, len(sub.g.Adj))
	for e, a := range sub.g.Adj {
		if a < snl {
			adj[e] = sub.mine[a]
		} else {
			adj[e] = nl + sub.ghostOf[a-snl]
		}
	}
	return adj
}

// induceOnAll builds, on g's communicator, the subgraph induced by the
// vertices of part m, with their vertex weights. Every rank keeps its own
// vertices of m, numbered in rank order, so their rows are filtered and
// relabelled in place and no arc moves: g's rows are already symmetric and
// merged, and its spread of vertices and edges over the ranks carries over
// to the subgraph. It is collective.
func (g *DistGraph) induceOnAll(part []int32, m int32) (*subgraph, error) {
	c, nl, nc := g.c, g.NLocal(), g.NCon
	sub := &subgraph{parent: g}
	for v := range nl {
		if part[v] == m {
			sub.mine = append(sub.mine, int32(v))
		}
	}
	counts, err := collective.Allgather(c, int64(len(sub.mine)))
	if err != nil {
		return nil, err
	}
	dist := graph.BookFromCounts(counts)
	start := dist.Bounds[c.Rank()]
	newID := make([]int64, nl+len(g.Ghosts))
	for i := range newID[:nl] {
		newID[i] = -1
	}
	sub.ids = make([]int64, len(sub.mine))
	for i, v := range sub.mine {
		newID[v] = start + int64(i)
		sub.ids[i] = newID[v]
	}
	if err := haloUpdate(g, newID); err != nil {
		return nil, err
	}
	// The parent's ghosts are sorted by ID and grouped by owner, and newID
	// numbers each rank's vertices in their order, so the ghosts kept are
	// still sorted: each keeps its place among them. at[a] is the
	// subgraph's local index of the parent's local vertex a, or -1: the
	// passes over the rows read it at random, 4 bytes an entry and no
	// branch on owned or ghost (newID's 8 and a branch took 2.8 s of a
	// rank's 35 on R-MAT 20 at K = 64, 2 ranks).
	snl := len(sub.mine)
	at := make([]int32, nl+len(g.Ghosts))
	for i := range at[:nl] {
		at[i] = -1
	}
	for i, v := range sub.mine {
		at[v] = int32(i)
	}
	var ghosts []int64
	for j, id := range newID[nl:] {
		at[nl+j] = -1
		if id >= 0 {
			at[nl+j] = int32(snl + len(ghosts))
			ghosts = append(ghosts, id)
			sub.ghostOf = append(sub.ghostOf, int32(j))
		}
	}
	arcs := 0
	for _, v := range sub.mine {
		for _, a := range g.Adj[g.Xadj[v]:g.Xadj[v+1]] {
			if at[a] >= 0 {
				arcs++
			}
		}
	}
	// The arcs kept stay in their order: the subgraph is what Build would
	// make of its rows, without their global IDs in between. Where it keeps
	// every arc (the part leaves out only vertices without edges, as
	// partitionAroundIsolatedDist's does), its weights are the parent's, in
	// the same order: it shares them (no graph changes the weights of its
	// arcs; sparsify only those of a coarse graph it has just built).
	keepAll := int64(arcs) == g.Xadj[nl]
	sg := &DistGraph{Dist: dist, Xadj: make([]int64, snl+1), Adj: make([]int32, 0, arcs), Ghosts: ghosts, c: c}
	if keepAll {
		sg.Adjwgt = g.Adjwgt[:arcs:arcs]
	} else {
		sg.Adjwgt = make([]int64, 0, arcs)
	}
	vw := make([]int64, snl*nc)
	for i, v := range sub.mine {
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			if u := at[g.Adj[e]]; u >= 0 {
				sg.Adj = append(sg.Adj, u)
				if !keepAll {
					sg.Adjwgt = append(sg.Adjwgt, g.Adjwgt[e])
				}
			}
		}
		sg.Xadj[i+1] = int64(len(sg.Adj))
		copy(vw[i*nc:], g.Vwgt[int(v)*nc:int(v+1)*nc])
	}
	sub.g = sg
	if err := sg.setupHalo(); err != nil {
		return nil, err
	}
	return sub, sub.g.SetVertexWeights(nc, vw)
}

// back returns, for each of the parent's vertices in the subgraph (in the
// order of mine), the part subPart gives it; subPart holds the parts of the
// subgraph's vertices this rank owns. It is collective.
func (sub *subgraph) back(subPart []int32) ([]int32, error) {
	slo := sub.g.Lo()
	return collective.Request(sub.parent.c, sub.ids, sub.g.Dist.Owner, func(_ int, keys []int64) ([]int32, error) {
		out := make([]int32, len(keys))
		for i, id := range keys {
			out[i] = subPart[id-slo]
		}
		return out, nil
	})
}
