package parmetis

import (
	"fmt"
	"math"

	"gnnrun/collective"
	"gnnrun/parmetis/serial"
)

// Replicate gathers the whole distributed graph on every rank as a serial
// Graph whose vertex i is global vertex i. It is meant for the coarsest
// graph, whose size the caller bounds; it is collective.
func (g *DistGraph) Replicate() (*serial.Graph, error) {
	if g.N() > math.MaxInt32 {
		return nil, fmt.Errorf("parmetis: cannot replicate a graph of %d vertices", g.N())
	}
	if g.c.Size() == 1 {
		// One rank: local indices are global IDs; share the arrays.
		return &serial.Graph{NCon: g.NCon, Xadj: g.Xadj, Adjncy: g.Adj, Adjwgt: g.Adjwgt, Vwgt: g.Vwgt}, nil
	}
	nl := g.NLocal()
	deg := make([]int64, nl)
	adj := make([]int32, len(g.Adj))
	for v := range nl {
		deg[v] = g.Xadj[v+1] - g.Xadj[v]
	}
	for e, u := range g.Adj {
		adj[e] = int32(g.GID(u))
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
	if s.Adjwgt, _, err = collective.Allgatherv(g.c, g.Adjwgt); err != nil {
		return nil, err
	}
	if s.Vwgt, _, err = collective.Allgatherv(g.c, g.Vwgt); err != nil {
		return nil, err
	}
	return s, nil
}
