package pack

import (
	"cmp"
	"slices"
)

// The improvement phase takes the emptiest pack apart and tries to place its
// graphs in the other packs: directly where there is room, or by swapping
// them for smaller graphs of a pack (one or two for one or two) when that
// makes the pack fuller. The swapped-out graphs join the free ones, which so
// get smaller and easier to place. When every free graph is placed, a pack
// is gone. Swaps only ever make packs other than the free one fuller, so the
// phase ends; the free graphs always fit one pack, so it never adds one.

// maxFailures is how many packs in a row may resist before the phase stops.
const maxFailures = 8

// ipack is one pack of the improvement phase.
type ipack struct {
	graphs       []Tuple
	nodes, edges int
}

func (p *ipack) add(t Tuple) {
	p.graphs = append(p.graphs, t)
	p.nodes += t.Nodes
	p.edges += t.Edges
}

func (p *ipack) remove(i int) Tuple {
	t := p.graphs[i]
	p.graphs[i] = p.graphs[len(p.graphs)-1]
	p.graphs = p.graphs[:len(p.graphs)-1]
	p.nodes -= t.Nodes
	p.edges -= t.Edges
	return t
}

// improver holds the packs and the price of nodes and edges that says which
// pack is fuller.
type improver struct {
	lim    Limits
	wn, we float64
	packs  []*ipack
	budget int // candidate swaps left to look at

	outs, ins []subset // scratch of exchange
}

func newImprover(h Histogram, l Limits, groups []Group, budget int) *improver {
	dn, de := float64(h.nodes)/float64(l.Nodes), float64(h.edges)/float64(l.Edges)
	im := &improver{lim: l, wn: dn / float64(l.Nodes), we: de / float64(l.Edges), budget: budget}
	for _, g := range groups {
		for range g.Count {
			p := &ipack{}
			for _, t := range g.Graphs {
				p.add(t)
			}
			im.packs = append(im.packs, p)
		}
	}
	return im
}

func (im *improver) weight(n, e int) float64 { return im.wn*float64(n) + im.we*float64(e) }

func (im *improver) fill(p *ipack) float64 { return im.weight(p.nodes, p.edges) }

// run empties packs until maxFailures in a row resist or the budget is
// spent, then returns the packs as groups.
func (im *improver) run(lowerBound int) []Group {
	tried := make(map[*ipack]bool)
	for fails := 0; len(im.packs) > lowerBound && im.budget > 0 && fails < maxFailures; {
		if im.emptyOne(tried) {
			fails = 0
		} else {
			fails++
		}
	}
	groups := make([]Group, len(im.packs))
	for i, p := range im.packs {
		groups[i] = Group{Graphs: p.graphs, Count: 1}
	}
	return canonical(groups)
}

// emptyOne takes the emptiest pack apart and reports whether all its graphs
// found a place; if not, what is left of it goes back as a pack.
func (im *improver) emptyOne(tried map[*ipack]bool) bool {
	var e *ipack
	for _, p := range im.packs {
		if !tried[p] && (e == nil || im.fill(p) < im.fill(e)) {
			e = p
		}
	}
	if e == nil {
		return false
	}
	tried[e] = true
	im.packs = slices.DeleteFunc(im.packs, func(p *ipack) bool { return p == e })
	free := e
	for moved := true; moved && len(free.graphs) > 0 && im.budget > 0; {
		moved = false
		for _, p := range im.packs {
			if im.budget <= 0 {
				break
			}
			if im.exchange(p, free) {
				moved = true
				if len(free.graphs) == 0 {
					break
				}
			}
		}
	}
	if len(free.graphs) == 0 {
		return true
	}
	im.packs = append(im.packs, free)
	return false
}

// exchange makes the best move between pack p and the free graphs: it
// replaces up to two graphs of p by up to two free graphs heavier in total,
// keeping p within the limits and the free graphs within one pack, and
// reports whether it moved anything.
func (im *improver) exchange(p, free *ipack) bool {
	im.outs = im.subsets(im.outs[:0], p)
	im.ins = im.subsets(im.ins[:0], free)[1:]
	slices.SortFunc(im.ins, func(a, b subset) int { return cmp.Compare(b.w, a.w) })
	out, in, ok := im.bestSwap(p, free)
	if !ok {
		return false
	}
	var outT, inT []Tuple
	for _, i := range out.desc() {
		outT = append(outT, p.remove(i))
	}
	for _, i := range in.desc() {
		inT = append(inT, free.remove(i))
	}
	for _, t := range inT {
		p.add(t)
	}
	for _, t := range outT {
		free.add(t)
	}
	return true
}

// subset is up to two graphs of a pack, by index, with their total size and
// weight.
type subset struct {
	idx  [2]int
	k    int
	n, e int
	w    float64
}

// desc returns the indices, the larger first, so removing them in order
// keeps the others valid.
func (s subset) desc() []int {
	if s.k == 2 && s.idx[0] < s.idx[1] {
		return []int{s.idx[1], s.idx[0]}
	}
	return s.idx[:s.k]
}

// subsets sorts the graphs of p and appends to dst the subsets of up to two
// of them, the empty one first, each multiset of sizes once.
func (im *improver) subsets(dst []subset, p *ipack) []subset {
	g := p.graphs
	slices.SortFunc(g, compareTuples)
	add := func(k, i, j int) {
		s := subset{idx: [2]int{i, j}, k: k}
		for _, x := range s.idx[:k] {
			s.n += g[x].Nodes
			s.e += g[x].Edges
		}
		s.w = im.weight(s.n, s.e)
		dst = append(dst, s)
	}
	add(0, 0, 0)
	for i := range g {
		if i > 0 && g[i] == g[i-1] {
			continue
		}
		add(1, i, 0)
		for j := i + 1; j < len(g); j++ {
			if j == i+1 || g[j] != g[j-1] {
				add(2, i, j)
			}
		}
	}
	im.budget -= len(g)
	return dst
}

// bestSwap returns the graphs of p to take out and the free graphs to put
// in that make p heaviest, and false when no swap makes p heavier. The free
// subsets are sorted by decreasing weight, so for each subset of p the first
// that fits is its best.
func (im *improver) bestSwap(p, free *ipack) (out, in subset, ok bool) {
	gain := 1e-12
	for _, a := range im.outs {
		roomN, roomE := im.lim.Nodes-p.nodes+a.n, im.lim.Edges-p.edges+a.e
		roomG := im.lim.Graphs - len(p.graphs) + a.k
		for _, b := range im.ins {
			im.budget--
			if b.w-a.w <= gain {
				break
			}
			if b.n > roomN || b.e > roomE || b.k > roomG {
				continue
			}
			if free.nodes-b.n+a.n > im.lim.Nodes || free.edges-b.e+a.e > im.lim.Edges || len(free.graphs)-b.k+a.k > im.lim.Graphs {
				continue
			}
			gain, out, in, ok = b.w-a.w, a, b, true
			break
		}
	}
	return out, in, ok
}
