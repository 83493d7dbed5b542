package parmetis

import (
	"cmp"
	"slices"
)

// rows is a CSR over a contiguous range of vertices with global neighbour
// IDs: the neighbours of vertex lo+v are nbr[xadj[v]:xadj[v+1]].
type rows struct {
	lo    int64
	xadj  []int64
	nbr   []neighbour
	indeg []int64
}

// neighbour is one adjacency entry: a global vertex ID and the weight.
type neighbour struct{ To, W int64 }

// rowsFromArcs builds the rows of the n vertices from lo out of arcs that
// arrived in any order, in several slices, which it consumes (each slice is
// released once copied): a counting sort by tail into 16-byte neighbour
// entries, then a sort of each row by head, merging parallel arcs (summing
// weights) and dropping self loops and zero weights in place. It returns how
// many parallel arcs it merged. It runs in O(arcs log degree) without a
// global sort, and holds at most the arcs plus their entries at once.
func rowsFromArcs(lo, n int64, parts [][]arc) (rows, int64) {
	xadj := make([]int64, n+1)
	total := 0
	for _, p := range parts {
		total += len(p)
		for _, a := range p {
			xadj[a.From-lo+1]++
		}
	}
	for v := range n {
		xadj[v+1] += xadj[v]
	}
	nbr := make([]neighbour, total)
	next := slices.Clone(xadj[:n])
	for i, p := range parts {
		for _, a := range p {
			nbr[next[a.From-lo]] = neighbour{a.To, a.W}
			next[a.From-lo]++
		}
		parts[i] = nil
	}
	var merged int64
	out := int64(0)
	for v := range n {
		row := nbr[xadj[v]:xadj[v+1]]
		sortByHead(row)
		start, self := out, lo+v
		for _, e := range row {
			switch {
			case e.To == self || e.W == 0:
			case out > start && nbr[out-1].To == e.To:
				nbr[out-1].W += e.W
				merged++
			default:
				nbr[out] = e
				out++
			}
		}
		xadj[v] = start
	}
	xadj[n] = out
	return rows{lo: lo, xadj: xadj, nbr: nbr[:out:out]}, merged
}

// sortByHead sorts a row's entries by neighbour ID: insertion sort for the
// short rows that make up most of a sparse graph, where a generic sort's
// comparator calls cost more than the sorting.
func sortByHead(row []neighbour) {
	if len(row) > 24 {
		slices.SortFunc(row, func(x, y neighbour) int { return cmp.Compare(x.To, y.To) })
		return
	}
	for i := 1; i < len(row); i++ {
		e := row[i]
		j := i
		for ; j > 0 && row[j-1].To > e.To; j-- {
			row[j] = row[j-1]
		}
		row[j] = e
	}
}
