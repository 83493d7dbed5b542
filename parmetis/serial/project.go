package serial

import "time"

// projectSides carries the bisection coarse of the coarser graph to lev's
// graph: every vertex takes the side of its coarse vertex. When exact (the
// coarse graph kept all edges), it also returns, in a reused buffer, which
// vertices lie inside their side (their coarse vertex had no edge across),
// so the new bookkeeping skips their edges; otherwise interior is nil.
func (c *ctrl) projectSides(lev level, coarse *bisection, exact bool) (side, interior []int8) {
	defer c.since(PhaseProject, time.Now())
	side = make([]int8, len(lev.cmap))
	for v, cv := range lev.cmap {
		side[v] = coarse.side[cv]
	}
	if !exact {
		return side, nil
	}
	interior = grow8(&c.ws.status, len(lev.cmap))
	for v, cv := range lev.cmap {
		interior[v] = 0
		if coarse.ed[cv] == 0 {
			interior[v] = 1
		}
	}
	return side, interior
}

// projectParts carries a k-way partition of the coarser graph to lev's
// graph: every vertex takes the part of its coarse vertex.
func (c *ctrl) projectParts(lev level, coarse []int32) []int32 {
	defer c.since(PhaseProject, time.Now())
	part := make([]int32, len(lev.cmap))
	for v, cv := range lev.cmap {
		part[v] = coarse[cv]
	}
	return part
}
