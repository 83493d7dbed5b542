package train

import (
	"fmt"

	"gnnrun/cuda"
	"gnnrun/prefetch"
	"gnnrun/sampler"
)

// arrayRef says where an array lies: in which shared buffer, at which
// byte, of which type and shape (numpy's words).
type arrayRef struct {
	Buf    int     `json:"buf"`
	Offset int64   `json:"offset"`
	DType  string  `json:"dtype"`
	Shape  []int64 `json:"shape"`
}

// newBuffer introduces a shared buffer to the trainer: Kind "host" is a
// memfd whose descriptor travels with the message (a GPU's buffers will
// come as "cuda" with their IPC handle).
type newBuffer struct {
	ID   int    `json:"id"`
	Kind string `json:"kind"`
	Size int64  `json:"size"`
}

// batchMsg is a batch's message (README, Formats: the control channel).
type batchMsg struct {
	Type        string              `json:"type"`
	Slot        int                 `json:"slot"`
	Kind        string              `json:"kind"`
	Epoch       int                 `json:"epoch"`
	Number      int64               `json:"number"`
	Seq         int64               `json:"seq"`
	Items       int                 `json:"items"`
	Padding     bool                `json:"padding"`
	Checkpoint  *checkpointMsg      `json:"checkpoint,omitempty"`
	EndOfEpoch  bool                `json:"end_of_epoch"`
	LastOfEpoch bool                `json:"last_of_epoch"`
	New         []newBuffer         `json:"new,omitempty"`
	Drop        []int               `json:"drop,omitempty"`
	X           arrayRef            `json:"x"`
	Update      updateMsg           `json:"update"`
	Blocks      []blockMsg          `json:"blocks"`
	Arrays      map[string]arrayRef `json:"arrays"`
}

// updateMsg says how x's buffer changed since its previous batch (the
// batch the trainer got DeviceBuffers() before): in this order, rows
// moved within it (all read before any is written), rows copied from the
// hot cache's buffer, rows zeroed, rows copied from the host. The arrays
// (int32 rows) are in the slot: up_moves_from, up_moves_to, up_hot_slots,
// up_hot_rows, up_zero_slots, up_fetch_slots. A trainer's persistent
// copy of the buffer applies them to stay equal to it, copying only the
// fetched rows.
type updateMsg struct {
	Buffer int       `json:"buffer"` // which of the device buffers (0..device_buffers-1)
	Rows   int       `json:"rows"`   // the buffer's rows after the update
	Hot    *arrayRef `json:"hot,omitempty"`
}

// checkpointMsg marks the batch after which the trainer checkpoints
// (gnnrun.checkpoint_due()): its name, and how far the stream got.
type checkpointMsg struct {
	Name     string            `json:"name"`
	Epoch    int               `json:"epoch"`
	Segments []sampler.Segment `json:"segments"`
}

type blockMsg struct {
	NumSrc int `json:"num_src"`
	NumDst int `json:"num_dst"`
}

// bufferIDs numbers the shared buffers the trainer maps, and remembers
// which the device buffers and slots hold, to tell the trainer to drop a
// buffer replaced.
type bufferIDs struct {
	ids    map[cuda.Buffer]int
	next   int
	device map[int]cuda.Buffer // device buffer index -> its memory now
	msgNew []newBuffer
	fds    []int
	drop   []int
}

// use returns b's ID, introducing it to the trainer the first time.
func (u *bufferIDs) use(b cuda.Buffer) (int, error) {
	if id, ok := u.ids[b]; ok {
		return id, nil
	}
	hd, err := cuda.Export(b)
	if err != nil {
		return 0, err
	}
	if hd.Kind != cuda.Host {
		return 0, fmt.Errorf("train: handing device buffers of a GPU to the trainer is not built yet")
	}
	id := u.next
	u.next++
	u.ids[b] = id
	u.msgNew = append(u.msgNew, newBuffer{ID: id, Kind: "host", Size: hd.Size})
	u.fds = append(u.fds, hd.FD)
	return id, nil
}

// forget tells the trainer to drop b, which will not be used again.
func (u *bufferIDs) forget(b cuda.Buffer) {
	if id, ok := u.ids[b]; ok {
		delete(u.ids, b)
		u.drop = append(u.drop, id)
	}
}

// take returns and clears what the next message must carry.
func (u *bufferIDs) take() ([]newBuffer, []int, []int) {
	n, f, d := u.msgNew, u.fds, u.drop
	u.msgNew, u.fds, u.drop = nil, nil, nil
	return n, f, d
}

