package pack

// Efficiency is how much of the packed space holds real graphs. All
// efficiencies are percentages.
type Efficiency struct {
	Packs int
	// Nodes and Edges are the true efficiencies: the dataset's nodes over
	// packs × the node limit, and the same for edges.
	Nodes, Edges float64
	// Harmonic is the harmonic mean of Nodes and Edges, the single figure the
	// paper's limit sweep ranks shapes by.
	Harmonic float64
	// PublishedNodes and PublishedEdges are the metric of the published code:
	// when no pack reaches both limits, it measures against the largest pack
	// actually built instead of the requested limits, which flatters packings
	// whose packs all fall short.
	PublishedNodes, PublishedEdges float64
}

// Efficiency returns the efficiency of p.
func (p Packing) Efficiency() Efficiency {
	var nodes, edges, packs, maxN, maxE int
	for _, g := range p.Groups {
		n, e := g.load()
		nodes += g.Count * n
		edges += g.Count * e
		packs += g.Count
		maxN, maxE = max(maxN, n), max(maxE, e)
	}
	ef := Efficiency{Packs: packs}
	if packs == 0 {
		return ef
	}
	ef.Nodes = percent(nodes, packs*p.Limits.Nodes)
	ef.Edges = percent(edges, packs*p.Limits.Edges)
	ef.Harmonic = harmonic(ef.Nodes, ef.Edges)
	ln, le := p.Limits.Nodes, p.Limits.Edges
	if maxN != ln || maxE != le {
		ln, le = maxN, maxE
	}
	ef.PublishedNodes = publishedPercent(nodes, packs, ln)
	ef.PublishedEdges = publishedPercent(edges, packs, le)
	return ef
}

func percent(used, space int) float64 {
	if space == 0 {
		return 0
	}
	return 100 * float64(used) / float64(space)
}

// publishedPercent is 100 - empty/total × 100, computed the way the published
// code does so the printed digits agree.
func publishedPercent(used, packs, limit int) float64 {
	total := packs * limit
	if total == 0 {
		return 0
	}
	empty := total - used
	return 100 - float64(empty)/float64(total)*100
}

func harmonic(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return 2 / (1/a + 1/b)
}
