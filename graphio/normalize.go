package graphio

import (
	"fmt"
	"slices"
	"sort"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/rank"
	"gnnrun/report"
)

// normalize applies the options in a fixed order: compact the node IDs,
// drop self loops, add reverse edges, drop duplicates; then, when edges
// were dropped or added, renumber the type-wise edge IDs densely in the
// order of the old ones. Every step checks its counts across ranks.
func normalize(c *collective.Comm, g *Graph, o *options) error {
	if o.compact {
		if err := compactIDs(c, g); err != nil {
			return err
		}
	}
	oldSpace := append([]int64(nil), g.Meta.NumEdges...)
	changed := false
	if o.dropSelfLoops {
		n, err := dropSelfLoops(c, g)
		if err != nil {
			return err
		}
		changed = true
		g.Steps = append(g.Steps, Step{Name: "drop-self-loops", Count: n, Text: "dropped " + report.Count(n) + " self loops"})
	}
	if o.undirected {
		n, err := addReverse(c, g, oldSpace)
		if err != nil {
			return err
		}
		for t := range oldSpace {
			oldSpace[t] *= 2
		}
		changed = true
		g.Steps = append(g.Steps, Step{Name: "undirected", Count: n, Text: "added " + report.Count(n) + " reverse edges"})
	}
	if o.dedup {
		n, err := dedup(c, g)
		if err != nil {
			return err
		}
		changed = true
		g.Steps = append(g.Steps, Step{Name: "dedup", Count: n, Text: "dropped " + report.Count(n) + " duplicate edges"})
	}
	if changed {
		return renumberEdges(c, g, oldSpace)
	}
	return nil
}

// keepEdges keeps the edges for which keep is true, in order.
func keepEdges(e *graph.Edges, keep func(i int) bool) *graph.Edges {
	idx := make([]int, 0, e.Len())
	for i := range e.Len() {
		if keep(i) {
			idx = append(idx, i)
		}
	}
	if len(idx) == e.Len() {
		return e
	}
	return e.Select(idx)
}

// countTypes returns the global number of edges of each type.
func countTypes(c *collective.Comm, e *graph.Edges, types int) ([]int64, error) {
	n := make([]int64, types)
	for i := range e.Len() {
		n[e.TypeOf(i)]++
	}
	return collective.Allreduce(c, n, rank.Sum)
}

// setEdgeCounts recounts the edges per type into the meta data, checking
// that the total is what the caller expects.
func setEdgeCounts(c *collective.Comm, g *Graph, want int64, step string) error {
	n, err := countTypes(c, g.Edges, len(g.Meta.EdgeTypes))
	if err != nil {
		return err
	}
	var total int64
	for _, x := range n {
		total += x
	}
	if total != want {
		return fmt.Errorf("graphio: %s: %d edges after the step, expected %d", step, total, want)
	}
	g.Meta.NumEdges = n
	return nil
}

func dropSelfLoops(c *collective.Comm, g *Graph) (int64, error) {
	before := g.Meta.TotalEdges()
	e := g.Edges
	g.Edges = keepEdges(e, func(i int) bool { return e.Src[i] != e.Dst[i] })
	dropped, err := collective.Sum(c, int64(e.Len()-g.Edges.Len()))
	if err != nil {
		return 0, err
	}
	return dropped, setEdgeCounts(c, g, before-dropped, "drop self loops")
}

// addReverse appends the reverse of every edge that is not a self loop.
func addReverse(c *collective.Comm, g *Graph, oldSpace []int64) (int64, error) {
	for _, et := range g.Meta.EdgeTypes {
		if et.Src != et.Dst {
			return 0, fmt.Errorf("graphio: cannot make edge type %s undirected: its reverse joins %q to %q, a different edge type", et, et.Dst, et.Src)
		}
	}
	before := g.Meta.TotalEdges()
	e := g.Edges
	idx := make([]int, 0, e.Len())
	for i := range e.Len() {
		if e.Src[i] != e.Dst[i] {
			idx = append(idx, i)
		}
	}
	rev := e.Select(idx)
	rev.Src, rev.Dst = rev.Dst, rev.Src
	if rev.ID == nil {
		rev.ID = make([]int64, rev.Len())
	}
	for i := range rev.ID {
		rev.ID[i] += oldSpace[rev.TypeOf(i)]
	}
	e.Append(rev)
	added, err := collective.Sum(c, int64(rev.Len()))
	if err != nil {
		return 0, err
	}
	return added, setEdgeCounts(c, g, before+added, "undirected")
}

