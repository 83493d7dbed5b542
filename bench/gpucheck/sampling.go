package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"gnnrun/collective"
	"gnnrun/cuda"
	"gnnrun/rank"
	"gnnrun/sampler"
	"gnnrun/shard"
)

// Step 5's batches: frontiers of 1024 seeds, sampled at fanouts 15, 10, 5
// (the first nearest the seeds), on the GPU and by the CPU sampler.
const (
	sampleBatch   = 1024
	sampleBatches = 20 // timed on the GPU, after one to warm up
	sampleEpochs  = 3  // of the CPU sampler
	sampleGoal    = 5.0
)

var sampleFanouts = []int{15, 10, 5}

// sampling is step 5: the GPU's neighbour sampling (cuda.GPUGraph, layer
// by layer, with the Go sampler's keys) against the CPU sampler of one
// rank (gnnrun sample) on the same graph, in sampled edges a second. A
// dry run measures the CPU sampler only.
func (c *checker) sampling(st *Step) error {
	g, err := c.graph(st)
	if err != nil {
		return err
	}
	cpu, err := c.cpuSampling(st, g)
	if err != nil {
		return err
	}
	if c.o.dryRun {
		st.Figures = append(st.Figures, fig("CPU sampler, one rank", cpu, "edges/s"))
		st.skip("a dry run: GPU sampling needs a GPU (the CPU sampler's rate is measured)")
		return nil
	}
	st.Commands = append(st.Commands, c.reproduce(5))
	gs, err := c.gpuSampling(g)
	if err != nil {
		return fmt.Errorf("GPU sampling: %w", err)
	}
	st.detail("gpu", gs)
	gpu := float64(gs.Edges) / gs.Seconds
	st.note("the GPU's rate is of SampleLayer calls as gnnrun would make them, each copying its frontier in and its block "+
		"back to the host: %d batches of %d random inner nodes, %d layers each; the CPU sampler's is gnnrun sample's on one "+
		"rank (one batch at a time) over %d epochs of the training nodes, on this host's %d cores", sampleBatches, sampleBatch,
		len(sampleFanouts), sampleEpochs, runtime.NumCPU())
	st.Figures = append(st.Figures,
		fig("GPU sampling", gpu, "edges/s").ratio("GPU / CPU sampler", gpu/cpu, ">=", sampleGoal).
			withNote("%d edges in %s s; the CPU sampler %s edges/s", gs.Edges, num(gs.Seconds), num(cpu)))
	calls := float64(gs.Batches * len(sampleFanouts))
	st.note("per SampleLayer call (%d): drawing %s ms, numbering %s ms, the block back to the host %s ms (%s MiB, %s GB/s)",
		int(calls), num(1e3*gs.DrawSeconds/calls), num(1e3*gs.CompactSeconds/calls), num(1e3*gs.CopyBackSeconds/calls),
		num(float64(gs.BytesBack)/calls/(1<<20)), num(float64(gs.BytesBack)/gs.CopyBackSeconds/1e9))
	return nil
}

// cpuSampling runs gnnrun sample on one rank and returns its edges/s.
func (c *checker) cpuSampling(st *Step, g *graph) (float64, error) {
	rep, err := c.reportPath("5-sample")
	if err != nil {
		return 0, err
	}
	if _, err := c.run(st, c.gnnrunCmd("5-sample", "sample", g.parts, "--fanouts", "15,10,5", "--batch-size", fmt.Sprint(sampleBatch),
		"--epochs", fmt.Sprint(sampleEpochs), "--report", rep)); err != nil {
		return 0, err
	}
	r, err := readReport(rep)
	if err != nil {
		return 0, err
	}
	s := r.Results.Sample
	if s == nil || s.Edges == 0 || s.EdgesPerS <= 0 {
		return 0, fmt.Errorf("%s: no sampled edges", rep)
	}
	st.detail("cpu", s)
	return s.EdgesPerS, nil
}

// gpuRun is what the GPU's sampling took.
type gpuRun struct {
	Batches int     `json:"batches"`
	Edges   int64   `json:"edges"`
	Seconds float64 `json:"seconds"`
	// The timed calls' phases (cuda.LayerTimes), in seconds, and the
	// bytes of the blocks copied back.
	DrawSeconds     float64 `json:"draw_seconds"`
	CompactSeconds  float64 `json:"compact_seconds"`
	CopyBackSeconds float64 `json:"copy_back_seconds"`
	BytesBack       int64   `json:"bytes_back"`
}

