//go:build cgo && linux

package cuda

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// gpuDevice is the CUDA backend: device memory from cuMemAlloc, streams of
// the driver, and the row kernels of kernels/rows.cu. Every driver call
// runs with the device's primary context current on the calling thread
// (goroutines move between threads: each call locks its thread for the
// time of the call).
type gpuDevice struct {
	d        *driverAPI
	dev      int32
	ctx      uintptr
	info     GPUInfo
	o        openOptions
	copyRows uintptr // the gnnrun_copy_rows kernel
	live     atomic.Int64
}

// openCUDA opens GPU ordinal: its primary context and the row kernels.
func openCUDA(ordinal int, o openOptions) (Device, error) {
	g, err := Probe(ordinal)
	if err != nil {
		return nil, fmt.Errorf("%w; use --device host", err)
	}
	gd := &gpuDevice{d: driver, info: g, o: o}
	if err := gd.d.check("cuDeviceGet", gd.d.cuDeviceGet(&gd.dev, int32(ordinal))); err != nil {
		return nil, err
	}
	if err := gd.d.check("cuDevicePrimaryCtxRetain", gd.d.cuDevicePrimaryCtxRetain(&gd.ctx, gd.dev)); err != nil {
		return nil, err
	}
	ptx, err := kernelPTX("rows.cu", g.Major, g.Minor)
	if err == nil {
		err = gd.call("loading the row kernels", func() int32 {
			var mod uintptr
			if rc := gd.d.cuModuleLoadData(&mod, unsafe.Pointer(&ptx[0])); rc != 0 {
				return rc
			}
			return gd.d.cuModuleGetFunction(&gd.copyRows, mod, "gnnrun_copy_rows")
		})
	}
	if err != nil {
		gd.d.cuDevicePrimaryCtxRelease(gd.dev)
		return nil, fmt.Errorf("cuda: %s: %w", g.Name, err)
	}
	return gd, nil
}

// call runs a driver call with the device's context current.
func (g *gpuDevice) call(what string, fn func() int32) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if rc := g.d.cuCtxSetCurrent(g.ctx); rc != 0 {
		return g.d.check("cuCtxSetCurrent", rc)
	}
	return g.d.check(what, fn())
}

func (g *gpuDevice) Name() string { return g.info.String() }
func (g *gpuDevice) Kind() Kind   { return CUDA }

func (g *gpuDevice) Alloc(n int64) (Buffer, error) {
	if n < 0 {
		return nil, fmt.Errorf("cuda: allocation of %d bytes", n)
	}
	b := &gpuBuffer{dev: g, n: n}
	if n > 0 {
		if err := g.call(fmt.Sprintf("cuMemAlloc of %d bytes", n), func() int32 { return g.d.cuMemAlloc(&b.ptr, uint64(n)) }); err != nil {
			return nil, err
		}
	}
	g.live.Add(1)
	return b, nil
}

func (g *gpuDevice) NewStream() (Stream, error) {
	s := &gpuStream{dev: g}
	if err := g.call("cuStreamCreate", func() int32 { return g.d.cuStreamCreate(&s.s, streamNonBlocking) }); err != nil {
		return nil, err
	}
	g.live.Add(1)
	return s, nil
}

func (g *gpuDevice) Close() error {
	if n := g.live.Load(); n != 0 {
		return fmt.Errorf("cuda: device closed with %d buffers or streams still open", n)
	}
	return g.d.check("cuDevicePrimaryCtxRelease", g.d.cuDevicePrimaryCtxRelease(g.dev))
}

// gpuBuffer is device memory.
type gpuBuffer struct {
	dev   *gpuDevice
	ptr   uint64
	n     int64
	freed bool
}

func (b *gpuBuffer) Len() int64   { return b.n }
func (b *gpuBuffer) Host() []byte { return nil }

func (b *gpuBuffer) Free() error {
	if b.freed {
		return fmt.Errorf("cuda: buffer of %d bytes freed twice", b.n)
	}
	b.freed = true
	b.dev.live.Add(-1)
	if b.ptr == 0 {
		return nil
	}
	return b.dev.call("cuMemFree", func() int32 { return b.dev.d.cuMemFree(b.ptr) })
}

func (b *gpuBuffer) export() (Handle, error) {
	if !b.dev.o.shared {
		return Handle{}, fmt.Errorf("cuda: a buffer of a device not opened Shared cannot be shared")
	}
	var h [64]byte
	if err := b.dev.call("cuIpcGetMemHandle", func() int32 { return b.dev.d.cuIpcGetMemHandle(&h, b.ptr) }); err != nil {
		return Handle{}, err
	}
	return Handle{Kind: CUDA, FD: -1, IPC: h[:], Size: b.n}, nil
}

