package sampler

import (
	"fmt"
	"slices"
	"testing"

	"gnnrun/internal/testgraph"
	"gnnrun/shard"
)

// A node whose in-edges all weigh 0 draws nothing, as DGL's
// sample_neighbors does, and is no error: "w0" is "w" with every in-edge
// of a quarter of the nodes weighing 0 (a held-out edge mask as --prob).
// Those nodes get no edges, every other node draws exactly what it draws
// under "w" (its draws are keyed by itself alone), and both transports
// agree at any rank count.
func TestSampleZeroWeightNodes(t *testing.T) {
	for _, hetero := range []bool{false, true} {
		f := getFixture(t, hetero, 4)
		z := f.withWeights(f.Weight0)
		for _, name := range []string{"weighted", "weighted-replace"} {
			o := optionCases(hetero)[name]
			t.Run(fmt.Sprintf("hetero=%v/%s", hetero, name), func(t *testing.T) {
				ref := sampleOn(t, f, 2, o, nil)
				o.Prob = "w0"
				got := sampleOn(t, z, 2, o, nil)
				zeroed, same := 0, 0
				for b := range int64(testBatches) {
					z.checkBatch(t, got[b], o)
					zb, sb := z.zeroNodeDraws(t, got[b], ref[b])
					zeroed, same = zeroed+zb, same+sb
				}
				if zeroed == 0 || same == 0 {
					t.Fatalf("%d zero-weight and %d other destinations compared: the test graph checks nothing", zeroed, same)
				}
				z.sameBatches(t, got, "alltoall P=2's", o, nil, bothTransports, 1, 4)
			})
		}
	}
}

// A node whose in-edges of positive weight are all excluded draws nothing
// too, by either transport.
func TestSampleZeroWeightAfterExclusions(t *testing.T) {
	for _, hetero := range []bool{false, true} {
		f := getFixture(t, hetero, 4)
		// Exclude every in-edge of positive weight of the even seeds, by ID.
		excl := func(_ int64, seeds []int64) []Exclusion {
			var xs []Exclusion
			for i, v := range seeds {
				for et := range f.Meta.EdgeTypes {
					for _, id := range f.In[et][f.Orig[v]] {
						if i%2 == 0 && f.Weight[et][id] > 0 {
							xs = append(xs, Exclusion{Dst: v, EType: et, EID: f.EdgeNewID(t, et, id)})
						}
					}
				}
			}
			return xs
		}
		for _, name := range []string{"weighted", "weighted-replace"} {
			o := optionCases(hetero)[name]
			t.Run(fmt.Sprintf("hetero=%v/%s", hetero, name), func(t *testing.T) {
				ref := sampleOn(t, f, 2, o, excl)
				for _, s := range ref {
					f.checkBatch(t, s, o)
				}
				f.sameBatches(t, ref, "alltoall P=2's", o, excl, []shard.Transport{shard.RMA}, 4)
			})
		}
	}
}

// withWeights returns the fixture with w as the weights its checks read.
func (f *fixture) withWeights(w [][]float32) *fixture {
	g := *f.Graph
	g.Weight = w
	return &fixture{&g}
}

// zeroNodeDraws checks batch s (drawn by "w0") against ref (the same
// batch drawn by "w"), block by block: a destination whose in-edges all
// weigh 0 has no edges, and one that is a destination of ref's block too
// has the same edges there. It returns how many destinations of each kind
// it checked.
func (f *fixture) zeroNodeDraws(t *testing.T, s, ref sampled) (zeroed, same int) {
	t.Helper()
	if len(s.blocks) != len(ref.blocks) {
		t.Fatalf("%d blocks, %d by w", len(s.blocks), len(ref.blocks))
	}
	for l, bl := range s.blocks {
		got, want := f.drawsByDst(t, bl), f.drawsByDst(t, ref.blocks[l])
		for d := range bl.NumDst {
			dst := f.InputNode(t, bl.Nodes[d])
			if testgraph.ZeroIn(dst) {
				if len(got[dst]) != 0 {
					t.Fatalf("block %d: node %d, whose in-edges all weigh 0, drew %v", l, dst, got[dst])
				}
				zeroed++
				continue
			}
			if w, ok := want[dst]; ok {
				if !slices.Equal(got[dst], w) {
					t.Fatalf("block %d: node %d drew %v, and %v by w", l, dst, got[dst], w)
				}
				same++
			}
		}
	}
	return zeroed, same
}

// drawsByDst returns each destination's drawn edges in a block, as
// etype<<32 | input edge ID, in block order, by input node.
func (f *fixture) drawsByDst(t *testing.T, bl *Block) map[int64][]int64 {
	t.Helper()
	out := map[int64][]int64{}
	for d := range bl.NumDst {
		out[f.InputNode(t, bl.Nodes[d])] = []int64{}
	}
	for i := range bl.Src {
		dst := f.InputNode(t, bl.Nodes[bl.Dst[i]])
		out[dst] = append(out[dst], int64(bl.ETypes[i])<<32|bl.OrigEIDs[i])
	}
	return out
}
