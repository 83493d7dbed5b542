package graph

import "sort"

// Edges is one rank's share of a distributed edge list. Src and Dst are
// homogeneous node IDs; the optional columns are nil or as long as Src.
type Edges struct {
	Src, Dst []int64
	// Type is the edge type index of each edge (nil: all of type 0).
	Type []int16
	// ID is each edge's type-wise ID: its position among the edges of its
	// type in the input (nil: not tracked).
	ID []int64
	// Weight is each edge's weight (nil: all 1).
	Weight []float32
	// Data holds edge arrays keyed by EdgeDataKey(edge type, name), with one
	// row per edge here; rows of edges of other types are zero.
	Data map[string]*Tensor
}

// EdgeDataKey returns the key of an edge array in Edges.Data:
// "src:rel:dst/name", the key DGL's partitions use.
func EdgeDataKey(et EdgeType, name string) string { return et.String() + "/" + name }

// Len returns the number of edges held.
func (e *Edges) Len() int { return len(e.Src) }

// TypeOf returns the edge type of edge i.
func (e *Edges) TypeOf(i int) int16 {
	if e.Type == nil {
		return 0
	}
	return e.Type[i]
}

// DataKeys returns the keys of Data in sorted order.
func (e *Edges) DataKeys() []string {
	var out []string
	for k := range e.Data {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Select returns a new Edges holding edges idx[0], idx[1], ... of e, with
// every column.
func (e *Edges) Select(idx []int) *Edges {
	out := &Edges{Src: gather(e.Src, idx), Dst: gather(e.Dst, idx)}
	if e.Type != nil {
		out.Type = gather(e.Type, idx)
	}
	if e.ID != nil {
		out.ID = gather(e.ID, idx)
	}
	if e.Weight != nil {
		out.Weight = gather(e.Weight, idx)
	}
	if e.Data != nil {
		out.Data = map[string]*Tensor{}
		for k, t := range e.Data {
			out.Data[k] = t.SelectRows(idx)
		}
	}
	return out
}

// Append adds the edges of o to e; both must have the same optional
// columns and data keys.
func (e *Edges) Append(o *Edges) {
	n := e.Len()
	e.Src = append(e.Src, o.Src...)
	e.Dst = append(e.Dst, o.Dst...)
	if e.Type != nil || o.Type != nil {
		e.Type = append(pad(e.Type, n), pad(o.Type, o.Len())...)
	}
	if e.ID != nil || o.ID != nil {
		e.ID = append(pad(e.ID, n), pad(o.ID, o.Len())...)
	}
	if e.Weight != nil || o.Weight != nil {
		e.Weight = append(padOnes(e.Weight, n), padOnes(o.Weight, o.Len())...)
	}
	for k, t := range o.Data {
		if e.Data == nil {
			e.Data = map[string]*Tensor{}
		}
		if mine := e.Data[k]; mine != nil {
			mine.Data = append(mine.Data, t.Data...)
			mine.Shape[0] += t.Rows()
		} else {
			z := NewTensor(t.DType, append([]int64{int64(n)}, t.RowShape()...)...)
			z.Data = append(z.Data, t.Data...)
			z.Shape[0] += t.Rows()
			e.Data[k] = z
		}
	}
	for k, t := range e.Data {
		if _, ok := o.Data[k]; !ok {
			t.Data = append(t.Data, make([]byte, o.Len()*t.RowBytes())...)
			t.Shape[0] += int64(o.Len())
		}
	}
}

// SelectRows returns a new tensor of rows idx[0], idx[1], ... of t.
func (t *Tensor) SelectRows(idx []int) *Tensor {
	rb := t.RowBytes()
	out := &Tensor{DType: t.DType, Shape: append([]int64{int64(len(idx))}, t.RowShape()...), Data: make([]byte, len(idx)*rb)}
	for i, j := range idx {
		copy(out.Data[i*rb:(i+1)*rb], t.Data[j*rb:(j+1)*rb])
	}
	return out
}

func gather[T any](s []T, idx []int) []T {
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = s[j]
	}
	return out
}

func pad[T any](s []T, n int) []T {
	if s == nil {
		return make([]T, n)
	}
	return s
}

func padOnes(s []float32, n int) []float32 {
	if s != nil {
		return s
	}
	s = make([]float32, n)
	for i := range s {
		s[i] = 1
	}
	return s
}
