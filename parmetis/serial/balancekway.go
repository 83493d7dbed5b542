package serial

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// balanceKway moves vertices out of parts above their bound until every part
// is within bound in every constraint, allowing moves that raise the cut:
// candidates are the vertices of overweight parts that carry weight in an
// overweight constraint, best gain first; each goes to the neighbouring part
// with the best gain that has room, or, when no neighbour has room, to the
// lightest part that has. Every move lowers the total excess weight, so it
// ends; it returns an error when vertices too heavy for any part's slack
// leave some part over its bound.
func (c *ctrl) balanceKway(s *kway) error {
	if s.overweight() == 0 {
		return nil
	}
	defer c.since(PhaseBalanceKway, time.Now())
	n := s.g.N()
	conn := grow64(&c.ws.conn, s.k)
	clear(conn)
	requeued := grow32(&c.ws.mark, n)
	for round := 0; round < 4 && s.overweight() > 0; round++ {
		light := s.partsByLoad()
		q := &c.ws.gainQueuesFor(1, n)[0]
		fill32(requeued, 0)
		for v := range int32(n) {
			if s.over(v, s.part[v]) {
				if to, gain, _ := c.balanceDest(s, v, conn, light); to >= 0 {
					q.push(v, gain)
				}
			}
		}
		for q.len() > 0 && s.overweight() > 0 {
			key := q.topKey()
			v := q.pop()
			if !s.over(v, s.part[v]) {
				continue
			}
			to, gain, cv := c.balanceDest(s, v, conn, light)
			if to < 0 {
				continue
			}
			if gain < key && requeued[v] == 0 {
				requeued[v] = 1
				q.push(v, gain)
				continue
			}
			s.move(v, to, cv)
		}
	}
	return s.balanceError()
}

// balanceDest returns where v should go to leave its overweight part: the
// neighbouring part with room and the best gain, else the lightest part with
// room (gain -id). It returns -1 when no part has room, and v's edge weight
// into the destination.
func (c *ctrl) balanceDest(s *kway, v int32, conn []int64, light []int32) (to int32, gain, cv int64) {
	from := s.part[v]
	touched := s.connectivity(v, conn, c.ws.touched)
	c.ws.touched = touched
	to = -1
	for _, p := range touched {
		if p != from && s.fits(v, p) && (to < 0 || conn[p] > cv) {
			to, cv = p, conn[p]
		}
	}
	for _, p := range touched {
		conn[p] = 0
	}
	if to >= 0 {
		return to, cv - s.id[v], cv
	}
	for _, p := range light {
		if p != from && s.fits(v, p) {
			return p, -s.id[v], 0
		}
	}
	return -1, 0, 0
}

// partsByLoad returns the parts sorted by their largest relative load,
// lightest first.
func (s *kway) partsByLoad() []int32 {
	ps := make([]int32, s.k)
	loads := make([]float64, s.k)
	for p := range ps {
		ps[p] = int32(p)
		for i := range s.g.NCon {
			loads[p] = max(loads[p], float64(s.pw[p*s.g.NCon+i])*s.mult[p*s.g.NCon+i])
		}
	}
	slices.SortStableFunc(ps, func(a, b int32) int { return cmp.Compare(loads[a], loads[b]) })
	return ps
}

// balanceError describes the first part above its bound, or returns nil.
func (s *kway) balanceError() error {
	nc := s.g.NCon
	for i, w := range s.pw {
		if w > s.maxw[i] {
			return fmt.Errorf("%w: part %d weighs %d in constraint %d, above its bound %d", ErrUnbalanced, i/nc, w, i%nc, s.maxw[i])
		}
	}
	return nil
}
