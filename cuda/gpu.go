//go:build cgo && linux

package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// gpuDevice is the CUDA backend: device memory from cuMemAlloc, streams of
// the driver, and the kernels of kernels/*.cu, loaded from the embedded PTX
// of the device's architecture. Every driver call runs with the device's
// primary context current on the calling thread (goroutines move between
// threads: each call locks its thread for the time of the call).
type gpuDevice struct {
	d        *driverAPI
	dev      int32
	ctx      uintptr
	info     GPUInfo
	o        openOptions
	modules  []gpuModule
	copyRows uintptr // the gnnrun_copy_rows kernel
	live     atomic.Int64

	funcMu sync.Mutex
	funcs  map[string]uintptr // the kernels looked up so far, by name
}

// gpuModule is a loaded module: one kernel source's PTX.
type gpuModule struct {
	name string
	arch int // the sm_XX its PTX was built for
	h    uintptr
}

// openCUDA opens GPU ordinal: its primary context and the kernels.
func openCUDA(ordinal int, o openOptions) (Device, error) {
	g, err := Probe(ordinal)
	if err != nil {
		return nil, fmt.Errorf("%w; use --device host", err)
	}
	gd := &gpuDevice{d: driver, info: g, o: o, funcs: map[string]uintptr{}}
	if err := gd.d.check("cuDeviceGet", gd.d.cuDeviceGet(&gd.dev, int32(ordinal))); err != nil {
		return nil, err
	}
	if err := gd.d.check("cuDevicePrimaryCtxRetain", gd.d.cuDevicePrimaryCtxRetain(&gd.ctx, gd.dev)); err != nil {
		return nil, err
	}
	err = gd.loadModules()
	if err == nil {
		gd.copyRows, err = gd.function("gnnrun_copy_rows")
	}
	if err != nil {
		gd.unloadModules()
		gd.d.cuDevicePrimaryCtxRelease(gd.dev)
		hint := ""
		if errors.Is(err, ErrNoGPU) {
			hint = "; use --device host"
		}
		return nil, fmt.Errorf("%w, on %s%s", err, g.Name, hint)
	}
	return gd, nil
}

// loadModules loads each kernel source's PTX for the device's architecture
// (the highest built that is not newer); the driver JIT-compiles it.
func (g *gpuDevice) loadModules() error {
	mods, err := choosePTX(ptxFS, ptxDir, g.info.Major, g.info.Minor)
	if err != nil {
		return err
	}
	for _, m := range mods {
		var h uintptr
		err := g.call(fmt.Sprintf("cuModuleLoadData of %s.sm_%d.ptx", m.name, m.arch), func() int32 {
			return g.d.cuModuleLoadData(&h, unsafe.Pointer(&m.ptx[0]))
		})
		if err != nil {
			return err
		}
		g.modules = append(g.modules, gpuModule{name: m.name, arch: m.arch, h: h})
	}
	return nil
}

// unloadModules unloads the loaded modules and returns the first error.
func (g *gpuDevice) unloadModules() error {
	var first error
	for _, m := range g.modules {
		err := g.call("cuModuleUnload of "+m.name, func() int32 { return g.d.cuModuleUnload(m.h) })
		if first == nil {
			first = err
		}
	}
	g.modules = nil
	g.funcMu.Lock()
	clear(g.funcs)
	g.funcMu.Unlock()
	return first
}