// layout writes batch b's arrays into slot k and returns its message and
// the descriptors of buffers new to the trainer.
func (h *handoff) layout(k int, b *prefetch.Batch) (*batchMsg, []int, error) {
	arrays := []Array{ArrayOf("input_slots", b.InputSlots)}
	blocks := make([]blockMsg, len(b.Blocks))
	for l, bl := range b.Blocks {
		blocks[l] = blockMsg{NumSrc: len(bl.Nodes), NumDst: bl.NumDst}
		arrays = append(arrays, ArrayOf(fmt.Sprintf("src_%d", l), bl.Src), ArrayOf(fmt.Sprintf("dst_%d", l), bl.Dst))
		if len(h.types.EdgeTypes) > 1 { // else every edge is of type 0
			arrays = append(arrays, ArrayOf(fmt.Sprintf("etype_%d", l), bl.ETypes))
		}
	}
	if b.RowTypes != nil {
		arrays = append(arrays, ArrayOf("input_ntype", b.RowTypes), ArrayOf("input_type_id", b.RowTypeIDs))
	}
	if t := b.Labels; t != nil {
		arrays = append(arrays, Array{Name: "labels", DType: t.DType, Shape: t.Shape, Data: t.Data})
	}
	if b.Pos != nil {
		arrays = append(arrays, ArrayOf("pos_src", b.PosPairs[0]), ArrayOf("pos_dst", b.PosPairs[1]),
			ArrayOf("neg_src", b.NegPairs[0]), ArrayOf("neg_dst", b.NegPairs[1]))
	}
	if up := b.Update; up != nil {
		arrays = append(arrays, ArrayOf("up_moves_from", up.MovesFrom), ArrayOf("up_moves_to", up.MovesTo),
			ArrayOf("up_hot_slots", up.HotSlots), ArrayOf("up_hot_rows", up.HotRows),
			ArrayOf("up_zero_slots", up.ZeroSlots), ArrayOf("up_fetch_slots", up.FetchSlots))
	}
	if h.o.Extra != nil {
		more, err := h.o.Extra(b)
		if err != nil {
			return nil, nil, err
		}
		arrays = append(arrays, more...)
	}
	refs, err := h.writeSlot(k, arrays)
	if err != nil {
		return nil, nil, err
	}
	if old, ok := h.bufs.device[b.Buffer]; ok && old != b.Features {
		h.bufs.forget(old)
	}
	h.bufs.device[b.Buffer] = b.Features
	xid, err := h.bufs.use(b.Features)
	if err != nil {
		return nil, nil, err
	}
	dt, row := h.rowType, h.rowShape
	msg := &batchMsg{Type: "batch", Slot: k, Seq: b.Seq, Kind: b.Kind, Epoch: b.Epoch, Number: b.Number, Items: b.Items(), Padding: b.Padding,
		EndOfEpoch: b.EndOfEpoch, LastOfEpoch: b.LastOfEpoch,
		X: arrayRef{Buf: xid, DType: dt.Descr(), Shape: append([]int64{int64(b.Rows)}, row...)}, Blocks: blocks, Arrays: refs}
	msg.Update = updateMsg{Buffer: b.Buffer, Rows: b.Rows}
	if b.Checkpoint != nil && h.o.Checkpoints != nil {
		msg.Checkpoint = &checkpointMsg{Name: h.o.Checkpoints.Name(b), Epoch: b.Epoch, Segments: b.Checkpoint}
	}
	if up := b.Update; up != nil && len(up.HotSlots) > 0 {
		hot := h.l.HotBuffer()
		id, err := h.bufs.use(hot)
		if err != nil {
			return nil, nil, err
		}
		msg.Update.Hot = &arrayRef{Buf: id, DType: dt.Descr(), Shape: append([]int64{hot.Len() / int64(b.RowBytes)}, row...)}
	}
	var fds []int
	msg.New, fds, msg.Drop = h.bufs.take()
	return msg, fds, nil
}

// align is the byte alignment of every array in a slot.
const align = 64

// writeSlot writes the arrays into slot k's buffer, growing it (a new
// buffer: the trainer drops the old one) when they do not fit.
func (h *handoff) writeSlot(k int, arrays []Array) (map[string]arrayRef, error) {
	var need int64
	for _, a := range arrays {
		need += (int64(len(a.Data)) + align - 1) / align * align
	}
	s := h.slots[k]
	if s.buf == nil || s.buf.Len() < need {
		nb, err := h.meta.Alloc(max(need+need/4, 1<<16))
		if err != nil {
			return nil, fmt.Errorf("train: a slot of %d bytes: %w", need, err)
		}
		if s.buf != nil {
			h.bufs.forget(s.buf)
			s.buf.Free()
		}
		s.buf = nb
	}
	id, err := h.bufs.use(s.buf)
	if err != nil {
		return nil, err
	}
	mem := s.buf.Host()
	refs := make(map[string]arrayRef, len(arrays))
	var off int64
	for _, a := range arrays {
		copy(mem[off:], a.Data)
		refs[a.Name] = arrayRef{Buf: id, Offset: off, DType: a.DType.Descr(), Shape: a.Shape}
		off += (int64(len(a.Data)) + align - 1) / align * align
	}
	h.stats.SlotBytes += off
	return refs, nil
}

// hello is the trainer's first message.
func (h *handoff) hello() error {
	dt, row := h.rowType, h.rowShape
	ty := h.types
	var etypes []string
	shapes, nodes := map[string]any{}, map[string]int64{}
	for _, et := range ty.EdgeTypes {
		etypes = append(etypes, et.String())
	}
	for t, nt := range ty.NodeTypes {
		shapes[nt], nodes[nt] = ty.FeatureShapes[t], ty.NumNodes[t] // nil: null, the type has no features
	}
	msg := map[string]any{"type": "hello", "protocol": Protocol, "feature_dtype": dt.Descr(), "feature_shape": row,
		"ntypes": ty.NodeTypes, "etypes": etypes, "feature_shapes": shapes, "num_nodes": nodes}
	for k, v := range h.o.Hello {
		msg[k] = v
	}
	return h.ch.send(msg)
}
