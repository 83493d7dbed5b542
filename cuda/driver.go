//go:build cgo && linux

package cuda

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The CUDA driver API, loaded at run time from libcuda.so.1 (the driver's
// library, installed with the NVIDIA driver; nothing of CUDA is needed to
// build gnnrun). Handles are the driver's: contexts, streams, events,
// modules and functions as pointers, device memory as 64-bit addresses.
// Each function returns a CUresult, 0 for success.
type driverAPI struct {
	cuInit                     func(flags uint32) int32
	cuDriverGetVersion         func(v *int32) int32
	cuDeviceGetCount           func(n *int32) int32
	cuDeviceGet                func(dev *int32, ordinal int32) int32
	cuDeviceGetName            func(name *byte, n int32, dev int32) int32
	cuDeviceTotalMem           func(bytes *uint64, dev int32) int32
	cuDeviceGetAttribute       func(v *int32, attr int32, dev int32) int32
	cuDevicePrimaryCtxRetain   func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease  func(dev int32) int32
	cuCtxSetCurrent            func(ctx uintptr) int32
	cuMemAlloc                 func(ptr *uint64, n uint64) int32
	cuMemFree                  func(ptr uint64) int32
	cuMemcpyHtoDAsync          func(dst uint64, src unsafe.Pointer, n uint64, stream uintptr) int32
	cuMemcpyDtoHAsync          func(dst unsafe.Pointer, src uint64, n uint64, stream uintptr) int32
	cuMemcpyDtoDAsync          func(dst, src uint64, n uint64, stream uintptr) int32
	cuStreamCreate             func(s *uintptr, flags uint32) int32
	cuStreamDestroy            func(s uintptr) int32
	cuStreamSynchronize        func(s uintptr) int32
	cuEventCreate              func(e *uintptr, flags uint32) int32
	cuEventRecord              func(e, s uintptr) int32
	cuEventSynchronize         func(e uintptr) int32
	cuEventDestroy             func(e uintptr) int32
	cuModuleLoadData           func(m *uintptr, image unsafe.Pointer) int32
	cuModuleUnload             func(m uintptr) int32
	cuModuleGetFunction        func(f *uintptr, m uintptr, name string) int32
	cuLaunchKernel             func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32, s uintptr, params unsafe.Pointer, extra unsafe.Pointer) int32
	cuIpcGetMemHandle          func(h *[64]byte, ptr uint64) int32
	cuGetErrorString           func(err int32, s **byte) int32
	cuMemHostRegister          func(p unsafe.Pointer, n uint64, flags uint32) int32
	cuMemHostUnregister        func(p unsafe.Pointer) int32
	cuMemHostGetDevicePointer  func(ptr *uint64, p unsafe.Pointer, flags uint32) int32
	cuDeviceGetPCIBusId        func(id *byte, n int32, dev int32) int32
	cuDeviceCanAccessPeer      func(can *int32, dev, peer int32) int32
	cuCtxSynchronize           func() int32
	cuMemGetInfo               func(free, total *uint64) int32
	cuStreamWaitEvent          func(s, e uintptr, flags uint32) int32
	cuFuncGetAttribute         func(v *int32, attr int32, f uintptr) int32
	cuOccupancyMaxPotentialBlk func(minGrid, block *int32, f uintptr, cb uintptr, dyn uint64, limit int32) int32
}

// The driver's attribute and flag numbers gnnrun uses (cuda.h).
const (
	attrComputeMajor     = 75
	attrComputeMinor     = 76
	streamNonBlocking    = 1
	eventDisableTiming   = 2
	errNotFound          = 500 // CUDA_ERROR_NOT_FOUND
	hostRegisterPortable = 1
	hostRegisterMapped   = 2
	hostRegisterReadOnl  = 8
)

var (
	driverOnce sync.Once
	driver     *driverAPI
	driverErr  error
)

// libcudaNames are the names the driver's library goes by.
var libcudaNames = []string{"libcuda.so.1", "libcuda.so"}

// loadDriver opens libcuda and initialises the driver, once; its error
// wraps ErrNoGPU and says what is missing.
func loadDriver() (*driverAPI, error) {
	driverOnce.Do(func() {
		var h uintptr
		var first error
		for _, name := range libcudaNames {
			var err error
			if h, err = purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
				break
			}
			if first == nil {
				first = err
			}
		}
		if h == 0 {
			driverErr = fmt.Errorf("cuda: no NVIDIA driver library on this host (%v) (%w)", first, ErrNoGPU)
			return
		}
		d := &driverAPI{}
		if err := d.bind(h); err != nil {
			driverErr = fmt.Errorf("cuda: libcuda.so.1: %w (%w)", err, ErrNoGPU)
			return
		}
		if rc := d.cuInit(0); rc != 0 {
			driverErr = fmt.Errorf("cuda: cuInit: %s (%w)", d.errorString(rc), ErrNoGPU)
			return
		}
		driver = d
	})
	return driver, driverErr
}

