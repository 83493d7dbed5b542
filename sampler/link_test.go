package sampler

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/internal/testgraph"
	"gnnrun/shard"
)

// tasksOn runs a plan's first two epochs through SampleTask on p ranks and
// returns the batches by (epoch, number).
func tasksOn(t *testing.T, f *fixture, p int, o Options, mk func(c *collective.Comm, s *shard.Served) (*Plan, error)) map[[2]int64]*Batch {
	t.Helper()
	var mu sync.Mutex
	out := map[[2]int64]*Batch{}
	world(t, p, func(c *collective.Comm) error {
		s, err := shard.Serve(c, f.Parts)
		if err != nil {
			return err
		}
		defer s.Close()
		pl, err := mk(c, s)
		if err != nil {
			return err
		}
		sm, err := New(c, s, o)
		if err != nil {
			return err
		}
		for e := range 2 {
			for _, task := range pl.Epoch(o.Seed, e) {
				b, err := sm.SampleTask(task)
				if err != nil {
					return err
				}
				mu.Lock()
				out[[2]int64{int64(e), task.Number}] = b
				mu.Unlock()
			}
		}
		return sm.Close()
	})
	return out
}

// linkCanonical writes a link batch in input IDs.
func (f *fixture) linkCanonical(t *testing.T, b *Batch) string {
	t.Helper()
	s := f.canonical(t, sampled{blocks: b.Blocks})
	for i := range b.NegSrc {
		s += fmt.Sprintf("%d-%d ", f.InputNode(t, b.NegSrc[i]), f.InputNode(t, b.NegDst[i]))
	}
	return s
}

func linkOptions(dist NegativeDist, ex Exclude) Options {
	return Options{Fanouts: []int{3, 2}, Seed: 4, OrigEIDs: true, Link: &LinkOptions{Negatives: 5, Dist: dist, Exclude: ex}}
}

// Link batches: the seeds are the distinct endpoints, the pairs point at
// them, negatives keep the positive's source and draw a node of its
// destination's type, excluded edges never appear; and the batches are the
// same at any rank count and by either transport, none missing.
func TestLinkBatches(t *testing.T) {
	f := getFixture(t, true, 4)
	for _, tc := range []struct {
		etype string
		dist  NegativeDist
		ex    Exclude
	}{{"follows", Uniform, ExcludeReverse}, {"buys", Degree, ExcludeSelf}} {
		o := linkOptions(tc.dist, tc.ex)
		mk := func(c *collective.Comm, s *shard.Served) (*Plan, error) { return NewEdgePlan(c, s, tc.etype, "", 24) }
		t.Run(fmt.Sprintf("%s/%s/%d", tc.etype, tc.dist, tc.ex), func(t *testing.T) {
			ref := tasksOn(t, f, 1, o, mk)
			for _, b := range ref {
				f.checkLinkBatch(t, b, o)
			}
			for _, tr := range []shard.Transport{shard.Alltoall, shard.RMA} {
				for _, p := range []int{2, 4, 8} {
					o.Transport = tr
					got := tasksOn(t, f, p, o, mk)
					held := 0
					for key, b := range got {
						if len(b.Pos) == 0 {
							continue // an empty batch padding a rank
						}
						held++
						if ref[key] == nil || f.linkCanonical(t, b) != f.linkCanonical(t, ref[key]) {
							t.Fatalf("%s P=%d: batch %d of epoch %d differs from P=1's", tr, p, key[1], key[0])
						}
					}
					if held != len(ref) {
						t.Fatalf("%s P=%d: %d batches hold positives, P=1 had %d", tr, p, held, len(ref))
					}
				}
			}
		})
	}
}

func (f *fixture) checkLinkBatch(t *testing.T, b *Batch, o Options) {
	t.Helper()
	last := b.Blocks[len(b.Blocks)-1]
	if !slices.Equal(last.Nodes[:last.NumDst], b.Seeds) {
		t.Fatal("the last block's destinations are not the batch's seeds")
	}
	k := o.Link.Negatives
	if len(b.NegSrc) != k*len(b.Pos) {
		t.Fatalf("%d negatives for %d positives, want %d each", len(b.NegSrc), len(b.Pos), k)
	}
	for i, p := range b.Pos {
		if b.Seeds[b.PosPairs[0][i]] != p.Src || b.Seeds[b.PosPairs[1][i]] != p.Dst {
			t.Fatalf("positive %d's pair indices point elsewhere", i)
		}
		for j := range k {
			n := i*k + j
			if b.NegSrc[n] != p.Src || b.Seeds[b.NegPairs[0][n]] != p.Src || b.Seeds[b.NegPairs[1][n]] != b.NegDst[n] {
				t.Fatalf("negative %d of positive %d: source or pair indices wrong", j, i)
			}
			if f.nodeType(t, b.NegDst[n]) != f.nodeType(t, p.Dst) {
				t.Fatalf("negative destination %d is not of the positive's destination type", b.NegDst[n])
			}
		}
	}
	for _, bl := range b.Blocks {
		for e := range bl.Src {
			src, dst, et := bl.Nodes[bl.Src[e]], bl.Nodes[bl.Dst[e]], int(bl.ETypes[e])
			for _, p := range b.Pos {
				if bl.EIDs[e] == p.EID {
					t.Fatalf("positive edge %d was sampled", p.EID)
				}
				if o.Link.Exclude == ExcludeReverse && et == p.EType && src == p.Dst && dst == p.Src {
					t.Fatalf("reverse %d -> %d of a positive edge was sampled", src, dst)
				}
			}
		}
	}
}

// nodeType returns the input node type of new node v.
func (f *fixture) nodeType(t *testing.T, v int64) int {
	t.Helper()
	ty, _ := f.Meta.NodeTypeOf(f.InputNode(t, v))
	return ty
}

