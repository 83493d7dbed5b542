package graphio

import (
	"math"
	"math/bits"
	"slices"
	"strings"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/rank"
)

// Stats summarises a distributed graph: counts, structure and checksums
// that do not depend on the number of ranks or the order of the edges.
type Stats struct {
	Meta       graph.Meta
	Edges      int64 // edges held by all ranks (equals Meta.TotalEdges)
	MinShare   int64 // fewest edges held by one rank
	MaxShare   int64 // most edges held by one rank
	SelfLoops  int64
	Duplicates int64 // edges beyond the first of each (type, source, destination)
	Isolated   int64 // nodes without any edge
	OutDegree  Degree
	InDegree   Degree
	Weighted   bool
	Checksum   uint64 // EdgeChecksum
	Arrays     []ArrayStats
}

// Degree is the range and mean of a degree over all nodes.
type Degree struct {
	Min, Max int64
	Mean     float64
}

// ArrayStats describes a node or edge array of the whole graph.
type ArrayStats struct {
	Kind     string // "node" or "edge"
	Type     string // node type, or canonical edge type
	Name     string
	DType    graph.DType
	Shape    []int64
	Checksum uint64 // order-independent hash of the rows with their IDs
}

// ComputeStats computes the statistics of g; it is collective and leaves g
// unchanged.
func ComputeStats(c *collective.Comm, g *Graph) (*Stats, error) {
	e := g.Edges
	s := &Stats{Meta: g.Meta}
	var err error
	n := int64(e.Len())
	if s.Edges, err = collective.Sum(c, n); err != nil {
		return nil, err
	}
	if s.MinShare, err = collective.Min(c, n); err != nil {
		return nil, err
	}
	if s.MaxShare, err = collective.Max(c, n); err != nil {
		return nil, err
	}
	var loops int64
	for i := range e.Src {
		if e.Src[i] == e.Dst[i] {
			loops++
		}
	}
	if s.SelfLoops, err = collective.Sum(c, loops); err != nil {
		return nil, err
	}
	if s.Weighted, err = collective.Any(c, e.Weight != nil); err != nil {
		return nil, err
	}
	if s.Checksum, err = EdgeChecksum(c, e); err != nil {
		return nil, err
	}
	if s.Duplicates, err = countDuplicates(c, e, g.Meta.TotalNodes(), len(g.Meta.EdgeTypes)); err != nil {
		return nil, err
	}
	if err := degrees(c, g, s); err != nil {
		return nil, err
	}
	if err := arrayStats(c, g, s); err != nil {
		return nil, err
	}
	return s, nil
}

// buckets groups n items by destination rank, sizing every bucket exactly
// first, so the send buffers hold one copy of the items and no slack.
func buckets[T any](parts, n int, dest func(i int) int, val func(i int) T) [][]T {
	counts := make([]int, parts)
	for i := range n {
		counts[dest(i)]++
	}
	out := make([][]T, parts)
	for p, k := range counts {
		out[p] = make([]T, 0, k)
	}
	for i := range n {
		d := dest(i)
		out[d] = append(out[d], val(i))
	}
	return out
}

// key128 is an edge's (type, source, destination) packed into two words.
type key128 struct{ Hi, Lo uint64 }

// bitsFor returns the bits needed to write every value below n.
func bitsFor(n int64) uint { return uint(bits.Len64(uint64(max(n-1, 0)))) }

// countDuplicates counts the edges beyond the first of each (type, source,
// destination). Every edge's key, packed into one word when the node IDs
// leave room (else two), goes to the rank its hash picks, where equal keys
// meet; a radix sort puts them side by side. The count is exact.
func countDuplicates(c *collective.Comm, e *graph.Edges, nodes int64, types int) (int64, error) {
	w, tb := bitsFor(nodes), bitsFor(int64(types))
	p := uint64(c.Size())
	var dups int64
	if tb+2*w <= 64 {
		key := func(i int) uint64 { return uint64(e.TypeOf(i))<<(2*w) | uint64(e.Src[i])<<w | uint64(e.Dst[i]) }
		send := buckets(c.Size(), e.Len(), func(i int) int { return int(graph.Mix64(key(i)) % p) }, key)
		got, err := collective.Exchange(c, send)
		if err != nil {
			return 0, err
		}
		keys := concat(got)
		radixSort(keys)
		for i := 1; i < len(keys); i++ {
			if keys[i] == keys[i-1] {
				dups++
			}
		}
	} else {
		key := func(i int) key128 { return key128{uint64(e.TypeOf(i))<<w | uint64(e.Src[i]), uint64(e.Dst[i])} }
		send := buckets(c.Size(), e.Len(), func(i int) int { k := key(i); return int(graph.Mix64(k.Hi^graph.Mix64(k.Lo)) % p) }, key)
		got, err := collective.Exchange(c, send)
		if err != nil {
			return 0, err
		}
		keys := concat(got)
		radixSort128(keys)
		for i := 1; i < len(keys); i++ {
			if keys[i] == keys[i-1] {
				dups++
			}
		}
	}
	return collective.Sum(c, dups)
}

