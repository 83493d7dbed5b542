package parteval

import (
	"errors"
	"fmt"
	"math"
)

// Graph is the graph a partition is judged on: nodes 0..N-1 and edges
// Src[i] -> Dst[i], each weighing Weight[i] (every edge 1 when Weight is
// nil). The cut treats it as undirected: an edge whose ends lie in
// different parts costs its weight, so u->v and v->u together cost 2, and a
// self loop costs nothing. When Symmetric is set the edges list every
// undirected edge from both ends (a METIS file, a CSR adjacency), and the
// cut counts each edge once: half the weight of the arcs cut.
type Graph struct {
	N         int64
	Src, Dst  []int64
	Weight    []int64
	Symmetric bool
}

// Constraint is one balance constraint: a name and a weight per node.
type Constraint struct {
	Name   string
	Weight []int64
}

// Balance is how one constraint's weight falls on the parts.
type Balance struct {
	Name string
	// Parts holds each part's weight; Total is their sum.
	Parts []int64
	Total int64
	// Imbalance is the largest ratio over the parts of a part's weight to
	// its target share of Total: 1 is perfect balance, and the partition
	// meets a bound U when Imbalance <= U. It is 1 when Total is 0 (every
	// part holds its share, nothing), and +Inf when a part whose target
	// share is 0 holds weight.
	Imbalance float64
}

// Result is the measured quality of a partition into Parts parts.
type Result struct {
	Parts int
	Cut   int64
	// Balance holds one entry per constraint, in the order given.
	Balance []Balance
}

// Of returns the balance of the named constraint, or nil when there is
// none of that name.
func (r *Result) Of(name string) *Balance {
	for i := range r.Balance {
		if r.Balance[i].Name == name {
			return &r.Balance[i]
		}
	}
	return nil
}

// Evaluate measures the partition part, a part in [0,k) for every node of
// g: the edge cut, and for every constraint the weight of each part and
// the imbalance against target, each part's share of a constraint's total
// (nil: 1/k each). It fails when the lengths disagree, a part lies outside
// [0,k), an endpoint outside [0,N), a weight is negative, or the arcs a
// Symmetric graph cuts weigh an odd total (they cannot list every edge
// from both ends).
func Evaluate(g Graph, part []int32, k int, target []float64, cons []Constraint) (*Result, error) {
	share, err := shares(k, target)
	if err != nil {
		return nil, err
	}
	if err := checkParts(g.N, part, k); err != nil {
		return nil, err
	}
	cut, err := edgeCut(g, part)
	if err != nil {
		return nil, err
	}
	res := &Result{Parts: k, Cut: cut}
	for _, c := range cons {
		b, err := balance(c, part, share)
		if err != nil {
			return nil, err
		}
		res.Balance = append(res.Balance, b)
	}
	return res, nil
}

// shares returns each part's target share: target, or 1/k each.
func shares(k int, target []float64) ([]float64, error) {
	if k < 1 {
		return nil, fmt.Errorf("parteval: %d parts, need at least 1", k)
	}
	if target == nil {
		out := make([]float64, k)
		for p := range out {
			out[p] = 1 / float64(k)
		}
		return out, nil
	}
	if len(target) != k {
		return nil, fmt.Errorf("parteval: %d target shares for %d parts", len(target), k)
	}
	for p, t := range target {
		if !(t >= 0) || math.IsInf(t, 0) {
			return nil, fmt.Errorf("parteval: part %d has target share %v; want a finite share >= 0", p, t)
		}
	}
	return target, nil
}

func checkParts(n int64, part []int32, k int) error {
	if int64(len(part)) != n {
		return fmt.Errorf("parteval: %d parts given for %d nodes", len(part), n)
	}
	for v, p := range part {
		if p < 0 || int(p) >= k {
			return fmt.Errorf("parteval: node %d is in part %d, outside [0,%d)", v, p, k)
		}
	}
	return nil
}

