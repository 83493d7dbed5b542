package parmetis

import (
	"math"
	"slices"

	"gnnrun/collective"
	"gnnrun/graph"
)

// Matching states of a vertex during one level's matching.
const (
	stTaken   int8 = 0 // in a group led by another vertex, or a closed pair
	stFree    int8 = 1
	stPending int8 = 2 // asked a remote neighbour this pass
	stCenter  int8 = 3 // leads a star that may take more members
)

// matchReq asks the owner of Target to match it with From.
type matchReq struct{ Target, From int64 }

// matcher holds one level's matching state: the state of every owned and
// ghost vertex, the partner of every owned vertex (-1: none), and the
// vertex weights of owned and ghost vertices.
type matcher struct {
	g       *DistGraph
	ctl     *ctrl
	level   int
	state   []int8
	partner []int64 // pairs: the other vertex; stars: the center (-1: none)
	vw      []int64 // NCon weights of owned and ghost vertices
	joined  []int64 // stars: the center an owned vertex joined (-1: none)
	cw      []int64 // NCon weights of the star each owned center leads
	deg     []int64 // degree of owned and ghost vertices (stars only)
}

// match computes a heavy-edge matching of g by request/grant passes,
// augmented by two-hop matching when too many vertices stay unmatched, and
// returns for every owned vertex the global ID of its coarse vertex's
// leader (the smaller ID of a pair). It is collective.
func (g *DistGraph) match(ctl *ctrl, level int) ([]int64, error) {
	nl, ng := g.NLocal(), len(g.Ghosts)
	m := newMatcher(g, ctl, level)
	m.vw = make([]int64, (nl+ng)*g.NCon)
	copy(m.vw, g.Vwgt)
	if err := haloUpdateRows(g, m.vw, g.NCon); err != nil {
		return nil, err
	}
	order := g.matchOrder(ctl.seed, uint64(level))
	starsOnly := ctl.coarsening == CoarsenStars
	for pass := range matchPasses {
		if starsOnly {
			break
		}
		if err := m.pass(order, pass); err != nil {
			return nil, err
		}
	}
	free := int64(0)
	for v := range nl {
		if m.partner[v] < 0 {
			free++
		}
	}
	freeAll, err := collective.Sum(g.c, free)
	if err != nil {
		return nil, err
	}
	if starsOnly || freeAll*unmatchedForStars > g.N() {
		// Heavy-edge matching stalls around hubs: their many neighbours all
		// want the hub. Let the unmatched vertices join stars instead.
		if err := m.stars(order); err != nil {
			return nil, err
		}
	}
	return m.leaders(), nil
}

// newMatcher returns a matcher of g's level with every owned vertex and
// ghost free and unpaired.
func newMatcher(g *DistGraph, ctl *ctrl, level int) *matcher {
	nl := g.NLocal()
	m := &matcher{g: g, ctl: ctl, level: level, state: make([]int8, nl+len(g.Ghosts)), partner: make([]int64, nl)}
	for i := range m.state {
		m.state[i] = stFree
	}
	for i := range m.partner {
		m.partner[i] = -1
	}
	return m
}

// leaders returns the global ID of each owned vertex's group leader: the
// smaller end of a pair, the center of a star, itself when alone; vertices
// left alone without neighbours are grouped with each other.
func (m *matcher) leaders() []int64 {
	g := m.g
	nl, lo := g.NLocal(), g.Lo()
	leader := make([]int64, nl)
	group, groupW, members := int64(-1), make([]int64, g.NCon), 0
	for v := range nl {
		self := lo + int64(v)
		leader[v] = self
		switch {
		case m.state[v] == stCenter:
		case m.joined != nil && m.joined[v] >= 0:
			leader[v] = m.joined[v]
		case m.partner[v] >= 0:
			leader[v] = min(self, m.partner[v])
		case g.Xadj[v+1] == g.Xadj[v]:
			// Isolated: pairing costs no cut. Larger groups would, though:
			// isolated vertices are the fine-grained filler that lets the
			// partitioner balance parts for free.
			if group < 0 || !m.addFits(groupW, int32(v)) || members == 2 {
				group = self
				clear(groupW)
				members = 0
			}
			members++
			leader[v] = group
			for k := range g.NCon {
				groupW[k] += m.vw[v*g.NCon+k]
			}
		}
	}
	return leader
}

// addFits reports whether vertex v's weights fit on top of w.
func (m *matcher) addFits(w []int64, v int32) bool {
	nc := m.g.NCon
	for k := range nc {
		if w[k]+m.vw[int(v)*nc+k] > m.ctl.maxVwgt[k] {
			return false
		}
	}
	return true
}

// visitOrder returns the owned vertices in a pseudo-random order keyed by
// seed, salt and global ID.
func (g *DistGraph) visitOrder(seed, salt uint64) []int32 {
	nl := g.NLocal()
	keys := make([]uint64, nl)
	order := make([]int32, nl)
	lo := uint64(g.Lo())
	for v := range nl {
		keys[v] = graph.Mix(seed, salt, lo+uint64(v))
		order[v] = int32(v)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if keys[a] < keys[b] {
			return -1
		}
		if keys[a] > keys[b] {
			return 1
		}
		return 0
	})
	return order
}

