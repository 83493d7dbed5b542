package sampler

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/graphio"
	"gnnrun/internal/proc"
	"gnnrun/internal/testgraph"
	"gnnrun/shard"
)

// benchScale is the R-MAT scale of the benchmarks' graph: 2^18 nodes and
// 2^22 edges, made once in the user's cache directory (about 20 s), hash
// partitioned into 4 partitions; GNNRUN_SAMPLE_PARTS names another
// partition directory instead (bench/sample's scale 20 one, say).
const benchScale = 18

var benchParts struct {
	once sync.Once
	dir  string
	err  error
}

// benchPartsDir returns the benchmarks' partition directory.
func benchPartsDir(b *testing.B) string {
	b.Helper()
	if dir := os.Getenv("GNNRUN_SAMPLE_PARTS"); dir != "" {
		return dir
	}
	benchParts.once.Do(func() { benchParts.dir, benchParts.err = makeBenchParts() })
	if benchParts.err != nil {
		b.Fatal(benchParts.err)
	}
	return benchParts.dir
}

func makeBenchParts() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "gnnrun", fmt.Sprintf("sampler-bench-rmat%d-k4", benchScale))
	parts := filepath.Join(dir, "parts")
	if _, err := os.Stat(filepath.Join(parts, "done")); err == nil {
		return parts, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	gen := graphio.GenSpec{Scale: benchScale, Classes: 10, Seed: 1, Permute: true}
	gen.SetDefaults(1)
	meta := gen.Meta()
	in := filepath.Join(dir, "graph")
	err = testgraph.WorldRun(1, func(c *collective.Comm) error {
		if _, err := graphio.Generate(c, gen, in, nil); err != nil {
			return err
		}
		g, err := graphio.Read(c, in)
		if err != nil {
			return err
		}
		defer g.Close()
		part := make([]int32, meta.TotalNodes())
		for h := range part {
			part[h] = int32(graph.Mix64(uint64(h)*7+3) % 4)
		}
		asg := filepath.Join(dir, "asg")
		if _, err := graphio.WriteAssignment(c, asg, &meta, 0, part, 4); err != nil {
			return err
		}
		a, err := graphio.ReadAssignment(c, asg, &g.Meta, 0)
		if err != nil {
			return err
		}
		_, err = shard.Dispatch(c, g, a, parts)
		return err
	})
	if err != nil {
		return "", err
	}
	return parts, os.WriteFile(filepath.Join(parts, "done"), nil, 0o644)
}

// BenchmarkSample samples batches of 1024 training nodes at fanouts
// 15,10,5 on one rank serving every partition, and reports ns per sampled
// edge beside limit-ns/edge: a plain loop reading, for the same
// destination nodes, their indptr entries and as many random entries of
// their indices ranges as were drawn (bench/sample's limit), run after the
// timed batches.
func BenchmarkSample(b *testing.B) {
	for _, tr := range []shard.Transport{shard.Alltoall} {
		b.Run(tr.String(), func(b *testing.B) { benchSample(b, Options{Fanouts: []int{15, 10, 5}, Seed: 1, Transport: tr}) })
	}
}

// onBenchSampler runs fn with a sampler over the benchmarks' partitions on
// one rank, with options o, and the plan of batches of 1024 training nodes.
func onBenchSampler(b *testing.B, o Options, fn func(s *shard.Served, plan *Plan, sm *Sampler) error) {
	dir := benchPartsDir(b)
	testgraph.World(b, 1, func(c *collective.Comm) error {
		s, err := shard.Serve(c, dir)
		if err != nil {
			return err
		}
		defer s.Close()
		plan, err := NewNodePlan(c, s, s.Config.NodeTypes[0], "train_mask", 1024)
		if err != nil {
			return err
		}
		sm, err := New(c, s, o)
		if err != nil {
			return err
		}
		defer sm.Close()
		return fn(s, plan, sm)
	})
}

func benchSample(b *testing.B, o Options) {
	onBenchSampler(b, o, func(s *shard.Served, plan *Plan, sm *Sampler) error {
		tasks := plan.Epoch(1, 0)
		var last []*Batch
		b.ResetTimer()
		t0, c0, f0 := time.Now(), proc.CPU().Seconds(), pageFaults()
		for i := range b.N {
			bt, err := sm.SampleTask(tasks[i%len(tasks)])
			if err != nil {
				return err
			}
			if len(last) == 24 {
				last = last[1:]
			}
			last = append(last, bt)
		}
		secs, cpu, faults := time.Since(t0).Seconds(), proc.CPU().Seconds()-c0, pageFaults()-f0
		b.StopTimer()
		b.ReportMetric(float64(faults)/float64(b.N), "faults/op")
		edges := sm.Stats().Edges
		b.ReportMetric(1e9*secs/float64(edges), "ns/edge")
		b.ReportMetric(1e9*cpu/float64(edges), "cpu-ns/edge")
		b.ReportMetric(float64(edges)/float64(b.N), "edges/op")
		limit, limitCPU, reads := limitLoop(s, last)
		b.ReportMetric(1e9*limit/float64(reads), "limit-ns/edge")
		b.ReportMetric(1e9*limitCPU/float64(reads), "limit-cpu-ns/edge")
		return nil
	})
}