// edgeCut sums the weights of the edges whose ends lie in different parts.
func edgeCut(g Graph, part []int32) (int64, error) {
	if len(g.Dst) != len(g.Src) || (g.Weight != nil && len(g.Weight) != len(g.Src)) {
		return 0, fmt.Errorf("parteval: %d sources, %d destinations, %d weights", len(g.Src), len(g.Dst), len(g.Weight))
	}
	var cut int64
	for i, s := range g.Src {
		d := g.Dst[i]
		if s < 0 || s >= g.N || d < 0 || d >= g.N {
			return 0, fmt.Errorf("parteval: edge %d (%d -> %d) has an end outside [0,%d)", i, s, d, g.N)
		}
		w := int64(1)
		if g.Weight != nil {
			w = g.Weight[i]
		}
		if w < 0 {
			return 0, fmt.Errorf("parteval: edge %d (%d -> %d) has negative weight %d", i, s, d, w)
		}
		if part[s] != part[d] {
			cut += w
		}
	}
	if !g.Symmetric {
		return cut, nil
	}
	if cut%2 != 0 {
		return 0, errors.New("parteval: the cut arcs of a symmetric graph weigh an odd total; some edge is not listed from both ends")
	}
	return cut / 2, nil
}

// balance sums one constraint's weights per part.
func balance(c Constraint, part []int32, share []float64) (Balance, error) {
	b := Balance{Name: c.Name, Parts: make([]int64, len(share)), Imbalance: 1}
	if len(c.Weight) != len(part) {
		return b, fmt.Errorf("parteval: constraint %s has %d weights for %d nodes", c.Name, len(c.Weight), len(part))
	}
	for v, w := range c.Weight {
		if w < 0 {
			return b, fmt.Errorf("parteval: node %d weighs %d in constraint %s", v, w, c.Name)
		}
		b.Parts[part[v]] += w
		b.Total += w
	}
	if b.Total == 0 {
		return b, nil
	}
	b.Imbalance = 0
	for p, w := range b.Parts {
		target := share[p] * float64(b.Total)
		switch {
		case w == 0:
			// A part with nothing is never over its target, even a zero one.
		case target == 0:
			b.Imbalance = math.Inf(1)
		default:
			b.Imbalance = max(b.Imbalance, float64(w)/target)
		}
	}
	return b, nil
}

// FromCSR returns the graph of a symmetric CSR adjacency, the form of the
// partitioner's in-memory graphs: the neighbours of node v are
// adjncy[xadj[v]:xadj[v+1]], with weights at the same positions of adjwgt
// (nil: 1). Every edge is listed from both ends, so the cut counts it once.
// It fails when xadj does not run from 0 up to len(adjncy).
func FromCSR(xadj []int64, adjncy []int32, adjwgt []int64) (Graph, error) {
	n := len(xadj) - 1
	if n < 0 || xadj[0] != 0 || xadj[n] != int64(len(adjncy)) {
		return Graph{}, fmt.Errorf("parteval: xadj of %d entries does not run from 0 to the %d neighbours", len(xadj), len(adjncy))
	}
	g := Graph{N: int64(n), Src: make([]int64, len(adjncy)), Dst: make([]int64, len(adjncy)), Weight: adjwgt, Symmetric: true}
	for v := range n {
		if xadj[v+1] < xadj[v] {
			return Graph{}, fmt.Errorf("parteval: xadj decreases at node %d", v)
		}
		for e := xadj[v]; e < xadj[v+1]; e++ {
			g.Src[e], g.Dst[e] = int64(v), int64(adjncy[e])
		}
	}
	return g, nil
}

// SplitWeights turns interleaved vertex weights, node v's ncon weights at
// vwgt[v*ncon:(v+1)*ncon] as the partitioner keeps them, into one
// constraint per column, named names[j] ("c<j>" where names is short). It
// fails when len(vwgt) is not a multiple of ncon.
func SplitWeights(vwgt []int64, ncon int, names ...string) ([]Constraint, error) {
	if ncon < 1 || len(vwgt)%ncon != 0 {
		return nil, fmt.Errorf("parteval: %d vertex weights do not split into %d columns", len(vwgt), ncon)
	}
	n := len(vwgt) / ncon
	out := make([]Constraint, ncon)
	for j := range out {
		out[j].Name = fmt.Sprintf("c%d", j)
		if j < len(names) {
			out[j].Name = names[j]
		}
		out[j].Weight = make([]int64, n)
		for v := range n {
			out[j].Weight[v] = vwgt[v*ncon+j]
		}
	}
	return out, nil
}