// matchOrder returns the owned vertices by increasing degree (capped at
// four times the average), pseudo-random within a degree: low-degree
// vertices choose first, before hubs take their only neighbours (METIS'
// sorted heavy-edge matching).
func (g *DistGraph) matchOrder(seed, salt uint64) []int32 {
	order := g.visitOrder(seed, salt)
	nl := g.NLocal()
	limit := int(4*int64(len(g.Adj))/int64(max(nl, 1))) + 1
	start := make([]int32, limit+2)
	deg := func(v int32) int { return min(int(g.Xadj[v+1]-g.Xadj[v]), limit) }
	for v := range int32(nl) {
		start[deg(v)+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	out := make([]int32, nl)
	for _, v := range order {
		out[start[deg(v)]] = v
		start[deg(v)]++
	}
	return out
}

// fits reports whether vertices a and b (local or ghost indices) may share
// a coarse vertex without exceeding the weight limit of any constraint.
func (m *matcher) fits(a, b int32) bool {
	nc := m.g.NCon
	for k := range nc {
		if m.vw[int(a)*nc+k]+m.vw[int(b)*nc+k] > m.ctl.maxVwgt[k] {
			return false
		}
	}
	return true
}

// heaviestFree returns v's free neighbour over the heaviest edge that fits,
// or -1.
func (m *matcher) heaviestFree(v int32) int32 {
	g := m.g
	best, bestW := int32(-1), int64(-1)
	for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
		u := g.Adj[e]
		if g.Adjwgt[e] > bestW && m.state[u] == stFree && m.fits(v, u) {
			best, bestW = u, g.Adjwgt[e]
		}
	}
	return best
}

// pass runs one request/grant pass: free vertices match a free local
// neighbour at once, or ask a remote one if the pass's direction allows it
// (requests of a pass all go from lower to higher IDs, or all the other
// way, so no two requests cross); owners grant first come, in a rotating
// order of the asking ranks.
func (m *matcher) pass(order []int32, pass int) error {
	g := m.g
	nl, n, lo := int32(g.NLocal()), g.c.Size(), g.Lo()
	if err := haloUpdate(g, m.state); err != nil {
		return err
	}
	up := (m.level+pass)%2 == 0
	reqs := make([][]matchReq, n)
	for _, v := range order {
		if m.state[v] != stFree {
			continue
		}
		u := m.heaviestFree(v)
		switch {
		case u < 0:
		case u < nl:
			m.state[v], m.state[u] = stTaken, stTaken
			m.partner[v], m.partner[u] = lo+int64(u), lo+int64(v)
		default:
			gv, gu := lo+int64(v), g.GID(u)
			if (gv < gu) == up {
				o := g.Dist.Owner(gu)
				reqs[o] = append(reqs[o], matchReq{gu, gv})
				m.state[v] = stPending
			}
		}
	}
	rot := int(graph.Mix(m.ctl.seed, uint64(m.level), uint64(pass)) % uint64(n))
	return grantRound(g.c, reqs, rot, func(r matchReq) bool {
		u := r.Target - lo
		if m.state[u] != stFree {
			return false
		}
		m.state[u], m.partner[u] = stTaken, r.From
		return true
	}, func(r matchReq, granted bool) {
		v := r.From - lo
		if granted {
			m.state[v], m.partner[v] = stTaken, r.Target
		} else {
			m.state[v] = stFree
		}
	})
}

// stars lets every unmatched vertex join the group of its heaviest
// neighbour that is unmatched or already leads a star, in request/grant
// passes: the owner of the center admits members while the star stays
// under the weight limit. Leaves of a hub gather around it this way, where
// pairs would shrink the graph by a few vertices per level.
func (m *matcher) stars(order []int32) error {
	m.startStars()
	if err := haloUpdate(m.g, m.deg); err != nil {
		return err
	}
	for pass := range matchPasses {
		if err := m.joinPass(order, pass); err != nil {
			return err
		}
	}
	return nil
}

// startStars readies m for stars: no vertex joined, no star's weight,
// the owned vertices' degrees (the ghosts' are for the caller to fetch).
func (m *matcher) startStars() {
	g := m.g
	nl := g.NLocal()
	m.joined = make([]int64, nl)
	for i := range m.joined {
		m.joined[i] = -1
	}
	m.cw = make([]int64, nl*g.NCon)
	m.deg = make([]int64, nl+len(g.Ghosts))
	for v := range nl {
		m.deg[v] = g.Xadj[v+1] - g.Xadj[v]
	}
}

// localStars returns the leaders of stars built as match builds them but
// over the arcs between owned vertices alone, without requests to other
// ranks: what this rank's share of the graph shows of its communities.
// The ghosts are marked taken, so no star reaches them.
func (g *DistGraph) localStars(ctl *ctrl) []int64 {
	nl := g.NLocal()
	m := newMatcher(g, ctl, 1)
	for i := range g.Ghosts {
		m.state[nl+i] = stTaken
	}
	m.vw = g.Vwgt
	m.startStars()
	for _, v := range g.matchOrder(ctl.seed, 1) {
		if m.state[v] != stFree {
			continue
		}
		if u := m.bestStar(v); u >= 0 {
			m.admit(u, v)
			m.state[v], m.joined[v] = stTaken, g.Lo()+int64(u)
		}
	}
	return m.leaders()
}

// joinReq asks the owner of Center to admit From to its star.
type joinReq struct{ Center, From int64 }

// starFits reports whether u's star (u itself when it leads none yet) can
// take member v; both are local or ghost indices, u owned.
func (m *matcher) starFits(u, v int32) bool {
	nc := m.g.NCon
	w := m.vw[int(u)*nc : int(u+1)*nc]
	if m.state[u] == stCenter {
		w = m.cw[int(u)*nc : int(u+1)*nc]
	}
	for k := range nc {
		if w[k]+m.vw[int(v)*nc+k] > m.ctl.maxVwgt[k] {
			return false
		}
	}
	return true
}

// admit makes owned vertex u lead a star (if it does not yet) and adds v.
func (m *matcher) admit(u, v int32) {
	nc := m.g.NCon
	if m.state[u] != stCenter {
		m.state[u] = stCenter
		copy(m.cw[int(u)*nc:int(u+1)*nc], m.vw[int(u)*nc:int(u+1)*nc])
	}
	for k := range nc {
		m.cw[int(u)*nc+k] += m.vw[int(v)*nc+k]
	}
}

// bestStar returns v's neighbour over the heaviest edge that is free or a
// center, or -1.
func (m *matcher) bestStar(v int32) int32 {
	g := m.g
	nl := int32(g.NLocal())
	best, bestW, bestKey := int32(-1), int64(-1), uint64(0)
	for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
		// The weight first: it is read in order, the rest at random.
		w := g.Adjwgt[e]
		if w < bestW {
			continue
		}
		u := g.Adj[e]
		if st := m.state[u]; st != stFree && st != stCenter {
			continue
		}
		// Ties go to the neighbour of highest degree: members gather
		// around hubs, and the hubs' many edges vanish inside the stars.
		// Whether u's star has room is asked last, of a neighbour that
		// would be the best so far: on a level of equal weights most are
		// not, and the room costs two reads at random.
		key := uint64(math.MaxInt64 - m.deg[u])
		if w == bestW && key >= bestKey {
			continue
		}
		if u < nl && !m.starFits(u, v) {
			continue
		}
		best, bestW, bestKey = u, w, key
	}
	return best
}

