package parmetis

import (
	"fmt"
	"runtime"
	"slices"

	"gnnrun/collective"
	"gnnrun/graph"
)

// Input is one rank's share of the edges of the graph to partition, in
// global vertex IDs 0 <= id < N. Any rank may hold any edges.
type Input struct {
	N        int64
	Src, Dst []int64
	// Weight of each edge; nil means 1. Negative weights are an error;
	// zero-weight edges are dropped.
	Weight []int64
	// Symmetric says the edges already list both directions of every
	// undirected edge (a METIS file); otherwise each edge is added in both
	// directions, so u->v and v->u in the input become one edge of weight 2.
	Symmetric bool
}

// BuildStats counts what Build removed.
type BuildStats struct {
	SelfLoops   int64 // dropped
	Parallel    int64 // arcs merged into an earlier arc with the same ends
	ZeroWeights int64 // dropped
}

// Arcs on their way to the owner of their tail mark, for the in-degree
// count, whether the tail is the head of an input edge by storing the
// weight w as -w-1 (weights are never negative), which keeps an arc at 24
// bytes.
func inArc(from, to, w int64) arc { return arc{from, to, -w - 1} }

// Build's phases each drop arrays of the size of a rank's arcs: it collects
// garbage between them, so the next phase reuses that memory instead of
// growing the heap (pointer-free arrays make these collections cheap).

// Build assembles the distributed graph from every rank's share of the
// input edges: it symmetrises, drops self loops and zero-weight edges,
// merges parallel edges (summing weights) and spreads the vertices over the
// ranks in contiguous ranges of about equal vertices + edges, so a hub does
// not leave its rank with most of the edges. Vertex weights are 1 (one
// constraint); see SetVertexWeights. It is collective.
func Build(c *collective.Comm, in Input) (*DistGraph, BuildStats, error) {
	var st BuildStats
	if err := checkInput(c, in); err != nil {
		return nil, st, err
	}
	n := in.N
	even := graph.EvenBook(n, c.Size())
	local := localArcs{in: in, book: even, rank: c.Rank()}
	arcs, err := shipArcs(c, in, even)
	if err != nil {
		return nil, st, err
	}
	runtime.GC()
	rows := mergeArcs(arcs, local, even.Bounds[c.Rank()], even.Size(c.Rank()), &st)
	arcs, local, in = nil, localArcs{}, Input{} // let the input's arrays go if the caller dropped them
	runtime.GC()
	if err := sumStats(c, &st); err != nil {
		return nil, st, err
	}
	dist, err := balancedBook(c, rows, n)
	if err != nil {
		return nil, st, err
	}
	rows, err = moveRows(c, rows, even, dist)
	if err != nil {
		return nil, st, err
	}
	runtime.GC()
	g, err := rows.toGraph(c, dist)
	return g, st, err
}

func checkInput(c *collective.Comm, in Input) error {
	if len(in.Src) != len(in.Dst) || (in.Weight != nil && len(in.Weight) != len(in.Src)) {
		return fmt.Errorf("parmetis: %d sources, %d destinations, %d weights", len(in.Src), len(in.Dst), len(in.Weight))
	}
	var bad error
	for i := range in.Src {
		if s, d := in.Src[i], in.Dst[i]; s < 0 || s >= in.N || d < 0 || d >= in.N {
			bad = fmt.Errorf("parmetis: edge %d (%d -> %d) of rank %d has an endpoint outside [0,%d)", i, s, d, c.Rank(), in.N)
			break
		}
		if in.Weight != nil && in.Weight[i] < 0 {
			bad = fmt.Errorf("parmetis: edge %d (%d -> %d) of rank %d has negative weight %d", i, in.Src[i], in.Dst[i], c.Rank(), in.Weight[i])
			break
		}
	}
	return bad
}

// shipArcs sends every arc to the owner of its tail under book and returns
// the arcs received, by source; the arcs this rank owns stay in the input
// (see localArcs), and its own slice of the result is empty.
func shipArcs(c *collective.Comm, in Input, book graph.Book) ([][]arc, error) {
	me := c.Rank()
	counts := make([]int, c.Size())
	for i := range in.Src {
		counts[book.Owner(in.Src[i])]++
		if !in.Symmetric {
			counts[book.Owner(in.Dst[i])]++
		}
	}
	counts[me] = 0
	send := make([][]arc, c.Size())
	for j, k := range counts {
		send[j] = make([]arc, 0, k)
	}
	for i := range in.Src {
		w := int64(1)
		if in.Weight != nil {
			w = in.Weight[i]
		}
		s, d := in.Src[i], in.Dst[i]
		if os := book.Owner(s); os != me {
			if in.Symmetric {
				send[os] = append(send[os], inArc(s, d, w))
				continue
			}
			send[os] = append(send[os], arc{s, d, w})
		}
		if od := book.Owner(d); !in.Symmetric && od != me {
			send[od] = append(send[od], inArc(d, s, w))
		}
	}
	return collective.Exchange(c, send)
}

