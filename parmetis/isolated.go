package parmetis

import (
	"fmt"
	"time"

	"gnnrun/collective"
	"gnnrun/parmetis/serial"
	"gnnrun/rank"
)

// The distributed partitioner sets the vertices without edges aside as
// the serial one does (see parmetis/serial's isolated.go): the vertices with
// edges are partitioned as a graph of their own, each part allowed up to
// its bound in the whole graph, and the isolated vertices then fill the
// room left. Every level of the distributed hierarchy and of the recursive
// bisection then works on the vertices that matter, with the whole slack
// of the bound: a bisection may split them 60:40 where the cut is small.
// Graphs small enough to replicate whole skip this here; the serial
// partitioner does it for them.

// partitionAroundIsolatedDist partitions g this way when it pays (see
// serial.AsidePays; and g is larger than isolatedFloor); ok is false when
// it does not apply. It is collective.
func partitionAroundIsolatedDist(g *DistGraph, o Options) (res *Result, ok bool, err error) {
	if g.c.Size() == 1 || g.NCon != 1 { // (one constraint: serial.AsidePays; spare the counting)
		return nil, false, nil
	}
	arcs, err := g.arcs()
	if err != nil || g.N()+arcs <= isolatedFloor {
		return nil, false, err
	}
	t0 := time.Now()
	o, err = o.normalized(g.N(), g.NCon)
	if err != nil {
		return nil, false, err
	}
	nl := g.NLocal()
	side := make([]int32, nl) // 1: has edges
	local := make([]int64, 3) // isolated vertices, their weight, all weight
	for v := range nl {
		local[2] += g.Vwgt[v]
		if g.Xadj[v+1] > g.Xadj[v] {
			side[v] = 1
			continue
		}
		local[0]++
		local[1] += g.Vwgt[v]
	}
	all, err := collective.Allreduce(g.c, local, rank.Sum)
	if err != nil {
		return nil, false, err
	}
	iso, isoW, total := all[0], all[1], all[2]
	if !serial.AsidePays(g.NCon, g.N(), iso, o.Parts) || total == isoW {
		return nil, false, nil
	}
	sub, err := g.induceOnAll(side, 1)
	if err != nil {
		return nil, false, err
	}
	// The subgraph has every arc of g, in order: g's adjacency is not held
	// while the subgraph is partitioned, and is rebuilt from the
	// subgraph's after (R-MAT 20, np = 2: 66 MB a rank at the peak).
	if len(sub.g.Adj) != len(g.Adj) {
		return nil, false, fmt.Errorf("parmetis: the subgraph without edgeless vertices has %d of the %d arcs", len(sub.g.Adj), len(g.Adj))
	}
	g.Adj = nil
	so := o
	so.Imbalance = []float64{o.Imbalance[0] * float64(total) / float64(total-isoW)}
	tSub := time.Now()
	sres, err := Partition(sub.g, so)
	subSeconds := time.Since(tSub).Seconds()
	var got []int32
	if err == nil {
		got, err = sub.back(sres.Part)
	}
	g.Adj = sub.parentAdj()
	if err != nil {
		return nil, false, err
	}
	part := make([]int32, nl)
	for v := range part {
		part[v] = -1
	}
	for i, v := range sub.mine {
		part[v] = got[i]
	}
	sub = nil
	if err := fillIsolatedDist(g, part, o, total, isoW); err != nil {
		return nil, false, err
	}
	// The filling may leave a part a vertex above its bound; balancing
	// mends that (isolated vertices move at no cost) or reports why not.
	ctl, err := newCtrl(g, o)
	if err != nil {
		return nil, false, err
	}
	r, err := newRefiner(g, ctl, 0, part)
	if err != nil {
		return nil, false, err
	}
	if err := r.balance(true); err != nil {
		return nil, false, err
	}
	sres.Seconds["isolated"] += time.Since(t0).Seconds() - subSeconds
	return &Result{Lo: g.Lo(), Part: r.full[:nl], Cut: r.cut, Imbalance: r.pb.imbalance(o), Levels: sres.Levels, Seconds: sres.Seconds}, true, nil
}

// fillIsolatedDist gives the vertices with part -1 (isolated, weighing
// isoW of total in all) parts: each part gets a share of their weight in
// proportion to the room under its bound, and the ranks take the isolated
// vertices in rank order, each its run of the global sequence. It is
// collective.
func fillIsolatedDist(g *DistGraph, part []int32, o Options, total, isoW int64) error {
	k := o.Parts
	w := make([]int64, k+1)
	for v, p := range part {
		if p >= 0 {
			w[p] += g.Vwgt[v]
		} else {
			w[k] += g.Vwgt[v]
		}
	}
	mine := w[k]
	w, err := collective.Allreduce(g.c, w[:k], rank.Sum)
	if err != nil {
		return err
	}
	start, _, err := collective.Offset(g.c, mine)
	if err != nil {
		return err
	}
	room := make([]float64, k)
	sum := 0.0
	for p := range k {
		room[p] = max(0, o.Imbalance[0]*o.TargetWeights[p]*float64(total)-float64(w[p]))
		sum += room[p]
	}
	// Part p takes the isolated weight in [bound[p], bound[p+1]).
	bound := make([]float64, k+1)
	for p := range k {
		bound[p+1] = bound[p] + room[p]/sum*float64(isoW)
	}
	p := 0
	at := float64(start)
	for v := range part {
		if part[v] >= 0 {
			continue
		}
		mid := at + float64(g.Vwgt[v])/2
		for p < k-1 && mid >= bound[p+1] {
			p++
		}
		part[v] = int32(p)
		at += float64(g.Vwgt[v])
	}
	return nil
}