// joinPass is one request/grant pass of star building. Requests to a free
// vertex follow the pass's direction, as in matching, so two free vertices
// never ask each other; centers take requests from any side.
func (m *matcher) joinPass(order []int32, pass int) error {
	g := m.g
	nl, n, lo := int32(g.NLocal()), g.c.Size(), g.Lo()
	if err := haloUpdate(g, m.state); err != nil {
		return err
	}
	up := (m.level+pass)%2 == 1
	reqs := make([][]joinReq, n)
	for _, v := range order {
		if m.state[v] != stFree {
			continue
		}
		u := m.bestStar(v)
		switch {
		case u < 0:
		case u < nl:
			m.admit(u, v)
			m.state[v], m.joined[v] = stTaken, lo+int64(u)
		default:
			gv, gu := lo+int64(v), g.GID(u)
			if m.state[u] == stFree && (gv < gu) != up {
				continue
			}
			o := g.Dist.Owner(gu)
			reqs[o] = append(reqs[o], joinReq{gu, gv})
			m.state[v] = stPending
		}
	}
	rot := int(graph.Mix(m.ctl.seed, uint64(m.level), uint64(pass), 0x57a) % uint64(n))
	return grantRound(g.c, reqs, rot, func(r joinReq) bool {
		u := int32(r.Center - lo)
		from := nl + int32(searchInt64(g.Ghosts, r.From))
		if st := m.state[u]; (st != stFree && st != stCenter) || !m.starFits(u, from) {
			return false
		}
		m.admit(u, from)
		return true
	}, func(r joinReq, granted bool) {
		v := r.From - lo
		if granted {
			m.state[v], m.joined[v] = stTaken, r.Center
		} else {
			m.state[v] = stFree
		}
	})
}

// grantRound sends every request to its target's owner (reqs[j] go to rank
// j), lets the owner grant or refuse them with grant, taking the asking
// ranks in a rotating order from rot so no rank is always served first,
// and reports each answer to the asker with answer, in the asker's order.
// It is collective.
func grantRound[R any](c *collective.Comm, reqs [][]R, rot int, grant func(R) bool, answer func(R, bool)) error {
	n := c.Size()
	got, err := collective.Exchange(c, reqs)
	if err != nil {
		return err
	}
	replies := make([][]bool, n)
	for k := range n {
		s := (k + rot) % n
		replies[s] = make([]bool, len(got[s]))
		for i, r := range got[s] {
			replies[s][i] = grant(r)
		}
	}
	back, err := collective.Exchange(c, replies)
	if err != nil {
		return err
	}
	for j, rs := range reqs {
		for i, r := range rs {
			answer(r, back[j][i])
		}
	}
	return nil
}
