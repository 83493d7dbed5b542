package sampler

import (
	"gnnrun/shard"
	"math/rand/v2"
	"slices"
	"testing"
)

// refNumber numbers a block as DGL's to_block does, written plainly with
// a Go map: the destinations first, then the sources in order of first
// appearance.
func refNumber(dst, src []int64) (nodes []int64, idx []int32) {
	num := map[int64]int32{}
	for i, v := range dst {
		num[v] = int32(i)
	}
	nodes = slices.Clone(dst)
	for _, v := range src {
		n, ok := num[v]
		if !ok {
			n = int32(len(nodes))
			num[v] = n
			nodes = append(nodes, v)
		}
		idx = append(idx, n)
	}
	return nodes, idx
}

// TestNumberingPaths numbers random blocks through every path (marks for
// every node, marks for some and sorting for the rest, sorting only, the
// map) and compares each with refNumber, block after block with the same
// scratch, so a stale mark from an earlier block would show.
func TestNumberingPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 5000
	paths := map[string]*numbering{
		"marks":          {dense: newDenseMarks(0, n, n)},
		"marks and sort": {dense: newDenseMarks(1000, 3000, 2000)},
		"sort":           {},
	}
	for name, nb := range paths {
		for block := range 200 {
			perm := rng.Perm(n)
			dst := make([]int64, 1+rng.IntN(50))
			for i := range dst {
				dst[i] = int64(perm[i])
			}
			src := make([]int64, rng.IntN(400))
			for k := range src {
				if rng.IntN(3) == 0 && len(dst) > 0 {
					src[k] = dst[rng.IntN(len(dst))]
				} else {
					src[k] = int64(rng.IntN(n))
				}
			}
			wantNodes, wantIdx := refNumber(dst, src)
			counts := make([]int32, len(dst)) // all edges into dst[0]
			counts[0] = int32(len(src))
			b, err := buildBlock(dst, counts, &edgeList{src: src}, nb, false)
			if err != nil {
				t.Fatalf("%s, block %d: %v", name, block, err)
			}
			if !slices.Equal(b.Nodes, wantNodes) || !slices.Equal(b.Src, wantIdx) {
				t.Fatalf("%s, block %d: nodes %v src %v, want %v %v", name, block, b.Nodes, b.Src, wantNodes, wantIdx)
			}
			if block%50 == 0 && len(dst) > 1 {
				twice := slices.Clone(dst)
				twice[len(twice)-1] = twice[0]
				counts := make([]int32, len(twice))
				if _, err := buildBlock(twice, counts, &edgeList{}, nb, false); err == nil {
					t.Fatalf("%s, block %d: a repeated destination was numbered", name, block)
				}
			}
		}
	}
}

// localID finds inner and halo nodes, by search in an ascending halo and
// one by one in another.
func TestViewLocalID(t *testing.T) {
	for _, halo := range [][]int64{{20, 50, 70}, {50, 20, 70}} {
		p := &shard.Partition{NumInner: 3, Lo: 10, Hi: 13, Local2Global: append([]int64{10, 11, 12}, halo...)}
		v := &view{p: p, haloSorted: slices.IsSorted(halo)}
		for _, g := range []int64{10, 12, 20, 50, 70, 13, 9, 60, 99} {
			want, wantOK := int64(-1), false
			for l, x := range p.Local2Global {
				if x == g {
					want, wantOK = int64(l), true
				}
			}
			if l, ok := v.localID(g); ok != wantOK || (ok && l != want) {
				t.Errorf("halo %v: localID(%d) = %d, %v, want %d, %v", halo, g, l, ok, want, wantOK)
			}
		}
	}
}
