package sampler

import (
	"math"
	"math/bits"

	"gnnrun/graph"
)

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11): a counter-based generator, a pure function of a 128-bit
// counter and a 64-bit key. Every draw of the sampler is the output of one
// counter under one key, so a draw depends only on what it is for — never
// on which rank, thread or arrival order computed it — and a CUDA kernel
// computing the same counters draws the same numbers. Ten rounds of two
// 32x32->64 multiplies: about 10 ns a call on this machine's cores, and
// each call gives two 64-bit draws.
const (
	philoxM0 = 0xD2511F53
	philoxM1 = 0xCD9E8D57
	philoxW0 = 0x9E3779B9 // golden ratio
	philoxW1 = 0xBB67AE85 // sqrt(3) - 1
)

// philox returns Philox4x32-10 of counter c under key k. The rounds work
// on scalars: Go keeps arrays of more than one element in memory, and a
// round on [4]uint32 waits on its stores and loads (a Stream.Pair took
// 67-85 ns that way, 51-52 on scalars, on this machine's loaded cores).
func philox(c [4]uint32, k [2]uint32) [4]uint32 {
	c0, c1, c2, c3 := c[0], c[1], c[2], c[3]
	k0, k1 := k[0], k[1]
	for i := 0; i < 10; i++ {
		if i > 0 {
			k0 += philoxW0
			k1 += philoxW1
		}
		c0, c1, c2, c3 = philoxRound(c0, c1, c2, c3, k0, k1)
	}
	return [4]uint32{c0, c1, c2, c3}
}

// philoxRound is one round of Philox4x32 under the round's key (k0, k1).
func philoxRound(c0, c1, c2, c3, k0, k1 uint32) (uint32, uint32, uint32, uint32) {
	hi0, lo0 := bits.Mul32(philoxM0, c0)
	hi1, lo1 := bits.Mul32(philoxM1, c2)
	return hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
}

// philox2 returns philox of the counters c and c with c[0] = c0b under
// key k, the two sets of rounds interleaved: one call's rounds are a
// chain of dependent multiplies, and two chains side by side keep the
// CPU's multipliers busy.
func philox2(c [4]uint32, c0b uint32, k [2]uint32) (o, ob [4]uint32) {
	a0, a1, a2, a3 := c[0], c[1], c[2], c[3]
	b0, b1, b2, b3 := c0b, c[1], c[2], c[3]
	k0, k1 := k[0], k[1]
	for i := 0; i < 10; i++ {
		if i > 0 {
			k0 += philoxW0
			k1 += philoxW1
		}
		a0, a1, a2, a3 = philoxRound(a0, a1, a2, a3, k0, k1)
		b0, b1, b2, b3 = philoxRound(b0, b1, b2, b3, k0, k1)
	}
	return [4]uint32{a0, a1, a2, a3}, [4]uint32{b0, b1, b2, b3}
}

// philox8In is philox8AVX2's input: words 0..3 of eight counters, lane by
// lane (c[w][j] is word w of counter j), the key, and the constants (the
// assembly reads them by offset: keep the order).
type philox8In struct {
	c      [4][8]uint32
	k0, k1 uint32
	m0, m1 uint32
	w0, w1 uint32
}

// newPhilox8In returns philox8AVX2's input under key k, its counters
// still to be set.
func newPhilox8In(k Key) philox8In {
	return philox8In{k0: k[0], k1: k[1], m0: philoxM0, m1: philoxM1, w0: philoxW0, w1: philoxW1}
}

// setLane makes c counter j (0 to 7) of in.
func (in *philox8In) setLane(j int, c [4]uint32) {
	j &= 7 // no bounds checks
	in.c[0][j], in.c[1][j], in.c[2][j], in.c[3][j] = c[0], c[1], c[2], c[3]
}

// run puts the draws of in's eight counters into out, as Stream.Pair
// gives them: out[2j] and out[2j+1] are counter j's. On the vector unit
// where there is one (AVX2: a lane per counter, about a third of the
// instructions of eight scalar calls), else one counter at a time.
func (in *philox8In) run(out *[16]uint64) {
	if hasPhilox8 {
		philox8AVX2(in, out)
		return
	}
	for j := range 8 {
		out[2*j], out[2*j+1] = drawsOf(philox([4]uint32{in.c[0][j], in.c[1][j], in.c[2][j], in.c[3][j]}, Key{in.k0, in.k1}))
	}
}

// philox8 puts the draws of the eight counters c, c with c[0]+1, ...,
// c[0]+7 under key k into out, as Stream.Pair gives them: out[2j] and
// out[2j+1] are counter j's. Only where hasPhilox8 says there is a vector
// unit.
func philox8(c [4]uint32, k Key, out *[16]uint64) {
	in := newPhilox8In(k)
	for j := range 8 {
		in.setLane(j, [4]uint32{c[0] + uint32(j), c[1], c[2], c[3]})
	}
	philox8AVX2(&in, out)
}

