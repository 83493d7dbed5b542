package serial

import (
	"math/rand/v2"
	"time"
)

// refineKway runs greedy k-way refinement passes (METIS' Greedy_KWayOptimize
// for the cut). A pass visits the boundary vertices whose external degree is
// at least their internal one, highest ed-id first, and requeues the
// neighbours of every moved vertex, so a move can open the way for the next
// within the same pass. A vertex moves to the neighbouring part it is most
// connected to among those with room, if the cut drops; at zero gain it moves
// when that evens the load, and on every other visit anyway, which lets
// boundaries drift across plateaus of equal cut (meshes have many) — the cut
// never increases. A move may not take the source part below target/ub.
// Passes stop when one leaves the cut unchanged.
func (c *ctrl) refineKway(s *kway, rng *rand.Rand, passes int) {
	defer c.since(PhaseRefineKway, time.Now())
	n := s.g.N()
	conn := grow64(&c.ws.conn, s.k)
	clear(conn)
	status := grow8(&c.ws.status, n)
	q := &c.ws.gainQueuesFor(1, n)[0]
	for range passes {
		oldcut := s.cut
		clear(status)
		for _, v := range shuffled(s.bndInd, &c.ws.perm, rng) {
			if s.ed[v] >= s.id[v] {
				q.push(v, s.ed[v]-s.id[v])
				status[v] = queued
			}
		}
		moves := 0
		for iter := 0; q.len() > 0; iter++ {
			v := q.pop()
			status[v] = extracted
			if !c.greedyMove(s, v, conn, iter%2 == 0) {
				continue
			}
			moves++
			requeueKway(s, v, q, status)
		}
		if moves == 0 || (oldcut-s.cut)*kwayMinGain < oldcut {
			break
		}
	}
}

// Queue status of a vertex during a refinement pass.
const (
	notQueued int8 = iota
	queued
	extracted
)

// requeueKway updates the queue for the neighbours of the moved vertex v:
// new keys, newly promising vertices in, hopeless ones out.
func requeueKway(s *kway, v int32, q *gainQueue, status []int8) {
	g := s.g
	for _, u := range g.Adjncy[g.Xadj[v]:g.Xadj[v+1]] {
		promising := s.ed[u] > 0 && s.ed[u] >= s.id[u]
		switch {
		case status[u] == queued && promising:
			q.update(u, s.ed[u]-s.id[u])
		case status[u] == queued:
			q.remove(u)
			status[u] = notQueued
		case status[u] == notQueued && promising:
			q.push(u, s.ed[u]-s.id[u])
			status[u] = queued
		}
	}
}

// greedyMove moves v to the neighbouring part it is most connected to among
// those with room (ties to the lighter part) if that lowers the cut, or
// keeps it and evens the load or zero is true, and says whether it moved.
func (c *ctrl) greedyMove(s *kway, v int32, conn []int64, zero bool) bool {
	from := s.part[v]
	if s.id[v] > 0 && !s.keepsMin(v, from) {
		return false
	}
	touched := s.connectivity(v, conn, c.ws.touched)
	c.ws.touched = touched
	best := int32(-1)
	for _, p := range touched {
		if p == from || !s.fits(v, p) {
			continue
		}
		if best < 0 || conn[p] > conn[best] || (conn[p] == conn[best] && s.load(p, v, 0) < s.load(best, v, 0)) {
			best = p
		}
	}
	var cv int64
	if best >= 0 {
		cv = conn[best]
	}
	for _, p := range touched {
		conn[p] = 0
	}
	if best < 0 {
		return false
	}
	gain := cv - s.id[v]
	if gain < 0 || (gain == 0 && !zero && !s.over(v, from) && s.load(best, v, 1) >= s.load(from, v, 0)) {
		return false
	}
	s.move(v, best, cv)
	return true
}

// shuffled returns a copy of xs in random order, in the buffer buf.
func shuffled(xs []int32, buf *[]int32, rng *rand.Rand) []int32 {
	order := append(grow32(buf, len(xs))[:0], xs...)
	for i := len(order) - 1; i > 0; i-- {
		j := rng.IntN(i + 1)
		order[i], order[j] = order[j], order[i]
	}
	return order
}
