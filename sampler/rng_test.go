package sampler

import (
	"iter"
	"math/rand/v2"
	"testing"
)

// The known answers of Random123's kat_vectors for philox4x32 10
// (counter, key, output).
func TestPhiloxKnownAnswers(t *testing.T) {
	cases := []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff}, [4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0}, [4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	}
	for _, c := range cases {
		if got := philox(c.ctr, c.key); got != c.want {
			t.Errorf("philox(%08x, %08x) = %08x, want %08x", c.ctr, c.key, got, c.want)
		}
	}
}

// Draws differ across every field that keys them, and repeat exactly for
// the same fields.
func TestStreamKeying(t *testing.T) {
	k := BatchKey(7, 1, 42)
	draw := func(key Key, p Purpose, lane uint32, subject int64, i uint32) uint64 {
		s := NewStream(key, p, lane, subject)
		return s.Uint64(i)
	}
	base := draw(k, ForNeighbors, Lane(0, 0), 1000, 3)
	if again := draw(BatchKey(7, 1, 42), ForNeighbors, Lane(0, 0), 1000, 3); again != base {
		t.Fatalf("same fields gave %x and %x", base, again)
	}
	others := map[string]uint64{
		"seed":    draw(BatchKey(8, 1, 42), ForNeighbors, Lane(0, 0), 1000, 3),
		"epoch":   draw(BatchKey(7, 2, 42), ForNeighbors, Lane(0, 0), 1000, 3),
		"batch":   draw(BatchKey(7, 1, 43), ForNeighbors, Lane(0, 0), 1000, 3),
		"purpose": draw(k, ForNegatives, Lane(0, 0), 1000, 3),
		"layer":   draw(k, ForNeighbors, Lane(1, 0), 1000, 3),
		"etype":   draw(k, ForNeighbors, Lane(0, 1), 1000, 3),
		"node":    draw(k, ForNeighbors, Lane(0, 0), 1001, 3),
		"high ID": draw(k, ForNeighbors, Lane(0, 0), 1000+1<<32, 3),
		"draw":    draw(k, ForNeighbors, Lane(0, 0), 1000, 2),
	}
	for field, v := range others {
		if v == base {
			t.Errorf("changing the %s did not change the draw", field)
		}
	}
}

func TestBelowAndUnit(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 1000, 1 << 40} {
		for _, u := range []uint64{0, 1, 1 << 63, ^uint64(0)} {
			if b := Below(u, n); b >= n {
				t.Errorf("Below(%x, %d) = %d", u, n, b)
			}
		}
	}
	if Unit(0) <= 0 || Unit(^uint64(0)) != 1 {
		t.Errorf("Unit range: %v .. %v, want (0, 1]", Unit(0), Unit(^uint64(0)))
	}
}

// The interleaved rounds and fill's four draws at a time give what one
// Philox call per pair gives, for every length's tail.
func TestFillEqualsPairs(t *testing.T) {
	c := [4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}
	k := [2]uint32{0xa4093822, 0x299f31d0}
	o, ob := philox2(c, 0xdeadbeef, k)
	cb := c
	cb[0] = 0xdeadbeef
	if o != philox(c, k) || ob != philox(cb, k) {
		t.Fatalf("philox2 = %08x, %08x, want %08x, %08x", o, ob, philox(c, k), philox(cb, k))
	}
	for _, vector := range philox8Modes(t) {
		for n := range 50 {
			s := NewStream(BatchKey(7, 1, 42), ForNeighbors, Lane(1, 2), 1000)
			buf := make([]uint64, n)
			s.fill(buf)
			for i, got := range buf {
				if want := s.Uint64(uint32(i)); got != want {
					t.Fatalf("vector %v: fill of %d: draw %d is %x, want %x", vector, n, i, got, want)
				}
			}
		}
	}
}

// philox8Modes returns the ways fill can run here (by philox2, and on the
// vector unit where there is one), setting hasPhilox8 to each in turn as
// the caller ranges over them; the test's end restores it.
func philox8Modes(t *testing.T) iter.Seq2[int, bool] {
	saved := hasPhilox8
	t.Cleanup(func() { hasPhilox8 = saved })
	return func(yield func(int, bool) bool) {
		for i, vector := range []bool{false, true} {
			if vector && !saved {
				t.Log("no vector unit (AVX2) for philox8 here: fill's scalar form only")
				continue
			}
			hasPhilox8 = vector
			if !yield(i, vector) {
				return
			}
		}
	}
}

// philox8 gives what philox gives for each of its eight counters,
// counters wrapping past 2^32 included.
func TestPhilox8MatchesPhilox(t *testing.T) {
	if !hasPhilox8 {
		t.Skip("no vector unit (AVX2) for philox8 here: fill never calls it")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 2000 {
		c := [4]uint32{rng.Uint32(), rng.Uint32(), rng.Uint32(), rng.Uint32()}
		if trial%10 == 0 {
			c[0] = ^uint32(0) - uint32(trial%8) // lanes wrap past 2^32
		}
		k := Key{rng.Uint32(), rng.Uint32()}
		var out [16]uint64
		philox8(c, k, &out)
		for j := range 8 {
			cj := c
			cj[0] += uint32(j)
			o := philox(cj, k)
			a, b := uint64(o[0])|uint64(o[1])<<32, uint64(o[2])|uint64(o[3])<<32
			if out[2*j] != a || out[2*j+1] != b {
				t.Fatalf("counter %08x + %d under %08x: %016x %016x, want %016x %016x", c, j, k, out[2*j], out[2*j+1], a, b)
			}
		}
	}
}

// The draws made ahead for a chunk of nodes, eight counters of any nodes
// to a call, are each node's stream's first draws, whatever the fanouts
// and the way philox8In runs here; a node not added, or asked for out of
// order, gets none.
func TestDrawsAheadEqualStreams(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	key := Key{rng.Uint32(), rng.Uint32()}
	for _, vector := range philox8Modes(t) {
		var a drawsAhead
		for chunk := range 20 {
			a.reset(key)
			type job struct {
				node        int64
				layer, t, f int
			}
			var jobs []job
			for range rng.IntN(40) {
				j := job{int64(rng.Uint64() >> uint(rng.IntN(64))), rng.IntN(4), rng.IntN(3), 1 + rng.IntN(20)}
				jobs = append(jobs, j)
				a.add(j.node, streamWord1(ForNeighbors, Lane(j.layer, j.t)), j.f)
			}
			a.done()
			for i, j := range jobs {
				if got := a.take(j.node+1, streamWord1(ForNeighbors, Lane(j.layer, j.t))); got != nil {
					t.Fatalf("vector=%v chunk %d: job %d taken for node %d, which was not added there", vector, chunk, i, j.node+1)
				}
				got := a.take(j.node, streamWord1(ForNeighbors, Lane(j.layer, j.t)))
				if len(got) < j.f {
					t.Fatalf("vector=%v chunk %d: job %d: %d draws, want %d", vector, chunk, i, len(got), j.f)
				}
				st := NewStream(key, ForNeighbors, Lane(j.layer, j.t), j.node)
				for k := range j.f {
					if want := st.Uint64(uint32(k)); got[k] != want {
						t.Fatalf("vector=%v chunk %d: job %d (node %d layer %d type %d) draw %d: %016x, want %016x", vector, chunk, i, j.node, j.layer, j.t, k, got[k], want)
					}
				}
			}
			if got := a.take(1, streamWord1(ForNeighbors, Lane(0, 0))); got != nil {
				t.Fatalf("vector=%v chunk %d: a draw past the last job", vector, chunk)
			}
		}
	}
}
