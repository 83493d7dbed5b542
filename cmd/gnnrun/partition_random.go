package main

import (
	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/graphio"
	"gnnrun/parmetis"
	"gnnrun/parmetis/serial"
	"gnnrun/rank"
)

// randomPartition is the balanced random baseline. A node's part is a pure
// function of its ID, so no graph needs to be built: each rank takes an
// even range of IDs, and measures the cut from the edges it read. It returns
// the first ID of this rank's range, the result, and the constraint names.
func randomPartition(e *env, g *graphio.Graph, o serial.Options, spec string) (int64, *parmetis.Result, []string, error) {
	c := e.comm
	n := g.Meta.TotalNodes()
	book := graph.EvenBook(n, c.Size())
	lo, hi := book.Range(c.Rank())
	partOf := parmetis.RandomAssigner(n, o.Parts, o.Seed)
	part := make([]int32, hi-lo)
	for v := range part {
		part[v] = partOf(lo + int64(v))
	}
	cut, err := randomCut(c, g, partOf)
	if err != nil {
		return 0, nil, nil, err
	}
	indeg, err := inDegrees(c, g.Edges, book)
	if err != nil {
		return 0, nil, nil, err
	}
	ncon, vw, names, err := vertexWeights(e, g, lo, len(part), indeg, spec)
	if err != nil {
		return 0, nil, nil, err
	}
	imb, err := imbalance(c, part, ncon, vw, o)
	if err != nil {
		return 0, nil, nil, err
	}
	return lo, &parmetis.Result{Part: part, Cut: cut, Imbalance: imb}, names, nil
}

// randomCut sums the weights of the edges held here whose ends lie in
// different parts; as the partitioner counts it, a METIS file's edges (listed
// from both ends) count once.
func randomCut(c *collective.Comm, g *graphio.Graph, partOf func(int64) int32) (int64, error) {
	var cut int64
	ed := g.Edges
	for i, s := range ed.Src {
		if d := ed.Dst[i]; s != d && partOf(s) != partOf(d) {
			w := int64(1)
			if ed.Weight != nil {
				w = int64(ed.Weight[i])
			}
			cut += w
		}
	}
	cut, err := collective.Sum(c, cut)
	if g.Format == graphio.InMETIS {
		cut /= 2
	}
	return cut, err
}

// inDegrees counts the edges into each node of this rank's range of book.
func inDegrees(c *collective.Comm, ed *graph.Edges, book graph.Book) ([]int64, error) {
	send := make([][]int64, c.Size())
	for _, d := range ed.Dst {
		send[book.Owner(d)] = append(send[book.Owner(d)], d)
	}
	got, err := collective.Exchange(c, send)
	if err != nil {
		return nil, err
	}
	lo, hi := book.Range(c.Rank())
	deg := make([]int64, hi-lo)
	for _, ds := range got {
		for _, d := range ds {
			deg[d-lo]++
		}
	}
	return deg, nil
}

// imbalance returns, per constraint, the heaviest part's weight over its
// target share of the total.
func imbalance(c *collective.Comm, part []int32, ncon int, vw []int64, o serial.Options) ([]float64, error) {
	k := o.Parts
	local := make([]int64, (k+1)*ncon)
	for v, p := range part {
		for j := range ncon {
			local[int(p)*ncon+j] += vw[v*ncon+j]
			local[k*ncon+j] += vw[v*ncon+j]
		}
	}
	all, err := collective.Allreduce(c, local, rank.Sum)
	if err != nil {
		return nil, err
	}
	out := make([]float64, ncon)
	for j := range ncon {
		total := float64(all[k*ncon+j])
		for p := range k {
			target := 1 / float64(k)
			if o.TargetWeights != nil {
				target = o.TargetWeights[p]
			}
			if total > 0 {
				out[j] = max(out[j], float64(all[p*ncon+j])/(target*total))
			}
		}
	}
	return out, nil
}
