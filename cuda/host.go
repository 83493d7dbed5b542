package cuda

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// hostDevice is the host backend: buffers are ordinary memory (or, when
// shared, memory of a memfd another process maps), and each stream runs
// its operations on a goroutine of its own, in order.
type hostDevice struct {
	o    openOptions
	live atomic.Int64 // buffers and streams not yet freed or closed
}

func newHostDevice(o openOptions) *hostDevice { return &hostDevice{o: o} }

func (d *hostDevice) Name() string { return "host memory" }
func (d *hostDevice) Kind() Kind   { return Host }

func (d *hostDevice) Alloc(n int64) (Buffer, error) {
	if n < 0 {
		return nil, fmt.Errorf("cuda: allocation of %d bytes", n)
	}
	b := &hostBuffer{dev: d, fd: -1}
	if d.o.shared {
		var err error
		if b.mem, b.fd, err = memfdMap(n); err != nil {
			return nil, err
		}
	} else {
		b.mem = make([]byte, n)
	}
	d.live.Add(1)
	return b, nil
}

func (d *hostDevice) NewStream() (Stream, error) {
	s := &hostStream{dev: d, ops: make(chan func() error, 64), done: make(chan struct{})}
	d.live.Add(1)
	go s.run()
	return s, nil
}

func (d *hostDevice) Register(mem []byte) (Pinned, error) {
	if len(mem) == 0 {
		return nil, fmt.Errorf("cuda: registering empty host memory")
	}
	d.live.Add(1)
	return &hostPinned{dev: d, mem: mem}, nil
}

func (d *hostDevice) Close() error {
	if n := d.live.Load(); n != 0 {
		return fmt.Errorf("cuda: host device closed with %d buffers, streams or registrations still open", n)
	}
	return nil
}

// hostPinned is registered host memory: the slice itself, read in place.
type hostPinned struct {
	dev          *hostDevice
	mem          []byte
	unregistered bool
}

func (p *hostPinned) Len() int64 { return int64(len(p.mem)) }

func (p *hostPinned) Unregister() error {
	if p.unregistered {
		return fmt.Errorf("cuda: host memory of %d bytes unregistered twice", len(p.mem))
	}
	p.unregistered = true
	p.dev.live.Add(-1)
	return nil
}

type hostBuffer struct {
	dev   *hostDevice
	mem   []byte
	fd    int // the memfd of a shared buffer, else -1
	freed bool
}

func (b *hostBuffer) Len() int64   { return int64(len(b.mem)) }
func (b *hostBuffer) Host() []byte { return b.mem }

func (b *hostBuffer) Free() error {
	if b.freed {
		return fmt.Errorf("cuda: buffer of %d bytes freed twice", len(b.mem))
	}
	b.freed = true
	var err error
	if b.fd >= 0 {
		err = memfdUnmap(b.mem, b.fd)
	}
	b.mem = nil
	b.dev.live.Add(-1)
	return err
}

func (b *hostBuffer) export() (Handle, error) {
	if b.fd < 0 {
		return Handle{}, fmt.Errorf("cuda: a buffer of a device not opened Shared cannot be shared")
	}
	return Handle{Kind: Host, FD: b.fd, Size: int64(len(b.mem))}, nil
}

// hostStream runs queued operations in order on its goroutine. The first
// error an operation returns is kept and reported by later waits.
type hostStream struct {
	dev    *hostDevice
	ops    chan func() error
	done   chan struct{}
	mu     sync.Mutex
	err    error
	closed bool
}

func (s *hostStream) run() {
	defer close(s.done)
	for op := range s.ops {
		if err := op(); err != nil {
			s.mu.Lock()
			if s.err == nil {
				s.err = err
			}
			s.mu.Unlock()
		}
	}
}

func (s *hostStream) firstErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// enqueue queues op, or fails when the stream is closed.
func (s *hostStream) enqueue(op func() error) error {
	if s.closed {
		return fmt.Errorf("cuda: operation on a closed stream")
	}
	s.ops <- op
	return nil
}

// mem returns a buffer's memory, failing on a buffer of another device
// or one already freed.
func (s *hostStream) mem(b Buffer) ([]byte, error) {
	hb, ok := b.(*hostBuffer)
	if !ok || hb.dev != s.dev {
		return nil, fmt.Errorf("cuda: a buffer of another device given to a host stream")
	}
	if hb.freed {
		return nil, fmt.Errorf("cuda: a freed buffer given to a stream")
	}
	return hb.mem, nil
}

func (s *hostStream) CopyToDevice(dst Buffer, off int64, src []byte) error {
	d, err := s.mem(dst)
	if err != nil {
		return err
	}
	if err := checkSpan("copy to the device", off, int64(len(src)), int64(len(d))); err != nil {
		return err
	}
	return s.enqueue(func() error { copy(d[off:], src); return nil })
}