// localArcs are the arcs of a rank's own input edges whose tail the rank
// owns: Build places them from the input straight into its rows instead of
// copying them into 24-byte arcs and sending them to itself. On one rank
// that is every arc, 800 MB fewer bytes touched on R-MAT scale 20 (33M
// arcs); the same partition, and Build's stage on the planted one went
// from 4.2-6.6 s to 2.2-3.8 s at np = 1, 7.4-12.3 s to 3.0-3.4 s at np = 2
// (a loaded 2-core machine, runs taking turns).
type localArcs struct {
	in   Input
	book graph.Book
	rank int
}

// all yields the arcs, encoded as shipArcs sends them (see inArc).
func (l localArcs) all(yield func(arc) bool) {
	in := l.in
	for i := range in.Src {
		w := int64(1)
		if in.Weight != nil {
			w = in.Weight[i]
		}
		s, d := in.Src[i], in.Dst[i]
		if l.book.Owner(s) == l.rank {
			a := inArc(s, d, w)
			if !in.Symmetric {
				a = arc{s, d, w}
			}
			if !yield(a) {
				return
			}
		}
		if !in.Symmetric && l.book.Owner(d) == l.rank && !yield(inArc(d, s, w)) {
			return
		}
	}
}

// decodeArc returns a with its weight decoded and 1 if it came marked as
// the reverse of an input edge (see inArc), else 0.
func decodeArc(a arc) (arc, int64) {
	if a.W < 0 {
		a.W = -a.W - 1
		return a, 1
	}
	return a, 0
}

// mergeArcs merges the arcs of the n vertices from lo, those received and
// the rank's own, into rows, dropping self loops and zero weights and
// summing parallel arcs, and counts the in-degrees the arcs mark.
func mergeArcs(parts [][]arc, local localArcs, lo, n int64, st *BuildStats) rows {
	indeg := make([]int64, n)
	count := func(a arc) arc {
		a, in := decodeArc(a)
		indeg[a.From-lo] += in
		switch {
		case a.From == a.To:
			st.SelfLoops += in
		case a.W == 0:
			st.ZeroWeights += in
		}
		return a
	}
	for _, p := range parts {
		for j, a := range p {
			p[j] = count(a)
		}
	}
	for a := range local.all {
		count(a)
	}
	decoded := func(yield func(arc) bool) {
		for a := range local.all {
			if a, _ := decodeArc(a); !yield(a) {
				return
			}
		}
	}
	r, merged := rowsFromArcs(lo, n, parts, decoded)
	st.Parallel += merged
	r.indeg = indeg
	return r
}

func sumStats(c *collective.Comm, st *BuildStats) error {
	tot, err := collective.Allreduce(c, []int64{st.SelfLoops, st.Parallel, st.ZeroWeights}, 0)
	if err != nil {
		return err
	}
	st.SelfLoops, st.Parallel, st.ZeroWeights = tot[0], tot[1], tot[2]
	return nil
}

// balancedBook splits [0, n) into contiguous ranges of about equal weight,
// a vertex weighing 1 + its degree, with at least one vertex per rank when
// there are enough.
func balancedBook(c *collective.Comm, r rows, n int64) (graph.Book, error) {
	nl := int64(len(r.xadj) - 1)
	mine := nl + r.xadj[nl]
	before, total, err := collective.Offset(c, mine)
	if err != nil {
		return graph.Book{}, err
	}
	p := int64(c.Size())
	// Split point k (1..p-1) is the first vertex whose prefix weight reaches
	// k*total/p; each rank reports the ones that fall in its range.
	var cuts []int64
	acc := before
	k := (before*p + total - 1) / max(total, 1) // first k with k*total/p >= before
	k = max(k, 1)
	for v := int64(0); v < nl && k < p; v++ {
		for k < p && acc >= k*total/p {
			cuts = append(cuts, k, r.lo+v)
			k++
		}
		acc += 1 + r.xadj[v+1] - r.xadj[v]
	}
	all, _, err := collective.Allgatherv(c, cuts)
	if err != nil {
		return graph.Book{}, err
	}
	b := graph.Book{Bounds: make([]int64, p+1)}
	for i := range b.Bounds {
		b.Bounds[i] = n
	}
	b.Bounds[0] = 0
	for i := 0; i+1 < len(all); i += 2 {
		b.Bounds[all[i]] = min(b.Bounds[all[i]], all[i+1])
	}
	for i := int64(1); i < p; i++ {
		lo := b.Bounds[i-1]
		if n >= p {
			lo++ // nobody empty
		}
		b.Bounds[i] = min(max(b.Bounds[i], lo), n-min(n, p)+i)
		b.Bounds[i] = max(b.Bounds[i], b.Bounds[i-1])
	}
	return b, nil
}