// pageFaults returns the minor page faults of the process so far.
func pageFaults() int64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return u.Minflt
}

// limitLoop is bench/sample's limit over the batches: it returns the
// seconds, the CPU seconds and the entries read.
func limitLoop(s *shard.Served, batches []*Batch) (float64, float64, int64) {
	type visit struct {
		p     *shard.Partition
		local int64
		edges int32
	}
	var visits []visit
	for _, bt := range batches {
		for _, bl := range bt.Blocks {
			counts := make([]int32, bl.NumDst)
			for _, d := range bl.Dst {
				counts[d]++
			}
			for i, v := range bl.Nodes[:bl.NumDst] {
				if p := s.Local(s.Book.Part(v)); p != nil {
					visits = append(visits, visit{p, v - p.Lo, counts[i]})
				}
			}
		}
	}
	x := uint64(0x9e3779b97f4a7c15)
	var sum, reads int64
	t0, c0 := time.Now(), proc.CPU().Seconds()
	for _, v := range visits {
		a, b := v.p.Indptr[v.local], v.p.Indptr[v.local+1]
		n := uint64(b - a)
		for range v.edges {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			sum += v.p.Index(a + int64((x>>32)*n>>32))
		}
		reads += int64(v.edges)
	}
	secs, cpu := time.Since(t0).Seconds(), proc.CPU().Seconds()-c0
	if sum == 42 {
		fmt.Fprint(os.Stderr, "")
	}
	return secs, cpu, reads
}

// BenchmarkFloyd draws fanouts 15, 10 and 5 of ranges of 16 to 512
// positions (where floydSmall applies) by the small range's bitmap and by
// the sorted set, ns per node.
func BenchmarkFloyd(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	type node struct {
		draws []uint64
		m     int64
	}
	nodes := make([]node, 4096)
	for i := range nodes {
		k := []int{15, 10, 5}[i%3]
		nodes[i] = node{make([]uint64, k), int64(k + 1 + rng.IntN(512-k))}
		for j := range nodes[i].draws {
			nodes[i].draws[j] = rng.Uint64()
		}
	}
	for _, path := range []struct {
		name string
		f    func(*chooser, []uint64, int64) []int64
	}{{"small", floydSmall}, {"sorted", floydSorted}} {
		b.Run(path.name, func(b *testing.B) {
			c := &chooser{}
			for i := range b.N {
				n := nodes[i%len(nodes)]
				path.f(c, n.draws, n.m)
			}
		})
	}
}

// BenchmarkNumber numbers the blocks of batches sampled as BenchmarkSample
// samples them (their destinations and their edges' global sources) with
// the sampler's marks, and reports ns per entry.
func BenchmarkNumber(b *testing.B) {
	type block struct{ dst, src []int64 }
	var blocks []block
	var marks *denseMarks
	onBenchSampler(b, Options{Fanouts: []int{15, 10, 5}, Seed: 1, Transport: shard.Alltoall}, func(s *shard.Served, plan *Plan, sm *Sampler) error {
		for _, t := range plan.Epoch(1, 0)[:20] {
			bt, err := sm.SampleTask(t)
			if err != nil {
				return err
			}
			for _, bl := range bt.Blocks {
				src := make([]int64, len(bl.Src))
				for k, l := range bl.Src {
					src[k] = bl.Nodes[l]
				}
				blocks = append(blocks, block{bl.Nodes[:bl.NumDst], src})
			}
		}
		marks = servedMarks(s)
		return nil
	})
	var idx []int32
	var nodes []int64
	entries := 0
	b.ResetTimer()
	for i := range b.N {
		bl := blocks[i%len(blocks)]
		idx = grow32(idx, len(bl.src))
		nodes = append(nodes[:0], bl.dst...)
		nodes, _ = marks.number(bl.dst, bl.src, idx, nodes)
		entries += len(bl.dst) + len(bl.src)
	}
	b.StopTimer()
	marks.free()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(entries), "ns/entry")
}

// BenchmarkEdgeTableFill makes the edge table of the benchmarks'
// partitions (GNNRUN_SAMPLE_PARTS: another directory), served on one
// rank, by 1 and by 2 workers, and reports ns per entry. Each table is a
// fresh mapping: its pages' first touches are part of the time, as they
// are when a job starts.
func BenchmarkEdgeTableFill(b *testing.B) {
	dir := benchPartsDir(b)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			testgraph.World(b, 1, func(c *collective.Comm) error {
				s, err := shard.Serve(c, dir)
				if err != nil {
					return err
				}
				defer s.Close()
				s.Checks.Workers = workers
				var entries int64
				for b.Loop() {
					t := newEdgeTable(s)
					entries += t.served
					t.free()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(entries), "ns/entry")
				return nil
			})
		})
	}
}
