package parmetis

import (
	"iter"
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
// released once copied), and the arcs more yields (nil: none; it is
// iterated twice): a counting sort by tail into 16-byte neighbour
// entries, then a sort of each row by head, merging parallel arcs (summing
// weights) and dropping self loops and zero weights in place. It returns how
// many parallel arcs it merged. It runs in O(arcs log degree) without a
// global sort, and holds at most the arcs plus their entries at once.
func rowsFromArcs(lo, n int64, parts [][]arc, more iter.Seq[arc]) (rows, int64) {
	if more == nil {
		more = func(func(arc) bool) {}
	}
	xadj := make([]int64, n+1)
	total := 0
	for _, p := range parts {
		total += len(p)
		for _, a := range p {
			xadj[a.From-lo+1]++
		}
	}
	for a := range more {
		total++
		xadj[a.From-lo+1]++
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
	for a := range more {
		nbr[next[a.From-lo]] = neighbour{a.To, a.W}
		next[a.From-lo]++
	}
	var merged, m int64
	var scratch []neighbour
	out := int64(0)
	for v := range n {
		start := out
		out, m, scratch = mergeRow(nbr, xadj[v], xadj[v+1], out, lo+v, scratch)
		merged += m
		xadj[v] = start
	}
	xadj[n] = out
	return rows{lo: lo, xadj: xadj, nbr: nbr[:out:out]}, merged
}

// mergeRow sorts the entries nbr[from:to] of vertex self by head and
// writes them to nbr[out:] (out <= from), merging parallel arcs (summing
// weights) and dropping self loops and zero weights. It returns the new
// end, how many arcs it merged, and scratch for the next call (see
// sortByHead).
func mergeRow(nbr []neighbour, from, to, out, self int64, scratch []neighbour) (int64, int64, []neighbour) {
	row := nbr[from:to]
	scratch = sortByHead(row, scratch)
	start, merged := out, int64(0)
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
	return out, merged, scratch
}

// sortByHead sorts a row's entries by neighbour ID: insertion sort for the
// short rows that make up most of a sparse graph, where a generic sort's
// comparator calls cost more than the sorting; radix sort in bytes of the
// row's ID range for the long rows of hubs. It returns scratch, grown to
// the row's length if it was shorter, for the next call.
func sortByHead(row, scratch []neighbour) []neighbour {
	if len(row) > radixRow {
		return radixSortHeads(row, scratch)
	}
	for i := 1; i < len(row); i++ {
		e := row[i]
		j := i
		for ; j > 0 && row[j-1].To > e.To; j-- {
			row[j] = row[j-1]
		}
		row[j] = e
	}
	return scratch
}

// radixRow is the row length above which sortByHead radix-sorts: a pass
// costs the row plus 256 counters, a comparison sort log2(len) compares per
// entry.
const radixRow = 64

// radixSortHeads sorts row by neighbour ID, least significant byte first,
// over the bytes in which the row's IDs differ from its smallest.
func radixSortHeads(row, scratch []neighbour) []neighbour {
	lo, hi := row[0].To, row[0].To
	for _, e := range row {
		lo, hi = min(lo, e.To), max(hi, e.To)
	}
	if cap(scratch) < len(row) {
		scratch = make([]neighbour, len(row))
	}
	src, dst := row, scratch[:len(row)]
	span := uint64(hi - lo)
	for shift := uint(0); shift < 64 && span>>shift > 0; shift += 8 {
		var count [256]int
		for _, e := range src {
			count[(uint64(e.To-lo)>>shift)&0xff]++
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for _, e := range src {
			d := (uint64(e.To-lo) >> shift) & 0xff
			dst[count[d]] = e
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &row[0] {
		copy(row, src) // an odd number of passes left the result in scratch
	}
	return scratch
}
