//go:build cgo && linux

package cuda

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// GPUGraph is one partition's CSC in a GPU's memory, sampled a layer at a
// time by the kernels of kernels/sample.cu and compact.cu: the draws the
// Go sampler makes (uniform, with or without replacement, per-type
// fanouts), keyed alike, and the block it builds of them. Weighted draws
// and exclusions stay on the CPU. A GPUGraph is used by one goroutine at a
// time.
type GPUGraph struct {
	dev  *gpuDevice
	s    *gpuStream
	c    CSC  // its sizes; the arrays are not kept
	wide bool // int64 indices
	tptr *gpuBuffer
	idx  *gpuBuffer
	l2g  *gpuBuffer
	bufs map[string]*gpuBuffer // per-layer arrays, grown as needed
	k    sampleKernels
	// back is host memory registered with the device (backPin) that a
	// block is copied into on its way to the SampledBlock's slices: a copy
	// to pageable memory goes through the driver's own staging at a few
	// GB/s. Grown as needed.
	back    []byte
	backPin Pinned
	// spent sums the SampleLayer calls' phases (Spent).
	spent LayerTimes
}

// Spent returns where the SampleLayer calls so far spent their time.
func (g *GPUGraph) Spent() LayerTimes { return g.spent }

// sampleKernel is a sampling kernel's handle and name.
type sampleKernel struct {
	name string
	h    uintptr
}

type sampleKernels struct {
	count, draw, sources, scanSums, scanChunks, clear, insert, flags, number, relabel sampleKernel
}

// The launches, which the CPU harness (kernels/harness/sample.cc) makes
// alike: blocks of sampleBlock threads, one thread per destination, edge,
// appearance or chunk; the scan in chunks of scanChunk.
const (
	sampleBlock = 256
	scanChunk   = 128
)

// NewGPUGraph copies c's arrays to dev, which must be a CUDA device (an
// error wrapping ErrNoGPU otherwise), and returns the graph; Close frees
// it.
func NewGPUGraph(dev Device, c CSC) (*GPUGraph, error) {
	d, ok := dev.(*gpuDevice)
	if !ok {
		return nil, fmt.Errorf("cuda: sampling on a GPU needs a CUDA device, not %s (%w)", dev.Name(), ErrNoGPU)
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	g := &GPUGraph{dev: d, c: c, wide: c.Indices64 != nil, bufs: map[string]*gpuBuffer{}}
	if err := g.open(); err != nil {
		g.Close()
		return nil, err
	}
	g.c.TypedIndptr, g.c.Indices32, g.c.Indices64, g.c.Local2Global = nil, nil, nil, nil
	return g, nil
}

// open finds the kernels, makes the stream and copies the arrays.
func (g *GPUGraph) open() error {
	k := &g.k
	for _, f := range []struct {
		k    *sampleKernel
		name string
	}{
		{&k.count, "gnnrun_sample_count"}, {&k.draw, "gnnrun_sample_draw"}, {&k.sources, "gnnrun_sample_sources"},
		{&k.scanSums, "gnnrun_scan_sums"}, {&k.scanChunks, "gnnrun_scan_chunks"},
		{&k.clear, "gnnrun_compact_clear"}, {&k.insert, "gnnrun_compact_insert"}, {&k.flags, "gnnrun_compact_flags"},
		{&k.number, "gnnrun_compact_number"}, {&k.relabel, "gnnrun_compact_relabel"},
	} {
		h, err := g.dev.function(f.name)
		if err != nil {
			return err
		}
		*f.k = sampleKernel{name: f.name, h: h}
	}
	s, err := g.dev.NewStream()
	if err != nil {
		return err
	}
	g.s = s.(*gpuStream)
	idx := bytesOf(g.c.Indices32)
	if g.wide {
		idx = bytesOf(g.c.Indices64)
	}
	for _, a := range []struct {
		b    **gpuBuffer
		host []byte
	}{{&g.tptr, bytesOf(g.c.TypedIndptr)}, {&g.idx, idx}, {&g.l2g, bytesOf(g.c.Local2Global)}} {
		buf, err := g.dev.Alloc(int64(len(a.host)))
		if err != nil {
			return err
		}
		*a.b = buf.(*gpuBuffer)
		if err := g.s.CopyToDevice(buf, 0, a.host); err != nil {
			return err
		}
	}
	return g.s.Sync()
}

// Close frees the graph's device memory and stream.
func (g *GPUGraph) Close() error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	if g.s != nil {
		keep(g.s.Close())
		g.s = nil
	}
	for _, b := range []**gpuBuffer{&g.tptr, &g.idx, &g.l2g} {
		if *b != nil {
			keep((*b).Free())
			*b = nil
		}
	}
	for name, b := range g.bufs {
		keep(b.Free())
		delete(g.bufs, name)
	}
	keep(g.freeBack())
	return first
}

