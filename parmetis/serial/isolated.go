package serial

import (
	"cmp"
	"container/heap"
	"errors"
	"slices"
)

// Vertices without edges cost no cut wherever they go: they only balance
// the parts. Power-law graphs have many (a third of R-MAT scale 18's
// vertices; nine in ten of the periphery pieces of a recursive bisection),
// and multilevel partitioning carries them through every level of every
// bisection. When they are at least isolatedShare of the graph, the
// vertices with edges are partitioned alone and the isolated ones then
// fill the parts, heaviest first, each into the part with the most room.
//
// The vertices with edges may then fill a part up to its bound in the
// whole graph: part p may hold ub*tp[p]*W of them, W the whole graph's
// weight, which is a bound of ub*W/W' over their own weight W'. The
// isolated vertices fit in the room left, ub*W - W' >= W - W', so every
// partition the whole graph allowed is still allowed (up to the
// granularity of the isolated vertices' weights): a bisection of R-MAT may
// put 60% of the connected vertices on one side, where a bound on their
// own weight would force a cut 3.5 times larger. With several constraints
// the room need not fit every constraint at once, so this is done for one
// constraint only; should the filling miss the bound anyway, the whole
// graph is partitioned as usual.

// isolatedShare is the fraction of vertices without edges above which they
// are set aside (1/20).
const isolatedShare = 20

// AsidePays reports whether setting the isolated ones of n vertices aside
// pays, for a partition into k parts with ncon constraints: one
// constraint, at least 1/isolatedShare of the vertices isolated, and enough
// others to partition into k parts. The distributed partitioner (package
// parmetis) asks it too, so both set the same graphs' isolated vertices
// aside.
func AsidePays(ncon int, n, isolated int64, k int) bool {
	return ncon == 1 && isolated*isolatedShare >= n && n-isolated >= 20*int64(k)
}

// connected returns the vertices of g that have edges when setting the
// others aside pays (see AsidePays); else nil.
func connected(g *Graph, k int) []int32 {
	n := g.N()
	var keep []int32
	for v := range n {
		if g.Xadj[v+1] > g.Xadj[v] {
			keep = append(keep, int32(v))
		}
	}
	if !AsidePays(g.NCon, int64(n), int64(n-len(keep)), k) {
		return nil
	}
	return keep
}

// partitionAroundIsolated partitions g's vertices keep (all those with
// edges) as a graph of their own, then places the isolated vertices; ok is
// false when the result misses the bound.
func partitionAroundIsolated(g *Graph, keep []int32, o Options) (part []int32, st *Stats, ok bool, err error) {
	sub := induceVertices(g, keep)
	so := o
	so.Imbalance = slices.Clone(o.Imbalance)
	whole, own := constraintTotals(g), constraintTotals(sub)
	for c := range so.Imbalance {
		so.Imbalance[c] *= float64(whole[c]) / float64(max(own[c], 1))
	}
	subPart, subSt, err := PartitionStats(sub, so)
	if err != nil && !errors.Is(err, ErrUnbalanced) {
		return nil, nil, false, err
	}
	part = make([]int32, g.N())
	for v := range part {
		part[v] = -1
	}
	for i, v := range keep {
		part[v] = subPart[i]
	}
	fillIsolated(g, part, o)
	st = &Stats{Cut: subSt.Cut, Imbalance: Imbalance(g, part, o), Timers: subSt.Timers}
	return part, st, Within(st.Imbalance, o.Imbalance), nil
}

// induceVertices returns the subgraph of g induced by the vertices keep
// (ascending), vertex i standing for keep[i].
func induceVertices(g *Graph, keep []int32) *Graph {
	nc := g.NCon
	newID := make([]int32, g.N())
	for v := range newID {
		newID[v] = -1
	}
	for i, v := range keep {
		newID[v] = int32(i)
	}
	sub := &Graph{NCon: nc, Xadj: make([]int64, len(keep)+1), Vwgt: make([]int64, len(keep)*nc)}
	for i, v := range keep {
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			if u := newID[g.Adjncy[e]]; u >= 0 {
				sub.Adjncy = append(sub.Adjncy, u)
				sub.Adjwgt = append(sub.Adjwgt, g.Adjwgt[e])
			}
		}
		sub.Xadj[i+1] = int64(len(sub.Adjncy))
		copy(sub.Vwgt[i*nc:(i+1)*nc], g.Vwgt[int(v)*nc:int(v+1)*nc])
	}
	return sub
}

// fillIsolated places every vertex with part -1: heaviest first (summing
// its share of each constraint's total), into the part whose fullest
// constraint is least full relative to its target.
func fillIsolated(g *Graph, part []int32, o Options) {
	nc, k := g.NCon, o.Parts
	tot := constraintTotals(g)
	var left []int32
	for v, p := range part {
		if p < 0 {
			left = append(left, int32(v))
		}
	}
	share := func(v int32) float64 {
		s := 0.0
		for c := range nc {
			if tot[c] > 0 {
				s += float64(g.Vwgt[int(v)*nc+c]) / float64(tot[c])
			}
		}
		return s
	}
	slices.SortStableFunc(left, func(a, b int32) int { return cmp.Compare(share(b), share(a)) })
	h := &roomHeap{w: make([]int64, k*nc), load: make([]float64, k), tot: tot, tp: o.TargetWeights, nc: nc}
	for v, p := range part {
		if p >= 0 {
			for c := range nc {
				h.w[int(p)*nc+c] += g.Vwgt[v*nc+c]
			}
		}
	}
	for p := range k {
		h.parts = append(h.parts, int32(p))
		h.update(int32(p))
	}
	heap.Init(h)
	for _, v := range left {
		p := h.parts[0]
		part[v] = p
		for c := range nc {
			h.w[int(p)*nc+c] += g.Vwgt[int(v)*nc+c]
		}
		h.update(p)
		heap.Fix(h, 0)
	}
}

// roomHeap orders the parts by the load of their fullest constraint
// (weight over target), lowest first, ties to the lower part.
type roomHeap struct {
	parts []int32
	w     []int64 // k*nc part weights
	load  []float64
	tot   []int64
	tp    []float64
	nc    int
}

func (h *roomHeap) update(p int32) {
	l := 0.0
	for c := range h.nc {
		if t := h.tp[p] * float64(h.tot[c]); t > 0 {
			l = max(l, float64(h.w[int(p)*h.nc+c])/t)
		}
	}
	h.load[p] = l
}

func (h *roomHeap) Len() int { return len(h.parts) }
func (h *roomHeap) Less(i, j int) bool {
	a, b := h.parts[i], h.parts[j]
	if h.load[a] != h.load[b] {
		return h.load[a] < h.load[b]
	}
	return a < b
}
func (h *roomHeap) Swap(i, j int) { h.parts[i], h.parts[j] = h.parts[j], h.parts[i] }
func (h *roomHeap) Push(x any)    { h.parts = append(h.parts, x.(int32)) }
func (h *roomHeap) Pop() any {
	x := h.parts[len(h.parts)-1]
	h.parts = h.parts[:len(h.parts)-1]
	return x
}
