package pack

import (
	"cmp"
	"fmt"
	"slices"
)

// Group is Count identical packs, each holding one graph of every size in
// Graphs (a size repeats when a pack holds several graphs of that size).
type Group struct {
	Count  int     `json:"count"`
	Graphs []Tuple `json:"graphs"`
}

// load returns the nodes and edges of one pack of the group.
func (g Group) load() (nodes, edges int) {
	for _, t := range g.Graphs {
		nodes += t.Nodes
		edges += t.Edges
	}
	return nodes, edges
}

// Packing is a packing strategy: how many packs hold which sizes of graphs.
// Concrete graphs are given to packs by Assign.
type Packing struct {
	Limits    Limits
	Algo      Algo
	Heuristic Heuristic // of the reference packer; meaningless for Ours
	Order     Order     // of the reference packer
	Effort    Effort    // of our packer
	Groups    []Group
}

// Packs returns the number of packs.
func (p Packing) Packs() int {
	n := 0
	for _, g := range p.Groups {
		n += g.Count
	}
	return n
}

// Validate checks that p packs the graphs of h: every graph of every bin
// exactly once, no pack over a limit or the cap on graphs, no empty pack.
func (p Packing) Validate(h Histogram) error {
	used := make(map[Tuple]int, len(h.bins))
	for i, g := range p.Groups {
		if err := p.checkGroup(g); err != nil {
			return fmt.Errorf("pack: group %d of %d packs: %w", i, g.Count, err)
		}
		for _, t := range g.Graphs {
			used[t] += g.Count
		}
	}
	for _, b := range h.bins {
		if used[b.Tuple] != b.Count {
			return fmt.Errorf("pack: bin %v has %d graphs but %d were packed", b.Tuple, b.Count, used[b.Tuple])
		}
		delete(used, b.Tuple)
	}
	for t, n := range used {
		return fmt.Errorf("pack: %d graphs of size %v were packed but the dataset has none", n, t)
	}
	return nil
}

func (p Packing) checkGroup(g Group) error {
	n, e := g.load()
	switch {
	case g.Count < 1:
		return fmt.Errorf("count %d is not positive", g.Count)
	case len(g.Graphs) == 0:
		return fmt.Errorf("empty pack")
	case len(g.Graphs) > p.Limits.Graphs:
		return fmt.Errorf("%d graphs exceed the cap of %d", len(g.Graphs), p.Limits.Graphs)
	case n > p.Limits.Nodes || e > p.Limits.Edges:
		return fmt.Errorf("%d nodes and %d edges exceed the limits %v", n, e, p.Limits)
	}
	return nil
}

// canonical sorts the graphs of every group by decreasing size, merges
// groups of the same graphs, and sorts groups by decreasing load, so equal
// packings print the same.
func canonical(groups []Group) []Group {
	for _, g := range groups {
		slices.SortFunc(g.Graphs, func(a, b Tuple) int { return compareTuples(b, a) })
	}
	slices.SortFunc(groups, compareGroups)
	out := groups[:0]
	for _, g := range groups {
		if n := len(out); n > 0 && slices.Equal(out[n-1].Graphs, g.Graphs) {
			out[n-1].Count += g.Count
			continue
		}
		out = append(out, g)
	}
	return slices.Clip(out)
}

func compareTuples(a, b Tuple) int {
	return cmp.Or(cmp.Compare(a.Nodes, b.Nodes), cmp.Compare(a.Edges, b.Edges))
}

// compareGroups orders groups by decreasing load (nodes, then edges), then
// by their graphs.
func compareGroups(a, b Group) int {
	an, ae := a.load()
	bn, be := b.load()
	if c := cmp.Or(cmp.Compare(bn, an), cmp.Compare(be, ae)); c != 0 {
		return c
	}
	return slices.CompareFunc(a.Graphs, b.Graphs, compareTuples)
}
