package sampler

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"gnnrun/cuda"
)

// The GPU checks of the sampling kernels (skipped without a GPU):
// cuda.GPUGraph draws and compacts what the CPU harness does, which is
// what this package does.

// openSamplingGPU opens GPU 0, or skips the test saying why there is none.
func openSamplingGPU(t *testing.T) cuda.Device {
	t.Helper()
	if _, err := cuda.Probe(0); err != nil {
		t.Skipf("no GPU to sample on, the test is skipped: %v", err)
	}
	dev, err := cuda.Open(cuda.CUDA, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dev.Close(); err != nil {
			t.Error(err)
		}
	})
	return dev
}

// gpuGraph copies v's partition to dev.
func gpuGraph(t *testing.T, dev cuda.Device, v *view) *cuda.GPUGraph {
	t.Helper()
	g, err := cuda.NewGPUGraph(dev, cuda.CSC{TypedIndptr: v.tptr, EdgeTypes: v.etypes, Indices32: v.p.Indices32, Indices64: v.p.Indices64,
		NumInner: v.p.NumInner, Lo: v.p.Lo, Local2Global: v.p.Local2Global})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Error(err)
		}
	})
	return g
}

// Per made-up graph, fanout, replacement, key and layer, the GPU draws
// each destination's positions as the Go sampler does and builds its
// block; a frontier listing a node twice is refused.
func TestGPUSampleLayer(t *testing.T) {
	dev := openSamplingGPU(t)
	for _, kg := range kernelGraphs(t) {
		g := gpuGraph(t, dev, kg.v)
		for _, f := range kernelFanouts {
			for _, replace := range []bool{false, true} {
				for c, kl := range kernelLayers {
					fanouts := kg.fanouts(f, c)
					want := sampleGoLayer(t, kg.v, kg.frontier, fanouts, replace, kl.key, kl.layer)
					got, err := g.SampleLayer(kg.frontier, kl.key, kl.layer, fanouts, replace)
					if err != nil {
						t.Fatal(err)
					}
					what := fmt.Sprintf("%s fanouts %v replace=%v layer %d", kg.name, fanouts, replace, kl.layer)
					if !slices.Equal(got.Pos, want.pos) {
						t.Fatalf("%s: positions differ at edge %d", what, firstDiff(got.Pos, want.pos))
					}
					if b := want.block; got.NumDst != b.NumDst || !slices.Equal(got.Nodes, b.Nodes) || !slices.Equal(got.Src, b.Src) || !slices.Equal(got.Dst, b.Dst) {
						t.Fatalf("%s: the block differs from the Go sampler's", what)
					}
				}
			}
		}
		twice := append(slices.Clone(kg.frontier), kg.frontier[0])
		if _, err := g.SampleLayer(twice, kernelLayers[0].key, 0, kg.fanouts(5, 0), false); err == nil {
			t.Errorf("%s: a frontier listing node %d twice was sampled", kg.name, kg.frontier[0])
		}
	}
}

// Whole batches sampled layer by layer on the GPU over a served
// one-partition graph equal the Go sampler's (see
// TestKernelBatchesEqualSampler).
func TestGPUBatchesEqualSampler(t *testing.T) {
	dev := openSamplingGPU(t)
	for _, sb := range servedCases(t) {
		g := gpuGraph(t, dev, sb.v)
		for b, s := range sb.batches {
			frontier := s.seeds
			for layer := range sb.fanouts {
				sl, err := g.SampleLayer(frontier, sb.key(b), layer, sb.fanouts[layer], sb.o.Replace)
				if err != nil {
					t.Fatal(err)
				}
				got := blockAt(sb.v, sl.NumDst, sl.Nodes, sl.Src, sl.Dst, sl.Pos)
				if !blocksEqual(got, s.blocks[len(s.blocks)-1-layer]) {
					t.Fatalf("%s batch %d layer %d: the GPU's block differs from the sampler's", sb.name, b, layer)
				}
				frontier = got.Nodes
			}
		}
	}
}

// Without a GPU (no driver, or a build without cgo) and on the host
// backend, a GPUGraph cannot be made, with an error wrapping
// cuda.ErrNoGPU.
func TestGPUGraphNeedsAGPU(t *testing.T) {
	host, err := cuda.Open(cuda.Host, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	v := kernelGraphs(t)[0].v
	_, err = cuda.NewGPUGraph(host, cuda.CSC{TypedIndptr: v.tptr, EdgeTypes: 1, Indices32: v.p.Indices32, NumInner: v.p.NumInner, Lo: v.p.Lo, Local2Global: v.p.Local2Global})
	if !errors.Is(err, cuda.ErrNoGPU) {
		t.Fatalf("a GPUGraph on the host backend: %v, want an error wrapping ErrNoGPU", err)
	}
}