// SampleLayer draws the in-edges of each node of frontier (distinct
// global IDs of the partition's inner nodes) at layer under key (the
// sampler's BatchKey of the seed, epoch and batch): fanouts[t] of its
// in-edges of edge type t (-1: all, 0: none), with replacement when
// replace, as the Go sampler draws them, and returns the block the Go
// sampler builds of them. It fails on a frontier node outside the
// partition or listed twice, and on a block too large for int32 indices.
func (g *GPUGraph) SampleLayer(frontier []int64, key [2]uint32, layer int, fanouts []int, replace bool) (*SampledBlock, error) {
	if g.s == nil {
		return nil, fmt.Errorf("cuda: SampleLayer on a closed GPUGraph")
	}
	if err := g.c.checkLayer(frontier, fanouts); err != nil {
		return nil, err
	}
	b, err := g.sampleLayer(frontier, key, layer, fanouts, replace)
	if err != nil {
		g.s.Sync() // nothing queued may outlive the call: the next one reuses the buffers
	}
	return b, err
}

func (g *GPUGraph) sampleLayer(frontier []int64, key [2]uint32, layer int, fanouts []int, replace bool) (*SampledBlock, error) {
	nd := int64(len(frontier))
	start := time.Now()
	ne, err := g.draw(frontier, key, layer, fanouts, replace)
	if err != nil {
		return nil, err
	}
	drawn := time.Now()
	g.spent.Draw += drawn.Sub(start)
	if nd+ne > math.MaxInt32 {
		return nil, fmt.Errorf("cuda: a block of %d destinations and %d edges: too many for int32 indices", nd, ne)
	}
	fresh, err := g.compact(nd, ne)
	if err != nil {
		return nil, err
	}
	numbered := time.Now()
	g.spent.Compact += numbered.Sub(drawn)
	b := &SampledBlock{Nodes: make([]int64, nd+fresh), NumDst: int(nd), Src: make([]int32, ne), Dst: make([]int32, ne), Pos: make([]int64, ne)}
	parts := []struct {
		host []byte
		name string
	}{{bytesOf(b.Nodes), "nodes"}, {bytesOf(b.Src), "bsrc"}, {bytesOf(b.Dst), "bdst"}, {bytesOf(b.Pos), "pos"}}
	total := 0
	for _, c := range parts {
		total += len(c.host)
	}
	if err := g.growBack(total); err != nil {
		return nil, err
	}
	off := 0
	for _, c := range parts {
		if err := g.s.CopyToHost(g.back[off:off+len(c.host)], g.bufs[c.name], 0); err != nil {
			return nil, err
		}
		off += len(c.host)
	}
	if err := g.s.Sync(); err != nil {
		return nil, err
	}
	off = 0
	for _, c := range parts {
		off += copy(c.host, g.back[off:])
	}
	g.spent.BytesBack += int64(total)
	g.spent.CopyBack += time.Since(numbered)
	return b, nil
}

// growBack makes the registered host memory hold at least n bytes.
func (g *GPUGraph) growBack(n int) error {
	if len(g.back) >= n {
		return nil
	}
	if err := g.freeBack(); err != nil {
		return err
	}
	size := (max(n+n/4, 1<<20) + 1<<16 - 1) &^ (1<<16 - 1)
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return fmt.Errorf("cuda: %d bytes of host memory for the blocks: %w", size, err)
	}
	pin, err := g.dev.Register(mem)
	if err != nil {
		return errors.Join(err, unix.Munmap(mem))
	}
	g.back, g.backPin = mem, pin
	return nil
}

