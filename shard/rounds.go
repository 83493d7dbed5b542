package shard

import (
	"unsafe"

	"gnnrun/collective"
)

// Rounds: a shuffle sends this rank's items of one wave, grouped by
// destination, in consecutive chunks of at most budget bytes (at least one
// item each), so no round puts more than the budget in flight from a rank.
// Every rank runs as many rounds as the rank with the most chunks; the
// others send nothing in the extra ones.

// chunkBounds cuts items 0..n-1, item k weighing size(k) bytes, into
// consecutive chunks of at most budget bytes and returns their bounds and
// the bytes of the heaviest chunk.
func chunkBounds(n int, size func(k int) int, budget int) (bounds []int, heaviest int) {
	bounds = []int{0}
	acc := 0
	for k := range n {
		s := size(k)
		if acc > 0 && acc+s > budget {
			bounds = append(bounds, k)
			heaviest = max(heaviest, acc)
			acc = 0
		}
		acc += s
	}
	if n > 0 {
		bounds = append(bounds, n)
	}
	return bounds, max(heaviest, acc)
}

// uniformSize returns the bytes of every item if items of kind t weigh
// base + perKind[t] and all kinds weigh the same, else 0: planWave then
// need not look up each item's kind.
func uniformSize(base int, perKind []int) (fixed int) {
	for i, v := range perKind {
		if i > 0 && v != perKind[0] {
			return 0
		}
	}
	if len(perKind) == 0 {
		return base
	}
	return base + perKind[0]
}

// agreeRounds returns the number of rounds every rank runs.
func agreeRounds(c *collective.Comm, bounds []int) (int, error) {
	r, err := collective.Max(c, int64(len(bounds)-1))
	return int(r), err
}

// chunk returns chunk r of items, or an empty one past the last.
func chunk[T any](items []T, bounds []int, r int) []T {
	lo, hi := chunkRange(bounds, r)
	return items[lo:hi]
}

// chunkRange returns the items [lo, hi) of chunk r, empty past the last.
func chunkRange(bounds []int, r int) (lo, hi int) {
	if r+1 >= len(bounds) {
		return 0, 0
	}
	return bounds[r], bounds[r+1]
}

// groupOrder returns the items 0..n-1 ordered by group (stable), with
// group(k) in [0, groups), and the bounds of each group in that order.
func groupOrder(n, groups int, group func(k int) int) (order []int, bounds []int) {
	bounds = make([]int, groups+1)
	for k := range n {
		bounds[group(k)+1]++
	}
	for g := range groups {
		bounds[g+1] += bounds[g]
	}
	next := append([]int(nil), bounds[:groups]...)
	order = make([]int, n)
	for k := range n {
		g := group(k)
		order[next[g]] = k
		next[g]++
	}
	return order, bounds
}

// exchangeRounds sends item i to rank dest(i), in rounds of at most budget
// bytes from each rank, and calls recv with what arrives in each round
// (grouped by source). It is collective.
func exchangeRounds[T any](c *collective.Comm, items []T, dest func(i int) int, budget int, recv func(got []T) error) error {
	order, _ := groupOrder(len(items), c.Size(), dest)
	var zero T
	size := max(1, int(unsafe.Sizeof(zero)))
	per := max(1, budget/size)
	bounds := []int{0}
	for k := per; k < len(order); k += per {
		bounds = append(bounds, k)
	}
	if len(order) > 0 {
		bounds = append(bounds, len(order))
	}
	rounds, err := agreeRounds(c, bounds)
	if err != nil {
		return err
	}
	counts := make([]int, c.Size())
	var send, got []T
	for r := range rounds {
		ch := chunk(order, bounds, r)
		clear(counts)
		send = send[:0]
		for _, i := range ch {
			counts[dest(i)]++
			send = append(send, items[i])
		}
		if got, _, err = collective.AlltoallvInto(c, send, counts, got); err != nil {
			return err
		}
		if err := recv(got); err != nil {
			return err
		}
	}
	return nil
}

