package prefetch

import (
	"bytes"
	"fmt"
)

// Verify checks that b's device rows are its input nodes' rows: row
// InputSlots[i] of b.Features is the row a Store pull returns for
// Blocks[0].Nodes[i], block 0's destinations are rows 0..NumDst-1 and its
// sources point at their rows. It needs
// Options.Verify, copies the batch's rows back from the device, and is
// collective with the alltoall transport (every rank verifies each of its
// batches).
func (l *Loader) Verify(b *Batch) error {
	if l.verify == nil {
		return fmt.Errorf("prefetch: Verify needs a loader made with Options.Verify")
	}
	nodes := b.Blocks[0].Nodes
	rb := int64(b.RowBytes)
	want := make([]byte, int64(len(nodes))*rb)
	if _, _, _, err := pullTyped(l.served, l.verify, nodes, want, b.RowBytes); err != nil {
		return err
	}
	got := make([]byte, int64(b.Rows)*rb)
	if err := l.vstream.CopyToHost(got, b.Features, 0); err != nil {
		return err
	}
	if err := l.vstream.Sync(); err != nil {
		return err
	}
	for i, v := range nodes {
		s := int64(b.InputSlots[i])
		if s < 0 || s >= int64(b.Rows) {
			return fmt.Errorf("prefetch: batch %d of epoch %d: input node %d has slot %d of %d rows", b.Number, b.Epoch, v, s, b.Rows)
		}
		if !bytes.Equal(got[s*rb:(s+1)*rb], want[int64(i)*rb:int64(i+1)*rb]) {
			return fmt.Errorf("prefetch: batch %d of epoch %d: device row %d of input node %d (input %d) differs from the node's row", b.Number, b.Epoch, s, v, i)
		}
	}
	b0 := b.Blocks[0]
	for j := range b0.NumDst {
		if b.InputSlots[j] != int32(j) {
			return fmt.Errorf("prefetch: batch %d of epoch %d: block 0's destination %d is in row %d, not row %d", b.Number, b.Epoch, j, b.InputSlots[j], j)
		}
	}
	for e, src := range b0.Src {
		if int(src) >= b.Rows || !bytes.Equal(got[int64(src)*rb:int64(src+1)*rb], want[int64(b.src0[e])*rb:int64(b.src0[e]+1)*rb]) {
			return fmt.Errorf("prefetch: batch %d of epoch %d: block 0 edge %d's source row %d is not its source's", b.Number, b.Epoch, e, src)
		}
	}
	return nil
}