// edgeKeyHash mixes an edge's type and endpoints: it picks the rank that
// sees all copies of the edge.
func edgeKeyHash(t int16, u, v int64) uint64 {
	return graph.Mix64(uint64(u)*0x9e3779b97f4a7c15 ^ graph.Mix64(uint64(v)+uint64(t)<<56))
}

// dedup keeps one edge of each (type, source, destination): the one with
// the smallest type-wise ID, whichever rank held it.
func dedup(c *collective.Comm, g *Graph) (int64, error) {
	before := g.Meta.TotalEdges()
	e := g.Edges
	dest := make([]int32, e.Len())
	for i := range dest {
		dest[i] = int32(edgeKeyHash(e.TypeOf(i), e.Src[i], e.Dst[i]) % uint64(c.Size()))
	}
	s, err := ShuffleEdges(c, e, dest)
	if err != nil {
		return 0, err
	}
	g.Edges = nil
	idx := make([]int, s.Len())
	for i := range idx {
		idx[i] = i
	}
	id := func(i int) int64 {
		if s.ID == nil {
			return 0
		}
		return s.ID[i]
	}
	sort.Slice(idx, func(a, b int) bool {
		i, j := idx[a], idx[b]
		switch {
		case s.TypeOf(i) != s.TypeOf(j):
			return s.TypeOf(i) < s.TypeOf(j)
		case s.Src[i] != s.Src[j]:
			return s.Src[i] < s.Src[j]
		case s.Dst[i] != s.Dst[j]:
			return s.Dst[i] < s.Dst[j]
		}
		return id(i) < id(j)
	})
	keep := idx[:0]
	for k, i := range idx {
		if k > 0 {
			j := idx[k-1]
			if s.TypeOf(i) == s.TypeOf(j) && s.Src[i] == s.Src[j] && s.Dst[i] == s.Dst[j] {
				continue
			}
		}
		keep = append(keep, i)
	}
	// Keep the survivors in the order they arrived, which follows the
	// input order within each sender.
	slices.Sort(keep)
	g.Edges = s.Select(keep)
	dropped, err := collective.Sum(c, int64(s.Len()-len(keep)))
	if err != nil {
		return 0, err
	}
	return dropped, setEdgeCounts(c, g, before-dropped, "dedup")
}

// typedID is an edge's type and type-wise ID.
type typedID struct {
	T  int64
	ID int64
}

// renumberEdges gives the edges of each type the IDs 0..m-1 in the order
// of their current IDs, which lie in [0, oldSpace[t]): each (type, ID) goes
// to the rank owning that part of the old ID space, which ranks what it
// received; ranks of earlier owners come first.
func renumberEdges(c *collective.Comm, g *Graph, oldSpace []int64) error {
	e := g.Edges
	if e.ID == nil {
		return nil
	}
	types := len(oldSpace)
	books := make([]graph.Book, types)
	for t, n := range oldSpace {
		books[t] = graph.EvenBook(n, c.Size())
	}
	p := c.Size()
	counts := make([]int, p)
	dest := make([]int32, e.Len())
	for i := range dest {
		t := e.TypeOf(i)
		if e.ID[i] < 0 || e.ID[i] >= oldSpace[t] {
			return fmt.Errorf("graphio: edge ID %d of type %d outside [0,%d)", e.ID[i], t, oldSpace[t])
		}
		dest[i] = int32(books[t].Owner(e.ID[i]))
		counts[dest[i]]++
	}
	next := make([]int, p)
	for j := 1; j < p; j++ {
		next[j] = next[j-1] + counts[j-1]
	}
	pos := make([]int, len(dest))
	send := make([]typedID, len(dest))
	for i, d := range dest {
		pos[i] = next[d]
		send[next[d]] = typedID{int64(e.TypeOf(i)), e.ID[i]}
		next[d]++
	}
	got, gotCounts, err := collective.Alltoallv(c, send, counts)
	if err != nil {
		return err
	}
	// Rank what arrived, per type.
	order := make([]int, len(got))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool {
		x, y := got[order[a]], got[order[b]]
		if x.T != y.T {
			return x.T < y.T
		}
		return x.ID < y.ID
	})
	mine := make([]int64, types)
	for _, x := range got {
		mine[x.T]++
	}
	allCounts, _, err := collective.Allgatherv(c, mine)
	if err != nil {
		return err
	}
	base := make([]int64, types) // survivors of each type on lower ranks
	for r := 0; r < c.Rank(); r++ {
		for t := range types {
			base[t] += allCounts[r*types+t]
		}
	}
	answer := make([]int64, len(got))
	seen := make([]int64, types)
	for _, i := range order {
		t := got[i].T
		answer[i] = base[t] + seen[t]
		seen[t]++
	}
	back, _, err := collective.Alltoallv(c, answer, gotCounts)
	if err != nil {
		return err
	}
	for i := range e.ID {
		e.ID[i] = back[pos[i]]
	}
	// Conservation: the new IDs of each type are exactly 0..m-1.
	maxID := make([]int64, types)
	for t := range maxID {
		maxID[t] = -1
	}
	for i := range e.ID {
		maxID[e.TypeOf(i)] = max(maxID[e.TypeOf(i)], e.ID[i])
	}
	maxID, err = collective.Allreduce(c, maxID, rank.Max)
	if err != nil {
		return err
	}
	for t := range types {
		if maxID[t]+1 != g.Meta.NumEdges[t] {
			return fmt.Errorf("graphio: renumbering edges of type %d gave IDs up to %d for %d edges", t, maxID[t], g.Meta.NumEdges[t])
		}
	}
	return nil
}

