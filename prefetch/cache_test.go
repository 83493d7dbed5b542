package prefetch

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// applyPlainly applies an update to a buffer whose rows hold their node's
// ID (a stand-in for its feature row), one row at a time, as a reader of
// the Update's documentation would: grow, move (every source read before
// any destination is written), copy from the hot cache (whose row r holds
// hotNodes[r]) and from the host, then shrink. It fails when the moves
// the update lists first (MovesThrough) are not exactly those that read a
// row another move writes.
func applyPlainly(t *testing.T, buf []int64, up *Update, nodes, hotNodes []int64) []int64 {
	t.Helper()
	for len(buf) < up.Size {
		buf = append(buf, -1)
	}
	written := map[int32]bool{}
	for k := range up.MovesFrom {
		written[up.MovesTo[k]] = true
	}
	moving := make([]int64, len(up.MovesFrom))
	for k, from := range up.MovesFrom {
		if through := k < up.MovesThrough; written[from] != through {
			t.Fatalf("move %d of %d (row %d to %d): reads a row a move writes: %v; the update puts it among the first %d: %v",
				k, len(up.MovesFrom), from, up.MovesTo[k], written[from], up.MovesThrough, through)
		}
		moving[k] = buf[from]
	}
	for k, v := range moving {
		buf[up.MovesTo[k]] = v
	}
	for k, s := range up.HotSlots {
		buf[s] = hotNodes[up.HotRows[k]]
	}
	for k, s := range up.FetchSlots {
		buf[s] = nodes[up.Fetch[k]]
	}
	return buf[:up.Size]
}

// checkUpdate checks an update from prev to nodes, the first pin of them
// pinned, against plain set arithmetic: every input node's row holds it,
// the first pin input nodes are in the rows of their index, the counts are
// the sizes of the intersection and differences, the rows written past
// the pinned ones are exactly the free rows there, taken in ascending
// order, and shared rows there stay where they were.
func checkUpdate(t *testing.T, prev Slots, nodes []int64, pin int, hotSet map[int64]int32, up *Update, buf []int64) {
	t.Helper()
	for i, v := range nodes {
		if s := up.SlotOf[i]; buf[s] != v || up.After[s] != v {
			t.Fatalf("input node %d (%d) has row %d, which holds %d (After says %d)", i, v, s, buf[s], up.After[s])
		}
		if i < pin && up.SlotOf[i] != int32(i) {
			t.Fatalf("pinned input node %d (%d) is in row %d", i, v, up.SlotOf[i])
		}
	}
	inNew := map[int64]int{}
	for i, v := range nodes {
		inNew[v] = i
	}
	oldRow := map[int64]int{}
	for r, v := range prev {
		oldRow[v] = r
	}
	var shared, hot int
	for _, v := range nodes {
		if _, ok := oldRow[v]; ok {
			shared++
		} else if _, ok := hotSet[v]; ok {
			hot++
		}
	}
	if up.Reused != shared || up.Hot != hot || up.Fetched != len(nodes)-shared-hot || up.Size != len(nodes) {
		t.Fatalf("reused %d, hot %d, fetched %d of %d; want %d, %d, %d", up.Reused, up.Hot, up.Fetched, up.Size, shared, hot, len(nodes)-shared-hot)
	}
	// Rows past the pinned ones that keep their node: an unpinned input
	// node held there. The others are free.
	var free []int32
	for r := pin; r < len(nodes); r++ {
		if i, ok := inNew[prevAt(prev, r)]; !ok || i < pin || r >= len(prev) {
			free = append(free, int32(r))
		}
	}
	// The moves past the pinned rows take rows in their nodes' input order
	// (the update lists moves in the order they are applied).
	var byInput [][2]int32 // input index, row
	for k, to := range up.MovesTo {
		i := slices.Index(up.SlotOf, to)
		if to >= int32(pin) {
			byInput = append(byInput, [2]int32{int32(i), to})
		}
		if int(up.MovesFrom[k]) >= len(prev) || prev[up.MovesFrom[k]] != nodes[i] {
			t.Fatalf("move %d from row %d to %d does not carry its node", k, up.MovesFrom[k], to)
		}
	}
	slices.SortFunc(byInput, func(a, b [2]int32) int { return int(a[0] - b[0]) })
	var taken []int32
	for _, m := range byInput {
		taken = append(taken, m[1])
	}
	slotOfNew := map[int64]int32{}
	for _, s := range append(slices.Clone(up.HotSlots), up.FetchSlots...) {
		slotOfNew[up.After[s]] = s
	}
	for _, v := range nodes[pin:] {
		if s, ok := slotOfNew[v]; ok {
			taken = append(taken, s)
		}
	}
	if !slices.Equal(taken, free) {
		t.Fatalf("rows taken past the pinned ones (moves, then new nodes in input order) %v; the free rows there are %v", taken, free)
	}
	for i, v := range nodes {
		if r, ok := oldRow[v]; ok && i >= pin && r >= pin && r < len(nodes) && int(up.SlotOf[i]) != r {
			t.Fatalf("shared node %d moved from row %d to %d", v, r, up.SlotOf[i])
		}
	}
}