// gpuSampling opens the graph's one partition in a world of one, copies
// its CSC to the GPU, and times sampleBatches batches.
func (c *checker) gpuSampling(g *graph) (gpuRun, error) {
	var out gpuRun
	err := rank.RunLocal(1, func(rc rank.Comm) error {
		comm, err := collective.New(rc)
		if err != nil {
			return err
		}
		p, err := shard.Open(comm, g.parts, 0)
		if err != nil {
			return err
		}
		defer p.Close()
		if n := len(p.Config.EdgeTypes); n != 1 || p.Config.NumParts != 1 {
			return fmt.Errorf("%s: %d partitions, %d edge types; step 5 samples one partition of one edge type", g.parts, p.Config.NumParts, n)
		}
		dev, err := cuda.Open(cuda.CUDA, 0)
		if err != nil {
			return err
		}
		out, err = sampleOnGPU(dev, p)
		return errors.Join(err, dev.Close())
	}, rank.Timeout(c.o.timeout))
	return out, err
}

// sampleOnGPU samples batches of random inner nodes of p layer by layer
// on dev: one to warm up, then sampleBatches timed.
func sampleOnGPU(dev cuda.Device, p *shard.Partition) (gpuRun, error) {
	gg, err := cuda.NewGPUGraph(dev, cuda.CSC{TypedIndptr: p.Indptr, EdgeTypes: 1, Indices32: p.Indices32, Indices64: p.Indices64,
		NumInner: p.NumInner, Lo: p.Lo, Local2Global: p.Local2Global})
	if err != nil {
		return gpuRun{}, err
	}
	var r gpuRun
	rng := rand.New(rand.NewPCG(5, 5))
	var start time.Time
	var warm cuda.LayerTimes
	for b := range sampleBatches + 1 {
		if b == 1 {
			start, r, warm = time.Now(), gpuRun{}, gg.Spent()
		}
		frontier := seeds(rng, p.Lo, p.NumInner, sampleBatch)
		for layer, f := range sampleFanouts {
			blk, err := gg.SampleLayer(frontier, sampler.BatchKey(1, 0, int64(b)), layer, []int{f}, false)
			if err == nil {
				err = checkBlock(blk, frontier, f)
			}
			if err != nil {
				return r, errors.Join(fmt.Errorf("batch %d layer %d: %w", b, layer, err), gg.Close())
			}
			r.Edges += int64(len(blk.Src))
			frontier = blk.Nodes
		}
		r.Batches++
	}
	r.Seconds = time.Since(start).Seconds()
	spent := gg.Spent()
	r.DrawSeconds = (spent.Draw - warm.Draw).Seconds()
	r.CompactSeconds = (spent.Compact - warm.Compact).Seconds()
	r.CopyBackSeconds = (spent.CopyBack - warm.CopyBack).Seconds()
	r.BytesBack = spent.BytesBack - warm.BytesBack
	return r, gg.Close()
}

// seeds draws n distinct nodes of [lo, lo+count) (all of them when
// count <= n).
func seeds(rng *rand.Rand, lo, count int64, n int) []int64 {
	if count <= int64(n) {
		out := make([]int64, count)
		for i := range out {
			out[i] = lo + int64(i)
		}
		return out
	}
	seen := make(map[int64]bool, n)
	out := make([]int64, 0, n)
	for len(out) < n {
		v := lo + rng.Int64N(count)
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// checkBlock checks the shape of a sampled layer: its destinations are
// the frontier, in order, each with at most fanout edges, and every edge
// joins two of its nodes. (The blocks' equality with the Go sampler's is
// step 1's sampler tests.)
func checkBlock(b *cuda.SampledBlock, frontier []int64, fanout int) error {
	ne := len(b.Src)
	switch {
	case b.NumDst != len(frontier) || len(b.Nodes) < b.NumDst || !slices.Equal(b.Nodes[:b.NumDst], frontier):
		return fmt.Errorf("the block's %d destinations are not the frontier's %d nodes", b.NumDst, len(frontier))
	case len(b.Dst) != ne || len(b.Pos) != ne || ne > fanout*len(frontier):
		return fmt.Errorf("%d sources, %d destinations and %d positions for at most %d edges", ne, len(b.Dst), len(b.Pos), fanout*len(frontier))
	}
	for i := range ne {
		if b.Src[i] < 0 || int(b.Src[i]) >= len(b.Nodes) || b.Dst[i] < 0 || int(b.Dst[i]) >= b.NumDst {
			return fmt.Errorf("edge %d joins %d to %d, outside the block's %d nodes", i, b.Src[i], b.Dst[i], len(b.Nodes))
		}
	}
	return nil
}
