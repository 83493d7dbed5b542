package parmetis

import (
	"slices"
)

// rows is a CSR over a contiguous range of vertices with global neighbour IDs.
type rows struct {
	lo    int64
	xadj  []int64
	adj   []int64
	wgt   []int64
	indeg []int64
}

// rowsFromArcs builds the rows of the n vertices from lo out of arcs that
// arrived in any order, in several slices: a counting sort by tail, then a
// sort of each row by head, merging parallel arcs (summing weights) and
// dropping self loops and zero weights. It returns how many parallel arcs
// it merged. It runs in O(arcs log degree) without a global sort.
func rowsFromArcs(lo, n int64, parts [][]arc) (rows, int64) {
	count := make([]int64, n+1)
	total := 0
	for _, p := range parts {
		total += len(p)
		for _, a := range p {
			count[a.From-lo+1]++
		}
	}
	for v := range n {
		count[v+1] += count[v]
	}
	sorted := make([]arc, total)
	next := slices.Clone(count[:n])
	for _, p := range parts {
		for _, a := range p {
			sorted[next[a.From-lo]] = a
			next[a.From-lo]++
		}
	}
	r := rows{lo: lo, xadj: make([]int64, n+1), adj: make([]int64, 0, total), wgt: make([]int64, 0, total)}
	var merged int64
	for v := range n {
		row := sorted[count[v]:count[v+1]]
		slices.SortFunc(row, func(x, y arc) int {
			if x.To < y.To {
				return -1
			}
			if x.To > y.To {
				return 1
			}
			return 0
		})
		start := len(r.adj)
		for _, a := range row {
			switch {
			case a.To == a.From || a.W == 0:
			case len(r.adj) > start && r.adj[len(r.adj)-1] == a.To:
				r.wgt[len(r.wgt)-1] += a.W
				merged++
			default:
				r.adj = append(r.adj, a.To)
				r.wgt = append(r.wgt, a.W)
			}
		}
		r.xadj[v+1] = int64(len(r.adj))
	}
	return r, merged
}
