package train

import (
	"encoding/binary"
	"testing"

	"gnnrun/cuda"
	"gnnrun/graph"
	"gnnrun/prefetch"
	"gnnrun/sampler"
)

// fakeBatch makes a batch of the shape of an R-MAT scale 20 batch of 1024
// seeds with fanouts 15,10,5: blocks of about 15 k, 150 k and 750 k edges.
func fakeBatch(features cuda.Buffer) *prefetch.Batch {
	var blocks []*sampler.Block
	nodes := 1024
	for _, f := range []int{15, 10, 5} {
		e := nodes * f
		b := &sampler.Block{NumDst: nodes, Nodes: make([]int64, nodes+e/2), Src: make([]int32, e), Dst: make([]int32, e)}
		for i := range b.Src {
			b.Src[i], b.Dst[i] = int32(i%len(b.Nodes)), int32(i/f)
		}
		blocks = append([]*sampler.Block{b}, blocks...)
		nodes = len(b.Nodes)
	}
	labels := make([]int64, 1024)
	return &prefetch.Batch{Batch: &sampler.Batch{Blocks: blocks, Labels: graph.TensorOf(labels, 0)}, Features: features,
		Rows: nodes, RowBytes: 512, InputSlots: make([]int32, nodes)}
}

func newTestHandoff(t testing.TB) (*handoff, cuda.Device) {
	meta, err := cuda.Open(cuda.Host, 0, cuda.Shared())
	if err != nil {
		t.Fatal(err)
	}
	h := &handoff{meta: meta, slots: []*slot{{}, {}}, bufs: bufferIDs{ids: map[cuda.Buffer]int{}, device: map[int]cuda.Buffer{}},
		rowType: graph.Float32, rowShape: []int64{128}}
	return h, meta
}

// The layout writes each array where its reference says, and introduces a
// buffer once, dropping it when it is replaced.
func TestLayout(t *testing.T) {
	h, dev := newTestHandoff(t)
	feat, _ := dev.Alloc(1 << 20)
	b := fakeBatch(feat)
	b.Blocks[2].Dst[7] = 42
	b.Buffer = 1
	b.Update = &prefetch.Update{MovesFrom: []int32{5, 6}, MovesTo: []int32{0, 1}, FetchSlots: []int32{2, 9, 4}}
	msg, fds, err := h.layout(0, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.New) != 2 || len(fds) != 2 || msg.X.Buf != msg.New[1].ID || len(msg.Blocks) != 3 {
		t.Fatalf("first message: new %v, %d fds, x %v, %d blocks", msg.New, len(fds), msg.X, len(msg.Blocks))
	}
	ref := msg.Arrays["dst_2"]
	mem := h.slots[0].buf.Host()
	if ref.DType != "<i4" || ref.Shape[0] != int64(len(b.Blocks[2].Dst)) || binary.LittleEndian.Uint32(mem[ref.Offset+4*7:]) != 42 || ref.Offset%align != 0 {
		t.Fatalf("dst_2 at %+v does not hold the block's destinations", ref)
	}
	if msg.X.Shape[0] != int64(b.Rows) || msg.X.Shape[1] != 128 || msg.X.DType != "<f4" {
		t.Fatalf("x %+v", msg.X)
	}
	// The update a mirror of the buffer applies: which buffer, its rows,
	// and the rows to move, copy and zero (none from a hot cache here).
	up := msg.Update
	fetch, hot := msg.Arrays["up_fetch_slots"], msg.Arrays["up_hot_slots"]
	if up.Buffer != 1 || up.Rows != b.Rows || up.Hot != nil || fetch.Shape[0] != 3 || hot.Shape[0] != 0 ||
		binary.LittleEndian.Uint32(mem[fetch.Offset+4:]) != 9 || msg.Arrays["up_moves_to"].Shape[0] != 2 {
		t.Fatalf("update %+v, fetch slots %+v, hot slots %+v", up, fetch, hot)
	}
	msg, fds, _ = h.layout(0, b)
	if len(msg.New) != 0 || len(fds) != 0 || len(msg.Drop) != 0 {
		t.Fatalf("the same buffers introduced again: %v %v", msg.New, msg.Drop)
	}
	bigger, _ := dev.Alloc(2 << 20)
	b2 := fakeBatch(bigger)
	b2.Buffer = 1
	b2.Blocks[0].Src = append(b2.Blocks[0].Src, make([]int32, 1<<20)...) // the slot grows too
	b2.Blocks[0].Dst = append(b2.Blocks[0].Dst, make([]int32, 1<<20)...)
	msg, _, _ = h.layout(0, b2)
	if len(msg.New) != 2 || len(msg.Drop) != 2 {
		t.Fatalf("a grown slot and a new device buffer: new %v, drop %v", msg.New, msg.Drop)
	}
}

// BenchmarkLayout: one batch's layout into a slot in its steady state
// (the slot's memory touched, the buffers known), against a plain copy of
// the same bytes.
func BenchmarkLayout(b *testing.B) {
	h, dev := newTestHandoff(b)
	feat, _ := dev.Alloc(1 << 20)
	batch := fakeBatch(feat)
	if _, _, err := h.layout(0, batch); err != nil {
		b.Fatal(err)
	}
	before := h.stats.SlotBytes
	h.layout(0, batch)
	n := h.stats.SlotBytes - before
	b.Run("layout", func(b *testing.B) {
		for b.Loop() {
			h.layout(0, batch)
		}
		b.ReportMetric(float64(n), "slot-bytes")
	})
	b.Run("memcpy", func(b *testing.B) {
		src, dst := make([]byte, n), make([]byte, n)
		copy(dst, src)
		for b.Loop() {
			copy(dst, src)
		}
	})
}