// gpuStream is a driver stream with scratch device memory for the row
// operations' index arrays and staged host rows. An operation's scratch is
// written on the stream before the kernel that reads it and after the
// kernels queued before, so reusing it across operations is safe.
type gpuStream struct {
	dev    *gpuDevice
	s      uintptr
	mu     sync.Mutex
	idx    *gpuBuffer // index arrays
	rows   *gpuBuffer // staged host rows
	closed bool
}

// buf returns the buffer of b on this stream's device.
func (s *gpuStream) buf(b Buffer) (*gpuBuffer, error) {
	gb, ok := b.(*gpuBuffer)
	switch {
	case !ok || gb.dev != s.dev:
		return nil, fmt.Errorf("cuda: a buffer of another device given to a stream of %s", s.dev.info.Name)
	case gb.freed:
		return nil, fmt.Errorf("cuda: a freed buffer given to a stream")
	case s.closed:
		return nil, fmt.Errorf("cuda: operation on a closed stream")
	}
	return gb, nil
}

// scratch makes *b hold at least n bytes, waiting for the stream first
// when it must grow (the operations queued may still read it).
func (s *gpuStream) scratch(b **gpuBuffer, n int64) error {
	if *b != nil && (*b).n >= n {
		return nil
	}
	if *b != nil {
		if err := s.Sync(); err != nil {
			return err
		}
		(*b).Free()
	}
	nb, err := s.dev.Alloc(max(n+n/4, 1<<16))
	if err != nil {
		return err
	}
	*b = nb.(*gpuBuffer)
	return nil
}

func (s *gpuStream) CopyToDevice(dst Buffer, off int64, src []byte) error {
	d, err := s.buf(dst)
	if err != nil {
		return err
	}
	if err := checkSpan("copy to the device", off, int64(len(src)), d.n); err != nil || len(src) == 0 {
		return err
	}
	return s.dev.call("cuMemcpyHtoDAsync", func() int32 {
		return s.dev.d.cuMemcpyHtoDAsync(d.ptr+uint64(off), unsafe.Pointer(&src[0]), uint64(len(src)), s.s)
	})
}

func (s *gpuStream) CopyToHost(dst []byte, src Buffer, off int64) error {
	b, err := s.buf(src)
	if err != nil {
		return err
	}
	if err := checkSpan("copy to the host", off, int64(len(dst)), b.n); err != nil || len(dst) == 0 {
		return err
	}
	return s.dev.call("cuMemcpyDtoHAsync", func() int32 {
		return s.dev.d.cuMemcpyDtoHAsync(unsafe.Pointer(&dst[0]), b.ptr+uint64(off), uint64(len(dst)), s.s)
	})
}

func (s *gpuStream) CopyDevice(dst Buffer, dstOff int64, src Buffer, srcOff, n int64) error {
	d, err := s.buf(dst)
	if err != nil {
		return err
	}
	b, err := s.buf(src)
	if err != nil {
		return err
	}
	if err := checkSpan("device copy source", srcOff, n, b.n); err != nil {
		return err
	}
	if err := checkSpan("device copy destination", dstOff, n, d.n); err != nil || n == 0 {
		return err
	}
	return s.dev.call("cuMemcpyDtoDAsync", func() int32 {
		return s.dev.d.cuMemcpyDtoDAsync(d.ptr+uint64(dstOff), b.ptr+uint64(srcOff), uint64(n), s.s)
	})
}

