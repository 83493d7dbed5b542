package parmetis

import (
	"fmt"

	"gnnrun/collective"
)

// halo is the communication pattern of a DistGraph's ghosts: which owned
// vertices each peer mirrors, and how many ghosts each peer owns. It is set
// up once per graph; every update then moves one value per ghost.
type halo struct {
	recvCounts []int   // ghosts owned by each rank
	sendIdx    []int32 // owned vertices the peers mirror, grouped by peer
	sendCounts []int
}

// setupHalo tells every owner which of its vertices this rank mirrors.
func (g *DistGraph) setupHalo() error {
	n := g.c.Size()
	h := &halo{recvCounts: make([]int, n)}
	for _, id := range g.Ghosts {
		h.recvCounts[g.Dist.Owner(id)]++
	}
	asked, counts, err := collective.Alltoallv(g.c, g.Ghosts, h.recvCounts)
	if err != nil {
		return err
	}
	lo, nl := g.Lo(), int64(g.NLocal())
	h.sendIdx = make([]int32, len(asked))
	for i, id := range asked {
		if id < lo || id >= lo+nl {
			return fmt.Errorf("parmetis: rank %d was asked for vertex %d it does not own", g.c.Rank(), id)
		}
		h.sendIdx[i] = int32(id - lo)
	}
	h.sendCounts = counts
	g.halo = h
	return nil
}

// haloUpdate copies each owned vertex's value to the ranks that mirror it:
// vals holds NLocal owned values followed by one slot per ghost, which it
// overwrites. Every rank of the graph must call it.
func haloUpdate[T any](g *DistGraph, vals []T) error { return haloUpdateRows(g, vals, 1) }

// haloUpdateRows is haloUpdate for width values per vertex.
func haloUpdateRows[T any](g *DistGraph, vals []T, width int) error {
	nl := g.NLocal()
	if len(vals) != (nl+len(g.Ghosts))*width {
		return fmt.Errorf("parmetis: halo update of %d values for %d owned and %d ghost vertices", len(vals), nl, len(g.Ghosts))
	}
	h := g.halo
	send := make([]T, len(h.sendIdx)*width)
	for i, v := range h.sendIdx {
		copy(send[i*width:(i+1)*width], vals[int(v)*width:(int(v)+1)*width])
	}
	counts := h.sendCounts
	if width > 1 {
		counts = make([]int, len(h.sendCounts))
		for j, k := range h.sendCounts {
			counts[j] = k * width
		}
	}
	got, _, err := collective.AlltoallvInto(g.c, send, counts, vals[nl*width:nl*width:len(vals)])
	if err != nil {
		return err
	}
	if len(got) != len(g.Ghosts)*width {
		return fmt.Errorf("parmetis: halo update brought %d values for %d ghosts", len(got), len(g.Ghosts))
	}
	return nil
}
