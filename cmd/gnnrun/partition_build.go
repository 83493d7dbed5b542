package main

import (
	"fmt"
	"math"

	"gnnrun/graphio"
	"gnnrun/parmetis"
)

// partitionInput hands the edges read to the partitioner, which needs
// whole-number edge weights. It takes the edges from g: Build frees them as
// it ships them.
func partitionInput(g *graphio.Graph) (parmetis.Input, error) {
	in := parmetis.Input{N: g.Meta.TotalNodes(), Src: g.Edges.Src, Dst: g.Edges.Dst, Symmetric: g.Format == graphio.InMETIS}
	w := g.Edges.Weight
	g.Edges = nil
	if w != nil {
		in.Weight = make([]int64, len(w))
		for i, x := range w {
			if x != float32(math.Round(float64(x))) {
				return in, fmt.Errorf("%s: edge %d -> %d has weight %v; the partitioner needs whole-number weights", g.Path, in.Src[i], in.Dst[i], x)
			}
			in.Weight[i] = int64(x)
		}
	}
	return in, nil
}
