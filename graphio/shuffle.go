package graphio

import (
	"fmt"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/rank"
)

// ShuffleEdges sends edge i, with all its columns and data rows, to rank
// dest[i], and returns the edges this rank received, grouped by source
// rank in rank order, each group in its sender's order. It consumes e: each
// column is released once sent, so the peak is about one share plus one
// column. It is collective, and checks that no edge was lost.
func ShuffleEdges(c *collective.Comm, e *graph.Edges, dest []int32) (*graph.Edges, error) {
	if len(dest) != e.Len() {
		return nil, fmt.Errorf("graphio: %d destinations for %d edges", len(dest), e.Len())
	}
	p := c.Size()
	counts := make([]int, p)
	for _, d := range dest {
		if d < 0 || int(d) >= p {
			return nil, fmt.Errorf("graphio: edge destination %d outside [0,%d)", d, p)
		}
		counts[d]++
	}
	// order[k] is the edge that goes k-th in the send buffer.
	next := make([]int, p)
	for j := 1; j < p; j++ {
		next[j] = next[j-1] + counts[j-1]
	}
	order := make([]int, len(dest))
	for i, d := range dest {
		order[next[d]] = i
		next[d]++
	}
	// Every rank agrees on which optional columns travel.
	flags := int64(0)
	if e.Type != nil {
		flags |= 1
	}
	if e.ID != nil {
		flags |= 2
	}
	if e.Weight != nil {
		flags |= 4
	}
	all, err := collective.Allreduce(c, []int64{flags}, rank.Max)
	if err != nil {
		return nil, err
	}
	flags = all[0]
	out := &graph.Edges{}
	var recvCounts []int
	if out.Src, recvCounts, err = sendColumn(c, e.Src, order, counts); err != nil {
		return nil, err
	}
	e.Src = nil
	if out.Dst, _, err = sendColumn(c, e.Dst, order, counts); err != nil {
		return nil, err
	}
	e.Dst = nil
	if flags&1 != 0 {
		if out.Type, _, err = sendColumn(c, pad(e.Type, len(dest)), order, counts); err != nil {
			return nil, err
		}
		e.Type = nil
	}
	if flags&2 != 0 {
		if out.ID, _, err = sendColumn(c, pad(e.ID, len(dest)), order, counts); err != nil {
			return nil, err
		}
		e.ID = nil
	}
	if flags&4 != 0 {
		w := e.Weight
		if w == nil {
			w = ones(len(dest))
		}
		if out.Weight, _, err = sendColumn(c, w, order, counts); err != nil {
			return nil, err
		}
		e.Weight = nil
	}
	for _, k := range e.DataKeys() {
		t := e.Data[k]
		rb := t.RowBytes()
		send := make([]byte, len(order)*rb)
		for k2, i := range order {
			copy(send[k2*rb:(k2+1)*rb], t.Data[i*rb:(i+1)*rb])
		}
		bc := make([]int, p)
		for j := range counts {
			bc[j] = counts[j] * rb
		}
		got, _, err := collective.Alltoallv(c, send, bc)
		if err != nil {
			return nil, err
		}
		if out.Data == nil {
			out.Data = map[string]*graph.Tensor{}
		}
		out.Data[k] = &graph.Tensor{DType: t.DType, Shape: append([]int64{int64(len(got) / max(rb, 1))}, t.RowShape()...), Data: got}
		delete(e.Data, k)
	}
	var sent, got int64
	sent = int64(len(dest))
	for _, n := range recvCounts {
		got += int64(n)
	}
	s1, err := collective.Sum(c, sent)
	if err != nil {
		return nil, err
	}
	s2, err := collective.Sum(c, got)
	if err != nil {
		return nil, err
	}
	if s1 != s2 {
		return nil, fmt.Errorf("graphio: edge shuffle lost edges: %d sent, %d received", s1, s2)
	}
	return out, nil
}

// sendColumn sends one column in the order of the send buffer.
func sendColumn[T any](c *collective.Comm, col []T, order []int, counts []int) ([]T, []int, error) {
	send := make([]T, len(order))
	for k, i := range order {
		send[k] = col[i]
	}
	return collective.Alltoallv(c, send, counts)
}

func ones(n int) []float32 {
	w := make([]float32, n)
	for i := range w {
		w[i] = 1
	}
	return w
}

func pad[T any](s []T, n int) []T {
	if s == nil {
		return make([]T, n)
	}
	return s
}