// bind looks every function up, by the names of the current API versions.
func (d *driverAPI) bind(h uintptr) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("a driver function is missing (the driver is older than CUDA 11?): %v", p)
		}
	}()
	for _, f := range []struct {
		ptr  any
		name string
	}{
		{&d.cuInit, "cuInit"}, {&d.cuDriverGetVersion, "cuDriverGetVersion"}, {&d.cuDeviceGetCount, "cuDeviceGetCount"},
		{&d.cuDeviceGet, "cuDeviceGet"}, {&d.cuDeviceGetName, "cuDeviceGetName"}, {&d.cuDeviceTotalMem, "cuDeviceTotalMem_v2"},
		{&d.cuDeviceGetAttribute, "cuDeviceGetAttribute"}, {&d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
		{&d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"}, {&d.cuCtxSetCurrent, "cuCtxSetCurrent"},
		{&d.cuMemAlloc, "cuMemAlloc_v2"}, {&d.cuMemFree, "cuMemFree_v2"}, {&d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"},
		{&d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"}, {&d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"},
		{&d.cuStreamCreate, "cuStreamCreate"}, {&d.cuStreamDestroy, "cuStreamDestroy_v2"}, {&d.cuStreamSynchronize, "cuStreamSynchronize"},
		{&d.cuEventCreate, "cuEventCreate"}, {&d.cuEventRecord, "cuEventRecord"}, {&d.cuEventSynchronize, "cuEventSynchronize"},
		{&d.cuEventDestroy, "cuEventDestroy_v2"}, {&d.cuModuleLoadData, "cuModuleLoadData"}, {&d.cuModuleUnload, "cuModuleUnload"},
		{&d.cuModuleGetFunction, "cuModuleGetFunction"},
		{&d.cuLaunchKernel, "cuLaunchKernel"}, {&d.cuIpcGetMemHandle, "cuIpcGetMemHandle"}, {&d.cuGetErrorString, "cuGetErrorString"},
		{&d.cuMemHostRegister, "cuMemHostRegister_v2"}, {&d.cuMemHostUnregister, "cuMemHostUnregister"},
		{&d.cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2"}, {&d.cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId"},
		{&d.cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer"}, {&d.cuCtxSynchronize, "cuCtxSynchronize"}, {&d.cuMemGetInfo, "cuMemGetInfo_v2"},
		{&d.cuStreamWaitEvent, "cuStreamWaitEvent"}, {&d.cuFuncGetAttribute, "cuFuncGetAttribute"},
		{&d.cuOccupancyMaxPotentialBlk, "cuOccupancyMaxPotentialBlockSize"},
	} {
		purego.RegisterLibFunc(f.ptr, h, f.name)
	}
	return nil
}

// errorString names a CUresult.
func (d *driverAPI) errorString(rc int32) string {
	var s *byte
	if d.cuGetErrorString == nil || d.cuGetErrorString(rc, &s) != 0 || s == nil {
		return fmt.Sprintf("CUDA error %d", rc)
	}
	return fmt.Sprintf("%s (CUDA error %d)", cString(s), rc)
}

// check turns a CUresult into an error naming the call.
func (d *driverAPI) check(call string, rc int32) error {
	if rc == 0 {
		return nil
	}
	return fmt.Errorf("cuda: %s: %s", call, d.errorString(rc))
}

// cString reads a NUL-terminated C string the driver owns.
func cString(p *byte) string {
	var b []byte
	for q := unsafe.Pointer(p); *(*byte)(q) != 0; q = unsafe.Add(q, 1) {
		b = append(b, *(*byte)(q))
	}
	return string(b)
}

// Probe describes GPU ordinal of this process (after CUDA_VISIBLE_DEVICES),
// or says why there is none.
func Probe(ordinal int) (GPUInfo, error) {
	d, err := loadDriver()
	if err != nil {
		return GPUInfo{}, err
	}
	var n, dev, v int32
	if err := d.check("cuDeviceGetCount", d.cuDeviceGetCount(&n)); err != nil {
		return GPUInfo{}, err
	}
	if n == 0 {
		return GPUInfo{}, fmt.Errorf("cuda: the driver sees no GPU (%w)", ErrNoGPU)
	}
	if ordinal < 0 || ordinal >= int(n) {
		return GPUInfo{}, fmt.Errorf("cuda: device %d of the %d this process sees (%w)", ordinal, n, ErrNoGPU)
	}
	if err := d.check("cuDeviceGet", d.cuDeviceGet(&dev, int32(ordinal))); err != nil {
		return GPUInfo{}, err
	}
	g := GPUInfo{Ordinal: ordinal, VisibleDevices: int(n)}
	name := make([]byte, 256)
	bus := make([]byte, 64)
	var major, minor int32
	for _, e := range []error{
		d.check("cuDeviceGetName", d.cuDeviceGetName(&name[0], int32(len(name)), dev)),
		d.check("cuDeviceTotalMem", d.cuDeviceTotalMem(&g.Memory, dev)),
		d.check("cuDeviceGetAttribute", d.cuDeviceGetAttribute(&major, attrComputeMajor, dev)),
		d.check("cuDeviceGetAttribute", d.cuDeviceGetAttribute(&minor, attrComputeMinor, dev)),
		d.check("cuDriverGetVersion", d.cuDriverGetVersion(&v)),
		d.check("cuDeviceGetPCIBusId", d.cuDeviceGetPCIBusId(&bus[0], int32(len(bus)), dev)),
	} {
		if e != nil {
			return GPUInfo{}, e
		}
	}
	g.Name, g.PCIBusID = cString(&name[0]), cString(&bus[0])
	g.Major, g.Minor, g.Driver = int(major), int(minor), int(v)
	return g, nil
}
