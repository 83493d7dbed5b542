package collective

import (
	"encoding/binary"
	"fmt"
)

// header is what a rank tells each peer before the payload: the bytes on the
// wire, the bytes after decompression, whether it is compressed, and the
// longest message the sender puts on the wire to anyone. Since every rank
// hears from every rank, each can work out the number of rounds alone.
const headerSize = 32

// plan is one all-to-all after its size exchange.
type plan struct {
	sendWire   [][]byte
	recvWire   []int
	recvRaw    []int
	compressed []bool // per source
	longest    int    // longest wire message of any rank to any rank
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
	flags := make([]uint64, n)
	myLongest := 0
	for j, m := range send {
		p.sendWire[j] = m
		if j != me && c.o.compressAbove > 0 && len(m) >= c.o.compressAbove {
			enc, _, err := c.codec()
			if err != nil {
				return nil, fmt.Errorf("collective: zstd: %w", err)
			}
			p.sendWire[j] = enc.EncodeAll(m, make([]byte, 0, len(m)/2))
			flags[j] = 1
		}
		myLongest = max(myLongest, len(p.sendWire[j]))
	}
	for j, m := range send {
		h := hdr[j*headerSize : (j+1)*headerSize]
		binary.LittleEndian.PutUint64(h[0:], uint64(len(p.sendWire[j])))
		binary.LittleEndian.PutUint64(h[8:], uint64(len(m)))
		binary.LittleEndian.PutUint64(h[16:], flags[j])
		binary.LittleEndian.PutUint64(h[24:], uint64(myLongest))
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
		p.longest = max(p.longest, int(binary.LittleEndian.Uint64(h[24:])))
	}
	return p, nil
}

// transfer moves the planned messages; recv[i] must hold exactly what rank i
// sends before compression. Messages go in rounds of at most MaxMessage
// bytes per peer; all ranks agree on the number of rounds from the headers.
func (c *Comm) transfer(p *plan, recv [][]byte) error {
	n := c.Size()
	wire := make([][]byte, n)
	for i := range n {
		if len(recv[i]) != p.recvRaw[i] {
			return fmt.Errorf("collective: receive buffer for rank %d holds %d bytes, %d arrive", i, len(recv[i]), p.recvRaw[i])
		}
		wire[i] = recv[i]
		if p.compressed[i] {
			wire[i] = make([]byte, p.recvWire[i])
		}
	}
	lim := int64(c.o.maxMessage)
	rounds := (int64(p.longest) + lim - 1) / lim
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
