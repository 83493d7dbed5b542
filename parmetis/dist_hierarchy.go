package parmetis

import (
	"fmt"

	"gnnrun/collective"
)

// PartitionHierarchical partitions g into a groups (machines), then the
// vertices of each group into b parts (the GPUs of a machine), so that the
// cut between machines, the expensive one, is minimised first. Vertex v
// ends in part group*b + local part. Target weights, if given for the a*b
// parts, are summed per group for the first level. It is collective.
func PartitionHierarchical(g *DistGraph, do DistOptions, a, b int) (*Result, error) {
	if a < 1 || b < 1 || a*b != do.Parts {
		return nil, fmt.Errorf("parmetis: hierarchy %dx%d does not make %d parts", a, b, do.Parts)
	}
	top := do
	top.Parts = a
	top.TargetWeights = groupTargets(do.TargetWeights, a, b)
	res, err := Partition(g, top)
	if err != nil {
		return nil, err
	}
	final := make([]int32, g.NLocal())
	for m := range a {
		sub := do
		sub.Parts = b
		sub.TargetWeights = localTargets(do.TargetWeights, m, b)
		if err := g.partitionInduced(res.Part, int32(m), sub, final); err != nil {
			return nil, fmt.Errorf("parmetis: machine %d of %d: %w", m, a, err)
		}
	}
	cut, imb, err := Evaluate(g, final, do.Options)
	if err != nil {
		return nil, err
	}
	return &Result{Part: final, Cut: cut, Imbalance: imb, Levels: res.Levels, Seconds: res.Seconds}, nil
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
// m into do.Parts parts and writes m*do.Parts + its part into final for
// those of them this rank owns.
func (g *DistGraph) partitionInduced(part []int32, m int32, do DistOptions, final []int32) error {
	c, nl := g.c, g.NLocal()
	var mine []int32
	for v := range nl {
		if part[v] == m {
			mine = append(mine, int32(v))
		}
	}
	start, total, err := collective.Offset(c, int64(len(mine)))
	if err != nil {
		return err
	}
	if total < int64(do.Parts) {
		return fmt.Errorf("%d vertices for %d parts", total, do.Parts)
	}
	newID := make([]int64, nl+len(g.Ghosts))
	for i := range newID[:nl] {
		newID[i] = -1
	}
	for i, v := range mine {
		newID[v] = start + int64(i)
	}
	if err := haloUpdate(g, newID); err != nil {
		return err
	}
	in := Input{N: total, Symmetric: true}
	for _, v := range mine {
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			if u := newID[g.Adj[e]]; u >= 0 {
				in.Src, in.Dst, in.Weight = append(in.Src, newID[v]), append(in.Dst, u), append(in.Weight, g.Adjwgt[e])
			}
		}
	}
	sg, _, err := Build(c, in)
	if err != nil {
		return err
	}
	if err := sg.carryWeights(g, mine, newID); err != nil {
		return err
	}
	res, err := Partition(sg, do)
	if err != nil {
		return err
	}
	ids := make([]int64, len(mine))
	for i, v := range mine {
		ids[i] = newID[v]
	}
	slo := sg.Lo()
	got, err := collective.Request(c, ids, sg.Dist.Owner, func(_ int, keys []int64) ([]int32, error) {
		out := make([]int32, len(keys))
		for i, id := range keys {
			out[i] = res.Part[id-slo]
		}
		return out, nil
	})
	if err != nil {
		return err
	}
	for i, v := range mine {
		final[v] = m*int32(do.Parts) + got[i]
	}
	return nil
}

// carryWeights gives the vertices of the induced graph sg the weights their
// originals have in g; mine lists g's owned vertices in sg, newID their IDs.
func (sg *DistGraph) carryWeights(g *DistGraph, mine []int32, newID []int64) error {
	nc := g.NCon
	send := make([][]int64, sg.c.Size())
	for _, v := range mine {
		o := sg.Dist.Owner(newID[v])
		send[o] = append(send[o], newID[v])
		send[o] = append(send[o], g.Vwgt[int(v)*nc:int(v+1)*nc]...)
	}
	got, err := collective.Exchange(sg.c, send)
	if err != nil {
		return err
	}
	vw := make([]int64, sg.NLocal()*nc)
	lo := sg.Lo()
	for _, rec := range got {
		for i := 0; i < len(rec); i += 1 + nc {
			copy(vw[(rec[i]-lo)*int64(nc):], rec[i+1:i+1+nc])
		}
	}
	return sg.SetVertexWeights(nc, vw)
}