// Purpose separates the streams of draws made for different things, so a
// neighbour draw never reuses the numbers of a shuffle or a negative.
type Purpose uint32

// The purposes of draws.
const (
	ForNeighbors Purpose = iota // draws of a node's in-edges at one layer
	ForShuffle                  // the epoch's shuffle of a partition's training items
	ForNegatives                // negative destinations of one positive edge
)

// Key is the Philox key of one mini-batch: it mixes the run's seed, the
// epoch and the batch's global number. Shuffles, which belong to an epoch
// and not to a batch, use batch -1.
type Key [2]uint32

// BatchKey returns the key of batch number batch of epoch under seed.
func BatchKey(seed uint64, epoch int, batch int64) Key {
	h := graph.Mix(seed, uint64(epoch), uint64(batch))
	return Key{uint32(h), uint32(h >> 32)}
}

// Stream is the sequence of draws a key gives for one purpose, lane and
// subject (a node ID, a partition, a positive edge's index): draw i is a
// pure function of (key, purpose, lane, subject, i). It keeps the last
// Philox output, so drawing 0, 1, 2, ... costs one call per two draws.
type Stream struct {
	key  Key
	ctr  [4]uint32 // ctr[0] is set per call
	last uint32    // the pair held in a, b (valid when held)
	held bool
	a, b uint64
}

// NewStream returns the stream of draws for purpose in lane about subject,
// under key. A lane is 24 bits the purpose divides as it needs (neighbour
// draws: the layer and the edge type, see Lane).
func NewStream(key Key, p Purpose, lane uint32, subject int64) Stream {
	return Stream{key: key, ctr: [4]uint32{0, streamWord1(p, lane), uint32(subject), uint32(uint64(subject) >> 32)}}
}

// streamWord1 is word 1 of the counters of the streams for purpose in
// lane.
func streamWord1(p Purpose, lane uint32) uint32 { return uint32(p)<<24 | lane&0xffffff }

// Lane returns the lane of neighbour draws at layer (hop, 0 nearest the
// seeds) over the in-edges of edge type etype.
func Lane(layer, etype int) uint32 { return uint32(layer)<<16 | uint32(etype)&0xffff }

// Uint64 returns draw i of the stream: draws 2j and 2j+1 are the two
// halves of one Philox output.
func (s *Stream) Uint64(i uint32) uint64 {
	j := i >> 1
	if !s.held || s.last != j {
		s.a, s.b = s.Pair(j)
		s.last, s.held = j, true
	}
	if i&1 == 0 {
		return s.a
	}
	return s.b
}

// fill puts draws 0..len(buf)-1 of the stream in buf: sixteen at a time
// on the vector unit while philox8From or more are left, then four at a
// time.
func (s *Stream) fill(buf []uint64) {
	i := 0
	if hasPhilox8 {
		var out [16]uint64
		for ; i+philox8From <= len(buf); i += 16 {
			c := s.ctr
			c[0] = uint32(i >> 1)
			philox8(c, s.key, &out)
			copy(buf[i:], out[:])
		}
		if i >= len(buf) {
			return
		}
	}
	for ; i+4 <= len(buf); i += 4 {
		c := s.ctr
		c[0] = uint32(i >> 1)
		o, ob := philox2(c, c[0]+1, s.key)
		buf[i], buf[i+1] = drawsOf(o)
		buf[i+2], buf[i+3] = drawsOf(ob)
	}
	for ; i < len(buf); i += 2 {
		a, b := s.Pair(uint32(i >> 1))
		buf[i] = a
		if i+1 < len(buf) {
			buf[i+1] = b
		}
	}
}

// philox8From is the fewest draws left that fill computes by philox8 on
// the vector unit (sixteen, of which it keeps those it needs): below, the
// scalar calls cost less.
const philox8From = 3

// Pair returns draws 2j and 2j+1 of the stream.
func (s *Stream) Pair(j uint32) (uint64, uint64) {
	c := s.ctr
	c[0] = j
	o := philox(c, s.key)
	return drawsOf(o)
}

// drawsOf returns the two draws of one Philox output: its words 0 and 1,
// and 2 and 3, each pair as one 64-bit draw, the low word first.
func drawsOf(o [4]uint32) (uint64, uint64) {
	return uint64(o[0]) | uint64(o[1])<<32, uint64(o[2]) | uint64(o[3])<<32
}

// Below maps a 64-bit draw to [0, n) by the high word of u*n (Lemire): no
// division, and a bias below n/2^64, far under anything a test over fewer
// than 2^40 draws can see.
func Below(u uint64, n uint64) uint64 {
	hi, _ := bits.Mul64(u, n)
	return hi
}

// Unit maps a 64-bit draw to (0, 1], 53 bits of it: never 0, so its
// logarithm is finite.
func Unit(u uint64) float64 {
	return float64(u>>11+1) * (1.0 / (1 << 53))
}

// Exp maps a 64-bit draw to an exponential variate of rate 1.
func Exp(u uint64) float64 { return -math.Log(Unit(u)) }
