package serial

import (
	"math/rand/v2"
	"time"
)

// refine2WaySingle is 2-way FM for one constraint (METIS' FM_2WayCutRefine): it
// always moves from the side that is heavier relative to its target, so the
// sides stay near their targets, and it accepts a new best cut only while
// the deviation from the target stays within the starting deviation plus an
// average vertex weight. Coarse levels thus keep the slack their heavy
// vertices need, and the balance tightens as the graph gets finer.
func (c *ctrl) refine2WaySingle(b *bisection, t *biTarget, passes int, rng *rand.Rand) {
	defer c.since(PhaseRefine2Way, time.Now())
	g := b.g
	n := g.N()
	tot := b.pw[0] + b.pw[1]
	tp0 := int64(t.frac0 * float64(tot))
	tp := [2]int64{tp0, tot - tp0}
	qs := c.ws.gainQueuesFor(2, n)
	moved := grow32(&c.ws.moved, n)
	fill32(moved, -1)
	swaps := grow32(&c.ws.swaps, n)
	limit := min(max(n/100, 15), 100)
	avgvwgt := min(tot/20, 2*tot/int64(max(n, 1)))
	origdiff := abs64(tp[0] - b.pw[0])
	for range passes {
		qs[0].clear()
		qs[1].clear()
		order := shuffled(b.bndInd, &c.ws.perm, rng)
		for _, v := range order {
			qs[b.side[v]].push(v, b.ed[v]-b.id[v])
		}
		initcut, mincut := b.cut, b.cut
		mindiff := abs64(tp[0] - b.pw[0])
		best, nswaps := -1, 0
		for ; nswaps < n; nswaps++ {
			from := 1
			if tp[0]-b.pw[0] < tp[1]-b.pw[1] {
				from = 0
			}
			if qs[from].len() == 0 {
				break
			}
			v := qs[from].pop()
			newcut := b.cut - (b.ed[v] - b.id[v])
			b.moveWeight(v, from)
			diff := abs64(tp[0] - b.pw[0])
			if (newcut < mincut && diff <= origdiff+avgvwgt) || (newcut == mincut && diff < mindiff) {
				mincut, mindiff, best = newcut, diff, nswaps
			} else if nswaps-best > limit {
				b.moveWeight(v, 1-from)
				break
			}
			moved[v] = int32(nswaps)
			swaps[nswaps] = v
			b.flipQueued(v, qs, nil, moved)
		}
		b.rollback(swaps[:nswaps], best, moved)
		if best <= 0 || mincut == initcut {
			break
		}
	}
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
