package pack

import "math"

// unreachable marks a gap no multiset of the graphs left fills exactly.
const unreachable = math.MaxInt

// Work bounds of one reach table. Past maxReachWork cells × groups / 64
// (edges-first on a dataset with graphs of 36,000 edges of every size) the
// filling phase runs without lookahead rather than go quadratic; up to
// maxSecondaryWork cells × bins the table also tracks the secondary size
// (see reach).
const (
	maxReachWork     = 1 << 24
	maxSecondaryWork = 1 << 17
)

// reach records which gaps of primary size the graphs left can fill exactly:
// cost[g] is the smallest secondary size of a multiset of the graphs left
// whose primary sizes sum to g, or unreachable. The filling phase avoids
// leaving a gap it cannot fill, which is how it gets packs exactly full when
// small graphs are rare (molhiv has 36 graphs under 8 nodes; a plain greedy
// fill leaves 1,100 packs 1–6 nodes short).
//
// On small problems the table tracks the secondary size too, so that a gap
// is only left when it can be filled without overflowing the other limit; on
// larger ones it only says whether a gap is reachable (cost 0) and costs
// limit/64 × groups × log count instead of limit × bins × log count to
// rebuild.
type reach struct {
	unit      int // gcd of the primary sizes: gaps count in units of it
	limit     int // in units
	secondary bool
	cost      []int
	bits      []uint64 // reachable gaps, without the secondary size
	dirty     bool
	// through is the last group the table used: once every gap is
	// reachable the larger groups are not looked at, so their counts
	// cannot make it stale.
	through int
	// A stale table is rebuilt at once while the rebuilds cost less than
	// freeWork in all; past that only once the graphs placed since the last
	// rebuild earned its price, so the tables cost at most a constant per
	// graph. A stale table only makes the lookahead less sharp: packs stay
	// valid.
	credit, price, spent int
}

// Rebuilding the reach table: free work, in table cells (or words), and the
// credit one graph placed earns past it.
const (
	freeWork       = 1 << 26
	creditPerGraph = 1 << 12
)

// newReach returns a table for gaps up to limit, or nil when it would cost
// more than maxReachWork to build. Gaps count in units of the gcd of the
// primary sizes (2 for edges stored in both directions): a pack can only be
// filled up to the largest multiple of it, and odd gaps would otherwise
// never be reachable.
func newReach(x *binIndex, limit int) *reach {
	unit := 0
	for _, v := range x.vals {
		unit = gcd(unit, v)
	}
	if unit == 0 {
		return nil // every graph has primary size 0
	}
	limit /= unit
	if limit/64*len(x.vals) > maxReachWork {
		return nil
	}
	r := &reach{
		unit:      unit,
		limit:     limit,
		secondary: limit*len(x.p) <= maxSecondaryWork,
		cost:      make([]int, limit+1),
		bits:      make([]uint64, limit/64+1),
		dirty:     true,
	}
	if r.secondary {
		r.price = limit * len(x.p)
	} else {
		r.price = (limit/64 + 1) * len(x.vals)
	}
	return r
}

// update rebuilds the table when the graphs left changed what it can reach.
func (r *reach) update(x *binIndex) {
	if !r.dirty {
		return
	}
	if r.spent+r.price > freeWork {
		if r.credit < r.price {
			return
		}
		r.credit -= r.price
	}
	r.dirty = false
	r.spent += r.price
	x.work += r.price
	for i := range r.cost {
		r.cost[i] = unreachable
	}
	r.cost[0] = 0
	if r.secondary {
		r.updateSecondary(x)
	} else {
		r.updateReachable(x)
	}
}

// updateReachable is a bounded knapsack over the groups, each usable up to
// its count (at most limit/size times, more cannot fit), on a bitset: the
// count split in powers of two, each piece one shift-or.
func (r *reach) updateReachable(x *binIndex) {
	clear(r.bits)
	r.bits[0] = 1
	r.through = len(x.vals) - 1
	for g, size := range x.vals {
		v := size / r.unit
		if v == 0 {
			continue // graphs of size 0 fill no gap
		}
		c := min(x.gleft[g], r.limit/v)
		for m := 1; c > 0; m *= 2 {
			k := min(m, c)
			c -= k
			shiftOr(r.bits, k*v)
		}
		// Larger sizes only reach gaps of at least their size: once all of
		// those are reachable, the table is final.
		if g+1 < len(x.vals) && r.reachableFrom(x.vals[g+1]/r.unit) {
			r.through = g
			break
		}
	}
	for g := range r.cost {
		if r.bits[g>>6]&(1<<(g&63)) != 0 {
			r.cost[g] = 0
		}
	}
}

// reachableFrom reports whether every gap from lo to the limit is
// reachable.
func (r *reach) reachableFrom(lo int) bool {
	if lo > r.limit {
		return true
	}
	for g := lo; g <= r.limit; {
		w := r.bits[g>>6] >> (g & 63)  // bits g.. of g's word
		n := min(64-g&63, r.limit-g+1) // of which in range
		if n < 64 {
			w |= ^uint64(0) << n
		}
		if w != ^uint64(0) {
			return false
		}
		g += n
	}
	return true
}

// shiftOr sets b |= b << k in place; bits past the end fall off.
func shiftOr(b []uint64, k int) {
	q, s := k>>6, uint(k&63)
	for i := len(b) - 1; i >= q; i-- {
		w := b[i-q] << s
		if s != 0 && i-q-1 >= 0 {
			w |= b[i-q-1] >> (64 - s)
		}
		b[i] |= w
	}
}

// updateSecondary is a bounded min-cost knapsack over the bins, the count
// of each split in powers of two.
func (r *reach) updateSecondary(x *binIndex) {
	for i, size := range x.p {
		v := size / r.unit
		if v == 0 {
			continue
		}
		c := min(x.left[i], r.limit/v)
		for m := 1; c > 0; m *= 2 {
			k := min(m, c)
			c -= k
			r.addCopies(k*v, k*x.s[i])
		}
	}
}

func (r *reach) addCopies(p, s int) {
	for g := r.limit; g >= p; g-- {
		if c := r.cost[g-p]; c != unreachable && c+s < r.cost[g] {
			r.cost[g] = c + s
		}
	}
}

// taken marks the table stale when taking k graphs of bin b lowered the
// number of them (or of their group) the table may use.
func (r *reach) taken(x *binIndex, b, k int) {
	if r == nil || k == 0 {
		return
	}
	r.credit += creditPerGraph
	if x.p[b] == 0 {
		return
	}
	most := r.limit / (x.p[b] / r.unit)
	if r.secondary && x.left[b] < most || !r.secondary && x.group[b] <= r.through && x.gleft[x.group[b]] < most {
		r.dirty = true
	}
}

// gapCost returns the table's entry for a gap in primary size: the least
// secondary size that fills it (0 when the table ignores it), or
// unreachable.
func (r *reach) gapCost(gap int) int { return r.cost[gap/r.unit] }

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
