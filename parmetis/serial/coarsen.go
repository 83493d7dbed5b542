package serial

import "math/rand/v2"

// level is one graph of a coarsening hierarchy; cmap maps its vertices to
// the next coarser level's (nil on the coarsest). When the hierarchy was
// built within a partition, part is the partition on this level.
type level struct {
	g    *Graph
	cmap []int32
	part []int32
	// sparse says that g lost light edges (see sparsify), so an edge
	// across in the finer graph may have no coarse counterpart.
	sparse bool
}

// coarsen matches and contracts g level by level until it has at most
// coarsenTo vertices, a level keeps more than 85% of its vertices, or the
// graph becomes very sparse. levels[0] is g itself. A coarse vertex may not
// exceed 1.5/coarsenTo of the total weight in any constraint, so the
// coarsest graph can still be balanced. Levels whose average degree
// exceeds 4x g's are sparsified to about 2x g's average (see sparsify). With
// a partition (part not nil)
// only vertices of the same part are matched, and every level carries the
// partition.
func (c *ctrl) coarsen(g *Graph, part []int32, coarsenTo int, rng *rand.Rand) []level {
	maxv := constraintTotals(g)
	for i := range maxv {
		maxv[i] = max(1, int64(1.5*float64(maxv[i])/float64(coarsenTo)))
	}
	levels := []level{{g: g, part: part}}
	keep := max(int(sparseKeep*float64(len(g.Adjncy))/float64(max(g.N(), 1))), 8)
	for cur := levels[0]; cur.g.N() > coarsenTo; {
		n := cur.g.N()
		cmap, cn := c.match(cur.g, rng, maxv, cur.part)
		if cn == n {
			c.ws.arena.put32(cmap)
			break
		}
		next := level{g: c.contract(cur.g, cmap, cn)}
		if len(next.g.Adjncy) > 2*keep*cn {
			c.sparsify(next.g, keep)
			next.sparse = true
		}
		if cur.part != nil {
			next.part = c.ws.arena.get32(cn)
			for v, cv := range cmap {
				next.part[cv] = cur.part[v]
			}
		}
		levels[len(levels)-1].cmap = cmap
		levels = append(levels, next)
		if float64(cn) > coarsenFraction*float64(n) || len(next.g.Adjncy) <= cn/2 {
			break
		}
		cur = next
	}
	return levels
}

// dropCoarser gives the arrays of levels[l+1] and the map into it back to
// the arena, once levels[l] has taken over the partition.
func (c *ctrl) dropCoarser(levels []level, l int) {
	a := &c.ws.arena
	a.freeGraph(levels[l+1].g)
	a.put32(levels[l+1].part)
	a.put32(levels[l].cmap)
	levels[l+1] = level{}
	levels[l].cmap = nil
}