// requestRounds looks keys up at their owners with collective.Request, at
// most budget/8 keys from each rank per round, and returns the answers in
// key order. It is collective.
func requestRounds[V any](c *collective.Comm, keys []int64, owner func(int64) int, answer func(src int, keys []int64) ([]V, error), budget int) ([]V, error) {
	per := max(1, budget/8)
	rounds, err := collective.Max(c, int64((len(keys)+per-1)/per))
	if err != nil {
		return nil, err
	}
	out := make([]V, 0, len(keys))
	for r := range int(rounds) {
		lo, hi := min(r*per, len(keys)), min((r+1)*per, len(keys))
		got, err := collective.Request(c, keys[lo:hi], owner, answer)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// waveGroups returns the bounds of groups first..last-1 of bounds (the
// items of a wave, grouped by destination), counted from the wave's first.
func waveGroups(bounds []int, first, last int) []int {
	gb := make([]int, last-first+1)
	for i := range gb {
		gb[i] = bounds[first+i] - bounds[first]
	}
	return gb
}

// wavePlan is how this rank sends the items of a wave: in staggered order,
// the other ranks' groups in rounds (chunk bounds in sending order, and
// the number of rounds every rank runs), then its own group in chunks
// (bounds in sending order, from where the rounds end) that it keeps
// without an all-to-all, so no round waits for a rank keeping its own.
// heaviest is the most bytes of any of its chunks: packing buffers
// reserved that big once never grow.
type wavePlan struct {
	st       staggered
	bounds   []int
	rounds   int
	own      []int
	heaviest int
}

// planWave plans a wave whose group g holds positions [gb[g], gb[g+1]),
// the item at position p weighing size(p) bytes, in chunks of at most
// budget bytes. With fixed > 0 every item weighs fixed bytes and size is
// not called. It is collective.
func planWave(c *collective.Comm, gb []int, size func(p int) int, fixed, budget int) (wavePlan, error) {
	st := newStaggered(gb, c.Rank())
	remote := st.remote(c.Rank())
	w := wavePlan{st: st}
	sent := func(i int) int { return size(st.at(i)) }
	kept := func(i int) int { return size(st.at(remote + i)) }
	if fixed > 0 {
		sent = func(int) int { return fixed }
		kept = sent
	}
	var h1, h2 int
	w.bounds, h1 = chunkBounds(remote, sent, budget)
	w.own, h2 = chunkBounds(gb[len(gb)-1]-remote, kept, budget)
	w.heaviest = max(h1, h2)
	for i := range w.own {
		w.own[i] += remote
	}
	var err error
	w.rounds, err = agreeRounds(c, w.bounds)
	return w, err
}

// longest returns the most items of any of the plan's chunks.
func (w wavePlan) longest() int {
	n := 0
	for _, b := range [][]int{w.bounds, w.own} {
		for i := 1; i < len(b); i++ {
			n = max(n, b[i]-b[i-1])
		}
	}
	return n
}

// staggered orders the items of a wave for sending: grouped by
// destination (group g holds positions [gb[g], gb[g+1]) of the wave's
// items), with this rank's groups rotated so it sends to destination
// start first, then start+1, and so on around. If every rank sent its
// groups in the same order, every rank would send to rank 0 in the first
// rounds, which would then receive and write P times its share while the
// others wait for it in the all-to-all; rotated by rank, each round spreads
// the rows over all receivers.
type staggered struct {
	gb    []int // group bounds in positions
	start int   // first group sent
	vb    []int // group bounds in sending order: group (start+j) mod G is [vb[j], vb[j+1])
}

// newStaggered rotates the groups gb for rank me: it sends to the next
// rank's group first, its own last.
func newStaggered(gb []int, me int) staggered {
	g := len(gb) - 1
	s := staggered{gb: gb, vb: make([]int, g+1)}
	if g > 0 {
		s.start = (me + 1) % g
	}
	for j := range g {
		k := (s.start + j) % g
		s.vb[j+1] = s.vb[j] + gb[k+1] - gb[k]
	}
	return s
}

// remote returns how many items come before rank me's own group (group
// me, sent last), or all of them when me has no group.
func (s staggered) remote(me int) int {
	g := len(s.gb) - 1
	if me < g {
		return s.vb[g-1]
	}
	return s.vb[g]
}

// at returns the position of the i-th item in sending order.
func (s staggered) at(i int) int {
	g := len(s.gb) - 1
	j := 0
	for i >= s.vb[j+1] {
		j++
	}
	return s.gb[(s.start+j)%g] + i - s.vb[j]
}

// segment returns the positions [a, b) of group k's items among the items
// [lo, hi) in sending order (one round's chunk).
func (s staggered) segment(k, lo, hi int) (int, int) {
	g := len(s.gb) - 1
	j := (k - s.start + g) % g
	vlo, vhi := max(lo, s.vb[j]), min(hi, s.vb[j+1])
	if vlo >= vhi {
		return 0, 0
	}
	base := s.gb[k] - s.vb[j]
	return base + vlo, base + vhi
}