// Negatives follow their law: uniform over the destination type, or in
// proportion to in-degree^0.75 (nodes without in-edges never drawn).
func TestNegativeLaw(t *testing.T) {
	f := getFixture(t, false, 4)
	indeg := map[int64]int{}
	for _, d := range f.Dst[0] {
		indeg[d]++
	}
	for _, dist := range []NegativeDist{Uniform, Degree} {
		o := linkOptions(dist, ExcludeNone)
		o.Link.Negatives = 40
		o.Fanouts = []int{1}
		mk := func(c *collective.Comm, s *shard.Served) (*Plan, error) { return NewEdgePlan(c, s, "", "", 64) }
		counts := map[int64]int{}
		total := 0
		for _, b := range tasksOn(t, f, 2, o, mk) {
			for _, v := range b.NegDst {
				counts[f.InputNode(t, v)]++
				total++
			}
		}
		want := map[int64]float64{}
		sum := 0.0
		for v := range f.Meta.NumNodes[0] {
			w := 1.0
			if dist == Degree {
				w = math.Pow(float64(indeg[v]), 0.75)
			}
			want[v] = w
			sum += w
		}
		stat, df := 0.0, -1
		// Pool the nodes expecting fewer than 5 draws into one bin.
		var pooledE, pooledO float64
		keys := make([]int64, 0, len(want))
		for v := range want {
			keys = append(keys, v)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		for _, v := range keys {
			e := want[v] / sum * float64(total)
			if want[v] == 0 && counts[v] > 0 {
				t.Fatalf("%s: node %d without in-edges drawn %d times", dist, v, counts[v])
			}
			if e < 5 {
				pooledE += e
				pooledO += float64(counts[v])
				continue
			}
			d := float64(counts[v]) - e
			stat += d * d / e
			df++
		}
		if pooledE > 0 {
			stat += (pooledO - pooledE) * (pooledO - pooledE) / pooledE
			df++
		}
		if p := (distuv.ChiSquared{K: float64(df)}).Survival(stat); p < 0.01 {
			t.Errorf("%s negatives: chi-square p = %.4g over %d draws", dist, p, total)
		}
	}
}

// Node batches carry their seeds' labels.
func TestNodeBatchLabels(t *testing.T) {
	f := getFixture(t, true, 4)
	o := Options{Fanouts: []int{2}, Seed: 1, OrigEIDs: true, Labels: LabelSpec{NType: "user", Name: "label"}, Transport: shard.RMA}
	mk := func(c *collective.Comm, s *shard.Served) (*Plan, error) {
		return NewNodePlan(c, s, "user", "train_mask", 16)
	}
	for _, b := range tasksOn(t, f, 4, o, mk) {
		if b.Labels == nil || b.Labels.Rows() != int64(len(b.Seeds)) {
			t.Fatalf("batch %d: labels %v for %d seeds", b.Number, b.Labels, len(b.Seeds))
		}
		for i, v := range b.Seeds {
			got := int64(binary.LittleEndian.Uint64(b.Labels.Row(int64(i))))
			if want := f.Label[f.InputNode(t, v)]; got != want {
				t.Fatalf("batch %d: seed %d has label %d, the input says %d", b.Number, v, got, want)
			}
		}
	}
}

// Reverse exclusion between two edge types (--reverse-etypes
// buys=bought_by, bought_by's edge i the reverse of buys edge i): with
// every in-edge of the seeds sampled, no block of a batch holds, for its
// positive u -> v of buys, the bought_by edge v -> u; and without it
// (exclude self) every positive's reverse is there, so the check can fail.
func TestLinkExcludesReverseType(t *testing.T) {
	f := &fixture{testgraph.Get(t, testgraph.Spec{Hetero: true, K: 4, Reverse: true})}
	buys := slices.IndexFunc(f.Meta.EdgeTypes, func(et graph.EdgeType) bool { return et.Rel == "buys" })
	rev := slices.IndexFunc(f.Meta.EdgeTypes, func(et graph.EdgeType) bool { return et.Rel == "bought_by" })
	mk := func(c *collective.Comm, s *shard.Served) (*Plan, error) { return NewEdgePlan(c, s, "buys", "", 16) }
	for _, ex := range []Exclude{ExcludeReverse, ExcludeSelf} {
		for _, tr := range []shard.Transport{shard.Alltoall, shard.RMA} {
			o := Options{Fanouts: []int{-1, 2}, Seed: 3, OrigEIDs: true, Transport: tr,
				Link: &LinkOptions{Negatives: 1, Exclude: ex, ReverseEtypes: map[string]string{"buys": "bought_by"}}}
			batches := tasksOn(t, f, 2, o, mk)
			if len(batches) == 0 {
				t.Fatal("no batches")
			}
			for key, b := range batches {
				for _, p := range b.Pos {
					if p.EType != buys {
						t.Fatalf("a positive of edge type %d, not buys (%d)", p.EType, buys)
					}
					if found := hasEdge(b, p.Dst, p.Src, rev); found != (ex == ExcludeSelf) {
						t.Fatalf("exclude %d, %s: batch %d of epoch %d: its positive %d -> %d has its reverse in a block: %v",
							ex, tr, key[1], key[0], f.InputNode(t, p.Src), f.InputNode(t, p.Dst), found)
					}
				}
			}
		}
	}
}

// hasEdge reports whether a block of b holds an edge src -> dst of type et.
func hasEdge(b *Batch, src, dst int64, et int) bool {
	for _, bl := range b.Blocks {
		for e := range bl.Src {
			if int(bl.ETypes[e]) == et && bl.Nodes[bl.Src[e]] == src && bl.Nodes[bl.Dst[e]] == dst {
				return true
			}
		}
	}
	return false
}