// freeBack unregisters and unmaps the registered host memory, if any.
func (g *GPUGraph) freeBack() error {
	if g.back == nil {
		return nil
	}
	err := errors.Join(g.backPin.Unregister(), unix.Munmap(g.back))
	g.back, g.backPin = nil, nil
	return err
}

// draw counts each destination's edges, scans the counts into offsets
// ("offs"), and draws the edges' positions ("pos") and sources ("src"),
// returning how many edges there are. It waits once, for that number.
func (g *GPUGraph) draw(frontier []int64, key [2]uint32, layer int, fanouts []int, replace bool) (int64, error) {
	nd := int64(len(frontier))
	f32 := make([]int32, len(fanouts))
	for t, f := range fanouts {
		f32[t] = int32(f)
	}
	p, err := g.grow(map[string]int64{"frontier": 8 * nd, "fanouts": int64(4 * len(f32)), "offs": 8 * (nd + 1), "scan": 8 * scanScratch(nd)})
	if err != nil {
		return 0, err
	}
	if err := g.s.CopyToDevice(g.bufs["frontier"], 0, bytesOf(frontier)); err != nil {
		return 0, err
	}
	if err := g.s.CopyToDevice(g.bufs["fanouts"], 0, bytesOf(f32)); err != nil {
		return 0, err
	}
	lo, e, rep := g.c.Lo, int32(g.c.EdgeTypes), int32(0)
	if replace {
		rep = 1
	}
	if err := g.launch(g.k.count, nd, p["frontier"], nd, lo, g.tptr.ptr, e, p["fanouts"], rep, p["offs"]); err != nil {
		return 0, err
	}
	if err := g.scan(p["offs"], nd, p["offs"], p["scan"]); err != nil {
		return 0, err
	}
	ne, err := g.readInt64(g.bufs["offs"], nd)
	if err != nil {
		return 0, err
	}
	if p, err = g.grow(map[string]int64{"pos": 8 * ne, "src": 8 * ne}); err != nil {
		return 0, err
	}
	err = g.launch(g.k.draw, nd, g.bufs["frontier"].ptr, nd, lo, g.tptr.ptr, e, g.bufs["fanouts"].ptr, rep, key[0], key[1], int32(layer),
		g.bufs["offs"].ptr, p["pos"])
	if err != nil {
		return 0, err
	}
	idx32, idx64 := g.idx.ptr, uint64(0)
	if g.wide {
		idx32, idx64 = 0, g.idx.ptr
	}
	return ne, g.launch(g.k.sources, ne, p["pos"], ne, idx32, idx64, g.c.NumInner, lo, g.l2g.ptr, p["src"])
}

// compact numbers the layer's nodes and relabels its edges ("nodes",
// "bsrc", "bdst") and returns how many sources are not destinations. It
// waits once, for that number and the count of destinations listed twice.
func (g *GPUGraph) compact(nd, ne int64) (int64, error) {
	app := nd + ne
	capacity := tableCap(app)
	p, err := g.grow(map[string]int64{"keys": 8 * capacity, "first": 8 * capacity, "ids": 4 * capacity, "slot": 8 * app,
		"fresh": 8 * (ne + 1), "scan": 8 * scanScratch(ne), "nodes": 8 * app, "bsrc": 4 * ne, "bdst": 4 * ne, "dups": 8})
	if err != nil {
		return 0, err
	}
	dst, src, offs := g.bufs["frontier"].ptr, g.bufs["src"].ptr, g.bufs["offs"].ptr
	steps := []func() error{
		func() error { return g.launch(g.k.clear, capacity, p["keys"], p["first"], capacity, p["dups"]) },
		func() error {
			return g.launch(g.k.insert, app, dst, nd, src, ne, p["keys"], p["first"], capacity-1, p["slot"])
		},
		func() error { return g.launch(g.k.flags, app, nd, ne, p["slot"], p["first"], p["fresh"], p["dups"]) },
		func() error { return g.scan(p["fresh"], ne, p["fresh"], p["scan"]) },
		func() error {
			return g.launch(g.k.number, app, dst, nd, src, ne, p["slot"], p["first"], p["fresh"], p["ids"], p["nodes"])
		},
		func() error {
			return g.launch(g.k.relabel, ne, nd, ne, p["slot"], p["ids"], offs, p["bsrc"], p["bdst"])
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return 0, err
		}
	}
	dups, err := g.readInt64(g.bufs["dups"], 0)
	if err != nil {
		return 0, err
	}
	if dups != 0 {
		return 0, fmt.Errorf("cuda: %d nodes of the frontier are listed more than once", dups)
	}
	return g.readInt64(g.bufs["fresh"], ne)
}

