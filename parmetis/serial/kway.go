package serial

// kway is a k-way partition of a graph with the bookkeeping greedy
// refinement and balancing need: each vertex's edge weight inside its part
// (id) and to other parts (ed), the boundary (ed > 0), part weights
// pw[p*ncon+c], their bounds maxw (ub times the target, rounded down) and
// the floors minw (target/ub) below which refinement does not drain a part.
type kway struct {
	g      *Graph
	k      int
	part   []int32
	id, ed []int64
	boundary
	pw   []int64
	maxw []int64
	minw []int64
	// mult[p*ncon+c] = 1/target weight, to compare loads across parts.
	mult []float64
	cut  int64
}

// newKway sets up the bookkeeping of part on g under the options' targets
// and bounds. It keeps part and modifies it as vertices move.
func newKway(g *Graph, part []int32, o Options) *kway {
	n, nc, k := g.N(), g.NCon, o.Parts
	s := &kway{g: g, k: k, part: part,
		id: make([]int64, n), ed: make([]int64, n),
		boundary: boundary{bndPtr: make([]int32, n), bndInd: make([]int32, 0, n)},
		pw:       PartWeights(g, part, k), maxw: make([]int64, k*nc), minw: make([]int64, k*nc), mult: make([]float64, k*nc)}
	tot := constraintTotals(g)
	for p := range k {
		for i := range nc {
			target := o.TargetWeights[p] * float64(tot[i])
			s.maxw[p*nc+i] = int64(o.Imbalance[i] * target)
			s.minw[p*nc+i] = int64(target / o.Imbalance[i])
			if target > 0 {
				s.mult[p*nc+i] = 1 / target
			}
		}
	}
	for v := range int32(n) {
		s.computeDegrees(v)
		s.cut += s.ed[v]
		s.bndPtr[v] = -1
		if s.ed[v] > 0 {
			s.bndInsert(v)
		}
	}
	s.cut /= 2
	return s
}

func (s *kway) computeDegrees(v int32) {
	g := s.g
	p := s.part[v]
	var id, ed int64
	for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
		if s.part[g.Adjncy[e]] == p {
			id += int64(g.Adjwgt[e])
		} else {
			ed += int64(g.Adjwgt[e])
		}
	}
	s.id[v], s.ed[v] = id, ed
}

func (s *kway) setBoundary(v int32) { s.bndSet(v, s.ed[v] > 0) }

// move puts v into part `to`, where its edge weight is conn, and updates
// weights, degrees, boundary and cut.
func (s *kway) move(v, to int32, conn int64) {
	g, nc := s.g, s.g.NCon
	from := s.part[v]
	for i, w := range g.Vwgt[int(v)*nc : int(v+1)*nc] {
		s.pw[int(from)*nc+i] -= w
		s.pw[int(to)*nc+i] += w
	}
	s.cut -= conn - s.id[v]
	total := s.id[v] + s.ed[v]
	s.part[v] = to
	s.id[v], s.ed[v] = conn, total-conn
	s.setBoundary(v)
	for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
		u, w := g.Adjncy[e], int64(g.Adjwgt[e])
		switch s.part[u] {
		case from:
			s.id[u] -= w
			s.ed[u] += w
		case to:
			s.id[u] += w
			s.ed[u] -= w
		default:
			continue
		}
		s.setBoundary(u)
	}
}

// fits says whether part p can take v without exceeding its bound in a
// constraint v carries.
func (s *kway) fits(v, p int32) bool {
	nc := s.g.NCon
	for i, w := range s.g.Vwgt[int(v)*nc : int(v+1)*nc] {
		if w > 0 && s.pw[int(p)*nc+i]+w > s.maxw[int(p)*nc+i] {
			return false
		}
	}
	return true
}

// keepsMin says whether part p stays at or above its minimum weight in
// every constraint v carries if v leaves it.
func (s *kway) keepsMin(v, p int32) bool {
	nc := s.g.NCon
	for i, w := range s.g.Vwgt[int(v)*nc : int(v+1)*nc] {
		if w > 0 && s.pw[int(p)*nc+i]-w < s.minw[int(p)*nc+i] {
			return false
		}
	}
	return true
}

// over says whether part p exceeds its bound in some constraint that v
// carries weight in, so moving v out helps.
func (s *kway) over(v, p int32) bool {
	nc := s.g.NCon
	for i, w := range s.g.Vwgt[int(v)*nc : int(v+1)*nc] {
		if w > 0 && s.pw[int(p)*nc+i] > s.maxw[int(p)*nc+i] {
			return true
		}
	}
	return false
}

// load returns part p's largest weight relative to its target, with v's
// weight added (sign +1) or taken away (-1), or as is (0).
func (s *kway) load(p, v int32, sign int64) float64 {
	nc := s.g.NCon
	m := 0.0
	for i := range nc {
		w := s.pw[int(p)*nc+i] + sign*s.g.Vwgt[int(v)*nc+i]
		m = max(m, float64(w)*s.mult[int(p)*nc+i])
	}
	return m
}

// overweight returns the number of (part, constraint) pairs above bound.
func (s *kway) overweight() int {
	n := 0
	for i, w := range s.pw {
		if w > s.maxw[i] {
			n++
		}
	}
	return n
}

// connectivity sums v's edge weights per neighbouring part into conn and
// lists those parts in touched, which it returns; the caller clears conn.
//
// Every neighbour's part is written at the end of touched, and the end
// moves past it only where the part is new (a neighbour's first edge to
// it: edge weights are positive), so no branch waits on that test.
func (s *kway) connectivity(v int32, conn []int64, touched []int32) []int32 {
	g := s.g
	if cap(touched) < s.k+1 {
		touched = make([]int32, s.k+1)
	}
	touched = touched[:s.k+1]
	lo, hi := g.Xadj[v], g.Xadj[v+1]
	wgt := g.Adjwgt[lo:hi]
	n := 0
	for i, u := range g.Adjncy[lo:hi] {
		p := s.part[u]
		touched[n] = p
		if conn[p] == 0 {
			n++
		}
		conn[p] += int64(wgt[i])
	}
	return touched[:n]
}
