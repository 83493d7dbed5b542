package pack

// weights is the price of a unit of primary and of secondary size in the
// filling phase.
type weights struct{ p, s float64 }

// strategy is one way to run the filling phase.
type strategy struct {
	axis      axis
	w         weights
	lookahead bool // keep gaps the graphs left can fill (see reach)
}

// strategies returns the filling strategies our packer tries, the most
// promising first: both axes, the one whose lower bound decides the number
// of packs first; prices in proportion to each dimension's lower bound
// (N/limit²) or nearly lexicographic; with and without lookahead. The
// lookahead gets packs exactly full when graphs are small next to a pack;
// when one or two fill a pack (ogbg-ppa) it is better without.
func strategies(h Histogram, l Limits) []strategy {
	axes := []axis{nodesFirst, edgesFirst}
	if h.edges*l.Nodes > h.nodes*l.Edges { // E/le > N/ln
		axes[0], axes[1] = edgesFirst, nodesFirst
	}
	var out []strategy
	for _, a := range axes {
		lp, ls := a.split(Tuple{Nodes: l.Nodes, Edges: l.Edges})
		tp, ts := a.split(Tuple{Nodes: h.nodes, Edges: h.edges})
		fp, fs := float64(lp), float64(ls)
		dp, ds := float64(tp)/fp, float64(ts)/fs // lower bounds
		dual, lex := weights{dp / fp, ds / fs}, weights{1 / fp, 1e-3 / fs}
		out = append(out,
			strategy{a, dual, true}, strategy{a, dual, false},
			strategy{a, lex, true}, strategy{a, lex, false},
		)
	}
	return out
}

// fill packs h one pack at a time: a pack takes the largest graph (by the
// weights) that fits in the space it has left and leaves a primary gap the
// graphs left can still fill exactly, until none fits or it holds the cap
// of graphs. A pack the counts left allow to repeat is repeated at once, so
// the work grows with the number of distinct packs, not of graphs. fill
// gives up and returns nil once its work passes budget; it returns the work
// it did.
func fill(h Histogram, l Limits, st strategy, budget int) ([]Group, int) {
	x := newBinIndex(h, st.axis, st.w)
	lp, ls := st.axis.split(Tuple{Nodes: l.Nodes, Edges: l.Edges})
	var r *reach
	if st.lookahead {
		r = newReach(x, lp)
	}
	var groups []Group
	mult := make(map[int]int)
	for remaining := h.graphs; remaining > 0; {
		if x.work > budget {
			return nil, x.work
		}
		if r != nil {
			r.update(x)
		}
		items := fillOne(x, r, lp, ls, l.Graphs)
		if len(items) == 0 {
			panic("pack: internal error: graphs left but none fits an empty pack")
		}
		clear(mult)
		for _, b := range items {
			mult[b]++
		}
		repeat := 1 << 62
		for b, m := range mult {
			repeat = min(repeat, x.left[b]/m)
		}
		for b, m := range mult {
			x.take(b, repeat*m)
			r.taken(x, b, repeat*m)
		}
		g := Group{Graphs: make([]Tuple, len(items)), Count: repeat + 1}
		for i, b := range items {
			g.Graphs[i] = x.tuple[b]
		}
		groups = append(groups, g)
		remaining -= g.Count * len(items)
	}
	return groups, x.work
}

// fillOne builds one pack greedily and returns its bins, one entry per graph.
func fillOne(x *binIndex, r *reach, lp, ls, cap int) []int {
	var items []int
	p, s := lp, ls
	for len(items) < cap {
		b := -1
		if r != nil {
			b = x.best(p, s, r)
		}
		if b < 0 {
			b = x.best(p, s, nil)
		}
		if b < 0 {
			break
		}
		x.take(b, 1)
		r.taken(x, b, 1)
		items = append(items, b)
		p -= x.p[b]
		s -= x.s[b]
	}
	return items
}
