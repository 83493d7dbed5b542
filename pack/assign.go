package pack

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Assignment is the concrete graphs of every pack for one epoch, in CSR
// form: pack i holds the graphs Graphs[Offsets[i]:Offsets[i+1]], indices
// into the dataset.
type Assignment struct {
	Offsets []int
	Graphs  []int
}

// Packs returns the number of packs.
func (a Assignment) Packs() int { return len(a.Offsets) - 1 }

// Pack returns the graphs of pack i. The slice is shared: do not modify it.
func (a Assignment) Pack(i int) []int { return a.Graphs[a.Offsets[i]:a.Offsets[i+1]] }

// Assign gives the graphs of a dataset, sizes[i] being the size of graph i,
// to the packs of p for one epoch. Which graph of a size goes to which pack,
// and the order of the packs, are shuffled by (seed, epoch) alone, so every
// rank computes the same assignment without talking to the others. Every
// graph lands in exactly one pack. It fails when p does not pack exactly the
// graphs of sizes.
func Assign(p Packing, sizes []Tuple, seed, epoch uint64) (Assignment, error) {
	rng := rand.New(rand.NewPCG(seed, epoch))
	pool := graphsBySize(sizes)
	for _, t := range sortedKeys(pool) {
		ids := pool[t]
		rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	}
	order := make([]int, 0, p.Packs()) // a group index per pack
	for gi, g := range p.Groups {
		for range g.Count {
			order = append(order, gi)
		}
	}
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	a := Assignment{Offsets: make([]int, 1, len(order)+1), Graphs: make([]int, 0, len(sizes))}
	for _, gi := range order {
		for _, t := range p.Groups[gi].Graphs {
			ids := pool[t]
			if len(ids) == 0 {
				return Assignment{}, fmt.Errorf("pack: the packing has more graphs of size %v than the dataset", t)
			}
			a.Graphs = append(a.Graphs, ids[len(ids)-1])
			pool[t] = ids[:len(ids)-1]
		}
		a.Offsets = append(a.Offsets, len(a.Graphs))
	}
	if len(a.Graphs) != len(sizes) {
		for _, t := range sortedKeys(pool) {
			if n := len(pool[t]); n > 0 {
				return Assignment{}, fmt.Errorf("pack: %d graphs of size %v are in the dataset but not in the packing", n, t)
			}
		}
	}
	return a, nil
}

func graphsBySize(sizes []Tuple) map[Tuple][]int {
	pool := make(map[Tuple][]int)
	for i, t := range sizes {
		pool[t] = append(pool[t], i)
	}
	return pool
}

func sortedKeys(m map[Tuple][]int) []Tuple {
	keys := make([]Tuple, 0, len(m))
	for t := range m {
		keys = append(keys, t)
	}
	slices.SortFunc(keys, compareTuples)
	return keys
}

// Share returns the packs [lo, hi) of rank r of size ranks: contiguous
// blocks whose lengths differ by at most one, the longer ones first.
func Share(packs, r, size int) (lo, hi int) {
	q, rem := packs/size, packs%size
	lo = r*q + min(r, rem)
	hi = lo + q
	if r < rem {
		hi++
	}
	return lo, hi
}

// Expand returns one size per graph of h, bin by bin: a dataset whose graphs
// have exactly the sizes of h, for when only the histogram is known.
func Expand(h Histogram) []Tuple {
	out := make([]Tuple, 0, h.graphs)
	for _, b := range h.bins {
		for range b.Count {
			out = append(out, b.Tuple)
		}
	}
	return out
}