func (s *hostStream) CopyToHost(dst []byte, src Buffer, off int64) error {
	m, err := s.mem(src)
	if err != nil {
		return err
	}
	if err := checkSpan("copy to the host", off, int64(len(dst)), int64(len(m))); err != nil {
		return err
	}
	return s.enqueue(func() error { copy(dst, m[off:]); return nil })
}

func (s *hostStream) CopyDevice(dst Buffer, dstOff int64, src Buffer, srcOff, n int64) error {
	d, err := s.mem(dst)
	if err != nil {
		return err
	}
	m, err := s.mem(src)
	if err != nil {
		return err
	}
	if err := checkSpan("device copy source", srcOff, n, int64(len(m))); err != nil {
		return err
	}
	if err := checkSpan("device copy destination", dstOff, n, int64(len(d))); err != nil {
		return err
	}
	return s.enqueue(func() error { copy(d[dstOff:dstOff+n], m[srcOff:srcOff+n]); return nil })
}

func (s *hostStream) ScatterRows(dst Buffer, slots []int32, host []byte, rowBytes int) error {
	d, err := s.mem(dst)
	if err != nil {
		return err
	}
	if rowBytes <= 0 || len(host) != len(slots)*rowBytes {
		return fmt.Errorf("cuda: scatter of %d host bytes into %d rows of %d bytes", len(host), len(slots), rowBytes)
	}
	if err := checkRows("scatter slot", slots, int64(len(d)), rowBytes); err != nil {
		return err
	}
	return s.enqueue(func() error {
		for k, r := range slots {
			copy(d[int(r)*rowBytes:int(r+1)*rowBytes], host[k*rowBytes:])
		}
		return nil
	})
}

func (s *hostStream) CopyRows(dst Buffer, dstRows []int32, src Buffer, srcRows []int32, rowBytes int) error {
	if dst == src {
		return fmt.Errorf("cuda: CopyRows within one buffer; use MoveRows")
	}
	return s.rows(dst, dstRows, src, srcRows, rowBytes)
}

func (s *hostStream) MoveRows(buf Buffer, from, to []int32, rowBytes int) error {
	return s.rows(buf, to, buf, from, rowBytes)
}

func (s *hostStream) GatherPinned(dst Buffer, dstRows []int32, src Pinned, srcRows []int32, rowBytes int) error {
	p, ok := src.(*hostPinned)
	switch {
	case !ok || p.dev != s.dev:
		return fmt.Errorf("cuda: host memory registered with another device given to a host stream")
	case p.unregistered:
		return fmt.Errorf("cuda: a gather from unregistered host memory")
	}
	d, err := s.mem(dst)
	if err != nil {
		return err
	}
	return s.queueRows(d, dstRows, p.mem, srcRows, rowBytes)
}

// rows copies row srcRows[k] of src into row dstRows[k] of dst.
func (s *hostStream) rows(dst Buffer, dstRows []int32, src Buffer, srcRows []int32, rowBytes int) error {
	d, err := s.mem(dst)
	if err != nil {
		return err
	}
	m, err := s.mem(src)
	if err != nil {
		return err
	}
	return s.queueRows(d, dstRows, m, srcRows, rowBytes)
}

// queueRows checks the rows and queues the copy of row srcRows[k] of m into
// row dstRows[k] of d.
func (s *hostStream) queueRows(d []byte, dstRows []int32, m []byte, srcRows []int32, rowBytes int) error {
	if rowBytes <= 0 || len(dstRows) != len(srcRows) {
		return fmt.Errorf("cuda: copy of %d rows into %d rows of %d bytes", len(srcRows), len(dstRows), rowBytes)
	}
	if err := checkRows("source row", srcRows, int64(len(m)), rowBytes); err != nil {
		return err
	}
	if err := checkRows("destination row", dstRows, int64(len(d)), rowBytes); err != nil {
		return err
	}
	return s.enqueue(func() error {
		for k, r := range srcRows {
			copy(d[int(dstRows[k])*rowBytes:int(dstRows[k]+1)*rowBytes], m[int(r)*rowBytes:])
		}
		return nil
	})
}

func (s *hostStream) Record() (Event, error) {
	ev := &hostEvent{s: s, reached: make(chan struct{})}
	err := s.enqueue(func() error { close(ev.reached); return nil })
	if err != nil {
		return nil, err
	}
	return ev, nil
}

func (s *hostStream) Sync() error {
	ev, err := s.Record()
	if err != nil {
		return err
	}
	defer ev.Close()
	return ev.Wait()
}

func (s *hostStream) Close() error {
	if s.closed {
		return fmt.Errorf("cuda: stream closed twice")
	}
	s.closed = true
	close(s.ops)
	<-s.done
	s.dev.live.Add(-1)
	return s.firstErr()
}

type hostEvent struct {
	s       *hostStream
	reached chan struct{}
}

func (e *hostEvent) Wait() error {
	<-e.reached
	return e.s.firstErr()
}

func (e *hostEvent) Close() {}
