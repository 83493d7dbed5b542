package collective

import (
	"encoding/binary"
	"fmt"

	"gnnrun/rank"
)

// header is what a rank tells each peer before the payload: the bytes on the
// wire, the bytes after decompression, and whether it is compressed.
const headerSize = 24

// plan is one all-to-all after its size exchange.
type plan struct {
	sendWire   [][]byte
	recvWire   []int
	recvRaw    []int
	compressed []bool // per source
}

// newPlan compresses the messages that qualify and tells every peer what
// will arrive.
func (c *Comm) newPlan(send [][]byte) (*plan, error) {
	n, me := c.Size(), c.Rank()
	if len(send) != n {
		return nil, fmt.Errorf("collective: %d destinations for %d ranks", len(send), n)
	}
	p := &plan{sendWire: make([][]byte, n), recvWire: make([]int, n), recvRaw: make([]int, n), compressed: make([]bool, n)}
	hdr := make([]byte, 2*n*headerSize)
	hs, hr := make([][]byte, n), make([][]byte, n)
	for j, m := range send {
		p.sendWire[j] = m
		flag := uint64(0)
		if j != me && c.o.compressAbove > 0 && len(m) >= c.o.compressAbove {
			enc, _, err := c.codec()
			if err != nil {
				return nil, fmt.Errorf("collective: zstd: %w", err)
			}
			p.sendWire[j] = enc.EncodeAll(m, make([]byte, 0, len(m)/2))
			flag = 1
		}
		h := hdr[j*headerSize : (j+1)*headerSize]
		binary.LittleEndian.PutUint64(h[0:], uint64(len(p.sendWire[j])))
		binary.LittleEndian.PutUint64(h[8:], uint64(len(m)))
		binary.LittleEndian.PutUint64(h[16:], flag)
		hs[j] = h
		hr[j] = hdr[(n+j)*headerSize : (n+j+1)*headerSize]
	}
	if err := c.Comm.Alltoallv(hs, hr); err != nil {
		return nil, err
	}
	for i, h := range hr {
		p.recvWire[i] = int(binary.LittleEndian.Uint64(h[0:]))
		p.recvRaw[i] = int(binary.LittleEndian.Uint64(h[8:]))
		p.compressed[i] = binary.LittleEndian.Uint64(h[16:]) == 1
	}
	return p, nil
}

// transfer moves the planned messages; recv[i] must hold exactly what rank i
// sends before compression. Messages go in rounds of at most MaxMessage
// bytes per peer; all ranks agree on the number of rounds by a max-reduction.
func (c *Comm) transfer(p *plan, recv [][]byte) error {
	n := c.Size()
	wire := make([][]byte, n)
	longest := 0
	for i := range n {
		if len(recv[i]) != p.recvRaw[i] {
			return fmt.Errorf("collective: receive buffer for rank %d holds %d bytes, %d arrive", i, len(recv[i]), p.recvRaw[i])
		}
		wire[i] = recv[i]
		if p.compressed[i] {
			wire[i] = make([]byte, p.recvWire[i])
		}
		longest = max(longest, len(wire[i]), len(p.sendWire[i]))
	}
	lim := int64(c.o.maxMessage)
	m := []int64{int64(longest)}
	if err := c.Comm.AllreduceInt64(m, m, rank.Max); err != nil {
		return err
	}
	rounds := (m[0] + lim - 1) / lim
	if rounds == 1 {
		if err := c.Comm.Alltoallv(p.sendWire, wire); err != nil {
			return err
		}
	} else {
		ss, rs := make([][]byte, n), make([][]byte, n)
		for r := range rounds {
			for j := range n {
				ss[j] = window(p.sendWire[j], r*lim, lim)
				rs[j] = window(wire[j], r*lim, lim)
			}
			if err := c.Comm.Alltoallv(ss, rs); err != nil {
				return err
			}
		}
	}
	return c.decompress(p, wire, recv)
}

// window returns b[off:off+size], clipped to b.
func window(b []byte, off, size int64) []byte {
	lo := min(off, int64(len(b)))
	hi := min(off+size, int64(len(b)))
	return b[lo:hi]
}

func (c *Comm) decompress(p *plan, wire, recv [][]byte) error {
	for i := range wire {
		if !p.compressed[i] {
			continue
		}
		_, dec, err := c.codec()
		if err != nil {
			return fmt.Errorf("collective: zstd: %w", err)
		}
		out, err := dec.DecodeAll(wire[i], recv[i][:0])
		if err != nil {
			return fmt.Errorf("collective: message from rank %d: zstd: %w", i, err)
		}
		if len(out) != len(recv[i]) {
			return fmt.Errorf("collective: message from rank %d decompressed to %d bytes, expected %d", i, len(out), len(recv[i]))
		}
	}
	return nil
}