// scan writes the exclusive prefix sums of the n int64s at x to out[0..n],
// out[n] their total (kernels/scan.cuh), with scanScratch(n) int64s of
// scratch; x and out may be the same.
func (g *GPUGraph) scan(x uint64, n int64, out uint64, scratch uint64) error {
	if n <= scanChunk {
		return g.launchGrid(g.k.scanChunks, 1, 1, x, n, int64(scanChunk), uint64(0), out)
	}
	c := (n + scanChunk - 1) / scanChunk
	sums := scratch
	if err := g.launch(g.k.scanSums, c, x, n, int64(scanChunk), sums); err != nil {
		return err
	}
	if err := g.scan(sums, c, sums, scratch+uint64(8*(c+1))); err != nil {
		return err
	}
	return g.launch(g.k.scanChunks, c, x, n, int64(scanChunk), sums, out)
}

// scanScratch returns the int64s the scan of n values needs besides its
// output: each level's chunk sums and their total.
func scanScratch(n int64) int64 {
	s := int64(0)
	for n > scanChunk {
		n = (n + scanChunk - 1) / scanChunk
		s += n + 1
	}
	return s
}

// tableCap returns the slots of the compaction's hash table: a power of
// two, at least twice the appearances (destinations and edges).
func tableCap(appearances int64) int64 {
	c := int64(16)
	for c < 2*appearances {
		c *= 2
	}
	return c
}

// grow makes each named buffer hold at least its bytes and returns the
// buffers' device addresses. A buffer too small is freed and allocated
// anew, its contents lost: no kernel queued may use it.
func (g *GPUGraph) grow(need map[string]int64) (map[string]uint64, error) {
	p := map[string]uint64{}
	for name, n := range need {
		b := g.bufs[name]
		if b == nil || b.n < n {
			if b != nil {
				delete(g.bufs, name)
				if err := b.Free(); err != nil {
					return nil, err
				}
			}
			nb, err := g.dev.Alloc(max(n+n/4, 1<<12))
			if err != nil {
				return nil, err
			}
			b = nb.(*gpuBuffer)
			g.bufs[name] = b
		}
		p[name] = b.ptr
	}
	return p, nil
}

// readInt64 waits for the stream and returns int64 number i of b.
func (g *GPUGraph) readInt64(b *gpuBuffer, i int64) (int64, error) {
	v := []int64{0}
	if err := g.s.CopyToHost(bytesOf(v), b, 8*i); err != nil {
		return 0, err
	}
	return v[0], g.s.Sync()
}

// launch runs k on the graph's stream over n threads, in blocks of
// sampleBlock; none when n is 0.
func (g *GPUGraph) launch(k sampleKernel, n int64, args ...any) error {
	if n == 0 {
		return nil
	}
	return g.launchGrid(k, uint32((n+sampleBlock-1)/sampleBlock), sampleBlock, args...)
}

// launchGrid runs k over grid blocks of block threads with args: device
// addresses (uint64), int64, int32 and uint32 values, as the kernel's
// parameters are declared.
func (g *GPUGraph) launchGrid(k sampleKernel, grid, block uint32, args ...any) error {
	vals := make([]uint64, len(args))
	params := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case uint64:
			vals[i] = v
		case int64:
			vals[i] = uint64(v)
		case int32:
			vals[i] = uint64(uint32(v)) // the low 4 bytes, little-endian
		case uint32:
			vals[i] = uint64(v)
		default:
			return fmt.Errorf("cuda: %s: a parameter of type %T", k.name, a)
		}
		params[i] = unsafe.Pointer(&vals[i])
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&vals[0])
	pin.Pin(&params[0])
	return g.dev.call("cuLaunchKernel "+k.name, func() int32 {
		return g.dev.d.cuLaunchKernel(k.h, grid, 1, 1, block, 1, 1, 0, g.s.s, unsafe.Pointer(&params[0]), nil)
	})
}

// bytesOf views a slice of fixed-size numbers as bytes.
func bytesOf[T int32 | int64](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}