func (s *gpuStream) ScatterRows(dst Buffer, slots []int32, host []byte, rowBytes int) error {
	d, err := s.buf(dst)
	if err != nil {
		return err
	}
	if rowBytes <= 0 || len(host) != len(slots)*rowBytes {
		return fmt.Errorf("cuda: scatter of %d host bytes into %d rows of %d bytes", len(host), len(slots), rowBytes)
	}
	if err := checkRows("scatter slot", slots, d.n, rowBytes); err != nil || len(slots) == 0 {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.scratch(&s.rows, int64(len(host))); err != nil {
		return err
	}
	if err := s.CopyToDevice(s.rows, 0, host); err != nil {
		return err
	}
	return s.launchRows(d, slots, s.rows, nil, rowBytes)
}

func (s *gpuStream) CopyRows(dst Buffer, dstRows []int32, src Buffer, srcRows []int32, rowBytes int) error {
	if dst == src {
		return fmt.Errorf("cuda: CopyRows within one buffer; use MoveRows")
	}
	return s.rowsBetween(dst, dstRows, src, srcRows, rowBytes)
}

func (s *gpuStream) MoveRows(buf Buffer, from, to []int32, rowBytes int) error {
	return s.rowsBetween(buf, to, buf, from, rowBytes)
}

func (s *gpuStream) rowsBetween(dst Buffer, dstRows []int32, src Buffer, srcRows []int32, rowBytes int) error {
	d, err := s.buf(dst)
	if err != nil {
		return err
	}
	b, err := s.buf(src)
	if err != nil {
		return err
	}
	if rowBytes <= 0 || len(dstRows) != len(srcRows) {
		return fmt.Errorf("cuda: copy of %d rows into %d rows of %d bytes", len(srcRows), len(dstRows), rowBytes)
	}
	if err := checkRows("source row", srcRows, b.n, rowBytes); err != nil {
		return err
	}
	if err := checkRows("destination row", dstRows, d.n, rowBytes); err != nil || len(dstRows) == 0 {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.launchRows(d, dstRows, b, srcRows, rowBytes)
}

// launchRows copies the index arrays to the stream's scratch and launches
// the row kernel: row srcRows[k] of src (k without srcRows) to row
// dstRows[k] of dst. The caller holds s.mu.
func (s *gpuStream) launchRows(dst *gpuBuffer, dstRows []int32, src *gpuBuffer, srcRows []int32, rowBytes int) error {
	n := len(dstRows)
	idx := make([]int32, 0, 2*n)
	idx = append(append(idx, dstRows...), srcRows...)
	if err := s.scratch(&s.idx, int64(4*len(idx))); err != nil {
		return err
	}
	host := unsafe.Slice((*byte)(unsafe.Pointer(&idx[0])), 4*len(idx))
	if err := s.CopyToDevice(s.idx, 0, host); err != nil {
		return err
	}
	dptr, sptr := dst.ptr, src.ptr
	drows, srows := s.idx.ptr, uint64(0)
	if srcRows != nil {
		srows = s.idx.ptr + uint64(4*n)
	}
	count, width := int32(n), int64(rowBytes)
	const block = 256 // 8 warps, a row each
	grid := uint32((n*32 + block - 1) / block)
	params := []unsafe.Pointer{unsafe.Pointer(&dptr), unsafe.Pointer(&drows), unsafe.Pointer(&sptr), unsafe.Pointer(&srows),
		unsafe.Pointer(&count), unsafe.Pointer(&width)}
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&params[0])
	for _, p := range params {
		pin.Pin(p)
	}
	return s.dev.call("cuLaunchKernel gnnrun_copy_rows", func() int32 {
		return s.dev.d.cuLaunchKernel(s.dev.copyRows, grid, 1, 1, block, 1, 1, 0, s.s, unsafe.Pointer(&params[0]), nil)
	})
}

func (s *gpuStream) Record() (Event, error) {
	if s.closed {
		return nil, fmt.Errorf("cuda: operation on a closed stream")
	}
	e := &gpuEvent{dev: s.dev}
	if err := s.dev.call("cuEventCreate", func() int32 { return s.dev.d.cuEventCreate(&e.e, eventDisableTiming) }); err != nil {
		return nil, err
	}
	if err := s.dev.call("cuEventRecord", func() int32 { return s.dev.d.cuEventRecord(e.e, s.s) }); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func (s *gpuStream) Sync() error {
	return s.dev.call("cuStreamSynchronize", func() int32 { return s.dev.d.cuStreamSynchronize(s.s) })
}

func (s *gpuStream) Close() error {
	if s.closed {
		return fmt.Errorf("cuda: stream closed twice")
	}
	err := s.Sync()
	s.closed = true
	for _, b := range []*gpuBuffer{s.idx, s.rows} {
		if b != nil {
			b.Free()
		}
	}
	if derr := s.dev.call("cuStreamDestroy", func() int32 { return s.dev.d.cuStreamDestroy(s.s) }); err == nil {
		err = derr
	}
	s.dev.live.Add(-1)
	return err
}

type gpuEvent struct {
	dev *gpuDevice
	e   uintptr
}

func (e *gpuEvent) Wait() error {
	return e.dev.call("cuEventSynchronize", func() int32 { return e.dev.d.cuEventSynchronize(e.e) })
}

func (e *gpuEvent) Close() {
	if e.e != 0 {
		e.dev.call("cuEventDestroy", func() int32 { return e.dev.d.cuEventDestroy(e.e) })
		e.e = 0
	}
}
