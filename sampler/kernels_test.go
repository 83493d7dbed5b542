package sampler

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/internal/kernelharness"
	"gnnrun/internal/testgraph"
	"gnnrun/shard"
)

// The CUDA sampling kernels (cuda/kernels/sample.cu, compact.cu, scan.cuh)
// run on the CPU through their harness (cuda/kernels/harness/sample.cc)
// under ASan and UBSan, in both orders of threads, and must give what this
// package gives bit for bit: each destination's CSC positions as
// nodeDraws.positions draws them, and the block as buildBlock numbers it.

// kernelOrders are the harness's orders of threads: ascending with the
// GPU launcher's scan chunk, descending with a chunk of 3, which makes the
// scan take several levels on small arrays.
var kernelOrders = []struct {
	name  string
	args  []string
	chunk int
}{
	{"ascending", []string{"reverse=0", "chunk=128"}, 128},
	{"descending", []string{"reverse=1", "chunk=3"}, 3},
}

// harnessDir writes arrays (int32 or int64 slices, by name) into a fresh
// directory for the harness.
func harnessDir(t *testing.T, arrays map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	for name, a := range arrays {
		var b bytes.Buffer
		if err := binary.Write(&b, binary.LittleEndian, a); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".bin"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readHarness[T int32 | int64](t *testing.T, dir, name string) []T {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, name+".bin"))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]T, len(raw)/binary.Size(T(0)))
	if err := binary.Read(bytes.NewReader(raw), binary.LittleEndian, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// harnessJob is one job of the sampling harness: op over the arrays in
// dir, with values args.
type harnessJob struct {
	op, dir string
	args    []string
}

// runHarness runs jobs in one process of the sampling harness (a
// sanitized process takes a tenth of a second to start and end), listed
// in a file, and returns their status lines.
func runHarness(t *testing.T, jobs ...harnessJob) []string {
	t.Helper()
	bin := kernelharness.Build(t, "sample")
	var lines strings.Builder
	for _, j := range jobs {
		fmt.Fprintln(&lines, j.op, j.dir, strings.Join(j.args, " "))
	}
	file := filepath.Join(t.TempDir(), "jobs")
	if err := os.WriteFile(file, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	status := strings.Split(strings.TrimSpace(string(kernelharness.Run(t, bin, "@"+file))), "\n")
	if len(status) != len(jobs) {
		t.Fatalf("%d jobs, %d status lines", len(jobs), len(status))
	}
	return status
}

// The scan gives the exclusive prefix sums and their total at every size
// around the chunk boundaries, with chunks that make one to fourteen
// levels, in both orders.
func TestKernelScan(t *testing.T) {
	type scanCase struct {
		n, chunk, reverse int
		dir               string
		want              []int64
	}
	var cases []scanCase
	var jobs []harnessJob
	for _, n := range []int{0, 1, 2, 3, 4, 5, 127, 128, 129, 1000, 16385} {
		x := make([]int64, n)
		want := make([]int64, n+1)
		for i := range x {
			x[i] = int64(graph.Mix64(uint64(i)) % 1000)
			want[i+1] = want[i] + x[i]
		}
		for _, chunk := range []int{2, 3, 128} {
			for _, rev := range []int{0, 1} {
				c := scanCase{n: n, chunk: chunk, reverse: rev, dir: harnessDir(t, map[string]any{"x": x}), want: want}
				cases = append(cases, c)
				jobs = append(jobs, harnessJob{"scan", c.dir, []string{fmt.Sprintf("chunk=%d", chunk), fmt.Sprintf("reverse=%d", rev)}})
			}
		}
	}
	runHarness(t, jobs...)
	for _, c := range cases {
		if got := readHarness[int64](t, c.dir, "out"); !slices.Equal(got, c.want) {
			t.Errorf("n=%d chunk=%d reverse=%d: the scan differs at %d", c.n, c.chunk, c.reverse, firstDiff(got, c.want))
		}
	}
}

func firstDiff[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// compactCase is a layer's sampled edges: destinations dst, the edges of
// dst[i] being src[offs[i]:offs[i+1]].
type compactCase struct {
	name      string
	dst, src  []int64
	counts    []int32
	duplicate bool // a destination listed twice
}

func (c compactCase) offs() []int64 {
	out := make([]int64, len(c.counts)+1)
	for i, n := range c.counts {
		out[i+1] = out[i] + int64(n)
	}
	return out
}

// compactCases are edge lists buildBlock must number alike on the CPU and
// through the kernels: sources repeated many times, sources among the
// destinations (before and after their own turn), destinations without
// edges, no edges at all, no destinations, one hub of 3000 edges, enough
// edges and distinct sources for a multi-level scan and a large table,
// and a destination listed twice (which both refuse).
func compactCases() []compactCase {
	h := func(i, salt int) int64 { return int64(graph.Mix64(uint64(i)<<8|uint64(salt)) >> 2) }
	random := func(name string, nd, maxDeg, pool int, dstAsSrc bool) compactCase {
		c := compactCase{name: name}
		for i := range nd {
			if v := h(i, 1) % (10 * int64(pool)); !slices.Contains(c.dst, v) {
				c.dst = append(c.dst, v)
			}
		}
		for i := range c.dst {
			deg := int(h(i, 3) % int64(maxDeg+1))
			if i%5 == 0 {
				deg = 0
			}
			c.counts = append(c.counts, int32(deg))
			for k := range deg {
				v := h(i*maxDeg+k, 4) % int64(pool)
				if dstAsSrc && v%3 == 0 {
					v = c.dst[int(v)%len(c.dst)]
				}
				c.src = append(c.src, v)
			}
		}
		return c
	}
	star := compactCase{name: "hub", dst: []int64{42, 7, 99}, counts: []int32{3000, 1, 0}}
	for k := range 3000 {
		star.src = append(star.src, int64(k%1700))
	}
	star.src = append(star.src, 42)
	return []compactCase{
		random("repeats", 50, 20, 30, false),
		random("sources-among-destinations", 80, 12, 200, true),
		random("large", 2000, 50, 10000, true),
		{name: "no-edges", dst: []int64{5, 3, 9}, counts: []int32{0, 0, 0}},
		{name: "empty"},
		star,
		{name: "duplicate-destination", dst: []int64{1, 2, 1}, counts: []int32{1, 1, 0}, src: []int64{2, 3}, duplicate: true},
	}
}

// The compaction numbers a layer's nodes as buildBlock does, in both
// orders of threads, and refuses a destination listed twice as it does.
func TestKernelCompact(t *testing.T) {
	type job struct {
		c    compactCase
		name string
		dir  string
		want *Block
	}
	var todo []job
	var jobs []harnessJob
	for _, c := range compactCases() {
		var ids numbering
		want, err := buildBlock(c.dst, c.counts, &edgeList{src: c.src}, &ids, false)
		if (err != nil) != c.duplicate {
			t.Fatalf("%s: buildBlock: %v", c.name, err)
		}
		for _, o := range kernelOrders {
			dir := harnessDir(t, map[string]any{"dst": c.dst, "offs": c.offs(), "src": c.src})
			todo = append(todo, job{c, c.name + " " + o.name, dir, want})
			jobs = append(jobs, harnessJob{"compact", dir, o.args})
		}
	}
	for i, status := range runHarness(t, jobs...) {
		j := todo[i]
		switch {
		case j.c.duplicate && !strings.HasPrefix(status, "duplicate"):
			t.Errorf("%s: the kernels took a destination listed twice (%q)", j.name, status)
		case !j.c.duplicate && status != "ok":
			t.Errorf("%s: harness says %q", j.name, status)
		case !j.c.duplicate:
			checkBlock(t, j.name, j.dir, j.want)
		}
	}
}

// checkBlock fails unless the harness's block in dir is want's Nodes,
// Src and Dst.
func checkBlock(t *testing.T, what, dir string, want *Block) {
	t.Helper()
	if got := readHarness[int64](t, dir, "nodes"); !slices.Equal(got, want.Nodes) {
		t.Fatalf("%s: nodes differ at %d of %d (%d from the kernels)", what, firstDiff(got, want.Nodes), len(want.Nodes), len(got))
	}
	if got := readHarness[int32](t, dir, "bsrc"); !slices.Equal(got, want.Src) {
		t.Fatalf("%s: Src differs at edge %d of %d", what, firstDiff(got, want.Src), len(want.Src))
	}
	if got := readHarness[int32](t, dir, "bdst"); !slices.Equal(got, want.Dst) {
		t.Fatalf("%s: Dst differs at edge %d of %d", what, firstDiff(got, want.Dst), len(want.Dst))
	}
}

// kernelGraph is a partition made up for the kernels' tests, with the
// view the sampler reads it through.
type kernelGraph struct {
	name     string
	v        *view
	frontier []int64
	// fanouts(f, c) is each edge type's fanout when testing fanout f
	// under kernelLayers[c].
	fanouts func(f, c int) []int
}

// newKernelGraph builds a partition of inner nodes with global IDs from lo
// and halo more local nodes (global IDs elsewhere), its indices int64 when
// wide, and deg(v, t) in-edges of type t into inner node v whose k-th
// source is the local node src(v, t, k).
func newKernelGraph(t *testing.T, inner, halo int, lo int64, wide bool, etypes int, deg func(v, t int) int, src func(v, t, k int) int64) *view {
	t.Helper()
	p := &shard.Partition{Config: &shard.Config{EdgeTypes: make([]graph.EdgeType, etypes)}, NumInner: int64(inner), Lo: lo, Hi: lo + int64(inner)}
	for l := range inner + halo {
		g := lo + int64(l)
		if l >= inner {
			g = lo + int64(inner) + 1000 + 3*int64(l) // halo: outside [lo, hi)
		}
		p.Local2Global = append(p.Local2Global, g)
	}
	p.Indptr = []int64{0}
	var idx []int64
	for v := range inner {
		for et := range etypes {
			for k := range deg(v, et) {
				idx = append(idx, src(v, et, k))
				p.EdgeType = append(p.EdgeType, int16(et))
			}
		}
		p.Indptr = append(p.Indptr, int64(len(idx)))
	}
	p.EdgeIDs = make([]int64, len(idx))
	if wide {
		p.Indices64 = idx
	} else {
		for _, l := range idx {
			p.Indices32 = append(p.Indices32, int32(l))
		}
	}
	if etypes == 1 {
		p.EdgeType = nil
	}
	v, err := newView(p, &Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// pick returns n of the inner nodes of v in a scrambled order, those in
// always first.
func pick(v *view, n int, always ...int64) []int64 {
	out := append([]int64(nil), always...)
	for i := int64(0); len(out) < n && i < 50*v.p.NumInner; i++ {
		g := v.p.Lo + int64(graph.Mix64(uint64(i)+99)%uint64(v.p.NumInner))
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// kernelGraphs are the made-up graphs: skewed in-degrees from 0 to 700
// with halo sources (int32 indices), a third of the nodes without
// in-edges (int64 indices, no halo), a star whose hub has 1499 in-edges,
// and three edge types with per-type fanouts, 0 among them.
func kernelGraphs(t *testing.T) []kernelGraph {
	h := func(a, b, c int) uint64 { return graph.Mix64(uint64(a)<<40 ^ uint64(b)<<20 ^ uint64(c)) }
	skewed := func(v, et int) int {
		return int(math.Exp(float64(h(v, et, 1)%1000)/1000*math.Log(700))) - 1
	}
	same := func(f, _ int) []int { return []int{f} }
	var out []kernelGraph
	v := newKernelGraph(t, 400, 60, 7000, false, 1, skewed, func(v, et, k int) int64 { return int64(h(v, et, k) % 460) })
	out = append(out, kernelGraph{name: "skewed", v: v, frontier: pick(v, 250), fanouts: same})

	v = newKernelGraph(t, 300, 0, 0, true, 1, func(v, et int) int {
		if v%3 == 0 {
			return 0
		}
		return int(h(v, et, 2) % 31)
	}, func(v, et, k int) int64 { return int64(h(v, et, k) % 300) })
	out = append(out, kernelGraph{name: "zero-degree", v: v, frontier: pick(v, 200), fanouts: same})

	v = newKernelGraph(t, 1500, 0, 100, false, 1, func(v, _ int) int {
		if v == 0 {
			return 1499
		}
		return 1
	}, func(v, _, k int) int64 {
		if v == 0 {
			return int64(k + 1)
		}
		return 0
	})
	out = append(out, kernelGraph{name: "star", v: v, frontier: pick(v, 100, 100), fanouts: same})

	v = newKernelGraph(t, 300, 30, 50, true, 3, func(v, et int) int {
		if (v+et)%4 == 0 {
			return 0
		}
		return skewed(v, et) % 90
	}, func(v, et, k int) int64 { return int64(h(v, et, k) % 330) })
	out = append(out, kernelGraph{name: "typed", v: v, frontier: pick(v, 150), fanouts: func(f, c int) []int {
		if c == 0 {
			return []int{f, 3, 0}
		}
		return []int{-1, f, 7}
	}})
	return out
}

// kernelLayers are the keys and layers each case is drawn under.
var kernelLayers = []struct {
	key   Key
	layer int
}{
	{BatchKey(1, 0, 0), 0},
	{BatchKey(77, 3, 12345), 2},
}

// kernelFanouts are the fanouts under test: all, small, both sides of
// Floyd's switch from a scanned set to a bitmap (64, 65), and more than
// most nodes have.
var kernelFanouts = []int{-1, 1, 5, 10, 25, 64, 65, 200}

// goLayer is one layer as the Go sampler draws it over v: the positions
// and sources of each destination's edges, and the block.
type goLayer struct {
	counts []int32
	pos    []int64
	src    []int64
	types  []int16
	block  *Block
}

func sampleGoLayer(t *testing.T, v *view, frontier []int64, fanouts []int, replace bool, key Key, layer int) goLayer {
	t.Helper()
	d := nodeDraws{fanouts: make([][]int, layer+1), replace: replace}
	d.fanouts[layer] = fanouts
	var g goLayer
	for _, node := range frontier {
		start := len(g.pos)
		g.pos, g.types = d.positions(v, node-v.p.Lo, node, key, layer, nil, g.pos, g.types)
		g.counts = append(g.counts, int32(len(g.pos)-start))
	}
	e := edgeList{etype: g.types}
	for _, q := range g.pos {
		g.src = append(g.src, v.src(q))
		e.eid = append(e.eid, v.p.EdgeIDs[q])
	}
	e.src = g.src
	var ids numbering
	var err error
	if g.block, err = buildBlock(frontier, g.counts, &e, &ids, false); err != nil {
		t.Fatal(err)
	}
	return g
}

// harnessLayer writes the arrays of v and a layer's frontier and fanouts
// for the harness's layer op and returns the directory and the op's
// values.
func harnessLayer(t *testing.T, v *view, frontier []int64, fanouts []int, replace bool, key Key, layer int) (string, []string) {
	t.Helper()
	f32 := make([]int32, len(fanouts))
	for i, f := range fanouts {
		f32[i] = int32(f)
	}
	arrays := map[string]any{"tptr": v.tptr, "l2g": v.p.Local2Global, "frontier": frontier, "fanouts": f32}
	if v.p.Indices32 != nil {
		arrays["idx32"] = v.p.Indices32
	} else {
		arrays["idx64"] = v.p.Indices64
	}
	r := 0
	if replace {
		r = 1
	}
	return harnessDir(t, arrays), []string{fmt.Sprintf("lo=%d", v.p.Lo), fmt.Sprintf("num_inner=%d", v.p.NumInner),
		fmt.Sprintf("etypes=%d", v.etypes), fmt.Sprintf("replace=%d", r), fmt.Sprintf("layer=%d", layer),
		fmt.Sprintf("key0=%d", key[0]), fmt.Sprintf("key1=%d", key[1])}
}

// checkLayer fails unless the harness's layer in dir is g: the offsets of
// each destination's edges, their positions and sources, and the block.
func checkLayer(t *testing.T, what, dir string, frontier []int64, g goLayer) {
	t.Helper()
	offs := readHarness[int64](t, dir, "offs")
	for i := range frontier {
		if n := offs[i+1] - offs[i]; n != int64(g.counts[i]) {
			t.Fatalf("%s: node %d draws %d edges, the Go sampler %d", what, frontier[i], n, g.counts[i])
		}
	}
	if pos := readHarness[int64](t, dir, "pos"); !slices.Equal(pos, g.pos) {
		k := firstDiff(pos, g.pos)
		i, _ := slices.BinarySearch(offs, int64(k)+1)
		t.Fatalf("%s: positions differ at edge %d (node %d): %v, Go %v", what, k, frontier[i-1], pos[offs[i-1]:offs[i]], g.pos[offs[i-1]:offs[i]])
	}
	if src := readHarness[int64](t, dir, "src"); !slices.Equal(src, g.src) {
		t.Fatalf("%s: sources differ at edge %d", what, firstDiff(src, g.src))
	}
	checkBlock(t, what, dir, g.block)
}

// Per made-up graph, fanout, replacement, key and layer, in both orders:
// the kernels draw each destination's positions as the Go sampler does,
// and build its block.
func TestKernelSampleLayer(t *testing.T) {
	for _, kg := range kernelGraphs(t) {
		t.Run(kg.name, func(t *testing.T) {
			t.Parallel()
			type job struct {
				what string
				dir  string
				want goLayer
			}
			var todo []job
			var jobs []harnessJob
			for _, f := range kernelFanouts {
				for _, replace := range []bool{false, true} {
					if f < 0 && replace {
						continue // -1 takes every edge either way
					}
					for c, kl := range kernelLayers {
						fanouts := kg.fanouts(f, c)
						g := sampleGoLayer(t, kg.v, kg.frontier, fanouts, replace, kl.key, kl.layer)
						for _, o := range kernelOrders {
							dir, args := harnessLayer(t, kg.v, kg.frontier, fanouts, replace, kl.key, kl.layer)
							todo = append(todo, job{fmt.Sprintf("fanouts %v replace=%v layer %d %s", fanouts, replace, kl.layer, o.name), dir, g})
							jobs = append(jobs, harnessJob{"layer", dir, append(args, o.args...)})
						}
					}
				}
			}
			for i, status := range runHarness(t, jobs...) {
				if status != "ok" {
					t.Fatalf("%s: harness says %q", todo[i].what, status)
				}
				checkLayer(t, todo[i].what, todo[i].dir, kg.frontier, todo[i].want)
			}
		})
	}
}

// servedBatches are batches the Go sampler drew over a served
// one-partition graph, with what the kernels read of the partition,
// copied while it was served.
type servedBatches struct {
	name    string
	o       Options
	v       *view
	fanouts [][]int // [layer][etype]
	batches map[int64]sampled
}

// servedCases are the batches the kernels must draw alike: 4 batches of 12
// seeds under each of homogeneous and two-edge-type graphs, with and
// without replacement, 2 and 3 layers, per-type fanouts (0 among them).
func servedCases(t *testing.T) []servedBatches {
	t.Helper()
	cases := []struct {
		hetero bool
		o      Options
	}{
		{false, Options{Fanouts: []int{10, 5, 3}}},
		{false, Options{Fanouts: []int{25, -1}, Replace: true}},
		{true, Options{Fanouts: []int{4, 65}, EtypeFanouts: map[string][]int{"buys": {-1, 0}}}},
		{true, Options{Fanouts: []int{3, 2, 2}, Replace: true}},
	}
	var out []servedBatches
	for _, c := range cases {
		c.o.Seed = 9
		sb := servedBatches{name: fmt.Sprintf("hetero=%v/fanouts=%v/replace=%v", c.hetero, c.o.Fanouts, c.o.Replace), o: c.o, batches: map[int64]sampled{}}
		f := testgraph.Get(t, testgraph.Spec{Hetero: c.hetero, K: 1})
		world(t, 1, func(comm *collective.Comm) error {
			s, err := shard.Serve(comm, f.Parts)
			if err != nil {
				return err
			}
			defer s.Close()
			sm, err := New(comm, s, c.o)
			if err != nil {
				return err
			}
			defer sm.Close()
			sb.v, sb.fanouts = copyView(sm.views[0]), sm.fanouts
			for b := range int64(4) {
				seeds := batchSeeds(b, s.Book.NumNodes())
				blocks, err := sm.Sample(2, b, seeds, nil)
				if err != nil {
					return err
				}
				sb.batches[b] = sampled{seeds: seeds, blocks: blocks}
			}
			return nil
		})
		out = append(out, sb)
	}
	return out
}

// key returns the key of batch b.
func (sb *servedBatches) key(b int64) Key { return BatchKey(sb.o.Seed, 2, b) }

// Whole batches sampled layer by layer through the kernels over a served
// one-partition graph (homogeneous, and with two edge types and per-type
// fanouts) equal the Go sampler's for the same seed, epoch and batch:
// every block's nodes, edges, edge IDs and types, which is all gnnrun
// sample --dump writes of a node batch's blocks.
func TestKernelBatchesEqualSampler(t *testing.T) {
	for _, sb := range servedCases(t) {
		t.Run(sb.name, func(t *testing.T) {
			// Layer by layer, every batch's in one run of the harness.
			frontiers := map[int64][]int64{}
			for b, s := range sb.batches {
				frontiers[b] = s.seeds
			}
			for layer := range sb.fanouts {
				dirs := map[int64]string{}
				var jobs []harnessJob
				for b := range int64(len(sb.batches)) {
					dir, args := harnessLayer(t, sb.v, frontiers[b], sb.fanouts[layer], sb.o.Replace, sb.key(b), layer)
					dirs[b] = dir
					jobs = append(jobs, harnessJob{"layer", dir, append(args, kernelOrders[b%2].args...)})
				}
				for i, status := range runHarness(t, jobs...) {
					if status != "ok" {
						t.Fatalf("batch %d layer %d: harness says %q", i, layer, status)
					}
				}
				for b, s := range sb.batches {
					d := dirs[b]
					got := blockAt(sb.v, len(frontiers[b]), readHarness[int64](t, d, "nodes"), readHarness[int32](t, d, "bsrc"),
						readHarness[int32](t, d, "bdst"), readHarness[int64](t, d, "pos"))
					if !blocksEqual(got, s.blocks[len(s.blocks)-1-layer]) {
						t.Fatalf("batch %d layer %d: the kernels' block differs from the sampler's", b, layer)
					}
					frontiers[b] = got.Nodes
				}
			}
		})
	}
}

// copyView copies the arrays of a view's partition the kernels read.
func copyView(v *view) *view {
	p := *v.p
	p.Local2Global = slices.Clone(p.Local2Global)
	p.Indptr = slices.Clone(p.Indptr)
	p.Indices32, p.Indices64 = slices.Clone(p.Indices32), slices.Clone(p.Indices64)
	p.EdgeIDs, p.EdgeType = slices.Clone(p.EdgeIDs), slices.Clone(p.EdgeType)
	cv := &view{p: &p, etypes: v.etypes, tptr: slices.Clone(v.tptr)}
	if v.etypes <= 1 {
		cv.tptr = p.Indptr
	}
	return cv
}

// blockAt is the Block of a layer the kernels compacted over v: its
// nodes, its edges' block-local sources and destinations, and their CSC
// positions, whose edge IDs and types it reads from v.
func blockAt(v *view, numDst int, nodes []int64, src, dst []int32, pos []int64) *Block {
	b := &Block{Nodes: nodes, NumDst: numDst, Src: src, Dst: dst}
	for _, q := range pos {
		b.EIDs = append(b.EIDs, v.p.EdgeIDs[q])
		b.ETypes = append(b.ETypes, int16(v.edgeType(q)))
	}
	return b
}

func blocksEqual(a, b *Block) bool {
	return a.NumDst == b.NumDst && slices.Equal(a.Nodes, b.Nodes) && slices.Equal(a.Src, b.Src) && slices.Equal(a.Dst, b.Dst) &&
		slices.Equal(a.EIDs, b.EIDs) && slices.Equal(a.ETypes, b.ETypes) && slices.Equal(a.OrigEIDs, b.OrigEIDs)
}