// prevAt returns the node of row r of prev, or -1 past its end.
func prevAt(prev Slots, r int) int64 {
	if r < len(prev) {
		return prev[r]
	}
	return -1
}

// randomBatch draws n distinct nodes of [0, span), in random order.
func randomBatch(r *rand.Rand, n, span int) []int64 {
	p := r.Perm(span)[:n]
	out := make([]int64, n)
	for i, v := range p {
		out[i] = int64(v)
	}
	return out
}

// The classification and the in-place update against plain set
// arithmetic and a row-by-row application, over random sequences of
// batches that grow, shrink, repeat and share nothing, with and without
// a hot cache.
func TestClassifyAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ withHot, withPin bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		withHot, withPin := c.withHot, c.withPin
		var hotNodes []int64
		hotSet := map[int64]int32{}
		var hot func(int64) (int32, bool)
		if withHot {
			hotNodes = randomBatch(r, 30, 200)
			for i, v := range hotNodes {
				hotSet[v] = int32(i)
			}
			hot = func(v int64) (int32, bool) { row, ok := hotSet[v]; return row, ok }
		}
		cls := newClassifier()
		var prev Slots
		var buf []int64
		var sawMoves, sawGrow, sawShrink, sawOverlap bool
		for step := range 400 {
			var nodes []int64
			switch step % 5 {
			case 0: // the same nodes, shuffled
				nodes = slices.Clone([]int64(prev))
				r.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
			case 1: // disjoint from the buffer
				nodes = randomBatch(r, r.IntN(60), 200)
				nodes = slices.DeleteFunc(nodes, func(v int64) bool { return slices.Contains(prev, v) })
			default: // overlapping, growing or shrinking
				nodes = randomBatch(r, r.IntN(120), 200)
			}
			pin := 0
			if withPin && len(nodes) > 0 {
				pin = r.IntN(len(nodes) + 1)
			}
			up, err := cls.Classify(prev, nodes, pin, hot)
			if err != nil {
				t.Fatal(err)
			}
			sawMoves = sawMoves || len(up.MovesFrom) > 0
			sawGrow = sawGrow || len(nodes) > len(prev)
			sawShrink = sawShrink || len(nodes) < len(prev)
			buf = applyPlainly(t, buf, up, nodes, hotNodes)
			checkUpdate(t, prev, nodes, pin, hotSet, up, buf)
			sawOverlap = sawOverlap || up.MovesThrough > 0
			if step%5 == 0 && pin == 0 && (up.Fetched != 0 || up.Hot != 0 || len(up.MovesFrom) != 0) {
				t.Fatalf("the same nodes again: %d fetched, %d hot, %d moves", up.Fetched, up.Hot, len(up.MovesFrom))
			}
			if step%5 == 1 && up.Reused != 0 {
				t.Fatalf("disjoint batch: %d reused", up.Reused)
			}
			prev = up.After
		}
		if !sawMoves || !sawGrow || !sawShrink || sawOverlap != withPin {
			t.Errorf("hot %v, pinned %v: the sequence missed a case: moves %v, growth %v, shrinking %v, overlapping moves %v",
				withHot, withPin, sawMoves, sawGrow, sawShrink, sawOverlap)
		}
	}
}

func TestClassifyRefusesRepeatedNodes(t *testing.T) {
	cls := newClassifier()
	for _, c := range []struct {
		prev  Slots
		nodes []int64
	}{{nil, []int64{1, 2, 1}}, {Slots{1, 2}, []int64{2, 3, 2}}, {Slots{1, 2}, []int64{3, 1, 3}}} {
		if _, err := cls.Classify(c.prev, c.nodes, 0, nil); err == nil || !strings.Contains(err.Error(), "appears twice") {
			t.Errorf("prev %v, nodes %v: want a repeated node refused, got %v", c.prev, c.nodes, err)
		}
	}
}

// BenchmarkClassify: one batch of 300k input nodes against a buffer
// sharing half of them.
func BenchmarkClassify(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	prev := Slots(randomBatch(r, 300_000, 2_000_000))
	nodes := append(slices.Clone(prev[:150_000]), randomBatch(r, 150_000, 2_000_000)...)
	nodes = slices.Compact(slices.Sorted(slices.Values(nodes)))
	r.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
	cls := newClassifier()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cls.Classify(prev, nodes, len(nodes)/10, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(nodes))*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mnodes/s")
}