// compactIDs renumbers the node IDs of a one-type graph to 0..N-1 in the
// order of the original IDs and keeps the originals as node array
// "orig_id". The distinct IDs are sorted across ranks by regular sampling,
// so no rank holds more than its share.
func compactIDs(c *collective.Comm, g *Graph) error {
	if len(g.Meta.NodeTypes) != 1 {
		return fmt.Errorf("graphio: compaction needs a graph with one node type")
	}
	e := g.Edges
	uniq := make([]int64, 0, 2*e.Len())
	uniq = append(append(uniq, e.Src...), e.Dst...)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	// Splitters from up to 64 samples per rank.
	var samples []int64
	if len(uniq) > 0 {
		k := min(64, len(uniq))
		for i := range k {
			samples = append(samples, uniq[i*len(uniq)/k])
		}
	}
	all, _, err := collective.Allgatherv(c, samples)
	if err != nil {
		return err
	}
	slices.Sort(all)
	split := make([]int64, 0, c.Size()-1)
	for r := 1; r < c.Size() && len(all) > 0; r++ {
		split = append(split, all[r*len(all)/c.Size()])
	}
	owner := func(x int64) int { return sort.Search(len(split), func(i int) bool { return split[i] > x }) }
	send := make([][]int64, c.Size())
	for _, x := range uniq {
		o := owner(x)
		send[o] = append(send[o], x)
	}
	got, err := collective.Exchange(c, send)
	if err != nil {
		return err
	}
	var mine []int64
	for _, s := range got {
		mine = append(mine, s...)
	}
	slices.Sort(mine)
	mine = slices.Compact(mine)
	base, total, err := collective.Offset(c, int64(len(mine)))
	if err != nil {
		return err
	}
	newIDs, err := collective.Request(c, uniq, owner, func(_ int, keys []int64) ([]int64, error) {
		out := make([]int64, len(keys))
		for i, k := range keys {
			j, ok := slices.BinarySearch(mine, k)
			if !ok {
				return nil, fmt.Errorf("graphio: compaction lost node ID %d", k)
			}
			out[i] = base + int64(j)
		}
		return out, nil
	})
	if err != nil {
		return err
	}
	lookup := func(x int64) int64 {
		j, _ := slices.BinarySearch(uniq, x)
		return newIDs[j]
	}
	lo, hi := int64(-1), int64(-1)
	if len(mine) > 0 {
		lo, hi = mine[0], mine[len(mine)-1]
	}
	lo, err = collective.Min(c, replaceNeg(lo))
	if err != nil {
		return err
	}
	hi, err = collective.Max(c, hi)
	if err != nil {
		return err
	}
	for i := range e.Src {
		e.Src[i] = lookup(e.Src[i])
		e.Dst[i] = lookup(e.Dst[i])
	}
	old := g.Meta.NumNodes[0]
	g.Meta.NumNodes[0] = total
	book := graph.EvenBook(total, c.Size())
	orig, err := redistributeRows(c, graph.TensorOf(mine, 0), base, book)
	if err != nil {
		return err
	}
	if g.Nodes == nil {
		g.Nodes = graph.NewNodeData(&g.Meta, c.Rank(), c.Size())
	}
	g.Nodes.Books[0] = book
	g.Nodes.Arrays[0]["orig_id"] = orig
	text := fmt.Sprintf("compacted %s distinct node IDs (%d..%d, %s before) to 0..%d", report.Count(total), lo, hi, report.Count(old), total-1)
	g.Steps = append(g.Steps, Step{Name: "compact", Count: total, Text: text})
	return nil
}

func replaceNeg(x int64) int64 {
	if x < 0 {
		return 1<<63 - 1
	}
	return x
}
