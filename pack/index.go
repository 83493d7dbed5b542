package pack

import (
	"cmp"
	"slices"
	"sort"
)

// axis says which size the filling phase packs exactly (the primary) and
// which it only keeps under the limit (the secondary).
type axis int

const (
	nodesFirst axis = iota // primary nodes, secondary edges
	edgesFirst             // primary edges, secondary nodes
)

// split returns the primary and secondary size of t along a.
func (a axis) split(t Tuple) (p, s int) {
	if a == edgesFirst {
		return t.Edges, t.Nodes
	}
	return t.Nodes, t.Edges
}

// binIndex answers the question of the filling phase — which graph size,
// among those with graphs left, is the largest under a weighting and fits in
// the space left in a pack — without scanning every bin. Bins are grouped by
// primary size; within a group they are sorted by secondary size. A query
// walks the groups from the largest primary size that fits downwards, takes
// in each the largest secondary size that fits, and stops once no group
// further down can beat the best found.
type binIndex struct {
	tuple  []Tuple // per bin, sorted by primary then secondary size
	p, s   []int   // primary and secondary size per bin
	left   []int   // graphs not yet packed, per bin
	group  []int   // group of each bin
	prevOK []int   // union-find: largest bin index <= i with graphs left, or -1
	vals   []int   // primary size of each group, ascending
	start  []int   // group g is bins start[g]:start[g+1]
	gleft  []int   // graphs not yet packed, per group
	// gprevOK: union-find, largest group index <= g with graphs left, or -1
	gprevOK []int
	wp, ws  float64   // weights of primary and secondary size
	maxW    []float64 // largest weight of a bin in groups 0..g, for pruning
	work    int       // groups visited by best and reach cells rebuilt
}

func newBinIndex(h Histogram, a axis, w weights) *binIndex {
	bins := slices.Clone(h.bins)
	slices.SortFunc(bins, func(x, y Bin) int {
		xp, xs := a.split(x.Tuple)
		yp, ys := a.split(y.Tuple)
		return cmp.Or(cmp.Compare(xp, yp), cmp.Compare(xs, ys))
	})
	n := len(bins)
	x := &binIndex{tuple: make([]Tuple, n), p: make([]int, n), s: make([]int, n),
		left: make([]int, n), group: make([]int, n), prevOK: make([]int, n)}
	for i, b := range bins {
		x.tuple[i] = b.Tuple
		x.p[i], x.s[i] = a.split(b.Tuple)
		x.left[i] = b.Count
		x.prevOK[i] = i
		if i == 0 || x.p[i] != x.p[i-1] {
			x.vals = append(x.vals, x.p[i])
			x.start = append(x.start, i)
			x.gleft = append(x.gleft, 0)
			x.gprevOK = append(x.gprevOK, len(x.gprevOK))
		}
		x.group[i] = len(x.vals) - 1
		x.gleft[len(x.gleft)-1] += b.Count
	}
	x.start = append(x.start, n)
	x.wp, x.ws = w.p, w.s
	x.maxW = make([]float64, len(x.vals))
	for g := range x.vals {
		last := x.start[g+1] - 1 // groups are sorted by secondary size
		x.maxW[g] = x.weight(last)
		if g > 0 {
			x.maxW[g] = max(x.maxW[g], x.maxW[g-1])
		}
	}
	return x
}

func (x *binIndex) weight(i int) float64 { return x.wp*float64(x.p[i]) + x.ws*float64(x.s[i]) }

// alive returns the largest bin index <= i with graphs left, or -1.
func (x *binIndex) alive(i int) int { return findLeft(x.prevOK, i) }

// aliveGroup returns the largest group index <= g with graphs left, or -1.
func (x *binIndex) aliveGroup(g int) int { return findLeft(x.gprevOK, g) }

// findLeft follows parent links from i to the largest index <= i that is
// its own parent (or -1), compressing the path: a union-find over indices
// where a removed index points to the one before it.
func findLeft(parent []int, i int) int {
	root := i
	for root >= 0 && parent[root] != root {
		root = parent[root]
	}
	for i >= 0 && i != root {
		next := parent[i]
		parent[i] = root
		i = next
	}
	return root
}

// take removes k graphs of bin i; k must not exceed what is left.
func (x *binIndex) take(i, k int) {
	x.left[i] -= k
	g := x.group[i]
	x.gleft[g] -= k
	if x.left[i] == 0 {
		x.prevOK[i] = i - 1
	}
	if x.gleft[g] == 0 {
		x.gprevOK[g] = g - 1
	}
}

// best returns the bin with graphs left of the largest weight wp·primary +
// ws·secondary among those of primary size at most rp and secondary size at
// most rs, or -1. With r, only graphs that leave a gap the graphs left can
// fill within the limits count: primary size v and secondary size at most
// rs - r.gapCost(rp-v). The walk stops when no bin of the groups left can
// beat the best: neither the heaviest of them nor the group's primary size
// with all of rs.
func (x *binIndex) best(rp, rs int, r *reach) int {
	found, bestW := -1, -1.0
	for g := x.aliveGroup(sort.SearchInts(x.vals, rp+1) - 1); g >= 0; g = x.aliveGroup(g - 1) {
		x.work++
		if min(x.maxW[g], x.wp*float64(x.vals[g])+x.ws*float64(rs)) <= bestW {
			break
		}

		bound := rs
		if r != nil {
			c := r.gapCost(rp - x.vals[g])
			if c > rs {
				continue
			}
			bound = rs - c
		}
		lo, hi := x.start[g], x.start[g+1]
		j := lo + sort.Search(hi-lo, func(k int) bool { return x.s[lo+k] > bound }) - 1
		if j = x.alive(j); j < lo {
			continue
		}
		if w := x.weight(j); w > bestW {
			found, bestW = j, w
		}
	}
	return found
}
