package sampler

import (
	"fmt"
	"math"
	"slices"

	"gnnrun/graph"
	"gnnrun/shard"
)

// view is a served partition as the sampler reads it. The in-edges of
// inner node v of edge type t are the CSC positions [tptr[v*E+t],
// tptr[v*E+t+1]) (E edge types): a node's in-edges are ordered by edge ID,
// and edge IDs are grouped by type inside a partition, so each type's are
// one run. With one edge type tptr is the partition's indptr itself;
// otherwise it is built at setup, E int64s per inner node.
type view struct {
	p      *shard.Partition
	etypes int
	tptr   []int64
	// haloSorted says the halo nodes are numbered in ascending global ID
	// (as dispatch writes them), so localID can search them.
	haloSorted bool
	// Weights by CSC position when sampling by an edge array: a view of
	// the file when it is one float32 or float64 array in CSC order (one
	// edge type), else a float64 copy.
	w32 []float32
	w64 []float64
}

// newView prepares partition p for sampling with o.
func newView(p *shard.Partition, o *Options) (*view, error) {
	v := &view{p: p, etypes: len(p.Config.EdgeTypes)}
	v.haloSorted = slices.IsSorted(p.Local2Global[p.NumInner:])
	var err error
	if v.tptr, err = typedIndptr(p, v.etypes); err != nil {
		return nil, err
	}
	if o.Prob != "" {
		if err := v.loadWeights(o.Prob); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// typedIndptr returns the typed indptr of p (see view), checking that
// every node's in-edges are grouped by type.
func typedIndptr(p *shard.Partition, etypes int) ([]int64, error) {
	if etypes <= 1 {
		return p.Indptr, nil
	}
	n := p.NumInner
	out := make([]int64, n*int64(etypes)+1)
	for v := range n {
		q, end := p.Indptr[v], p.Indptr[v+1]
		for t := range etypes {
			out[v*int64(etypes)+int64(t)] = q
			for q < end && int(p.EdgeType[q]) == t {
				q++
			}
		}
		if q != end {
			return nil, fmt.Errorf("sampler: %s: partition %d: the in-edges of local node %d are not grouped by edge type (position %d has type %d): not a partition gnnrun wrote", p.ConfigPath, p.ID, v, q, p.EdgeType[q])
		}
	}
	out[len(out)-1] = p.Indptr[n]
	return out, nil
}

// loadWeights finds edge array name of every edge type and checks it: one
// finite, non-negative value per edge.
func (v *view) loadWeights(name string) error {
	p := v.p
	arrays := make([]*graph.Tensor, v.etypes)
	for t, et := range p.Config.EdgeTypes {
		a := p.EdgeFeats[et.String()+"/"+name]
		if a == nil {
			return fmt.Errorf("sampler: --prob %s: partition %d has no edge array %q of edge type %s", name, p.ID, name, et)
		}
		if a.RowLen() != 1 || !a.DType.IsFloat() && !isInteger(a.DType) {
			return fmt.Errorf("sampler: --prob %s: edge array %s/%s is %s; it must hold one number per edge", name, et, name, a)
		}
		arrays[t] = a
	}
	if v.etypes == 1 {
		switch a := arrays[0]; a.DType {
		case graph.Float32:
			w, err := graph.View[float32](a)
			if err != nil {
				return err
			}
			v.w32 = w
			return v.checkWeights(name)
		case graph.Float64:
			w, err := graph.View[float64](a)
			if err != nil {
				return err
			}
			v.w64 = w
			return v.checkWeights(name)
		}
	}
	// Rows of each type's array are its edges in CSC order.
	v.w64 = make([]float64, p.NumEdges())
	rows := make([]int64, v.etypes)
	for q := range v.w64 {
		t := 0
		if v.etypes > 1 {
			t = int(p.EdgeType[q])
		}
		v.w64[q] = arrays[t].Float64At(rows[t], 0)
		rows[t]++
	}
	return v.checkWeights(name)
}

func isInteger(d graph.DType) bool {
	switch d {
	case graph.Int8, graph.Int16, graph.Int32, graph.Int64, graph.Uint8, graph.Bool:
		return true
	}
	return false
}

// checkWeights refuses negative, NaN and infinite weights, naming the edge.
func (v *view) checkWeights(name string) error {
	for q := range v.p.NumEdges() {
		if w := v.weight(q); !(w >= 0) || math.IsInf(w, 0) {
			return fmt.Errorf("sampler: --prob %s: partition %d, edge %d (input edge %d of type %s) has weight %v; weights must be finite and >= 0",
				name, v.p.ID, v.p.EdgeIDs[q], v.p.OrigEIDs[q], v.p.Config.EdgeTypes[v.edgeType(q)], w)
		}
	}
	return nil
}

func (v *view) edgeType(q int64) int {
	if v.etypes > 1 {
		return int(v.p.EdgeType[q])
	}
	return 0
}

// weighted reports whether the view samples by weight.
func (v *view) weighted() bool { return v.w32 != nil || v.w64 != nil }

// weight returns the weight of CSC position q.
func (v *view) weight(q int64) float64 {
	if v.w32 != nil {
		return float64(v.w32[q])
	}
	return v.w64[q]
}

// weights returns the weights of positions [a, b) as float64s, viewing
// them when they are float64, else converted into *buf.
func (v *view) weights(a, b int64, buf *[]float64) []float64 {
	if v.w64 != nil {
		return v.w64[a:b]
	}
	*buf = (*buf)[:0]
	for _, w := range v.w32[a:b] {
		*buf = append(*buf, float64(w))
	}
	return *buf
}

// src returns the global ID of the source of CSC position q.
func (v *view) src(q int64) int64 {
	l := v.p.Index(q)
	if l < v.p.NumInner {
		return v.p.Lo + l
	}
	return v.p.Local2Global[l]
}

// localID returns global node g's local ID in the partition, and whether
// it is one of its nodes (inner, or a halo node, searched for in the
// ascending halo, or one by one where the halo is not ascending).
func (v *view) localID(g int64) (int64, bool) {
	p := v.p
	if g >= p.Lo && g < p.Lo+p.NumInner {
		return g - p.Lo, true
	}
	halo := p.Local2Global[p.NumInner:]
	if v.haloSorted {
		i, found := slices.BinarySearch(halo, g)
		return p.NumInner + int64(i), found
	}
	i := slices.Index(halo, g)
	return p.NumInner + int64(i), i >= 0
}

// rangeOf returns the CSC positions of inner node local's in-edges of type
// t.
func (v *view) rangeOf(local int64, t int) (int64, int64) {
	i := local*int64(v.etypes) + int64(t)
	if v.etypes <= 1 {
		return v.tptr[local], v.tptr[local+1]
	}
	return v.tptr[i], v.tptr[i+1]
}