// function returns the kernel of that name from whichever loaded module
// has it, for cuLaunchKernel; handles are looked up once and kept.
func (g *gpuDevice) function(name string) (uintptr, error) {
	g.funcMu.Lock()
	defer g.funcMu.Unlock()
	if f, ok := g.funcs[name]; ok {
		return f, nil
	}
	for _, m := range g.modules {
		var f uintptr
		found := false
		err := g.call(fmt.Sprintf("cuModuleGetFunction %s in %s.sm_%d", name, m.name, m.arch), func() int32 {
			rc := g.d.cuModuleGetFunction(&f, m.h, name)
			found = rc == 0
			if rc == errNotFound {
				return 0 // in another module, perhaps
			}
			return rc
		})
		if err != nil {
			return 0, err
		}
		if found {
			g.funcs[name] = f
			return f, nil
		}
	}
	names := make([]string, len(g.modules))
	for i, m := range g.modules {
		names[i] = m.name
	}
	return 0, fmt.Errorf("cuda: no kernel %s in the modules %s", name, strings.Join(names, ", "))
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

func (g *gpuDevice) Register(mem []byte) (Pinned, error) {
	if len(mem) == 0 {
		return nil, fmt.Errorf("cuda: registering empty host memory")
	}
	p := &gpuPinned{dev: g, mem: mem}
	err := g.call(fmt.Sprintf("cuMemHostRegister of %d bytes", len(mem)), func() int32 {
		return g.d.cuMemHostRegister(unsafe.Pointer(&mem[0]), uint64(len(mem)), hostRegisterPortable|hostRegisterMapped)
	})
	if err != nil {
		return nil, err
	}
	err = g.call("cuMemHostGetDevicePointer", func() int32 { return g.d.cuMemHostGetDevicePointer(&p.ptr, unsafe.Pointer(&mem[0]), 0) })
	if err != nil {
		g.call("cuMemHostUnregister", func() int32 { return g.d.cuMemHostUnregister(unsafe.Pointer(&mem[0])) })
		return nil, err
	}
	g.live.Add(1)
	return p, nil
}

func (g *gpuDevice) Close() error {
	if n := g.live.Load(); n != 0 {
		return fmt.Errorf("cuda: device closed with %d buffers, streams or registrations still open", n)
	}
	err := g.unloadModules()
	if rerr := g.d.check("cuDevicePrimaryCtxRelease", g.d.cuDevicePrimaryCtxRelease(g.dev)); err == nil {
		err = rerr
	}
	return err
}

// gpuPinned is host memory registered with the device, and the device's
// address of it.
type gpuPinned struct {
	dev          *gpuDevice
	mem          []byte // kept referenced: the driver reads it
	ptr          uint64
	unregistered bool
}

func (p *gpuPinned) Len() int64 { return int64(len(p.mem)) }

func (p *gpuPinned) Unregister() error {
	if p.unregistered {
		return fmt.Errorf("cuda: host memory of %d bytes unregistered twice", len(p.mem))
	}
	p.unregistered = true
	p.dev.live.Add(-1)
	return p.dev.call("cuMemHostUnregister", func() int32 { return p.dev.d.cuMemHostUnregister(unsafe.Pointer(&p.mem[0])) })
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
	return s.launchRows(d.ptr, slots, s.rows.ptr, nil, rowBytes)
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
	return s.launchRows(d.ptr, dstRows, b.ptr, srcRows, rowBytes)
}

func (s *gpuStream) GatherPinned(dst Buffer, dstRows []int32, src Pinned, srcRows []int32, rowBytes int) error {
	d, err := s.buf(dst)
	if err != nil {
		return err
	}
	p, ok := src.(*gpuPinned)
	switch {
	case !ok || p.dev != s.dev:
		return fmt.Errorf("cuda: host memory registered with another device given to a stream of %s", s.dev.info.Name)
	case p.unregistered:
		return fmt.Errorf("cuda: a gather from unregistered host memory")
	case rowBytes <= 0 || len(dstRows) != len(srcRows):
		return fmt.Errorf("cuda: copy of %d rows into %d rows of %d bytes", len(srcRows), len(dstRows), rowBytes)
	}
	if err := checkRows("source row", srcRows, p.Len(), rowBytes); err != nil {
		return err
	}
	if err := checkRows("destination row", dstRows, d.n, rowBytes); err != nil || len(dstRows) == 0 {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.launchRows(d.ptr, dstRows, p.ptr, srcRows, rowBytes)
}

// launchRows copies the index arrays to the stream's scratch and launches
// the row kernel: row srcRows[k] of the rows at src (k without srcRows) to
// row dstRows[k] of the rows at dst, device addresses. The caller holds
// s.mu.
func (s *gpuStream) launchRows(dst uint64, dstRows []int32, src uint64, srcRows []int32, rowBytes int) error {
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
	drows, srows := s.idx.ptr, uint64(0)
	if srcRows != nil {
		srows = s.idx.ptr + uint64(4*n)
	}
	count, width := int32(n), int64(rowBytes)
	grid, block := rowsGrid(n)
	params := []unsafe.Pointer{unsafe.Pointer(&dst), unsafe.Pointer(&drows), unsafe.Pointer(&src), unsafe.Pointer(&srows),
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
