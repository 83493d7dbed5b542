package sampler

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/shard"
)

// testBatches is how many batches each case samples: a multiple of every
// rank count tested, so every rank samples as many.
const testBatches = 16

// batchSeeds returns the seeds of test batch b: 12 distinct nodes of any
// type, drawn from the new IDs by a hash of the batch number.
func batchSeeds(b int64, n int64) []int64 {
	var out []int64
	for i := uint64(0); len(out) < 12; i++ {
		v := int64(graph.Mix64(uint64(b)<<20|i) % uint64(n))
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// sampled is one batch as a test keeps it.
type sampled struct {
	seeds  []int64
	blocks []*Block
	excl   []Exclusion
}

// sampleOn samples testBatches batches on p ranks (batch b on rank b mod
// p) and returns them by number; excl gives a batch's exclusions.
func sampleOn(t *testing.T, f *fixture, p int, o Options, excl func(b int64, seeds []int64) []Exclusion) map[int64]sampled {
	t.Helper()
	var mu sync.Mutex
	out := map[int64]sampled{}
	world(t, p, func(c *collective.Comm) error {
		s, err := shard.Serve(c, f.Parts)
		if err != nil {
			return err
		}
		defer s.Close()
		sm, err := New(c, s, o)
		if err != nil {
			return err
		}
		for b := int64(c.Rank()); b < testBatches; b += int64(p) {
			seeds := batchSeeds(b, s.Book.NumNodes())
			var xs []Exclusion
			if excl != nil {
				xs = excl(b, seeds)
			}
			blocks, err := sm.Sample(3, b, seeds, xs)
			if err != nil {
				return err
			}
			mu.Lock()
			out[b] = sampled{seeds: seeds, blocks: blocks, excl: xs}
			mu.Unlock()
		}
		if sm.draws.ahead.missed != 0 {
			return fmt.Errorf("rank %d: %d uniform choices drew from their streams, not from the draws made ahead", c.Rank(), sm.draws.ahead.missed)
		}
		// The test's worlds put two ranks on each host: up to 2 ranks, a
		// host graph leaves no frontier node remote.
		oneHost := p == 1 || o.HostGraph && sm.hostOff == "" && p <= 2
		if st := sm.Stats(); oneHost && st.RemoteNodes != 0 {
			return fmt.Errorf("rank %d of %d, one host: %d frontier nodes remote with the host's partitions mapped", c.Rank(), p, st.RemoteNodes)
		}
		// Where no rank has a remote node, alltoall exchanges nothing
		// (nothingRemote); elsewhere it exchanges every layer.
		if st := sm.Stats(); o.Transport == shard.Alltoall && oneHost != (st.Sent == 0) {
			return fmt.Errorf("rank %d of %d (one host: %v, host graph %v): the sampler's exchanges sent %d bytes", c.Rank(), p, oneHost, o.HostGraph, st.Sent)
		}
		return sm.Close()
	})
	return out
}

// bothTransports are the sampler's transports.
var bothTransports = []shard.Transport{shard.Alltoall, shard.RMA}

// sameBatches fails unless sampling with o (and excl) over each of the
// transports at each rank count in ps gives the batches of ref (named
// refName in the message), compared canonically.
func (f *fixture) sameBatches(t *testing.T, ref map[int64]sampled, refName string, o Options, excl func(b int64, seeds []int64) []Exclusion, transports []shard.Transport, ps ...int) {
	t.Helper()
	for _, tr := range transports {
		for _, p := range ps {
			o.Transport = tr
			got := sampleOn(t, f, p, o, excl)
			for b := range int64(testBatches) {
				if f.canonical(t, got[b]) != f.canonical(t, ref[b]) {
					t.Fatalf("%s P=%d: batch %d differs from %s", tr, p, b, refName)
				}
			}
		}
	}
}

// canonical writes a batch in input IDs (and its edges' new IDs), for
// comparing runs.
func (f *fixture) canonical(t *testing.T, s sampled) string {
	t.Helper()
	var b strings.Builder
	for l, bl := range s.blocks {
		fmt.Fprintf(&b, "block %d: %d dst\n", l, bl.NumDst)
		for _, v := range bl.Nodes {
			fmt.Fprintf(&b, "%d ", f.InputNode(t, v))
		}
		b.WriteString("\n")
		for i := range bl.Src {
			fmt.Fprintf(&b, "%d>%d:%d/%d/%d ", bl.Src[i], bl.Dst[i], bl.ETypes[i], bl.EIDs[i], bl.OrigEIDs[i])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// checkBatch checks a batch against the input graph: the layers chain, every
// edge is the input edge its original ID names, joining the nodes the block
// says; per destination and type, without replacement the edges are
// distinct and as many as min(fanout, in-degree less exclusions), -1
// takes all of them, and excluded edges never appear.
func (f *fixture) checkBatch(t *testing.T, s sampled, o Options) {
	t.Helper()
	fanouts, err := o.layerFanouts(f.Meta.EdgeTypes)
	if err != nil {
		t.Fatal(err)
	}
	weighted := o.Prob != ""
	L := len(s.blocks)
	if got := s.blocks[L-1].Nodes[:s.blocks[L-1].NumDst]; !slices.Equal(got, s.seeds) {
		t.Fatalf("the last block's destinations %v are not the seeds %v", got, s.seeds)
	}
	for l := 0; l < L-1; l++ {
		if !slices.Equal(s.blocks[l].Nodes[:s.blocks[l].NumDst], s.blocks[l+1].Nodes) {
			t.Fatalf("block %d's destinations are not block %d's sources", l, l+1)
		}
	}
	for l, bl := range s.blocks {
		layer := L - 1 - l // hop from the seeds
		seen := map[int64]bool{}
		for _, v := range bl.Nodes {
			if seen[v] {
				t.Fatalf("block %d lists node %d twice", l, v)
			}
			seen[v] = true
		}
		type key struct {
			dst int
			et  int16
		}
		drawn := map[key][]int64{}
		for i := range bl.Src {
			et, id := bl.ETypes[i], bl.OrigEIDs[i]
			src, dst := f.InputNode(t, bl.Nodes[bl.Src[i]]), f.InputNode(t, bl.Nodes[bl.Dst[i]])
			if id < 0 || id >= int64(len(f.Src[et])) || f.Src[et][id] != src || f.Dst[et][id] != dst {
				t.Fatalf("block %d edge %d: %d -> %d of type %d with input ID %d is not an input edge", l, i, src, dst, et, id)
			}
			if int(bl.Dst[i]) >= bl.NumDst {
				t.Fatalf("block %d edge %d ends at source-only node %d", l, i, bl.Dst[i])
			}
			drawn[key{int(bl.Dst[i]), et}] = append(drawn[key{int(bl.Dst[i]), et}], id)
			if weighted && f.Weight[et][id] == 0 {
				t.Fatalf("block %d: edge %d of type %d weighs 0 and was drawn", l, id, et)
			}
		}
		for d := range bl.NumDst {
			dst := f.InputNode(t, bl.Nodes[d])
			for et, fan := range fanouts[layer] {
				ids := drawn[key{d, int16(et)}]
				all := f.candidates(t, s, et, bl.Nodes[d], dst, weighted)
				for _, id := range ids {
					if !slices.Contains(all, id) {
						t.Fatalf("block %d: edge %d of type %d into %d was excluded or is no candidate", l, id, et, dst)
					}
				}
				switch {
				case fan == 0:
					if len(ids) != 0 {
						t.Fatalf("block %d: %d edges of type %d drawn with fanout 0", l, len(ids), et)
					}
				case o.Replace:
					want := fan
					if fan < 0 || len(all) == 0 {
						want = len(all)
					}
					if len(ids) != want {
						t.Fatalf("block %d: node %d type %d: %d edges with replacement from %d candidates, want %d", l, dst, et, len(ids), len(all), want)
					}
				default:
					slices.Sort(ids)
					if len(slices.Compact(slices.Clone(ids))) != len(ids) {
						t.Fatalf("block %d: node %d drew an edge twice without replacement: %v", l, dst, ids)
					}
					want := len(all)
					if fan >= 0 {
						want = min(fan, len(all))
					}
					if len(ids) != want {
						t.Fatalf("block %d: node %d type %d: %d edges of %d candidates with fanout %d, want %d", l, dst, et, len(ids), len(all), fan, want)
					}
				}
			}
		}
	}
}

// candidates returns the type-wise IDs of the input in-edges of input node
// dst (new ID node) of type et that a batch may draw: not excluded, and of
// positive weight when weighted.
func (f *fixture) candidates(t *testing.T, s sampled, et int, node, dst int64, weighted bool) []int64 {
	t.Helper()
	var out []int64
	newOf := func(in int64) int64 {
		for n, o := range f.Orig {
			if o == in {
				return n
			}
		}
		t.Fatalf("input node %d has no new ID", in)
		return -1
	}
next:
	for _, id := range f.In[et][dst] {
		if weighted && f.Weight[et][id] == 0 {
			continue
		}
		for _, x := range s.excl {
			if x.Dst != node || x.EType != et {
				continue
			}
			if x.EID < 0 && newOf(f.Src[et][id]) == x.Src {
				continue next
			}
			if x.EID >= 0 && f.EdgeNewID(t, et, id) == x.EID {
				continue next
			}
		}
		out = append(out, id)
	}
	return out
}

// optionCases are the ways of drawing every test runs: uniform and
// weighted, with and without replacement, all in-edges, and per-type
// fanouts on the heterogeneous graph.
func optionCases(hetero bool) map[string]Options {
	cases := map[string]Options{
		"uniform":          {Fanouts: []int{3, 2}},
		"uniform-replace":  {Fanouts: []int{3, 2}, Replace: true},
		"weighted":         {Fanouts: []int{2, 3}, Prob: "w"},
		"weighted-replace": {Fanouts: []int{4, 1}, Prob: "w", Replace: true},
		"all":              {Fanouts: []int{-1, 2}},
		"three-layers":     {Fanouts: []int{2, 2, 2}},
	}
	if hetero {
		cases["per-type"] = Options{Fanouts: []int{3, 2}, EtypeFanouts: map[string][]int{"buys": {-1, 0}}}
	}
	for name, o := range cases {
		o.Seed, o.OrigEIDs = 5, true
		cases[name] = o
	}
	return cases
}

// Every way of drawing gives batches whose edges are input edges in the
// counts the fanouts ask for.
func TestSampleMatchesInput(t *testing.T) {
	for _, hetero := range []bool{false, true} {
		f := getFixture(t, hetero, 4)
		for name, o := range optionCases(hetero) {
			t.Run(fmt.Sprintf("hetero=%v/%s", hetero, name), func(t *testing.T) {
				for _, s := range sampleOn(t, f, 4, o, nil) {
					f.checkBatch(t, s, o)
				}
			})
		}
	}
}

// A batch is a function of the partitions, the seed, the epoch and its
// number: the same at 1, 2, 4 and 8 ranks over 4 partitions, by either
// transport, and with HostGraph (a rank samples its host's other
// partitions as its own; on one host no frontier node is remote, which
// sampleOn checks).
func TestSampleSameAtAnyRankCount(t *testing.T) {
	for _, hetero := range []bool{false, true} {
		f := getFixture(t, hetero, 4)
		for _, name := range []string{"uniform", "weighted-replace", "per-type"} {
			o, ok := optionCases(hetero)[name]
			if !ok {
				continue
			}
			t.Run(fmt.Sprintf("hetero=%v/%s", hetero, name), func(t *testing.T) {
				ref := sampleOn(t, f, 1, o, nil)
				f.sameBatches(t, ref, "P=1's", o, nil, bothTransports, 1, 2, 4, 8)
				o.HostGraph = true
				f.sameBatches(t, ref, "P=1's", o, nil, bothTransports, 2, 4, 8)
			})
		}
	}
}

// An edge table of two words an entry (a graph whose node and edge IDs
// do not fit one word together) gives the same batches at every rank
// count, by either transport and with the host's graph, as the table of
// one word an entry, whose words the alltoall replies carry as they are.
func TestSampleWideEdgeTable(t *testing.T) {
	f := getFixture(t, true, 4)
	o := optionCases(true)["uniform"]
	ref := sampleOn(t, f, 1, o, nil)
	wideEdgeTables = true
	defer func() { wideEdgeTables = false }()
	f.sameBatches(t, ref, "one-word table's", o, nil, bothTransports, 1, 2, 4)
	// The host's table of two words an entry: its segments' offsets.
	o.HostGraph = true
	f.sameBatches(t, ref, "one-word table's", o, nil, []shard.Transport{shard.Alltoall}, 2, 4)
}

// Exclusions remove edges before the draw, at every layer: by edge ID (a
// batch's own positive edges) and by source (their reverse edges). The
// counts are taken over what is left, and both transports agree.
func TestSampleExclusions(t *testing.T) {
	for _, hetero := range []bool{false, true} {
		f := getFixture(t, hetero, 4)
		newID := f.NewIDs()
		// Exclude, for each seed with in-edges, its first input in-edge of
		// each type: by ID for even seeds, by source for odd ones.
		excl := func(_ int64, seeds []int64) []Exclusion {
			var xs []Exclusion
			for i, v := range seeds {
				for et := range f.Meta.EdgeTypes {
					ids := f.In[et][f.Orig[v]]
					if len(ids) == 0 {
						continue
					}
					x := Exclusion{Dst: v, EType: et, EID: -1, Src: newID[f.Src[et][ids[0]]]}
					if i%2 == 0 {
						x.EID, x.Src = f.EdgeNewID(t, et, ids[0]), 0
					}
					xs = append(xs, x)
				}
			}
			return xs
		}
		for _, name := range []string{"uniform", "all", "weighted"} {
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

// A rank whose batch names a node outside the graph fails with that
// reason, and the others, which take part in the same layers' exchanges,
// fail too (alltoall) or go on (rma) without waiting on it; the next batch
// samples as before on every rank.
func TestSampleOneRankFails(t *testing.T) {
	f := getFixture(t, false, 4)
	for _, tr := range bothTransports {
		t.Run(tr.String(), func(t *testing.T) {
			errs := make([]error, 2)
			world(t, 2, func(c *collective.Comm) error {
				s, err := shard.Serve(c, f.Parts)
				if err != nil {
					return err
				}
				defer s.Close()
				sm, err := New(c, s, Options{Fanouts: []int{3, 2}, Transport: tr, Seed: 1})
				if err != nil {
					return err
				}
				seeds := batchSeeds(int64(c.Rank()), s.Book.NumNodes())
				if c.Rank() == 1 {
					seeds = append(slices.Clone(seeds), s.Book.NumNodes()+5)
				}
				_, errs[c.Rank()] = sm.Sample(0, int64(c.Rank()), seeds, nil)
				if _, err := sm.Sample(0, 2+int64(c.Rank()), batchSeeds(2+int64(c.Rank()), s.Book.NumNodes()), nil); err != nil {
					return fmt.Errorf("the batch after the failed one: %w", err)
				}
				return sm.Close()
			})
			if errs[1] == nil || !strings.Contains(errs[1].Error(), "outside the graph") {
				t.Errorf("rank 1: %v, want the node outside the graph", errs[1])
			}
			if tr == shard.Alltoall && !errors.Is(errs[0], errPeerFailed) {
				t.Errorf("rank 0: %v, want %v", errs[0], errPeerFailed)
			}
			if tr == shard.RMA && errs[0] != nil {
				t.Errorf("rank 0 over rma: %v, want no error", errs[0])
			}
		})
	}
}

// TestStatsAddSub checks that Add and Sub cover every field of Stats: a
// field added later and left out of them fails here.
func TestStatsAddSub(t *testing.T) {
	var a, b Stats
	va, vb := reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()
	for i := range va.NumField() {
		switch f := va.Field(i); f.Kind() {
		case reflect.Int64:
			f.SetInt(int64(10 + i))
			vb.Field(i).SetInt(int64(3 * i))
		case reflect.Float64:
			f.SetFloat(float64(10+i) / 4)
			vb.Field(i).SetFloat(float64(3*i) / 4)
		default:
			t.Fatalf("Stats field %s of kind %v: extend this test", va.Type().Field(i).Name, f.Kind())
		}
	}
	sum, diff := reflect.ValueOf(a.Add(b)), reflect.ValueOf(a.Sub(b))
	for i := range va.NumField() {
		name := va.Type().Field(i).Name
		x, y := va.Field(i), vb.Field(i)
		if x.Kind() == reflect.Int64 {
			if sum.Field(i).Int() != x.Int()+y.Int() || diff.Field(i).Int() != x.Int()-y.Int() {
				t.Errorf("%s: Add %d, Sub %d from %d and %d", name, sum.Field(i).Int(), diff.Field(i).Int(), x.Int(), y.Int())
			}
		} else if sum.Field(i).Float() != x.Float()+y.Float() || diff.Field(i).Float() != x.Float()-y.Float() {
			t.Errorf("%s: Add %g, Sub %g from %g and %g", name, sum.Field(i).Float(), diff.Field(i).Float(), x.Float(), y.Float())
		}
	}
}

// exclusionSet's filter must never hide a node's exclusions: every node's
// of() against a plain map of the same exclusions, over enough of them that
// the filter's bits collide, and after a reset.
func TestExclusionSetMatchesMap(t *testing.T) {
	var x exclusionSet
	for round := range 3 {
		x.reset()
		want := map[int64][]Exclusion{}
		r := rand.New(rand.NewPCG(uint64(round), 7))
		for range 20000 * round {
			e := Exclusion{Dst: r.Int64N(200000), EType: r.IntN(2), EID: r.Int64N(1 << 40), Src: r.Int64N(200000)}
			x.add(e)
			want[e.Dst] = append(want[e.Dst], e)
		}
		if x.len() != len(want) {
			t.Fatalf("round %d: %d nodes with exclusions, want %d", round, x.len(), len(want))
		}
		for v := range int64(200000) {
			if got := x.of(v); !slices.Equal(got, want[v]) {
				t.Fatalf("round %d: node %d: %v, want %v", round, v, got, want[v])
			}
		}
	}
}

// localChunkOneType, the loop for graphs of one edge type, draws what
// localChunkPlain's loop over edge types draws: the same batches with it
// and without, at fanouts that take ranges whole, choose from them or
// take nothing (a per-type fanout of 0), with and without exclusions (whose nodes go through
// localNode between the loop's), on one rank and on two asking each
// other. (Without original edge IDs, which take the general loop, and
// which checkBatch needs: the general loop's batches are checked against
// the input by the kernel harness's test.)
func TestOneTypeChunksMatchGeneral(t *testing.T) {
	f := getFixture(t, false, 4)
	excl := func(_ int64, seeds []int64) []Exclusion {
		var xs []Exclusion
		for i, v := range seeds {
			if ids := f.In[0][f.Orig[v]]; len(ids) > 0 && i%2 == 0 {
				xs = append(xs, Exclusion{Dst: v, EType: 0, EID: f.EdgeNewID(t, 0, ids[0])})
			}
		}
		return xs
	}
	defer func(on bool) { oneTypeChunks = on }(oneTypeChunks)
	et := f.Meta.EdgeTypes[0].String()
	for _, o := range []Options{
		{Fanouts: []int{3, 2}}, {Fanouts: []int{-1, 2}},
		{Fanouts: []int{4, 1, 2}, EtypeFanouts: map[string][]int{et: {4, 0, 2}}},
	} {
		o.Seed = 5
		fanouts := o.Fanouts
		for _, p := range []int{1, 2} {
			for _, ex := range []func(int64, []int64) []Exclusion{nil, excl} {
				oneTypeChunks = true
				got := sampleOn(t, f, p, o, ex)
				oneTypeChunks = false
				want := sampleOn(t, f, p, o, ex)
				if len(got) != testBatches || !reflect.DeepEqual(got, want) {
					t.Fatalf("fanouts %v P=%d exclusions %v: the one-type loop's %d batches differ from the general loop's %d", fanouts, p, ex != nil, len(got), len(want))
				}
			}
		}
	}
}