func concat[T any](parts [][]T) []T {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]T, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// radixSort sorts x in place by 16-bit digits, least significant first:
// linear time, where a comparison sort of tens of millions of keys costs
// seconds.
func radixSort(x []uint64) {
	if len(x) < 1<<12 {
		slices.Sort(x)
		return
	}
	buf := make([]uint64, len(x))
	src, dst := x, buf
	var count [1 << 16]int
	for shift := uint(0); shift < 64; shift += 16 {
		clear(count[:])
		for _, v := range src {
			count[v>>shift&0xffff]++
		}
		sum := 0
		for d, k := range count {
			count[d] = sum
			sum += k
		}
		for _, v := range src {
			d := v >> shift & 0xffff
			dst[count[d]] = v
			count[d]++
		}
		src, dst = dst, src
	}
	// An even number of passes leaves the result in x.
}

// radixSort128 sorts x by (Hi, Lo) the same way.
func radixSort128(x []key128) {
	buf := make([]key128, len(x))
	src, dst := x, buf
	var count [1 << 16]int
	for pass := range 8 {
		shift := uint(pass%4) * 16
		word := func(k key128) uint64 {
			if pass < 4 {
				return k.Lo
			}
			return k.Hi
		}
		clear(count[:])
		for _, v := range src {
			count[word(v)>>shift&0xffff]++
		}
		sum := 0
		for d, k := range count {
			count[d] = sum
			sum += k
		}
		for _, v := range src {
			d := word(v) >> shift & 0xffff
			dst[count[d]] = v
			count[d]++
		}
		src, dst = dst, src
	}
}

// degrees counts out- and in-degrees at the owners of the nodes in the
// even book of homogeneous IDs.
func degrees(c *collective.Comm, g *Graph, s *Stats) error {
	book := graph.EvenBook(g.Meta.TotalNodes(), c.Size())
	lo, hi := book.Range(c.Rank())
	count := func(ids []int64) ([]int64, error) {
		send := buckets(c.Size(), len(ids), func(i int) int { return book.Owner(ids[i]) }, func(i int) int64 { return ids[i] })
		got, err := collective.Exchange(c, send)
		if err != nil {
			return nil, err
		}
		deg := make([]int64, hi-lo)
		for _, part := range got {
			for _, id := range part {
				deg[id-lo]++
			}
		}
		return deg, nil
	}
	out, err := count(g.Edges.Src)
	if err != nil {
		return err
	}
	in, err := count(g.Edges.Dst)
	if err != nil {
		return err
	}
	var isolated int64
	mm := []int64{math.MaxInt64, math.MaxInt64, -1, -1}
	for i := range out {
		if out[i] == 0 && in[i] == 0 {
			isolated++
		}
		mm[0], mm[1] = min(mm[0], out[i]), min(mm[1], in[i])
		mm[2], mm[3] = max(mm[2], out[i]), max(mm[3], in[i])
	}
	mins, err := collective.Allreduce(c, mm[:2], rank.Min)
	if err != nil {
		return err
	}
	maxs, err := collective.Allreduce(c, mm[2:], rank.Max)
	if err != nil {
		return err
	}
	if s.Isolated, err = collective.Sum(c, isolated); err != nil {
		return err
	}
	mean := 0.0
	if nodes := g.Meta.TotalNodes(); nodes > 0 {
		mean = float64(s.Edges) / float64(nodes)
	}
	s.OutDegree = Degree{Min: mins[0], Max: maxs[0], Mean: mean}
	s.InDegree = Degree{Min: mins[1], Max: maxs[1], Mean: mean}
	if g.Meta.TotalNodes() == 0 {
		s.OutDegree, s.InDegree = Degree{}, Degree{}
	}
	return nil
}

// arrayStats describes every node and edge array with a checksum of its
// rows keyed by node or edge ID.
func arrayStats(c *collective.Comm, g *Graph, s *Stats) error {
	if g.Nodes != nil {
		for t, nt := range g.Meta.NodeTypes {
			lo, _ := g.Nodes.Range(t)
			for _, name := range g.Nodes.Names(t) {
				a := g.Nodes.Arrays[t][name]
				var sum Checksum
				sum.addRows(a, lo)
				h, err := sum.Total(c)
				if err != nil {
					return err
				}
				s.Arrays = append(s.Arrays, ArrayStats{Kind: "node", Type: nt, Name: name, DType: a.DType,
					Shape: append([]int64{g.Meta.NumNodes[t]}, a.RowShape()...), Checksum: h})
			}
		}
	}
	keys := g.Edges.DataKeys()
	// Ranks without edges may lack keys: agree on the sorted union.
	n, err := collective.Max(c, int64(len(keys)))
	if err != nil {
		return err
	}
	if int64(len(keys)) != n {
		return errMissingEdgeData
	}
	for _, k := range keys {
		a := g.Edges.Data[k]
		i := strings.LastIndexByte(k, '/')
		et, name := k[:i], k[i+1:]
		t := int16(slices.IndexFunc(g.Meta.EdgeTypes, func(x graph.EdgeType) bool { return x.String() == et }))
		var sum Checksum
		rb := int64(a.RowBytes())
		kind := graph.Mix64(uint64(len(k)) ^ EdgeHash(t, 0, 0))
		for r := range a.Rows() {
			if g.Edges.TypeOf(int(r)) == t {
				sum.Add(rowHash(kind, g.Edges.ID[r], a.Data[r*rb:(r+1)*rb]))
			}
		}
		h, err := sum.Total(c)
		if err != nil {
			return err
		}
		s.Arrays = append(s.Arrays, ArrayStats{Kind: "edge", Type: et, Name: name, DType: a.DType,
			Shape: append([]int64{g.Meta.NumEdges[t]}, a.RowShape()...), Checksum: h})
	}
	return nil
}

var errMissingEdgeData = &InputError{Row: -1, File: "edge data", Msg: "ranks hold different edge arrays"}