// rowHead is a vertex's degree and in-degree on its way to a new owner.
type rowHead struct{ Deg, In int64 }

// moveRows sends the rows from the ranges of from to those of to.
func moveRows(c *collective.Comm, r rows, from, to graph.Book) (rows, error) {
	if slices.Equal(from.Bounds, to.Bounds) {
		return r, nil
	}
	n := c.Size()
	heads := make([][]rowHead, n)
	nbrs := make([][]neighbour, n)
	// Both ranges are contiguous, so each destination's rows are one run of
	// r.nbr: send slices of it, no copies.
	first := int64(0)
	for first < int64(len(r.xadj)-1) {
		o := to.Owner(r.lo + first)
		_, end := to.Range(o)
		last := min(end-r.lo, int64(len(r.xadj)-1))
		for v := first; v < last; v++ {
			heads[o] = append(heads[o], rowHead{r.xadj[v+1] - r.xadj[v], r.indeg[v]})
		}
		nbrs[o] = r.nbr[r.xadj[first]:r.xadj[last]]
		first = last
	}
	gh, err := collective.Exchange(c, heads)
	if err != nil {
		return rows{}, err
	}
	lo, hi := to.Range(c.Rank())
	out := rows{lo: lo, xadj: make([]int64, 1, hi-lo+1), indeg: make([]int64, 0, hi-lo)}
	// The heads say how many neighbours each rank sends: they are received
	// in place, each source's run at its offset in out.nbr. (Received into
	// slices of their own and then copied, they cost a second array's
	// fresh pages, 16 us each on the VM of bench/results that day: the
	// planted R-MAT scale 22 graph on 2 ranks took 25.8 s a rank to build,
	// in place 23.4 s.)
	starts := make([]int64, n+1)
	for s := range n {
		for _, h := range gh[s] {
			out.xadj = append(out.xadj, out.xadj[len(out.xadj)-1]+h.Deg)
			out.indeg = append(out.indeg, h.In)
		}
		starts[s+1] = out.xadj[len(out.xadj)-1]
	}
	out.nbr = make([]neighbour, starts[n])
	into := make([][]neighbour, n)
	for s := range n {
		into[s] = out.nbr[starts[s]:starts[s]:starts[s+1]]
	}
	got, err := collective.ExchangeInto(c, nbrs, into)
	if err != nil {
		return rows{}, err
	}
	// What a rank sends itself is not moved: it is copied into place
	// (into[me] has the room, so append writes into out.nbr).
	me := c.Rank()
	got[me] = append(into[me], got[me]...)
	r.nbr, nbrs = nil, nil
	if int64(len(out.indeg)) != hi-lo {
		return rows{}, fmt.Errorf("parmetis: rank %d received %d rows for its %d vertices", me, len(out.indeg), hi-lo)
	}
	for s := range n {
		// A run of another length than its heads announced arrived in a
		// slice of its own (or left a gap).
		if len(got[s]) != cap(into[s]) {
			return rows{}, fmt.Errorf("parmetis: rank %d received %d neighbours from rank %d, whose rows' degrees add up to %d", me, len(got[s]), s, cap(into[s]))
		}
	}
	return out, nil
}

// toGraph turns the rows of this rank's range into a DistGraph with local
// indices, ghosts and a halo.
func (r rows) toGraph(c *collective.Comm, dist graph.Book) (*DistGraph, error) {
	lo, hi := dist.Range(c.Rank())
	adj := make([]int32, len(r.nbr))
	wgt := make([]int64, len(r.nbr))
	for i, e := range r.nbr {
		wgt[i] = e.W
	}
	ghosts, err := localIndexer(lo, hi, r.nbr, adj)
	if err != nil {
		return nil, err
	}
	g := &DistGraph{Dist: dist, NCon: 1, Xadj: r.xadj, Adj: adj, Adjwgt: wgt, Ghosts: ghosts, InDeg: r.indeg, c: c}
	g.Vwgt = make([]int64, hi-lo)
	for i := range g.Vwgt {
		g.Vwgt[i] = 1
	}
	return g, g.setupHalo()
}

// SetVertexWeights replaces the vertex weights with ncon per owned vertex.
func (g *DistGraph) SetVertexWeights(ncon int, vwgt []int64) error {
	if ncon < 1 || len(vwgt) != g.NLocal()*ncon {
		return fmt.Errorf("parmetis: %d vertex weights for %d vertices and %d constraints", len(vwgt), g.NLocal(), ncon)
	}
	for i, w := range vwgt {
		if w < 0 {
			return fmt.Errorf("parmetis: vertex %d has negative weight %d", g.Lo()+int64(i/ncon), w)
		}
	}
	g.NCon, g.Vwgt = ncon, vwgt
	return nil
}
