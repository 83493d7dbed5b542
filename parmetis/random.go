package parmetis

import (
	"math/bits"

	"gnnrun/collective"
	"gnnrun/graph"
)

// PartitionRandom returns the balanced random baseline every cut is
// compared with, for the graph whose edges this rank holds in `in` (as
// Build takes them) and whose vertices weigh what b says: vertex v goes to
// part floor(pi(v) * K / N) for a pseudo-random permutation pi of [0, N)
// keyed by o.Seed, so parts differ in size by at most one vertex and the
// parts do not depend on the rank count. A part is a function of the ID, so
// no graph is built: each rank takes an even range of IDs (Result.Part
// holds theirs, from Result.Lo), counts the cut of the edges it holds (a
// symmetric input's edges count once) and the in-degrees of its range. It
// is collective. It fails on edges Build refuses and on options or
// constraints the graph cannot take.
func PartitionRandom(c *collective.Comm, in Input, b Balance, o Options) (*Result, *Weights, error) {
	if err := checkInput(c, in); err != nil {
		return nil, nil, err
	}
	book := graph.EvenBook(in.N, c.Size())
	lo, _ := book.Range(c.Rank())
	indeg, err := inDegrees(c, in.Dst, book)
	if err != nil {
		return nil, nil, err
	}
	w, err := b.Weights(c, lo, indeg)
	if err != nil {
		return nil, nil, err
	}
	if o, err = o.normalized(in.N, w.NCon); err != nil {
		return nil, nil, err
	}
	partOf := RandomAssigner(in.N, o.Parts, o.Seed)
	part := make([]int32, len(indeg))
	for v := range part {
		part[v] = partOf(lo + int64(v))
	}
	cut, err := randomCut(c, in, partOf)
	if err != nil {
		return nil, nil, err
	}
	pb, err := newPartBook(c, w.NCon, w.Vwgt, part, o)
	if err != nil {
		return nil, nil, err
	}
	return &Result{Lo: lo, Part: part, Cut: cut, Imbalance: pb.imbalance(o)}, w, nil
}

// randomCut sums the weights of the edges held here whose ends partOf puts
// in different parts; as Build counts them, a symmetric input's edges
// (listed from both ends) count once. It is collective.
func randomCut(c *collective.Comm, in Input, partOf func(int64) int32) (int64, error) {
	var cut int64
	for i, s := range in.Src {
		if d := in.Dst[i]; s != d && partOf(s) != partOf(d) {
			w := int64(1)
			if in.Weight != nil {
				w = in.Weight[i]
			}
			cut += w
		}
	}
	cut, err := collective.Sum(c, cut)
	if in.Symmetric {
		cut /= 2
	}
	return cut, err
}

// inDegrees counts the edges into each vertex of this rank's range of book,
// from the heads dst of the edges held here. It is collective.
func inDegrees(c *collective.Comm, dst []int64, book graph.Book) ([]int64, error) {
	send := make([][]int64, c.Size())
	for _, d := range dst {
		send[book.Owner(d)] = append(send[book.Owner(d)], d)
	}
	got, err := collective.Exchange(c, send)
	if err != nil {
		return nil, err
	}
	lo, hi := book.Range(c.Rank())
	deg := make([]int64, hi-lo)
	for _, ds := range got {
		for _, d := range ds {
			deg[d-lo]++
		}
	}
	return deg, nil
}

// RandomAssigner returns the part PartitionRandom gives each vertex ID of a
// graph of n vertices, as a function any rank can evaluate for any ID.
func RandomAssigner(n int64, k int, seed uint64) func(id int64) int32 {
	perm := newFeistel(n, seed)
	return func(id int64) int32 {
		hi, lo := bits.Mul64(uint64(perm.apply(id)), uint64(k))
		q, _ := bits.Div64(hi, lo, uint64(n))
		return int32(q)
	}
}

// feistel is a pseudo-random permutation of [0, n): a 4-round Feistel
// network over the smallest even number of bits covering n, with cycle
// walking to stay below n (under 4 steps on average).
type feistel struct {
	n    int64
	half uint
	mask uint64
	keys [4]uint64
}

func newFeistel(n int64, seed uint64) feistel {
	b := uint(bits.Len64(uint64(max(n-1, 1))))
	b += b & 1
	f := feistel{n: n, half: b / 2, mask: 1<<(b/2) - 1}
	for i := range f.keys {
		f.keys[i] = graph.Mix(seed, 0xfe157e1, uint64(i))
	}
	return f
}

func (f feistel) apply(x int64) int64 {
	for {
		x = int64(f.round(uint64(x)))
		if x < f.n {
			return x
		}
	}
}

func (f feistel) round(x uint64) uint64 {
	l, r := x>>f.half, x&f.mask
	for _, k := range f.keys {
		l, r = r, l^(graph.Mix(k, r)&f.mask)
	}
	return l<<f.half | r
}
